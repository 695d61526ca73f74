# qoslet: `make` builds build/qoslet; `make test` runs every test; `make bench`
# runs the benchmarks. `make V=1` shows the commands.

ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BUILD := build
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
CC ?= cc
PKGS := libbpf libelf zlib jansson ncursesw libcurl libmicrohttpd
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

# A fresh machine lacks the toolchain and libraries: install them (as root)
# before anything below asks pkg-config, so one `make` works from scratch.
DEPS_CMDS := $(CLANG) $(BPFTOOL) pkg-config jq stress-ng perf taskset
HAVE_DEPS := $(shell for t in $(DEPS_CMDS); do command -v $$t >/dev/null || exit; done; \
	pkg-config --exists $(PKGS) cmocka && echo yes)
ifneq ($(HAVE_DEPS),yes)
ifeq ($(filter clean format,$(MAKECMDGOALS)),)
$(info qoslet: dependencies missing; running scripts/deps.sh)
ifneq ($(shell scripts/deps.sh >&2; echo $$?),0)
$(error scripts/deps.sh failed: run it as root, or install what it lists)
endif
endif
endif

CFLAGS ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	-DQOSLET_VERSION='"$(VERSION)"' -I$(BUILD)/skel -Iuser \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libpfm4 (cpi event names) is opened with dlopen() only when events are named.
LDLIBS += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -ldl -lm
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Ivmlinux/$(ARCH) -Ibpf

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/skel/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(filter-out user/main.c,$(wildcard user/*.c user/*/*.c))
USER_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(USER_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(HELPER_SRCS))

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Keep the objects (for bpftool) and the generated skeletons: make would
# delete them as intermediates, and every build would start over.
.SECONDARY: $(BPF_OBJS) $(SKELS)

.PHONY: all deps test test-unit test-integration bench format clean
all: $(BUILD)/qoslet

deps:
	scripts/deps.sh

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) Makefile
	@mkdir -p $(@D)
	@echo "  BPF     $@"
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	@# DWARF is for humans; BTF (kept) is what CO-RE needs. The objects are
	@# embedded in the binary, so this keeps ~2.5 MB out of its resident set.
	$(Q)$(LLVM_STRIP) -g $@

$(BUILD)/skel/%.skel.h: $(BUILD)/bpf/%.bpf.o
	@mkdir -p $(@D)
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/%.o: %.c $(SKELS)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# config.c embeds the defaults with .incbin, which -MMD does not see.
$(BUILD)/user/agent/config.o: user/agent/default-config.json

$(BUILD)/qoslet: $(BUILD)/user/main.o $(USER_OBJS)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Shared fixtures (tests/unit/*.h) rebuild the tests that include them.
$(BUILD)/tests/test_%: tests/unit/test_%.c $(USER_OBJS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	@echo "  TEST    $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(filter-out %.h,$^) $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/helpers/%: tests/helpers/%.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -lm -o $@

# kubecheck drives the Kubernetes client library, so it links the user objects.
$(BUILD)/tests/helpers/kubecheck: tests/helpers/kubecheck.c $(USER_OBJS)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

test-unit: $(UNIT_BINS)
	tests/run.sh unit $(UNIT_BINS)

test-integration: $(BUILD)/qoslet $(HELPER_BINS)
	tests/run.sh integration

# One summary over both kinds: the runner prints "N passed, N failed, N skipped".
test: $(BUILD)/qoslet $(UNIT_BINS) $(HELPER_BINS)
	tests/run.sh all $(UNIT_BINS)

bench: $(BUILD)/qoslet $(HELPER_BINS)
	scripts/bench/run.sh

format:
	clang-format -i $(wildcard bpf/*.c bpf/*.h user/*.c user/*.h user/*/*.c user/*/*.h \
		tests/unit/*.c tests/helpers/*.c)

clean:
	rm -rf $(BUILD)

-include $(USER_OBJS:.o=.d) $(BUILD)/user/main.d

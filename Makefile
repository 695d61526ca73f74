# qoslet: `make` builds build/qoslet; `make test` runs every test; `make bench`
# runs the benchmarks. `make V=1` shows the commands.

ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BUILD := build
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
CC ?= cc
PKGS := libbpf libelf zlib jansson ncursesw libcurl libmicrohttpd libcap-ng
# libyaml reads kubeconfigs (user/kube/kubeconfig.c). Linked, not opened with
# dlopen() (user/dl.h): it depends on libc alone and adds 130 KB of mappings,
# 80 KB resident of which 8 KB private (measured in `qoslet runqlat`), where
# the opened ones bring megabytes.
PKGS += yaml-0.1
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

# A fresh machine lacks the toolchain and libraries: install them (as root)
# before anything below asks pkg-config, so one `make` works from scratch.
# Only what building needs (scripts/deps.sh build); the goals that need more
# (tests, benchmarks, man pages, the image) install it first: deps-% below.
DEPS_CMDS := $(CLANG) $(LLVM_STRIP) $(BPFTOOL) pkg-config
HAVE_DEPS := $(shell for t in $(DEPS_CMDS); do command -v $$t >/dev/null || exit; done; \
	pkg-config --exists $(PKGS) && echo yes)
ifneq ($(HAVE_DEPS),yes)
ifeq ($(filter clean format,$(MAKECMDGOALS)),)
$(info qoslet: build dependencies missing; running scripts/deps.sh build)
ifneq ($(shell scripts/deps.sh build >&2; echo $$?),0)
$(error scripts/deps.sh failed: run it as root, or install what it lists)
endif
endif
endif

CFLAGS ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	-DQOSLET_VERSION='"$(VERSION)"' -I$(BUILD)/skel -Iuser -I. \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# Opened with dlopen() by the runs that need them, so not linked (user/dl.h):
# libcurl when the Kubernetes link is on, libmicrohttpd when the agent serves
# HTTP, ncursesw when top draws on a terminal, libpfm4 (cpi event names) when
# events are named. Their headers stay the API: the cflags above.
DLOPEN_PKGS := libcurl libmicrohttpd ncursesw
LDLIBS += $(shell pkg-config --libs $(filter-out $(DLOPEN_PKGS),$(PKGS)) 2>/dev/null) -ldl -lm
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Ivmlinux/$(ARCH) -Ibpf

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/skel/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(filter-out user/main.c,$(wildcard user/*.c user/*/*.c))
USER_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(USER_SRCS))
# One static archive per folder of user/ ("base": its top-level files), linked
# highest layer first, as scripts/check-layers.sh ranks them. The linker takes
# from an archive only the objects that resolve a symbol still missing, and
# does not go back to an archive it has passed: a lower folder's object that
# calls into a higher one fails to link in every test of the lower folder.
.DEFAULT_GOAL := all
LAYERS := agent record config report cli collect kube actuate decision policy probes cgroup base
$(foreach d,$(patsubst user/%/,%,$(wildcard user/*/)),$(if $(filter $(d),$(LAYERS)),,\
	$(error user/$(d)/ is in no layer: add it to LAYERS in the Makefile and to scripts/check-layers.sh)))
layer_srcs = $(if $(filter base,$(1)),$(filter-out user/main.c,$(wildcard user/*.c)),$(wildcard user/$(1)/*.c))
# $(call layer_libs,BUILD-ROOT): the archives of one build, in link order
layer_libs = $(foreach l,$(LAYERS),$(1)/lib/libqoslet-$(l).a)
define LAYER_RULE
$(1)/lib/libqoslet-$(2).a: $(patsubst %.c,$(1)/%.o,$(call layer_srcs,$(2)))
	@mkdir -p $$(@D)
	@echo "  AR      $$@"
	$$(Q)rm -f $$@ && $$(AR) rcs $$@ $$^
endef
$(foreach l,$(LAYERS),$(eval $(call LAYER_RULE,$(BUILD),$(l))))
USER_LIBS := $(call layer_libs,$(BUILD))
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

.PHONY: all deps test test-unit test-integration bench format clean check-layers
all: $(BUILD)/qoslet

deps:
	scripts/deps.sh build

# `deps-test`, `deps-bench`, ...: scripts/deps.sh with that profile. A goal,
# and each file that needs more than the build profile (the unit tests link
# cmocka), lists its profile as an order-only prerequisite, so the packages
# are there before they are used; with nothing missing it returns at once.
.PHONY: deps-test deps-bench deps-install deps-image deps-vm
deps-test deps-bench deps-install deps-image deps-vm: deps-%:
	scripts/deps.sh $*

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

# `qoslet --version` and what records carry come from VERSION, baked into a
# few objects: a stamp that changes with it rebuilds them, so a binary never
# names an older commit than the tree it was built from.
VERSION_STAMP := $(BUILD)/version.stamp
ifeq ($(filter clean format,$(MAKECMDGOALS)),)
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(VERSION_STAMP) 2>/dev/null)" = "$(VERSION)" ] || \
	echo "$(VERSION)" > $(VERSION_STAMP); })
endif
VERSIONED := user/main.o user/record/record.o user/probes/pin_check.o user/kube/client.o \
	user/probes/kernel_btf.o
$(addprefix $(BUILD)/,$(VERSIONED)) $(addprefix $(BUILD)/asan/,$(VERSIONED)) \
	$(addprefix $(BUILD)/fuzz/,$(VERSIONED)): $(VERSION_STAMP)

$(BUILD)/%.o: %.c $(SKELS)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# config.c embeds the defaults with .incbin, which -MMD does not see.
$(BUILD)/user/config/agent_config.o: user/config/default-config.json

$(BUILD)/qoslet: $(BUILD)/user/main.o $(USER_LIBS)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Shared fixtures (tests/unit/*.h) rebuild the tests that include them. Each
# test takes from the archives what it uses, nothing more.
$(BUILD)/tests/test_%: tests/unit/test_%.c $(USER_LIBS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	@echo "  TEST    $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(filter-out %.h,$^) $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/helpers/%: tests/helpers/%.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -lm -o $@

# btfcheck loads BPF objects with libbpf; it reads the copy's attach ids by
# btf_small.h's name for them, and prepares maps as the probes do (user/probes).
$(BUILD)/tests/helpers/btfcheck: tests/helpers/btfcheck.c user/probes/btf_small.h $(USER_LIBS)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(filter-out %.h,$^) $(LDLIBS) -o $@

# kubecheck drives the Kubernetes client library, so it links the user archives.
$(BUILD)/tests/helpers/kubecheck: tests/helpers/kubecheck.c $(USER_LIBS)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# kubesync drives the agent's API thread (user/kube/sync.h): the same.
$(BUILD)/tests/helpers/kubesync: tests/helpers/kubesync.c $(USER_LIBS)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# oldpins creates maps with BTF as an older qoslet pinned them: libbpf.
$(BUILD)/tests/helpers/oldpins: tests/helpers/oldpins.c bpf/sched_maps.h bpf/lat_hist.h
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LDLIBS) -o $@

# nullswitch loads its two-instruction program through libbpf.
$(BUILD)/tests/helpers/nullswitch: tests/helpers/nullswitch.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LDLIBS) -o $@

# The unit tests link cmocka: the test profile brings it.
$(UNIT_BINS): | deps-test

# Layering and include style (scripts/check-layers.sh): make test runs it first.
check-layers:
	scripts/check-layers.sh

test-unit: $(UNIT_BINS) | deps-test
	tests/run.sh unit $(UNIT_BINS)

test-integration: $(BUILD)/qoslet $(HELPER_BINS) | deps-test
	tests/run.sh integration

# Every unit test runs twice, plain and under ASan and UBSan (`make asan`);
# every integration test runs once: under the sanitizers, or plain when the
# ASan lists leave it out (timing-sensitive, valgrind, no binary of
# build/asan, or CI time). A test that judges no timing gains nothing from a
# second, plain run of the same code: the sanitized run checks more. The
# plain pass comes first, alone on the machine (its tests judge timing);
# tests/beside.list's tests (no BPF, no cgroup, no timing) then run beside
# the ASan pass, their output printed after it. Each pass ends with its own
# "N passed, N failed, N skipped"; all always run, and any failing fails.
test_names = $(shell sed -n 's/^\(test_[a-z0-9_]*\).*/\1/p' $(1))
BESIDE_TESTS := $(call test_names,tests/beside.list)
# test-bins: what the passes run, alone (CI builds it on every CPU first).
.PHONY: test-bins
test-bins: $(BUILD)/qoslet $(UNIT_BINS) $(HELPER_BINS) asan-build | deps-test
test: ASAN_SKIP += tests/asan-ci.skip
test: test-bins | deps-test
	rc=0; scripts/check-layers.sh || rc=1; \
	TESTS="$(filter-out $(BESIDE_TESTS),$(call test_names,$(ASAN_SKIP)))" tests/run.sh all $(UNIT_BINS) || rc=1; \
	TESTS="$(BESIDE_TESTS)" tests/run.sh integration >$(BUILD)/beside.log 2>&1 & beside=$$!; \
	trap 'kill -TERM $$beside 2>/dev/null' INT TERM; \
	echo "ASan pass (the integration tests it skips for the ASan lists run plain: above, or beside it):"; \
	$(ASAN_RUN) || rc=1; \
	echo "Beside the ASan pass:"; wait $$beside || rc=1; cat $(BUILD)/beside.log; exit $$rc

bench: $(BUILD)/qoslet $(HELPER_BINS) | deps-bench
	scripts/bench/run.sh

# Memory QoS needs cgroup v2: on a v1 host it boots the test VM (about 10
# minutes under TCG), so it is its own target, not part of `make bench`.
.PHONY: bench-memqos
bench-memqos: $(BUILD)/qoslet $(HELPER_BINS) | deps-bench
	scripts/bench/memqos.sh -o docs/bench/memqos.md

# The long versions of what CI runs short (docs/testing.md): the soak with
# churn for LONG_SOAK_SECONDS (CI: 120 s, the warm-up and the two cycles its
# growth checks compare, the least the soak judges), fuzzing
# LONG_FUZZ_SECONDS per target beyond the corpus replay (CI: 2 s), and the
# agent under valgrind for LONG_VALGRIND_SECONDS (CI: 20 s).
LONG_SOAK_SECONDS ?= 240
LONG_FUZZ_SECONDS ?= 120
LONG_VALGRIND_SECONDS ?= 600
.PHONY: test-long
test-long: $(BUILD)/qoslet $(HELPER_BINS) | deps-test
	SOAK_SECONDS=$(LONG_SOAK_SECONDS) FUZZ_SECONDS=$(LONG_FUZZ_SECONDS) \
		VALGRIND_SECONDS=$(LONG_VALGRIND_SECONDS) INTEGRATION_TIMEOUT=1800 \
		TESTS="test_soak test_fuzz test_valgrind_agent" tests/run.sh integration

# The colocation benchmark in the VM of one matrix entry (KERNEL, e.g. 5.10),
# its workload scaled for TCG: ratios only, written as the section
# "KERNEL (emulated)" of docs/bench/colobench.md (about 15 minutes).
KERNEL ?= 5.10
.PHONY: bench-colo-vm
bench-colo-vm: $(BUILD)/qoslet $(HELPER_BINS) | deps-vm deps-bench
	nice -n 10 scripts/bench/colobench.sh -V $(KERNEL) -o docs/bench/colobench.md

# ---- the kernel matrix in VMs: scripts/vm/, docs/testing.md -------------------
# `make test-kernels` boots each kernel of scripts/vm/matrix under qemu (TCG)
# with this machine's root over 9p, read-only, and runs the unit and the
# functional integration tests inside on the binaries built here, pure cgroup
# v2 with the systemd layout. KERNELS="6.1" picks entries (CI runs 6.1).
# The kernels are fetched with apt-get download into VM_CACHE, never committed.
KERNELS ?=
.PHONY: test-kernels
test-kernels: $(BUILD)/qoslet $(UNIT_BINS) $(HELPER_BINS) | deps-vm
	scripts/vm/matrix.sh $(KERNELS)

# ---- fuzzing: tests/fuzz/, docs/fuzzing.md -----------------------------------
# `make fuzz-build` builds one libFuzzer binary per tests/fuzz/fuzz_*.c, with
# clang, ASan and UBSan, from its own sanitized objects of user/ (build/fuzz/):
# the normal objects are never mixed in. tests/integration/test_fuzz.sh runs
# them: CI for 2 s per target, `make fuzz` for FUZZ_SECONDS (60) per target
# after replaying the committed inputs (FUZZ_TARGETS="kube http" picks some).
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_OBJS := $(patsubst %.c,$(BUILD)/fuzz/%.o,$(USER_SRCS))
# A UBSan finding aborts, so libFuzzer stops and saves the input as for a crash.
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined

FUZZ_SECONDS ?= 60
.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS) | deps-test

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) INTEGRATION_TIMEOUT=$$(( 100 + 2 * $(FUZZ_SECONDS) * \
		$(words $(FUZZ_BINS)) )) VERBOSE=1 TESTS=test_fuzz tests/run.sh integration

$(BUILD)/fuzz/%.o: %.c $(SKELS)
	@mkdir -p $(@D)
	@echo "  FUZZCC  $@"
	$(Q)$(CLANG) $(CFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(BUILD)/fuzz/user/config/agent_config.o: user/config/default-config.json

# An archive, so each target links only the objects it reaches.
$(BUILD)/fuzz/libqoslet.a: $(FUZZ_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

# libFuzzer's runtime (libclang-rt-14-dev) comes with the test profile.
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(BUILD)/fuzz/libqoslet.a | deps-test
	@echo "  FUZZ    $@"
	$(Q)$(CLANG) $(CFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(BUILD)/fuzz/libqoslet.a \
		$(LDLIBS) -o $@

-include $(FUZZ_OBJS:.o=.d)

# ---- sanitizers: docs/testing.md ----------------------------------------------
# `make asan` builds build/asan/qoslet, the unit tests and the helpers that
# link user/ with ASan, UBSan and LeakSanitizer, from objects of their own
# (the BPF objects and skeletons are shared), then runs the unit tests and
# the integration tests against them. tests/run.sh (SANITIZER_LOGS) sets the
# sanitizers' options and fails the test behind any report, also one from a
# process the test ran in the background. The files in ASAN_SKIP list the
# tests left out, each with the reason printed; ASAN_TESTS names a subset.
ASAN_BUILD := $(BUILD)/asan
# clang: its ASan runtime carries UBSan, so one log_path takes every report
# (GCC links two runtimes, and its reports ignore log_path). -O1 keeps the
# stacks readable at about half the cost of -O0. UBSan aborts on its first
# finding, so undefined behaviour fails the test.
ASAN_CC ?= $(CLANG)
ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
ASAN_OBJS := $(patsubst %.c,$(ASAN_BUILD)/%.o,$(USER_SRCS))
$(foreach l,$(LAYERS),$(eval $(call LAYER_RULE,$(ASAN_BUILD),$(l))))
ASAN_LIBS := $(call layer_libs,$(ASAN_BUILD))
ASAN_UNIT_BINS := $(patsubst tests/unit/%.c,$(ASAN_BUILD)/tests/%,$(UNIT_SRCS))
# Only these helpers run code of user/; the others just make load.
ASAN_HELPERS := $(ASAN_BUILD)/tests/helpers/kubecheck $(ASAN_BUILD)/tests/helpers/kubesync
ASAN_TESTS ?=
ASAN_SKIP ?= tests/asan.skip
ASAN_RUN = SANITIZER_LOGS=$(abspath $(ASAN_BUILD)/logs) SKIP_FILES="$(ASAN_SKIP)" TESTS="$(ASAN_TESTS)" \
	QOSLET=$(abspath $(ASAN_BUILD)/qoslet) \
	KUBECHECK=$(abspath $(ASAN_BUILD)/tests/helpers/kubecheck) \
	KUBESYNC=$(abspath $(ASAN_BUILD)/tests/helpers/kubesync) \
	tests/run.sh all $(ASAN_UNIT_BINS)

.PHONY: asan asan-build
asan-build: $(ASAN_BUILD)/qoslet $(ASAN_UNIT_BINS) $(ASAN_HELPERS)

# Linking needs clang's sanitizer runtime, the unit tests cmocka: the test profile.
$(ASAN_BUILD)/qoslet $(ASAN_UNIT_BINS) $(ASAN_HELPERS): | deps-test

asan: asan-build $(HELPER_BINS)
	$(ASAN_RUN)

$(ASAN_BUILD)/%.o: %.c $(SKELS)
	@mkdir -p $(@D)
	@echo "  ASANCC  $@"
	$(Q)$(ASAN_CC) $(CFLAGS) $(ASAN_CFLAGS) -MMD -MP -c $< -o $@

$(ASAN_BUILD)/user/config/agent_config.o: user/config/default-config.json

$(ASAN_BUILD)/qoslet: $(ASAN_BUILD)/user/main.o $(ASAN_LIBS)
	@echo "  LINK    $@"
	$(Q)$(ASAN_CC) $(CFLAGS) $(ASAN_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(ASAN_BUILD)/tests/test_%: tests/unit/test_%.c $(ASAN_LIBS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	@echo "  TEST    $@"
	$(Q)$(ASAN_CC) $(CFLAGS) $(ASAN_CFLAGS) $(LDFLAGS) $(filter-out %.h,$^) $(LDLIBS) -lcmocka -o $@

$(ASAN_HELPERS): $(ASAN_BUILD)/tests/helpers/%: tests/helpers/%.c $(ASAN_LIBS)
	@mkdir -p $(@D)
	$(Q)$(ASAN_CC) $(CFLAGS) $(ASAN_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

-include $(ASAN_OBJS:.o=.d) $(ASAN_BUILD)/user/main.d

# ---- container image: Containerfile, docs/deploy.md ---------------------------
# `make image` stages build/qoslet with the shared libraries it links in
# IMAGE_DIR/rootfs and builds the image FROM scratch with buildah, named IMAGE.
# vfs storage works everywhere (no overlay mounts, no fuse) at some disk cost;
# tests/integration/test_image.sh adds --root/--runroot of its own.
IMAGE ?= localhost/qoslet:latest
IMAGE_DIR ?= $(BUILD)/image
BUILDAH ?= buildah
BUILDAH_FLAGS ?= --storage-driver vfs

.PHONY: image
image: $(BUILD)/qoslet | deps-image
	STRIP=$(LLVM_STRIP) scripts/deploy/image-rootfs.sh $(BUILD)/qoslet $(IMAGE_DIR)/rootfs
	$(BUILDAH) $(BUILDAH_FLAGS) build --isolation chroot -f Containerfile \
		--build-arg VERSION=$(VERSION) -t $(IMAGE) $(IMAGE_DIR)

# ---- install outside Kubernetes: docs/install.md -----------------------------
# `make install PREFIX=/usr/local DESTDIR=` installs the binary, the man pages,
# bash completion, the systemd unit and the config reference with an example;
# `make uninstall` removes exactly those. The man pages are built from the
# manuals in docs/ (scripts/man/md2man.sh), all in section 8: every command
# but replay needs root, and it shares record's page. The unit's paths are
# substituted here, so one source serves every PREFIX. SYSCONFDIR stays /etc
# for any PREFIX: the unit reads /etc/default/qoslet, where admins look.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/qoslet
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
MAN_PAGES := $(patsubst docs/%.md,$(BUILD)/man/%.8,$(wildcard docs/qoslet.md docs/qoslet-*.md)) \
	$(BUILD)/man/qoslet-record.8
INSTALLED := $(BINDIR)/qoslet $(patsubst $(BUILD)/man/%,$(MANDIR)/man8/%,$(MAN_PAGES)) \
	$(BASHCOMPDIR)/qoslet $(SYSTEMDUNITDIR)/qoslet.service \
	$(DOCDIR)/agent-config.md $(DOCDIR)/examples/agent.json

.PHONY: man install uninstall
man: $(MAN_PAGES)

$(BUILD)/man/%.8: docs/%.md scripts/man/md2man.sh | deps-install
	@mkdir -p $(@D)
	@echo "  MAN     $@"
	$(Q)scripts/man/md2man.sh $< $* 8 > $@.tmp && mv $@.tmp $@

# docs/qoslet-replay.md is the manual of both; man follows .so to it.
$(BUILD)/man/qoslet-record.8:
	@mkdir -p $(@D)
	$(Q)echo '.so man8/qoslet-replay.8' > $@

# The example config is the embedded defaults (= `qoslet agent --print-config`,
# tests/integration/test_install.sh checks): copied, not run, so installing
# never executes the binary.
install: $(BUILD)/qoslet $(MAN_PAGES)
	install -D -m 0755 $(BUILD)/qoslet $(DESTDIR)$(BINDIR)/qoslet
	install -d $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(DOCDIR)/examples
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man8/
	install -D -m 0644 scripts/completion/qoslet.bash $(DESTDIR)$(BASHCOMPDIR)/qoslet
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		scripts/systemd/qoslet.service > $(DESTDIR)$(SYSTEMDUNITDIR)/qoslet.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/qoslet.service
	install -m 0644 docs/agent-config.md $(DESTDIR)$(DOCDIR)/
	install -m 0644 user/config/default-config.json $(DESTDIR)$(DOCDIR)/examples/agent.json

# Only qoslet's own directories go; bin/, man8/ and the like stay.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	for d in $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR); do \
		[ ! -d $$d ] || rmdir $$d; done

# ---- soak with churn: scripts/soak/, docs/soak/README.md --------------------
# `make soak` runs the agent SOAK_SECONDS under cgroup churn and interference
# and writes the samples, the plot and the table to docs/soak/. Not part of
# `make test`, which runs the 2-minute version (tests/integration/test_soak.sh).
SOAK_SECONDS ?= 900
SOAK_WARMUP ?= 120

.PHONY: soak
soak: $(BUILD)/qoslet $(HELPER_BINS) | deps-bench
	scripts/soak/soak.sh -d $(SOAK_SECONDS) -w $(SOAK_WARMUP) -o docs/soak

format:
	clang-format -i $(wildcard bpf/*.c bpf/*.h user/*.c user/*.h user/*/*.c user/*/*.h \
		tests/unit/*.c tests/helpers/*.c)

clean:
	rm -rf $(BUILD)

-include $(USER_OBJS:.o=.d) $(BUILD)/user/main.d

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The actuator's journal as a restarted agent reads it (user/actuate/
 * journal.c, journal_load()): each input is a state_dir/actuator.json, which
 * a crash, a full disk or a person may have left damaged, so a file that is
 * not whole goes through the salvage reader. "@BOOT@" in the input stands
 * for this boot's id (/proc/sys/kernel/random/boot_id), so that the fuzzer
 * reaches the entries of a journal of this boot; the cgroups are cgroup v1
 * ones under a fake root (cgroup_ctrls_fake(), nothing is read there).
 *
 * Checks: journal_load() returns 0; a stale journal (another boot) loads
 * nothing; the entries are terminated, name a knob of this host, have a
 * normalised relative cgroup path (no empty, "." or ".." component, so a
 * restore cannot climb out of the managed subtree), and, in an input
 * without JSON escapes, appear in it in order (each entry's cgroup path is
 * in the text at or after the previous one's).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "actuate/internal.h"
#include "fuzz.h"
#include "log.h"
#include "readfile.h"

static struct cgroup_ctrls ctrls;
static char boot_id[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_max_level = LOG_ERROR; /* dropped entries and stale journals are warnings */
	cgroup_ctrls_fake(&ctrls, "/nonexistent/qoslet-fuzz", false);
	FUZZ_CHECK(!read_file_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", boot_id,
				 sizeof(boot_id)),
		   "no boot id");
	boot_id[strcspn(boot_id, "\n")] = '\0';
	return 0;
}

/* data with every "@BOOT@" replaced by this boot's id (malloc'd); its length in *len. */
static char *with_boot_id(const uint8_t *data, size_t size, size_t *len)
{
	static const char mark[] = "@BOOT@";
	size_t id = strlen(boot_id), n = 0;
	char *out = malloc(size / (sizeof(mark) - 1) * id + size + 1);

	FUZZ_CHECK(out, "no memory");
	for (size_t i = 0; i < size;) {
		if (size - i >= sizeof(mark) - 1 && !memcmp(data + i, mark, sizeof(mark) - 1)) {
			memcpy(out + n, boot_id, id);
			n += id;
			i += sizeof(mark) - 1;
		} else {
			out[n++] = (char)data[i++];
		}
	}
	*len = n;
	return out;
}

#define TERMINATED(s) (strnlen((s), sizeof(s)) < sizeof(s))

/* rel's components, split at '/', are none of "", "." and ".." ("" itself is the root). */
static bool normalised(const char *rel)
{
	char copy[sizeof(((struct journal_entry *)0)->rel)], *save = NULL;
	size_t n = strlen(rel);

	if (!n)
		return true;
	if (rel[0] == '/' || rel[n - 1] == '/' || strstr(rel, "//"))
		return false;
	snprintf(copy, sizeof(copy), "%s", rel);
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save))
		if (!strcmp(c, ".") || !strcmp(c, ".."))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct journal j = {0};
	const char *at;
	size_t len;
	char *file = with_boot_id(data, size, &len);
	bool stale = true, plain;
	int rc;

	snprintf(j.path, sizeof(j.path), "%s", fuzz_file((const uint8_t *)file, len));
	rc = journal_load(&j, &ctrls, &stale);
	FUZZ_CHECK(rc == 0, "journal_load: %d", rc);
	FUZZ_CHECK(TERMINATED(j.damage), "unterminated damage");
	FUZZ_CHECK(!stale || !j.n, "a stale journal loaded %zu entries", j.n);
	FUZZ_CHECK(j.n <= j.cap, "%zu entries, room for %zu", j.n, j.cap);
	/* JSON escapes may spell a path otherwise: only an input without them is searched */
	plain = !memchr(file, '\\', len);
	at = file;
	for (size_t i = 0; i < j.n; i++) {
		const struct journal_entry *e = &j.v[i];
		const char *found;

		FUZZ_CHECK(TERMINATED(e->rel) && TERMINATED(e->orig), "entry %zu unterminated", i);
		FUZZ_CHECK(e->knob >= 0 && e->knob < CG_KNOB_NR, "entry %zu: knob %d", i, e->knob);
		FUZZ_CHECK(normalised(e->rel), "entry %zu: cgroup '%s' is not normalised", i,
			   e->rel);
		if (plain && e->rel[0]) {
			found = memmem(at, len - (size_t)(at - file), e->rel, strlen(e->rel));
			FUZZ_CHECK(found, "entry %zu (%s) is not in the input after the one before",
				   i, e->rel);
			at = found;
		}
	}
	journal_free(&j);
	free(file);
	return 0;
}

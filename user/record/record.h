/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Recordings: what the policies saw, tick by tick, as JSON lines. The first
 * line is a header with the format version and the config in effect; each
 * further line is one struct pol_input. Numbers are written with 17
 * significant digits, so a replay computes on exactly the recorded values.
 */
#ifndef QOSLET_RECORD_RECORD_H
#define QOSLET_RECORD_RECORD_H

#include <jansson.h>
#include <stdio.h>

#include "policy/policy_config.h"
#include "policy/model.h"

/*
 * 2 added "outside" (the outside culprits blame names by cgroup id). A
 * format 1 recording still reads: its outside culprits are all unnamed.
 * 3 added each blame pair's count (hand-overs); a format 1 or 2 recording
 * still reads with none.
 * 4 added the memory stall: a unit's "ms", "mem_ancestors", "mem_outside";
 * an older recording reads with no memory stall measured.
 */
#define RECORD_FORMAT	  4
#define RECORD_FORMAT_MIN 1

json_t *record_input_to_json(const struct pol_input *in);

/* Fills in (freed first); -EINVAL with err naming the field that is wrong. */
int record_input_from_json(const json_t *o, struct pol_input *in, char *err, size_t errlen);

/* Writes the header line (format, qoslet version, config); 0 or -errno. */
int record_write_header(FILE *f, const json_t *config);

/* Writes one tick; 0 or -errno. */
int record_write_input(FILE *f, const struct pol_input *in);

struct record_reader {
	FILE *f;
	size_t line; /* of the last line read, for messages */
	char *buf;
	size_t cap;
};

/*
 * Opens a recording and reads its header: *config is the recorded config
 * document (the caller's reference). -EINVAL with err for a file that is
 * not a qoslet recording.
 */
int record_open(struct record_reader *r, const char *path, json_t **config, char *err,
		size_t errlen);

/* The next tick: 1 read, 0 end of file, -EINVAL (err says where and what). */
int record_next(struct record_reader *r, struct pol_input *in, char *err, size_t errlen);

void record_close(struct record_reader *r);

#endif

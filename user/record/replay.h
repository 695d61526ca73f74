/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `qoslet replay` (replay.c): the agent's policies on a recording, offline. */
#ifndef QOSLET_RECORD_REPLAY_H
#define QOSLET_RECORD_REPLAY_H

/* `qoslet replay`; returns the exit status. */
int replay_main(int argc, char **argv);

#endif

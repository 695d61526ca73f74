/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's commands: agent, record (user/agent/agent.c) and replay (replay.c). */
#ifndef QOSLET_AGENT_AGENT_H
#define QOSLET_AGENT_AGENT_H

#include "agent_args.h"

/* `qoslet agent` (AGENT_RUN) and `qoslet record` (AGENT_RECORD); returns the exit status. */
int agent_main(enum agent_mode mode, int argc, char **argv);

/* `qoslet replay`; returns the exit status. */
int replay_main(int argc, char **argv);

#endif

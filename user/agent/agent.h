/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's commands: agent and record (user/agent/agent.c); replay is user/record/replay.h. */
#ifndef QOSLET_AGENT_AGENT_H
#define QOSLET_AGENT_AGENT_H

#include "config/agent_args.h"

/* `qoslet agent` (AGENT_RUN) and `qoslet record` (AGENT_RECORD); returns the exit status. */
int agent_main(enum agent_mode mode, int argc, char **argv);

#endif

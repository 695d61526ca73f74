/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The config's part of a reload (config_reload.c): reading the document
 * with its file's mode checked, and naming a change that only a restart
 * can make. Swapping the config in is the agent's (user/agent/reload.c).
 */
#ifndef QOSLET_CONFIG_CONFIG_RELOAD_H
#define QOSLET_CONFIG_CONFIG_RELOAD_H

#include <stddef.h>

#include "config/agent_config.h"

/*
 * The config in path (refused when others may write it) for node (its
 * overrides: config_parse_node()), or the embedded defaults when path is
 * NULL. 0, or a negative errno with err set.
 */
int config_read(struct agent_config *out, const char *path, struct config_node *node, char *err,
		size_t errlen);

/* The first setting from o to n that only a restart can change, or NULL. */
const char *config_restart_only_change(const struct agent_config *o, const struct agent_config *n);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef QOSLET_CLI_BLAME_H
#define QOSLET_CLI_BLAME_H

#include "cli/view.h"

extern const struct view_ops blame_view;

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef QOSLET_CLI_RUNQLAT_H
#define QOSLET_CLI_RUNQLAT_H

#include "cli/view.h"

extern const struct view_ops runqlat_view;

#endif

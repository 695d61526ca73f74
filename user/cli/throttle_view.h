/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef QOSLET_CLI_THROTTLE_VIEW_H
#define QOSLET_CLI_THROTTLE_VIEW_H

#include "cli/view.h"

extern const struct view_ops throttle_view;

#endif

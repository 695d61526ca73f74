/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The policies' side of the fast path (probes/fast_path.h): the wait over
 * which an LS unit's task wakes the loop, and whether a settled breach may
 * mute its unit. Pure: the config and the unit, nothing else.
 */
#ifndef QOSLET_POLICY_ALERT_THRESHOLD_H
#define QOSLET_POLICY_ALERT_THRESHOLD_H

#include <stdbool.h>

#include "policy/policy_config.h"
#include "policy/model.h"

/*
 * The wait that raises an alert for LS unit u, us: interference's run-queue
 * threshold, or, with SLO control on, u's SLO target (slo_target_us: its
 * pod's annotation, a glob, its class) when that is smaller, so that a wait
 * over the unit's own target wakes the loop. u NULL (a unit the policies
 * have not seen yet): the smallest any unit could have by the config.
 */
double fast_path_threshold_us(const struct policy_config *p, const struct pol_unit *u);

/*
 * Whether settled interference breaches may mute their LS units: not with
 * SLO control on, which may still cut on any of their alerts.
 */
bool fast_path_may_mute(const struct policy_config *p);

#endif

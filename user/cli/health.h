/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `qoslet health`: asks a running agent's health socket (config
 * http.health_socket) for /healthz, or /readyz with --ready, and exits 0
 * when it answers 200. The kubelet runs it as the DaemonSet's exec probes:
 * a UNIX socket only root can reach, which no local client can crowd out as
 * one can the TCP health port (docs/security.md).
 */
#ifndef QOSLET_CLI_HEALTH_H
#define QOSLET_CLI_HEALTH_H

/* argv[0] is "health". Exit status: 0 healthy (ready), 1 not, or no answer; 2 usage. */
int health_main(int argc, char **argv);

#endif

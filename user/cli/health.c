// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cli/health.h"

#include <curl/curl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/curl_dl.h"
#include "opt_error.h"

#define DEFAULT_SOCKET "/run/qoslet/health.sock"
/* The agent answers from memory at once; the kubelet's probe timeout is its own. */
#define DEFAULT_TIMEOUT_S 2.0
/* The answers are one line; more is not the agent. */
#define MAX_ANSWER 1024

struct answer {
	char text[MAX_ANSWER + 1];
	size_t len;
};

static size_t keep(char *data, size_t size, size_t n, void *cls)
{
	struct answer *a = cls;
	size_t len = size * n, room = MAX_ANSWER - a->len;

	if (len > room)
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	memcpy(a->text + a->len, data, len);
	a->len += len;
	a->text[a->len] = '\0';
	return len;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: qoslet health [--ready] [--socket PATH] [--timeout SECONDS]\n"
		"\n"
		"Asks the agent on this node whether it is healthy (/healthz) or, with\n"
		"--ready, ready (/readyz), through its health socket (config\n"
		"http.health_socket), and prints the answer. The DaemonSet's liveness and\n"
		"readiness probes run it: only root can reach the socket, so no local\n"
		"client can crowd the probes out as it can on a TCP port.\n"
		"\n"
		"Options:\n"
		"  --ready            ask /readyz instead of /healthz\n"
		"  --socket PATH      the agent's health socket (default " DEFAULT_SOCKET ")\n"
		"  --timeout SECONDS  give up after this long (default %.0f; at most 60)\n"
		"  -h, --help         this help\n"
		"\n"
		"Exit status: 0 healthy (ready); 1 not, or no answer (the reason on\n"
		"stderr); 2 a usage error.\n",
		DEFAULT_TIMEOUT_S);
}

struct health_args {
	bool ready, help;
	const char *socket;
	double timeout_s;
};

static int parse(struct health_args *a, int argc, char **argv, char *err, size_t errlen)
{
	static const struct option longopts[] = {
		{"ready", no_argument, NULL, 'r'},
		{"socket", required_argument, NULL, 's'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *shortopts = ":h";
	int c;

	*a = (struct health_args){.socket = DEFAULT_SOCKET, .timeout_s = DEFAULT_TIMEOUT_S};
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'r':
			a->ready = true;
			break;
		case 's':
			a->socket = optarg;
			if (optarg[0] != '/') {
				snprintf(err, errlen, "--socket %s: not an absolute path", optarg);
				return -1;
			}
			break;
		case 't':
			a->timeout_s = strtod(optarg, &end);
			if (end == optarg || *end || !(a->timeout_s > 0 && a->timeout_s <= 60)) {
				snprintf(err, errlen,
					 "--timeout %s: not a number of seconds in (0, 60]",
					 optarg);
				return -1;
			}
			break;
		case 'h':
			a->help = true;
			return 0;
		default:
			return opt_error(c, shortopts, argv, err, errlen);
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	return 0;
}

int health_main(int argc, char **argv)
{
	struct health_args a;
	struct answer ans = {.len = 0};
	char err[CURL_ERROR_SIZE + 256] = "";
	const char *path;
	long status = 0;
	CURLcode rc;
	CURL *h;

	if (parse(&a, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "qoslet health: %s (see 'qoslet health --help')\n", err);
		return 2;
	}
	if (a.help) {
		usage(stdout);
		return 0;
	}
	if (curl_dl_open(err, sizeof(err))) {
		fprintf(stderr, "qoslet health: %s\n", err);
		return 1;
	}
	h = curl_easy_init();
	if (!h) {
		fprintf(stderr, "qoslet health: libcurl: cannot create a handle\n");
		return 1;
	}
	path = a.ready ? "/readyz" : "/healthz";
	/* the host part is not used over a UNIX socket; the path is */
	if (curl_easy_setopt(h, CURLOPT_URL,
			     a.ready ? "http://agent/readyz" : "http://agent/healthz") ||
	    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, a.socket) ||
	    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(a.timeout_s * 1000)) ||
	    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep) ||
	    curl_easy_setopt(h, CURLOPT_WRITEDATA, &ans) ||
	    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err) ||
	    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L)) {
		fprintf(stderr, "qoslet health: libcurl refused an option\n");
		curl_easy_cleanup(h);
		return 1;
	}
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		fprintf(stderr, "qoslet health: no answer on %s (%s): %s\n", a.socket, path,
			err[0] ? err : curl_easy_strerror(rc));
		return 1;
	}
	fputs(ans.text, status == 200 ? stdout : stderr);
	if (status != 200) {
		fprintf(stderr, "qoslet health: %s answered %ld\n", path, status);
		return 1;
	}
	return 0;
}

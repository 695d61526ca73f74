// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cgchurn [-r RATE] [-l LIFETIME_MS] [-w WAKE_MS] [-d SECONDS] [-i IDS] DIR...
 *
 * Cgroup churn for the soak (scripts/soak/soak.sh): RATE times a second
 * (default 50) creates a cgroup c<N> below every DIR (the same parent in each
 * cgroup hierarchy; the first DIR is the one cgroups are identified by) with
 * one task in it, and removes every cgroup whose task has ended. The task is
 * a forked copy of this process that joins the cgroup in every DIR, wakes
 * every WAKE_MS (default 100) so it runs and waits on run queues, and exits
 * after LIFETIME_MS (default 1000). So about RATE * LIFETIME_MS / 1000
 * cgroups live at a time, and RATE are created and RATE removed a second.
 *
 * Runs SECONDS (default 0: until SIGTERM or SIGINT), then kills its tasks,
 * removes every cgroup it made and prints one line on stdout:
 *   created N removed N skipped N mkdir_failed N join_failed N rmdir_failed N max_live N cpu_s S
 * where cpu_s is its own and its tasks' CPU time. With -i, the id (inode) of
 * every cgroup made in the first DIR is appended to IDS, one a line, before
 * its task starts. A new v1 cpuset gets its parent's CPUs and memory nodes.
 *
 * Why C: 50 mkdirs, forks, joins and rmdirs a second in 5 hierarchies cost a
 * shell hundreds of forks a second; here it costs under a tenth of one CPU,
 * its tasks included.
 * Exit status: 0, 1 when anything failed, 2 on a bad argument.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL
#define MAX_DIRS      8
/* Live cgroups at most; while full, a due creation is skipped (counted). */
#define MAX_LIVE 4096
/* How long the end waits for the last cgroups to empty before giving up. */
#define DRAIN_NS (5 * NSEC_PER_SEC)

struct parent {
	const char *dir;
	char cpus[256], mems[256]; /* a v1 cpuset's, to copy into children; "" otherwise */
};

struct slot {
	pid_t pid;		/* 0: free */
	bool exited;		/* reaped: the cgroup can go */
	unsigned long long seq; /* the cgroup is c<seq> */
};

static struct parent parents[MAX_DIRS];
static int nparents;
static struct slot slots[MAX_LIVE];
static unsigned long long created, removed, skipped, mkdir_failed, join_failed, rmdir_failed;
static int live, max_live;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / NSEC_PER_SEC),
			      .tv_nsec = (long)(t % NSEC_PER_SEC)};

	/* EINTR (a signal, or SIGCHLD) only ends the sleep early: the loop re-checks. */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static int read_line(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static void cg_path(char *buf, size_t size, const struct parent *p, unsigned long long seq,
		    const char *file)
{
	snprintf(buf, size, "%s/c%llu%s%s", p->dir, seq, file ? "/" : "", file ? file : "");
}

/* Makes c<seq> in every hierarchy; on failure removes what it made. */
static int make_cgroup(unsigned long long seq, FILE *ids)
{
	char path[PATH_MAX];
	struct stat st;
	int i;

	for (i = 0; i < nparents; i++) {
		const struct parent *p = &parents[i];

		cg_path(path, sizeof(path), p, seq, NULL);
		if (mkdir(path, 0755))
			goto undo;
		if (p->cpus[0]) {
			cg_path(path, sizeof(path), p, seq, "cpuset.cpus");
			if (write_str(path, p->cpus))
				goto undo_this;
			cg_path(path, sizeof(path), p, seq, "cpuset.mems");
			if (write_str(path, p->mems))
				goto undo_this;
		}
	}
	if (ids) {
		cg_path(path, sizeof(path), &parents[0], seq, NULL);
		if (stat(path, &st) == 0)
			fprintf(ids, "%llu\n", (unsigned long long)st.st_ino);
		/* Now: a reader must know the id before the task can put it in a map. */
		fflush(ids);
	}
	return 0;
undo_this:
	i++;
undo:
	while (i-- > 0) {
		cg_path(path, sizeof(path), &parents[i], seq, NULL);
		rmdir(path);
	}
	return -1;
}

/*
 * Removes c<seq> everywhere: 0 when it is gone from every hierarchy, -EBUSY
 * when one still holds the exited task (try again later), -1 on an error.
 */
static int remove_cgroup(unsigned long long seq)
{
	char path[PATH_MAX];
	int i, rc = 0;

	for (i = 0; i < nparents; i++) {
		cg_path(path, sizeof(path), &parents[i], seq, NULL);
		if (rmdir(path) == 0 || errno == ENOENT)
			continue;
		if (errno == EBUSY && rc == 0)
			rc = -EBUSY;
		else
			rc = -1;
	}
	return rc;
}

/* The task: joins c<seq> everywhere, then wakes every wake_ns until its lifetime ends. */
static void __attribute__((noreturn))
task(unsigned long long seq, uint64_t life_ns, uint64_t wake_ns)
{
	char path[PATH_MAX];
	uint64_t t0 = now_ns(), t;
	int i;

	/* The churn's tasks never outlive it, however it ends; its stop handler is not theirs. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	for (i = 0; i < nparents; i++) {
		cg_path(path, sizeof(path), &parents[i], seq, "cgroup.procs");
		/* "0" is the writer itself, in v1 and v2. */
		if (write_str(path, "0"))
			_exit(126);
	}
	for (t = t0 + wake_ns; t < t0 + life_ns; t += wake_ns)
		sleep_until(t);
	_exit(0);
}

static void start(unsigned long long seq, uint64_t life_ns, uint64_t wake_ns, FILE *ids)
{
	int i;
	pid_t pid;

	for (i = 0; i < MAX_LIVE && slots[i].pid; i++)
		;
	if (i == MAX_LIVE) {
		skipped++;
		return;
	}
	if (make_cgroup(seq, ids)) {
		mkdir_failed++;
		return;
	}
	pid = fork();
	if (pid < 0) {
		remove_cgroup(seq);
		mkdir_failed++;
		return;
	}
	if (pid == 0)
		task(seq, life_ns, wake_ns);
	slots[i] = (struct slot){.pid = pid, .seq = seq};
	created++;
	if (++live > max_live)
		max_live = live;
}

/* Reaps ended tasks and removes their cgroups (a busy one is retried next time). */
static void reap(void)
{
	int i, status, rc;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < MAX_LIVE && slots[i].pid != pid; i++)
			;
		if (i == MAX_LIVE)
			continue;
		slots[i].exited = true;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 126)
			join_failed++;
	}
	for (i = 0; i < MAX_LIVE; i++) {
		if (!slots[i].pid || !slots[i].exited)
			continue;
		rc = remove_cgroup(slots[i].seq);
		if (rc == -EBUSY)
			continue;
		if (rc)
			rmdir_failed++;
		else
			removed++;
		slots[i].pid = 0;
		live--;
	}
}

static int parse_ull(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out > max ? -1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: cgchurn [-r RATE] [-l LIFETIME_MS] [-w WAKE_MS] [-d SECONDS] "
			"[-i IDS] DIR...\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned long long rate = 50, life_ms = 1000, wake_ms = 100, secs = 0, seq = 0;
	uint64_t period, t, end, life_ns, wake_ns;
	const char *ids_path = NULL;
	struct sigaction sa = {.sa_handler = on_signal};
	struct rusage self, kids;
	FILE *ids = NULL;
	char path[PATH_MAX];
	int opt, i;

	while ((opt = getopt(argc, argv, "r:l:w:d:i:")) != -1) {
		switch (opt) {
		case 'r':
			if (parse_ull(optarg, 1000, &rate) || !rate)
				return usage();
			break;
		case 'l':
			if (parse_ull(optarg, 3600000, &life_ms))
				return usage();
			break;
		case 'w':
			if (parse_ull(optarg, 3600000, &wake_ms) || !wake_ms)
				return usage();
			break;
		case 'd':
			if (parse_ull(optarg, 7 * 86400, &secs))
				return usage();
			break;
		case 'i':
			ids_path = optarg;
			break;
		default:
			return usage();
		}
	}
	if (optind == argc || argc - optind > MAX_DIRS)
		return usage();
	for (i = optind; i < argc; i++) {
		struct parent *p = &parents[nparents++];

		p->dir = argv[i];
		snprintf(path, sizeof(path), "%s/cpuset.cpus", p->dir);
		if (read_line(path, p->cpus, sizeof(p->cpus)) == 0) {
			snprintf(path, sizeof(path), "%s/cpuset.mems", p->dir);
			if (read_line(path, p->mems, sizeof(p->mems))) {
				fprintf(stderr, "cgchurn: cannot read %s: %m\n", path);
				return 1;
			}
		}
	}
	if (ids_path && !(ids = fopen(ids_path, "ae"))) {
		fprintf(stderr, "cgchurn: cannot open %s: %m\n", ids_path);
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	period = NSEC_PER_SEC / rate;
	life_ns = life_ms * NSEC_PER_MSEC;
	wake_ns = wake_ms * NSEC_PER_MSEC;
	t = now_ns();
	end = secs ? t + secs * NSEC_PER_SEC : UINT64_MAX;
	while (!stop && t < end) {
		reap();
		start(seq++, life_ns, wake_ns, ids);
		t += period;
		sleep_until(t);
	}

	for (i = 0; i < MAX_LIVE; i++)
		if (slots[i].pid && !slots[i].exited)
			kill(slots[i].pid, SIGKILL);
	for (t = now_ns() + DRAIN_NS; live && now_ns() < t;) {
		reap();
		if (live)
			usleep(10000);
	}
	rmdir_failed += (unsigned long long)live;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("created %llu removed %llu skipped %llu mkdir_failed %llu join_failed %llu "
	       "rmdir_failed %llu max_live %d cpu_s %.3f\n",
	       created, removed, skipped, mkdir_failed, join_failed, rmdir_failed, max_live,
	       (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
			kids.ru_stime.tv_sec) +
		       (self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
			kids.ru_stime.tv_usec) /
			       1e6);
	if (ids)
		fclose(ids);
	return mkdir_failed || join_failed || rmdir_failed ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qoslet top: every probe's headline number per cgroup, in one table.
 * On a terminal it is interactive (ncurses: keys sort, filter and quit);
 * piped it prints plain tables; -j prints JSON lines.
 */
#include "cli/top.h"

#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/curses_dl.h"
#include "cli/mem_explain.h"
#include "log.h"
#include "cli/top_rows.h"
#include "cli/view.h"

static struct {
	enum top_col sort;
	char filter[64];
	WINDOW *screen; /* ncurses is up: its window; NULL plain text */
	bool no_screen; /* ncurses could not be loaded: plain text for good */
	struct top_row *rows;
	size_t cap;
	struct mem_explain mem; /* the interval's memory stalls, as the agent explains them */
} top = {.sort = TOP_COL_CPU};

static const char *path_of(void *ctx, uint64_t id, char *buf, size_t size)
{
	return view_cgroup_path(ctx, id, buf, size);
}

/* What a person recognises: "burstable pod 1a2b3c4d/ c0ffee12" for pods, else the path. */
static const char *display_name(const struct top_row *row, char *buf, size_t size)
{
	const char *qos;

	if (!row->is_kube) {
		snprintf(buf, size, "%s", row->path);
		return buf;
	}
	qos = kube_qos_name(row->kube.qos);
	if (row->kube.container_id[0])
		snprintf(buf, size, "%s pod %.8s/%.12s", qos, row->kube.pod_uid,
			 row->kube.container_id);
	else
		snprintf(buf, size, "%s pod %.8s", qos, row->kube.pod_uid);
	return buf;
}

/* A culprit cgroup as its row would show it; "-" for none (0). */
static const char *party_name(struct view *v, uint64_t id, char *buf, size_t size)
{
	struct top_row tmp = {0};

	if (!id)
		return "-";
	if (!view_cgroup_path(v, id, tmp.path, sizeof(tmp.path)))
		return "(removed)";
	tmp.is_kube = kube_path_parse(tmp.path, &tmp.kube);
	display_name(&tmp, buf, size);
	return buf;
}

/* One cell: numbers right-aligned in `w` columns, "-" when unknown. */
static const char *cell(enum top_col col, double val, char *buf, size_t size)
{
	if (val == TOP_NA)
		return "-";
	switch (col) {
	case TOP_COL_RQ_P99:
	case TOP_COL_RECLAIM_P99:
		return view_fmt_ns(val, buf, size);
	case TOP_COL_CPI:
		snprintf(buf, size, "%.2f", val);
		return buf;
	default:
		snprintf(buf, size, "%.1f", val);
		return buf;
	}
}

/* Builds, filters and sorts the rows of `delta`; returns their number. */
static size_t make_rows(struct view *v, const struct snapshot *delta)
{
	size_t n, kept = 0;

	if (delta->n_cgroups > top.cap) {
		struct top_row *tmp = realloc(top.rows, delta->n_cgroups * sizeof(*tmp));

		if (!tmp)
			return 0;
		top.rows = tmp;
		top.cap = delta->n_cgroups;
	}
	if (mem_explain_update(&top.mem, v, delta))
		log_err("out of memory: no memory stall explained in this table");
	n = top_rows_build(top.rows, delta, v->interval_ns, &top.mem, path_of, v);
	/* -c filters, then the interactive substring filter. */
	for (size_t i = 0; i < n; i++)
		if (view_selected(v, top.rows[i].id))
			top.rows[kept++] = top.rows[i];
	n = top_rows_filter(top.rows, kept, top.filter);
	top_rows_sort(top.rows, n, top.sort);
	return n;
}

#define COLS_FMT "%7s %10s %6s %6s %12s %6s %6s %6s  %-28s  %-24s  %s"

#define CULPRIT_WIDTH	  28
#define MEM_CULPRIT_WIDTH 24

/* "62% /kubepods/besteffort/pod..": the memory stall's culprit and its share; "-" none. */
static const char *mem_culprit_cell(struct view *v, const struct top_row *row, char *buf,
				    size_t size)
{
	char name[sizeof(row->path)], t[MEM_CULPRIT_WIDTH + 1];
	const char *who;

	if (!row->mem.explained)
		return "-";
	/* a cgroup as the CGROUP column names it; the other parties by their words */
	if (row->mem.top.cause == CAUSE_UNIT || row->mem.top.cause == CAUSE_ANCESTOR)
		who = party_name(v, row->mem.top.id, name, sizeof(name));
	else
		who = mem_explain_culprit_name(v, &row->mem, name, sizeof(name));
	snprintf(buf, size, "%3.0f%% %s", 100 * row->mem.top.share,
		 view_fmt_tail(who, MEM_CULPRIT_WIDTH - 5, t, sizeof(t)));
	return buf;
}

static void format_row(struct view *v, const struct top_row *row, char *line, size_t size)
{
	char b[TOP_COL_NR][32], name[sizeof(row->path)], culprit[sizeof(row->path)], t[64];
	char mem[MEM_CULPRIT_WIDTH + 8];

	snprintf(line, size, COLS_FMT, cell(TOP_COL_CPU, row->val[TOP_COL_CPU], b[1], 32),
		 cell(TOP_COL_RQ_P99, row->val[TOP_COL_RQ_P99], b[2], 32),
		 cell(TOP_COL_THROTTLED, row->val[TOP_COL_THROTTLED], b[3], 32),
		 cell(TOP_COL_CPI, row->val[TOP_COL_CPI], b[4], 32),
		 cell(TOP_COL_RECLAIM_P99, row->val[TOP_COL_RECLAIM_P99], b[5], 32),
		 cell(TOP_COL_PSI, row->val[TOP_COL_PSI], b[6], 32),
		 cell(TOP_COL_MEM_STALL, row->val[TOP_COL_MEM_STALL], b[7], 32),
		 cell(TOP_COL_IO_STALL, row->val[TOP_COL_IO_STALL], b[8], 32),
		 view_fmt_tail(party_name(v, row->culprit, culprit, sizeof(culprit)), CULPRIT_WIDTH,
			       t, sizeof(t)),
		 mem_culprit_cell(v, row, mem, sizeof(mem)), display_name(row, name, sizeof(name)));
}

static void header(char *line, size_t size)
{
	snprintf(line, size, COLS_FMT, "CPU%", "RQ-P99", "THR%", "CPI", "RECLAIM-P99", "PSI10",
		 "MEM%", "IO%", "TOP CULPRIT", "MEM CULPRIT", "CGROUP");
}

/* The probes line: what is on, through which path, and what is off and why. */
static void probes_line(struct view *v, char *line, size_t size)
{
	size_t len = 0;

	line[0] = '\0';
	for (int id = 0; id < PROBE_NR && len < size; id++) {
		struct probe_status st = probe_set_status(v->probes, id);

		len += snprintf(line + len, size - len, "%s%s: %s%s", id ? "; " : "", st.name,
				st.on ? "" : "off, ", st.detail);
	}
}

static void render_text(struct view *v, size_t n, FILE *out)
{
	char line[1024], t[32];

	probes_line(v, line, sizeof(line));
	fprintf(out, "qoslet top: %zu cgroups over %s, sorted by %s\nprobes: %s\n", n,
		view_fmt_ns((double)v->interval_ns, t, sizeof(t)), top_col_title(top.sort), line);
	header(line, sizeof(line));
	fprintf(out, "%s\n", line);
	for (size_t i = 0; i < n; i++) {
		format_row(v, &top.rows[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	fputc('\n', out);
	fflush(out);
}

static json_t *num_or_null(double val)
{
	return val == TOP_NA ? json_null() : json_real(val);
}

/* Durations are whole nanoseconds in every view's JSON (docs/json-output.md). */
static json_t *ns_or_null(double val)
{
	return val == TOP_NA ? json_null() : json_integer((json_int_t)val);
}

static json_t *row_json(struct view *v, const struct top_row *row, const struct snapshot *delta)
{
	const struct cg_sample *cg = snapshot_find(delta, row->id);
	json_t *culprit = json_null(), *psi = json_null(), *o = view_cgroup_json(v, row->id);
	json_t *mem = mem_explain_culprit_json(v, row->id, &row->mem);

	if (row->culprit) {
		culprit = view_cgroup_json(v, row->culprit);
		json_object_set_new(culprit, "wait_ns", json_integer(row->culprit_wait_ns));
	}
	if (cg && (cg->parts & CG_PSI))
		psi = json_pack("{s:f, s:f, s:f}", "cpu", cg->psi.some[PSI_CPU].avg10, "memory",
				cg->psi.some[PSI_MEMORY].avg10, "io", cg->psi.some[PSI_IO].avg10);
	json_object_update_new(
		o, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "cpu_pct",
			     num_or_null(row->val[TOP_COL_CPU]), "rq_p99_ns",
			     ns_or_null(row->val[TOP_COL_RQ_P99]), "top_culprit", culprit,
			     "throttled_pct", num_or_null(row->val[TOP_COL_THROTTLED]), "cpi",
			     num_or_null(row->val[TOP_COL_CPI]), "reclaim_p99_ns",
			     ns_or_null(row->val[TOP_COL_RECLAIM_P99]), "psi_some_avg10", psi));
	json_object_update_new(o, json_pack("{s:o, s:o, s:o}", "mem_stall_pct",
					    num_or_null(row->val[TOP_COL_MEM_STALL]),
					    "io_stall_pct", num_or_null(row->val[TOP_COL_IO_STALL]),
					    "mem_culprit", mem));
	return o;
}

static void render_json(struct view *v, size_t n, const struct snapshot *delta, FILE *out)
{
	json_t *doc = view_json_header(v, delta), *list = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, row_json(v, &top.rows[i], delta));
	json_object_set_new(doc, "cpi_hardware", json_boolean(delta->cpi_hardware));
	json_object_set_new(doc, "sort", json_string(top_col_title(top.sort)));
	json_object_set_new(doc, "cgroups", list);
	view_json_emit(doc, out);
}

static void restore_terminal(void)
{
	if (top.screen)
		endwin();
	top.screen = NULL;
}

/* Draws on the terminal from now on; false when ncurses cannot be loaded (then plain text). */
static bool screen_start(void)
{
	char err[256];

	if (top.screen || top.no_screen)
		return top.screen;
	if (curses_dl_open(err, sizeof(err))) {
		log_warn("top: %s; printing plain tables instead", err);
		top.no_screen = true;
		return false;
	}
	top.screen = initscr();
	cbreak();
	noecho();
	keypad(top.screen, TRUE);
	curs_set(0);
	atexit(restore_terminal);
	return true;
}

static void render_screen(struct view *v, size_t n)
{
	WINDOW *w = top.screen;
	char line[1024], t[32];
	int rows, width;

	getmaxyx(w, rows, width);
	werase(w);
	mvwprintw(w, 0, 0, "qoslet top - %zu cgroups over %s - sort %s%s%s", n,
		  view_fmt_ns((double)v->interval_ns, t, sizeof(t)), top_col_title(top.sort),
		  top.filter[0] ? " - filter " : "", top.filter);
	probes_line(v, line, sizeof(line));
	mvwaddnstr(w, 1, 0, line, width);
	header(line, sizeof(line));
	wattron(w, A_REVERSE);
	mvwaddnstr(w, 2, 0, line, width);
	wattroff(w, A_REVERSE);
	for (size_t i = 0; i < n && (int)i + 3 < rows - 1; i++) {
		format_row(v, &top.rows[i], line, sizeof(line));
		mvwaddnstr(w, 3 + (int)i, 0, line, width);
	}
	mvwaddnstr(w, rows - 1, 0,
		   "sort: c cpu  r rq-p99  t throttled  i cpi  m reclaim  p psi  n name   "
		   "/ filter   q quit",
		   width);
	wrefresh(w);
}

static void render(struct view *v, const struct snapshot *delta, FILE *out)
{
	size_t n = make_rows(v, delta);

	if (v->args.json)
		render_json(v, n, delta, out);
	else if (top.screen)
		render_screen(v, n);
	else
		render_text(v, n, out);
}

/* Reads a filter string on the last line; Enter applies, an empty one clears. */
static void prompt_filter(void)
{
	WINDOW *w = top.screen;

	echo();
	curs_set(1);
	wmove(w, getmaxy(w) - 1, 0);
	wclrtoeol(w);
	waddstr(w, "filter (substring of the cgroup path): ");
	wgetnstr(w, top.filter, sizeof(top.filter) - 1);
	noecho();
	curs_set(0);
}

/* Applies one key; true to quit. */
static bool handle_key(int key)
{
	if (key == 'q' || key == 'Q')
		return true;
	if (key == '/') {
		prompt_filter();
		return false;
	}
	for (int c = 0; c < TOP_COL_NR; c++)
		if (key == top_col_key(c))
			top.sort = c;
	return false;
}

static int ms_until(const struct timespec *deadline)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (deadline->tv_sec - now.tv_sec) * 1000LL + (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

/* Interactive wait: keys until the deadline; plain sleep when not on a terminal. */
static bool wait_keys(struct view *v, const struct timespec *deadline, const struct snapshot *last)
{
	struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};

	if (v->args.json || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) || !screen_start())
		return view_sleep_until(deadline);
	if (!last) {
		mvwprintw(top.screen, 0, 0, "qoslet top: collecting the first %.3g s...",
			  v->args.interval_s);
		wrefresh(top.screen);
	}
	for (;;) {
		int ms = ms_until(deadline), ret;

		if (view_stopping())
			return true;
		if (!ms)
			return false;
		ret = poll(&pfd, 1, ms);
		if (ret < 0 && errno != EINTR)
			return true;
		if (ret <= 0)
			continue;
		if (handle_key(wgetch(top.screen)))
			return true;
		if (last)
			render(v, last, stdout);
	}
}

const struct view_ops top_view = {
	.name = "top",
	.summary = "every probe's headline number per cgroup, live",
	.usage = "Usage: qoslet top [-c CGROUP]... [-j] [INTERVAL [COUNT]]\n"
		 "\n"
		 "One row per cgroup active in the interval: CPU % (of one CPU), run-queue\n"
		 "wait p99, the cgroup that delayed it most (from blame), throttled periods\n"
		 "%, CPI (hardware PMU only; '-' otherwise), reclaim stall p99, the\n"
		 "highest PSI 'some' avg10 of cpu/memory/io, MEM% and IO%: the time lost\n"
		 "to memory and to I/O waits, and MEM CULPRIT: the party that explains the\n"
		 "memory stall, with its share. These three are `qoslet memstall`'s\n"
		 "STALL%, IO% and CULPRIT: the agent's measure and explanation (see\n"
		 "`qoslet memstall --help`). '-' means not measured: the probes line says\n"
		 "which probe is off and why. Kubernetes cgroups show as\n"
		 "'<qos> pod <uid>/<container>'.\n"
		 "\n"
		 "On a terminal the table is interactive: c, r, t, i, m, p, n sort by a\n"
		 "column, / filters by path substring, q quits. Piped, it prints one table\n"
		 "per interval sorted by CPU; -j prints JSON lines.\n",
	.probes = PROBE_BIT(PROBE_SCHED) | PROBE_BIT(PROBE_CPI) | PROBE_BIT(PROBE_THROTTLE) |
		  PROBE_BIT(PROBE_MEMSTALL) | PROBE_BIT(PROBE_PSI),
	.examples = "  qoslet top\n"
		    "      the live table on a terminal: r sorts by run-queue p99, q quits\n"
		    "  qoslet top -c kubepods -j 10 6\n"
		    "      a minute of pods' numbers as six JSON lines, one every 10 s\n",
	.options = VIEW_OPT_WAIT_SOURCE | VIEW_OPT_CPI_EVENTS | VIEW_OPT_THROTTLE_SOURCE,
	/*
	 * CPI is shown only from a PMU, and CPU% needs no counter: without a
	 * PMU, software stand-ins would add two counter reads to every switch
	 * between cgroups (a quarter of a pipe round trip between two cgroups,
	 * docs/bench/ctxsw-xcg.md) for numbers top never shows.
	 */
	.cpi_events = "hardware",
	.render = render,
	.wait = wait_keys,
};

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ncurses functions top.c uses, each a call through the table
 * curses_dl_open() fills. Defining them under their own names keeps
 * <curses.h> the reference: a definition that disagrees with its
 * declaration does not compile.
 */
#include "cli/curses_dl.h"

#include <curses.h>
#include <stdarg.h>

#include "dl.h"

#define CURSES_FNS(X)                                                                              \
	X(initscr)                                                                                 \
	X(endwin)                                                                                  \
	X(cbreak)                                                                                  \
	X(echo)                                                                                    \
	X(noecho)                                                                                  \
	X(keypad)                                                                                  \
	X(curs_set)                                                                                \
	X(werase)                                                                                  \
	X(wmove)                                                                                   \
	X(vw_printw)                                                                               \
	X(waddnstr)                                                                                \
	X(wattr_on)                                                                                \
	X(wattr_off)                                                                               \
	X(wclrtoeol)                                                                               \
	X(wrefresh)                                                                                \
	X(wgetch)                                                                                  \
	X(wgetnstr)

#define FIELD(name) __typeof__(name) *name;
#define SYM(name)   {#name, (void **)&api.name},

static struct {
	CURSES_FNS(FIELD)
} api;

static const struct dl_sym syms[] = {CURSES_FNS(SYM)};
static struct dl_lib lib = {.soname = "libncursesw.so.6",
			    .package = "libncursesw6",
			    .syms = syms,
			    .n_syms = sizeof(syms) / sizeof(syms[0])};

int curses_dl_open(char *err, size_t errlen)
{
	return dl_lib_open(&lib, err, errlen);
}

WINDOW *initscr(void)
{
	return api.initscr();
}

int endwin(void)
{
	return api.endwin();
}

int cbreak(void)
{
	return api.cbreak();
}

int echo(void)
{
	return api.echo();
}

int noecho(void)
{
	return api.noecho();
}

int keypad(WINDOW *w, bool on)
{
	return api.keypad(w, on);
}

int curs_set(int visibility)
{
	return api.curs_set(visibility);
}

int werase(WINDOW *w)
{
	return api.werase(w);
}

int wmove(WINDOW *w, int y, int x)
{
	return api.wmove(w, y, x);
}

int vw_printw(WINDOW *w, const char *fmt, va_list ap)
{
	return api.vw_printw(w, fmt, ap);
}

/* The library's own mvwprintw() is variadic: a move, then the va_list entry point. */
int mvwprintw(WINDOW *w, int y, int x, const char *fmt, ...)
{
	va_list ap;
	int rc;

	if (api.wmove(w, y, x) == ERR)
		return ERR;
	va_start(ap, fmt);
	rc = api.vw_printw(w, fmt, ap);
	va_end(ap);
	return rc;
}

int waddnstr(WINDOW *w, const char *s, int n)
{
	return api.waddnstr(w, s, n);
}

int wattr_on(WINDOW *w, attr_t attrs, void *opts)
{
	return api.wattr_on(w, attrs, opts);
}

int wattr_off(WINDOW *w, attr_t attrs, void *opts)
{
	return api.wattr_off(w, attrs, opts);
}

int wclrtoeol(WINDOW *w)
{
	return api.wclrtoeol(w);
}

int wrefresh(WINDOW *w)
{
	return api.wrefresh(w);
}

int wgetch(WINDOW *w)
{
	return api.wgetch(w);
}

int wgetnstr(WINDOW *w, char *s, int n)
{
	return api.wgetnstr(w, s, n);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ncurses, opened only when `qoslet top` draws on a terminal (user/dl.h):
 * the agent, `top -j` and every piped view never map it and libtinfo,
 * which linked cost each of them about 0.3 MiB of RSS. top.c calls the
 * functions as declared in <curses.h>, on its own window (no stdscr, LINES
 * or COLS: library data, which a table of functions does not carry);
 * curses_dl.c defines them as calls through the opened library's table.
 */
#ifndef QOSLET_CLI_CURSES_DL_H
#define QOSLET_CLI_CURSES_DL_H

#include <stddef.h>

/* Before any curses call: 0, or -ELIBACC with err naming libncursesw6. */
int curses_dl_open(char *err, size_t errlen);

#endif

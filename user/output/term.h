/* term.h - text reports on a terminal: lines cut to its width and coloured,
 * as `perf report --stdio` does. Owner: user/output/term.c.
 *
 * A filter between a report writer (xtree, arcflow: unchanged) and the
 * terminal: st_term__open() returns a stream whose lines are written on to
 * out, each
 *   - cut to width columns when longer (the last column becomes "…",
 *     U+2026; a column is a UTF-8 code point, escapes excluded), unless
 *     width is 0 (--wide);
 *   - coloured when colour is set: a row's percentage red from 5%, green
 *     from 0.5% (xtree's %CUM, "12.34%"; arcflow's %CUM column), the thread
 *     headers ("=== ...") and arcflow's SELF rows bold, "#" header lines
 *     dim. Colour never changes the text: without it the bytes are the
 *     report's, cut or not.
 *   - never carrying a control byte, C1 control or bad UTF-8 to the
 *     terminal: the reports escape their names already; any such byte
 *     left is escaped as \xNN (common/textesc.h) all the same.
 * Lines are held until their '\n'; of a line past 1 MiB the first MiB is
 * treated as a line and the rest dropped (or passed on, escaped as above,
 * when not cut).
 */
#ifndef STACKTREE_TERM_H
#define STACKTREE_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct st_term_opts {
	unsigned width;		/* columns per line; 0: no cut */
	bool colour;
};

/* How stdout-like fd is to be written: width of the terminal when fd is one
 * (TIOCGWINSZ, else $COLUMNS, else 80) unless wide, 0 when fd is not a
 * terminal; colour when fd is a terminal, not no_colour and NO_COLOR is
 * unset or empty (https://no-color.org). */
void st_term__detect(int fd, bool wide, bool no_colour, struct st_term_opts *o);

/* A stream filtering into out (which stays open; fclose() the stream to
 * flush its last line). NULL on ENOMEM. */
FILE *st_term__open(FILE *out, const struct st_term_opts *o);

/* One line (without its '\n') as st_term__open() writes it. */
void st_term__line(FILE *out, const char *line, size_t len, const struct st_term_opts *o);

#endif

/* top.h - `stacktreed top`: the functions of the last few seconds,
 * refreshed, as perf top and py-spy top show them. Owner: user/output/top.c.
 *
 * A window (user/model/window.h) on the collector's trees is taken every
 * refresh: its profile (named as the reports name theirs: Python and Java
 * frames, inline frames) becomes a function table (user/model/functab.h),
 * by self share then total share, and is shown. On a terminal each view
 * replaces the last, fits its height and width (lines cut with "…",
 * shares coloured as --print does), and 'q' quits (the terminal is put in
 * non-canonical mode without echo, restored by st_top__free()). Elsewhere
 * (a pipe, a file, a test) each view is printed after the last, headed by
 * a "=== " line, at most ST_TOP_ROWS rows. After each view the collector's
 * trees are emptied (the reset hook), so memory does not grow with time.
 */
#ifndef STACKTREE_TOP_H
#define STACKTREE_TOP_H

#include <stdbool.h>
#include <linux/types.h>

struct st_collector;
struct st_namer;
struct st_top;

#define ST_TOP_ROWS 40		/* rows of a view not on a terminal */

struct st_top_opts {
	double refresh;		/* seconds between views */
	unsigned iterations;	/* views, then done; 0: until 'q' or the caller stops */
	const char *target;	/* what is profiled, for the header (copied) */
	__u32 freq;		/* Hz, for the header (0: not a timer) */
	const char *event;	/* the window's event name */
	bool faults;		/* the page-fault trees, not the timer's */
	/* the hooks: drain the kernel's trees into the collector before a
	 * view; empty the collector after it (the window's marks are
	 * dropped first). 0 or negative errno. */
	int (*drain)(void *ctx);
	void (*reset)(void *ctx);
	void *ctx;
};

/* A top over c's trees named by n; the first view opts->refresh seconds
 * after now. 0 or -ENOMEM. */
int st_top__new(struct st_collector *c, const struct st_namer *n, const struct st_top_opts *o,
		double now, struct st_top **out);
/* From the sampling loop, each pass: a 'q' typed, or a view when one is
 * due. 0: go on; 1: done ('q', or the last of opts->iterations); negative
 * errno. */
int st_top__work(struct st_top *t, double now);
void st_top__free(struct st_top *t);

#endif

/* functab.h - a profile's functions with their self and total samples,
 * all threads together: the table perf top, perf report --sort sym and
 * pprof -top print. Owner: user/model/functab.c.
 *
 * A function is a frame's name and module (a frame without a name: its
 * address and offset), its runtime, and whether it is a pseudo frame or a
 * data leaf; its call sites, leaf and inline frames count as one
 * (st_tree__by_function()). self: samples where it is the leaf; total:
 * samples with it on the stack, once per stack however deep it recurses.
 * Time: linear in the nodes times the depth (recursion check, bounded by
 * ST_TREE_MAX_DEPTH); memory: a row per node until they are merged.
 */
#ifndef STACKTREE_FUNCTAB_H
#define STACKTREE_FUNCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "common/tree.h"

struct st_profile;

struct st_functab_row {
	struct st_frame f;	/* its name (strings of the profile) */
	__u64 self, total;
};

struct st_functab {
	struct st_functab_row *rows;	/* by self, then total, descending; then name */
	size_t n, cap;
	__u64 samples;			/* of the threads counted */
};

/* The functions of the threads of p (finalized) whose tid is tid, or of
 * all when tid is 0. NULL with errno ENOMEM. */
struct st_functab *st_functab__new(const struct st_profile *p, __u32 tid);
void st_functab__free(struct st_functab *t);
/* Order the rows by total, then self, descending (perf report --children). */
void st_functab__by_total(struct st_functab *t);

/* Whether two frames are one function, and an order in which the frames
 * of one function are adjacent (0 for one function). */
bool st_functab__same(const struct st_frame *x, const struct st_frame *y);
int st_functab__cmp(const struct st_frame *x, const struct st_frame *y);

#endif

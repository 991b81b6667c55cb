/* diff.h - two profiles compared (`stacktree diff A B`): per function and
 * per path, as perf diff and pprof -diff_base compare them.
 *
 * Owner: user/model/diff.c. Each profile's threads are folded by function
 * (st_tree__by_function()) and merged into one tree (threads, processes and
 * addresses differ between two runs; functions and their callers do not).
 * The union of the two trees is one tree, sized by B (the new profile, as
 * FlameGraph's difffolded draws the second), with A's (the baseline's)
 * counts of every node beside it; paths only A has are in the tree with B
 * counts 0. Shares are of each profile's own samples, so that runs of
 * different lengths or rates compare: a delta is B's share less A's, in
 * percentage points. Memory: the two merged trees and a map entry per
 * node; time: linear in the nodes, times the depth for the recursion check
 * of a function's total (depth bounded by ST_TREE_MAX_DEPTH).
 */
#ifndef STACKTREE_DIFF_H
#define STACKTREE_DIFF_H

#include <stddef.h>
#include <linux/types.h>

struct st_node;
struct st_profile;
struct st_diff;

enum { ST_DIFF_A = 0, ST_DIFF_B = 1 };

/* A node's counts in each profile: [ST_DIFF_A], [ST_DIFF_B]. */
struct st_diff_counts {
	__u64 base[2], cum[2];
};

/* One function (name and module; a frame without a name by its address)
 * over the whole profile. self: samples where it is the leaf. total:
 * samples where it is on the stack, counted once per stack (recursion). */
struct st_diff_fn {
	const struct st_node *node;	/* one of its nodes, for its name */
	__u64 self[2], total[2];
	double dself, dtotal;		/* B's share less A's, in points of % */
};

/* Compare finalized profiles a (baseline) and b. NULL with errno ENOMEM. */
struct st_diff *st_diff__new(const struct st_profile *a, const struct st_profile *b);
void st_diff__free(struct st_diff *d);

/* Samples of each profile. */
__u64 st_diff__samples(const struct st_diff *d, int side);
/* count of side as a percentage of that side's samples (0 when none). */
double st_diff__pct(const struct st_diff *d, int side, __u64 count);

/* The union tree as a profile of one thread (pid 0, comm "diff"), counts
 * of B, finalized (children by B's CUM), strings of both. */
const struct st_profile *st_diff__profile(const struct st_diff *d);
/* Both profiles' counts of a node of that tree (zeroes for a node of
 * another tree). */
void st_diff__node(const struct st_diff *d, const struct st_node *n, struct st_diff_counts *c);
/* CUM's delta of a node of the union tree, in points of %. */
double st_diff__dcum(const struct st_diff *d, const struct st_node *n);

/* The functions, by |dself| descending, then |dtotal|, then name. */
const struct st_diff_fn *st_diff__functions(const struct st_diff *d, size_t *n);

#endif

/* flamegraph.h - flamegraph.svg: a self-contained interactive flame graph
 * (inline CSS and JavaScript, no network). Owner: user/output/flamegraph.c.
 *
 * Layout: icicle, the root on top and callees below their callers; children
 * in tree order (CUM descending). Boxes are functions (st_tree__by_function():
 * a function's call sites, leaf and inline frames under one caller are one
 * box, its tooltip listing them with their CUM), or call sites as in xtree
 * with opts->offsets. Levels: "all" (only when the file holds
 * several processes), one box per process, one per thread when the process
 * has several, then the frames. Every box is exactly CUM x ((width - 20) px / total)
 * wide (the svg's data-total and data-width attributes); boxes under 0.1 px
 * are left out (their samples stay in the parent's width). Colour: a stable
 * hash of the module's file name, the function varying the lightness; data
 * leaves of fault profiles (ST_FRAME_DATA) by class: module data blue, stack
 * green, heap red. Hover: the frame's name, module, the call sites merged
 * into it, BASE, CUM, % (tooltip and status line); click zooms, the
 * search box highlights the frames matching a regexp and sums their samples.
 */
#ifndef STACKTREE_FLAMEGRAPH_H
#define STACKTREE_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct st_node;
struct st_profile;

#define ST_FLAMEGRAPH_WIDTH 1200	/* px, the default */
#define ST_FLAMEGRAPH_MIN_WIDTH 400	/* room for the title and search box */
#define ST_FLAMEGRAPH_MAX_WIDTH 100000

struct st_flamegraph_opts {
	unsigned width;		/* of the document in px (--svg-width); 0: the default;
				 * clamped to [MIN, MAX] */
	bool offsets;		/* a box per call site (--folded-offsets) */
	/* A differential graph (stacktree diff, user/output/diff.h), with
	 * offsets set so that boxes are the tree's nodes: each box (not the
	 * synthetic ones) coloured by colour(), its tooltip ending with the
	 * line describe() writes into buf; title replaces "Flame graph" and
	 * legend the runtimes' legend. NULL: the usual graph. */
	unsigned (*colour)(const struct st_node *n, void *ctx);	/* 0xRRGGBB */
	void (*describe)(const struct st_node *n, char *buf, size_t len, void *ctx);
	void *ctx;
	const char *title, *legend;
};

/* Write the flame graph of process pid, or of every process when pid < 0;
 * o may be NULL (defaults). 0, -ENOMEM or -EIO. */
int st_flamegraph__write(const struct st_profile *p, FILE *out, long pid,
			 const struct st_flamegraph_opts *o);

#endif

/* flamegraph.h - flamegraph.svg: a self-contained interactive flame graph
 * (inline CSS and JavaScript, no network). Owner: user/output/flamegraph.c.
 *
 * Layout: icicle, the root on top and callees below their callers; children
 * in tree order (CUM descending). Levels: "all" (only when the file holds
 * several processes), one box per process, one per thread when the process
 * has several, then the frames. Every box is exactly CUM x (1180 px / total)
 * wide (the svg's data-total and data-width attributes); boxes under 0.1 px
 * are left out (their samples stay in the parent's width). Colour: a stable
 * hash of the module's file name, the function varying the lightness; data
 * leaves of fault profiles (ST_FRAME_DATA) by class: module data blue, stack
 * green, heap red. Hover: function+
 * offset, module, BASE, CUM, % (tooltip and status line); click zooms, the
 * search box highlights the frames matching a regexp and sums their samples.
 */
#ifndef STACKTREE_FLAMEGRAPH_H
#define STACKTREE_FLAMEGRAPH_H

#include <stdio.h>

struct st_profile;

/* Write the flame graph of process pid, or of every process when pid < 0.
 * 0, -ENOMEM or -EIO. */
int st_flamegraph__write(const struct st_profile *p, FILE *out, long pid);

#endif

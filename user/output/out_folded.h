/* out_folded.h - stacks.folded: one line per distinct stack,
 * "comm;frame;...;frame COUNT", root first, for FlameGraph, speedscope and
 * `stacktree report --folded`. Owner: user/output/out_folded.c.
 *
 * Frames are functions (st_tree__by_function(): a function's call sites,
 * leaf and inline frames on one path are one frame, named "function"), as
 * speedscope, flamegraph.pl and inferno expect; with offsets (stacktreed
 * --folded-offsets) frames are named as in xtree.txt (st_frame__name:
 * "function+0xoff" for a call site, "function" for the leaf). Threads with the same comm are merged,
 * so every stack appears once; COUNT is the BASE of the stack's last frame.
 * ';' in a name becomes ':' and control characters become '?' (the format has
 * no escapes). A profile read from folded stacks (event "folded") gets no comm
 * frame, so folded -> report -> folded gives the same stacks.
 */
#ifndef STACKTREE_OUT_FOLDED_H
#define STACKTREE_OUT_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

struct st_profile;

/* Write a finalized profile, by function or (offsets) by call site.
 * 0, -ENOMEM or -EIO. */
int st_folded__write(const struct st_profile *p, FILE *out, bool offsets);

#endif

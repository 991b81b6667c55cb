/* out_folded.h - stacks.folded: one line per distinct stack,
 * "comm;frame;...;frame COUNT", root first, for FlameGraph, speedscope and
 * `stacktree report --folded`. Owner: user/output/out_folded.c.
 *
 * Frames are named as in xtree.txt (st_frame__name: "function+0xoff" for a
 * call site, "function" for the leaf). Threads with the same comm are merged,
 * so every stack appears once; COUNT is the BASE of the stack's last frame.
 * ';' in a name becomes ':' and control characters become '?' (the format has
 * no escapes). A profile read from folded stacks (event "folded") gets no comm
 * frame, so folded -> report -> folded gives the same stacks.
 */
#ifndef STACKTREE_OUT_FOLDED_H
#define STACKTREE_OUT_FOLDED_H

#include <stdio.h>

struct st_profile;

/* Write a finalized profile. 0, -ENOMEM or -EIO. */
int st_folded__write(const struct st_profile *p, FILE *out);

#endif

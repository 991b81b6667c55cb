/* roots.h - where a complete stack ends, and the rule for the others.
 *
 * Owner: user/model/roots.c. A stack is complete when its outermost frame
 * is where a process or thread begins: the process's entry (_start, main's
 * callers in the C library), a thread's start (start_thread, clone,
 * clone3), or a Go runtime entry or stack switch (a goroutine's stack
 * begins at runtime.goexit; the system stack at runtime.mstart or a
 * switch: systemstack, mcall, morestack, asmcgocall). Every other stack stopped short,
 * whatever stopped it (frame pointers that ran into code without them, a
 * module without CFI in auto mode, a return address outside every
 * mapping): it goes under [truncated] and is counted, so that none reads
 * as complete (issue 20). Stacks already under [truncated], pseudo frames
 * ([kernel]) and stacks of kernel frames alone are left as they are.
 */
#ifndef STACKTREE_ROOTS_H
#define STACKTREE_ROOTS_H

#include <stdbool.h>
#include <linux/types.h>

struct st_profile;

/* Whether a function (its symbol name) begins a process's or thread's
 * stack. NULL: no. */
bool st_roots__is_entry(const char *function);

/* Samples moved under [truncated] by st_roots__mark_short(). */
struct st_short_counts {
	__u64 named;	/* the outermost frame has a name (not an entry) */
	__u64 unnamed;	/* the outermost frame has no symbol */
};

/* Move every stack of p's threads whose outermost frame is not an entry
 * under the thread's [truncated] node (created when needed), after
 * st_build__finish() (its cum are read) and finalizing again only the
 * trees it changed; add the counts to *out. 0 or -ENOMEM. */
int st_roots__mark_short(struct st_profile *p, struct st_short_counts *out);

#endif

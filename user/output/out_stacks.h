/* out_stacks.h - `stacktreed dump`'s output: each thread's one stack,
 * leaf first, as py-spy dump and gdb's bt print them. Owner:
 * user/output/out_stacks.c.
 *
 * "Thread TID (comm), STATE[, in WCHAN]:" then a line per frame,
 * innermost first: the function (or module+0xOFF), "(inlined)" for an
 * inline frame, the module's file name and the source line when known; a
 * walk cut short ends with the reason's line. A thread without a stack
 * says why instead.
 */
#ifndef STACKTREE_OUT_STACKS_H
#define STACKTREE_OUT_STACKS_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct st_profile;

/* What the caller knows of a thread besides its stack. */
struct st_stack_note {
	__u32 tid;
	char state;		/* /proc's state letter, '?' when unknown */
	const char *wchan;	/* kernel function it waits in, or "" */
	const char *why;	/* no stack: why not; NULL: it has one in the profile */
	const char *cut;	/* the walk stopped short: why; NULL: complete */
};

/* The stacks of p's threads (one sample each) in the notes' order; a
 * thread of p without a note is not printed. 0 or -EIO. */
int st_stacks__write(const struct st_profile *p, const struct st_stack_note *notes, size_t n,
		     FILE *out);

#endif

/* unwind_walk.h - the daemon's copy of the BPF stack walk (bpf/unwind.h),
 * for samples deferred until their tables were in (user/collect/deferred.c): the
 * same rows, the same rules, frame by frame, reading the stack from the copy
 * BPF took at the sample (struct st_deferred). Pure: no syscall, no
 * recursion. Owner: user/collect/unwind_walk.c. */
#ifndef STACKTREE_UNWIND_WALK_H
#define STACKTREE_UNWIND_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

/* The rows of shard slot, and how many it has (NULL: no such shard). */
typedef const struct st_unwind_row *(*st_uwalk_rows_fn)(void *ctx, __u32 shard, size_t *n);

struct st_uwalk_in {
	__u64 ip, sp, bp, r10, rbx;	/* the interrupted user registers */
	const __u8 *stack;		/* the stack from sp up, */
	size_t stack_len;		/* ... this many bytes of it */
	const struct st_unwind_proc *proc;	/* the process's mapping table */
	st_uwalk_rows_fn rows;
	void *ctx;
	bool fallback;			/* auto: frame pointers where there is no CFI */
};

/* Why the walk ended: the BPF walk's reasons (enum st_unw_stop in
 * bpf/unwind.h, same values). */
enum st_uwalk_stop {
	ST_UWALK_END,		/* the outermost frame: complete */
	ST_UWALK_DEPTH,		/* max frames */
	ST_UWALK_NO_TABLE,	/* no CFI (dwarf), or a failed frame-pointer step (auto) */
	ST_UWALK_READ_FAULT,	/* outside the copied stack */
	ST_UWALK_UNSUPPORTED,	/* a CFI form the walk does not evaluate */
	ST_UWALK_BAD_FRAME,	/* the stack pointer did not move up */
	ST_UWALK_NO_PROC,	/* (st_unwinder__walk) no table for the process at all */
};

/* Walk: up to max addresses, leaf first (the leaf ip, then return
 * addresses) into out. Returns the count; *stop says why it ended,
 * *fp_frames how many frames were walked by frame pointers. */
size_t st_uwalk(const struct st_uwalk_in *in, __u64 *out, size_t max, enum st_uwalk_stop *stop,
		size_t *fp_frames);

#endif

/* unwind_native.h - the stack walk of bpf/unwind_step.h built natively:
 * the daemon walks a deferred sample (bpf/stacktree.h struct st_deferred)
 * with the same rows and the same rules as BPF, reading the stack from the
 * copy BPF took at the sample and the rows from the daemon's copy of the
 * shards (user/collect/unwind/unwinder.c). The step is bpf/unwind_step.h's; only
 * the reads are here. Pure: no syscall, no recursion, no allocation (a
 * JVM's methods, off the stack, are read through the caller's reader:
 * bpf/hotspot_step.h). */
#ifndef STACKTREE_UNWIND_NATIVE_H
#define STACKTREE_UNWIND_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

#include "bpf/dual.h"
#include "stacktree.h"

/* The rows of shard slot (rows and pc index buckets), and how many it
 * has; NULL: no such shard. */
typedef const struct st_unwind_row *(*st_unw_rows_fn)(void *ctx, __u32 shard, size_t *n);

/* Memory off the copied stack (a JVM's methods): 0, or negative. */
typedef long (*st_unw_mem_fn)(void *arg, void *dst, __u32 n, __u64 addr);

/* One shard's rows, as st_unw_row() reads them. */
struct st_unw_rowset {
	const struct st_unwind_row *rows;
	size_t n;
};

struct st_unw_env {
	const __u8 *stack;	/* the stack copied from stack_base up, */
	size_t stack_len;	/* ... this many bytes of it */
	__u64 stack_base;
	st_unw_rows_fn rows;
	void *ctx;
	struct st_unw_rowset set;	/* the shard st_unw_rows() found last */
	const struct st_unwind_proc *chunks;	/* the table's chunks, in order */
	size_t nchunks;
	st_unw_mem_fn mem;	/* NULL: nothing off the stack is readable */
	void *mem_arg;
	__u32 mem_failed;	/* reads through mem that failed */
	struct st_unw_rbx rbx;	/* the walk's rbx (bpf/unwind_step.h) */
};

struct st_unw_cache_ent;	/* no row cache natively */

static inline struct st_unw_rbx *st_unw_rbx(struct st_unw_env *e)
{
	return &e->rbx;
}

static inline long st_unw_read(struct st_unw_env *e, void *dst, __u32 size, __u64 addr)
{
	__u64 off = addr - e->stack_base;

	if (addr < e->stack_base || off > e->stack_len || size > e->stack_len - off)
		return -1;
	memcpy(dst, e->stack + off, size);
	return 0;
}

/* bpf/hotspot_step.h's reads: the copy, else the process's memory (a
 * JVM's methods, off the stack). */
static inline long st_unw_read_any(struct st_unw_env *e, void *dst, __u32 size, __u64 addr)
{
	if (!st_unw_read(e, dst, size, addr))
		return 0;
	if (e->mem && !e->mem(e->mem_arg, dst, size, addr))
		return 0;
	e->mem_failed++;
	return -1;
}

/* bpf/hotspot_blob.h's: the code cache (the process's memory) */
static inline long st_unw_read_mem(struct st_unw_env *e, void *dst, __u32 size, __u64 addr)
{
	return st_unw_read_any(e, dst, size, addr);
}

#define ST_HS_ENV(io) ((struct st_unw_env *)(uintptr_t)(io)->env)
#define ST_HS_PROC(io) ((const struct st_java_proc *)(uintptr_t)(io)->proc)
#define ST_HS_READ(io, dst, n, a)                                                                \
	st_unw_read_any(ST_HS_ENV(io), (dst), (n), (a))
#define ST_HS_READ8(e, a, out) st_unw_read_any((e), (out), 8, (a))
#define ST_HS_PART(i) ((void)0)	/* a bench build's BPF counts only */
/* no blob cache natively (and no memo: never called) */
#define st_hs_cache_get(m, pc, k) ((void)(m), (void)(pc), (void)(k), false)
#define st_hs_cache_put(m, pc, k) ((void)(m), (void)(pc), (void)(k))
#define ST_HS_MEMO(io) ((struct st_hs_memo *)0)	/* each frame resolves its blob */
#define ST_HS_REPORT(io, e) ((void)(io), (void)(e), true)	/* the daemon's own reads */
#define ST_HS_GLOBAL static inline
#define ST_HS_COUNT(io, what)                                                                     \
	do {                                                                                      \
		if ((io)->jc)                                                                     \
			((struct st_java_counts *)(uintptr_t)(io)->jc)->n[(what)]++;              \
	} while (0)

static inline long st_unw_read8(struct st_unw_env *e, __u64 addr, __u64 *out)
{
	return st_unw_read(e, out, sizeof(*out), addr);
}

static inline const void *st_unw_rows(struct st_unw_env *e, const __u32 *shard)
{
	e->set.n = 0;
	e->set.rows = e->rows(e->ctx, *shard, &e->set.n);
	return e->set.rows ? &e->set : NULL;
}

static inline const struct st_unwind_proc *st_unw_chunk(struct st_unw_env *e, __u32 gen, __u32 k)
{
	(void)gen;	/* the caller gives the chunks of the table it gives */
	return k < e->nchunks ? &e->chunks[k] : NULL;
}

static inline const struct st_unwind_row *st_unw_row(const void *h, __u32 idx)
{
	const struct st_unw_rowset *set = h;

	return idx < set->n ? &set->rows[idx] : NULL;
}

static inline struct st_unw_cache_ent *st_unw_cache_slot(struct st_unw_env *e, __u64 pc)
{
	(void)e;
	(void)pc;
	return NULL;
}

static inline bool st_unw_cache_get(struct st_unw_env *e, struct st_unw_cache_ent *ce, __u64 pc,
				    struct st_unwind_row *row)
{
	(void)e;
	(void)ce;
	(void)pc;
	(void)row;
	return false;
}

static inline void st_unw_cache_put(struct st_unw_env *e, struct st_unw_cache_ent *ce, __u64 pc,
				    const struct st_unwind_row *row)
{
	(void)e;
	(void)ce;
	(void)pc;
	(void)row;
}

#include "bpf/unwind_step.h"

/* A walk's inputs: the interrupted registers, the copied stack, the
 * process's table (NULL: none, every frame is "no CFI") and its chunks,
 * its rows. */
struct st_unw_native_in {
	__u64 ip, sp, bp, r10, rbx, r13;
	const __u8 *stack;	/* the stack from sp up, */
	size_t stack_len;	/* ... this many bytes of it */
	const struct st_unwind_proc *proc;
	const struct st_unwind_proc *chunks;	/* chunk k at chunks[k] */
	size_t nchunks;
	st_unw_rows_fn rows;
	void *ctx;
	bool fallback;		/* auto: frame pointers where there is no CFI */
	const struct st_java_proc *java;	/* the process's JVM, or NULL */
	struct st_java_counts *jc;		/* ... its rule's counts, or NULL */
	st_unw_mem_fn mem;			/* ... its methods' reader */
	void *mem_arg;
};

/* What a walk found besides its frames. */
struct st_unw_native_out {
	__u32 stop;		/* enum st_unw_stop */
	__u32 fp_frames;	/* frames walked by frame pointers */
	bool miss;		/* an address no mapping covers */
	bool over_budget;	/* a frame in a module left out by --unwind-memory */
	bool pending;		/* a frame in a module whose rows are not compiled */
	__u32 jframes;		/* Java frames written */
	__u32 mem_failed;	/* reads of its methods that failed */
};

/* Walk: up to max (<= ST_MAX_USER) addresses, leaf first, into out; the
 * count. */
static inline size_t st_unw_walk_native(const struct st_unw_native_in *in, __u64 *out, __u32 max,
					struct st_unw_native_out *res)
{
	static const struct st_unwind_proc empty;
	struct st_unw_state s = {
		.out = out, .max = max, .proc = in->proc ? in->proc : &empty,
		.env = { .stack = in->stack, .stack_len = in->stack_len, .stack_base = in->sp,
			 .rows = in->rows, .ctx = in->ctx, .chunks = in->chunks,
			 .nchunks = in->nchunks, .mem = in->mem, .mem_arg = in->mem_arg },
		.jc = in->java ? in->jc : NULL,
	};

	if (in->java) {
		memcpy(&s.hs.java, in->java, sizeof(s.hs.java));	/* its head */
		s.hs.proc = (__u64)(uintptr_t)in->java;
		s.image = in->java->image;	/* the caller's choice */
	}
	st_unw_start(&s, in->ip, in->sp, in->bp, in->r10, in->rbx, in->r13, in->fallback);
	s.hs.env = (__u64)(uintptr_t)&s.env;
	s.hs.jc = (__u64)(uintptr_t)s.jc;
	st_unw_run(&s);
	st_hs_walk_end(&s, in->ip);
	res->jframes = s.hs.jframes;
	res->mem_failed = s.env.mem_failed;
	res->stop = s.stop;
	res->fp_frames = s.fp_frames;
	res->miss = s.miss;
	res->over_budget = s.over_budget;
	res->pending = s.pending;
	if (s.proc->flags & ST_UNWIND_PROC_TRUNCATED)
		st_unw_left_out(&res->stop, &res->miss);
	return s.n;
}

#endif

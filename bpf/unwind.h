/* SPDX-License-Identifier: GPL-2.0 */
/*
 * unwind.h - DWARF (CFI) unwinding of a user stack in BPF, from the rows
 * user space compiled (user/collect/unwind/unwind_tables.c, user/collect/unwind/unwinder.c). Included by
 * sample.bpf.c; st_unwind_user() can be called from any program that has
 * the task's user registers (perf_event, tp_btf). x86-64 only.
 *
 * The walk's rules are bpf/unwind_step.h's (shared with the daemon's late
 * walk and the unit tests); this file owns the maps they read, the BPF
 * side of their reads (a stack window, a per-CPU row cache, map lookups,
 * bpf_loop) and the walk's entry points. See kernel-notes/unwinding.md.
 */
#ifndef STACKTREE_UNWIND_BPF_H
#define STACKTREE_UNWIND_BPF_H

#include "stacktree.h"
#include "java.bpf.h"

#define ST_PF_KTHREAD 0x00200000	/* task_struct.flags: a kernel thread */

/* Whether task (a BTF pointer: plain loads) has a user stack: not a kernel
 * thread, and an mm (an exiting task's is gone). Both walkers' check. */
static __always_inline bool st_task_has_user_stack(struct task_struct *task)
{
	return !(task->flags & ST_PF_KTHREAD) && task->mm;
}
#define ST_UNW_REQUEST_NS (100 * 1000 * 1000ull) /* table requests per process: 10/s */

struct st_unwind_result {
	__u32 stop;		/* enum st_unw_stop */
	__u32 fp_frames;	/* frames walked by frame pointers (auto) */
	bool no_proc;		/* no tables for the process (yet) */
	bool request;		/* ask user space for tables (rate limited) */
	bool over_budget;	/* a frame in a module left out by --unwind-memory */
	bool pending;		/* a frame in a module whose rows are not compiled yet */
	bool miss;		/* an address no mapping of the table covers */
	bool java;		/* the process has a JVM (java_procs) */
	__u32 jframes;		/* Java frames written (bpf/hotspot_step.h) */
};

/* Shards of rows, created by the daemon as needed (user/collect/unwind/unwind_store.c):
 * a module's rows, sorted by pc, are an extent of one shard. The template:
 * BPF_F_INNER_MAP lets the shards' sizes differ. */
struct st_unwind_rows_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct st_unwind_row);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
};

/* shard slot (st_unwind_map.shard) -> the shard's rows */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__type(key, __u32);
	__uint(max_entries, ST_UNWIND_MAX_SHARDS);
	__array(values, struct st_unwind_rows_map);
} unwind_shards SEC(".maps");

/* tgid -> the process's executable mappings; chunks of the tables with
 * more (ST_UNWIND_CHUNK_KEY) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct st_unwind_proc);
	__uint(max_entries, 1);	/* resized before load */
	__uint(map_flags, BPF_F_NO_PREALLOC);
} unwind_procs SEC(".maps");

/* Rows found lately, per CPU, by (tgid, table version, pc): a sample's
 * frames are mostly those of the previous samples, and a hit saves both
 * binary searches. (8192 entries did not raise cc1's hit rate, 86%: its
 * misses are first sights.) */
#define ST_UNW_CACHE_SIZE 1024	/* entries (power of two): 24 KiB per CPU */

struct st_unw_cache_ent {
	__u64 pc;		/* the looked-up address (ip, or ip - 1) */
	__u32 tgid, gen;
	struct st_unwind_row row;
};

struct st_unw_cache {
	struct st_unw_cache_ent ents[ST_UNW_CACHE_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_unw_cache);
	__uint(max_entries, 1);
} unwind_cache SEC(".maps");

/* The user stack is read a page at a time into a window, per CPU and per
 * kind of program (0: timer, 1: page fault, which a timer may interrupt):
 * a frame's reads are then loads from the window, not a helper call each
 * (a bpf_probe_read_user() costs about as much as a whole frame's other
 * work). The window is emptied at the start of every walk. Not below the
 * walk's floor, the interrupted sp less the red zone (a leaf may keep a
 * saved register there; every other read of a walk is at or above sp: a
 * frame's slots lie above its sp; one below the floor reads from its own
 * line): the dead stack under the leaf, on average half of the first
 * page, is not copied (a cold page's copy costs its cache lines: the
 * first page was a whole 4 KiB read). */
#define ST_UNW_WIN 4096
#define ST_UNW_LINE 64		/* the window starts on a cache line */
#define ST_UNW_RED_ZONE 128	/* x86-64 ABI: below sp, a leaf's own */

struct st_unw_window {
	struct st_unw_rbx rbx;	/* the walk's rbx (bpf/unwind_step.h) */
	__u64 base;		/* user address of buf[0]; 0: empty */
	__u64 floor;		/* the walk's sp less the red zone: nothing below is read */
	__u32 len;		/* bytes in buf from base (to the page's end) */
	__u32 pad;
	union {			/* + 16: masked offsets stay in bounds */
		__u8 buf[ST_UNW_WIN + 16];
		__u64 words[(ST_UNW_WIN + 16) / 8];	/* an aligned read's (st_unw_read8()) */
	};
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_unw_window);
	__uint(max_entries, 2);
} unwind_window SEC(".maps");

/* tgid -> time of the last request for tables (rate limit) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 4096);
} unwind_requests SEC(".maps");

/* What the reads of bpf/unwind_step.h need in BPF. */
struct st_unw_env {
	struct st_unw_cache *cache;
	struct st_unw_window *win;	/* NULL: read with a helper call each time */
	__u32 tgid, gen;	/* cache key: the process and its table version */
};

static __always_inline long st_unw_read(struct st_unw_env *e, void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr);
}

/* bpf/hotspot_blob.h's: code cache memory */
static __always_inline long st_unw_read_mem(struct st_unw_env *e, void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr);
}

/* bpf/hotspot_step.h's: the task's memory; its rule a global function
 * (the blob step's env in it: the walk's stack window, helper reads
 * elsewhere; the walk's blob memo) */
#define ST_HS_READ(io, dst, n, a) bpf_probe_read_user((dst), (n), (const void *)(a))
#define ST_HS_GLOBAL __noinline
#define ST_HS_COUNT(io, what) st_java_count(what)
#define ST_HS_ENV(io)                                                                              \
	(&(struct st_unw_env){ .win = bpf_map_lookup_elem(&unwind_window, &(io)->slot) })
#define ST_HS_READ8(e, a, out) st_unw_read8((e), (a), (out))
#define ST_HS_MEMO(io) ((struct st_hs_memo *)bpf_map_lookup_elem(&java_blob_memo, &(io)->slot))
#define ST_HS_REPORT(io, e) st_java_report((io)->tgid, (io)->image, (e))
#define ST_HS_CODE_MEMO(io, m) st_java_code_memo((io)->slot, (m))
#define ST_HS_PART(i) ST_JAVA_PART((i), 1)
#ifdef ST_JAVA_PARTS	/* a bench build: st_hs_frame()'s time (bpf/java.bpf.h) */
#define ST_HS_PARTS_ON 1
#define ST_HS_PARTS_NOW() bpf_ktime_get_ns()
#define ST_HS_PARTS(io, dt)                                                                        \
	do {                                                                                       \
		bool in_ = (io)->stat == ST_JAVA_STAT_FRAMES;                                      \
		ST_JAVA_PART(ST_JAVA_PART_HS_CALLS, 1);                                            \
		ST_JAVA_PART(ST_JAVA_PART_HS_NS, (dt));                                            \
		ST_JAVA_PART(ST_JAVA_PART_INTERP, in_);                                            \
		ST_JAVA_PART(ST_JAVA_PART_INTERP_NS, in_ ? (dt) : 0);                              \
	} while (0)
#endif
#define ST_HS_PROC(io)                                                                             \
	((const struct st_java_proc *)bpf_map_lookup_elem(&java_procs, &(io)->tgid))

/* The walk's rbx: in the window (checked when the walk starts). */
static __always_inline struct st_unw_rbx *st_unw_rbx(struct st_unw_env *e)
{
	return &e->win->rbx;
}

/* bpf/hotspot_blob.h's blob cache (java_blob_cache): the entry of the
 * memo's process for pc into *k, or false */
static __always_inline bool st_hs_cache_get(struct st_hs_memo *m, __u64 pc, struct st_hs_blob *k)
{
	const struct st_hs_blob *v;

	m->key.pc = pc;
	v = bpf_map_lookup_elem(&java_blob_cache, &m->key);
	if (!v)
		return false;
	*k = *v;
	return true;
}

static __always_inline void st_hs_cache_put(struct st_hs_memo *m, __u64 pc,
					    const struct st_hs_blob *k)
{
	m->key.pc = pc;
	bpf_map_update_elem(&java_blob_cache, &m->key, k, BPF_ANY);
}

/* n bytes of the stack at addr into the window's buffer (timed in a
 * bench build: bpf/java.bpf.h's ST_JAVA_PART_WIN_*) */
static __always_inline long st_unw_fill(struct st_unw_window *w, __u64 addr, __u32 n)
{
	__u64 t0 = ST_JAVA_NOW();
	long r = bpf_probe_read_user(w->buf, n, (const void *)addr);

	ST_JAVA_PART(ST_JAVA_PART_WIN_FILL_NS, ST_JAVA_NOW() - t0);
	ST_JAVA_PART(ST_JAVA_PART_WIN_FILL, 1);
	ST_JAVA_PART(ST_JAVA_PART_WIN_BYTES, n);
	return r;
}

/* The window refilled for addr: from the floor's line (or addr's, below
 * it) to the end of addr's page, [page + skip, page + ST_UNW_WIN), 8
 * bytes or more. 0; 1: addr's 8 bytes cross pages (read them alone); -1:
 * unreadable. A global function: verified once, not at each of the
 * walk's reads (inlined there, its branches took the dwarf programs from
 * 44% to 67% of the verifier's limit). */
__noinline int st_unw_refill(struct st_unw_window *w, __u64 addr)
{
	__u64 page = addr & ~(__u64)(ST_UNW_WIN - 1), lo, skip;

	if (!w)
		return -1;
	if (addr - page > ST_UNW_WIN - 8)	/* across pages */
		return 1;
	lo = (addr < w->floor ? addr : w->floor) & ~(__u64)(ST_UNW_LINE - 1);
	skip = lo > page ? (lo - page) & (ST_UNW_WIN - 1) : 0;
	if (st_unw_fill(w, page + skip, ST_UNW_WIN - skip)) {
		w->base = 0;
		return -1;
	}
	w->base = page + skip;
	w->len = ST_UNW_WIN - skip;
	return 0;
}

/* 8 bytes at addr, through the window: 0, or -1 when unreadable. One
 * 8-byte load from the window's words: every read of a walk is of an
 * aligned word (return addresses, saved registers, an interpreted
 * frame's slots) and the window starts on a line. Through its bytes,
 * `*(__u64 *)&w->buf[off]`, clang made eight byte loads and fourteen
 * shifts and ors (the byte array's alignment): 23 instructions a read, an
 * interpreted Java frame's four reads some 90 (kernel-notes/README.md,
 * "The window's reads"). An unaligned address (a corrupt stack's: no
 * compiler's frame keeps a slot there) is unreadable, as in the daemon's
 * walk (user/collect/unwind/unwind_native.h): the walk stops there. A
 * helper read for it instead cost the dwarf programs 23,000 verified
 * instructions (a path more at each of the walk's reads). */
static __always_inline long st_unw_read8(struct st_unw_env *e, __u64 addr, __u64 *out)
{
	struct st_unw_window *w = e->win;
	__u64 off;
	int r;

	if (addr & 7)
		return -1;
	if (!w)
		return st_unw_read(e, out, sizeof(*out), addr);
	off = addr - w->base;
	if (!w->base || off > (__u64)w->len - 8) {
		r = st_unw_refill(w, addr);
		if (r > 0)
			return st_unw_read(e, out, sizeof(*out), addr);
		if (r < 0)
			return -1;
		off = addr - w->base;
	}
	*out = w->words[(off >> 3) & (ST_UNW_WIN / 8 - 1)];
	return 0;
}

/* A shard's rows map (the handle st_unw_row() reads), or NULL. */
static __always_inline const void *st_unw_rows(struct st_unw_env *e, const __u32 *shard)
{
	return bpf_map_lookup_elem(&unwind_shards, shard);
}

static __always_inline const struct st_unwind_proc *st_unw_chunk(struct st_unw_env *e, __u32 gen,
							      __u32 k)
{
	__u32 key = ST_UNWIND_CHUNK_KEY(gen, k);

	return bpf_map_lookup_elem(&unwind_procs, &key);
}

static __always_inline const struct st_unwind_row *st_unw_row(const void *rows, __u32 idx)
{
	return bpf_map_lookup_elem((void *)rows, &idx);
}

static __always_inline struct st_unw_cache_ent *st_unw_cache_slot(struct st_unw_env *e, __u64 pc)
{
	return &e->cache->ents[(pc ^ (pc >> 11)) & (ST_UNW_CACHE_SIZE - 1)];
}

/* A row cached for pc; a nested program may rewrite the entry meanwhile:
 * pc is written last and checked again. */
static __always_inline bool st_unw_cache_get(struct st_unw_env *e, struct st_unw_cache_ent *ce,
					     __u64 pc, struct st_unwind_row *row)
{
	if (ce->pc == pc && ce->tgid == e->tgid && ce->gen == e->gen) {
		*row = ce->row;
		asm volatile("" ::: "memory");
		return ce->pc == pc;
	}
	return false;
}

static __always_inline void st_unw_cache_put(struct st_unw_env *e, struct st_unw_cache_ent *ce,
					     __u64 pc, const struct st_unwind_row *row)
{
	ce->pc = 0;
	asm volatile("" ::: "memory");
	ce->tgid = e->tgid;
	ce->gen = e->gen;
	ce->row = *row;
	asm volatile("" ::: "memory");
	ce->pc = pc;
}

#include "unwind_step.h"

/* The walk's inputs and outputs, on the caller's stack. */
struct st_unwind_io {
	__u64 ip, sp, bp, r10, rbx, r13;	/* in: the interrupted user registers */
	__u32 tgid, max;	/* in: the process; frames wanted (<= ST_MAX_USER) */
	__u32 image;		/* in: the image it runs (a table of another is none) */
	__u32 fallback;		/* in: frame pointers where there is no CFI (auto) */
	__u32 stop;		/* out: enum st_unw_stop */
	__u32 fp_frames;	/* out: frames walked by frame pointers */
	__u32 no_proc;		/* out: no tables for the process (yet) */
	__u32 miss;		/* out: an address no mapping covers */
	__u32 over_budget;	/* out: a frame in a module left out by the memory budget */
	__u32 pending;		/* out: a frame in a module whose rows are not in yet */
	__u32 truncated;	/* out: the table left mappings out */
	__u32 slot;		/* in: 0 timer program, 1 page-fault program (window) */
	__u32 java;		/* out: the process has a JVM (its rule applied) */
	__u32 jframes;		/* out: Java frames written */
};

struct st_unwind_frames {
	__u64 addr[ST_MAX_USER];
};

/*
 * The walk itself: a global function, so that the verifier checks it once,
 * on its own, whatever the calling program (and the caller's verification
 * does not multiply by the walk's many exits). Returns the number of frames.
 */
__noinline int st_unwind_walk(struct st_unwind_io *io, struct st_unwind_frames *out)
{
	const struct st_java_proc *jp;
	struct st_unw_state s = {};
	__u32 zero = 0;
	__u64 t0;

	if (!io || !out)
		return 0;
	io->stop = ST_UNW_STOP_END;
	io->fp_frames = 0;
	io->miss = 0;
	io->over_budget = 0;
	io->pending = 0;
	s.proc = bpf_map_lookup_elem(&unwind_procs, &io->tgid);
	if (s.proc && s.proc->image != io->image && s.proc->image != ST_UNWIND_ANY_IMAGE)
		s.proc = NULL;	/* read before an exec, pushed after it */
	io->no_proc = !s.proc;
	if (!s.proc)	/* the empty table at key 0 (pushed first by the daemon) */
		s.proc = bpf_map_lookup_elem(&unwind_procs, &zero);
	/* a JVM: bpf/hotspot_step.h's rule for its code (one lookup a walk) */
	/* copied without a branch (a failed read leaves zeros: no JVM), or
	 * the verifier checks the whole walk twice, with and without one */
	jp = (interpreters & ST_INTERP_JAVA) ? bpf_map_lookup_elem(&java_procs, &io->tgid) : NULL;
	bpf_probe_read_kernel(&s.hs.java, sizeof(s.hs.java), jp);
	s.hs.tgid = io->tgid;
	s.hs.slot = io->slot;
	s.hs.image = io->image;
	s.image = io->image;
	s.jc = bpf_map_lookup_elem(&java_stats, &zero);
	s.env.cache = bpf_map_lookup_elem(&unwind_cache, &zero);
	s.env.win = bpf_map_lookup_elem(&unwind_window, &io->slot);
	if (s.env.win) {
		s.env.win->base = 0;	/* another sample's stack */
		s.env.win->floor = io->sp - ST_UNW_RED_ZONE;
	}
	if (!s.proc || !s.env.cache || !s.env.win)	/* (an array's: never) */
		return 0;
	s.out = out->addr;
	s.max = io->max;
	s.env.tgid = io->tgid;
	s.env.gen = s.proc->gen;
	t0 = ST_JAVA_NOW();
	st_unw_start(&s, io->ip, io->sp, io->bp, io->r10, io->rbx, io->r13, io->fallback != 0);
	st_unw_run(&s);
	st_hs_walk_end(&s, io->ip);
	ST_JAVA_PART(ST_JAVA_PART_WALK_NS, ST_JAVA_NOW() - t0);
	ST_JAVA_PART(ST_JAVA_PART_WALKS, 1);
	io->java = s.hs.java.code_end != 0;
	io->jframes = s.hs.jframes;
	io->stop = s.stop;
	io->fp_frames = s.fp_frames;
	io->miss = s.miss;
	io->over_budget = s.over_budget;
	io->pending = s.pending;
	io->truncated = s.proc->flags & ST_UNWIND_PROC_TRUNCATED;
	return s.n;
}

/*
 * Walk the user stack of task from its user registers uregs (for the
 * current task: bpf_task_pt_regs(bpf_get_current_task_btf()), valid whether
 * the sample interrupted user or kernel mode). Writes up to max (at most
 * ST_MAX_USER) addresses, leaf first, into out (which must have room for
 * ST_MAX_USER): the leaf ip, then return addresses. fallback: frame
 * pointers where there is no CFI (auto). Returns the number of frames (0
 * for kernel threads and exiting tasks) and fills *res.
 */
static __always_inline long st_unwind_user(struct task_struct *task, struct pt_regs *uregs,
					   __u64 *out, __u32 max, bool fallback, __u32 slot,
					   struct st_unwind_result *res)
{
	struct st_unwind_io io = {};
	__u64 now, *last;
	long n;

	res->stop = ST_UNW_STOP_END;
	res->fp_frames = 0;
	res->no_proc = false;
	res->request = false;
	res->over_budget = false;
	res->pending = false;
	res->miss = false;
	res->java = false;
	res->jframes = 0;
	if (!st_task_has_user_stack(task))
		return 0;
	io.ip = BPF_CORE_READ(uregs, ip);
	io.sp = BPF_CORE_READ(uregs, sp);
	io.bp = BPF_CORE_READ(uregs, bp);
	io.r10 = BPF_CORE_READ(uregs, r10);
	io.rbx = BPF_CORE_READ(uregs, bx);
	io.r13 = BPF_CORE_READ(uregs, r13);
	io.tgid = BPF_CORE_READ(task, tgid);
	io.image = (__u32)BPF_CORE_READ(task, self_exec_id);
	io.max = max < ST_MAX_USER ? max : ST_MAX_USER;
	io.fallback = fallback;
	io.slot = slot ? 1 : 0;
	n = st_unwind_walk(&io, (struct st_unwind_frames *)out);
	if (n < 0 || n > ST_MAX_USER)
		n = 0;
	res->stop = io.stop;
	res->fp_frames = io.fp_frames;
	res->no_proc = io.no_proc;
	res->over_budget = io.over_budget;
	res->pending = io.pending;
	res->miss = io.miss != 0;
	res->java = io.java != 0;
	res->jframes = io.jframes;
	if (io.truncated)
		st_unw_left_out(&res->stop, &res->miss);
	if (res->miss) {
		now = bpf_ktime_get_ns();
		last = bpf_map_lookup_elem(&unwind_requests, &io.tgid);
		if (!last || now - *last > ST_UNW_REQUEST_NS) {
			bpf_map_update_elem(&unwind_requests, &io.tgid, &now, BPF_ANY);
			res->request = true;
		}
	}
	return n;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * unwind.h - DWARF (CFI) unwinding of a user stack in BPF, from the rows
 * user space compiled (user/collect/unwind_tables.c, user/collect/unwinder.c). Included by
 * sample.bpf.c; st_unwind_user() can be called from any program that has
 * the task's user registers (perf_event, tp_btf). x86-64 only.
 *
 * Per frame: find the mapping of ip in the process's table (binary search,
 * last mapping cached), binary search the module's rows for the pc (ip - 1
 * for return addresses, so that a call at the end of a function finds its
 * own row), compute the CFA, read the return address at CFA - 8 and the
 * saved rbp where the row says, continue with sp = CFA. A frame without CFI
 * is walked with frame pointers in auto mode and ends the walk in dwarf
 * mode. Frames are walked by bpf_loop (verified once, not unrolled); the
 * two binary searches have fixed step counts. See kernel-notes/unwinding.md.
 */
#ifndef STACKTREE_UNWIND_BPF_H
#define STACKTREE_UNWIND_BPF_H

#include "stacktree.h"

#define ST_PF_KTHREAD 0x00200000	/* task_struct.flags: a kernel thread */
#define ST_UNW_REQUEST_NS (100 * 1000 * 1000ull) /* table requests per process: 10/s */

/* st_unw_frame() tells the two leaf-only kinds apart by their low bit */
_Static_assert(ST_UNW_R10 == 8 && ST_UNW_RBX == 9, "R10 and RBX differ in bit 0 only");

/* Why a walk ended (struct st_unwind_result.stop). */
enum st_unw_stop {
	ST_UNW_STOP_END,	/* the outermost frame (an ST_UNW_END row, a zero return
				 * address, a zero frame pointer a call saved): complete */
	ST_UNW_STOP_DEPTH,	/* max frames reached */
	ST_UNW_STOP_NO_TABLE,	/* no CFI (dwarf), or the frame-pointer step failed (auto;
				 * a zero rbp in interrupted code or an unmapped frame too) */
	ST_UNW_STOP_READ_FAULT,	/* bpf_probe_read_user failed */
	ST_UNW_STOP_UNSUPPORTED, /* unsupported CFI (dwarf) */
	ST_UNW_STOP_BAD_FRAME,	/* the stack pointer did not move up */
};

struct st_unwind_result {
	__u32 stop;		/* enum st_unw_stop */
	__u32 fp_frames;	/* frames walked by frame pointers (auto) */
	bool no_proc;		/* no tables for the process (yet) */
	bool request;		/* ask user space for tables (rate limited) */
	bool over_budget;	/* a frame in a module left out by --unwind-memory */
	bool pending;		/* a frame in a module whose rows are not compiled yet */
	bool miss;		/* an address no mapping of the table covers */
};

/* Shards of rows, created by the daemon as needed (user/collect/unwind_store.c):
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

/* tgid -> the process's executable mappings */
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
 * work). The window is emptied at the start of every walk. */
#define ST_UNW_WIN 4096

struct st_unw_window {
	__u64 base;		/* user address of buf[0]; 0: empty */
	__u8 buf[ST_UNW_WIN + 16];	/* + 16: masked offsets stay in bounds */
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

struct st_unw_state {
	__u64 ip, sp, bp;
	__u64 r10;		/* the leaf's r10 (DRAP prologues) */
	__u64 rbx;		/* the leaf's rbx (ld.so's lazy-binding resolver) */
	__u64 *out;
	struct st_unwind_proc *proc;
	struct st_unw_cache *cache;
	struct st_unw_window *win;	/* NULL: read with a helper call each time */
	__u32 tgid, gen;	/* cache key: the process and its table version */
	__u32 n, max;
	__u32 stop;
	__u32 cached;		/* index of the last mapping found + 1 (0: none) */
	__u32 fp_frames;
	bool exact;		/* look up ip itself: the leaf, or after a signal frame */
	bool fallback;		/* auto: frame pointers where there is no CFI */
	bool miss;		/* an address no mapping covers */
	bool unmapped;		/* ... this frame's */
	bool over_budget;	/* a frame in a module without rows for want of memory */
	bool pending;		/* a frame in a module whose rows are being compiled */
};

/* Binary searches, one bpf_loop step each: the last entry with key <= want
 * in [lo, hi) ends at lo - 1. */
struct st_unw_search {
	struct st_unwind_proc *proc;	/* mappings: keys are starts */
	void *rows;			/* a module's rows: keys are pcs */
	__u64 want;
	__u32 lo, hi;
	bool failed;
};

static long st_unw_map_step(__u32 i, void *data)
{
	struct st_unw_search *q = data;
	__u32 mid;

	if (q->lo >= q->hi)
		return 1;
	mid = (q->lo + q->hi) >> 1;
	if (q->proc->maps[mid & (ST_UNWIND_MAX_MAPS - 1)].start <= q->want)
		q->lo = mid + 1;
	else
		q->hi = mid;
	return 0;
}

static long st_unw_row_step(__u32 i, void *data)
{
	struct st_unw_search *q = data;
	struct st_unwind_row *r;
	__u32 mid;

	if (q->lo >= q->hi)
		return 1;
	mid = q->lo + ((q->hi - q->lo) >> 1);
	r = bpf_map_lookup_elem(q->rows, &mid);
	if (!r) {
		q->failed = true;
		return 1;
	}
	if (r->pc <= q->want)
		q->lo = mid + 1;
	else
		q->hi = mid;
	return 0;
}

/* The mapping covering ip, or NULL. */
static __always_inline struct st_unwind_map *st_unw_find_map(struct st_unw_state *s, __u64 ip)
{
	struct st_unw_search q = { .proc = s->proc, .want = ip };
	struct st_unwind_map *m;

	if (s->cached) {
		m = &s->proc->maps[(s->cached - 1) & (ST_UNWIND_MAX_MAPS - 1)];
		if (ip - m->start < m->len)
			return m;
	}
	q.hi = s->proc->nmaps;
	if (q.hi > ST_UNWIND_MAX_MAPS)
		q.hi = ST_UNWIND_MAX_MAPS;
	bpf_loop(ST_UNWIND_MAP_STEPS, st_unw_map_step, &q, 0);
	if (!q.lo)
		return NULL;
	m = &s->proc->maps[(q.lo - 1) & (ST_UNWIND_MAX_MAPS - 1)];
	if (ip - m->start >= m->len)
		return NULL;
	s->cached = q.lo;
	return m;
}

/* The row covering pc (module-relative) in m's rows, or NULL (also when
 * the shard is gone). The module's pc index narrows the search to pc's
 * bucket: one lookup, then 2-3 steps instead of ~20. */
static __always_inline struct st_unwind_row *st_unw_find_row(struct st_unwind_map *m, __u32 pc)
{
	__u32 first = m->first, n = m->nrows, nb = m->nbuckets, shift = m->ishift & 31, k;
	struct st_unw_search q = { .want = pc, .lo = first, .hi = first + n };
	struct st_unwind_bucket *bk;

	q.rows = bpf_map_lookup_elem(&unwind_shards, &m->shard);
	if (!q.rows)
		return NULL;
	if (nb) {		/* user/collect/unwind_index.c's rule */
		k = (pc >> shift) - m->ibase;
		if ((pc >> shift) < m->ibase) {
			return NULL;	/* below every row */
		} else if (k >= nb) {
			q.lo = first + n;	/* above every row's pc: the last row */
		} else {
			k += first + n;
			bk = bpf_map_lookup_elem(q.rows, &k);
			if (bk && bk->lo <= bk->hi && bk->hi <= n) {
				q.lo = first + bk->lo;
				q.hi = first + bk->hi;
			}
		}
	}
	bpf_loop(ST_UNWIND_ROW_STEPS, st_unw_row_step, &q, 0);
	if (q.failed || q.lo == first)
		return NULL;
	k = q.lo - 1;
	return bpf_map_lookup_elem(q.rows, &k);
}

static __always_inline long st_unw_read(void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr);
}

/* 8 bytes at addr, through the window: 0, or -1 when unreadable. */
static __always_inline long st_unw_read8(struct st_unw_state *s, __u64 addr, __u64 *out)
{
	struct st_unw_window *w = s->win;
	__u64 off, page;

	if (!w)
		return st_unw_read(out, sizeof(*out), addr);
	off = addr - w->base;
	if (!w->base || off > ST_UNW_WIN - 8) {
		page = addr & ~(__u64)(ST_UNW_WIN - 1);
		if (addr - page > ST_UNW_WIN - 8)	/* across pages */
			return st_unw_read(out, sizeof(*out), addr);
		if (bpf_probe_read_user(w->buf, ST_UNW_WIN, (const void *)page)) {
			w->base = 0;
			return -1;
		}
		w->base = page;
		off = addr - page;
	}
	off &= ST_UNW_WIN - 1;
	*out = *(__u64 *)&w->buf[off];
	return 0;
}

/* One frame-pointer step: [bp] = caller's bp, [bp + 8] = return address. */
static __always_inline long st_unw_fp_step(struct st_unw_state *s)
{
	__u64 fr[2];

	/* a zero frame pointer a call saved ends the stack (the outermost
	 * frame, by convention: the kernel and _start clear rbp); in
	 * interrupted code (exact: an assembly leaf without frame pointers
	 * leaves rbp 0 as often as not) or at an address no mapping covers it
	 * proves nothing: cut short (kernel-notes/unwinding.md) */
	if (!s->bp && !s->exact && !s->unmapped) {
		s->stop = ST_UNW_STOP_END;
		return 1;
	}
	if (!s->bp || s->bp < s->sp || (s->bp & 7) || st_unw_read8(s, s->bp, &fr[0]) ||
	    st_unw_read8(s, s->bp + 8, &fr[1])) {
		s->stop = ST_UNW_STOP_NO_TABLE;
		return 1;
	}
	s->sp = s->bp + 16;
	s->bp = fr[0];
	s->ip = fr[1];
	s->exact = false;
	s->fp_frames++;
	return 0;
}

/* sigreturn trampoline: the interrupted registers are in the ucontext at sp */
static __always_inline long st_unw_signal_step(struct st_unw_state *s)
{
	__u64 regs[8];	/* gregs[REG_RBP .. REG_RIP]: rbp, rbx, rdx, rax, rcx, rsp, rip */

	if (st_unw_read(regs, 7 * sizeof(__u64), s->sp + 40 + 10 * 8)) {
		s->stop = ST_UNW_STOP_READ_FAULT;
		return 1;
	}
	s->bp = regs[0];
	s->sp = regs[5];
	s->ip = regs[6];
	s->exact = true;	/* the interrupted instruction, not a return address */
	return 0;
}

static long st_unw_frame(__u32 i, void *data)
{
	struct st_unw_state *s = data;
	struct st_unwind_row row = {}, *r;	/* kind ST_UNW_NONE */
	struct st_unw_cache_ent *ce = NULL;
	struct st_unwind_map *m;
	__u64 cfa, fr[2], ra, pc;
	__u32 kind, n = i;	/* == s->n: one frame per iteration (i keeps the verifier's
				 * view of the state the same every iteration) */
	bool hit = false;
	__s64 off;

	if (n >= ST_MAX_USER || n >= s->max) {
		s->stop = ST_UNW_STOP_DEPTH;
		return 1;
	}
	s->out[n] = s->ip;
	s->n = n + 1;

	/* return addresses: look up the call (a noreturn call may end a function) */
	pc = s->ip - (s->exact ? 0 : 1);
	ce = &s->cache->ents[(pc ^ (pc >> 11)) & (ST_UNW_CACHE_SIZE - 1)];
	if (ce->pc == pc && ce->tgid == s->tgid && ce->gen == s->gen) {
		row = ce->row;
		asm volatile("" ::: "memory");
		hit = ce->pc == pc;	/* not rewritten meanwhile by a nested program */
		s->unmapped = false;	/* only mapped frames are cached */
	}
	if (!hit) {
		row = (struct st_unwind_row){};
		m = st_unw_find_map(s, s->ip);
		r = m && m->nrows ? st_unw_find_row(m, (__u32)(pc - m->start + m->vaddr)) : NULL;
		if (r)
			row = *r;
		else if (m && (m->flags & ST_UNWIND_MAP_OVER_BUDGET))
			row.kind = ST_UNW_NONE | ST_UNW_F_OVER_BUDGET;
		else if (m && (m->flags & ST_UNWIND_MAP_PENDING))
			row.kind = ST_UNW_NONE | ST_UNW_F_PENDING;
		s->unmapped = !m;
		if (!m) {
			s->miss = true;
		} else {
			ce->pc = 0;
			asm volatile("" ::: "memory");
			ce->tgid = s->tgid;
			ce->gen = s->gen;
			ce->row = row;
			asm volatile("" ::: "memory");
			ce->pc = pc;
		}
	}
	r = &row;
	if (row.kind & ST_UNW_F_OVER_BUDGET)
		s->over_budget = true;
	if (row.kind & ST_UNW_F_PENDING)
		s->pending = true;
	kind = row.kind & ST_UNW_KIND_MASK;
	/* R10 (8) or RBX (9): one test, no path more for the verifier (a
	 * branch per register made the page-fault program too complex) */
	if ((kind | 1) == ST_UNW_RBX && n)	/* known in the leaf only */
		kind = ST_UNW_UNSUPPORTED;
	if (kind == ST_UNW_NONE || kind == ST_UNW_UNSUPPORTED) {
		if (s->fallback)
			return st_unw_fp_step(s);
		s->stop = kind == ST_UNW_NONE ? ST_UNW_STOP_NO_TABLE : ST_UNW_STOP_UNSUPPORTED;
		return 1;
	}
	if (kind == ST_UNW_END) {
		s->stop = ST_UNW_STOP_END;
		return 1;
	}
	if (kind == ST_UNW_SIGNAL)
		return st_unw_signal_step(s);

	off = r->off;
	if (r->kind & ST_UNW_F_OFF8)
		off *= 8;
	if (kind == ST_UNW_RSP) {
		cfa = s->sp + off;
	} else if (kind == ST_UNW_RBP) {
		cfa = s->bp + off;
	} else if ((kind | 1) == ST_UNW_RBX) {	/* r10, or rbx when kind & 1 */
		cfa = s->r10 + ((s->rbx - s->r10) & (0 - (__u64)(kind & 1))) + off;
	} else if (kind == ST_UNW_PLT) {
		cfa = s->sp + off + ((s->ip & 15) >= (__u64)r->rbp ? 8 : 0);
	} else {		/* ST_UNW_DEREF_RBP */
		if (st_unw_read8(s, s->bp + off, &cfa)) {
			s->stop = ST_UNW_STOP_READ_FAULT;
			return 1;
		}
	}
	if (cfa <= s->sp) {
		s->stop = ST_UNW_STOP_BAD_FRAME;
		return 1;
	}
	if (kind == ST_UNW_PLT ||
	    (r->rbp == ST_UNW_RBP_SAME && !(r->kind & ST_UNW_F_RBP_AT_RBP))) {
		if (st_unw_read8(s, cfa - 8, &ra))
			goto fault;
	} else if (r->rbp == -2 && !(r->kind & ST_UNW_F_RBP_AT_RBP)) {
		/* the usual push rbp right after the call: one read */
		if (st_unw_read8(s, cfa - 16, &fr[0]) || st_unw_read8(s, cfa - 8, &fr[1]))
			goto fault;
		s->bp = fr[0];
		ra = fr[1];
	} else {
		if (st_unw_read8(s, cfa - 8, &ra))
			goto fault;
		if (r->rbp == ST_UNW_RBP_UNKNOWN)
			s->bp = 0;
		else if (st_unw_read8(s, ((r->kind & ST_UNW_F_RBP_AT_RBP) ? s->bp : cfa) +
					      (__s64)r->rbp * 8, &s->bp))
			goto fault;
	}
	s->sp = cfa;
	s->ip = ra;
	s->exact = false;
	if (!ra) {		/* a zero return address also ends a stack */
		s->stop = ST_UNW_STOP_END;
		return 1;
	}
	return 0;
fault:
	s->stop = ST_UNW_STOP_READ_FAULT;
	return 1;
}

/* The walk's inputs and outputs, on the caller's stack. */
struct st_unwind_io {
	__u64 ip, sp, bp, r10, rbx;	/* in: the interrupted user registers */
	__u32 tgid, max;	/* in: the process; frames wanted (<= ST_MAX_USER) */
	__u32 image;		/* in: the image it runs (a table of another is none) */
	__u32 fallback;		/* in: frame pointers where there is no CFI (auto) */
	__u32 stop;		/* out: enum st_unw_stop */
	__u32 fp_frames;	/* out: frames walked by frame pointers */
	__u32 no_proc;		/* out: no tables for the process (yet) */
	__u32 miss;		/* out: an address no mapping covers */
	__u32 over_budget;	/* out: a frame in a module left out by the memory budget */
	__u32 pending;		/* out: a frame in a module whose rows are not in yet */
	__u32 slot;		/* in: 0 timer program, 1 page-fault program (window) */
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
	struct st_unw_state s = {};
	__u32 zero = 0;

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
	s.cache = bpf_map_lookup_elem(&unwind_cache, &zero);
	s.win = bpf_map_lookup_elem(&unwind_window, &io->slot);
	if (s.win)
		s.win->base = 0;	/* another sample's stack */
	if (!s.proc || !s.cache)
		return 0;
	s.ip = io->ip;
	s.sp = io->sp;
	s.bp = io->bp;
	s.r10 = io->r10;
	s.rbx = io->rbx;
	s.out = out->addr;
	s.max = io->max;
	s.exact = true;
	s.fallback = io->fallback != 0;
	s.stop = ST_UNW_STOP_END;
	s.tgid = io->tgid;
	s.gen = s.proc->gen;
	/* one more iteration than frames: it tells a complete stack of max
	 * frames from a deeper one */
	bpf_loop(ST_MAX_USER + 1, st_unw_frame, &s, 0);
	io->stop = s.stop;
	io->fp_frames = s.fp_frames;
	io->miss = s.miss;
	io->over_budget = s.over_budget;
	io->pending = s.pending;
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
	if ((BPF_CORE_READ(task, flags) & ST_PF_KTHREAD) || !BPF_CORE_READ(task, mm))
		return 0;
	io.ip = BPF_CORE_READ(uregs, ip);
	io.sp = BPF_CORE_READ(uregs, sp);
	io.bp = BPF_CORE_READ(uregs, bp);
	io.r10 = BPF_CORE_READ(uregs, r10);
	io.rbx = BPF_CORE_READ(uregs, bx);
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
	if (io.miss) {
		now = bpf_ktime_get_ns();
		last = bpf_map_lookup_elem(&unwind_requests, &io.tgid);
		if (!last || now - *last > ST_UNW_REQUEST_NS) {
			bpf_map_update_elem(&unwind_requests, &io.tgid, &now, BPF_ANY);
			res->request = true;
		}
	}
	return n;
}

/* The ST_STAT_* counter of a walk that ended early (ST_STAT__MAX: none). */
static __always_inline __u32 st_unwind_stop_stat(__u32 stop)
{
	switch (stop) {
	case ST_UNW_STOP_DEPTH: return ST_STAT_TRUNCATED;
	case ST_UNW_STOP_NO_TABLE: return ST_STAT_UNW_NO_TABLE;
	case ST_UNW_STOP_READ_FAULT: return ST_STAT_UNW_READ_FAULT;
	case ST_UNW_STOP_UNSUPPORTED: return ST_STAT_UNW_UNSUPPORTED;
	case ST_UNW_STOP_BAD_FRAME: return ST_STAT_UNW_BAD_FRAME;
	default: return ST_STAT__MAX;
	}
}

#endif

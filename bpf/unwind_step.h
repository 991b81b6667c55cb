/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * unwind_step.h - the DWARF (CFI) stack walk, one frame a step: the one
 * source of the walk's rules, compiled into the BPF object (bpf/unwind.h,
 * every sample) and natively (user/collect/unwind/unwinder.c walks the samples
 * deferred until their tables were in; tests/unit/test_unwind_step.c).
 * x86-64 only. See kernel-notes/unwinding.md.
 *
 * Per frame: find the mapping of ip in the process's table (binary search,
 * last mapping remembered; for a process with more than ST_UNWIND_MAX_MAPS
 * mappings, the table's search finds a chunk and the chunk's the mapping),
 * binary search the module's rows for the pc (ip - 1 for return addresses,
 * so that a call at the end of a function finds its own row), narrowed
 * first by the module's pc index; compute the CFA by
 * the row's kind, read the return address at CFA - 8 and the saved rbp
 * where the row says, note where it keeps the caller's rbx (for ld.so's
 * resolver above, whose CFA is rbx-based), continue with sp = CFA. A frame without CFI is walked
 * with frame pointers in auto mode and ends the walk in dwarf mode.
 *
 * Contract with the includer. Memory reads and map lookups differ between
 * the two builds (loops and the rest come from the prelude, bpf/dual.h);
 * before including this header the includer defines:
 *   struct st_unw_env		what its reads need (BPF: the window, the row
 *				cache; native: the copied stack, the rows)
 *   struct st_unw_cache_ent	a row cache entry (native: left incomplete)
 *   st_unw_read(e, dst, size, addr), st_unw_read8(e, addr, out)
 *				user memory: 0, or negative when unreadable
 *				(st_unw_read8: an unaligned address too, in both)
 *   ST_HS_READ, ST_HS_GLOBAL	bpf/hotspot_step.h's (its contract)
 *   st_unw_rows(e, &shard)	a shard's rows (an opaque handle), or NULL
 *   st_unw_chunk(e, gen, k)	chunk k of the table of version gen, or NULL
 *   st_unw_row(handle, idx)	row idx of a shard, or NULL past its end
 *   st_unw_cache_slot/_get/_put the row cache by pc (native: none)
 *   st_unw_rbx(e)		the walk's rbx (struct st_unw_rbx): in BPF in map
 *				memory, which the verifier does not track (on the
 *				stack its values multiplied the walk's states
 *				past the 1M instructions limit)
 * The native build includes it through user/collect/unwind/unwind_native.h, which
 * supplies all of these over a copy of the stack and the daemon's copy of
 * the tables.
 *
 * Loops: the frames and both binary searches are loops of fixed bounds
 * (ST_MAX_USER + 1, ST_UNWIND_MAP_STEPS, ST_UNWIND_ROW_STEPS) run through
 * st_loop (bpf/dual.h: bpf_loop in BPF), so that the verifier checks each
 * step once.
 */
#ifndef STACKTREE_UNWIND_STEP_H
#define STACKTREE_UNWIND_STEP_H

#include "dual.h"
#include "stacktree.h"
#include "hotspot_step.h"

/* st_unw_frame() tells the two leaf-only kinds apart by their low bit */
_Static_assert(ST_UNW_R10 == 8 && ST_UNW_RBX == 9, "R10 and RBX differ in bit 0 only");

/* Why a walk ended. */
enum st_unw_stop {
	ST_UNW_STOP_END,	/* the outermost frame (an ST_UNW_END row, a zero return
				 * address, a zero frame pointer a call saved): complete */
	ST_UNW_STOP_DEPTH,	/* max frames reached */
	ST_UNW_STOP_NO_TABLE,	/* no CFI (dwarf), or the frame-pointer step failed (auto;
				 * a zero rbp in interrupted code or an unmapped frame too) */
	ST_UNW_STOP_READ_FAULT,	/* the stack could not be read there */
	ST_UNW_STOP_UNSUPPORTED, /* unsupported CFI (dwarf) */
	ST_UNW_STOP_BAD_FRAME,	/* the stack pointer did not move up, or a return address
				 * outside user space (ST_USER_END: stack garbage) */
	ST_UNW_STOP_NO_PROC,	/* (set by callers) no table for the process at all */
	ST_UNW_STOP_TOO_MANY_MAPS, /* no CFI where the table left mappings out (a
				    * process over ST_UNWIND_MAX_PROC_MAPS) */
};

/* The ST_STAT_* counter of a walk that ended early (ST_STAT__MAX: none). */
static __always_inline __u32 st_unwind_stop_stat(__u32 stop)
{
	switch (stop) {
	case ST_UNW_STOP_DEPTH: return ST_STAT_TRUNCATED;
	case ST_UNW_STOP_NO_TABLE: return ST_STAT_UNW_NO_TABLE;
	case ST_UNW_STOP_READ_FAULT: return ST_STAT_UNW_READ_FAULT;
	case ST_UNW_STOP_UNSUPPORTED: return ST_STAT_UNW_UNSUPPORTED;
	case ST_UNW_STOP_BAD_FRAME: return ST_STAT_UNW_BAD_FRAME;
	case ST_UNW_STOP_NO_PROC: return ST_STAT_UNW_NO_PROC;
	case ST_UNW_STOP_TOO_MANY_MAPS: return ST_STAT_UNW_TOO_MANY_MAPS;
	default: return ST_STAT__MAX;
	}
}

/* A walk in progress. */
struct st_unw_state {
	__u64 ip, sp, bp;
	__u64 r10;		/* the leaf's r10 (DRAP prologues) */
	__u64 rbx;		/* the leaf's rbx (ld.so's lazy-binding resolver); the
				 * frame's as the walk goes: st_unw_rbx(&env) */
	__u64 *out;		/* the frames, leaf first */
	const struct st_unwind_proc *proc;	/* the process's mappings (never NULL) */
	__u32 image;				/* the image sampled (hs.java.image's) */
	struct st_java_counts *jc;		/* ... its rule's counts, or NULL */
	struct st_hs_io hs;			/* its JVM (hs.java; 0s: none) and rule */
	struct st_unw_env env;
	__u32 n, max;
	__u32 stop;		/* enum st_unw_stop */
	__u32 cached;		/* index of the last mapping found + 1 (0: none) */
	__u32 fp_frames;
	bool exact;		/* look up ip itself: the leaf, or after a signal frame */
	bool fallback;		/* auto: frame pointers where there is no CFI */
	bool miss;		/* an address no mapping covers */
	bool unmapped;		/* ... this frame's */
	bool over_budget;	/* a frame in a module without rows for want of memory */
	bool pending;		/* a frame in a module whose rows are being compiled */
};

/* Binary searches, one loop step each: the last entry with key <= want
 * in [lo, hi) ends at lo - 1. */
struct st_unw_search {
	const struct st_unwind_map *maps;	/* mappings: keys are starts */
	const void *rows;			/* a module's rows: keys are pcs */
	struct st_unw_env *env;			/* mappings: the chunks' */
	__u64 want;
	__u32 lo, hi;
	__u32 gen;				/* mappings: the table's version */
	bool failed;
	bool chunk;				/* mappings: searching a chunk */
};

/* A table's search, then, when the entry found is an index entry, its
 * chunk's: in one loop, so that the frame that asks sees one search. */
ST_CB long st_unw_map_step(__u32 i, void *data)
{
	struct st_unw_search *q = data;
	const struct st_unwind_proc *c;
	const struct st_unwind_map *m;
	__u32 mid;

	(void)i;
	if (q->lo >= q->hi) {
		if (q->chunk || !q->lo)
			return 1;
		m = &q->maps[(q->lo - 1) & (ST_UNWIND_MAX_MAPS - 1)];
		if (!(m->flags & ST_UNWIND_MAP_CHUNK))
			return 1;
		c = st_unw_chunk(q->env, q->gen, m->shard);
		q->lo = 0;
		if (!c)
			return 1;
		q->maps = c->maps;
		q->hi = c->nmaps < ST_UNWIND_MAX_MAPS ? c->nmaps : ST_UNWIND_MAX_MAPS;
		q->chunk = true;
		return 0;
	}
	mid = (q->lo + q->hi) >> 1;
	if (q->maps[mid & (ST_UNWIND_MAX_MAPS - 1)].start <= q->want)
		q->lo = mid + 1;
	else
		q->hi = mid;
	return 0;
}

ST_CB long st_unw_row_step(__u32 i, void *data)
{
	struct st_unw_search *q = data;
	const struct st_unwind_row *r;
	__u32 mid;

	(void)i;
	if (q->lo >= q->hi)
		return 1;
	mid = q->lo + ((q->hi - q->lo) >> 1);
	r = st_unw_row(q->rows, mid);
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
static __always_inline const struct st_unwind_map *st_unw_find_map(struct st_unw_state *s,
								   __u64 ip)
{
	struct st_unw_search q = { .maps = s->proc->maps, .env = &s->env, .want = ip,
				   .gen = s->proc->gen };
	const struct st_unwind_map *m;

	if (s->cached) {
		m = &s->proc->maps[(s->cached - 1) & (ST_UNWIND_MAX_MAPS - 1)];
		if (ip - m->start < m->len)
			return m;
	}
	q.hi = s->proc->nmaps;
	if (q.hi > ST_UNWIND_MAX_MAPS)
		q.hi = ST_UNWIND_MAX_MAPS;
	st_loop(2 * ST_UNWIND_MAP_STEPS + 1, st_unw_map_step, &q);
	if (!q.lo)
		return NULL;
	m = &q.maps[(q.lo - 1) & (ST_UNWIND_MAX_MAPS - 1)];
	if (ip - m->start >= m->len)	/* (an index entry's len is 0) */
		return NULL;
	s->cached = q.chunk ? 0 : q.lo;
	return m;
}

/* The row covering pc (module-relative) in m's rows, or NULL (also when
 * the shard is gone). The module's pc index narrows the search to pc's
 * bucket: one lookup, then 2-3 steps instead of ~20. */
static __always_inline const struct st_unwind_row *
st_unw_find_row(struct st_unw_env *e, const struct st_unwind_map *m, __u32 pc)
{
	__u32 first = m->first, n = m->nrows, nb = m->nbuckets, shift = m->ishift & 31, k;
	struct st_unw_search q = { .want = pc, .lo = first, .hi = first + n };
	const struct st_unwind_bucket *bk;

	q.rows = st_unw_rows(e, &m->shard);
	if (!q.rows)
		return NULL;
	if (nb) {		/* user/collect/unwind/unwind_index.c's rule */
		k = (pc >> shift) - m->ibase;
		if ((pc >> shift) < m->ibase) {
			return NULL;	/* below every row */
		} else if (k >= nb) {
			q.lo = first + n;	/* above every row's pc: the last row */
		} else {
			k += first + n;
			bk = (const struct st_unwind_bucket *)st_unw_row(q.rows, k);
			if (bk && bk->lo <= bk->hi && bk->hi <= n) {
				q.lo = first + bk->lo;
				q.hi = first + bk->hi;
			}
		}
	}
	st_loop(ST_UNWIND_ROW_STEPS, st_unw_row_step, &q);
	if (q.failed || q.lo == first)
		return NULL;
	return st_unw_row(q.rows, q.lo - 1);
}

/* One frame-pointer step: [bp] = caller's bp, [bp + 8] = return address. */
/* rbx not known above this frame (an rbx-based CFA there stops the walk) */
static __always_inline void st_unw_rbx_lost(struct st_unw_env *e)
{
	st_unw_rbx(e)->val = 0;
	st_unw_rbx(e)->at = 0;
}

/* A frame's rbx rule (ST_UNW_RBX_*) applied, its CFA cfa, its rbp field
 * rbp, sp its stack pointer: where the caller's rbx is now. Arithmetic
 * only (rule's two bits as masks). A slot below sp was popped, as rbp's
 * (the register holds the caller's rbx again): where it was. */
static __always_inline void st_unw_rbx_rule(struct st_unw_rbx *x, __u32 rule, __u64 cfa, __s8 rbp,
					    __u64 sp)
{
	__u64 b0 = rule & 1, b1 = (rule >> 1) & 1;
	__u64 below = b0 & (b1 ^ 1), cfa16 = b1 & (b0 ^ 1), lost = b0 & b1;
	__u64 slot = cfa + (((__u64)((__s64)rbp * 8 - 8)) & (0 - below)) + ((0 - 16ull) & (0 - cfa16));
	__u64 popped = (__u64)((__s64)(slot - sp)) >> 63;
	__u64 take = (below | cfa16) & (popped ^ 1);

	x->at = ((x->at & (take - 1)) | (slot & (0 - take))) & (lost - 1);
	x->val &= lost - 1;
}

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
	if (!s->bp || s->bp < s->sp || (s->bp & 7) || st_unw_read8(&s->env, s->bp, &fr[0]) ||
	    st_unw_read8(&s->env, s->bp + 8, &fr[1])) {
		s->stop = ST_UNW_STOP_NO_TABLE;
		return 1;
	}
	s->sp = s->bp + 16;
	s->bp = fr[0];
	s->ip = fr[1];
	s->exact = false;
	st_unw_rbx_lost(&s->env);	/* whether the frame saved it, no table says */
	s->fp_frames++;
	return 0;
}

/* sigreturn trampoline: the interrupted registers are in the ucontext at sp */
static __always_inline long st_unw_signal_step(struct st_unw_state *s)
{
	__u64 regs[8];	/* gregs[REG_RBP .. REG_RIP]: rbp, rbx, rdx, rax, rcx, rsp, rip */

	if (st_unw_read(&s->env, regs, 7 * sizeof(__u64), s->sp + 40 + 10 * 8)) {
		s->stop = ST_UNW_STOP_READ_FAULT;
		return 1;
	}
	s->bp = regs[0];
	st_unw_rbx(&s->env)->val = regs[1];	/* the interrupted frame's: known again */
	st_unw_rbx(&s->env)->at = 0;
	s->sp = regs[5];
	s->ip = regs[6];
	s->exact = true;	/* the interrupted instruction, not a return address */
	return 0;
}

/* Whether the JVM's entry is the sampled image's (read before an exec,
 * pushed after it: another program's). */
static __always_inline bool st_hs_image_ok(const struct st_unw_state *s)
{
	return s->hs.java.image == s->image || s->hs.java.image == ST_UNWIND_ANY_IMAGE;
}

static __always_inline void st_hs_count(struct st_unw_state *s, __u32 what)
{
	if (s->jc && what < ST_JAVA_STAT__MAX)
		s->jc->n[what]++;
}

/* Frame n of the walk, at s->ip in the code cache of the process's JVM
 * (bpf/hotspot_step.h's rule):
 * 0 to go on, 1 when the walk ended (s->stop says why), as st_unw_frame()
 * returns. */
static __always_inline long st_hs_step(struct st_unw_state *s, __u32 n)
{
	int r;

	s->hs.ip = s->ip;
	s->hs.sp = s->sp;
	s->hs.bp = s->bp;
	s->hs.exact = s->exact;
	s->hs.n = n;
	r = st_hs_frame(&s->hs);
	if (s->hs.entry & ST_JAVA_TAG)
		s->out[n] = s->hs.entry;
	s->unmapped = false;
	if (r) {
		s->stop = ST_UNW_STOP_NO_TABLE;
		return 1;
	}
	s->ip = s->hs.ip;
	s->sp = s->hs.sp;
	s->bp = s->hs.bp;
	s->exact = false;
	st_unw_rbx_lost(&s->env);
	s->fp_frames++;
	return 0;
}

/* A walk of a JVM's thread ended (leaf: its first pc): counted. */
static __always_inline void st_hs_walk_end(struct st_unw_state *s, __u64 leaf)
{
	if (!s->hs.java.code_end || !st_hs_image_ok(s))
		return;
	st_hs_count(s, ST_JAVA_STAT_WALKS);
	if (s->hs.jframes)
		st_hs_count(s, ST_JAVA_STAT_WALKED);
	if (!st_hs_in(leaf, s->hs.java.interp_start, s->hs.java.interp_end))
		st_hs_count(s, ST_JAVA_STAT_LEAF_OUT);
}

/* One frame: 0 to go on, 1 when the walk ended (s->stop says why). */
ST_CB long st_unw_frame(__u32 i, void *data)
{
	struct st_unw_state *s = data;
	struct st_unwind_row row = {};	/* kind ST_UNW_NONE */
	const struct st_unwind_row *r;
	struct st_unw_cache_ent *ce;
	const struct st_unwind_map *m;
	__u64 cfa, fr[2], ra, pc, slot;
	__u32 kind, n = i;
	struct st_unw_rbx *rbx = st_unw_rbx(&s->env);
	__u64 rbx_val;	/* == s->n: one frame per iteration (i keeps the verifier's
				 * view of the state the same every iteration) */
	__s64 off;

	if (n >= ST_MAX_USER || n >= s->max) {
		s->stop = ST_UNW_STOP_DEPTH;
		return 1;
	}
	/* what a step read as a return address is no frame when it is no
	 * user address (0xebebebebebebebeb: pixel data where a frame-pointer
	 * step looked) or in the null page (0, 1: counters and flags), where
	 * nothing is ever mapped (one unsigned test for both ends). Measured
	 * under -a with process churn: zeros from frame-pointer steps through
	 * code without them (a process without tables yet, its stack not
	 * deferred) were most of the [unknown] frames left (kernel-notes
	 * "Processes that end first"). (A stack address is garbage too, but
	 * a thread's stack may end right below a library's code: no bound
	 * above sp is sound.) Every kind of step comes through here. */
	if (s->ip - ST_USER_MIN >= ST_USER_END - ST_USER_MIN) {
		s->stop = ST_UNW_STOP_BAD_FRAME;
		return 1;
	}
	s->out[n] = s->ip;
	s->n = n + 1;
	/* a JVM's interpreter and code cache: its rule, a path of its own
	 * that ends this frame (one branch for the verifier's states) */
	if (st_hs_in(s->ip, s->hs.java.code_start, s->hs.java.code_end) && st_hs_image_ok(s))
		return st_hs_step(s, n);

	/* return addresses: look up the call (a noreturn call may end a function) */
	pc = s->ip - (s->exact ? 0 : 1);
	ce = st_unw_cache_slot(&s->env, pc);
	s->unmapped = false;	/* only mapped frames are cached */
	if (!st_unw_cache_get(&s->env, ce, pc, &row)) {
		row = (struct st_unwind_row){};
		m = st_unw_find_map(s, s->ip);
		r = m && m->nrows ? st_unw_find_row(&s->env, m, (__u32)(pc - m->start + m->vaddr))
				  : NULL;
		if (r)
			row = *r;
		else if (m && (m->flags & ST_UNWIND_MAP_OVER_BUDGET))
			row.kind = ST_UNW_NONE | ST_UNW_F_OVER_BUDGET;
		else if (m && (m->flags & ST_UNWIND_MAP_PENDING))
			row.kind = ST_UNW_NONE | ST_UNW_F_PENDING;
		s->unmapped = !m;
		if (!m)
			s->miss = true;
		else
			st_unw_cache_put(&s->env, ce, pc, &row);
	}
	r = &row;
	kind = row.kind & ST_UNW_KIND_MASK;
	/* (the two flags of a NONE row are the rbx rule of any other) */
	if (kind == ST_UNW_NONE && (row.kind & ST_UNW_F_OVER_BUDGET))
		s->over_budget = true;
	if (kind == ST_UNW_NONE && (row.kind & ST_UNW_F_PENDING))
		s->pending = true;
	/* r10 is known in the leaf only (no frame saves it); rbx where no
	 * frame below lost it (s->rbx 0: the CFA is then no frame's, below)
	 * (one test, no path more for the verifier: a branch per register
	 * made the page-fault program too complex) */
	if (kind == ST_UNW_R10 && n)
		kind = ST_UNW_UNSUPPORTED;
	if (kind == ST_UNW_NONE || kind == ST_UNW_UNSUPPORTED) {
		/* auto: frame pointers where there is no CFI; not where it
		 * is a form not evaluated here (ld.so's lazy-binding resolver
		 * above a frame that lost rbx): rbp is a register of code with CFI there,
		 * a zero one no end a call saved (a sample in _dl_fixup ended
		 * at the resolver, unmarked): cut short, "unsupported CFI" */
		if (s->fallback && kind == ST_UNW_NONE)
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
		rbx_val = rbx->val;
		if (rbx->at && st_unw_read(&s->env, &rbx_val, 8, rbx->at))
			rbx_val = 0;
		cfa = s->r10 + ((rbx_val - s->r10) & (0 - (__u64)(kind & 1))) + off;
	} else if (kind == ST_UNW_PLT) {
		cfa = s->sp + off + ((s->ip & 15) >= (__u64)r->rbp ? 8 : 0);
	} else {		/* ST_UNW_DEREF_RBP (the compiler makes no other kind) */
		if (st_unw_read8(&s->env, s->bp + off, &cfa)) {
			s->stop = ST_UNW_STOP_READ_FAULT;
			return 1;
		}
	}
	if (cfa <= s->sp) {	/* (an rbx-based CFA: rbx not known here) */
		s->stop = (kind | 1) == ST_UNW_RBX ? ST_UNW_STOP_UNSUPPORTED : ST_UNW_STOP_BAD_FRAME;
		return 1;
	}
	if (kind == ST_UNW_PLT ||
	    (r->rbp == ST_UNW_RBP_SAME && !(r->kind & ST_UNW_F_RBP_AT_RBP))) {
		if (st_unw_read8(&s->env, cfa - 8, &ra))
			goto fault;
	} else if (r->rbp == -2 && !(r->kind & ST_UNW_F_RBP_AT_RBP) && cfa - 16 >= s->sp) {
		/* the usual push rbp right after the call */
		if (st_unw_read8(&s->env, cfa - 16, &fr[0]) ||
		    st_unw_read8(&s->env, cfa - 8, &fr[1]))
			goto fault;
		s->bp = fr[0];
		ra = fr[1];
	} else {
		if (st_unw_read8(&s->env, cfa - 8, &ra))
			goto fault;
		slot = ((r->kind & ST_UNW_F_RBP_AT_RBP) ? s->bp : cfa) + (__s64)r->rbp * 8;
		/* a slot below sp was popped (the interrupted frame is past its
		 * pop rbp: GCC's rows keep rbp at CFA - 16 up to the ret): the
		 * register holds the caller's rbp again. Reading the dead slot
		 * worked in BPF but not in the daemon, whose copy starts at sp. */
		if (r->rbp == ST_UNW_RBP_UNKNOWN)
			s->bp = 0;
		else if (slot >= s->sp && st_unw_read8(&s->env, slot, &s->bp))
			goto fault;
	}
	/* the caller's rbx, where this frame saved it (a slot below sp was
	 * popped, as rbp's above: the register holds it again); 0 where it
	 * is not known. (.plt rows keep rbx: ST_UNW_RBX_SAME, their rbp
	 * field is no slot.) */
	/* (without a branch: branches here, on every frame's way out,
	 * multiplied the verifier's paths) */
	st_unw_rbx_rule(rbx, (__u32)(r->kind >> ST_UNW_RBX_SHIFT) & 3, cfa, r->rbp, s->sp);
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

/* Start a walk at the interrupted registers: s->env, proc, out and max
 * are the caller's to set. */
static __always_inline void st_unw_start(struct st_unw_state *s, __u64 ip, __u64 sp, __u64 bp,
					 __u64 r10, __u64 rbx, __u64 r13, bool fallback)
{
	s->hs.r13 = r13;	/* HotSpot's interpreter: the live bcp */
	s->hs.rbx = rbx;	/* ... and the Method* at a method entry */
	s->hs.fallback = fallback;
	s->ip = ip;
	s->sp = sp;
	s->bp = bp;
	s->r10 = r10;
	s->rbx = rbx;
	st_unw_rbx(&s->env)->val = rbx;
	st_unw_rbx(&s->env)->at = 0;
	s->exact = true;
	s->fallback = fallback;
	s->stop = ST_UNW_STOP_END;
}

/* The walk: frames into s->out until one ends it. One more iteration than
 * frames: it tells a complete stack of max frames from a deeper one. */
static __always_inline void st_unw_run(struct st_unw_state *s)
{
	st_loop(ST_MAX_USER + 1, st_unw_frame, s);
}

/* After a walk with a table that left mappings out
 * (ST_UNWIND_PROC_TRUNCATED): an address outside it is one of them, not a
 * new mapping to ask the daemon for, and a walk that stopped there stopped
 * for that. Applied by the walk's caller: in BPF outside the global
 * function, whose every exit state would explore a branch more (x3). */
static __always_inline void st_unw_left_out(__u32 *stop, bool *miss)
{
	if (*miss) {
		*miss = false;
		if (*stop == ST_UNW_STOP_NO_TABLE)
			*stop = ST_UNW_STOP_TOO_MANY_MAPS;
	}
}

#endif

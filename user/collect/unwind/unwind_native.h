/* unwind_native.h - the stack walk of bpf/unwind_step.h built natively:
 * the daemon walks a deferred sample (bpf/stacktree.h struct st_deferred)
 * with the same rows and the same rules as BPF, reading the stack from the
 * copy BPF took at the sample and the rows from the daemon's copy of the
 * shards (user/collect/unwind/unwinder.c). The step is bpf/unwind_step.h's; only
 * the reads are here, and, in auto mode, the checked scan past assembly
 * without CFI that BPF does not do (st_unw_scan()). Pure: no syscall, no
 * recursion, no allocation (a JVM's methods, off the stack, and the code
 * bytes the scan checks are read through the caller's readers:
 * bpf/hotspot_step.h, st_unw_code_fn). */
#ifndef STACKTREE_UNWIND_NATIVE_H
#define STACKTREE_UNWIND_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

#include "bpf/dual.h"
#include "stacktree.h"
#include "user/collect/unwind/callcheck.h"

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
	__u64 holes;		/* pages of the copy that were not there (st_deferred_hole()) */
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
	if (size && st_deferred_hole(e->holes, e->stack_base, off, size))
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
#define ST_HS_READ8(e, a, out) st_unw_read8((e), (a), (out))	/* as BPF's */
#define ST_HS_PART(i) ((void)0)	/* a bench build's BPF counts only */
/* no blob cache natively (and no memo: never called) */
#define st_hs_cache_get(m, pc, k) ((void)(m), (void)(pc), (void)(k), false)
#define st_hs_cache_put(m, pc, k) ((void)(m), (void)(pc), (void)(k))
#define ST_HS_MEMO(io) ((struct st_hs_memo *)0)	/* each frame resolves its blob */
#define ST_HS_REPORT(io, e) ((void)(io), (void)(e), true)	/* the daemon's own reads */
#ifndef ST_HS_CODE_MEMO	/* none (read each time); tests/unit/test_hotspot_step.c gives one */
#define ST_HS_CODE_MEMO(io, m) ((void)(m), (struct st_hs_code_ent *)0)
#endif
#define ST_HS_GLOBAL static inline
#define ST_HS_COUNT(io, what)                                                                     \
	do {                                                                                      \
		if ((io)->jc)                                                                     \
			((struct st_java_counts *)(uintptr_t)(io)->jc)->n[(what)]++;              \
	} while (0)

/* A stack word: as BPF's (bpf/unwind.h), an unaligned address is
 * unreadable, so that both walks stop at the same frame of a corrupt
 * stack (no compiler's frame keeps a slot there). */
static inline long st_unw_read8(struct st_unw_env *e, __u64 addr, __u64 *out)
{
	if (addr & 7)
		return -1;
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

/* Code bytes: n bytes of the process's memory at addr, in mapping m of
 * its table (or, for memory no mapping covers, as JIT code, a mapping made
 * of just these bytes: st_unw_call_at()): 0, or negative. */
typedef long (*st_unw_code_fn)(void *ctx, const struct st_unwind_map *m, __u64 addr, void *dst,
			       __u32 n);

/* The checked scan through code without CFI (st_unw_scan()): stack words
 * looked at above the frame's sp, candidates whose code is read, scans a
 * walk makes, at most. */
#define ST_UNW_SCAN_WORDS 512
#define ST_UNW_SCAN_READS 64
#define ST_UNW_SCAN_MAX 32

/* A walk's inputs: the interrupted registers, the copied stack, the
 * process's table (NULL: none, every frame is "no CFI") and its chunks,
 * its rows. */
struct st_unw_native_in {
	__u64 ip, sp, bp, r10, rbx, r13;
	const __u8 *stack;	/* the stack from sp up, */
	size_t stack_len;	/* ... this many bytes of it */
	__u64 holes;		/* ... but for these pages (struct st_deferred's) */
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
	st_unw_code_fn code;	/* code bytes for st_unw_scan(); NULL: no scan */
	void *code_ctx;
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
	__u32 scanned;		/* frames whose return address st_unw_scan() found */
	__u32 scan_failed;	/* scans that found none (the walk cut there, as before) */
};

/* Whether s's frame is in code without CFI in a module with CFI (a
 * stretch between its FDEs: hand-written assembly): its mapping into *pm,
 * the row that covers it (ST_UNW_NONE; NULL below the first) into *gap. */
static inline bool st_unw_in_gap(struct st_unw_state *s, const struct st_unwind_map **pm,
				 const struct st_unwind_row **gap)
{
	__u64 pc = s->ip - (s->exact ? 0 : 1);
	const struct st_unwind_map *m;
	const struct st_unwind_row *r;

	if (s->ip - ST_USER_MIN >= ST_USER_END - ST_USER_MIN ||
	    st_hs_in(s->ip, s->hs.java.code_start, s->hs.java.code_end))
		return false;
	m = st_unw_find_map(s, s->ip);
	if (!m || !m->nrows || (m->flags & (ST_UNWIND_MAP_PENDING | ST_UNWIND_MAP_OVER_BUDGET)))
		return false;
	r = st_unw_find_row(&s->env, m, (__u32)(pc - m->start + m->vaddr));
	if (r && (r->kind & ST_UNW_KIND_MASK) != ST_UNW_NONE)
		return false;
	*pm = m;
	*gap = r;
	return true;
}

/* Whether the walk from a candidate return address ra at slot holds up:
 * run on a copy of the walk (CFI only: no frame-pointer guesses) it ends
 * at the outermost frame, at the depth bound, or at a frame without CFI
 * in a mapped module (more assembly: its own scan). A stale return
 * address left in the frame's stack (an earlier call's) leads, past a
 * frame or two, to a bad frame or an address that is no code. */
static inline bool st_unw_trial(const struct st_unw_state *s, __u64 slot, __u64 ra)
{
	struct st_unw_state t = *s;
	__u32 i;

	t.sp = slot + 8;
	t.ip = ra;
	t.exact = false;
	t.fallback = false;
	t.stop = ST_UNW_STOP_END;
	st_unw_rbx_lost(&t.env);
	for (i = s->n; i <= ST_MAX_USER; i++)
		if (st_unw_frame(i, &t))
			break;
	if (t.stop == ST_UNW_STOP_END || t.stop == ST_UNW_STOP_DEPTH)
		return true;
	return t.stop == ST_UNW_STOP_NO_TABLE && !t.unmapped && st_unw_find_map(&t, t.ip);
}

/* The return address of a frame without CFI (mapping pm, stretch gap, as
 * st_unw_in_gap() found them), by a rule that is checked, not guessed: the
 * first stack word from sp up (ST_UNW_SCAN_WORDS at most) that points
 * into a module with CFI just after a call instruction that reaches this
 * frame's code:
 *  - a direct call (E8) whose target lies in the frame's own stretch
 *    without CFI, at or below its pc (the function it is in: the stretch is
 *    the function's range where no symbol bounds it, as in a stripped
 *    library's assembly), or in a .plt entry (an ST_UNW_PLT row: the GOT's
 *    target is not known here, so as an indirect call below);
 *  - an indirect call (FF /2: through a function pointer, as x264's C code
 *    calls its assembly) only from code with CFI (a row at the return
 *    address) in the frame's own mapping, whose frame the walk then checks
 *    by its rows. Its target cannot be checked: a stale return address
 *    left below the real one in the frame's unwritten stack (an earlier
 *    call's) could pass the call check. On ffmpeg, printf's (libc's
 *    indirect calls into its stream functions) did, through a stale chain
 *    of printf's frames that ended at main as the real one does: 15 of
 *    8,500 samples before the same-mapping rule. Preferring a direct
 *    candidate higher up instead took calls into other functions of the
 *    same stretch (a stripped library's assembly is one stretch): 97% of
 *    the stacks complete fell to 90.6%. One from another mapping's code
 *    with CFI stops the scan (2, below): it may be the real caller (qsort's
 *    of a comparator without CFI, sampled in its prologue), and passing
 *    over it took _start's call of __libc_start_main for the comparator's
 *    caller (qsort_nocfi: 1-4% of the samples; ffmpeg's complete stacks
 *    did not change, 96.6-97.1%);
 *  - every candidate's walk must hold up (st_unw_trial()).
 * st_unw_candidate(): 1 when ra at slot passes, 0 when not, 2 when a
 * call reaches the frame but the walk from it does not hold up, or when
 * it is an indirect call from another mapping (not any_module) (the scan
 * stops there: further up, _start's call of __libc_start_main passes
 * every check and would skip the real callers, as it did above an
 * assembly leaf that had zeroed rbp, which its frame-pointer caller
 * needed), -1 when ra is no address in a module with CFI (no code read);
 * any_module: an indirect call from another mapping too. st_unw_scan(): the
 * slot into *slot, the address into *ra; false when none passes. */
static inline int st_unw_candidate(struct st_unw_state *s, const struct st_unw_native_in *in,
				   const struct st_unwind_map *pm, const struct st_unwind_row *gap,
				   __u64 slot, __u64 ra, bool any_module)
{
	__u64 pc = s->ip - (s->exact ? 0 : 1), target = 0;
	__u8 code[ST_CALL_MAX_LEN];
	const struct st_unwind_map *m;
	const struct st_unwind_row *r, *tr;
	enum st_call_kind kind;

	if (ra - ST_USER_MIN >= ST_USER_END - ST_USER_MIN)
		return -1;
	m = st_unw_find_map(s, ra);
	if (!m || !m->nrows || (m->flags & (ST_UNWIND_MAP_PENDING | ST_UNWIND_MAP_OVER_BUDGET)) ||
	    ra - m->start < ST_CALL_MAX_LEN)
		return -1;
	if (in->code(in->code_ctx, m, ra - ST_CALL_MAX_LEN, code, sizeof(code)))
		return 0;
	kind = st_call_before(code, sizeof(code), ra, &target);
	r = st_unw_find_row(&s->env, m, (__u32)(ra - 1 - m->start + m->vaddr));
	if (kind == ST_CALL_DIRECT && target - m->start < m->len) {
		tr = st_unw_find_row(&s->env, m, (__u32)(target - m->start + m->vaddr));
		if (tr && (tr->kind & ST_UNW_KIND_MASK) == ST_UNW_PLT)
			kind = ST_CALL_INDIRECT;	/* through the GOT */
	}
	if (kind == ST_CALL_DIRECT) {
		if (target > pc || target - pm->start >= pm->len)
			return 0;
		tr = st_unw_find_row(&s->env, pm, (__u32)(target - pm->start + pm->vaddr));
		if (tr != gap)
			return 0;
	} else if (kind == ST_CALL_INDIRECT) {
		if (!r || (r->kind & ST_UNW_KIND_MASK) == ST_UNW_NONE)
			return 0;
		if (m != pm && !any_module)	/* a callback's caller, maybe: */
			return 2;		/* not to be skipped */
	} else {
		return 0;
	}
	return st_unw_trial(s, slot, ra) ? 1 : 2;
}

static inline bool st_unw_scan(struct st_unw_state *s, const struct st_unw_native_in *in,
			       const struct st_unwind_map *pm, const struct st_unwind_row *gap,
			       __u64 *slot_out, __u64 *ra_out)
{
	__u32 reads = 0;

	for (__u32 k = 0; k < ST_UNW_SCAN_WORDS && reads < ST_UNW_SCAN_READS; k++) {
		__u64 slot = s->sp + 8ull * k, ra;
		int c;

		if (st_unw_read8(&s->env, slot, &ra))
			break;
		c = st_unw_candidate(s, in, pm, gap, slot, ra, false);
		reads += c >= 0;
		if (c == 2)	/* a call reaches the frame, but no walk from it: */
			break;	/* no looking further up (an outer frame's call) */
		if (c == 1) {
			*slot_out = slot;
			*ra_out = ra;
			return true;
		}
	}
	return false;
}

/* The kind of the row that covers address a (ST_UNW_NONE: code without
 * CFI, or no module with rows known here: none, pending, over budget). */
static inline __u32 st_unw_kind_at(struct st_unw_state *s, __u64 a)
{
	const struct st_unwind_map *m = st_unw_find_map(s, a);
	const struct st_unwind_row *r;

	if (!m || !m->nrows || (m->flags & (ST_UNWIND_MAP_PENDING | ST_UNWIND_MAP_OVER_BUDGET)))
		return ST_UNW_NONE;
	r = st_unw_find_row(&s->env, m, (__u32)(a - m->start + m->vaddr));
	return r ? r->kind & ST_UNW_KIND_MASK : ST_UNW_NONE;
}

/* The call instruction ending at ra, in mapping m, or (m NULL) in memory no
 * mapping covers (JIT code: st_unw_code_fn gets a mapping made of just the
 * bytes read); ST_CALL_NONE when the code is not readable. */
static inline enum st_call_kind st_unw_call_at(const struct st_unw_native_in *in,
					       const struct st_unwind_map *m, __u64 ra,
					       __u64 *target)
{
	struct st_unwind_map jit = { .start = ra - ST_CALL_MAX_LEN, .len = ST_CALL_MAX_LEN };
	__u8 code[ST_CALL_MAX_LEN];

	if (ra - ST_USER_MIN >= ST_USER_END - ST_USER_MIN || ra - ST_USER_MIN < ST_CALL_MAX_LEN)
		return ST_CALL_NONE;
	if (m && ra - m->start < ST_CALL_MAX_LEN)
		return ST_CALL_NONE;
	if (in->code(in->code_ctx, m ? m : &jit, ra - ST_CALL_MAX_LEN, code, sizeof(code)))
		return ST_CALL_NONE;
	return st_call_before(code, sizeof(code), ra, target);
}

/* Auto mode: whether the frame keeps a frame pointer after all (code
 * without CFI built with them), so that the frame-pointer step is taken
 * before any scan. The frame pointer says where the return address is (no
 * stale word to mistake for it), so what it points at need only be one:
 * rbp aligned, at or above sp, its pair in the copy, and the word above
 * the saved rbp
 *  - in code with CFI: passing st_unw_candidate()'s checks (a call that
 *    reaches the frame, an indirect one from any module: a comparator
 *    qsort calls; the walk from it holding up);
 *  - in code without CFI (V8's builtins in node's .text calling each
 *    other, through registers and the builtins table as often as
 *    directly), or in memory no mapping covers (JIT code calling them):
 *    just after a call instruction (a direct one into code without CFI
 *    or a .plt entry), read from the process, with the saved rbp further
 *    up the stack or 0 (the chain the next frame-pointer step follows).
 * Measured (kernel-notes/unwinding.md, "Assembly without CFI"): as scan
 * candidates node's builtins passed nothing (test_jit_node_perf_basic_prof:
 * hotLoop under main in 121-224 of ~570 samples); with this step first,
 * all of them. x264's assembly keeps no frame pointer and its rbp never
 * passed (of ~1,000 frames there, 156 had an rbp in the copy above sp;
 * the word above it followed no call in any): the scan walks them. */
static inline bool st_unw_fp_checked(struct st_unw_state *s, const struct st_unw_native_in *in,
				     const struct st_unwind_map *pm,
				     const struct st_unwind_row *gap)
{
	const struct st_unwind_map *m;
	__u64 ra, up, target = 0;
	enum st_call_kind kind;

	if (!s->bp || s->bp < s->sp || (s->bp & 7) || st_unw_read8(&s->env, s->bp, &up) ||
	    st_unw_read8(&s->env, s->bp + 8, &ra))
		return false;
	if (st_unw_kind_at(s, ra - 1) != ST_UNW_NONE) {
		struct st_unw_state t = *s;

		t.bp = up;	/* as the step leaves it (the caller's CFA may be rbp's) */
		return st_unw_candidate(&t, in, pm, gap, s->bp + 8, ra, true) == 1;
	}
	if (up && (up <= s->bp + 8 || (up & 7)))
		return false;
	m = st_unw_find_map(s, ra);
	kind = st_unw_call_at(in, m, ra, &target);
	if (kind == ST_CALL_DIRECT) {	/* (a .plt entry's target is not known here) */
		__u32 tk = st_unw_kind_at(s, target);

		return tk == ST_UNW_NONE || tk == ST_UNW_PLT;
	}
	return kind == ST_CALL_INDIRECT;
}

/* Walk: up to max (<= ST_MAX_USER) addresses, leaf first, into out; the
 * count. */
static inline size_t st_unw_walk_native(const struct st_unw_native_in *in, __u64 *out, __u32 max,
					struct st_unw_native_out *res)
{
	static const struct st_unwind_proc empty;
	struct st_unw_state s = {
		.out = out, .max = max, .proc = in->proc ? in->proc : &empty,
		.env = { .stack = in->stack, .stack_len = in->stack_len, .stack_base = in->sp,
			 .holes = in->holes,
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
	res->scanned = 0;
	res->scan_failed = 0;
	/* st_unw_run()'s loop, but a frame in a stretch without CFI of a
	 * module with CFI gets the checked scan instead of frame pointers
	 * (frame pointers through such code, which keeps none, found pixel
	 * data, or a zero pair that made a stack look whole), unless (auto)
	 * its frame pointer checks (st_unw_fp_checked(): V8's builtins); the
	 * walk is cut there when nothing does */
	for (__u32 i = 0, scans = 0; i <= ST_MAX_USER; i++) {
		const struct st_unwind_map *pm = NULL;
		const struct st_unwind_row *gap = NULL;
		bool scan = in->code && scans < ST_UNW_SCAN_MAX && st_unw_in_gap(&s, &pm, &gap);
		__u64 slot, ra;

		/* (auto: frame pointers where they hold up, checked the same way) */
		s.fallback = in->fallback && (!scan || st_unw_fp_checked(&s, in, pm, gap));
		if (s.fallback)
			scan = false;
		if (!st_unw_frame(i, &s))
			continue;
		if (!scan || s.stop != ST_UNW_STOP_NO_TABLE)
			break;
		scans++;
		if (st_unw_scan(&s, in, pm, gap, &slot, &ra)) {
			res->scanned++;
			s.sp = slot + 8;
			s.ip = ra;
			s.exact = false;
			st_unw_rbx_lost(&s.env);	/* (rbp: the register's, as a frame-pointer step) */
			s.stop = ST_UNW_STOP_END;
			continue;
		}
		res->scan_failed++;	/* cut there, "no CFI": no frame-pointer guess */
		break;
	}
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

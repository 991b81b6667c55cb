/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pywalk.h - CPython's own stack walked at a sample: steps 1 and 2 of
 * bpf/python.bpf.h's overview (the thread's PyThreadState, then its
 * frames, recording each frame's code object and instruction index and
 * where an evaluation loop's run of frames ends), and a reported code
 * object's location table decoded into runs of one line. One source,
 * compiled into the BPF program (bpf/python.bpf.h) and natively (the unit
 * tests walk a live interpreter through a reader callback:
 * user/collect/runtimes/python/pywalk_native.h). Every read is checked;
 * a failed read or an absurd value ends the walk, counted by reason (enum
 * st_py_stat, bpf/stacktree.h).
 *
 * Contract with the includer (as bpf/unwind_step.h's; loops and the rest
 * come from bpf/dual.h). Before including this header it defines:
 *   ST_PY_READ(w, dst, n, a)  n bytes at user address a into dst: 0, or
 *                             non-zero when unreadable
 *   ST_PY_WALK_ENV            members of struct st_py_walk its reads need
 *                             (BPF: none)
 */
#ifndef STACKTREE_PYWALK_H
#define STACKTREE_PYWALK_H

#if !defined(ST_PY_READ) || !defined(ST_PY_WALK_ENV)
#error "the includer defines ST_PY_READ and ST_PY_WALK_ENV (see the contract above)"
#endif

#include "dual.h"
#include "stacktree.h"
#include "pylines.h"
#include "pymemo.h"

#define ST_PY_MAX_THREADS 64	/* thread states searched for a thread */
#define ST_PY_FRAME_BUF 128	/* bytes of a frame's header */
#define ST_PY_WIN 1024		/* bytes read at once: a frame's header and what
				 * is below it in its page (st_py_frame_at()) */
#define ST_PY_PAGE 4096
#define ST_PY_TSTATE_BUF 192	/* bytes of a thread state read at once (its
				 * native_thread_id and cframe are in them) */

/* A CPU's guesses of threads' PyThreadState (struct st_py_scratch), before
 * py_tstates: direct-mapped by thread, each checked by the read that
 * checks any guess (st_py_tstate_is()), so a wrong or torn one only costs
 * the lookup it was to save. */
#define ST_PY_TGUESS 64
struct st_py_tguess {
	__u64 pid_tgid;
	__u64 tstate;
};

/* One walk's output, and the frame array merge's scratch. */
struct st_py_scratch {
	__u64 win[ST_PY_WIN / 8];		/* memory read around frames: */
	__u64 win_lo;				/* [win_lo, win_lo + win_len) (in map
						 * memory, not the walk's context on the
						 * stack: the verifier tracks a value
						 * there exactly, and each of a loop's
						 * values was one more state to check) */
	__u32 win_len;
	__u32 win_below;			/* 1: read below a frame too (its callers
						 * are there) */
	__u64 code[ST_PY_CODE_ROOM / 8];	/* the code object's header (its first
						 * ST_PY_CODE_BUF bytes read) */
	__u64 addr[ST_PY_MAX_FRAMES];		/* ST_PY_ADDR, leaf first */
	__u64 ident[ST_PY_MAX_FRAMES];		/* st_py_ident() of addr[]'s code objects */
	__u8 ends[ST_PY_MAX_FRAMES];		/* last frame of an evaluation call's run */
	__u64 native[ST_PY_MAX_FRAMES * 2];	/* copy of the native frames */
	__u32 n;				/* frames in addr[] */
	__u32 stop;				/* enum st_py_stat (ST_PY_STAT__MAX: complete) */
	__u64 unknown[ST_PY_MAX_FRAMES / 64];	/* bit i: addr[i]'s generation is not in
						 * the memo (a py_codes lookup, perhaps a
						 * report, gives it; addr[i]'s index is
						 * then the instruction's) */
	__u32 any_unknown;			/* a bit of unknown[] is set */
	__u32 pad1;
	struct st_py_runs runs;			/* the runs of the code object of the
						 * frame walked last (memo hit), */
	__u32 cover;				/* ... of its first `cover` units */
	__u32 pad2;
	struct st_py_runs_at rd;		/* a report's table decoded into runs */
	struct st_py_merge_at {			/* the merge's position (st_py_merge_step) */
		__u32 i, j, o;
		__u32 mark;			/* out[] after the last run (text_end set) */
		__u8 in_run, cut, unmatched;
		__u8 keep;			/* a frame since then outside the interpreter */
		__u8 again;			/* 1: this is the second pass */
		__u32 extra;			/* evaluation frames past the last run */
		__u32 skip;			/* leaf evaluation frames left native */
	} at;
	struct st_py_tguess tguess[ST_PY_TGUESS];
	struct st_py_proc proc;			/* py_procs' value for process proc_tgid
						 * (the walk's and the merge's: n > 0
						 * says this sample walked that process), */
	__u64 proc_epoch;			/* ... as of py_procs_epoch's value then */
	__u32 proc_tgid;
	__u32 proc_state;			/* enum st_py_proc_state */
	__u32 reads;				/* this walk's reads (ST_PY_READ's
						 * includer counts them; counted:
						 * ST_PY_STAT_READS), */
	__u32 reads_frames;			/* ... of frames, */
	__u32 reads_codes;			/* ... of code objects */
};

/* What st_py_scratch.proc holds. */
enum st_py_proc_state {
	ST_PY_PROC_UNREAD,	/* nothing yet */
	ST_PY_PROC_NONE,	/* proc_tgid has no py_procs entry */
	ST_PY_PROC_COPIED,	/* proc is proc_tgid's entry */
};
_Static_assert(ST_PY_MAX_FRAMES % 64 == 0, "st_py_scratch.unknown has a bit per frame");

_Static_assert(ST_PY_MAX_FRAMES * 2 >= ST_MAX_USER, "native copy holds a user walk");

/* Frame i's generation is not in the memo / is it (unknown[]'s bit i). */
static __always_inline void st_py_unknown_set(struct st_py_scratch *s, __u32 i)
{
	s->unknown[(i >> 6) & (ST_PY_MAX_FRAMES / 64 - 1)] |= 1ULL << (i & 63);
	s->any_unknown = 1;
}

static __always_inline bool st_py_unknown_is(const struct st_py_scratch *s, __u32 i)
{
	return (s->unknown[(i >> 6) & (ST_PY_MAX_FRAMES / 64 - 1)] >> (i & 63)) & 1;
}

/* The walker's context (on the caller's stack). */
struct st_py_walk {
	const struct st_py_proc *p;
	struct st_py_scratch *s;
	struct st_py_memos *memos;	/* this CPU's memo */
	__u32 reuse_epoch;	/* the memo's entries filled in it hold (pymemo.h) */
	ST_PY_WALK_ENV
	__u64 tid;		/* thread id sought */
	__u32 tgid, image;	/* the process (the code memo's key) */
	__u64 tstate;		/* found */
	__u64 frame;		/* next frame to read */
	__u64 hdr_tstate;	/* st_py_tstate_is() read this thread state, */
	__u64 hdr_cframe;	/* ... whose cframe this is */
	__u64 last_code;	/* the code object of the frame walked before */
	__u64 last_ident;	/* ... its st_py_ident() */
	__u32 last_gen1;	/* ... its generation + 1 from the memo (0: not there) */
	__u32 stop;		/* enum st_py_stat */
};

static __always_inline bool st_py_ptr_ok(__u64 a)
{
	return a && a < ST_PY_USER_MAX && !(a & 7);
}

/* A field of the frame whose header is at byte `at` of s->win (offsets
 * masked into the buffer; at + off is within it, st_py_frame_at()). */
static __always_inline __u64 st_py_f64(const struct st_py_scratch *s, __u32 at, __u16 off)
{
	return s->win[((at + off) >> 3) & (ST_PY_WIN / 8 - 1)];
}

static __always_inline __u8 st_py_f8(const struct st_py_scratch *s, __u32 at, __u16 off)
{
	return ((const __u8 *)s->win)[(at + off) & (ST_PY_WIN - 1)];
}

static __always_inline __u32 st_py_f32(const struct st_py_scratch *s, __u32 at, __u16 off)
{
	return ((const __u32 *)s->win)[((at + off) >> 2) & (ST_PY_WIN / 4 - 1)];
}

/* Where frame w->frame's header is in s->win, read when it is not there:
 * its offset, or -1 (a read fault). 3.11+ frames are pushed on a data
 * stack that grows up, a caller's below its callee: one read of the frame
 * and up to ST_PY_WIN bytes below it, never past the start of its page
 * (a page below need not be mapped), holds the headers of the next few
 * frames walked (kernel-notes/python.md, "Costs"). */
static __always_inline int st_py_frame_at(struct st_py_walk *w)
{
	struct st_py_scratch *s = w->s;
	__u64 f = w->frame, lo = f, len;

	if (f >= s->win_lo && f - s->win_lo + ST_PY_FRAME_BUF <= s->win_len)
		return (int)(f - s->win_lo);
	if (s->win_below) {
		lo = f + ST_PY_FRAME_BUF - ST_PY_WIN;
		if (f < ST_PY_WIN || lo < (f & ~(__u64)(ST_PY_PAGE - 1)))
			lo = f & ~(__u64)(ST_PY_PAGE - 1);
	}
	len = f + ST_PY_FRAME_BUF - lo;
	if (len < ST_PY_FRAME_BUF || len > ST_PY_WIN)
		return -1;
	s->reads_frames++;
	if (ST_PY_READ(w, s->win, len, lo)) {
		s->win_len = 0;
		return -1;
	}
	s->win_lo = lo;
	s->win_len = len;
	return (int)(f - lo);
}

/* A field of the code object's header in s->code (the layouts' fields
 * are within the ST_PY_CODE_BUF bytes read, tests/unit/test_pyoffsets.c;
 * the index masked into the array: a compare clang may move where the
 * verifier loses it, as it did). */
static __always_inline __u64 st_py_hdr64(const __u64 *hdr, __u16 off)
{
	return hdr[(off >> 3) & (ST_PY_CODE_ROOM / 8 - 1)];
}

static __always_inline __u64 st_py_c64(const struct st_py_scratch *s, __u16 off)
{
	return st_py_hdr64(s->code, off);
}

static __always_inline __u32 st_py_c32(const struct st_py_scratch *s, __u16 off)
{
	return ((const __u32 *)s->code)[(off >> 2) & (ST_PY_CODE_ROOM / 4 - 1)];
}

/* What tells two code objects at one address apart (after the first was
 * freed), from the header in s->code: the addresses of the objects it
 * owns (constants, names, exception table, file name, qualified name,
 * location table) and its first line. A new object has them all again
 * only if each was freed and handed out again in the same place, and none
 * of them changes in an object's life. */
static __always_inline __u64 st_py_ident(const struct st_py_scratch *s, const struct st_py_layout *l)
{
	__u64 h = st_hash_mix(0, st_py_c64(s, l->code_consts));

	h = st_hash_mix(h, st_py_c64(s, l->code_consts + 8));
	h = st_hash_mix(h, st_py_c64(s, l->code_consts + 16));
	h = st_hash_mix(h, st_py_c64(s, l->code_filename));
	h = st_hash_mix(h, st_py_c64(s, l->code_qualname));
	h = st_hash_mix(h, st_py_c64(s, l->code_linetable));
	return st_hash_mix(h, st_py_c32(s, l->code_firstlineno));
}


/* Thread-state search: one thread state per step. */
ST_CB long st_py_thread_step(__u32 i, void *ctx)
{
	struct st_py_walk *w = ctx;
	__u64 tid = 0, next = 0;

	(void)i;
	if (!st_py_ptr_ok(w->tstate)) {
		w->stop = w->tstate ? ST_PY_STAT_BAD_VALUE : ST_PY_STAT_NO_THREAD;
		return 1;
	}
	if (ST_PY_READ(w, &tid, sizeof(tid), w->tstate + w->p->l.tstate_native_tid)) {
		w->stop = ST_PY_STAT_READ_FAULT;
		return 1;
	}
	if (tid == w->tid)
		return 1;	/* found: w->stop stays ST_PY_STAT__MAX */
	if (ST_PY_READ(w, &next, sizeof(next), w->tstate + w->p->l.tstate_next)) {
		w->stop = ST_PY_STAT_READ_FAULT;
		return 1;
	}
	if (next == w->tstate) {
		w->stop = ST_PY_STAT_BAD_VALUE;
		return 1;
	}
	w->tstate = next;
	return 0;
}

/* Whether tstate (a cached guess) is the thread's: its native_thread_id,
 * read with its cframe in one read (kept for st_py_walk_frames()). */
static __always_inline bool st_py_tstate_is(struct st_py_walk *w, __u64 tstate)
{
	const struct st_py_layout *l = &w->p->l;
	const __u64 *hdr = w->s->win;

	w->hdr_tstate = 0;
	if (!st_py_ptr_ok(tstate) || ST_PY_READ(w, w->s->win, ST_PY_TSTATE_BUF, tstate) ||
	    hdr[(l->tstate_native_tid >> 3) & (ST_PY_WIN / 8 - 1)] != w->tid)
		return false;
	w->hdr_tstate = tstate;
	w->hdr_cframe = hdr[(l->tstate_cframe >> 3) & (ST_PY_WIN / 8 - 1)];
	return true;
}

/* Find the thread's PyThreadState by walking the main interpreter's list:
 * its address, or 0 (w->stop says why). */
static __always_inline __u64 st_py_find_tstate(struct st_py_walk *w)
{
	__u64 interp = 0;

	w->stop = ST_PY_STAT__MAX;
	w->tstate = 0;
	if (ST_PY_READ(w, &interp, sizeof(interp), w->p->runtime + w->p->l.runtime_interp_head) ||
	    !st_py_ptr_ok(interp)) {
		w->stop = ST_PY_STAT_READ_FAULT;
		return 0;
	}
	if (ST_PY_READ(w, &w->tstate, sizeof(w->tstate), interp + w->p->l.interp_threads_head)) {
		w->stop = ST_PY_STAT_READ_FAULT;
		return 0;
	}
	if ((__u32)st_loop(ST_PY_MAX_THREADS, st_py_thread_step, w) >= ST_PY_MAX_THREADS &&
	    w->stop == ST_PY_STAT__MAX)
		w->stop = ST_PY_STAT_NO_THREAD;	/* more threads than searched */
	return w->stop == ST_PY_STAT__MAX ? w->tstate : 0;
}

/* Frame walk: one _PyInterpreterFrame. */
static __always_inline long st_py_frame_one(struct st_py_walk *w)
{
	const struct st_py_layout *l = &w->p->l;
	struct st_py_scratch *s = w->s;
	__u64 code, prev, instr, base, idx = 0, ident, addr;
	const struct st_py_memo *m;
	__u32 n = s->n;
	int at;
	__u8 ends;

	if (!w->frame)
		return 1;	/* the outermost frame was read: complete */
	if (!st_py_ptr_ok(w->frame)) {
		w->stop = ST_PY_STAT_BAD_VALUE;
		return 1;
	}
	if (n >= ST_PY_MAX_FRAMES) {
		w->stop = ST_PY_STAT_TRUNCATED;
		return 1;
	}
	at = st_py_frame_at(w);
	if (at < 0) {
		w->stop = ST_PY_STAT_READ_FAULT;
		return 1;
	}
	code = st_py_f64(s, at, l->frame_code);
	prev = st_py_f64(s, at, l->frame_previous);
	if (prev == w->frame || !st_py_ptr_ok(code)) {
		w->stop = ST_PY_STAT_BAD_VALUE;
		return 1;
	}
	if (l->owner_cstack != ST_PY_NO_OFF && st_py_f8(s, at, l->frame_owner) == l->owner_cstack) {
		/* a C-stack shim (3.12+): not a Python frame; the run below it
		 * ends with the frame walked before */
		if (n > 0)
			s->ends[(n - 1) & (ST_PY_MAX_FRAMES - 1)] = 1;
		w->frame = prev;
		return 0;
	}
	if (code != w->last_code) {
		/* (else recursion: the object its caller runs, live, both
		 * frames holding it: its type, identity and memo entry
		 * are the caller's) */
		ident = 0;
		if (w->p->code_type) {
			/* one read for the type and the identity (cost measured
			 * in kernel-notes/python.md, "An address reused ...") */
			s->reads_codes++;
			if (ST_PY_READ(w, s->code, ST_PY_CODE_BUF, code)) {
				w->stop = ST_PY_STAT_READ_FAULT;
				return 1;
			}
			if (st_py_c64(s, l->object_type) != w->p->code_type) {
				w->stop = ST_PY_STAT_BAD_VALUE;
				return 1;
			}
			ident = st_py_ident(s, l);
		}
		w->last_code = code;
		w->last_ident = ident;
		m = w->memos ? st_py_memo_get(w->memos, w->tgid, w->image, code, ident,
						    w->reuse_epoch) : NULL;
		w->last_gen1 = m ? m->gen1 : 0;
		s->cover = m ? m->cover : 0;
		if (m)
			s->runs = m->runs;
	}
	ident = w->last_ident;
	if (l->frame_lasti != ST_PY_NO_OFF) {
		/* 3.10: f_lasti, the index of the instruction running (or
		 * the call being made), -1 before the first; and one
		 * evaluation call per frame: each frame ends its run */
		__s32 lasti = (__s32)st_py_f32(s, at, l->frame_lasti);

		idx = lasti > 0 ? (__u64)lasti : 0;
		ends = 1;
	} else {
		/* 3.11, 3.12: prev_instr is the instruction running (or the
		 * call being made; 3.12: its last inline cache unit, which
		 * the location table gives the call's line); a frame not
		 * started yet points one before the first. 3.13's
		 * instr_ptr: the same unit while it runs (CPython's own
		 * lasti is instr_ptr - code in 3.13, prev_instr - code
		 * before), the first one in a frame not started. */
		instr = st_py_f64(s, at, l->frame_prev_instr);
		base = code + l->code_adaptive;
		if (instr >= base)
			idx = (instr - base) >> 1;
		ends = l->frame_is_entry != ST_PY_NO_OFF && st_py_f8(s, at, l->frame_is_entry) != 0;
	}
	addr = ST_PY_ADDR(code, idx);
	if (w->last_gen1)
		addr = st_py_addr_key(addr, w->last_gen1 - 1, &s->runs, s->cover);
	else
		st_py_unknown_set(s, n);
	s->addr[n & (ST_PY_MAX_FRAMES - 1)] = addr;
	s->ident[n & (ST_PY_MAX_FRAMES - 1)] = ident;
	s->ends[n & (ST_PY_MAX_FRAMES - 1)] = ends;
	s->n = n + 1;
	w->frame = prev;
	return 0;
}

/* Two frames a loop step: a step's call and return cost about as much as
 * a frame's work here (kernel-notes/python.md, "Costs"). */
ST_CB long st_py_frame_step(__u32 i, void *ctx)
{
	(void)i;
	return st_py_frame_one(ctx) || st_py_frame_one(ctx);
}

/* Walk the Python stack of the thread whose state is tstate into w->s
 * (addr[], ends[], n; stop = why it ended, ST_PY_STAT__MAX: complete). */
static __always_inline void st_py_walk_frames(struct st_py_walk *w, __u64 tstate)
{
	const struct st_py_layout *l = &w->p->l;
	__u64 cf = 0;

	w->s->n = 0;
	if (w->s->any_unknown) {
		__u32 k;

		for (k = 0; k < ST_PY_MAX_FRAMES / 64; k++)
			w->s->unknown[k] = 0;
		w->s->any_unknown = 0;
	}
	w->stop = ST_PY_STAT__MAX;
	w->frame = 0;
	w->s->win_len = 0;
	/* 3.10's PyFrameObjects are objects of their own, anywhere */
	w->s->win_below = l->frame_lasti == ST_PY_NO_OFF;
	w->last_code = 0;
	w->last_ident = 0;
	w->last_gen1 = 0;
	if (w->hdr_tstate == tstate && tstate)
		cf = w->hdr_cframe;
	else if (ST_PY_READ(w, &cf, sizeof(cf), tstate + l->tstate_cframe)) {
		w->stop = ST_PY_STAT_READ_FAULT;
		goto out;
	}
	if (l->cframe_current_frame != ST_PY_NO_OFF) {
		if (!st_py_ptr_ok(cf)) {
			w->stop = cf ? ST_PY_STAT_BAD_VALUE : ST_PY_STAT_NO_FRAME;
			goto out;
		}
		if (ST_PY_READ(w, &w->frame, sizeof(w->frame), cf + l->cframe_current_frame)) {
			w->stop = ST_PY_STAT_READ_FAULT;
			goto out;
		}
	} else {
		w->frame = cf;
	}
	if (!w->frame) {
		w->stop = ST_PY_STAT_NO_FRAME;
		goto out;
	}
	/* one more step than frames: the step after the last sees frame 0;
	 * a frame left when the steps ran out: more than the walk takes (the
	 * step itself stops at ST_PY_MAX_FRAMES, a 3.12+ shim takes a step) */
	st_loop(ST_PY_MAX_FRAMES / 2 + 1, st_py_frame_step, w);
	if (w->frame && w->stop == ST_PY_STAT__MAX)
		w->stop = ST_PY_STAT_TRUNCATED;
out:
	w->s->stop = w->stop;
}


/* A location table into runs of one line, one entry a step (s->rd, over
 * the table's bytes object in s->win). */
struct st_py_runs_ctx {
	struct st_py_scratch *s;	/* (a loop's context is on the stack) */
};

ST_CB long st_py_runs_cb(__u32 i, void *ctx)
{
	struct st_py_scratch *s = ((struct st_py_runs_ctx *)ctx)->s;

	(void)i;
	return st_py_runs_step(&s->rd, (const __u8 *)s->win);
}

_Static_assert(ST_PY_WIN >= ST_PY_LT_BUF, "a location table is decoded in s->win");

/* The runs of one line (pylines.h) of a code object whose first line is
 * firstlineno and whose location table's bytes object (its first len
 * bytes, a copy) is in s->win, into *seen (cover 0: none; 3.10's table is
 * not a location table). */
static __always_inline void st_py_runs_decode(struct st_py_scratch *s,
					      const struct st_py_layout *l, __u32 len,
					      __u32 firstlineno, struct st_py_code_seen *seen)
{
	struct st_py_runs_ctx c = { .s = s };
	__u64 size;
	__u32 n;

	seen->cover = 0;
	if (l->version < 0x030b || l->bytes_data >= len || len > ST_PY_LT_BUF)
		return;
	size = s->win[(l->bytes_size >> 3) & (ST_PY_WIN / 8 - 1)];
	n = len - l->bytes_data;
	if (size < n)
		n = (__u32)size;
	st_py_runs_begin(&s->rd, l->bytes_data, n, size > n, firstlineno);
	st_loop(ST_PY_RUN_UNITS, st_py_runs_cb, &c);
	seen->runs = s->rd.runs;
	seen->cover = (__u16)st_py_runs_cover(&s->rd);
}

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pymerge.h - step 3 of bpf/python.bpf.h's overview: a sample's Python
 * frames (walked by bpf/pywalk.h into struct st_py_scratch) merged into its
 * native frames, leaf first: each native frame inside
 * _PyEval_EvalFrameDefault is replaced by the Python frames that call
 * runs; 3.10: the interpreter's own frames between two runs (one Python
 * frame calling the next through C) are dropped. A Python frame goes into
 * the frame array tagged with ST_PY_TAG. One source, compiled into the BPF
 * program (bpf/python.bpf.h: samples folded there) and natively (the
 * daemon merges the samples it unwinds late,
 * user/collect/runtimes/python/pymerge.c; tests/unit/test_pymerge.c). No
 * memory is read: it needs only bpf/dual.h.
 */
#ifndef STACKTREE_PYMERGE_BPF_H
#define STACKTREE_PYMERGE_BPF_H

#include "dual.h"
#include "pywalk.h"

/* The merge: native frames (leaf first, s->native[0..un)) and Python
 * frames (s->addr[0..n)) into out[0..max), leaf first. Its position (where
 * it is in each array) is kept in the scratch map's value, not in this
 * context on the stack: the verifier knows a counter on the stack exactly,
 * so each of the callback's 193 possible runs was another state to verify
 * (on_timer_fp: ~100,000 of its 142,000 instructions); read from map
 * memory it is any value, the first run's state covers all the others
 * (kernel-notes/README.md, "Start-up and verifier budgets"). */
struct st_py_merge {
	struct st_py_scratch *s;
	__u64 *out;
	__u64 eval_start, eval_end, cold_start, cold_end;
	__u64 text_start, text_end;	/* (st_py_proc) 0: keep every native frame */
	__u32 un, max;
};

/* Whether native frame a is in the evaluation loop (a return address may
 * be the function's end, a call as its last instruction: end inclusive). */
static __always_inline bool st_py_is_eval(const struct st_py_merge *m, __u64 a)
{
	return (a >= m->eval_start && a <= m->eval_end) || (a >= m->cold_start && a <= m->cold_end);
}

/* Put v at the merged stack's next place: 1 when the merge is to stop
 * (the stack is full). A full first pass of a whole Python stack goes on
 * without writing, to count the evaluation frames left over at the root
 * (at->extra). */
static __always_inline long st_py_merge_put(struct st_py_merge *m, __u64 v)
{
	struct st_py_merge_at *at = &m->s->at;

	if (at->o < m->max) {
		m->out[at->o & (ST_PY_MAX_FRAMES * 2 - 1)] = v;
		at->o++;
		return 0;
	}
	at->cut = 1;
	return at->again || m->s->stop != ST_PY_STAT__MAX;
}

/* A merge pass from the leaf, its first leaf evaluation frames (skip)
 * left native: 0 in the first pass, the evaluation frames the first
 * left over in the second (the only one that starts with some). */
static __always_inline void st_py_merge_begin(struct st_py_merge_at *at, __u32 skip)
{
	at->i = at->j = at->o = at->mark = 0;
	at->in_run = at->cut = at->unmatched = 0;
	at->keep = 1;		/* the native frames before the first run stay */
	at->again = skip != 0;
	at->extra = 0;
	at->skip = skip;
}

static __always_inline long st_py_merge_one(struct st_py_merge *m)
{
	struct st_py_scratch *s = m->s;
	struct st_py_merge_at *at = &s->at;
	__u64 a;

	if (at->in_run) {
		__u32 j = at->j & (ST_PY_MAX_FRAMES - 1);

		if (st_py_merge_put(m, s->addr[j] | ST_PY_TAG))
			return 1;
		at->j++;
		if (s->ends[j] || at->j >= s->n) {
			at->in_run = 0;
			at->mark = at->o;
			at->keep = 0;
		}
		return 0;
	}
	if (at->i >= m->un) {
		/* A whole Python stack with evaluation frames left over at
		 * the root: the sample was inside an evaluation call that
		 * had not made its frame current yet (or no longer had: its
		 * prologue and epilogue), at the leaf. Merged again with
		 * that many leaf evaluation frames left native, so that the
		 * runs pair from the root (before, every run went one
		 * evaluation frame too deep: pyphases.py's <module> under a
		 * generator's gen_send_ex2). A Python stack cut at its root
		 * (a stopped walk) keeps pairing from the leaf, its leaf's
		 * frames in place. */
		if (at->extra && !at->again && s->stop == ST_PY_STAT__MAX) {
			st_py_merge_begin(at, at->extra);
			return 0;
		}
		return 1;
	}
	a = s->native[at->i & (ST_PY_MAX_FRAMES * 2 - 1)];
	at->i++;
	if (st_py_is_eval(m, a)) {
		if (at->skip) {
			at->skip--;	/* an evaluation call not running its frame yet */
		} else if (at->j < s->n) {
			/* 3.10: the interpreter's frames since the last run were
			 * the call from one Python frame into the next (not
			 * once full: the first pass only counts from there) */
			if (!at->keep && at->mark <= at->o && !at->cut)
				at->o = at->mark;
			at->in_run = 1;
			return 0;
		} else {
			at->extra++;	/* no run left for it */
		}
		at->unmatched = 1;	/* kept as the native frame */
	}
	if (a < m->text_start || a >= m->text_end)
		at->keep = 1;		/* C code of its own (an extension, ctypes) */
	return st_py_merge_put(m, a);
}

/* Two frames a loop step (as st_py_frame_step()). */
ST_CB long st_py_merge_step(__u32 k, void *ctx)
{
	(void)k;
	return st_py_merge_one(ctx) || st_py_merge_one(ctx);
}

/* Copy n (<= ST_PY_MAX_FRAMES * 2) frames, src to dst (two arrays of that
 * room): a loop's callback, 8 frames a step. A bounded loop here (it
 * copied up to 254 frames) was verified frame by frame, its cost growing
 * with the depth limit (kernel-notes/README.md, "Stack depth"). */
struct st_py_copy {
	__u64 *dst;
	const __u64 *src;
	__u32 n;
};

ST_CB long st_py_copy_step(__u32 k, void *ctx)
{
	struct st_py_copy *c = ctx;
	__u32 i = k * 8, e;

	for (e = 0; e < 8; e++, i++) {
		if (i >= c->n)
			return 1;
		ST_AT(c->dst, i, ST_PY_MAX_FRAMES * 2) = ST_AT(c->src, i, ST_PY_MAX_FRAMES * 2);
	}
	return 0;
}

static __always_inline void st_py_copy_frames(__u64 *dst, const __u64 *src, __u32 n)
{
	struct st_py_copy c = { .dst = dst, .src = src, .n = n };

	st_loop((ST_PY_MAX_FRAMES * 2 + 7) / 8, st_py_copy_step, &c);
}

/* Merge w->s's Python frames into frames[0..un) (leaf first, at most max
 * entries, max <= ST_PY_MAX_FRAMES * 2): the new count. *cut: frames at the
 * root did not fit; *unmatched: evaluation frames and Python runs did not
 * pair up (left-over Python frames are dropped, left-over evaluation
 * frames stay native). */
static __always_inline __u32 st_py_merge(struct st_py_scratch *s, const struct st_py_proc *p,
					 __u64 *frames, __u32 un, __u32 max, bool *cut,
					 bool *unmatched)
{
	struct st_py_merge m = {
		.s = s, .out = frames, .eval_start = p->eval_start, .eval_end = p->eval_end,
		.cold_start = p->cold_start ? p->cold_start : 1, .cold_end = p->cold_end,
		.text_start = p->text_start, .text_end = p->text_end,
		.max = max > ST_PY_MAX_FRAMES * 2 ? ST_PY_MAX_FRAMES * 2 : max,
	};
	__u32 o;

	if (un > ST_PY_MAX_FRAMES * 2)
		un = ST_PY_MAX_FRAMES * 2;
	st_py_copy_frames(s->native, frames, un);
	m.un = un;
	/* runs pair with evaluation frames from the leaf; a second pass
	 * when the first left evaluation frames over (st_py_merge_one()):
	 * cheaper than counting both first (a count loop cost ~400 ns a
	 * sample, where the second pass runs in ~1% of them) */
	st_py_merge_begin(&s->at, 0);
	st_loop(ST_PY_MAX_FRAMES * 3 + 2, st_py_merge_step, &m);
	*cut = s->at.cut;
	*unmatched = s->at.unmatched || (s->at.j < s->n && !s->at.cut);
	o = s->at.o;
	return o <= m.max ? o : m.max;
}

#endif

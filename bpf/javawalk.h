/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * javawalk.h - HotSpot's interpreted frames found at a sample: for each
 * frame whose pc is in the template interpreter's code (struct
 * st_java_proc), its Method* and bytecode index, kept as a Java frame's
 * node address (ST_JAVA_ADDR, bpf/stacktree.h). One source, compiled
 * into the BPF program and natively (the unit tests walk a live JVM's
 * stopped thread through a reader callback:
 * user/collect/runtimes/java/javawalk_native.h). Every read is checked;
 * every stop, and every frame not kept, counted by reason (enum
 * st_java_stat).
 *
 * The frames: HotSpot's x86-64 interpreter keeps rbp as each interpreted
 * frame's frame pointer ([fp] the caller's fp, [fp + 8] the return
 * address), the frame's Method* at fp + 8 * frame_method and its bytecode
 * pointer at fp + 8 * frame_bcp (frame_x86.hpp, JDK 9+: -3 and -8). The
 * bcp slot is written at each call the frame makes: in the frame that
 * runs (the sample's leaf) the live bcp is in r13, and the slot is stale.
 * A sample in the interpreter's entry or exit code, while a frame is
 * being built or torn down, finds its slots not yet (or no longer) the
 * method's: the frame fails validation and is counted, not kept; before
 * the callee's rbp is set, its caller is taken for the leaf.
 *
 * Why this walks the rbp chain itself rather than taking the native
 * unwinder's frames: the unwinder outputs return addresses only; naming a
 * frame needs its fp, which would be a parallel array of 127 fps written
 * at each native step (a store in every path of the unwinder's step, which
 * the verifier checks for each of its kinds, and 1 KiB more of scratch).
 * Walking here costs one read per frame (its slots, saved fp and return
 * address in one 80-byte read) in a bpf_loop callback the verifier checks
 * once, whatever ST_JAVA_MAX_STEPS is. In --unwind auto the native walk
 * goes through interpreted frames by rbp too, so both walks see the same
 * frames; the merge pairs them by return address (next milestone).
 *
 * Contract with the includer (as bpf/pywalk.h's):
 *   ST_JAVA_READ(w, dst, n, a)  n bytes at user address a into dst: 0, or
 *                               non-zero when unreadable
 *   ST_JAVA_WALK_ENV            members of struct st_java_walk its reads
 *                               need (BPF: none)
 */
#ifndef STACKTREE_JAVAWALK_H
#define STACKTREE_JAVAWALK_H

#if !defined(ST_JAVA_READ) || !defined(ST_JAVA_WALK_ENV)
#error "the includer defines ST_JAVA_READ and ST_JAVA_WALK_ENV (see the contract above)"
#endif

#include "dual.h"
#include "stacktree.h"

/* Words of a frame read at once: [fp - 8 * ST_JAVA_SLOTS_BELOW, fp + 16) */
#define ST_JAVA_FRAME_WORDS (ST_JAVA_SLOTS_BELOW + 2)
#define ST_JAVA_FRAME_ROOM 16	/* power of two >= ST_JAVA_FRAME_WORDS */

/* One walk's output. */
struct st_java_frames {
	__u64 addr[ST_JAVA_MAX_FRAMES];	/* ST_JAVA_ADDR, leaf first */
	__u64 fp[ST_JAVA_MAX_FRAMES];	/* each one's frame pointer */
	__u64 win[ST_JAVA_FRAME_ROOM];	/* the frame read last */
	__u32 n;			/* frames in addr[] */
	__u32 stop;			/* enum st_java_stat: why the walk ended */
};

/* The walker's context. */
struct st_java_walk {
	const struct st_java_proc *p;
	struct st_java_frames *f;
	struct st_java_counts *c;	/* counts (per CPU in BPF) */
	ST_JAVA_WALK_ENV
	__u64 pc, fp;		/* the frame walked next: its pc, frame pointer */
	__u64 leaf_bcp;		/* the interrupted r13 (the leaf's live bcp) */
	__u32 step;		/* frames walked */
	__u32 stop;
	__u64 last_method;	/* the Method* of the frame kept last, */
	__u64 last_base;	/* ... its bytecodes' start, */
	__u32 last_size;	/* ... their size */
	__u32 pad;
};

static __always_inline bool st_java_ptr_ok(__u64 a)
{
	return a && a < ST_USER_END && !(a & 7);
}

static __always_inline void st_java_count(struct st_java_walk *w, __u32 what)
{
	if (w->c && what < ST_JAVA_STAT__MAX)
		w->c->n[what]++;
}

/* The bytecodes of method (its ConstMethod's, after the object) into
 * *base and *size: 0, or -1 (not a Method: unreadable or absurd). */
static __always_inline int st_java_code_of(struct st_java_walk *w, __u64 method, __u64 *base,
					   __u32 *size)
{
	const struct st_java_layout *l = &w->p->l;
	__u64 cm = 0;
	__u16 n = 0;

	if (method == w->last_method && method) {
		*base = w->last_base;	/* recursion: its caller's */
		*size = w->last_size;
		return 0;
	}
	if (!st_java_ptr_ok(method) ||
	    ST_JAVA_READ(w, &cm, sizeof(cm), method + l->method_constmethod) || !st_java_ptr_ok(cm) ||
	    ST_JAVA_READ(w, &n, sizeof(n), cm + l->constmethod_code_size))
		return -1;
	*base = cm + l->constmethod_size;
	*size = n;
	return 0;
}

/* A frame word at slot (in words from fp, -ST_JAVA_SLOTS_BELOW .. 1) of
 * f->win, which holds [fp - 8 * ST_JAVA_SLOTS_BELOW, fp + 16). */
static __always_inline __u64 st_java_slot(const struct st_java_frames *f, int slot)
{
	return f->win[(__u32)(slot + ST_JAVA_SLOTS_BELOW) & (ST_JAVA_FRAME_ROOM - 1)];
}

/* The frame at w->fp, running w->pc: kept when the pc is the
 * interpreter's and its slots hold a method and a bcp in its bytecodes;
 * then w->pc, w->fp are its caller's. 1: stop. */
static __always_inline long st_java_frame_one(struct st_java_walk *w)
{
	const struct st_java_proc *p = w->p;
	struct st_java_frames *f = w->f;
	__u64 fp = w->fp, next, method, bcp, base = 0, lo;
	__u32 size = 0, n = f->n;
	bool interp = w->pc >= p->interp_start && w->pc < p->interp_end;

	if (!fp || !w->pc) {
		w->stop = ST_JAVA_STAT_END_ZERO;
		return 1;
	}
	if (!st_java_ptr_ok(fp) || fp < 8 * ST_JAVA_SLOTS_BELOW) {
		w->stop = ST_JAVA_STAT_END_BAD_FP;
		return 1;
	}
	if (interp && n >= ST_JAVA_MAX_FRAMES) {
		w->stop = ST_JAVA_STAT_TRUNCATED;
		return 1;
	}
	/* an interpreted frame's slots with its links; a native frame's
	 * links alone (the stack below its fp is not its) */
	lo = interp ? fp - 8 * ST_JAVA_SLOTS_BELOW : fp;
	if (ST_JAVA_READ(w, interp ? &f->win[0] : &f->win[ST_JAVA_SLOTS_BELOW],
			 interp ? 8 * ST_JAVA_FRAME_WORDS : 16, lo)) {
		w->stop = ST_JAVA_STAT_END_READ;
		return 1;
	}
	if (interp) {
		method = st_java_slot(f, p->l.frame_method);
		/* the leaf's live bcp is r13; the slot's is the last call's */
		bcp = w->step == 0 ? w->leaf_bcp : st_java_slot(f, p->l.frame_bcp);
		if (st_java_code_of(w, method, &base, &size)) {
			st_java_count(w, ST_JAVA_STAT_BAD_METHOD);
		} else {
			if ((bcp < base || bcp >= base + size) && w->step == 0)
				bcp = st_java_slot(f, p->l.frame_bcp);
			if (bcp < base || bcp >= base + size) {
				st_java_count(w, ST_JAVA_STAT_BAD_BCP);
			} else {
				f->addr[n & (ST_JAVA_MAX_FRAMES - 1)] = ST_JAVA_ADDR(method, bcp - base);
				f->fp[n & (ST_JAVA_MAX_FRAMES - 1)] = fp;
				f->n = n + 1;
				w->last_method = method;
				w->last_base = base;
				w->last_size = size;
				st_java_count(w, ST_JAVA_STAT_FRAMES);
			}
		}
	}
	next = st_java_slot(f, 0);
	w->pc = st_java_slot(f, 1);
	if (next && next <= fp) {
		w->stop = ST_JAVA_STAT_END_BAD_FP;	/* not up the stack */
		return 1;
	}
	w->fp = next;
	w->step++;
	return 0;
}

ST_CB long st_java_frame_step(__u32 i, void *ctx)
{
	(void)i;
	return st_java_frame_one(ctx);
}

/* Walk from the interrupted registers (pc, fp = rbp, r13) of a thread of
 * the JVM w->p into w->f (addr[], fp[], n; stop = why it ended), the
 * counts into w->c. */
static __always_inline void st_java_walk_frames(struct st_java_walk *w, __u64 pc, __u64 fp,
						__u64 r13)
{
	struct st_java_frames *f = w->f;

	f->n = 0;
	w->pc = pc;
	w->fp = fp;
	w->leaf_bcp = r13;
	w->step = 0;
	w->stop = ST_JAVA_STAT_END_STEPS;
	w->last_method = 0;
	w->last_base = 0;
	w->last_size = 0;
	st_java_count(w, ST_JAVA_STAT_WALKS);
	if (!(pc >= w->p->interp_start && pc < w->p->interp_end))
		st_java_count(w, ST_JAVA_STAT_LEAF_OUT);
	st_loop(ST_JAVA_MAX_STEPS, st_java_frame_step, w);
	if (f->n)
		st_java_count(w, ST_JAVA_STAT_WALKED);
	st_java_count(w, w->stop);
	f->stop = w->stop;
}

#endif

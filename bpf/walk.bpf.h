/* SPDX-License-Identifier: GPL-2.0 */
/*
 * walk.bpf.h - the stack walkers: a sample's user stack, leaf first, into
 * the per-CPU scratch (`scratch_map`): frame pointers (bpf_get_stack) in fp
 * mode, the DWARF walker of bpf/unwind.h in dwarf and auto modes, with its
 * stop reasons counted and its deferral decided (sc->defer, defer.bpf.h).
 * Each sampling program comes in two variants, _fp and _dwarf, that differ
 * in the walker only (user_stack()'s dwarf); user space loads the one the
 * --unwind mode needs (user/collect/session.c).
 */
#ifndef STACKTREE_WALK_BPF_H
#define STACKTREE_WALK_BPF_H

#include "base.bpf.h"
#include "procs.bpf.h"
#include "unwind.h"

/* The current sample, per CPU. */
#define ST_USTACK_SLOTS 1024	/* power of two > ST_MAX_USER */

struct scratch {
	__u64 ustack[ST_USTACK_SLOTS];	/* leaf first; ST_MAX_USER used */
	__u64 kstack[ST_MAX_KERNEL];	/* leaf first */
	bool utrunc;		/* dwarf/auto: the user walk stopped early */
	bool ufull;		/* fp: the walk reached ST_MAX_USER frames */
	bool defer;		/* ... for want of tables: unwind it in the daemon */
	bool force_defer;	/* in: the thread waits for its handoff (defer it anyway) */
	__u32 stop_stat;	/* ... why (ST_STAT__MAX: not counted), when deferred */
	__u32 java_tgid;	/* fp: the process java_has is of (java_seen()), */
	__u32 java_has;		/* ... 1 if it is in java_procs, */
	__u64 java_epoch;	/* ... as of java_procs_epoch's value then */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct scratch);
	__uint(max_entries, 1);
} scratch_map SEC(".maps");

/* Tables missing for tgid (DWARF unwinding): the daemon reads its maps. */
static __always_inline void notify_unwind(__u32 tgid, __u32 tid)
{
	emit_event(ST_EV_UNWIND, tgid, tid);
}

/* --unwind dwarf|auto: bpf/unwind.h from the task's user registers. */
static __always_inline long dwarf_stack(struct scratch *sc, bool may_defer)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct st_unwind_result res;
	__u32 stat;
	long n;

	n = st_unwind_user(task, (struct pt_regs *)bpf_task_pt_regs(task), sc->ustack,
			   ST_MAX_USER, unwind_mode == ST_UNWIND_AUTO, may_defer ? 0 : 1, &res);
	sc->utrunc = n > 0 && res.stop != ST_UNW_STOP_END;
	stat = res.no_proc ? ST_STAT_UNW_NO_PROC : st_unwind_stop_stat(res.stop);
	if (!(sc->utrunc || res.no_proc))
		stat = ST_STAT__MAX;
	/* went where tables were missing (what frame pointers found there,
	 * even a "complete" stack, is a guess in code built without them):
	 * the daemon unwinds it later */
	/* auto: a targeted process's walk cut short too (not at the depth
	 * bound; not a JVM's, whose deep stacks outgrow the copy and whose
	 * thread would be deferred whole until its handoff): the daemon's
	 * walk scans past code without CFI, checked
	 * (user/collect/unwind/unwind_native.h, st_unw_scan()) */
	sc->defer = defer_unwind && may_defer && n > 0 &&
		    (sc->force_defer || res.no_proc || res.pending || res.miss ||
		     (filter_targets && unwind_mode == ST_UNWIND_AUTO && sc->utrunc &&
		      res.stop != ST_UNW_STOP_DEPTH && !res.java));
	sc->stop_stat = stat;
	if (stat < ST_STAT__MAX && !sc->defer)
		stat_inc(stat);
	if (res.fp_frames && !sc->defer) {	/* else the daemon's walk counts them */
		__u32 k = ST_STAT_UNW_FP_FRAMES;
		__u64 *v = bpf_map_lookup_elem(&stats, &k);

		if (v)
			*v += res.fp_frames;
	}
	if (res.over_budget)
		stat_inc(ST_STAT_UNW_OVER_BUDGET);
	if (res.pending)
		stat_inc(ST_STAT_UNW_PENDING);
	if (res.request)
		notify_unwind(task->tgid, task->pid);
	return n;
}

/* The frame-pointer walk's frames up to the first that is no user
 * address (the kernel's walk checks the frame pointers, not what they
 * point at: 0xebebebebebebebeb read where pixel data lay became a "return
 * address"): ST_FP_END_STEP frames a step. */
struct fp_user_end {
	struct scratch *sc;
	__u32 n;	/* frames walked; then the user ones */
};

#define ST_FP_END_STEP 8	/* frames a step: a step per frame cost 14 ns a frame */

static long fp_user_end_step(__u32 k, void *data)
{
	struct fp_user_end *c = data;

#pragma unroll
	for (__u32 j = 0; j < ST_FP_END_STEP; j++) {
		__u32 i = k * ST_FP_END_STEP + j;

		if (i >= c->n)
			return 1;
		if (c->sc->ustack[i & (ST_USTACK_SLOTS - 1)] >= ST_USER_END) {
			c->n = i;
			return 1;
		}
	}
	return 0;
}

/* The frame-pointer walk in BPF, for a stack deeper than bpf_get_stack()
 * walks (kernel.perf_event_max_stack: 127 by default, a system-wide
 * setting stacktreed leaves alone). The kernel's walk, a frame a step:
 * the saved frame pointer and the return address above it, from the
 * user registers' rbp, until a read fails or the pointer leaves user
 * space. Only stacks that filled the kernel's walk take it (they walk
 * their first frames twice): shallow ones cost one comparison more
 * (kernel-notes/README.md, "Stack depth"). */
struct fp_walk {
	struct scratch *sc;
	__u64 fp;
	__u32 n;	/* frames in sc->ustack */
};

/* Frame i + 1 (frame 0 is the ip). The count is written from i, which the
 * verifier sees as any value, not incremented: a counter on the stack it
 * knows exactly, each of its values one more state to check (it went
 * through all 768 and gave up). */
static long fp_walk_step(__u32 i, void *data)
{
	struct fp_walk *w = data;
	__u64 fr[2];	/* saved rbp, return address */
	__u32 n = i + 1;

	if (n >= ST_MAX_USER || !w->fp || w->fp >= ST_USER_END - sizeof(fr) ||
	    bpf_probe_read_user(fr, sizeof(fr), (const void *)w->fp))
		return 1;
	w->sc->ustack[n & (ST_USTACK_SLOTS - 1)] = fr[1];
	w->n = n + 1;
	w->fp = fr[0];
	return 0;
}

static __always_inline long fp_walk_deep(struct scratch *sc)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct fp_walk w = { .sc = sc, .n = 1 };

	sc->ustack[0] = BPF_CORE_READ(regs, ip);
	w.fp = BPF_CORE_READ(regs, bp);
	bpf_loop(ST_MAX_USER, fp_walk_step, &w, 0);
	return w.n;
}

/* Whether process tgid has a JVM (java_procs): the CPU's memo while the
 * daemon has changed no entry since (java_procs_epoch read first: an entry
 * pushed after the read makes the next sample look again), else looked
 * up. A non-Java process's samples paid a hash lookup each (issue 37 item
 * 2: kernel-notes/README.md, "The Java check's memo"). */
static __always_inline bool java_seen(struct scratch *sc, __u32 tgid)
{
	__u64 epoch = *(volatile __u64 *)&java_procs_epoch;

	if (sc->java_tgid != tgid || sc->java_epoch != epoch) {
		sc->java_has = bpf_map_lookup_elem(&java_procs, &tgid) != NULL;
		sc->java_tgid = tgid;
		sc->java_epoch = epoch;
	}
	return sc->java_has;
}

/* --unwind fp: bpf_get_stack(), on in BPF past the kernel's limit, cut at
 * the first frame that is no user address. */
static __always_inline long fp_stack(void *ctx, struct scratch *sc, bool timer)
{
	struct fp_user_end c = { .sc = sc };
	long r;

	r = bpf_get_stack(ctx, sc->ustack, ST_MAX_USER * sizeof(__u64), BPF_F_USER_STACK);
	if (timer)
		part_mark(ST_PART_WALK);
	if (r < 0)
		return r;
	/* the kernel's walk stopped at its limit: on in BPF */
	if ((r >> 3) >= fp_kernel_max && fp_kernel_max < ST_MAX_USER)
		r = fp_walk_deep(sc) << 3;
	sc->ufull = (r >> 3) >= ST_MAX_USER;
	/* the kernel's walk has no Java rule: a JVM's samples are counted */
	if (interpreters & ST_INTERP_JAVA) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;

		if (java_seen(sc, tgid))
			st_java_count(ST_JAVA_STAT_FP_MODE);
	}
	c.n = (__u32)(r >> 3);	/* bytes to frames (no signed division in BPF) */
	_Static_assert(ST_MAX_USER % ST_FP_END_STEP == 0, "whole steps");
	bpf_loop(ST_MAX_USER / ST_FP_END_STEP, fp_user_end_step, &c, 0);
	if (c.n < (__u32)(r >> 3)) {
		/* cut there, under [truncated] (path_user()) */
		sc->utrunc = true;
		stat_inc(ST_STAT_UNW_BAD_FRAME);
		return c.n;
	}
	return r >> 3;
}

/* The interrupted thread's user stack, leaf first, into sc->ustack: the
 * number of frames, or a negative error. Frame pointers (bpf_get_stack) or
 * CFI (dwarf, auto); sc->utrunc: a walk stopped early (DWARF: for its
 * reason; frame pointers: at what was no user address).
 * dwarf: a constant of the calling program (its fp or dwarf variant), not
 * the unwind_mode setting: an fp program then has no call to the DWARF
 * walker at all, so the kernel neither loads nor verifies it, whatever
 * its version (kernels before lazy verification of global functions check
 * every one the program contains). may_defer: the caller is the timer
 * program (its parts are timed when benchmarking, parts.bpf.h). */
static __always_inline long user_stack(void *ctx, struct scratch *sc, bool dwarf, bool may_defer)
{
	long r;

	if (may_defer)
		part_mark(ST_PART_THREAD);
	sc->utrunc = false;
	sc->ufull = false;
	sc->defer = false;
	if (dwarf)
		r = dwarf_stack(sc, may_defer);
	else
		r = fp_stack(ctx, sc, may_defer);
	if (may_defer)
		part_mark(dwarf ? ST_PART_WALK : ST_PART_WALK_CHECK);
	return r;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * walk.bpf.h - the stack walkers: a sample's user stack, leaf first, into
 * the per-CPU scratch (`scratch_map`): frame pointers (fp_stack(), through
 * the DWARF walker's stack window) in fp mode, the DWARF walker of
 * bpf/unwind.h in dwarf and auto modes, with its stop reasons counted and
 * its deferral decided (sc->defer, defer.bpf.h).
 * Each sampling program comes in two variants, _fp and _dwarf, that differ
 * in the walker only (user_stack()'s dwarf); user space loads the one the
 * --unwind mode needs (user/collect/session.c).
 */
#ifndef STACKTREE_WALK_BPF_H
#define STACKTREE_WALK_BPF_H

#include "base.bpf.h"
#include "procs.bpf.h"
#include "unwind.h"
#include "thread_state.h"

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
	bool ph_ok;		/* fp, the timer: the walk added up the user frames' sums
				 * (path_sums slot 0: bpf/pathhash.h) */
	struct st_jvm_check java;	/* fp: the last process's JVM check (java_seen()) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct scratch);
	__uint(max_entries, 1);
} scratch_map SEC(".maps");

/* The sums of the path being folded (bpf/pathhash.h), per CPU: slot 0
 * the timer's (its frame-pointer walk adds up the user frames'), slot 1
 * the page-fault and sched_switch programs' (the fold adds them up: an
 * off-CPU sample is folded at its switch-in, maybe on another CPU). Not
 * in struct scratch, which an off-CPU sample keeps in its task's storage
 * until then. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_path_sums);
	__uint(max_entries, 2);
} path_sums SEC(".maps");

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

/* The frame-pointer walk in BPF (--unwind fp), the kernel's own rule
 * (perf_callchain_user(): from the user registers' rbp, each frame's saved
 * frame pointer and the return address above it, until a read fails or
 * the pointer leaves user space), a frame a bpf_loop() step, with two
 * differences: the stack is read through the DWARF walker's window
 * (bpf/unwind.h: a page's live part copied once, a frame's two words then
 * loads from it), and the walk ends at the first return address that is
 * no user address (the kernel's walk checks the frame pointers, not what
 * they point at: 0xebebebebebebebeb read where pixel data lay became a
 * "return address"), counted as a bad frame. bpf_get_stack() read each
 * frame's two words with a user access each (130-180 ns a frame on this
 * VM), stopped at kernel.perf_event_max_stack (127) frames, and its
 * result was checked for user addresses by a second pass: the fp sample
 * 0.86x (kernel-notes/README.md, "The frame-pointer walk through the
 * window"). The timer's walk also adds each frame's value to the path's
 * sums as it reads it (bpf/pathhash.h: path_sums slot 0), from which the
 * fold has the hash of every prefix without a pass of its own. */
struct fp_walk {
	struct st_unw_env env;	/* the window (env.win); nothing else of it is used */
	struct scratch *sc;
	struct st_path_sums *ps;	/* the timer's: the user frames' sums, or NULL */
	__u64 pw;		/* P^n (frame n's weight) */
	__u64 sum;		/* ps->u[n] */
	__u64 fp;
	__u32 n;	/* frames in sc->ustack */
	__u32 bad;	/* ended at a return address outside user space */
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

	if (n >= ST_MAX_USER || !w->fp || w->fp >= ST_USER_END - sizeof(fr))
		return 1;
	if (w->fp & 7) {	/* the kernel's walk reads it; the window, aligned words only */
		if (bpf_probe_read_user(fr, sizeof(fr), (const void *)w->fp))
			return 1;
	} else if (st_unw_read8(&w->env, w->fp, &fr[0]) || st_unw_read8(&w->env, w->fp + 8, &fr[1])) {
		return 1;
	}
	if (fr[1] >= ST_USER_END) {
		w->bad = 1;
		return 1;
	}
	w->sc->ustack[n & (ST_USTACK_SLOTS - 1)] = fr[1];
	if (w->ps) {	/* the path's sums as the frames come (bpf/pathhash.h) */
		w->pw *= ST_PH_P;
		w->sum += st_ph_mix(fr[1], 0) * w->pw;
		w->ps->u[n & (ST_PATH_SLOTS - 1)] = w->sum;
	}
	w->n = n + 1;
	w->fp = fr[0];
	return 0;
}

/* A 32-bit process's stack (ia32 compat: 4-byte frames): the kernel's
 * walk, bpf_get_stack(), up to kernel.perf_event_max_stack frames (a
 * stack that fills them is cut there, [truncated]); its addresses are all
 * user addresses. */
static __always_inline long fp_stack_compat(void *ctx, struct scratch *sc)
{
	long r = bpf_get_stack(ctx, sc->ustack, ST_MAX_USER * sizeof(__u64), BPF_F_USER_STACK);

	if (r < 0)
		return r;
	r >>= 3;	/* bytes to frames (no signed division in BPF) */
	sc->ufull = r >= fp_kernel_max || r >= ST_MAX_USER;
	return r;
}

/* Whether process tgid has a JVM (java_procs): memo m's answer while the
 * daemon has changed no entry since (java_procs_epoch read first: an entry
 * pushed after the read makes the next sample look again), else looked
 * up. A non-Java process's samples paid a hash lookup each (issue 37 item
 * 2: kernel-notes/README.md, "The Java check's memo"); the memo is the
 * thread's (thread_state) where there is one, else the CPU's. */
static __always_inline bool java_seen(struct st_jvm_check *m, __u32 tgid)
{
	__u64 epoch = *(volatile __u64 *)&java_procs_epoch + 1;

	if (m->tgid != tgid || m->epoch != epoch) {
		m->has = bpf_map_lookup_elem(&java_procs, &tgid) != NULL;
		m->tgid = tgid;
		m->epoch = epoch;
	}
	return m->has;
}

/* --unwind fp: the frame-pointer walk above, through the stack window of
 * the program's kind (timer: slot 0; the page-fault and sched_switch
 * programs: slot 1, as the DWARF walker's). ts: the thread's state, or
 * NULL (its Java check's memo). */
static __always_inline long fp_stack(void *ctx, struct scratch *sc, struct thread_state *ts,
				     bool timer, bool in_user)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fp_walk w = { .sc = sc, .n = 1, .pw = 1 };
	__u32 slot = timer ? 0 : 1;
	struct pt_regs *regs;
	long r;

	/* no user stack (bpf_get_stack() gives none either). The task and
	 * its registers are BTF pointers: plain loads, not a probe read each */
	if (!in_user && !st_task_has_user_stack(task)) {
		r = 0;
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		w.env.win = bpf_map_lookup_elem(&unwind_window, &slot);
		if (st_cs_compat(regs->cs) || !w.env.win) {	/* (the window: always) */
			r = fp_stack_compat(ctx, sc);
		} else {
			w.env.win->base = 0;	/* another sample's stack */
			w.env.win->floor = regs->sp - ST_UNW_RED_ZONE;
			sc->ustack[0] = regs->ip;
			w.fp = regs->bp;
			if (timer)
				w.ps = bpf_map_lookup_elem(&path_sums, &slot);
			if (w.ps)
				w.ps->u[0] = 0;
			if (sc->ustack[0] < ST_USER_END) {
				bpf_loop(ST_MAX_USER, fp_walk_step, &w, 0);
			} else {
				w.n = 0;
				w.bad = 1;
			}
			if (w.ps) {
				w.ps->un = w.n;
				w.ps->pu = w.n ? w.pw * ST_PH_P : 1;
				sc->ph_ok = true;
			}
			sc->ufull = w.n >= ST_MAX_USER;
			if (w.bad) {	/* cut there, under [truncated] (path_user()) */
				sc->utrunc = true;
				stat_inc(ST_STAT_UNW_BAD_FRAME);
			}
			r = w.n;
		}
	}
	if (timer)
		part_mark(ST_PART_WALK);
	/* the walk has no Java rule: a JVM's samples are counted */
	if (r >= 0 && (interpreters & ST_INTERP_JAVA)) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;

		if (java_seen(ts ? &ts->java : &sc->java, tgid))
			st_java_count(ST_JAVA_STAT_FP_MODE);
	}
	return r;
}

/* Whether task (a BTF pointer) is a 32-bit (ia32) process in user space
 * (its user registers' cs), whose frames are 4-byte words. */
static __always_inline bool st_task_is_compat(struct task_struct *task)
{
	return st_task_has_user_stack(task) &&
	       st_cs_compat(((struct pt_regs *)bpf_task_pt_regs(task))->cs);
}

/* The interrupted thread's user stack, leaf first, into sc->ustack: the
 * number of frames, or a negative error. Frame pointers (bpf_get_stack) or
 * CFI (dwarf, auto; a 32-bit process: the kernel's walk, as in fp mode,
 * which the daemon's walk of its deferred copies matches:
 * user/collect/unwind/fpcopy.c); sc->utrunc: a walk stopped early (DWARF: for its
 * reason; frame pointers: at what was no user address).
 * dwarf: a constant of the calling program (its fp or dwarf variant), not
 * the unwind_mode setting: an fp program then has no call to the DWARF
 * walker at all, so the kernel neither loads nor verifies it, whatever
 * its version (kernels before lazy verification of global functions check
 * every one the program contains). may_defer: the caller is the timer
 * program (its parts are timed when benchmarking, parts.bpf.h). ts: the
 * thread's state or NULL (fp_stack()). */
static __always_inline long user_stack(void *ctx, struct scratch *sc, struct thread_state *ts,
				       bool dwarf, bool may_defer, bool in_user)
{
	long r;

	if (may_defer)
		part_mark(ST_PART_THREAD);
	sc->utrunc = false;
	sc->ufull = false;
	sc->defer = false;
	sc->ph_ok = false;
	if (dwarf && st_task_is_compat(bpf_get_current_task_btf()))
		r = fp_stack_compat(ctx, sc);	/* (the CFI walk is 64-bit only) */
	else if (dwarf)
		r = dwarf_stack(sc, may_defer);
	else
		r = fp_stack(ctx, sc, ts, may_defer, in_user);
	if (may_defer)
		part_mark(dwarf ? ST_PART_WALK : ST_PART_WALK_CHECK);
	return r;
}

#endif

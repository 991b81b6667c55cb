/* SPDX-License-Identifier: GPL-2.0 */
/*
 * offcpu.bpf.h - time off the CPU (--event offcpu, --event wall): the
 * sched_switch program (on_offcpu_fp / on_offcpu_dwarf, one per walker).
 * A part of sample.bpf.c's one compilation unit.
 *
 * At a thread's switch-out the program runs in that thread's context
 * (current is prev in tp_btf/sched_switch: the tracepoint fires before the
 * switch), so the walkers of walk.bpf.h and the Python walker read its
 * registers and memory as the timer's do: its path (user frames, the
 * kernel's blocking point, the state it left in) is kept in its task
 * storage (`offcpu_pending`) with the time. At its switch-in (next, while
 * current is still the thread leaving) the time away is folded on that
 * path into the thread's tree: BASE in nanoseconds. The fold names the
 * thread by the image and comm kept at switch-out (path_view.other).
 *
 * The blocking point is the first kernel frame outside the scheduler's
 * text (__sched_text_start .. __sched_text_end), as /proc/PID/wchan names
 * it: futex_wait_queue, pipe_read, hrtimer_nanosleep, ...; without
 * --kernel it is the path's one kernel frame, with --kernel the kernel
 * frames from it outwards (the scheduler's and the tracer's own are left
 * out). Below it a leaf ST_NODE_STATE says how the thread left.
 *
 * Bounds: periods under --offcpu-min-us are not folded, switch-outs over
 * --offcpu-max-rate per CPU a second are not walked; both are counted
 * with their time (ST_STAT_OFFCPU_*). DWARF walks are not deferred to
 * the daemon here (the time is not known yet): a walk without tables
 * stops, under [truncated], its reason counted.
 */
#ifndef STACKTREE_OFFCPU_BPF_H
#define STACKTREE_OFFCPU_BPF_H

#include "base.bpf.h"
#include "threads.bpf.h"
#include "procs.bpf.h"
#include "walk.bpf.h"
#include "fold.bpf.h"
#include "python.bpf.h"

/* set by user space before load */
const volatile bool offcpu_wall = false;	/* --event wall: into the cpu-clock trees, the
						 * timer's samples weighing their period */
const volatile __u64 offcpu_min_ns = 1000;	/* --offcpu-min-us */
const volatile __u32 offcpu_max_rate = 0;	/* --offcpu-max-rate: walks per CPU a second */

/* the scheduler's text (__sched_text_start .. __sched_text_end), from
 * /proc/kallsyms by user space when this program is loaded (0: unknown):
 * not __ksym externs, which make libbpf read kallsyms at every load,
 * whatever programs it loads (0.2 s of the start-up, user/collect/session.c) */
const volatile __u64 sched_text_start = 0;
const volatile __u64 sched_text_end = 0;

/* A thread's path and time at its last switch-out. */
struct offcpu_pending {
	__u64 t0;		/* when it left (0: nothing pending) */
	__u32 walked;		/* 1: pv and sc hold its path; 0: over the rate bound */
	__u32 pad;
	struct path_view pv;
	struct scratch sc;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_pending);
} offcpu_pending SEC(".maps");

/* the rate bound's window, per CPU */
struct offcpu_window {
	__u64 start;
	__u64 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct offcpu_window);
	__uint(max_entries, 1);
} offcpu_rate SEC(".maps");

static __always_inline void offcpu_stat(__u32 which, __u64 n)
{
	__u32 key = ST_EVENT_OFFCPU * ST_STAT__MAX + which;
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		*v += n;
}

/* One more walk on this CPU within --offcpu-max-rate? */
static __always_inline bool offcpu_rate_ok(__u64 now)
{
	__u32 zero = 0;
	struct offcpu_window *w;

	if (!offcpu_max_rate)
		return true;
	w = bpf_map_lookup_elem(&offcpu_rate, &zero);
	if (!w)
		return true;
	if (now - w->start >= 1000000000ULL) {
		w->start = now;
		w->n = 0;
	}
	return ++w->n <= offcpu_max_rate;
}

static __always_inline __u64 offcpu_state(bool preempt, unsigned int prev_state)
{
	if (preempt || !(prev_state & 0xff))	/* TASK_RUNNING */
		return ST_OFFCPU_PREEMPTED;
	if (prev_state & 0x1)		/* TASK_INTERRUPTIBLE */
		return ST_OFFCPU_SLEEPING;
	if (prev_state & 0x2)		/* TASK_UNINTERRUPTIBLE; TASK_NOLOAD: TASK_IDLE */
		return (prev_state & 0x400) ? ST_OFFCPU_IDLE : ST_OFFCPU_DISK;
	if (prev_state & 0xc)		/* __TASK_STOPPED, __TASK_TRACED */
		return ST_OFFCPU_STOPPED;
	return ST_OFFCPU_OTHER;
}

/* The kernel stack leaf first: where the scheduler's frames end. */
struct offcpu_kscan {
	struct scratch *sc;
	__u32 kn;
	__u32 first;	/* first frame past the scheduler's (kn: none found) */
	bool in;	/* inside the scheduler's frames */
};

static long offcpu_kscan_step(__u32 i, void *data)
{
	struct offcpu_kscan *c = data;
	__u64 a, lo = sched_text_start, hi = sched_text_end;
	bool sched;

	if (i >= c->kn)
		return 1;
	a = c->sc->kstack[i & (ST_MAX_KERNEL - 1)];
	sched = a >= lo && a < hi;
	if (sched)
		c->in = true;
	else if (c->in) {
		c->first = i;
		return 1;
	}
	return 0;
}

struct offcpu_kmove {
	struct scratch *sc;
	__u32 from, n;
};

static long offcpu_kmove_step(__u32 i, void *data)
{
	struct offcpu_kmove *c = data;

	if (i >= c->n)
		return 1;
	c->sc->kstack[i & (ST_MAX_KERNEL - 1)] =
		c->sc->kstack[(c->from + i) & (ST_MAX_KERNEL - 1)];
	return 0;
}

/* The kernel frames kept, leaf first from kstack[0]: the blocking point
 * and (--kernel) its callers. */
static __always_inline __u32 offcpu_kernel(void *ctx, struct scratch *sc)
{
	struct offcpu_kscan ks = { .sc = sc };
	struct offcpu_kmove km = { .sc = sc };
	long kn = bpf_get_stack(ctx, sc->kstack, sizeof(sc->kstack), 0);

	if (kn <= 0)
		return 0;
	ks.kn = km.n = (__u32)(kn / sizeof(__u64));
	ks.first = ks.kn;
	if (sched_text_start && sched_text_end) {
		bpf_loop(ST_MAX_KERNEL, offcpu_kscan_step, &ks, 0);
		if (ks.first < ks.kn) {
			km.from = ks.first;
			km.n = ks.kn - ks.first;
			bpf_loop(ST_MAX_KERNEL, offcpu_kmove_step, &km, 0);
		}
	}
	if (!kernel_stacks && km.n > 1)
		km.n = 1;
	return km.n > ST_MAX_KERNEL ? ST_MAX_KERNEL : km.n;
}

/* prev (current) leaves the CPU: its path and the time. */
static __always_inline void offcpu_out(void *ctx, bool preempt, struct task_struct *prev,
				       unsigned int prev_state, __u64 now, bool dwarf)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, n;
	struct offcpu_pending *p;
	struct path_view *pv;
	struct scratch *sc;
	long un;

	if (!tid || !wanted(tgid, tid, ST_EVENT_OFFCPU) || in_execve())
		return;
	p = bpf_task_storage_get(&offcpu_pending, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		stat_ev(ST_EVENT_OFFCPU, ST_STAT_LOST_THREAD);
		return;
	}
	p->t0 = now;
	p->walked = 0;
	if (!offcpu_rate_ok(now)) {
		offcpu_stat(ST_STAT_OFFCPU_RATE, 1);
		return;
	}
	stat_ev(ST_EVENT_OFFCPU, ST_STAT_SAMPLES);
	sc = &p->sc;
	pv = &p->pv;
	sc->force_defer = false;
	un = user_stack(ctx, sc, NULL, dwarf, false, false);
	if (un < 0)
		un = 0;
	if (un > 0)	/* CPython's frames in place of its evaluation loop's */
		un = st_py_sample((struct st_py_ustack *)sc->ustack, (__u32)un, ST_MAX_USER,
				  pid_tgid, task_image(prev), &sc->utrunc);
	pv->trunc = 0;
	pv->extra_addr = 0;
	path_user(pv, sc, un, ST_EVENT_OFFCPU);
	pv->kn = offcpu_kernel(ctx, sc);
	pv->extra = 1;
	pv->extra_flags = ST_NODE_STATE | ST_NODE_LEAF;
	pv->extra_addr = offcpu_state(preempt, prev_state);
	n = pv->trunc + pv->un + pv->kn + pv->extra;
	pv->n = n > ST_PATH_SLOTS - 1 ? ST_PATH_SLOTS - 1 : n;
	pv->other = 1;
	pv->image = task_image(prev);
	bpf_get_current_comm(pv->comm, sizeof(pv->comm));
	notify_new_proc(tgid, tid);
	p->walked = 1;
}

/* next comes back: the time it was away, on its path. */
static __always_inline void offcpu_in(struct task_struct *next, __u64 now)
{
	__u32 ev = offcpu_wall ? ST_EVENT_CPU : ST_EVENT_OFFCPU;
	struct offcpu_pending *p;
	struct thread_state *ts;
	__u64 d;

	if (!next->pid)
		return;
	p = bpf_task_storage_get(&offcpu_pending, next, 0, 0);
	if (!p || !p->t0)
		return;
	d = now - p->t0;
	p->t0 = 0;
	if (!p->walked) {
		offcpu_stat(ST_STAT_OFFCPU_RATE_NS, d);
		return;
	}
	if (d < offcpu_min_ns) {
		offcpu_stat(ST_STAT_OFFCPU_SHORT, 1);
		offcpu_stat(ST_STAT_OFFCPU_SHORT_NS, d);
		return;
	}
	offcpu_stat(ST_STAT_OFFCPU_NS, d);
	p->pv.weight = d;
	ts = offcpu_wall ? bpf_task_storage_get(&threads, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE) :
			   bpf_task_storage_get(&offcpu_threads, next, 0,
						BPF_LOCAL_STORAGE_GET_F_CREATE);
	fold_sample(&p->sc, &p->pv, ts, ((__u64)next->tgid << 32) | (__u32)next->pid, ev);
}

static __always_inline int offcpu_switch(void *ctx, bool preempt, struct task_struct *prev,
					 struct task_struct *next, unsigned int prev_state,
					 bool dwarf)
{
	__u64 now = bpf_ktime_get_ns();

	offcpu_out(ctx, preempt, prev, prev_state, now, dwarf);
	offcpu_in(next, now);
	return 0;
}

/* --unwind fp (11.6% here, most of it the Python walker and the fold).
 * Verifier budgets: see sample.bpf.c. */
#define ST_BUDGET_ON_OFFCPU_FP 20
SEC("tp_btf/sched_switch")
int BPF_PROG(on_offcpu_fp, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return offcpu_switch(ctx, preempt, prev, next, prev_state, false);
}

/* --unwind dwarf and auto (35.1% here). */
#define ST_BUDGET_ON_OFFCPU_DWARF 60
SEC("tp_btf/sched_switch")
int BPF_PROG(on_offcpu_dwarf, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return offcpu_switch(ctx, preempt, prev, next, prev_state, true);
}

#endif

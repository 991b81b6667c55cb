// SPDX-License-Identifier: GPL-2.0
/*
 * sample.bpf.c - the BPF side's one compilation unit (one object, one
 * skeleton: build/sample.skel.h, loaded by user/collect/session.c) and its
 * cpu-clock timer program (on_timer_fp / on_timer_dwarf, one per walker):
 * walk the interrupted thread's stack and fold it into the thread's
 * call-stack tree, in the kernel.
 *
 * Per sample: the user stack is walked (walk.bpf.h: frame pointers, or the
 * DWARF walker of unwind.h), then either handed to the daemon whole when
 * its tables are not in yet (defer.bpf.h), or folded (fold.bpf.h) into the
 * thread's tree in the node table (nodes.bpf.h).
 *
 * The parts, each a header that says what it owns, in the order they build
 * on each other:
 *   base.bpf.h       settings (.rodata), counters, task_image()
 *   nodes.bpf.h      the node table and its generations
 *   threads.bpf.h    per-thread state: previous path, node cache
 *   procs.bpf.h      the target filter, process images, the events ring
 *   walk.bpf.h       the walkers (frame pointers; DWARF: unwind.h)
 *   defer.bpf.h      deferral to the daemon and the handoff back
 *   fold.bpf.h       the fold (the CALLS rule: fold_frame())
 *   offcpu.bpf.h     the sched_switch program: time off the CPU
 *   lifecycle.bpf.h  the fork/exec/exit programs
 *   endmaps.bpf.h    a sampled process's executable mappings kept at its end
 *   fault.bpf.h      the page-fault program and its classification
 *   bench.bpf.h      the benchmark-only program (--bench-bare)
 *   parts.bpf.h      benchmarks only: a sample's BPF time by part
 * They are headers of one unit rather than objects linked with `bpftool gen
 * object`: the fold, the walkers and the filter are __always_inline helpers
 * that every program inlines (the verifier checks each copy with the
 * caller's constants), which linking would turn into calls across objects;
 * one unit keeps one .rodata, one skeleton and the code the verifier sees
 * as it was. Which programs are loaded is decided per mode in user space
 * (bpf_program__set_autoload(), user/collect/session.c): a program a mode
 * does not use is neither loaded nor verified. Verifier budgets: below,
 * before on_timer_fp.
 * See bpf/stacktree.h for the maps' layout and kernel-notes/ for the rules.
 */
#include "base.bpf.h"
#include "nodes.bpf.h"
#include "threads.bpf.h"
#include "procs.bpf.h"
#include "walk.bpf.h"
#include "defer.bpf.h"
#include "fold.bpf.h"
#include "python.bpf.h"
#include "offcpu.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The timer's programs, tail-called by on_timer, the one attached: the
 * full one (on_timer_fp or on_timer_dwarf, loaded after the launch:
 * user/collect/session.c) once it is in, else on_timer_early. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} timer_jump SEC(".maps");

/* `timer_early` (shared_maps.h): while ST_TIMER_EARLY_ON, on_timer returns at
 * once, the early object sampling a launched command on per-task events */

/* The sample to the daemon whole (defer.bpf.h), its kernel frames kn and
 * its py_n Python frames with it: true when it went; else counted, and the
 * thread's deferral, if any, ended (the sample is then folded here). */
static __always_inline bool try_defer(struct scratch *sc, struct thread_state *ts, long kn,
				      int py_n, __u32 tgid, __u32 tid)
{
	__u32 seq = ts ? ts->defer_seq + 1 : 0;

	if (defer_sample(sc, kn > 0 ? (__u32)kn : 0, seq, py_n > 0 ? (__u32)py_n : 0)) {
		if (ts) {
			ts->defer_seq = seq;
			ts->deferring++;
		}
		stat_inc(ST_STAT_DEFERRED);
		st_py_deferred(tgid);
		/* its maps are read while it lives, and its exit
		 * reported, even if no sample of it is folded here */
		notify_new_proc(tgid, tid);
		return true;
	}
	stat_inc(ST_STAT_DEFER_LOST);	/* folded as walked, its reason counted */
	if (sc->stop_stat < ST_STAT__MAX)
		stat_inc(sc->stop_stat);
	if (ts && ts->deferring)	/* the daemon's path is not this thread's last */
		end_deferral(ts);
	return false;
}

/* The sample to the daemon unwalked (its kernel frames and Python frames
 * read now, into *kn and *py_n): true when it went (try_defer()). */
static __always_inline bool defer_unwalked(struct bpf_perf_event_data *ctx, struct scratch *sc,
					   struct thread_state *ts, __u64 pid_tgid, long *kn,
					   int *py_n)
{
	if (kernel_stacks) {
		*kn = bpf_get_stack(ctx, sc->kstack, sizeof(sc->kstack), 0);
		*kn = *kn < 0 ? 0 : *kn / sizeof(__u64);
	}
	*py_n = st_py_walk_thread(ts, pid_tgid);
	sc->stop_stat = ST_STAT__MAX;
	return try_defer(sc, ts, *kn, *py_n, pid_tgid >> 32, (__u32)pid_tgid);
}

/* --unwind fp after the early object (fp_handoff): a thread whose early
 * samples went to the daemon goes on deferred, unwalked here (the daemon
 * follows its frame pointers through the copy:
 * user/collect/unwind/fpcopy.h), until the daemon's last path for it is
 * in (take_handoff()), as the DWARF program's thread is: its calls count
 * once across the switch. True when the sample went. A thread never
 * deferred pays one check of its state; without the early object the
 * branch is dead code, not verified. The kernel and Python frames read
 * here are not kept when the deferral fails (the ring full: counted, the
 * sample then walked and folded, its frames read again): the rest of the
 * program is then verified once, not once per outcome of this branch
 * (110,511 instructions became 182,526 when they were kept). */
static __always_inline bool fp_defer_waiting(struct bpf_perf_event_data *ctx, struct scratch *sc,
					     struct thread_state *ts, __u64 pid_tgid)
{
	long kn = 0;
	int py_n = 0;

	if (!fp_handoff || !ts || !ts->deferring || !take_handoff(ts, (__u32)pid_tgid))
		return false;
	sc->force_defer = true;	/* each sample read by the daemon at once (defer_sample()) */
	return defer_unwalked(ctx, sc, ts, pid_tgid, &kn, &py_n);
}

/* A cpu-clock sample; dwarf: the variant (user_stack()): deferral for want
 * of tables exists only with the DWARF walker, the handoff in both (fp: after
 * the early object, fp_defer_waiting()). early: on_timer_early's own
 * path, taken before the full program is in (timer_jump): no walker but
 * frame pointers (walk.bpf.h, fp_stack()), and in dwarf/auto mode every sample of
 * a target deferred (its stack copied for the daemon, which unwinds it with
 * CFI), frame pointers only when the deferred ring is full (and with -a).
 * Both are constants of the calling program: the code a variant does not
 * use is not in it, and not verified. Python frames: as `interpreters`
 * says, which for the early program's instance is only the runtimes
 * walked from the start (the command is one: user/collect/session.c). The
 * sample passed on_timer's filter (wanted()) already. */
static __always_inline int timer_sample(struct bpf_perf_event_data *ctx, bool dwarf, bool early)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct path_view pv = {};
	struct thread_state *ts;
	struct scratch *sc;
	__u32 zero = 0, n;
	int py_n = 0;
	long un = 0, kn = 0;
	bool py_walked = false;
	/* interrupted in user mode (the IRQ's saved registers, hot): not
	 * inside execve, not a thread without a user stack; neither is read
	 * from the task then (a cold line each under load) */
	bool in_user = (*(volatile __u64 *)((char *)&ctx->regs + offsetof(struct pt_regs, cs)) &
			3) == 3;	/* (a context's words are read whole) */

	if (!in_user && in_execve()) {	/* counted, not folded (like idle samples) */
		stat_inc(ST_STAT_IN_EXECVE);
		return 0;
	}
	stat_inc(ST_STAT_SAMPLES);
	if (early)
		stat_inc(ST_STAT_EARLY);

	sc = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!sc)
		return 0;
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!dwarf && !early && fp_defer_waiting(ctx, sc, ts, pid_tgid))
		return 0;
	/* (not -a: every sample of the system deferred would fill the ring) */
	if ((early || test_defer) && unwind_mode != ST_UNWIND_FP && defer_unwind && filter_targets) {
		py_walked = true;
		if (defer_unwalked(ctx, sc, ts, pid_tgid, &kn, &py_n))
			return 0;
	}
	/* a thread waiting for its handoff: deferred whatever its walk (whose
	 * stop, if any, is then the daemon's to count) */
	sc->force_defer = dwarf && ts && ts->deferring && take_handoff(ts, tid);
	un = user_stack(ctx, sc, ts, dwarf, true, in_user);
	if (un < 0) {
		stat_inc(ST_STAT_LOST_STACK);
		return 0;
	}
	if (kernel_stacks && !kn) {
		kn = bpf_get_stack(ctx, sc->kstack, sizeof(sc->kstack), 0);
		kn = kn < 0 ? 0 : kn / sizeof(__u64);
	}
	/* CPython's frames are read now, while they are live, whether the
	 * sample is folded here or unwound by the daemon (which merges them) */
	if (!py_walked)
		py_n = st_py_walk_thread(ts, pid_tgid);
	part_mark(ST_PART_PY_WALK);	/* benchmarks only (parts.bpf.h) */

	if (dwarf && sc->defer && try_defer(sc, ts, kn, py_n, tgid, tid))
		return 0;

	if (un > 0 && py_n > 0) {	/* CPython's frames in place of its evaluation loop's */
		_Static_assert(ST_USTACK_SLOTS * 8 >= sizeof(struct st_py_ustack), "merge room");
		long m = st_py_merge_sample((struct st_py_ustack *)sc->ustack, (__u32)un,
					    ST_MAX_USER, tgid);

		if (m >= 0 && (m & ST_PY_MERGE_CUT))	/* its outermost frames lost */
			sc->utrunc = true;
		m &= ~(long)ST_PY_MERGE_CUT;
		un = m >= 0 && m <= ST_MAX_USER ? m : un;
		sc->ph_ok = false;	/* the walk's sums are not the merged frames' */
	}
	part_mark(ST_PART_PY_MERGE);
	/* the path, root first: [truncated], user frames, kernel frames */
	path_user(&pv, sc, un, ST_EVENT_CPU);
	pv.kn = kn;
	pv.weight = offcpu_wall ? ctx->sample_period : 0;	/* --event wall: ns */
	if (!un && !kn) {
		/* no frame at all (kernel thread without --kernel): "[kernel]" */
		stat_inc(ST_STAT_EMPTY_STACK);
		pv.extra = 1;
		pv.extra_flags = ST_NODE_KERNEL | ST_NODE_LEAF;
	}
	n = pv.trunc + pv.un + pv.kn + pv.extra;
	if (n > ST_PATH_SLOTS - 1)
		n = ST_PATH_SLOTS - 1;
	pv.n = n;

	if (test_spare_every && bpf_get_prandom_u32() % test_spare_every == 0)
		ts = NULL;
	fold_sample(sc, &pv, ts, pid_tgid, ST_EVENT_CPU);
	return 0;
}

/*
 * Verifier budgets: each program has an ST_BUDGET_<PROGRAM> beside it, the
 * instructions the verifier may check for it (verified_insns) in percent of
 * the kernel's limit of 1,000,000; tests/integration/test_verifier.py loads
 * every mode and fails when one is over, and prints what is left
 * (figures: kernel-notes/README.md, "Start-up and verifier budgets"). The
 * DWARF programs keep 40% of the limit free for other kernels' verifiers,
 * whose counts differ.
 */

/* The program attached to the timers: the filter (wanted()), then the
 * full program once it is in (slot ST_TIMER_SLOT_FULL of timer_jump,
 * filled after the launch), else the early one (cheap to verify: loaded
 * before the command starts, it delays it least). The filter is here, not
 * in timer_sample(): a sample of a process not profiled (every other
 * process's under --pid, --comm, a command) ends without entering the full
 * program, whose entry cost such a run 1,140 ns against 537 here and 891
 * for the bare walk's program, side by side (kernel-notes/README.md, "The
 * filter before the tail call"). A dispatcher of its own rather than the early program with a
 * tail call in it: a program that tail-calls has its subprograms' stacks
 * limited more (the early one's fold would be over: "combined stack size"). */
#define ST_BUDGET_ON_TIMER 1
SEC("perf_event")
int on_timer(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0, *early = bpf_map_lookup_elem(&timer_early, &zero);
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (early && *early == ST_TIMER_EARLY_ON)	/* the early object's samples */
		return 0;
	if (!wanted(pid_tgid >> 32, (__u32)pid_tgid, ST_EVENT_CPU))
		return 0;
	bpf_tail_call(ctx, &timer_jump, ST_TIMER_SLOT_FULL);
	bpf_tail_call(ctx, &timer_jump, ST_TIMER_SLOT_EARLY);
	return 0;
}

/* The early path (slot ST_TIMER_SLOT_EARLY): no DWARF walker, and only the
 * runtimes walked from the start (the command's; every one under --pid and
 * -a): 2.9% for -- true, 6.6% for -- python3, 15.0% with Python and Java
 * (--unwind dwarf --event cpu,faults --kernel; the Java rule's blob memo
 * and cache are most of the difference), so that a JVM launched gets its
 * Java frames from its first sample: the budget of the fp program. */
#define ST_BUDGET_ON_TIMER_EARLY 20
SEC("perf_event")
int on_timer_early(struct bpf_perf_event_data *ctx)
{
	return timer_sample(ctx, false, true);
}

/* --unwind fp (8.1% here with --event cpu,faults --kernel -a, most of it
 * the Python walker and the fold; the early object's handoff,
 * fp_defer_waiting(), adds to it: kernel-notes/README.md) */
#define ST_BUDGET_ON_TIMER_FP 20
SEC("perf_event")
int on_timer_fp(struct bpf_perf_event_data *ctx)
{
	return timer_sample(ctx, false, false);
}

/* --unwind dwarf and auto (unwind_mode tells them apart; 38.9% here with
 * --unwind auto --event cpu,faults --kernel, some 9 points of it the
 * HotSpot rule in the DWARF walker, much of the rest the Python walker and
 * merge: kernel-notes/README.md) */
#define ST_BUDGET_ON_TIMER_DWARF 60
SEC("perf_event")
int on_timer_dwarf(struct bpf_perf_event_data *ctx)
{
	return timer_sample(ctx, true, false);
}

#include "lifecycle.bpf.h"
#include "endmaps.bpf.h"
#include "fault.bpf.h"
#include "bench.bpf.h"

// SPDX-License-Identifier: GPL-2.0
/*
 * early.bpf.c - the early object (its own skeleton, build/early.skel.h,
 * loaded by user/collect/early.c): one program on the per-task cpu-clock
 * events of a launched command (inherited by every process it forks, as
 * `perf record -- CMD`'s), sampling from the command's exec while the
 * session's full timer program is verified on a thread (every --unwind
 * mode). It walks nothing and folds nothing: it copies the user
 * registers and stack into the `deferred` ring (struct st_deferred,
 * unwound late by the daemon as deferred samples are: by CFI, or in fp
 * mode by frame pointers through the copy), numbered in the
 * thread's state as the session's deferral numbers them, so that the full
 * program takes each thread back from the daemon's last path (the
 * handoff, defer.bpf.h): its calls are counted once across the switch.
 *
 * What keeps it cheap to load, before the command starts: no CO-RE
 * relocation (vmlinux.h is included for the helpers' types only: no field
 * of a kernel structure is read here), no tp_btf program, no kfunc, no
 * ksym: libbpf does not read the kernel's BTF for it; and some hundreds of
 * instructions to verify (kernel-notes/README.md, "Sampling before the
 * verifier finishes"). What it cannot read without CO-RE, the task's image
 * (self_exec_id), it takes from proc_images, which the session's
 * lifecycle programs keep (fork, sched_prepare_exec, exec): a process in
 * the middle of an exec (busy) or not there is not sampled, counted as
 * "in execve". Its maps are all the session's (bpf_map__reuse_fd()).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "stacktree.h"
#include "shared_maps.h"	/* all its maps: the session's */
#include "shared_rules.h"	/* the rules it runs as the session's object does */

char LICENSE[] SEC("license") = "GPL";

const volatile bool kernel_stacks = false;	/* --kernel */

/* The stack's copy page by page, up to the first page not there (struct
 * stack_copy: shared_rules.h). */
static long copy_page(__u32 i, void *data)
{
	return copy_stack_page(data, i, true);
}

static __always_inline void defer_copy(struct bpf_perf_event_data *ctx, __u64 pid_tgid,
				       __u32 image)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct st_deferred *d = bpf_map_lookup_elem(&defer_buf, &cpu);
	struct thread_state *ts;
	struct stack_copy c = {};
	struct uregs r;
	__u32 len;
	long kn;

	if (!d || !read_uregs(&r)) {
		stat_inc(ST_STAT_LOST_STACK);
		return;
	}
	/* the thread's deferred samples, numbered as try_defer() does
	 * (sample.bpf.c): the full program defers its samples until the
	 * daemon hands back its path after the last (take_handoff()) */
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	deferred_fill(d, pid_tgid, image, ts ? ts->defer_seq + 1 : 0, &r);
	d->py.n = 0;
	kn = kernel_stacks ? bpf_get_stack(ctx, d->kstack, sizeof(d->kstack), 0) : 0;
	d->kn = kn > 0 ? (__u32)(kn / 8) : 0;
	/* from sp, page by page until ST_EARLY_HOLES + 1 pages in a row
	 * cannot be read (the mapping's end, as a rule; a shorter hole inside
	 * it, a big frame's untouched pages, kept as holes: the session's
	 * deferral looks the mapping up, a CO-RE read) or ST_DEFER_STACK */
	c.d = d;
	c.start = r.sp;
	c.first = 4096 - (__u32)(r.sp & 4095);
	bpf_loop(ST_DEFER_STACK / 4096 + 1, copy_page, &c, 0);
	len = c.len;
	if (len > ST_DEFER_STACK)
		len = 0;
	d->stack_len = len;
	d->holes = c.holes;
	/* woken when an eighth of the ring waits, as the session's deferral */
	if (!deferred_submit(d, len, false)) {
		/* lost: this object has no walk to fold instead (the
		 * thread's numbering unchanged) */
		stat_inc(ST_STAT_EARLY_LOST);
		return;
	}
	stat_inc(ST_STAT_DEFERRED);
	/* deferring: 1, not a count: the full program waits ST_HANDOFF_WAIT
	 * of its own samples for the daemon's path, however long the early
	 * phase was (counted, it was over that bound after 2 s at 999 Hz: the
	 * handoff missed, CALLS counted again at the switch) */
	if (ts) {
		ts->defer_seq = d->seq;
		ts->deferring = 1;
	}
}

/* budget (verifier budgets: bpf/sample.bpf.c): a few hundred instructions
 * whatever the mode; 1% of the kernel's limit is 10,000 */
#define ST_BUDGET_ON_EARLY 1
SEC("perf_event")
int on_early(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, zero = 0, *on = bpf_map_lookup_elem(&timer_early, &zero);
	struct st_proc_image *pi;

	if (!on || *on != ST_TIMER_EARLY_ON || !(__u32)pid_tgid)
		return 0;
	/* an exec under way (from sched_prepare_exec to sched_process_exec:
	 * the old registers, the new mm), or a process the lifecycle
	 * programs have not seen: neither image is known to be its */
	pi = bpf_map_lookup_elem(&proc_images, &tgid);
	if (!pi || pi->busy) {
		stat_inc(ST_STAT_IN_EXECVE);
		return 0;
	}
	stat_inc(ST_STAT_SAMPLES);
	stat_inc(ST_STAT_EARLY);
	/* a process's first sample: the daemon reads its maps */
	if (!bpf_map_lookup_elem(&seen_procs, &tgid))
		new_proc_event(tgid, (__u32)pid_tgid, pi->image, pi);
	defer_copy(ctx, pid_tgid, pi->image);
	return 0;
}

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

char LICENSE[] SEC("license") = "GPL";

const volatile bool kernel_stacks = false;	/* --kernel */

/* x86-64's saved user registers (the uapi's struct pt_regs: a layout the
 * kernel's entry code keeps), read whole: no field offset to relocate */
struct uregs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

static __always_inline void count(__u32 which)
{
	__u32 key = ST_EVENT_CPU * ST_STAT__MAX + which;
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		*v += 1;
}

/* bpf/procs.bpf.h's notify_new_proc(), with the image in hand: the daemon
 * reads a process's maps on its first sample */
static __always_inline void notify(__u32 tgid, __u32 tid, const struct st_proc_image *pi)
{
	struct st_event *e;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&seen_procs, &tgid))
		return;
	bpf_map_update_elem(&seen_procs, &tgid, &one, BPF_ANY);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(ST_STAT_NEW_PROC_LOST);
		return;
	}
	e->type = ST_EV_NEW_PROC;
	e->pid = tgid;
	e->tid = tid;
	/* not exec'd since its fork: its parent's mappings */
	e->ppid = pi->parent && pi->fork_image == pi->image ? pi->parent : 0;
	e->image = pi->image;
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/* Copy page i of the stack (0: sp's, to its end; then whole pages) until
 * one cannot be read (the mapping's end, as a rule; a hole inside it, a
 * big frame's untouched page, ends the copy here where the session's
 * deferral looks the mapping up: a CO-RE read) or ST_DEFER_STACK. */
struct copy {
	struct st_deferred *d;
	__u32 len;
};

static long copy_page(__u32 i, void *data)
{
	struct copy *c = data;
	__u32 first = 4096 - (__u32)(c->d->sp & 4095);
	__u32 off = i ? first + (i - 1) * 4096 : 0, n = i ? 4096 : first;

	if (off > ST_DEFER_STACK - 4096 || n > 4096)
		return 1;
	if (bpf_probe_read_user(&c->d->stack[off], n, (const void *)(c->d->sp + off)))
		return 1;
	c->len = off + n;
	return 0;
}

static __always_inline void defer_copy(struct bpf_perf_event_data *ctx, __u64 pid_tgid,
				       __u32 image)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	struct st_deferred *d = bpf_map_lookup_elem(&defer_buf, &cpu);
	struct thread_state *ts;
	struct copy c = {};
	struct uregs r;
	void *ring;
	__u64 avail, flags;
	__u32 len;
	long kn;

	if (!d || bpf_probe_read_kernel(&r, sizeof(r),
					(const void *)bpf_task_pt_regs(bpf_get_current_task_btf()))) {
		count(ST_STAT_LOST_STACK);
		return;
	}
	d->pid = pid_tgid >> 32;
	d->tid = (__u32)pid_tgid;
	d->image = image;
	/* the thread's deferred samples, numbered as try_defer() does
	 * (sample.bpf.c): the full program defers its samples until the
	 * daemon hands back its path after the last (take_handoff()) */
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	d->seq = ts ? ts->defer_seq + 1 : 0;
	d->ip = r.ip;
	d->sp = r.sp;
	d->bp = r.bp;
	d->r10 = r.r10;
	d->rbx = r.bx;
	d->r13 = r.r13;
	d->holes = 0;
	d->py.n = 0;
	bpf_get_current_comm(d->comm, sizeof(d->comm));
	kn = kernel_stacks ? bpf_get_stack(ctx, d->kstack, sizeof(d->kstack), 0) : 0;
	d->kn = kn > 0 ? (__u32)(kn / 8) : 0;
	c.d = d;
	bpf_loop(ST_DEFER_STACK / 4096 + 1, copy_page, &c, 0);
	len = c.len;
	if (len > ST_DEFER_STACK)
		len = 0;
	d->stack_len = len;
	ring = bpf_map_lookup_elem(&deferred, &zero);
	if (!ring) {
		count(ST_STAT_DEFER_LOST);
		return;
	}
	/* woken when an eighth of the ring waits, as the session's deferral */
	avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
	flags = avail >= bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / ST_DEFER_WAKE_SHARE ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(ring, d, offsetof(struct st_deferred, stack) + len, flags)) {
		count(ST_STAT_DEFER_LOST);	/* (the thread's numbering unchanged) */
		return;
	}
	count(ST_STAT_DEFERRED);
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
		count(ST_STAT_IN_EXECVE);
		return 0;
	}
	count(ST_STAT_SAMPLES);
	count(ST_STAT_EARLY);
	notify(tgid, (__u32)pid_tgid, pi);
	defer_copy(ctx, pid_tgid, pi->image);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * procs.bpf.h - which tasks are sampled and what the daemon is told about
 * processes: the target filter (wanted(): --pid/CMD targets, --comm,
 * --cgroup, -t threads, -u user, -C CPUs, the daemon itself), the image each process runs
 * (`proc_images`), the processes the daemon knows (`seen_procs`), and the
 * `events` ring buffer (new process, exec, exit, tables wanted). Used by
 * the sampling programs and by the lifecycle programs (lifecycle.bpf.h).
 */
#ifndef STACKTREE_PROCS_BPF_H
#define STACKTREE_PROCS_BPF_H

#include "base.bpf.h"
#include "unwind.h"
#include "parts.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);	/* resized before load */
} targets SEC(".maps");

/* -t: the threads sampled (their processes are targets too) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);	/* resized before load */
} tid_filter SEC(".maps");

/* --cgroup: the cgroup directory's fd at index 0 */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} cgroup_filter SEC(".maps");

/* `seen_procs`, `proc_images` (the image each process runs, struct
 * st_proc_image: written at fork, at exec and at a process's first
 * sample, removed at its exit) and the `events` ring: shared_maps.h */

/* The fork fields of an existing entry are kept. */
static __always_inline void set_proc_image(__u32 tgid, __u32 image, __u32 busy, __u64 flags)
{
	struct st_proc_image v = { .image = image, .busy = busy }, *old;

	old = bpf_map_lookup_elem(&proc_images, &tgid);
	if (old && flags == BPF_NOEXIST)
		return;
	if (old) {
		v.parent = old->parent;
		v.fork_image = old->fork_image;
	}
	bpf_map_update_elem(&proc_images, &tgid, &v, flags);
}

/* A ring-buffer event for the daemon; a full buffer is counted (false). */
/* (shared_rules.h's emit_event_image(), the current task's image read) */
static __always_inline bool emit_event_ppid(__u32 type, __u32 pid, __u32 tid, __u32 ppid)
{
	return emit_event_image(type, pid, tid, ppid, task_image(bpf_get_current_task_btf()));
}

static __always_inline bool emit_event(__u32 type, __u32 pid, __u32 tid)
{
	return emit_event_ppid(type, pid, tid, 0);
}

/* dwarf/auto: a launched command is sampled from its exec on: the loader's
 * own work is walked with the exec-time tables (the program and ld.so);
 * until it is active, a sample that needs another table is deferred to
 * the daemon like any other (on_timer_dwarf, defer.bpf.h). Once it runs
 * outside the dynamic loader, its start-up libraries are all mapped: the
 * daemon reads its maps again (ST_EV_STARTED) and marks it active. */
static __always_inline void wait_tables(__u32 tgid, __u32 tid, __u8 *target)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct st_unwind_proc *up = bpf_map_lookup_elem(&unwind_procs, &tgid);
	__u64 ip;

	if (*target != ST_TARGET_AT_TABLES || !up ||	/* exec-time tables not in yet */
	    (up->image != task_image(task) && up->image != ST_UNWIND_ANY_IMAGE))
		return;
	ip = BPF_CORE_READ((struct pt_regs *)bpf_task_pt_regs(task), ip);
	if (ip - up->interp_start < up->interp_len)
		return;
	*target = ST_TARGET_STARTED;
	if (!emit_event(ST_EV_STARTED, tgid, tid))
		*target = ST_TARGET_ACTIVE;
}

static __always_inline void notify_new_proc(__u32 tgid, __u32 tid)
{
	__u32 image = task_image(bpf_get_current_task_btf());

	if (bpf_map_lookup_elem(&seen_procs, &tgid))
		return;
	/* a process older than the session: its image from now on */
	set_proc_image(tgid, image, 0, BPF_NOEXIST);
	new_proc_event(tgid, tid, image, bpf_map_lookup_elem(&proc_images, &tgid));
}

/* Whether the current task is to be sampled: not the idle task (counted),
 * not the daemon, and passing --pid/CMD targets, --comm, --cgroup, -t, -u
 * and -C. */
/* ev: the event of the calling program. A launched command is a target
 * from its exec on (ST_TARGET_AT_EXEC: not yet); page faults taken before
 * its tables are in fall back to frame pointers (they are not deferred). */
static __always_inline bool wanted(__u32 tgid, __u32 tid, __u32 ev)
{
	__u8 *target;

	if (tid == 0) {
		stat_inc(ST_STAT_IDLE);
		return false;
	}
	if (tgid == self_tgid)
		return false;
	if (ev == ST_EVENT_CPU)	/* benchmarks only (parts.bpf.h) */
		part_begin(tid);
	if (filter_targets) {
		target = bpf_map_lookup_elem(&targets, &tgid);
		/* (only dwarf/auto's on_exec makes a target wait for tables: in fp
		 * mode the branch is dead, and the unwinding maps need not exist) */
		if (unwind_mode != ST_UNWIND_FP && target && *target >= ST_TARGET_AT_TABLES)
			wait_tables(tgid, tid, target);
		if (!target || *target == ST_TARGET_AT_EXEC)
			return false;
	}
	if (filter_comm) {
		struct task_struct *task = bpf_get_current_task_btf();
		char comm[ST_COMM_LEN];

		/* the process's name: its main thread's comm */
		BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm);
		for (int i = 0; i < ST_COMM_LEN; i++) {
			if (comm[i] != comm_filter[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	if (filter_tids && !bpf_map_lookup_elem(&tid_filter, &tid))
		return false;
	if (filter_uid && (__u32)bpf_get_current_uid_gid() != uid_filter)
		return false;
	if (filter_cpus) {
		/* the timers run only on these CPUs already; page faults run anywhere */
		__u32 cpu = bpf_get_smp_processor_id();

		if (cpu >= ST_MAX_CPUS || !(cpu_filter[cpu / 64] & (1ull << (cpu % 64))))
			return false;
	}
	if (ev == ST_EVENT_CPU)
		part_mark(ST_PART_FILTER);
	return true;
}

/* The current task is inside execve. From begin_new_exec() on it has the new
 * mm, comm and image (self_exec_id) but still the old program's user
 * registers (until start_thread()), and before it the old image with the new
 * comm may already be set: a sample there belongs to neither program. */
static __always_inline bool in_execve(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return bpf_core_field_exists(task->in_execve) &&
	       BPF_CORE_READ_BITFIELD(task, in_execve);
}

#endif

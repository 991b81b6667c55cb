/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lifecycle.bpf.h - the lifecycle programs (sched tracepoints): fork
 * (children of targets are targets; a child's image and unwinding tables),
 * exec (a launched command becomes a target; a new image resets the
 * threads' paths and is reported), prepare_exec (an exec in progress,
 * kernels from 6.10) and exit (the daemon may evict the process). Exec
 * and exit call CPython's hooks (bpf/python.bpf.h: an executable the
 * daemon knows is walked from its exec). rename: a thread's new name
 * (prctl(PR_SET_NAME), /proc/PID/task/TID/comm) replaces the one its tree
 * was named by.
 */
#ifndef STACKTREE_LIFECYCLE_BPF_H
#define STACKTREE_LIFECYCLE_BPF_H

#include "base.bpf.h"
#include "procs.bpf.h"
#include "threads.bpf.h"
#include "unwind.h"
#include "python.bpf.h"

/* Children of targeted processes are targeted too (like perf's inherit). */
#define ST_BUDGET_ON_FORK 1	/* verifier budgets (% of 1M): see sample.bpf.c */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 *t, active = ST_TARGET_ACTIVE;
	struct st_unwind_proc *up;

	if (ptgid != ctgid) {
		struct st_proc_image v = { .image = task_image(child), .parent = ptgid };

		v.fork_image = v.image;
		bpf_map_update_elem(&proc_images, &ctgid, &v, BPF_ANY);
	}
	/* a child has its parent's mappings: and its unwinding tables */
	if (unwind_mode != ST_UNWIND_FP && ptgid != ctgid &&
	    (up = bpf_map_lookup_elem(&unwind_procs, &ptgid)))
		bpf_map_update_elem(&unwind_procs, &ctgid, up, BPF_ANY);
	if (!filter_targets || ptgid == ctgid)
		return 0;
	/* whatever the parent's state once it has exec'd: a launched command
	 * still waiting for its tables (a compiler driver forking cc1 at once)
	 * has children to profile too */
	t = bpf_map_lookup_elem(&targets, &ptgid);
	if (t && *t != ST_TARGET_AT_EXEC)
		bpf_map_update_elem(&targets, &ctgid, &active, BPF_ANY);
	return 0;
}

/* A launched command becomes a target at its exec; any exec of a seen
 * process is reported so that its maps are read again. */
#define ST_BUDGET_ON_EXEC 1
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), image = task_image(p);
	__u8 *t, active = ST_TARGET_ACTIVE, wait = ST_TARGET_AT_TABLES;

	set_proc_image(tgid, image, 0, BPF_ANY);
	/* a target running a CPython the daemon knows: walked at once (before
	 * the daemon hears of the exec: its probe then checks the entry) */
	if (!filter_targets || bpf_map_lookup_elem(&targets, &tgid))
		st_py_on_exec(p, tgid, image);
	if (unwind_mode != ST_UNWIND_FP)	/* the old image's tables */
		bpf_map_delete_elem(&unwind_procs, &tgid);
	if (filter_targets) {
		t = bpf_map_lookup_elem(&targets, &tgid);
		if (!t)
			return 0;
		if (*t == ST_TARGET_AT_EXEC && unwind_mode != ST_UNWIND_FP &&
		    emit_event(ST_EV_TABLES, tgid, BPF_CORE_READ(p, pid))) {
			/* its maps read again once it left the loader */
			bpf_map_update_elem(&targets, &tgid, &wait, BPF_ANY);
		} else if (*t == ST_TARGET_AT_EXEC) {
			bpf_map_update_elem(&targets, &tgid, &active, BPF_ANY);
		}
	}
	/* a new image: the saved paths mean nothing now, and the next sample
	 * (once the libraries are mapped) reports the process again */
	bpf_task_storage_delete(&threads, p);
	bpf_task_storage_delete(&fault_threads, p);
	if (!bpf_map_lookup_elem(&seen_procs, &tgid))
		return 0;
	emit_event(ST_EV_EXEC, tgid, BPF_CORE_READ(p, pid));
	bpf_map_delete_elem(&seen_procs, &tgid);
	return 0;
}

/* An exec begins (kernels from 6.10; not loaded on older ones): from here
 * to sched_process_exec /proc/PID may show either image. */
#define ST_BUDGET_ON_PREPARE_EXEC 1
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(on_prepare_exec, struct task_struct *p, struct linux_binprm *bprm)
{
	set_proc_image(BPF_CORE_READ(p, tgid), task_image(p), 1, BPF_ANY);
	return 0;
}

/* A thread renames itself. Only a thread already named in thread_comms
 * (threads.bpf.h: sampled in this image) is renamed; the rename an exec
 * makes is left out: it comes before self_exec_id is raised, so the old
 * image's key would take the new program's name (the new image's root,
 * made at its first sample, reads the name then). */
#define ST_BUDGET_ON_RENAME 1
SEC("tp_btf/task_rename")
int BPF_PROG(on_rename, struct task_struct *task, const char *comm)
{
	struct st_comm_key key = {
		.addr = ((__u64)BPF_CORE_READ(task, tgid) << 32) | (__u32)BPF_CORE_READ(task, pid),
		.image = task_image(task),
	};
	char name[ST_COMM_LEN] = "";

	if (bpf_core_field_exists(task->in_execve) && BPF_CORE_READ_BITFIELD_PROBED(task, in_execve))
		return 0;
	if (!bpf_map_lookup_elem(&thread_comms, &key))
		return 0;
	if (bpf_probe_read_kernel_str(name, sizeof(name), comm) < 0)
		return 0;
	bpf_map_update_elem(&thread_comms, &key, name, BPF_EXIST);
	return 0;
}

/* A seen process ends: the daemon may evict it once it is written out. */
#define ST_BUDGET_ON_EXIT 1
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), pid = BPF_CORE_READ(p, pid);

	if (pid == tgid)
		bpf_map_delete_elem(&proc_images, &tgid);
	if (pid == tgid && unwind_mode != ST_UNWIND_FP)
		bpf_map_delete_elem(&unwind_procs, &tgid);
	if (pid != tgid)
		return 0;
	if (!bpf_map_lookup_elem(&seen_procs, &tgid)) {
		st_py_on_exit(tgid);	/* never sampled: the daemon never hears of it */
		return 0;
	}
	bpf_map_delete_elem(&seen_procs, &tgid);
	if (filter_targets)
		bpf_map_delete_elem(&targets, &tgid);
	emit_event(ST_EV_EXIT, tgid, pid);
	return 0;
}

#endif

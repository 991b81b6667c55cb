/* SPDX-License-Identifier: GPL-2.0 */
/*
 * base.bpf.h - what every part of the BPF side uses: the settings user
 * space writes before load (.rodata: the verifier sees them as constants
 * and leaves out the branches a mode does not take), the counters (`stats`,
 * ST_STAT__MAX per event) and task_image(). A part of sample.bpf.c's one
 * compilation unit (see there for how the parts fit together).
 */
#ifndef STACKTREE_BASE_BPF_H
#define STACKTREE_BASE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "stacktree.h"
#include "shared_maps.h"
#include "shared_rules.h"	/* stat_ev(), stat_inc() among them */

/* set by user space before load */
const volatile __u32 max_nodes = 1;	/* node ids per generation */
const volatile __u32 slot_mask = 0;	/* node_slots per generation - 1 (a power of two) */
const volatile bool filter_targets = false;
const volatile bool kernel_stacks = false;
const volatile __u32 self_tgid = 0;	/* 0: the daemon may profile itself */
const volatile bool filter_comm = false;	/* --comm */
const volatile char comm_filter[ST_COMM_LEN] = {};
const volatile bool filter_cgroup = false;	/* --cgroup */
const volatile bool filter_tids = false;	/* -t: only the threads in tid_filter */
const volatile bool filter_uid = false;	/* -u: only tasks of real uid uid_filter */
const volatile __u32 uid_filter = 0;
const volatile bool filter_cpus = false;	/* -C: only on the CPUs set in cpu_filter */
const volatile __u64 cpu_filter[ST_MAX_CPUS / 64] = {};
const volatile __u32 unwind_mode = ST_UNWIND_FP;	/* --unwind: ST_UNWIND_* */
/* frames bpf_get_stack() walks at most (kernel.perf_event_max_stack, read
 * by the loader): --unwind fp's walk of a 32-bit process ends there, cut
 * (walk.bpf.h, fp_stack_compat()) */
const volatile __u32 fp_kernel_max = 127;
const volatile bool defer_unwind = false;	/* dwarf/auto: walks without tables go to the daemon */
/* --unwind fp with the early object (bpf/early.bpf.c): a thread whose early
 * samples went to the daemon has its samples deferred until its handoff
 * (sample.bpf.c, timer_sample()); false: that check is not in the program */
const volatile bool fp_handoff = false;
/* Tests only (STACKTREED_TEST_SPARE_EVERY=N): about one timer sample in N
 * is folded as if its thread's task storage could not be had, through the
 * spare state (threads.bpf.h). 0 (always outside tests): the branch is
 * dead and the verifier removes it. */
const volatile __u32 test_spare_every = 0;
/* Tests only (STACKTREED_TEST_DEFER=all|novma): every timer sample of a
 * target deferred, as the early program's are (all), and its stack's
 * mapping not looked up, as when the mmap lock is busy (novma:
 * defer.bpf.h). 0 (always outside tests): dead branches. */
const volatile __u32 test_defer = 0;	/* ST_TEST_DEFER_* */
const volatile __u32 interpreters = 0;	/* --interpreters: ST_INTERP_* walked (0: none) */
/* Benchmarks only (STACKTREED_BENCH_PY_STOP=walk|report|merge,
 * bench/bench.py): the Python part stops after its walk (1), its reports
 * (2) or its merge (3), the sample's native frames then folded, to time
 * each part apart. 0
 * (always outside benchmarks): dead branches the verifier removes. */
const volatile __u32 bench_py_stop = 0;

/* the counters, `stats`: shared_maps.h (the early object counts there too) */

/* The program a task runs: its self_exec_id (incremented by every exec,
 * inherited at fork), low 32 bits. */
static __always_inline __u32 task_image(struct task_struct *t)
{
	return (__u32)BPF_CORE_READ(t, self_exec_id);
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * threads.bpf.h - per-thread state, in task storage: the previous sample's
 * path (ids, addresses, flags) that the next sample's fold compares with,
 * the thread's node cache, and its deferral sequence (defer.bpf.h). One
 * map per event: `threads` (cpu-clock; --event wall's off-CPU time too),
 * `fault_threads` (page faults) and `offcpu_threads` (off-CPU time).
 */
#ifndef STACKTREE_THREADS_BPF_H
#define STACKTREE_THREADS_BPF_H

#include "base.bpf.h"
#include "thread_state.h"

/* `threads`, the cpu-clock's task storage: shared_maps.h */

/* The name of each thread in each image: written by the fold when the
 * thread's root node is created (each node generation), and by on_rename
 * (lifecycle.bpf.h) when a thread already in it renames itself, as a JVM's
 * threads do just after their first instructions: a node generation lasts
 * up to --drain-interval, and a name read only at its start would show the
 * name the thread was born with. The daemon reads it at each generation's
 * root (user/collect/collector.c). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct st_comm_key);
	__type(value, char[ST_COMM_LEN]);
	__uint(max_entries, 16384);
} thread_comms SEC(".maps");

/* A CPU's spare thread state, one per event, for a sample whose thread's
 * own cannot be had: bpf_task_storage_get() returns NULL when another
 * program of ours is inside a task-storage call on this CPU (the timer's
 * interrupt lands in the fault program, or in on_exec's delete), or when
 * it cannot allocate. Such a sample is folded all the same (fold_sample),
 * its frames counted as no new call; the thread's own path is left as it
 * was. The timer program does not nest on a CPU, nor does the fault
 * program, nor the off-CPU one (sched_switch runs with interrupts off): one
 * spare per event is never used twice at once. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct thread_state);
	__uint(max_entries, ST_EVENTS);
} spare_threads SEC(".maps");

/* thread_state.epoch of a path handed back: ids to be looked up again */
#define ST_EPOCH_HANDOFF 0xffffffffu

/* The same for the page-fault trees (--event faults). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} fault_threads SEC(".maps");

/* The same for the off-CPU trees (--event offcpu). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} offcpu_threads SEC(".maps");

#endif

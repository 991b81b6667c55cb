/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shared_maps.h - the maps the session's object (sample.bpf.c) shares
 * with the early object (early.bpf.c, which reuses them by name with
 * bpf_map__reuse_fd(): user/collect/early.c): the counters, the process
 * images, the processes seen and the events ring (procs.bpf.h), the
 * deferred samples' ring and buffer (defer.bpf.h), the threads' state
 * (threads.bpf.h) and the timers' switch (sample.bpf.c). Definitions
 * only, one place for both objects; each part's header says how it uses
 * them. Included by base.bpf.h and early.bpf.c.
 */
#ifndef STACKTREE_SHARED_MAPS_H
#define STACKTREE_SHARED_MAPS_H

#include "stacktree.h"
#include "thread_state.h"

/* per event: ST_STAT__MAX counters (the stats map, base.bpf.h) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, ST_EVENTS * ST_STAT__MAX);	/* per event */
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 16384);
} seen_procs SEC(".maps");

/* The image each process runs (struct st_proc_image): written at fork, at
 * exec and at a process's first sample, removed at its exit. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct st_proc_image);
	__uint(max_entries, 65536);
} proc_images SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* samples whose walk waits for tables (struct st_deferred, variable size):
 * the ring buffer in slot 0, put there by the daemon, which starts it small
 * and swaps in one twice as big when it fills, up to --unwind-defer-mb
 * (user/collect/unwind/defer_ring.c; inner ring buffers of any size since
 * Linux 5.10: kernel-notes/README.md, "Map sizes") */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__type(key, __u32);
	__uint(max_entries, 1);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_RINGBUF);
		__uint(max_entries, 4096);
	});
} deferred SEC(".maps");

/* a deferred sample being assembled, one per CPU (by CPU number: a per-CPU
 * array's values are limited to 32 KiB; only the timer program, which does
 * not nest with itself, uses it) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct st_deferred);
	__uint(max_entries, 1);	/* resized before load: possible CPUs */
} defer_buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

/* ST_TIMER_EARLY_ON while the early object samples a launched command on
 * its per-task events (bpf/early.bpf.c, which reuses this map): on_timer
 * then returns at once; the late thread sets ST_TIMER_EARLY_OFF once the
 * full program is in its slot, switching both with one write. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} timer_early SEC(".maps");

#endif

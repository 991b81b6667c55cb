/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench.bpf.h - the benchmark-only program (stacktreed --bench-bare, used
 * by bench/bench.py): the timer's filter and frame-pointer walk, nothing
 * folded. Loaded only with --bench-bare.
 */
#ifndef STACKTREE_BENCH_BPF_H
#define STACKTREE_BENCH_BPF_H

#include "base.bpf.h"
#include "procs.bpf.h"
#include "walk.bpf.h"

/* Benchmark baseline (stacktreed --bench-bare): on_timer_fp's filter and
 * the kernel's frame-pointer walk of the same stack (bpf_get_stack(), the
 * walk perf -g's and bpftrace's ustack's samples pay), nothing folded. Its
 * run time is the "bare walk" (issue 37). on_timer_fp walks by the same
 * rule in BPF, through a copy of the stack's page (walk.bpf.h). */
#define ST_BUDGET_ON_TIMER_BARE 1	/* verifier budget (% of 1M): see sample.bpf.c */
SEC("perf_event")
int on_timer_bare(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, zero = 0;
	struct scratch *sc;
	long un;

	if (!wanted(tgid, (__u32)pid_tgid, ST_EVENT_CPU))
		return 0;
	stat_inc(ST_STAT_SAMPLES);
	sc = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!sc)
		return 0;
	part_mark(ST_PART_THREAD);	/* parts.bpf.h: benchmarks only */
	un = bpf_get_stack(ctx, sc->ustack, ST_MAX_USER * sizeof(__u64), BPF_F_USER_STACK);
	part_end(ST_PART_WALK);
	if (un < 0)
		stat_inc(ST_STAT_LOST_STACK);
	if (kernel_stacks)
		bpf_get_stack(ctx, sc->kstack, sizeof(sc->kstack), 0);
	return 0;
}

#endif

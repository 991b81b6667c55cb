/* SPDX-License-Identifier: GPL-2.0 */
/*
 * parts.bpf.h - benchmarks only: where a cpu-clock sample's BPF time goes,
 * part by part (STACKTREED_BENCH_PARTS=1, bench/bench.py's walk rows). Each
 * part's nanoseconds (bpf_ktime_get_ns() between marks) and the samples
 * that reached it, per CPU, in `bench_parts`, read by the benchmark with
 * bpftool while the daemon runs. Off (always outside benchmarks:
 * bench_parts_on is .rodata), every mark is a dead branch the verifier
 * removes; on, each mark costs one clock read and one array lookup, which
 * the figures include (the "clock" part measures one mark alone).
 * bench_parts_tid (STACKTREED_BENCH_PARTS_TID, .rodata too): the samples of
 * that one thread are summed a second time on their own (`tid`), so that a
 * benchmark sees one thread's cost beside its whole process's from the
 * same run (bench/bench.py's java rows: a JVM's main thread without its
 * compiler and GC threads); 0, none.
 * Each sample's whole time (part_begin() to part_end()'s last part) also
 * goes into a histogram (hist[]), so that a benchmark can take a median:
 * a mean over a run moves with the few samples during which the VM's host
 * took the CPU away (a 5 ms stall in 4,000 samples adds 1.2 us to the
 * mean), the median does not (kernel-notes/python.md).
 */
#ifndef STACKTREE_PARTS_BPF_H
#define STACKTREE_PARTS_BPF_H

#include "base.bpf.h"

const volatile bool bench_parts_on = false;
const volatile __u32 bench_parts_tid = 0;

/* the parts, in the order a sample goes through them */
enum {
	ST_PART_FILTER,		/* entry to the end of wanted() */
	ST_PART_THREAD,		/* in_execve, scratch, the thread's task storage */
	ST_PART_WALK,		/* the user stack's walk (bare: bpf_get_stack()) */
	ST_PART_WALK_CHECK,	/* fp: the Java count */
	ST_PART_PY_WALK,	/* kernel stack, Python walk (its check alone without) */
	ST_PART_PY_MERGE,	/* Python merge (none without) */
	ST_PART_EXTRA,		/* the path */
	ST_PART_ENTER,		/* fold: generation, spare, new-process check */
	ST_PART_PREFIX,		/* fold: the common prefix with the previous path */
	ST_PART_ROOT,		/* fold: the thread's root (a new generation) */
	ST_PART_FRAMES,		/* fold: the frames past the prefix (the whole path's hash,
				 * then one by one when it is not in the node cache) */
	ST_PART_LEAF,		/* fold: BASE and CALLS on the leaf, CALLS above, counters */
	ST_PART_CLOCK,		/* one mark alone (the clock read's own cost) */
	ST_PART__MAX
};

/* what the fold did, counted */
enum {
	ST_PART_N_FRAMES,	/* frames folded one by one past the prefix */
	ST_PART_N_FIND,		/* of them, looked up in the node table (cache missed) */
	ST_PART_N_CALLS,	/* CALLS deltas written (node records: 0 or 2 a sample) */
	ST_PART_N_PROBES,	/* node table slots probed */
	ST_PART_N_MISSES,	/* samples whose path fold_shortcut() did not find whole */
	ST_PART_N__MAX
};

struct st_part_sums {
	__u64 ns[ST_PART__MAX];
	__u64 n[ST_PART__MAX];
	__u64 count[ST_PART_N__MAX];
};

#define ST_PART_HIST 1024	/* buckets of a sample's whole time, */
#define ST_PART_HIST_NS 50	/* ... this many ns each (the last: all longer) */

/* (bench/bench.py's bench_parts_map() reads this layout) */
struct st_parts {
	__u64 last;		/* the clock at the previous mark */
	struct st_part_sums all;	/* every sample's */
	struct st_part_sums tid;	/* bench_parts_tid's samples' */
	__u64 mine;		/* the sample is bench_parts_tid's */
	__u64 first;		/* the clock at part_begin() (0: none) */
	__u64 hist[ST_PART_HIST];	/* samples by their whole time, all (the
					 * marks' own cost included) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_parts);
	__uint(max_entries, 1);
} bench_parts SEC(".maps");

/* A sample of thread tid starts: the clock read. */
static __always_inline void part_begin(__u32 tid)
{
	__u32 zero = 0;
	struct st_parts *p;

	if (!bench_parts_on)
		return;
	p = bpf_map_lookup_elem(&bench_parts, &zero);
	if (p) {
		p->mine = bench_parts_tid && tid == bench_parts_tid;
		p->last = bpf_ktime_get_ns();
		p->first = p->last;
	}
}

/* The time since the previous mark goes to part `part`. */
static __always_inline void part_mark(__u32 part)
{
	__u32 zero = 0;
	struct st_parts *p;
	__u64 now;

	if (!bench_parts_on)
		return;
	p = bpf_map_lookup_elem(&bench_parts, &zero);
	if (!p || part >= ST_PART__MAX)
		return;
	now = bpf_ktime_get_ns();
	if (p->last) {
		p->all.ns[part] += now - p->last;
		p->all.n[part]++;
		if (p->mine) {
			p->tid.ns[part] += now - p->last;
			p->tid.n[part]++;
		}
	}
	p->last = now;
}

/* n more of what the fold did (ST_PART_N_*). The fold adds its counts
 * once a sample, after its last mark (they were a map lookup a frame
 * inside the timed part: some 60 a sample on bench_cpu, which the bare
 * walk does not pay). */
static __always_inline void part_add(__u32 which, __u32 n)
{
	__u32 zero = 0;
	struct st_parts *p;

	if (!bench_parts_on)
		return;
	p = bpf_map_lookup_elem(&bench_parts, &zero);
	if (!p || which >= ST_PART_N__MAX)
		return;
	p->all.count[which] += n;
	if (p->mine)
		p->tid.count[which] += n;
}

/* The last mark of a sample: its part, and one empty mark (the cost of a
 * mark itself, subtracted once per part by the benchmark). */
static __always_inline void part_end(__u32 part)
{
	__u32 zero = 0;
	struct st_parts *p;
	__u64 b;

	part_mark(part);
	if (!bench_parts_on)
		return;
	p = bpf_map_lookup_elem(&bench_parts, &zero);
	if (p && p->first && p->last > p->first) {
		b = (p->last - p->first) / ST_PART_HIST_NS;
		if (b > ST_PART_HIST - 1)
			b = ST_PART_HIST - 1;
		/* (the mask for the verifier: clang compared the value
		 * before the division, which it lost) */
		p->hist[b & (ST_PART_HIST - 1)]++;
	}
	part_mark(ST_PART_CLOCK);
	if (p) {
		p->last = 0;
		p->first = 0;
	}
}

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * dual.h - the prelude of every header compiled both into the BPF object
 * and natively (the daemon, the unit tests, the fuzzers): the one place
 * that tells the two builds apart. A dual-build header includes this first
 * and uses only what it defines for what differs between the builds:
 *
 *   ST_BPF                 1 in the BPF object, 0 natively
 *   __always_inline        (natively: GCC/clang's attribute)
 *   bool, __u8 ... __u64   (BPF: vmlinux.h's; natively: the C headers')
 *   st_loop(n, fn, ctx)    calls fn(i, ctx) for i < n until it returns
 *                          non-zero; the calls made. BPF: bpf_loop, whose
 *                          callback the verifier checks once, whatever n
 *   ST_CB                  the storage of a loop's callback, declared
 *                          `ST_CB long fn(__u32 i, void *ctx)`
 *   ST_AT(buf, i, room)    element i of buf, an array of `room` elements
 *                          (a power of two): BPF masks the index so that
 *                          the verifier sees it bounded; natively it is
 *                          the caller's to keep in bounds
 *
 * Memory reads are each walker's own (its includer supplies them: the
 * contracts on top of bpf/unwind_step.h and bpf/pywalk.h), because what a
 * read reads differs (BPF: the task's memory; natively: a copy of the
 * stack, or a live process through a reader callback).
 */
#ifndef STACKTREE_DUAL_H
#define STACKTREE_DUAL_H

#ifdef __bpf__
#define ST_BPF 1
#else
#define ST_BPF 0
#include <stdbool.h>
#include <linux/types.h>
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#if ST_BPF
#define st_loop(n, fn, ctx) bpf_loop((n), (fn), (ctx), 0)
#define ST_CB static
#define ST_AT(buf, i, room) ((buf)[(i) & ((room) - 1)])
#else
static inline long st_loop(__u32 n, long (*fn)(__u32, void *), void *ctx)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (fn(i, ctx))
			return (long)i + 1;
	return (long)n;
}
#define ST_CB static inline
#define ST_AT(buf, i, room) ((buf)[(i)])
#endif

#endif

/* fpcopy.h - --unwind fp's walk of a deferred sample (struct st_deferred,
 * bpf/stacktree.h): the kernel's frame-pointer rule, the fp timer
 * program's walk (bpf/walk.bpf.h, fp_stack()), done by the
 * daemon through the sample's stack copy. fp mode defers only the samples
 * of a launched command's first moments, taken by the early object
 * (bpf/early.bpf.c) before the full fp program is in, and a thread's
 * samples after it until the daemon's last path for it is handed back
 * (bpf/sample.bpf.c, fp_handoff): the walk must give the frames the BPF
 * walk gives, so that the thread's calls count once across the switch. No
 * CFI is compiled or read. Owner: user/collect/unwind/fpcopy.c. */
#ifndef STACKTREE_FPCOPY_H
#define STACKTREE_FPCOPY_H

#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

/* d's user stack, leaf first, into out (at most max addresses): its ip,
 * then, from its bp, each frame's return address (the word above the saved
 * frame pointer) for as long as the pair lies in the copy, not in a hole
 * (where the kernel's read of the process fails, the walk ends: complete);
 * then cut at the first address that is no user address, as the fp
 * program cuts (bad frame). The count of addresses; *stop (enum
 * st_unw_stop, bpf/unwind_step.h): ST_UNW_STOP_END complete,
 * ST_UNW_STOP_DEPTH max reached, ST_UNW_STOP_BAD_FRAME cut at an address
 * outside user space, ST_UNW_STOP_READ_FAULT the chain went on past a copy
 * cut at its bound (ST_DEFER_STACK). java (NULL: none; unwinder.h's
 * struct st_unw_java_ops): when d's process is a known JVM (java->proc),
 * a frame whose address is in its code cache is bpf/hotspot_step.h's
 * rule's, as in the dwarf path's walk of a copy (unwind_native.h): its
 * Java entry (ST_JAVA_TAG, no address) in place of the address, its
 * caller by the frame's layout (compiled Java keeps no frame pointer),
 * frame pointers again from the first frame outside it; where the rule
 * stops the walk, it stops (its stop, ST_UNW_STOP_NO_TABLE); the walk
 * counted and its methods read (st_unw_java_walked()). Before, a deep
 * Java run's early samples under --unwind fp: none whole. A 32-bit
 * (ia32) process's sample (d->compat) is walked by the kernel's 32-bit
 * rule instead: 4-byte words, no cut but a pair it cannot read (the fp
 * program's bpf_get_stack() for it, which also stops at
 * kernel.perf_event_max_stack frames, where this goes on to max); the
 * daemon walks it so in every mode (user/collect/unwind/deferred.c).
 * Before, such samples were walked with 8-byte words: cut under
 * [truncated] at their leaf. */
struct st_unw_java_ops;
size_t st_fpcopy_walk(const struct st_deferred *d, const struct st_unw_java_ops *java, __u64 *out,
		      size_t max, unsigned *stop);

#endif

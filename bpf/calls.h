/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * calls.h - the CALLS rule of frame trees (ST_CALLS_FRAME, kernel-notes/
 * README.md): which frames of a thread's sample start a new call, given the
 * previous sample of the same thread. One source, compiled into the BPF
 * fold (bpf/fold.bpf.h, fold_frame()), the daemon's late fold
 * (user/collect/collector.c) and the tree (common/tree.c); unit-tested
 * natively (tests/unit/test_calls.c).
 */
#ifndef STACKTREE_CALLS_H
#define STACKTREE_CALLS_H

#include "dual.h"

/*
 * The first frame that is a new call (0: the outermost), of a path that
 * shares its first `prefix` frames with the thread's previous path, which
 * was prev_depth frames deep. Nodes are positions inside frames (call sites, leaf): past the
 * prefix every frame is a new call; the frame at the prefix is the same
 * frame, moved on, when the previous path had a frame there, and a new
 * call when the previous path ended before it; frames inside the prefix
 * are not new.
 */
static __always_inline __u32 st_calls_first(__u32 prefix, __u32 prev_depth)
{
	return prev_depth > prefix ? prefix + 1 : prefix;
}

/* The same, frame by frame: frames from st_calls_first() on are new. The
 * BPF fold writes a sample's CALLS as two deltas whose subtree sums are
 * them (+1 on the leaf, -1 on the node above the first new frame: the
 * root for frame 0), summed by the daemon (st_collector__merge()); the
 * daemon's late fold and the tree count them frame by frame. */
static __always_inline bool st_calls_is_new(__u32 i, __u32 prefix, __u32 prev_depth)
{
	return i >= st_calls_first(prefix, prev_depth);
}

#endif

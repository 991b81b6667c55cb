/* SPDX-License-Identifier: GPL-2.0 */
/*
 * thread_state.h - the layout of a thread's state in task storage (the
 * `threads` maps of threads.bpf.h): types only, so that the early object
 * (early.bpf.c), which shares the session's `threads` map to number its
 * deferred samples, reads it as the session's programs do.
 */
#ifndef STACKTREE_THREAD_STATE_H
#define STACKTREE_THREAD_STATE_H

#include "stacktree.h"
#include "pathhash.h"

/* A thread's recently used nodes, two ways by the hash of the node's path
 * (bpf/fold.bpf.h, node_get_cached()): a thread that alternates between a
 * few paths finds their nodes here instead of in the node table. An entry
 * is the hash of the node's path (bpf/pathhash.h) xor its root's value,
 * the node's id and the epoch it was found in (an older epoch's is
 * stale): 16 bytes, 512 entries in 8 KiB. */
#define ST_NODE_CACHE 512

struct node_cache_ent {
	__u64 hash;
	__u32 epoch;
	__u32 id;
};

/* Whether a process runs a JVM the daemon found (java_procs), as of
 * java_procs_epoch's value then (bpf/walk.bpf.h, java_seen()). */
struct st_jvm_check {
	__u64 epoch;		/* java_procs_epoch + 1 when read (0: never) */
	__u32 tgid;		/* the process read */
	__u32 has;		/* 1: in java_procs */
};

/* The previous sample's path of a thread, and its node cache. */
struct thread_state {
	__u32 epoch;
	__u32 depth;		/* frames in the path, root excluded */
	__u32 root;		/* root node id (valid when epoch matches) */
	__u32 defer_seq;	/* samples of the thread deferred so far */
	__u32 deferring;	/* deferred since the last folded one (0: folding here) */
	__u32 spare;		/* 1: a CPU's spare (spare_threads), 0: a thread's own */
	__u32 known;		/* ids[0, known) are the path's nodes (the rest may be 0:
				 * bpf/fold.bpf.h, fold_shortcut()) */
	__u32 pad;
	/* the thread's process and the runtimes, memos of the checks every
	 * sample makes (a per-CPU memo missed whenever two processes shared
	 * a CPU, a hash lookup each: kernel-notes/README.md, "The
	 * frame-pointer walk through the window") */
	struct st_jvm_check java;	/* --unwind fp: is it a JVM (java_seen()) */
	__u64 py_none;		/* py_procs_epoch + 1 when it had no CPython (0: not known;
				 * bpf/python.bpf.h, st_py_walk_thread()) */
	__u32 ids[ST_PATH_SLOTS];
	/* the previous path's sums (bpf/pathhash.h): the next sample's prefix
	 * is found by comparing their hashes (bpf/fold.bpf.h) */
	struct st_path_sums prev;
	struct node_cache_ent cache[ST_NODE_CACHE];
};

#endif

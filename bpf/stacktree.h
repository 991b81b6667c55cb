/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stacktree.h - structures shared by the BPF programs (bpf/) and the daemon
 * (user/). Fixed-width __u32/__u64 types only; no pointers.
 *
 * The kernel folds every sample into a call-stack tree per (pid, tid):
 *   - node ids index the `nodes` array map; id 0 means "none";
 *   - the `node_ids` hash maps (parent id, generation, flags, address) to a
 *     node id, so that a node is created once and found again;
 *   - a thread's root node has parent 0, flag ST_NODE_ROOT and
 *     addr = (pid << 32) | tid.
 * Two generations of node ids alternate so that user space can drain one
 * while the programs fill the other: generation g owns the ids
 * [g * max_nodes + 1, (g + 1) * max_nodes].
 */
#ifndef STACKTREE_BPF_SHARED_H
#define STACKTREE_BPF_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define ST_MAX_USER 127		/* user frames walked per sample */
#define ST_MAX_KERNEL 64	/* kernel frames per sample (--kernel) */
#define ST_PATH_SLOTS 256	/* path buffers: power of two >= user + kernel + 1 */
#define ST_COMM_LEN 16

/* st_node_key.flags / st_node_rec.flags */
#define ST_NODE_ROOT 0x1	/* a thread's root; addr = pid << 32 | tid */
#define ST_NODE_LEAF 0x2	/* the sampled instruction pointer */
#define ST_NODE_KERNEL 0x4	/* a kernel address */
#define ST_NODE_TRUNCATED 0x8	/* pseudo frame: the walk hit the depth limit */
#define ST_NODE_DEAD 0x80	/* record allocated but its key could not be inserted */

struct st_node_key {
	__u32 parent;
	__u16 gen;
	__u16 flags;
	__u64 addr;
};

struct st_node_rec {
	__u64 addr;
	__u32 parent;
	__u16 flags;
	__u16 gen;
	__u64 base;	/* samples where this node is the leaf */
	__u64 calls;	/* new calls of this frame, see kernel-notes/ */
};

/* Per-CPU counters, index of the `stats` per-CPU array. */
enum st_stat {
	ST_STAT_SAMPLES,	 /* timer samples of targeted threads, folded or lost */
	ST_STAT_FOLDED,		 /* samples folded into a tree */
	ST_STAT_LOST_NODES_FULL, /* no free node id in this generation */
	ST_STAT_LOST_HASH_FULL,	 /* node_ids hash full */
	ST_STAT_LOST_THREAD,	 /* no per-thread state (task storage) */
	ST_STAT_LOST_STACK,	 /* bpf_get_stack failed */
	ST_STAT_TRUNCATED,	 /* stacks cut at ST_MAX_USER (still folded) */
	ST_STAT_EMPTY_STACK,	 /* no user frame (kernel thread, exiting task) */
	ST_STAT_IDLE,		 /* samples of the idle task, not folded */
	ST_STAT_NEW_PROC_LOST,	 /* "new process" event lost (ring buffer full) */
	ST_STAT__MAX,
};

/* targets map values */
#define ST_TARGET_ACTIVE 1	/* sample this process */
#define ST_TARGET_AT_EXEC 2	/* start sampling when it calls exec (launched command) */

/* Ring buffer events: the daemon captures a process's maps on first sight. */
#define ST_EV_NEW_PROC 1
#define ST_EV_EXEC 2
#define ST_EV_EXIT 3	/* a seen process's main thread exited */

struct st_event {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 ppid;
	char comm[ST_COMM_LEN];
};

#endif

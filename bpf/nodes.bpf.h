/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nodes.bpf.h - the node table: node records (`nodes`, one half per
 * generation) and the open-addressing table that finds a node by
 * (parent, flags, addr) (`node_slots`), both mmaped by the daemon; the
 * generations (`epoch`, `next_id`, `busy_gen`) that let the daemon drain one
 * half while programs fill the other (user/collect/session.c). node_get()
 * is the one way to a node id; the fold (fold.bpf.h) calls it through the
 * thread's node cache.
 */
#ifndef STACKTREE_NODES_BPF_H
#define STACKTREE_NODES_BPF_H

#include "base.bpf.h"
#include "parts.bpf.h"

/* written by user space at run time (mmaped .bss) */
__u32 epoch = 0;		/* generation = epoch & 1 */
__u32 next_id[2] = {};		/* ids handed out in each generation */

/* The node table: (parent, flags, addr) -> node id, open addressing with
 * linear probing, one half per generation (slot_mask + 1 slots each, at
 * least twice the generation's ids). A slot is 0 (empty) or id << 32 | tag,
 * the tag being the key's hash bits that did not pick the slot; the key
 * itself is the id's record in `nodes`. Slots are only ever claimed
 * (compare-and-swap from 0) while their generation is current, and the
 * daemon zeroes the old half when it drains it (through mmap). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);	/* 2 * (slot_mask + 1), resized before load */
	__uint(map_flags, BPF_F_MMAPABLE);
} node_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct st_node_rec);
	__uint(max_entries, 1);	/* 2 * max_nodes + 1, resized before load */
	__uint(map_flags, BPF_F_MMAPABLE);
} nodes SEC(".maps");

#define ST_SLOT_PROBES 32	/* at most half the slots are used: a longer run is
				 * next to impossible, and is counted as a full table */

static __always_inline __u64 node_hash(__u32 parent, __u16 flags, __u64 addr)
{
	__u64 x = addr * 0x9E3779B97F4A7C15ull ^ (((__u64)parent << 16 | flags) * 0xC2B2AE3D27D4EB4Full);

	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ull;
	return x ^ (x >> 32);
}

/* A new record for (parent, flags, addr) in generation gen; 0 when the
 * generation's ids are used up. */
static __always_inline __u32 node_new(__u32 ev, __u32 gen, __u32 parent, __u16 flags, __u64 addr)
{
	struct st_node_rec *rec;
	__u32 id, n;

	n = __sync_fetch_and_add(&next_id[gen & 1], 1) + 1;
	if (n > max_nodes) {
		stat_ev(ev, ST_STAT_LOST_NODES_FULL);
		return 0;
	}
	id = gen * max_nodes + n;
	rec = bpf_map_lookup_elem(&nodes, &id);
	if (!rec)
		return 0;
	rec->addr = addr;
	rec->parent = parent;
	rec->flags = flags;
	rec->gen = gen;
	rec->base = 0;
	rec->calls = 0;
	return id;
}

/* Whether node id (of slot value v) has the key (parent, flags, addr). */
static __always_inline bool node_is(__u64 v, __u32 parent, __u16 flags, __u64 addr)
{
	__u32 id = v >> 32;
	struct st_node_rec *rec = bpf_map_lookup_elem(&nodes, &id);

	return rec && rec->addr == addr && rec->parent == parent && rec->flags == flags;
}

struct probe_ctx {
	__u64 h, addr;
	__u32 ev, gen, parent, mine, id;
	__u32 probes;		/* slots probed (benchmarks only: parts.bpf.h) */
	__u16 flags;
	bool created, failed;
};

/* Probe p of a key's run of slots: stop at the key's slot or at an empty
 * one, which is claimed (compare-and-swap) for a new record. */
static long node_probe(__u32 p, void *data)
{
	struct probe_ctx *c = data;
	__u32 k = (c->gen & 1) * (slot_mask + 1) + (((__u32)c->h + p) & slot_mask);
	__u64 *slot = bpf_map_lookup_elem(&node_slots, &k), v;

	if (!slot)
		return 1;
	if (bench_parts_on)	/* benchmarks only */
		c->probes++;
	v = *(volatile __u64 *)slot;
	if (!v) {
		if (!c->mine &&
		    !(c->mine = node_new(c->ev, c->gen, c->parent, c->flags, c->addr))) {
			c->failed = true;
			return 1;
		}
		v = __sync_val_compare_and_swap(slot, 0, (__u64)c->mine << 32 | (c->h >> 32));
		if (!v) {
			c->id = c->mine;
			c->created = true;
			return 1;
		}
	}
	if ((__u32)v == (__u32)(c->h >> 32) && node_is(v, c->parent, c->flags, c->addr)) {
		c->id = v >> 32;
		return 1;
	}
	return 0;
}

/* A node id for (parent, flags, addr) in this generation, created if new
 * (ST_NODE_CREATED set). Returns 0 when the generation's ids or slots are
 * exhausted. A record is written before its slot is claimed, so a program
 * that finds the slot finds the key; one that loses the race for an empty
 * slot to the same key uses the winner's id and marks its own record dead
 * (the daemon skips it).
 * A global function: the verifier checks it (and its probe loop) once per
 * program, not at each of the fold's three call sites in every state that
 * reaches them (kernel-notes/README.md, "Start-up and verifier budgets":
 * the fp timer program 138,358 -> 25,613 instructions). */
#define ST_NODE_CREATED (1ull << 32)

__noinline __u64 node_find(__u32 ev, __u32 gen, __u32 parent, __u16 flags, __u64 addr)
{
	struct probe_ctx c = { .h = node_hash(parent, flags, addr), .addr = addr, .ev = ev,
			       .gen = gen, .parent = parent, .flags = flags };
	struct st_node_rec *rec;

	bpf_loop(ST_SLOT_PROBES, node_probe, &c, 0);
	if (ev == ST_EVENT_CPU)	/* benchmarks only */
		part_add(ST_PART_N_PROBES, c.probes);
	if (c.mine && !c.created && (rec = bpf_map_lookup_elem(&nodes, &c.mine)))
		rec->flags = flags | ST_NODE_DEAD;
	if (!c.id && !c.failed)
		stat_ev(ev, ST_STAT_LOST_TABLE_FULL);
	return (c.created ? ST_NODE_CREATED : 0) | c.id;
}

/* node_find(), its result split: the id, and *created. */
static __always_inline __u32 node_get(__u32 ev, __u32 gen, __u32 parent, __u16 flags,
				      __u64 addr, bool *created)
{
	__u64 r = node_find(ev, gen, parent, flags, addr);

	*created = (r & ST_NODE_CREATED) != 0;
	return (__u32)r;
}

/* Programs inside a generation, per CPU: the daemon waits for the old
 * generation's count to drop to zero before it drains it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 2);
} busy_gen SEC(".maps");

/* Enter the current generation: count this program in, then check that the
 * epoch did not move meanwhile (the daemon stores the epoch, then reads the
 * counts; both sides use full barriers, so one of them sees the other). */
static __always_inline __u64 *gen_enter(__u32 *ep)
{
	for (int tries = 0; tries < 2; tries++) {
		__u32 e = *(volatile __u32 *)&epoch, g = e & 1;
		__u64 *b = bpf_map_lookup_elem(&busy_gen, &g);

		if (!b)
			return NULL;
		__sync_fetch_and_add(b, 1);
		if (*(volatile __u32 *)&epoch == e) {
			*ep = e;
			return b;
		}
		__sync_fetch_and_sub(b, 1);
	}
	return NULL;
}

#endif

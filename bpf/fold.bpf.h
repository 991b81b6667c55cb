/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fold.bpf.h - the fold: a sample's path (struct path_view, read in place
 * from the walked stacks) into the thread's call-stack tree. The path is
 * compared with the thread's previous path by their frames' hashes
 * (bpf/pathhash.h, from sums the walk adds up); the shared
 * prefix reuses the previous node ids, so only the frames past it cost a
 * lookup (the thread's node cache, then the node table, nodes.bpf.h). BASE
 * is added on the leaf, CALLS on frames that are new calls (the CALLS rule:
 * fold_frame()). CUM is derived in user space. kernel-notes/README.md has
 * the rules and figures.
 */
#ifndef STACKTREE_FOLD_BPF_H
#define STACKTREE_FOLD_BPF_H

#include "base.bpf.h"
#include "nodes.bpf.h"
#include "threads.bpf.h"
#include "procs.bpf.h"
#include "walk.bpf.h"
#include "calls.h"
#include "pathhash.h"
#include "python.bpf.h"

/* P^-g for g < ST_PATH_SLOTS (bpf/pathhash.h, st_ph_pinv_fill()), set by
 * user space before load */
const volatile __u64 ph_pinv[ST_PATH_SLOTS] = {};

/* A sample's path, root first, read in place from the walked stacks:
 * [truncated] root, user frames, kernel frames, then an optional extra
 * frame (a page fault's data leaf, or [kernel] for a sample without any
 * frame). The user frame walked first is the interrupted IP: flagged
 * ST_NODE_LEAF when no kernel frame follows it. */
struct path_view {
	__u32 trunc, un, kn, extra, n;
	__u64 extra_addr;
	__u16 extra_flags;
	__u16 other;		/* folded for another task than the current one (off-CPU
				 * time, at its switch-in): its image and comm below */
	__u32 image;
	__u64 weight;		/* BASE added on the leaf (0: one sample) */
	__u32 ev;		/* ST_EVENT_* (set by fold_sample()) */
	char comm[ST_COMM_LEN];
};

static __always_inline __u64 path_at(const struct scratch *sc, const struct path_view *pv,
				     __u32 i, __u16 *flags)
{
	__u32 from;

	if (i < pv->trunc) {
		*flags = ST_NODE_TRUNCATED;
		return 0;
	}
	i -= pv->trunc;
	if (i < pv->un) {
		__u64 a;

		from = pv->un - 1 - i;
		*flags = (from == 0 && pv->kn == 0) ? ST_NODE_LEAF : 0;
		a = sc->ustack[from & (ST_USTACK_SLOTS - 1)];
		if (a & ST_PY_TAG) {	/* merged in by st_py_sample() */
			*flags |= ST_NODE_PYTHON;
			a &= ~ST_PY_TAG;
		} else if (a & ST_JAVA_TAG) {	/* bpf/hotspot_step.h's */
			*flags |= ST_NODE_JAVA;
			a &= ~ST_JAVA_TAG;
		}
		return a;
	}
	i -= pv->un;
	if (i < pv->kn) {
		from = pv->kn - 1 - i;
		*flags = ST_NODE_KERNEL | (from == 0 ? ST_NODE_LEAF : 0);
		return sc->kstack[from & (ST_MAX_KERNEL - 1)];
	}
	*flags = pv->extra_flags;
	return pv->extra_addr;
}

/* The user part of a path: un frames, under a [truncated] root when the
 * walk was cut (frame pointers: it filled the buffer, or stopped at what
 * was no user address; DWARF: the unwinder says so; either has counted
 * why; a 32-bit process's kernel walk: it filled kernel.perf_event_max_stack,
 * counted here). */
static __always_inline void path_user(struct path_view *pv, const struct scratch *sc, long un,
				      __u32 ev)
{
	if (sc->ufull) {
		stat_ev(ev, ST_STAT_TRUNCATED);
		pv->trunc = 1;
	}
	if (sc->utrunc)
		pv->trunc = 1;
	pv->un = un;
}

/* The leaf and the frames above it that fold_shortcut() looks for in the
 * cache, to resume a fold near the leaf when the whole path is not there. */
#define ST_FOLD_TAIL 4

struct fold_ctx {
	struct thread_state *ts;
	struct scratch *sc;
	struct path_view *pv;
	__u32 gen;
	__u32 parent;
	__u32 start;		/* first path index to fold */
	__u32 end;		/* one past the last */
	__u32 epoch;
	__u32 prefix;		/* common prefix with the previous path */
	__u32 limit;		/* frames to compare for the prefix */
	__u32 ev;		/* ST_EVENT_* */
	__u32 prev_depth;
	__u32 failed;
	__u64 phash;		/* the hash of the frames before the next one (bpf/pathhash.h) */
	__u64 rmix;		/* the root's value: the node cache's keys are the path's
				 * hashes xor it (node_get_cached()) */
	__u32 above_at;		/* fold_shortcut(): the node above the first new call */
	__u32 n[ST_PART_N_CALLS + 1];	/* benchmarks only: frames, finds, calls */
};

/* The node cache's key of the path's prefix up to frame i: its hash
 * (bpf/pathhash.h), from the path's own addresses, not from the parent's
 * node id (keyed by the parent's id, each frame's cache read waited for
 * the one before: kernel-notes/README.md, "The fold's cost"), xor the
 * root's value (a thread's root changes within an epoch at an exec). */
static __always_inline __u64 ph_key(const struct fold_ctx *c, const struct st_path_sums *ps,
				    __u32 i)
{
	return st_ph_at(ps, ph_pinv, i) ^ c->rmix;
}

/* node_get() through the thread's node cache: two ways (the pair of
 * entries at an even index), the newest key in the first, the pair picked
 * by the path's hash up to and with this frame xor the root's value
 * (ph_key(): every frame's address and flags from the root down).
 * An entry is that hash, the epoch and the id node_get() returned in that
 * epoch: the winner of its key's slot, whose record keeps that key until
 * the daemon drains the generation (a record that lost the race for its
 * slot is never returned, and ids are not reused within an epoch). An
 * entry of this epoch whose hash is the path's is the path's node: no
 * record is read. Before (2026-11-30), the entry held the frame's address
 * and the rest of the key (parent, flags) was checked in the node's
 * record, which the fold then wrote for CALLS: a record line a differing
 * frame, cold under load (~300 ns a frame, kernel-notes/README.md, "The
 * fold's cost by part"). Two paths whose 64-bit hashes are equal in one
 * epoch and one way would share a node: by chance about one lookup in
 * 2^64; by design only for a program that forges its own stack (the
 * cache is its thread's: the forger's own samples would be misplaced,
 * which its forged stack does anyway). A thread that alternates between a
 * few paths has more nodes than a small cache keeps apart: bench_cpu's 8
 * paths have ~300 nodes (leaf addresses included). */
static __always_inline bool node_cache_is(const struct node_cache_ent *e, const struct fold_ctx *c,
					  __u64 hash)
{
	return e->epoch == c->epoch && e->hash == hash && e->id;
}

/* The node whose key (ph_key()) is hash, from the cache, or 0. */
static __always_inline __u32 node_cache_find(struct fold_ctx *c, __u64 hash)
{
	__u32 h = (__u32)(hash >> 32) & (ST_NODE_CACHE - 2);
	struct node_cache_ent *e = &c->ts->cache[h], *e1 = &c->ts->cache[h + 1];

	if (node_cache_is(e, c, hash))
		return e->id;
	if (node_cache_is(e1, c, hash))
		return e1->id;
	return 0;
}

static __always_inline __u32 node_get_cached(struct fold_ctx *c, __u16 flags, __u64 addr)
{
	__u32 h;
	struct node_cache_ent *e, *e1;
	bool created;
	__u32 id;

	__u64 key;

	c->phash = c->phash * ST_PH_P + st_ph_mix(addr, flags);	/* Horner's: pathhash.h */
	key = c->phash ^ c->rmix;
	id = node_cache_find(c, key);
	if (id)
		return id;
	h = (__u32)(key >> 32) & (ST_NODE_CACHE - 2);
	e = &c->ts->cache[h];
	e1 = &c->ts->cache[h + 1];
	if (bench_parts_on)	/* benchmarks only */
		c->n[ST_PART_N_FIND]++;
	id = node_get(c->ev, c->gen, c->parent, flags, addr, &created);
	if (id) {
		if (e->epoch == c->epoch)	/* the older key to the second way */
			*e1 = *e;
		e->hash = key;
		e->epoch = c->epoch;
		e->id = id;
	}
	return id;
}

/* Fold path frame i: find or create its node (its CALLS: fold_path()). */
static __always_inline int fold_frame(struct fold_ctx *c, __u32 i)
{
	__u32 slot = i & (ST_PATH_SLOTS - 1);
	__u32 id;

	__u16 flags;
	__u64 addr = path_at(c->sc, c->pv, i, &flags);

	if (bench_parts_on)	/* benchmarks only (parts.bpf.h) */
		c->n[ST_PART_N_FRAMES]++;
	id = node_get_cached(c, flags, addr);
	if (!id) {
		c->failed = 1;
		return 1;
	}
	c->ts->ids[slot] = id;
	c->parent = id;
	return 0;
}

/* Two frames per call: it saves a fifth of the fold's time on stacks that
 * change a lot; four exceed the verifier's budget once kernel frames are on. */
static long fold_frames(__u32 k, void *data)
{
	struct fold_ctx *c = data;
	__u32 i = c->start + 2 * k;

	if (i >= c->end || fold_frame(c, i))
		return 1;
	if (i + 1 >= c->end || fold_frame(c, i + 1))
		return 1;
	return 0;
}

/* A path met in this epoch, past its prefix: its leaf found in the node
 * cache by the hash of the whole path, and the node above its first new
 * call (CALLS, bpf/calls.h) in the known prefix or the cache by its hash
 * (both from the path's sums, ps: bpf/pathhash.h; before, a pass over the
 * frames past the prefix hashed them). Then no frame past the prefix is
 * looked up one by one: on a
 * thread that alternates between a few paths (bench_cpu: 8, 25 of its 35
 * frames differing from one sample to the next) each differing frame
 * cost a cache probe, a line of the thread's 8 KiB of entries, cold
 * under load. The frames between are left unknown (ts->known: the next
 * sample folds from there if it needs them). 1: found whole; 2: found but
 * for the last frames (a new leaf), in->start, in->parent and in->phash
 * set for fold_span() to fold those; 0: fold frame by frame (in as it
 * was). */
__noinline int fold_shortcut(struct scratch *sc, struct path_view *pv, struct thread_state *ts,
			     struct st_path_sums *ps, struct fold_ctx *in)
{
	struct fold_ctx fc, *c = &fc;
	__u32 node, above = 1, first, at;

	if (!sc || !pv || !ts || !ps || !in)
		return 0;
	fc = *in;
	fc.sc = sc;
	fc.pv = pv;
	fc.ts = ts;
	if (ts->spare || c->end <= c->start || c->end > ST_PATH_SLOTS)
		return 0;
	first = st_calls_first(c->prefix, c->prev_depth);
	/* above the first new call: inside the known frames (ids), or past them */
	c->above_at = first && first - 1 >= c->start && first < c->end ? first - 1 : ~0u;
	/* the leaf, else the deepest of the ST_FOLD_TAIL - 1 frames above it:
	 * a leaf new to the cache (a new address in a hot function, or an
	 * entry another path's took) is then folded alone */
	at = c->end - 1;
	node = node_cache_find(c, ph_key(c, ps, at));
	for (__u32 k = 1; !node && k < ST_FOLD_TAIL; k++) {
		if (at <= c->start)
			return 0;
		at--;
		node = node_cache_find(c, ph_key(c, ps, at));
	}
	if (!node)
		return 0;
	if (c->above_at < at)	/* (~0u, none, is never below) */
		above = node_cache_find(c, ph_key(c, ps, c->above_at));
	if (!above)
		return 0;
	ts->ids[at & (ST_PATH_SLOTS - 1)] = node;
	if (c->above_at < at)
		ts->ids[c->above_at & (ST_PATH_SLOTS - 1)] = above;
	ts->known = c->start;
	if (at == c->end - 1)
		return 1;
	/* the frames past node, for fold_span() */
	in->start = at + 1;
	in->parent = node;
	in->phash = st_ph_at(ps, ph_pinv, at);
	return 2;
}

/* The path's frames [start, end) folded one by one, from node parent
 * (in->parent, in->phash: the path's hash up to it); the last node id in
 * in->parent, a failure in in->failed. Global functions, this one and
 * fold_shortcut(): the verifier checks each once, whatever state
 * fold_path() reaches them in (inlined, its branches on the known frames
 * made it check the loop's callback again for each: 130k -> 492k
 * instructions in on_timer_fp). */
__noinline int fold_span(struct scratch *sc, struct path_view *pv, struct thread_state *ts,
			 struct fold_ctx *in)
{
	struct fold_ctx fc;

	if (!sc || !pv || !ts || !in)
		return 1;
	fc = *in;
	fc.sc = sc;
	fc.pv = pv;
	fc.ts = ts;
	if (fc.end > fc.start && fc.end <= ST_PATH_SLOTS)
		bpf_loop((fc.end - fc.start + 1) / 2, fold_frames, &fc, 0);
	in->parent = fc.parent;
	in->failed = fc.failed;
	for (__u32 k = 0; k <= ST_PART_N_CALLS; k++)
		in->n[k] = fc.n[k];
	return fc.failed;
}

/* The prefix two paths share, by their hashes (bpf/pathhash.h): the hash
 * of frame i's prefix is equal in both up to the first frame that differs,
 * then not (but by a chance of 2^-64), so a binary search finds it in
 * log2(limit) + 1 steps. Compared unnormalized (st_ph_raw(): P^g times the
 * hash, g the frames below it, which differ between the paths by their
 * depths' difference d): the deeper one's times P^-d against the other's,
 * one table lookup a search, not two a step (ph_pinv's lines are cold in
 * a loaded machine's samples). Before (2026-11-30),
 * the frames were compared one by one with a copy of the previous path,
 * which a pass over the frames past the prefix wrote every sample. */
struct prefix_search {
	const struct st_path_sums *a, *b;
	__u64 ca, cb;
	__u32 lo, hi;		/* the prefix is in [lo, hi] */
};

#define ST_PREFIX_STEPS 11	/* log2(ST_PATH_SLOTS) + 1 */

static long prefix_step(__u32 k, void *data)
{
	struct prefix_search *p = data;
	__u32 mid;

	(void)k;
	if (p->lo >= p->hi)
		return 1;
	mid = p->lo + (p->hi - p->lo + 1) / 2;
	if (st_ph_raw(p->a, mid - 1) * p->ca == st_ph_raw(p->b, mid - 1) * p->cb)
		p->lo = mid;
	else
		p->hi = mid - 1;
	return 0;
}

/* The path's sums kept for the next sample's prefix: the scalars, and k[]
 * and u[] as far as they are used, copied by a helper (one call, not a
 * loop of the frames). */
static __always_inline void ph_keep(struct st_path_sums *dst, const struct st_path_sums *src)
{
	__u32 sz;

	dst->n = src->n;
	dst->un = src->un;
	dst->kn = src->kn;
	dst->m0 = src->m0;
	dst->pk = src->pk;
	dst->pu = src->pu;
	dst->total = src->total;
	if (src->kn) {	/* (k[0] is 0 in both) */
		sz = (src->kn + 1) * sizeof(__u64);
		if (sz > sizeof(dst->k))
			sz = sizeof(dst->k);
		bpf_probe_read_kernel(dst->k, sz, src->k);
	}
	sz = src->un * sizeof(__u64);
	if (sz > sizeof(dst->u))
		sz = sizeof(dst->u);
	bpf_probe_read_kernel(dst->u, sz, src->u);
}

/* Fold one sample, whose path pv describes (ps: its sums), into the
 * calling thread's tree for event pv->ev (ts: the thread's state for it). */
/* A global function: the verifier checks it once, on its own, not once per
 * state its callers reach it in (the page-fault program's branches
 * multiplied the fold's states close to the 1M-instruction limit). */
__noinline int fold_path(struct scratch *sc, struct path_view *pv, struct thread_state *ts,
			 struct st_path_sums *ps, __u64 pid_tgid)
{
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct prefix_search sr;
	struct fold_ctx fc = {};
	struct st_node_rec *rec;
	__u32 ep, gen, n, leaf, first, missed = 0, ev;
	__u16 root_flags;
	bool calls;
	bool fresh, created;
	__u64 *busy;

	if (!sc || !pv || !ts || !ps)
		return 0;
	ev = pv->ev;
	root_flags = ST_NODE_ROOT | (ev == ST_EVENT_FAULTS ? ST_NODE_FAULTS : 0) |
		     (ev == ST_EVENT_OFFCPU ? ST_NODE_OFFCPU : 0);
	n = pv->n;
	if (n > ST_PATH_SLOTS - 1)
		n = ST_PATH_SLOTS - 1;
	busy = gen_enter(&ep);
	if (!busy) {
		stat_ev(ev, ST_STAT_LOST_EPOCH);
		return 0;
	}
	gen = ep & 1;
	/* a thread's first sample folded here (a handed-back path has no ids) */
	fresh = !ts->spare && ts->root == 0 && (ts->depth == 0 || ts->epoch == ST_EPOCH_HANDOFF);
	if (fresh && !pv->other)	/* a thread's first sample: is its process new? */
		notify_new_proc(tgid, tid);	/* (another task's: told at its switch-out) */
	if (ev == ST_EVENT_CPU)	/* benchmarks only (parts.bpf.h) */
		part_mark(ST_PART_ENTER);

	/* common prefix with the previous path, by the hashes of their frames */
	fc.prev_depth = ts->depth;
	fc.ts = ts;
	fc.sc = sc;
	fc.pv = pv;
	fc.limit = n < fc.prev_depth ? n : fc.prev_depth;
	if (fc.limit > ts->prev.n)	/* (they are equal) */
		fc.limit = ts->prev.n;
	if (fc.limit > ps->n)
		fc.limit = ps->n;
	sr.a = ps;
	sr.b = &ts->prev;
	sr.ca = ps->n > ts->prev.n ? ph_pinv[(ps->n - ts->prev.n) & (ST_PATH_SLOTS - 1)] : 1;
	sr.cb = ps->n < ts->prev.n ? ph_pinv[(ts->prev.n - ps->n) & (ST_PATH_SLOTS - 1)] : 1;
	sr.lo = 0;
	sr.hi = fc.limit;
	bpf_loop(ST_PREFIX_STEPS, prefix_step, &sr, 0);
	fc.prefix = sr.lo;

	if (ev == ST_EVENT_CPU)
		part_mark(ST_PART_PREFIX);

	if (ts->epoch != ep || !ts->root) {
		/* new generation (or new thread): ids must be looked up again, but
		 * the prefix still tells which frames are new calls */
		struct st_comm_key ck = {
			.addr = ((__u64)tgid << 32) | tid,
			.image = pv->other ? pv->image : task_image(bpf_get_current_task_btf()),
		};
		__u32 root = node_get(ev, gen, ck.image, root_flags, ck.addr, &created);

		if (!root) {
			ts->depth = 0;
			goto out;
		}
		if (created && pv->other) {
			bpf_map_update_elem(&thread_comms, &ck, pv->comm, BPF_ANY);
		} else if (created) {
			char comm[ST_COMM_LEN];

			bpf_get_current_comm(comm, sizeof(comm));
			bpf_map_update_elem(&thread_comms, &ck, comm, BPF_ANY);
		}
		if (created && fresh) {
			rec = bpf_map_lookup_elem(&nodes, &root);
			if (rec)
				rec->calls = 1;
		}
		ts->root = root;
		ts->epoch = ep;
		fc.parent = root;
		fc.start = 0;
	} else {
		/* from the prefix, or from the last known node before it */
		fc.start = fc.prefix < ts->known ? fc.prefix : ts->known;
		fc.parent = fc.start ? ts->ids[(fc.start - 1) & (ST_PATH_SLOTS - 1)] : ts->root;
	}
	fc.rmix = st_ph_mix(ts->root, ST_NODE_ROOT);
	fc.phash = fc.start ? st_ph_at(ps, ph_pinv, fc.start - 1) : 0;
	if (ev == ST_EVENT_CPU)
		part_mark(ST_PART_ROOT);
	fc.gen = gen;
	fc.ev = ev;
	fc.epoch = ep;
	fc.end = n;
	switch (fold_shortcut(sc, pv, ts, ps, &fc)) {
	case 1:		/* found whole */
		break;
	case 2:		/* found but for the frames past fc.start */
		fold_span(sc, pv, ts, &fc);
		missed = 1;
		break;
	default:
		fold_span(sc, pv, ts, &fc);
		ts->known = n;
		missed = 1;
	}
	if (ev == ST_EVENT_CPU)
		part_mark(ST_PART_FRAMES);
	if (fc.failed) {
		/* the sample is lost (counted by node_get); start the next path afresh */
		ts->depth = 0;
		ts->root = 0;
		goto out;
	}
	ts->depth = n;
	if (!ts->spare)	/* (a spare's next path starts afresh: fold_sample()) */
		ph_keep(&ts->prev, ps);
	leaf = ts->ids[(n - 1) & (ST_PATH_SLOTS - 1)];
	/* CALLS (bpf/calls.h): frames first.. are new calls, but none of a
	 * sample folded through the spare state, whose previous path is
	 * unknown. Written as two deltas, +1 on the leaf and -1 on the node
	 * above frame first (the root for frame 0), that the daemon sums over
	 * each node's subtree (st_collector__merge()): two records a sample,
	 * not one per new frame (26 of bench_cpu's 35, each a cold line under
	 * load: kernel-notes/README.md, "The fold's cost by part"). */
	if (ts->known > n)
		ts->known = n;
	first = st_calls_first(fc.prefix, fc.prev_depth);
	calls = !ts->spare && first < n;
	rec = bpf_map_lookup_elem(&nodes, &leaf);
	if (rec) {
		rec->base += pv->weight ? pv->weight : 1;
		rec->calls += calls;
	}
	if (calls) {
		__u32 above = first ? ts->ids[(first - 1) & (ST_PATH_SLOTS - 1)] : ts->root;

		rec = bpf_map_lookup_elem(&nodes, &above);
		if (rec)
			rec->calls -= 1;
		if (bench_parts_on)	/* benchmarks only */
			fc.n[ST_PART_N_CALLS] += 2;
	}
	stat_ev(ev, ST_STAT_FOLDED);
	if (ev == ST_EVENT_CPU) {	/* benchmarks only: the clock, then the counts */
		part_end(ST_PART_LEAF);
		for (__u32 k = 0; k <= ST_PART_N_CALLS; k++)
			part_add(k, fc.n[k]);
		part_add(ST_PART_N_MISSES, missed);
	}
out:
	__sync_fetch_and_sub(busy, 1);
	return 0;
}

/* The sums of a sample's path (bpf/pathhash.h) into ps: the user frames'
 * (unless the walk added them up: walked), the user leaf's value, the
 * frames below the user part, the whole. A pass over the user frames
 * where the walk did not add them (the DWARF walker, Python's frames
 * merged in, a 32-bit process, the page-fault and off-CPU programs): the
 * cost the fold's hash pass had for every sample before. */
struct ph_fill {
	struct scratch *sc;
	struct path_view *pv;
	struct st_path_sums *ps;
	__u64 pw, sum;
};

static long ph_user_step(__u32 k, void *data)
{
	struct ph_fill *c = data;
	__u32 f = k + 1;	/* user frame f, leaf first */
	__u16 flags;
	__u64 a;

	if (f >= c->pv->un)
		return 1;
	a = path_at(c->sc, c->pv, c->pv->trunc + c->pv->un - 1 - f, &flags);
	c->pw *= ST_PH_P;
	c->sum += st_ph_mix(a, flags) * c->pw;
	c->ps->u[f & (ST_PATH_SLOTS - 1)] = c->sum;
	return 0;
}

static long ph_below_step(__u32 g, void *data)
{
	struct ph_fill *c = data;
	__u16 flags;
	__u64 a;

	if (g >= c->ps->kn || g >= ST_PH_KSLOTS - 1)
		return 1;
	a = path_at(c->sc, c->pv, c->pv->n - 1 - g, &flags);	/* leaf first */
	c->sum += st_ph_mix(a, flags) * c->pw;
	c->pw *= ST_PH_P;
	c->ps->k[(g + 1) & (ST_PH_KSLOTS - 1)] = c->sum;
	return 0;
}

static __always_inline void ph_fill(struct scratch *sc, struct path_view *pv,
				    struct st_path_sums *ps, bool walked)
{
	struct ph_fill c = { .sc = sc, .pv = pv, .ps = ps, .pw = 1 };
	__u16 flags;
	__u64 a;

	if (!walked) {
		ps->u[0] = 0;
		if (pv->un > 1)
			bpf_loop(pv->un - 1, ph_user_step, &c, 0);
		ps->un = pv->un;
		ps->pu = pv->un ? c.pw * ST_PH_P : 1;
	}
	ps->m0 = 0;
	if (pv->un) {
		a = path_at(sc, pv, pv->trunc + pv->un - 1, &flags);
		ps->m0 = st_ph_mix(a, flags);
	}
	ps->kn = pv->kn + pv->extra;
	ps->k[0] = 0;
	c.pw = 1;
	c.sum = 0;
	if (ps->kn)
		bpf_loop(ps->kn, ph_below_step, &c, 0);
	ps->pk = c.pw;
	st_ph_finish(ps, pv->trunc);
}

/* Fold one sample into its thread's tree (ts: the thread's state for ev),
 * or, without one, through the CPU's spare (threads.bpf.h: spare_threads).
 * A sample cut short ([truncated] root) of a thread that has a path goes
 * through the spare too: its path is not the thread's, so it must not
 * become the one the next sample is compared with (that counted every
 * frame of the next complete sample as a new call: main CALLS 2); its
 * frames count no CALLS, their callers being unknown (bpf/calls.h).
 * Two global functions: fold_path() is verified once with ts as plain
 * memory, and tells the spare by a field of it (thread_state.spare), whose
 * value the verifier does not track. Resolving the spare inside it, or
 * passing a flag, made the verifier walk its body once per kind of pointer
 * or per flag value (+48k and +38k instructions in on_fault_fp). */
__noinline int fold_sample(struct scratch *sc, struct path_view *pv, struct thread_state *ts,
			   __u64 pid_tgid, __u32 ev)
{
	__u32 k = ev < ST_EVENTS ? ev : ST_EVENT_CPU, slot;
	struct thread_state *spare;
	struct st_path_sums *ps;

	if (!pv || !sc)
		return 0;
	/* the timer's own sample: its walk's sums (walk.bpf.h, path_sums) */
	slot = ev == ST_EVENT_CPU && !pv->other ? 0 : 1;
	pv->ev = ev;
	ps = bpf_map_lookup_elem(&path_sums, &slot);
	if (!ps) {	/* (an array's: never) */
		stat_ev(ev, ST_STAT_LOST_THREAD);
		return 0;
	}
	ph_fill(sc, pv, ps, slot == 0 && sc->ph_ok);
	if (ev == ST_EVENT_CPU)	/* benchmarks only (parts.bpf.h) */
		part_mark(ST_PART_EXTRA);
	if (ts && (!pv->trunc || !ts->depth))
		return fold_path(sc, pv, ts, ps, pid_tgid);
	spare = bpf_map_lookup_elem(&spare_threads, &k);
	if (!spare) {
		if (ts)
			return fold_path(sc, pv, ts, ps, pid_tgid);
		stat_ev(ev, ST_STAT_LOST_THREAD);
		return 0;
	}
	spare->spare = 1;
	spare->root = 0;
	spare->depth = 0;
	spare->epoch = 0;
	if (!ts) {
		stat_ev(ev, ST_STAT_SPARE_THREAD);
		notify_new_proc(pid_tgid >> 32, (__u32)pid_tgid);
	}
	return fold_path(sc, pv, spare, ps, pid_tgid);
}

#endif

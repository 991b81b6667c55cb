/* test_collector.c - the collect stage's raw trees (user/collect/collector.h):
 * the merge of the kernel's node records (ids, parents, flags, a root per
 * generation, malformed records) and the late fold of samples the daemon
 * unwound itself (paths, CALLS at the common prefix, the path handed back
 * to BPF). Processes are pids that cannot exist (above PID_MAX_LIMIT), so
 * no /proc file is read and nothing is symbolized. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "bpf/calls.h"
#include "common/budget.h"
#include "common/tree.h"
#include "user/collect/collector.h"

#define PID 5000001u	/* > PID_MAX_LIMIT (4194304): never a process */
#define TID 5000002u

static void comm_of(void *ctx, __u32 pid, __u32 tid, __u32 image, char *comm, size_t len)
{
	(void)ctx;
	snprintf(comm, len, "t%u.%u", (tid - pid) % 100, image);
}

/* The raw thread (pid, tid) of event ev's trees (ST_EVENT_*). */
static const struct st_raw_thread *raw(struct st_collector *c, __u32 pid, __u32 tid, __u32 ev)
{
	static struct st_raw_thread t;
	size_t pos = 0;

	while (st_collector__next_thread(c, &pos, &t))
		if (t.pid == pid && t.tid == tid && t.ev == ev)
			return &t;
	return NULL;
}

static const struct st_node *child(const struct st_node *n, enum st_frame_kind kind, __u64 addr)
{
	for (const struct st_node *c = n->first_child; c; c = c->next_sibling)
		if (c->f.kind == kind && c->f.addr == addr)
			return c;
	return NULL;
}

static struct st_node_rec root_rec(__u32 pid, __u32 tid, __u32 image, __u16 flags)
{
	return (struct st_node_rec){ .addr = (__u64)pid << 32 | tid, .parent = image,
				     .flags = ST_NODE_ROOT | flags };
}

static struct st_node_rec rec(__u32 parent, __u64 addr, __u16 flags, __u64 base, __u64 calls)
{
	return (struct st_node_rec){ .addr = addr, .parent = parent, .flags = flags,
				     .base = base, .calls = calls };
}

/* Ids are first_id + index; a child names its parent's id. Two generations
 * of the same stack sum into one path. CALLS are deltas (bpf/calls.h): a
 * node's is the sum over its subtree. */
static void test_merge_builds_and_sums(void **state)
{
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	struct st_node_rec g[] = {
		root_rec(PID, TID, 3, 0),
		rec(100, 0x1000, 0, 0, (__u64)-1),		/* main's call site */
		rec(101, 0x2000, ST_NODE_LEAF, 5, 1),		/* the leaf */
		rec(101, 0xffffffff81000000ull, ST_NODE_LEAF | ST_NODE_KERNEL, 2, 1),
	};
	const struct st_raw_thread *t;
	const struct st_node *root, *cs, *leaf, *k;

	(void)state;
	assert_non_null(c);
	assert_int_equal(st_collector__merge(c, g, 100, 4), 0);
	g[2].base = 7;
	assert_int_equal(st_collector__merge(c, g, 200, 0), 0);	/* an empty generation */
	for (size_t i = 1; i < 4; i++)
		g[i].parent += 500 - 100;
	assert_int_equal(st_collector__merge(c, g, 500, 4), 0);
	assert_int_equal(st_collector__threads(c), 1);
	assert_int_equal(st_collector__bad_records(c), 0);
	t = raw(c, PID, TID, ST_EVENT_CPU);
	assert_non_null(t);
	assert_string_equal(t->comm, "t1.3");	/* named once the thread was known */
	root = st_tree__root(t->tree);
	assert_int_equal(root->calls, 2);	/* its subtree's sum (its own delta 0) */
	cs = child(root, ST_FRAME_CALLSITE, 0x1000);
	assert_non_null(cs);
	assert_int_equal(cs->calls, 2);
	assert_int_equal(cs->base, 0);
	leaf = child(cs, ST_FRAME_LEAF, 0x2000);
	assert_non_null(leaf);
	assert_int_equal(leaf->base, 5 + 7);
	assert_int_equal(leaf->calls, 2);
	k = child(cs, ST_FRAME_LEAF, 0xffffffff81000000ull);
	assert_non_null(k);
	assert_int_equal(k->f.runtime, ST_RUNTIME_KERNEL);
	assert_int_equal(k->base, 4);
	assert_int_equal(st_tree__node_count(t->tree), 4);	/* root included */
	st_collector__free(c);
}

/* The daemon's memory budget: a process is charged to its maps part and
 * refused (counted) when it does not fit; the samples in the trees are
 * counted per event (what an unwritten snapshot dropped would lose). */
static void test_budget_maps_and_samples(void **state)
{
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	struct st_budget *b = st_budget__new(64 << 10);
	struct st_node_rec g[] = {
		root_rec(PID, TID, 3, 0),
		rec(100, 0x1000, 0, 0, 1),
		rec(101, 0x2000, ST_NODE_LEAF, 5, 1),
		rec(101, 0x3000, ST_NODE_LEAF, 2, 1),
	};
	struct st_budget_stats bs;
	__u32 pid;

	(void)state;
	assert_non_null(c);
	assert_non_null(b);
	st_collector__budget(c, b);
	assert_int_equal(st_collector__capture(c, PID, 3, 0, false), 0);
	st_budget__stats(b, &bs);
	assert_true(bs.part[ST_BUDGET_MAPS] > 0);
	assert_int_equal(bs.part[ST_BUDGET_MAPS], st_collector__maps_memory(c));
	/* the rest of the budget taken: the next processes are not kept */
	assert_int_equal(st_budget__charge(b, ST_BUDGET_TREES, bs.limit - bs.used), 0);
	for (pid = PID + 10; pid < PID + 13; pid++)
		assert_int_equal(st_collector__capture(c, pid, 1, 0, false), -ENOSPC);
	assert_int_equal(st_collector__refused(c), 3);
	st_budget__stats(b, &bs);
	assert_int_equal(bs.refused[ST_BUDGET_MAPS], 3);
	assert_int_equal(bs.part[ST_BUDGET_MAPS], st_collector__maps_memory(c));
	assert_int_equal(st_collector__merge(c, g, 100, 4), 0);
	assert_int_equal(st_collector__samples(c, false), 7);
	assert_int_equal(st_collector__samples(c, true), 0);
	st_collector__reset(c);
	assert_int_equal(st_collector__samples(c, false), 0);
	st_collector__free(c);
	st_budget__stats(b, &bs);
	assert_int_equal(bs.part[ST_BUDGET_MAPS], 0);
	st_budget__free(b);
}

/* Unwritten intervals over their bound: the processes that ended (here
 * all: their /proc is gone) go with their trees, the oldest first, only as
 * many as bring the trees and their maps down to the target; their
 * samples are counted per event. */
static void test_drop_ended_oldest_first(void **state)
{
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	__u64 lost[ST_EVENTS] = { 0 };
	size_t held;

	(void)state;
	assert_non_null(c);
	for (__u32 i = 0; i < 3; i++) {
		__u32 pid = PID + 20 * i, first = 100 + 10 * i;
		struct st_node_rec g[] = {
			root_rec(pid, pid, 1, 0),
			rec(first, 0x1000, 0, 0, 1),
			rec(first + 1, 0x2000, ST_NODE_LEAF, 1 + i, 1),
		};

		assert_int_equal(st_collector__capture(c, pid, 1, 0, false), 0);
		assert_int_equal(st_collector__merge(c, g, first, 3), 0);
	}
	assert_int_equal(st_collector__threads(c), 3);
	held = st_collector__memory(c) + st_collector__ended_memory(c);
	assert_true(st_collector__ended_memory(c) > 0);
	assert_int_equal(st_collector__drop_ended(c, held, lost), 0);	/* within: none */
	assert_true(st_collector__drop_ended(c, held - 1, lost) > 0);	/* the oldest only */
	assert_int_equal(st_collector__threads(c), 2);
	assert_int_equal(st_collector__processes(c), 2);
	assert_null(raw(c, PID, PID, ST_EVENT_CPU));
	assert_non_null(raw(c, PID + 20, PID + 20, ST_EVENT_CPU));
	assert_int_equal(lost[ST_EVENT_CPU], 1);
	assert_true(st_collector__drop_ended(c, 0, lost) > 0);
	assert_int_equal(st_collector__threads(c), 0);
	assert_int_equal(st_collector__processes(c), 0);
	assert_int_equal(lost[ST_EVENT_CPU], 1 + 2 + 3);
	assert_int_equal(lost[ST_EVENT_FAULTS], 0);
	assert_int_equal(st_collector__maps_memory(c), 0);
	assert_int_equal(st_collector__drop_ended(c, 0, lost), 0);	/* none left */
	st_collector__free(c);
}

/* Records whose parent is unknown, later in the batch, or before it are
 * counted and dropped with their subtree; dead records are skipped. */
static void test_merge_drops_bad_records(void **state)
{
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	struct st_node_rec g[] = {
		root_rec(PID, TID, 0, 0),
		rec(10, 0x1000, ST_NODE_LEAF, 1, 1),
		rec(13, 0x2000, ST_NODE_LEAF, 1, 1),	/* parent after it */
		rec(9, 0x3000, ST_NODE_LEAF, 1, 1),	/* parent before the batch */
		rec(10, 0x4000, ST_NODE_DEAD, 1, 1),	/* dead: skipped, not counted */
		rec(14, 0x5000, ST_NODE_LEAF, 1, 1),	/* its parent is dead */
		rec(12, 0x6000, ST_NODE_LEAF, 1, 1),	/* under a dropped record */
	};
	const struct st_raw_thread *t;

	(void)state;
	assert_int_equal(st_collector__merge(c, g, 10, 7), 0);
	assert_int_equal(st_collector__bad_records(c), 4);
	t = raw(c, PID, TID, ST_EVENT_CPU);
	assert_non_null(t);
	assert_int_equal(st_tree__node_count(t->tree), 2);
	assert_non_null(child(st_tree__root(t->tree), ST_FRAME_LEAF, 0x1000));
	st_collector__free(c);
}

/* Flags become frames: [truncated] and [kernel] pseudo frames, data leaves
 * of each class; a fault root starts the thread's other tree; another
 * image of the same thread is another tree. */
static void test_merge_flags(void **state)
{
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	struct st_node_rec g[] = {
		root_rec(PID, TID, 1, 0),
		rec(0, 0, ST_NODE_TRUNCATED, 0, 1),
		rec(1, 0x1000, ST_NODE_LEAF, 1, 1),
		rec(0, 0, ST_NODE_KERNEL | ST_NODE_LEAF, 1, 1),
		root_rec(PID, TID, 1, ST_NODE_FAULTS),
		rec(4, 0x1100, 0, 0, 1),
		rec(5, 0x40, ST_NODE_DATA_STACK, 2, 0),
		rec(5, 0x800, ST_NODE_DATA_HEAP | ST_NODE_HEAP_BRK | ST_NODE_FORCED, 3, 0),
		rec(5, 0x7f0000001000ull, ST_NODE_DATA_HEAP, 4, 0),
		rec(5, 0x601000, ST_NODE_DATA_MODULE, 5, 0),
		root_rec(PID, TID, 2, 0),
	};
	const struct st_raw_thread *t, *f;
	const struct st_node *n, *cs;
	size_t pos = 0, count = 0;
	struct st_raw_thread any, img1 = { 0 };

	(void)state;
	assert_int_equal(st_collector__merge(c, g, 0, 11), 0);
	while (st_collector__next_thread(c, &pos, &any))
		count++;
	assert_int_equal(count, 3);	/* image 1 (timer, faults), image 2 (timer) */
	assert_int_equal(st_collector__threads(c), 3);
	assert_int_equal(st_collector__processes(c), 2);	/* one per image */
	/* image 2's timer tree is only a root: image 1's holds the frames */
	t = NULL;
	pos = 0;
	while (st_collector__next_thread(c, &pos, &any))
		if (any.ev == ST_EVENT_CPU && st_tree__node_count(any.tree) > 1)
			img1 = any;
	t = img1.tree ? &img1 : NULL;
	assert_non_null(t);
	n = st_tree__root(t->tree)->first_child;
	assert_int_equal(n->f.kind, ST_FRAME_SPECIAL);
	assert_string_equal(n->f.function, ST_TRUNCATED_NAME);
	assert_non_null(child(n, ST_FRAME_LEAF, 0x1000));
	n = n->next_sibling;
	assert_non_null(n);
	assert_int_equal(n->f.kind, ST_FRAME_SPECIAL);
	assert_int_equal(n->f.runtime, ST_RUNTIME_KERNEL);
	assert_string_equal(n->f.function, "[kernel]");

	f = raw(c, PID, TID, ST_EVENT_FAULTS);
	assert_non_null(f);
	cs = child(st_tree__root(f->tree), ST_FRAME_CALLSITE, 0x1100);
	assert_non_null(cs);
	n = cs->first_child;	/* stack: offset from the CFA, no address */
	assert_int_equal(n->f.kind, ST_FRAME_DATA);
	assert_int_equal(n->f.data_class, ST_DATA_STACK);
	assert_int_equal(n->f.offset, 0x40);
	assert_int_equal(n->f.addr, 0);
	n = n->next_sibling;	/* brk heap: offset from its start, forced */
	assert_int_equal(n->f.data_class, ST_DATA_HEAP | ST_DATA_FORCED);
	assert_string_equal(n->f.module, ST_RAW_NAME_BRK);
	assert_int_equal(n->f.offset, 0x800);
	assert_int_equal(n->base, 3);
	n = n->next_sibling;	/* anonymous memory: its address */
	assert_int_equal(n->f.data_class, ST_DATA_HEAP);
	assert_string_equal(n->f.module, ST_RAW_NAME_ANON);
	assert_int_equal(n->f.addr, 0x7f0000001000ull);
	n = n->next_sibling;
	assert_int_equal(n->f.data_class, ST_DATA_MODULE);
	assert_int_equal(n->f.addr, 0x601000);
	assert_null(n->next_sibling);
	st_collector__free(c);
}

/* An off-CPU root starts the thread's off-CPU tree (beside its timer
 * tree); its state leaves are named pseudo frames, BASE the ns away. */
static void test_merge_offcpu(void **state)
{
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	struct st_node_rec g[] = {
		root_rec(PID, TID, 1, 0),
		rec(0, 0x1000, ST_NODE_LEAF, 1, 1),
		root_rec(PID, TID, 1, ST_NODE_OFFCPU),
		rec(2, 0x1100, 0, 0, 1),
		rec(3, 0xffffffff81000000ull, ST_NODE_KERNEL | ST_NODE_LEAF, 0, 1),
		rec(4, ST_OFFCPU_SLEEPING, ST_NODE_STATE | ST_NODE_LEAF, 2500000, 1),
		rec(4, ST_OFFCPU_PREEMPTED, ST_NODE_STATE | ST_NODE_LEAF, 7000, 1),
		rec(4, 99, ST_NODE_STATE | ST_NODE_LEAF, 1, 1),	/* unknown: "off-cpu" */
	};
	const struct st_raw_thread *t;
	const struct st_node *n;

	(void)state;
	assert_int_equal(st_collector__merge(c, g, 0, 8), 0);
	assert_int_equal(st_collector__threads(c), 2);
	assert_int_equal(st_collector__samples(c, ST_EVENT_CPU), 1);
	assert_int_equal(st_collector__samples(c, ST_EVENT_OFFCPU), 2507001);
	t = raw(c, PID, TID, ST_EVENT_OFFCPU);
	assert_non_null(t);
	n = child(st_tree__root(t->tree), ST_FRAME_CALLSITE, 0x1100);
	assert_non_null(n);
	n = n->first_child;
	assert_int_equal(n->f.runtime, ST_RUNTIME_KERNEL);
	n = n->first_child;
	assert_int_equal(n->f.kind, ST_FRAME_SPECIAL);
	assert_string_equal(n->f.function, "[sleeping]");
	assert_int_equal(n->base, 2500000);
	assert_string_equal(n->next_sibling->f.function, "[preempted]");
	assert_string_equal(n->next_sibling->next_sibling->f.function, "[off-cpu]");
	st_collector__free(c);
}

/* A sample the daemon unwound: user frames leaf first, then kernel ones. */
static int add(struct st_collector *c, const __u64 *user, size_t un, bool truncated,
	       const __u64 *k, size_t kn)
{
	return st_collector__add_sample(c, PID, TID, 7, "late", user, un, truncated, k, kn);
}

/* CALLS as BPF counts them: past the common prefix with the thread's
 * previous late sample a frame is a new call; the frame at the prefix is
 * the previous one moved on when the previous path reached that depth. */
static void test_late_fold_calls(void **state)
{
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	const __u64 a[] = { 0x2000, 0x1000 };	/* leaf 0x2000 called from 0x1000 */
	const __u64 b[] = { 0x2010, 0x1000 };	/* the same call, another IP */
	const __u64 d[] = { 0x3000, 0x2020, 0x1000 };	/* a call from inside it */
	const __u64 e[] = { 0x1000 };	/* main itself: back in main */
	const struct st_raw_thread *t;
	const struct st_node *root, *cs, *n;

	(void)state;
	assert_int_equal(add(c, a, 2, false, NULL, 0), 0);
	assert_int_equal(add(c, a, 2, false, NULL, 0), 0);
	assert_int_equal(add(c, b, 2, false, NULL, 0), 0);
	assert_int_equal(add(c, d, 3, false, NULL, 0), 0);
	assert_int_equal(add(c, e, 1, false, NULL, 0), 0);
	t = raw(c, PID, TID, ST_EVENT_CPU);
	assert_non_null(t);
	assert_string_equal(t->comm, "late");
	root = st_tree__root(t->tree);
	cs = child(root, ST_FRAME_CALLSITE, 0x1000);
	assert_non_null(cs);
	assert_int_equal(cs->calls, 1);		/* one call of main's frame throughout */
	n = child(cs, ST_FRAME_LEAF, 0x2000);
	assert_int_equal(n->base, 2);
	assert_int_equal(n->calls, 1);		/* the first sample's call */
	n = child(cs, ST_FRAME_LEAF, 0x2010);
	assert_int_equal(n->base, 1);
	assert_int_equal(n->calls, 0);		/* the same frame moved on */
	n = child(cs, ST_FRAME_CALLSITE, 0x2020);
	assert_int_equal(n->calls, 0);		/* still that frame */
	n = child(n, ST_FRAME_LEAF, 0x3000);
	assert_int_equal(n->calls, 1);		/* a new callee */
	assert_int_equal(n->base, 1);
	n = child(root, ST_FRAME_LEAF, 0x1000);
	assert_non_null(n);
	assert_int_equal(n->calls, 0);		/* main's frame, moved on */
	assert_int_equal(n->base, 1);
	st_collector__free(c);
}

/* Trees a and b the same: kinds, addresses, BASE and CALLS of every node. */
static size_t same_trees(const struct st_node *a, const struct st_node *b)
{
	size_t n = 1;

	assert_int_equal(a->base, b->base);
	assert_int_equal(a->calls, b->calls);
	for (const struct st_node *x = a->first_child; x; x = x->next_sibling) {
		const struct st_node *y = child(b, x->f.kind, x->f.addr);

		assert_non_null(y);
		n += same_trees(x, y);
	}
	for (const struct st_node *y = b->first_child; y; y = y->next_sibling)
		assert_non_null(child(a, y->f.kind, y->f.addr));
	return n;
}

/* The BPF fold's CALLS (bpf/fold.bpf.h, fold_path()): a sample writes +1
 * on its leaf's record and -1 on the record above its first new frame (the
 * root for frame 0); merged (st_collector__merge() sums each subtree),
 * every node's CALLS is what the daemon's late fold counts frame by frame
 * for the same samples. 3,000 random paths over a few addresses, in two
 * generations (the second's ids looked up again, the prefix still the
 * previous path's), the fold simulated as BPF does it, with its node table
 * and the thread's previous path. */
static void test_merge_calls_are_the_late_folds(void **state)
{
	enum { N = 3000, DEPTH = 7, MAXREC = 8192 };
	static struct st_node_rec g[MAXREC];
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	__u64 path[DEPTH], prev[DEPTH], user[DEPTH];
	__u32 ids[DEPTH], prev_depth = 0, nrec = 0, first_id = 100, seed = 12345;
	const struct st_raw_thread *t;
	const struct st_node *bpf_root;

	(void)state;
	assert_non_null(c);
	for (int s = 0; s < N; s++) {
		__u32 depth, prefix = 0, first, above;

		if (s == 0 || s == N / 2) {	/* a generation: its root, ids anew */
			if (s) {
				assert_int_equal(st_collector__merge(c, g, first_id, nrec), 0);
				first_id += 1000000;
			}
			g[0] = root_rec(PID, TID, 7, 0);
			g[0].calls = s == 0;	/* the thread's first sample: one call */
			nrec = 1;
			for (__u32 i = 0; i < prev_depth; i++)
				ids[i] = 0;
		}
		seed = seed * 1103515245u + 12345u;
		depth = 1 + (seed >> 16) % DEPTH;
		for (__u32 i = 0; i < depth; i++) {
			seed = seed * 1103515245u + 12345u;
			path[i] = 0x1000 * (i + 1) + 0x10 * ((seed >> 16) % 3);
		}
		/* the prefix, by address and flags (a leaf's flags are not a call site's) */
		while (prefix < depth && prefix < prev_depth && path[prefix] == prev[prefix] &&
		       (prefix + 1 == depth) == (prefix + 1 == prev_depth))
			prefix++;
		for (__u32 i = 0; i < depth; i++) {
			__u32 parent = i ? ids[i - 1] : first_id;
			__u16 flags = i + 1 == depth ? ST_NODE_LEAF : 0;
			__u32 k;

			if (i < prefix && ids[i])
				continue;
			for (k = 1; k < nrec; k++)
				if (g[k].parent == parent && g[k].addr == path[i] && g[k].flags == flags)
					break;
			if (k == nrec) {
				assert_true(nrec < MAXREC);
				g[nrec++] = rec(parent, path[i], flags, 0, 0);
			}
			ids[i] = first_id + k;
		}
		g[ids[depth - 1] - first_id].base++;
		first = st_calls_first(prefix, prev_depth);
		if (first < depth) {
			above = first ? ids[first - 1] : first_id;
			g[ids[depth - 1] - first_id].calls++;
			g[above - first_id].calls--;
		}
		memcpy(prev, path, sizeof(path));
		prev_depth = depth;
		/* the late fold of the same sample: another thread, leaf first */
		for (__u32 i = 0; i < depth; i++)
			user[i] = path[depth - 1 - i];
		assert_int_equal(st_collector__add_sample(c, PID, TID + 1, 7, "late", user, depth,
							  false, NULL, 0), 0);
	}
	assert_int_equal(st_collector__merge(c, g, first_id, nrec), 0);
	t = raw(c, PID, TID, ST_EVENT_CPU);
	assert_non_null(t);
	bpf_root = st_tree__root(t->tree);
	t = raw(c, PID, TID + 1, ST_EVENT_CPU);
	assert_non_null(t);
	/* the thread's own call: BPF's root (the late fold's root counts none) */
	assert_int_equal(bpf_root->calls, 1);
	((struct st_node *)bpf_root)->calls = st_tree__root(t->tree)->calls;
	assert_true(same_trees(bpf_root, st_tree__root(t->tree)) > 100);
	assert_int_equal(st_collector__bad_records(c), 0);
	st_collector__free(c);
}

/* A cut sample ([truncated] root) between two complete ones: its frames
 * count no CALLS, and the next sample is compared with the complete path
 * before it (BPF: bpf/fold.bpf.h, fold_sample()): main is still one call. */
static void test_late_fold_cut_between_complete(void **state)
{
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	const __u64 a[] = { 0x2000, 0x1000 };
	const __u64 cut[] = { 0x5000, 0x4000 };	/* a deep walk's innermost frames */
	const __u64 b[] = { 0x2010, 0x1000 };
	struct st_handoff h = { 0 };
	const struct st_raw_thread *t;
	const struct st_node *root, *n;

	(void)state;
	assert_int_equal(add(c, a, 2, false, NULL, 0), 0);
	assert_int_equal(add(c, cut, 2, true, NULL, 0), 0);
	assert_int_equal(add(c, b, 2, false, NULL, 0), 0);
	t = raw(c, PID, TID, ST_EVENT_CPU);
	root = st_tree__root(t->tree);
	n = child(root, ST_FRAME_CALLSITE, 0x1000);
	assert_int_equal(n->calls, 1);			/* not 2 */
	assert_int_equal(child(n, ST_FRAME_LEAF, 0x2010)->calls, 0);	/* a's call moved on */
	n = child(root, ST_FRAME_SPECIAL, 0);
	assert_non_null(n);
	assert_string_equal(n->f.function, ST_TRUNCATED_NAME);
	assert_int_equal(n->calls, 0);
	n = child(child(n, ST_FRAME_CALLSITE, 0x4000), ST_FRAME_LEAF, 0x5000);
	assert_int_equal(n->base, 1);
	assert_int_equal(n->calls, 0);
	/* the path handed back to BPF is the last complete one */
	assert_int_equal(st_collector__late_path(c, PID, TID, 7, &h), 0);
	assert_int_equal(h.n, 2);
	assert_int_equal(h.addrs[0], 0x1000);
	assert_int_equal(h.addrs[1], 0x2010);
	st_collector__free(c);
}

/* [truncated] roots, kernel frames under the user ones, and the path as
 * BPF keeps it (root first: flags per frame) for the hand-back. */
static void test_late_fold_path(void **state)
{
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	const __u64 u[] = { 0x2000, 0x1000 };
	const __u64 k[] = { 0xffffffff81000010ull, 0xffffffff81000020ull };
	struct st_handoff h = { .seq = 42 };
	const struct st_raw_thread *t;
	const struct st_node *n;

	(void)state;
	assert_int_equal(st_collector__late_path(c, PID, TID, 7, &h), -ENOENT);
	assert_int_equal(add(c, u, 2, true, k, 2), 0);
	t = raw(c, PID, TID, ST_EVENT_CPU);
	n = st_tree__root(t->tree)->first_child;
	assert_int_equal(n->f.kind, ST_FRAME_SPECIAL);
	assert_string_equal(n->f.function, ST_TRUNCATED_NAME);
	assert_int_equal(n->calls, 1);
	n = child(n, ST_FRAME_CALLSITE, 0x1000);
	n = child(n, ST_FRAME_CALLSITE, 0x2000);	/* not the leaf: kernel frames follow */
	assert_non_null(n);
	n = child(n, ST_FRAME_CALLSITE, 0xffffffff81000020ull);
	assert_non_null(n);
	assert_int_equal(n->f.runtime, ST_RUNTIME_KERNEL);
	n = child(n, ST_FRAME_LEAF, 0xffffffff81000010ull);
	assert_non_null(n);
	assert_int_equal(n->base, 1);

	assert_int_equal(st_collector__late_path(c, PID, TID, 7, &h), 0);
	assert_int_equal(h.seq, 42);	/* left alone */
	assert_int_equal(h.n, 5);
	assert_int_equal(h.flags[0], ST_NODE_TRUNCATED);
	assert_int_equal(h.addrs[0], 0);
	assert_int_equal(h.addrs[1], 0x1000);
	assert_int_equal(h.flags[1], 0);
	assert_int_equal(h.addrs[2], 0x2000);
	assert_int_equal(h.flags[3], ST_NODE_KERNEL);
	assert_int_equal(h.addrs[4], 0xffffffff81000010ull);
	assert_int_equal(h.flags[4], ST_NODE_KERNEL | ST_NODE_LEAF);
	assert_int_equal(st_collector__late_path(c, PID, TID, 8, &h), -ENOENT);	/* image */
	/* a new interval: trees and late paths start again */
	st_collector__reset(c);
	assert_int_equal(st_collector__late_path(c, PID, TID, 7, &h), -ENOENT);
	st_collector__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_maps_and_samples),
		cmocka_unit_test(test_drop_ended_oldest_first),
		cmocka_unit_test(test_merge_builds_and_sums),
		cmocka_unit_test(test_merge_drops_bad_records),
		cmocka_unit_test(test_merge_flags),
		cmocka_unit_test(test_merge_offcpu),
		cmocka_unit_test(test_late_fold_calls),
		cmocka_unit_test(test_merge_calls_are_the_late_folds),
		cmocka_unit_test(test_late_fold_path),
		cmocka_unit_test(test_late_fold_cut_between_complete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_window.c - a window's profile (user/model/window.h): the samples
 * merged after it opened and only those, the collector's trees left whole
 * (the snapshots see every sample too), across a collector reset, and its
 * thread filter, the owner filter (a process of unknown owner is no one's)
 * and hidden kernel frames. Pids cannot exist (above PID_MAX_LIMIT) but
 * the test's own, whose owner is known: frames are unnamed, which is
 * enough to count samples. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/tree.h"
#include "binsym/symbolizer.h"
#include "user/collect/collector.h"
#include "user/model/profile.h"
#include "user/model/window.h"
#include "user/symbolize/namer.h"

#define PID 5000001u
#define TID 5000002u
#define PID2 5000011u

static void comm_of(void *ctx, __u32 pid, __u32 tid, __u32 image, char *comm, size_t len)
{
	(void)ctx;
	(void)tid;
	(void)image;
	snprintf(comm, len, "w%u", pid == PID2 ? 2 : 1);
}

struct fx {
	struct st_symbolizer *sym;
	struct st_collector *c;
	struct st_namer *n;
	__u32 next_id;
};

static int setup(void **state)
{
	static struct fx f;
	struct st_symbolizer_opts so = { 0 };

	f.sym = st_symbolizer__new(&so);
	f.c = st_collector__new(f.sym, comm_of, NULL);
	f.n = st_namer__new(f.sym);
	f.next_id = 100;
	*state = &f;
	return f.sym && f.c && f.n ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	st_namer__free(f->n);
	st_collector__free(f->c);
	st_symbolizer__free(f->sym);
	return 0;
}

/* One generation: thread (pid, tid) sampled `base` times at leaf addr
 * under one call site. */
static void sample(struct fx *f, __u32 pid, __u32 tid, __u64 addr, __u64 base)
{
	__u32 id = f->next_id;
	struct st_node_rec g[] = {
		{ .addr = (__u64)pid << 32 | tid, .parent = 1, .flags = ST_NODE_ROOT },
		{ .addr = 0x1000, .parent = id, .calls = 1 },
		{ .addr = addr, .parent = id + 1, .flags = ST_NODE_LEAF, .base = base, .calls = 1 },
	};

	assert_int_equal(st_collector__merge(f->c, g, id, 3), 0);
	f->next_id += 10;
}

static __u64 raw_samples(struct fx *f, __u32 pid)
{
	struct st_raw_thread t;
	size_t pos = 0;
	__u64 n = 0;

	while (st_collector__next_thread(f->c, &pos, &t))
		if (t.pid == pid) {
			struct st_tree *copy = st_tree__new();

			st_tree__merge(copy, st_tree__root(copy), st_tree__root(t.tree));
			st_tree__finalize(copy);
			n += st_tree__root(copy)->cum;
			st_tree__free(copy);
		}
	return n;
}

static void test_only_the_window(void **state)
{
	struct fx *f = *state;
	struct st_window *w;
	struct st_profile *p;

	sample(f, PID, TID, 0x2000, 5);		/* before: not the window's */
	w = st_window__new(f->c, f->n, "cpu-clock", false, NULL);
	assert_non_null(w);
	sample(f, PID, TID, 0x2000, 7);		/* the same path grows */
	sample(f, PID, TID, 0x3000, 2);		/* a new leaf */
	sample(f, PID2, PID2, 0x2000, 3);	/* a new thread */
	p = st_window__take(w);
	assert_non_null(p);
	assert_int_equal(p->samples, 12);
	assert_int_equal(p->nthreads, 2);
	assert_int_equal(st_thread__samples(st_profile__find_thread(p, PID, TID)), 9);
	/* the snapshots still have all of it */
	assert_int_equal(raw_samples(f, PID), 14);
	assert_int_equal(raw_samples(f, PID2), 3);
	st_profile__free(p);
	/* taken again: only what came since */
	sample(f, PID, TID, 0x2000, 1);
	p = st_window__take(w);
	assert_int_equal(p->samples, 1);
	st_profile__free(p);
	st_window__free(w);
	st_collector__reset(f->c);
}

static void test_across_a_reset(void **state)
{
	struct fx *f = *state;
	struct st_window *w;
	struct st_profile *p;

	sample(f, PID, TID, 0x2000, 50);
	w = st_window__new(f->c, f->n, "cpu-clock", false, NULL);
	sample(f, PID, TID, 0x2000, 4);
	assert_int_equal(st_window__fold(w, true), 0);	/* a snapshot is written ... */
	st_collector__reset(f->c);			/* ... and the trees dropped */
	sample(f, PID, TID, 0x2000, 2);
	p = st_window__take(w);
	assert_non_null(p);
	assert_int_equal(p->samples, 6);
	st_profile__free(p);
	st_window__free(w);
	st_collector__reset(f->c);
}

static void test_filter(void **state)
{
	struct fx *f = *state;
	struct st_window_filter byname = { .comm = "w2" }, bypid = { .pid = PID };
	struct st_window_filter byctr = { .container = "abc" };
	struct st_window *a = st_window__new(f->c, f->n, "cpu-clock", false, &byname);
	struct st_window *b = st_window__new(f->c, f->n, "cpu-clock", false, &bypid);
	struct st_window *c = st_window__new(f->c, f->n, "cpu-clock", false, &byctr);
	struct st_profile *p;

	sample(f, PID, TID, 0x2000, 5);
	sample(f, PID2, PID2, 0x2000, 3);
	p = st_window__take(a);
	assert_int_equal(p->samples, 3);
	assert_int_equal(p->threads[0]->pid, PID2);
	st_profile__free(p);
	p = st_window__take(b);
	assert_int_equal(p->samples, 5);
	st_profile__free(p);
	p = st_window__take(c);		/* no cgroup known: no container */
	assert_int_equal(p->samples, 0);
	st_profile__free(p);
	st_window__free(a);
	st_window__free(b);
	st_window__free(c);
	st_collector__reset(f->c);
}

/* A client that sees its own processes only: the test's process is ours
 * (its owner read from /proc at first sight), the made-up pid's owner is
 * unknown, so no one's. */
static void test_own_only(void **state)
{
	struct fx *f = *state;
	__u32 me = (__u32)getpid();
	struct st_window_filter mine = { .own_only = true, .uid = (__u32)geteuid() };
	struct st_window_filter other = { .own_only = true, .uid = (__u32)geteuid() + 1 };
	struct st_window *a = st_window__new(f->c, f->n, "cpu-clock", false, &mine);
	struct st_window *b = st_window__new(f->c, f->n, "cpu-clock", false, &other);
	struct st_raw_thread t;
	struct st_profile *p;
	size_t pos = 0;

	sample(f, me, me, 0x2000, 5);
	sample(f, PID, TID, 0x2000, 3);
	while (st_collector__next_thread(f->c, &pos, &t))
		assert_int_equal(t.uid, t.pid == me ? (__u32)geteuid() : ST_UID_UNKNOWN);
	p = st_window__take(a);
	assert_int_equal(p->samples, 5);
	assert_int_equal(p->nthreads, 1);
	assert_int_equal(p->threads[0]->pid, me);
	st_profile__free(p);
	p = st_window__take(b);
	assert_int_equal(p->samples, 0);
	st_profile__free(p);
	st_window__free(a);
	st_window__free(b);
	st_collector__reset(f->c);
}

static int no_kernel_address(const struct st_node *n, void *ctx)
{
	unsigned *hidden = ctx;

	if (n->depth && n->f.runtime == ST_RUNTIME_KERNEL) {
		assert_int_equal(n->f.kind, ST_FRAME_SPECIAL);
		assert_string_equal(n->f.function, ST_WINDOW_KERNEL);
		assert_int_equal(n->f.addr, 0);
		assert_null(n->first_child);	/* the run is one frame */
		(*hidden)++;
	}
	return 0;
}

/* hide_kernel: every run of kernel frames is one [kernel] frame under the
 * user frame it was called from, with all their samples. */
static void test_hide_kernel(void **state)
{
	struct fx *f = *state;
	struct st_window_filter hide = { .hide_kernel = true };
	struct st_window *w = st_window__new(f->c, f->n, "cpu-clock", false, &hide);
	struct st_window *all = st_window__new(f->c, f->n, "cpu-clock", false, NULL);
	__u32 id = f->next_id;
	/* root -> 0x1000 -> {kernel 0xffffffff81000000 -> kernel leaf (4),
	 *                    kernel leaf 0xffffffff82000000 (2), leaf 0x2000 (3)} */
	struct st_node_rec g[] = {
		{ .addr = (__u64)PID << 32 | TID, .parent = 1, .flags = ST_NODE_ROOT },
		{ .addr = 0x1000, .parent = id, .calls = 1 },
		{ .addr = 0xffffffff81000000ull, .parent = id + 1, .flags = ST_NODE_KERNEL,
		  .calls = 1 },
		{ .addr = 0xffffffff81000100ull, .parent = id + 2,
		  .flags = ST_NODE_KERNEL | ST_NODE_LEAF, .base = 4, .calls = 1 },
		{ .addr = 0xffffffff82000000ull, .parent = id + 1,
		  .flags = ST_NODE_KERNEL | ST_NODE_LEAF, .base = 2, .calls = 1 },
		{ .addr = 0x2000, .parent = id + 1, .flags = ST_NODE_LEAF, .base = 3, .calls = 1 },
	};
	struct st_profile *p;
	const struct st_node *user, *k;
	unsigned hidden = 0;

	assert_int_equal(st_collector__merge(f->c, g, id, 6), 0);
	f->next_id += 10;
	p = st_window__take(w);
	assert_int_equal(p->samples, 9);
	assert_int_equal(p->nthreads, 1);
	st_tree__walk(p->threads[0]->tree, no_kernel_address, &hidden);
	assert_int_equal(hidden, 1);
	user = st_tree__root(p->threads[0]->tree)->first_child;
	assert_non_null(user);
	for (k = user->first_child; k && !(k->f.kind == ST_FRAME_SPECIAL && k->f.runtime == ST_RUNTIME_KERNEL);
	     k = k->next_sibling)
		;
	assert_non_null(k);
	assert_int_equal(k->cum, 6);
	assert_int_equal(k->base, 6);
	st_profile__free(p);
	p = st_window__take(all);	/* without hide_kernel: the kernel frames as they are */
	assert_int_equal(p->samples, 9);
	hidden = 0;
	user = st_tree__root(p->threads[0]->tree)->first_child;
	for (k = user->first_child; k; k = k->next_sibling)
		hidden += k->f.runtime == ST_RUNTIME_KERNEL && k->f.addr;
	assert_true(hidden >= 1);
	st_profile__free(p);
	st_window__free(w);
	st_window__free(all);
	st_collector__reset(f->c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_the_window),
		cmocka_unit_test(test_across_a_reset),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_own_only),
		cmocka_unit_test(test_hide_kernel),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

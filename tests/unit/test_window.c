/* test_window.c - a window's profile (user/model/window.h): the samples
 * merged after it opened and only those, the collector's trees left whole
 * (the snapshots see every sample too), across a collector reset, and its
 * thread filter. Pids cannot exist (above PID_MAX_LIMIT): frames are
 * unnamed, which is enough to count samples. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_the_window),
		cmocka_unit_test(test_across_a_reset),
		cmocka_unit_test(test_filter),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

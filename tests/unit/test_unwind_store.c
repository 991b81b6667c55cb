/* test_unwind_store.c - the CFI rows' shards (user/collect/unwind/unwind_store.c)
 * on real BPF maps: an outer array of maps like `unwind_shards`, shards
 * created in it as rows come, sized by use (the first small, each next as
 * big as all held, up to 8 MiB; the sizing rule also without root), a
 * module put in the fullest shard with room (so that the others may empty
 * and go), extents given out first-fit and reused only
 * after the quarantine, a shard deleted from the kernel once empty (not
 * the last one left), the memory budget and the slots bounding both. The rows are
 * read back through the kernel (the inner map found by id from the outer
 * one), not only through the daemon's mapping. Needs root (BPF maps): skips
 * otherwise and says so. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/collect/unwind/unwind_store.h"

#define SHARD_ROWS (1u << 20)	/* unwind_store.c's largest shard, in rows */
#define MIN_SHARD_ROWS (1u << 16)	/* and its first shard's */
#define ROW sizeof(struct st_unwind_row)
#define MIB (1u << 20)

static int outer = -1;

/* cmocka's skip() when not root (BPF maps need it), saying so. */
static void need_root(void)
{
	if (geteuid() != 0) {
		printf("needs root: creates BPF maps\n");
		skip();
	}
}

/* An `unwind_shards` of slots entries: array of maps of mmapable row arrays. */
static int make_outer(__u32 slots)
{
	LIBBPF_OPTS(bpf_map_create_opts, inner_opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_inner", sizeof(__u32), ROW, 1, &inner_opts);
	int fd;

	assert_true(inner >= 0);
	opts.inner_map_fd = inner;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "t_shards", sizeof(__u32), sizeof(__u32),
			    slots, &opts);
	close(inner);
	assert_true(fd >= 0);
	return fd;
}

static int setup(void **state)
{
	(void)state;
	outer = -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (outer >= 0)
		close(outer);
	outer = -1;
	return 0;
}

static void rows_for(struct st_unwind_row *r, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		r[i] = (struct st_unwind_row){ .pc = (__u32)(seed + 16 * i), .kind = ST_UNW_RSP,
					       .rbp = ST_UNW_RBP_SAME, .off = (__s16)(8 + i % 7) };
}

/* Row idx of the shard in slot, read through the kernel: 0, or -ENOENT
 * when the slot holds no map. */
static int kernel_row(__u32 slot, __u32 idx, struct st_unwind_row *out)
{
	__u32 id = 0;
	int fd, err;

	if (bpf_map_lookup_elem(outer, &slot, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	assert_true(fd >= 0);
	err = bpf_map_lookup_elem(fd, &idx, out) ? -errno : 0;
	close(fd);
	return err;
}

/* The extent's rows, in the daemon's mapping and in the kernel, are r. */
static void assert_rows(const struct st_ustore *s, const struct st_uextent *w,
			const struct st_unwind_row *r)
{
	struct st_unwind_row k;
	size_t n = 0;
	const struct st_unwind_row *m = st_ustore__rows(s, w->slot, &n);

	assert_non_null(m);
	assert_true(w->first + w->n <= n);
	assert_memory_equal(m + w->first, r, w->n * ROW);
	/* first, last and middle rows as BPF sees them */
	for (__u32 i = 0; i < w->n; i += w->n / 2 ? w->n / 2 : 1) {
		assert_int_equal(kernel_row(w->slot, w->first + i, &k), 0);
		assert_memory_equal(&k, &r[i], ROW);
	}
	assert_int_equal(kernel_row(w->slot, w->first + w->n - 1, &k), 0);
	assert_memory_equal(&k, &r[w->n - 1], ROW);
}

static void test_extents_in_one_shard(void **state)
{
	struct st_unwind_row a[100], b[50], c[100], d[30];
	struct st_uextent wa, wb, wc, wd;
	struct st_ustore_stats st;
	struct st_ustore *s;

	(void)state;
	need_root();
	outer = make_outer(4);
	s = st_ustore__new(outer, 4, 64 * MIB);
	assert_non_null(s);
	st_ustore__stats(s, &st);
	assert_int_equal(st.shards, 0);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st.budget, 64 * MIB);
	rows_for(a, 100, 0x1000);
	rows_for(b, 50, 0x2000);
	rows_for(c, 100, 0x3000);
	rows_for(d, 30, 0x4000);
	/* the first rows create shard 0, of MIN_SHARD_ROWS rows (512 KiB) */
	assert_int_equal(st_ustore__put(s, a, 100, &wa), 0);
	assert_int_equal(wa.slot, 0);
	assert_int_equal(wa.first, 0);
	assert_int_equal(wa.n, 100);
	assert_int_equal(st_ustore__put(s, b, 50, &wb), 0);
	assert_int_equal(wb.slot, 0);
	assert_int_equal(wb.first, 100);
	assert_rows(s, &wa, a);
	assert_rows(s, &wb, b);
	st_ustore__stats(s, &st);
	assert_int_equal(st.shards, 1);
	assert_int_equal(st.rows, 150);
	assert_int_equal(st.bytes, MIN_SHARD_ROWS * ROW);
	assert_int_equal(st.peak_bytes, MIN_SHARD_ROWS * ROW);
	/* a's extent given back: not reused before two ticks */
	st_ustore__drop(s, &wa);
	st_ustore__stats(s, &st);
	assert_int_equal(st.rows, 50);
	assert_int_equal(st.shards, 1);	/* the first shard stays */
	assert_int_equal(st_ustore__put(s, c, 100, &wc), 0);
	assert_int_equal(wc.first, 150);
	st_ustore__tick(s);
	assert_int_equal(st_ustore__put(s, d, 30, &wd), 0);
	assert_int_equal(wd.first, 250);
	st_ustore__tick(s);
	/* two ticks later: a's rows are taken again, first fit */
	assert_int_equal(st_ustore__put(s, d, 30, &wd), 0);
	assert_int_equal(wd.slot, 0);
	assert_int_equal(wd.first, 0);
	assert_rows(s, &wd, d);
	assert_rows(s, &wb, b);
	assert_rows(s, &wc, c);
	st_ustore__stats(s, &st);
	assert_int_equal(st.rows, 50 + 100 + 30 + 30);
	/* no rows, or more than a module may have: refused */
	assert_int_equal(st_ustore__put(s, d, 0, &wd), -ENOSPC);
	assert_int_equal(st_ustore__put(s, d, ST_UNWIND_MAX_MODULE_ROWS + 1, &wd), -ENOSPC);
	/* an extent of an empty or unknown slot is ignored */
	st_ustore__drop(s, &(struct st_uextent){ .slot = 3, .first = 0, .n = 10 });
	st_ustore__drop(s, &(struct st_uextent){ .slot = 99, .first = 0, .n = 10 });
	st_ustore__stats(s, &st);
	assert_int_equal(st.rows, 210);
	assert_null(st_ustore__rows(s, 3, &(size_t){ 0 }));
	st_ustore__free(s);
}

static void test_second_shard_freed_when_empty(void **state)
{
	const size_t big = SHARD_ROWS - 10;
	struct st_unwind_row *r = malloc(big * ROW), k;
	struct st_uextent wa, wb, wc;
	struct st_ustore_stats st;
	struct st_ustore *s;
	size_t n = 0;

	(void)state;
	need_root();
	assert_non_null(r);
	rows_for(r, big, 0);
	outer = make_outer(2);
	/* a budget of one full shard and 64 KiB: the second shard gets the rest */
	s = st_ustore__new(outer, 2, SHARD_ROWS * ROW + 64 * 1024);
	assert_non_null(s);
	assert_int_equal(st_ustore__put(s, r, big, &wa), 0);
	assert_int_equal(wa.slot, 0);
	/* a module bigger than a first shard gets a shard its size: 100 rows
	 * do not fit; a shard of its own, 8 MiB (as big as all held) cut to the
	 * budget */
	assert_int_equal(st_ustore__put(s, r, 100, &wb), 0);
	assert_int_equal(wb.slot, 1);
	assert_int_equal(wb.first, 0);
	assert_rows(s, &wb, r);
	assert_non_null(st_ustore__rows(s, 1, &n));
	assert_int_equal(n, 64 * 1024 / ROW);
	st_ustore__stats(s, &st);
	assert_int_equal(st.shards, 2);
	assert_int_equal(st.bytes, SHARD_ROWS * ROW + 64 * 1024);
	assert_int_equal(st.rows, big + 100);
	/* over the budget: 64 KiB hold 8192 rows, 8092 are left in shard 1 */
	assert_int_equal(st_ustore__put(s, r, 8093, &wc), -ENOSPC);
	assert_int_equal(st_ustore__put(s, r, 8092, &wc), 0);
	assert_int_equal(wc.slot, 1);
	assert_int_equal(wc.first, 100);
	/* shard 1 emptied: deleted from the kernel and its memory given back */
	st_ustore__drop(s, &wb);
	st_ustore__stats(s, &st);
	assert_int_equal(st.shards, 2);
	st_ustore__drop(s, &wc);
	st_ustore__stats(s, &st);
	assert_int_equal(st.shards, 1);
	assert_int_equal(st.bytes, SHARD_ROWS * ROW);
	assert_int_equal(st.peak_bytes, SHARD_ROWS * ROW + 64 * 1024);
	assert_int_equal(st.rows, big);
	assert_null(st_ustore__rows(s, 1, &n));
	assert_int_equal(kernel_row(1, 0, &k), -ENOENT);
	/* its slot is quarantined, and there are only two: no room now */
	assert_int_equal(st_ustore__put(s, r, 100, &wb), -ENOSPC);
	st_ustore__tick(s);
	st_ustore__tick(s);
	assert_int_equal(st_ustore__put(s, r, 100, &wb), 0);
	assert_int_equal(wb.slot, 1);
	assert_rows(s, &wb, r);
	/* shard 0 emptied while shard 1 holds rows: deleted too */
	st_ustore__drop(s, &wa);
	st_ustore__stats(s, &st);
	assert_int_equal(st.shards, 1);
	assert_int_equal(st.bytes, 64 * 1024);
	assert_int_equal(st.rows, 100);
	assert_int_equal(kernel_row(0, 0, &k), -ENOENT);
	/* the last shard, emptied, stays (no RCU wait for the next module) */
	st_ustore__drop(s, &wb);
	st_ustore__stats(s, &st);
	assert_int_equal(st.shards, 1);
	assert_int_equal(st.rows, 0);
	assert_int_equal(kernel_row(1, 0, &k), 0);
	st_ustore__free(s);
	free(r);
}

/* The sizing rule: the first shard small, each next as big as all held
 * (the shards double), never over 8 MiB unless one module needs more. */
static void test_shard_rows(void **state)
{
	(void)state;
	assert_int_equal(st_ustore__shard_rows(0, 1), MIN_SHARD_ROWS);
	assert_int_equal(st_ustore__shard_rows(0, MIN_SHARD_ROWS + 1), MIN_SHARD_ROWS + 1);
	assert_int_equal(st_ustore__shard_rows(MIN_SHARD_ROWS, 10), MIN_SHARD_ROWS);
	assert_int_equal(st_ustore__shard_rows(3 * MIN_SHARD_ROWS, 10), 3 * MIN_SHARD_ROWS);
	assert_int_equal(st_ustore__shard_rows(5 * SHARD_ROWS, 10), SHARD_ROWS);
	assert_int_equal(st_ustore__shard_rows(5 * SHARD_ROWS, SHARD_ROWS + 7), SHARD_ROWS + 7);
}

/* Shards added as rows come: 512 KiB, 512 KiB, 1 MiB, 2 MiB, each filled
 * before the next is made, and the rows of each read back. */
static void test_shards_double(void **state)
{
	const size_t n = MIN_SHARD_ROWS / 2;
	struct st_unwind_row *r = malloc(n * ROW);
	struct st_uextent w[8];
	struct st_ustore_stats st;
	struct st_ustore *s;
	const __u32 want_slot[8] = { 0, 0, 1, 1, 2, 2, 2, 2 };
	size_t held[8] = { 1, 1, 2, 2, 4, 4, 4, 4 }, sz = 0;

	(void)state;
	need_root();
	assert_non_null(r);
	rows_for(r, n, 0x10);
	outer = make_outer(8);
	s = st_ustore__new(outer, 8, 64 * MIB);
	assert_non_null(s);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(st_ustore__put(s, r, n, &w[i]), 0);
		assert_int_equal(w[i].slot, want_slot[i]);
		st_ustore__stats(s, &st);
		assert_int_equal(st.bytes, held[i] * MIN_SHARD_ROWS * ROW);
		assert_int_equal(st.rows, (i + 1) * n);
	}
	assert_non_null(st_ustore__rows(s, 2, &sz));
	assert_int_equal(sz, 2 * MIN_SHARD_ROWS);
	for (int i = 0; i < 8; i++)
		assert_rows(s, &w[i], r);
	st_ustore__stats(s, &st);
	assert_int_equal(st.shards, 3);
	st_ustore__free(s);
	free(r);
}

/* A module goes to the fullest shard with room, not the first: shard 0
 * at 47% (a freed range in it), shard 1 at 62%: 1 gets it. */
static void test_fullest_shard_first(void **state)
{
	const size_t q = 30720;	/* rows */
	struct st_unwind_row *r = malloc(2 * q * ROW);
	struct st_uextent a1, a2, b, c;
	struct st_ustore *s;

	(void)state;
	need_root();
	assert_non_null(r);
	rows_for(r, 2 * q, 0x40);
	outer = make_outer(4);
	s = st_ustore__new(outer, 4, 64 * MIB);
	assert_non_null(s);
	assert_int_equal(st_ustore__put(s, r, q, &a1), 0);
	assert_int_equal(st_ustore__put(s, r, q, &a2), 0);
	assert_int_equal(a2.slot, 0);
	assert_int_equal(st_ustore__put(s, r, 40960, &b), 0);
	assert_int_equal(b.slot, 1);
	st_ustore__drop(s, &a1);
	st_ustore__tick(s);
	st_ustore__tick(s);
	assert_int_equal(st_ustore__put(s, r, 10240, &c), 0);
	assert_int_equal(c.slot, 1);
	assert_int_equal(c.first, 40960);
	assert_rows(s, &c, r);
	/* shard 1 full now (51,200 of 65,536 rows, 78%), the rest too big for
	 * it: back to shard 0's freed range */
	assert_int_equal(st_ustore__put(s, r, 20000, &c), 0);
	assert_int_equal(c.slot, 0);
	assert_int_equal(c.first, 0);
	assert_rows(s, &c, r);
	st_ustore__free(s);
	free(r);
}

static void test_budget(void **state)
{
	struct st_unwind_row r[1024];
	struct st_uextent w;
	struct st_ustore_stats st;
	struct st_ustore *s;
	size_t n = 0;

	(void)state;
	need_root();
	rows_for(r, 1024, 0x100);
	outer = make_outer(8);
	/* 8 KiB: one shard of 1024 rows, no more */
	s = st_ustore__new(outer, 8, 8192);
	assert_non_null(s);
	assert_int_equal(st_ustore__put(s, r, 1024, &w), 0);
	assert_non_null(st_ustore__rows(s, w.slot, &n));
	assert_int_equal(n, 1024);
	assert_rows(s, &w, r);
	assert_int_equal(st_ustore__put(s, r, 1, &w), -ENOSPC);
	st_ustore__stats(s, &st);
	assert_int_equal(st.bytes, 8192);
	assert_int_equal(st.shards, 1);
	st_ustore__free(s);
	close(outer);
	/* a module larger than the whole budget never gets a shard */
	outer = make_outer(8);
	s = st_ustore__new(outer, 8, 4096);
	assert_non_null(s);
	assert_int_equal(st_ustore__put(s, r, 513, &w), -ENOSPC);
	st_ustore__stats(s, &st);
	assert_int_equal(st.shards, 0);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st_ustore__put(s, r, 512, &w), 0);
	assert_rows(s, &w, r);
	st_ustore__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_extents_in_one_shard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_shard_freed_when_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget, setup, teardown),
		cmocka_unit_test(test_shard_rows),
		cmocka_unit_test_setup_teardown(test_shards_double, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fullest_shard_first, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

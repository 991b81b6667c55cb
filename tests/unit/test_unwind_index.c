/* test_unwind_index.c - a module's pc index (user/collect/unwind/unwind_index.c),
 * as the walk's st_unw_find_row() (bpf/unwind_step.h, built natively) uses
 * it: for every pc, the row found through the index is the one a search of
 * all rows finds (the last row with pc <= the pc, or none below the first
 * row), on dense, sparse and clustered rows; few rows get no index; the
 * buckets are few. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "user/collect/unwind/unwind_index.h"
#include "user/collect/unwind/unwind_native.h"

/* the count of rows with pc <= want in [lo, hi): a plain search */
static __u32 count_le(const struct st_unwind_row *rows, __u32 lo, __u32 hi, __u32 want)
{
	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (rows[mid].pc <= want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct st_unwind_row *shard_rows;
static size_t shard_n;

static const struct st_unwind_row *get_rows(void *ctx, __u32 shard, size_t *n)
{
	(void)ctx;
	(void)shard;
	*n = shard_n;
	return shard_rows;
}

/* The walk's answer for want: the count of rows with pc <= want. */
static __u32 walk_count(const struct st_unwind_map *m, const struct st_unwind_row *shard, __u32 want)
{
	struct st_unw_env e = { .rows = get_rows };
	const struct st_unwind_row *r = st_unw_find_row(&e, m, want);

	return r ? (__u32)(r - shard) + 1 : 0;
}

/* Every pc from below the first row to past the last, by step (and the
 * rows' own pcs and their neighbours): the index's answer is the full
 * search's. The rows sit at an offset in their shard, the buckets right
 * after them, as unwind_modules.c stores them. */
static void check_rows(const struct st_unwind_row *rows, size_t n, __u32 step)
{
	struct st_unwind_row *shard;
	struct st_unwind_index ix;
	struct st_unwind_map m = { .first = 3, .nrows = (__u32)n };
	__u64 pc, end = (__u64)rows[n - 1].pc + 3 * step;

	st_unwind_index__plan(rows, n, &ix);
	assert_true(ix.nbuckets >= 1);
	assert_true(ix.nbuckets <= n / ST_UNWIND_INDEX_ROWS);
	shard = calloc(3 + n + ix.nbuckets, sizeof(*shard));
	assert_non_null(shard);
	memcpy(shard + 3, rows, n * sizeof(*rows));
	st_unwind_index__build(rows, n, &ix, shard + 3 + n);
	shard_rows = shard;
	shard_n = 3 + n + ix.nbuckets;
	m.nbuckets = ix.nbuckets;
	m.ishift = ix.shift;
	m.ibase = ix.base;
	for (pc = rows[0].pc > 2 * step ? rows[0].pc - 2 * step : 0; pc < end; pc += step) {
		for (int d = -1; d <= 1; d++) {
			__u32 want = (__u32)(pc + d);

			assert_int_equal(walk_count(&m, shard + 3, want),
					 count_le(rows, 0, (__u32)n, want));
		}
	}
	for (size_t i = 0; i < n; i++)
		assert_int_equal(walk_count(&m, shard + 3, rows[i].pc), i + 1);
	free(shard);
}

static struct st_unwind_row *make_rows(size_t n, __u32 first, __u32 gap_max, unsigned seed)
{
	struct st_unwind_row *rows = calloc(n, sizeof(*rows));
	__u32 pc = first;

	srand(seed);
	assert_non_null(rows);
	for (size_t i = 0; i < n; i++) {
		rows[i].pc = pc;
		rows[i].kind = ST_UNW_RSP;
		rows[i].off = (__s16)(8 * (i % 7 + 1));
		pc += 1 + (__u32)rand() % gap_max;
	}
	return rows;
}

static void test_dense_rows(void **state)
{
	struct st_unwind_row *rows = make_rows(5000, 0x1000, 8, 1);

	(void)state;
	check_rows(rows, 5000, 1);
	free(rows);
}

static void test_sparse_rows(void **state)
{
	struct st_unwind_row *rows = make_rows(3000, 0x400000, 4000, 2);

	(void)state;
	check_rows(rows, 3000, 97);
	free(rows);
}

/* most rows in one place, a few far away (a big gap, .init and .fini) */
static void test_clustered_rows(void **state)
{
	struct st_unwind_row *rows = make_rows(2000, 0x20000, 16, 3);

	(void)state;
	for (size_t i = 1990; i < 2000; i++)
		rows[i].pc = 0x7fff0000u + (__u32)(i - 1990) * 64;
	check_rows(rows, 2000, 1021);
	check_rows(rows, 1990, 3);
	free(rows);
}

/* pcs up to the top of the 32-bit range: no shift overflows */
static void test_high_pcs(void **state)
{
	struct st_unwind_row *rows = make_rows(400, 0xfff00000u, 600, 4);

	(void)state;
	rows[399].pc = 0xfffffff0u;
	check_rows(rows, 400, 251);
	free(rows);
}

static void test_few_rows_no_index(void **state)
{
	struct st_unwind_row rows[7] = { { .pc = 1 }, { .pc = 5 }, { .pc = 9 } };
	struct st_unwind_index ix;
	struct st_unwind_map m = { .nrows = 3 };

	(void)state;
	st_unwind_index__plan(rows, 7, &ix);
	assert_int_equal(ix.nbuckets, 0);
	shard_rows = rows;
	shard_n = 3;
	assert_int_equal(walk_count(&m, rows, 5), 2);	/* a full search */
	assert_int_equal(walk_count(&m, rows, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dense_rows),
		cmocka_unit_test(test_sparse_rows),
		cmocka_unit_test(test_clustered_rows),
		cmocka_unit_test(test_high_pcs),
		cmocka_unit_test(test_few_rows_no_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_unwind_index.c - a module's pc index (user/collect/unwind_index.c),
 * as bpf/unwind.h's st_unw_find_row() uses it: for every pc, searching only
 * its bucket's range finds the row a search of all rows finds (the last row
 * with pc <= the pc, or none below the first row), on dense, sparse and
 * clustered rows; few rows get no index; the buckets are few. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "user/collect/unwind_index.h"

/* the count of rows with pc <= want in [lo, hi): bpf/unwind.h's search */
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

/* Every pc from below the first row to past the last, by step (and the
 * rows' own pcs and their neighbours): the index's answer is the full
 * search's. */
static void check_rows(const struct st_unwind_row *rows, size_t n, __u32 step)
{
	struct st_unwind_row *buckets;
	struct st_unwind_index ix;
	__u64 pc, end = (__u64)rows[n - 1].pc + 3 * step;
	__u32 lo, hi;

	st_unwind_index__plan(rows, n, &ix);
	assert_true(ix.nbuckets >= 1);
	assert_true(ix.nbuckets <= n / ST_UNWIND_INDEX_ROWS);
	buckets = calloc(ix.nbuckets, sizeof(*buckets));
	assert_non_null(buckets);
	st_unwind_index__build(rows, n, &ix, buckets);
	for (pc = rows[0].pc > 2 * step ? rows[0].pc - 2 * step : 0; pc < end; pc += step) {
		for (int d = -1; d <= 1; d++) {
			__u32 want = (__u32)(pc + d), got;

			st_unwind_index__range(&ix, buckets, n, want, &lo, &hi);
			assert_true(lo <= hi && hi <= n);
			got = count_le(rows, lo, hi, want);
			assert_int_equal(got, count_le(rows, 0, (__u32)n, want));
		}
	}
	for (size_t i = 0; i < n; i++) {
		st_unwind_index__range(&ix, buckets, n, rows[i].pc, &lo, &hi);
		assert_int_equal(count_le(rows, lo, hi, rows[i].pc), i + 1);
	}
	free(buckets);
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
	__u32 lo, hi;

	(void)state;
	st_unwind_index__plan(rows, 7, &ix);
	assert_int_equal(ix.nbuckets, 0);
	st_unwind_index__range(&ix, NULL, 7, 5, &lo, &hi);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 7);
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

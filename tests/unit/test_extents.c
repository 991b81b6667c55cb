/* test_extents.c - the range allocator behind the CFI rows shards
 * (user/collect/unwind/extents.c): first fit, merging, the reuse quarantine, bounds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "user/collect/unwind/extents.h"

static void test_bump_and_full(void **state)
{
	struct st_extents *e = st_extents__new(100, 2);
	__u32 a, b;

	(void)state;
	assert_non_null(e);
	assert_int_equal(st_extents__alloc(e, 60, 0, &a), 0);
	assert_int_equal(a, 0);
	assert_int_equal(st_extents__alloc(e, 41, 0, &b), -ENOSPC);
	assert_int_equal(st_extents__alloc(e, 40, 0, &b), 0);
	assert_int_equal(b, 60);
	assert_int_equal(st_extents__used(e), 100);
	assert_int_equal(st_extents__alloc(e, 1, 0, &b), -ENOSPC);
	assert_int_equal(st_extents__alloc(e, 0, 0, &b), -EINVAL);
	st_extents__free(e);
	st_extents__free(NULL);
}

/* A released range waits `quarantine` ticks: until then its old contents
 * stay as they were for whoever still refers to them. */
static void test_quarantine(void **state)
{
	struct st_extents *e = st_extents__new(100, 2);
	__u32 a, b;

	(void)state;
	assert_int_equal(st_extents__alloc(e, 100, 5, &a), 0);
	assert_int_equal(st_extents__release(e, 0, 30, 5), 0);
	assert_int_equal(st_extents__used(e), 70);
	assert_int_equal(st_extents__alloc(e, 10, 5, &b), -ENOSPC);
	assert_int_equal(st_extents__alloc(e, 10, 6, &b), -ENOSPC);
	assert_int_equal(st_extents__alloc(e, 10, 7, &b), 0);
	assert_int_equal(b, 0);
	/* the rest of the range keeps its tick: reusable at once */
	assert_int_equal(st_extents__alloc(e, 20, 7, &b), 0);
	assert_int_equal(b, 10);
	assert_int_equal(st_extents__free_ranges(e), 0);
	st_extents__free(e);
}

static void test_merge_and_first_fit(void **state)
{
	struct st_extents *e = st_extents__new(1000, 0);
	__u32 r[5], x;

	(void)state;
	for (int i = 0; i < 5; i++)
		assert_int_equal(st_extents__alloc(e, 100, 0, &r[i]), 0);
	/* free 1 and 3: two ranges; then 2 joins them into one of 300 */
	assert_int_equal(st_extents__release(e, r[1], 100, 1), 0);
	assert_int_equal(st_extents__release(e, r[3], 100, 1), 0);
	assert_int_equal(st_extents__free_ranges(e), 2);
	assert_int_equal(st_extents__alloc(e, 150, 1, &x), 0);
	assert_int_equal(x, 500);	/* neither hole fits: above the used ones */
	assert_int_equal(st_extents__release(e, r[2], 100, 2), 0);
	assert_int_equal(st_extents__free_ranges(e), 1);
	assert_int_equal(st_extents__alloc(e, 300, 2, &x), 0);
	assert_int_equal(x, 100);
	assert_int_equal(st_extents__free_ranges(e), 0);
	/* merging with the next range only */
	assert_int_equal(st_extents__release(e, 200, 100, 3), 0);
	assert_int_equal(st_extents__release(e, 100, 100, 3), 0);
	assert_int_equal(st_extents__free_ranges(e), 1);
	assert_int_equal(st_extents__alloc(e, 200, 3, &x), 0);
	assert_int_equal(x, 100);
	st_extents__free(e);
}

/* Ranges never handed out, or released twice, are refused. */
static void test_bad_release(void **state)
{
	struct st_extents *e = st_extents__new(100, 0);
	__u32 a;

	(void)state;
	assert_int_equal(st_extents__alloc(e, 50, 0, &a), 0);
	assert_int_equal(st_extents__release(e, 40, 20, 0), -EINVAL);	/* past top */
	assert_int_equal(st_extents__release(e, 0, 0, 0), -EINVAL);
	assert_int_equal(st_extents__release(e, UINT32_MAX, 2, 0), -EINVAL);
	assert_int_equal(st_extents__release(e, 10, 10, 0), 0);
	assert_int_equal(st_extents__release(e, 15, 10, 0), -EINVAL);	/* overlaps */
	assert_int_equal(st_extents__release(e, 5, 10, 0), -EINVAL);
	assert_int_equal(st_extents__used(e), 40);
	st_extents__free(e);
}

/* Many alloc/release rounds of varied sizes: the free list stays short
 * and the space is reused (no leak of units). */
static void test_churn(void **state)
{
	struct st_extents *e = st_extents__new(1u << 20, 1);
	__u32 first[64] = { 0 }, size[64] = { 0 };
	__u64 tick = 0;
	unsigned seed = 1;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		int i = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 64;

		if (size[i]) {
			assert_int_equal(st_extents__release(e, first[i], size[i], tick), 0);
			size[i] = 0;
		} else {
			__u32 n = 1 + ((seed >> 8) % 4096);

			if (!st_extents__alloc(e, n, tick, &first[i]))
				size[i] = n;
		}
		if (round % 16 == 0)
			tick++;
	}
	assert_true(st_extents__free_ranges(e) <= 65);
	for (int i = 0; i < 64; i++)
		if (size[i])
			assert_int_equal(st_extents__release(e, first[i], size[i], tick), 0);
	assert_int_equal(st_extents__used(e), 0);
	assert_true(st_extents__free_ranges(e) <= 1);
	st_extents__free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bump_and_full),
		cmocka_unit_test(test_quarantine),
		cmocka_unit_test(test_merge_and_first_fit),
		cmocka_unit_test(test_bad_release),
		cmocka_unit_test(test_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

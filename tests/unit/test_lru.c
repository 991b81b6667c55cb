/* test_lru.c - the intrusive least-recently-used list (common/lru.h): the
 * order of pushes, touches moving an entry to the newest end, unlinks at
 * either end and in the middle, and the count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/lru.h"

struct item {
	int id;
	struct st_lru_link link;
};

/* The ids from the oldest to the newest, as one number (digits). */
static int order(const struct st_lru *l)
{
	int n = 0;
	size_t seen = 0;

	for (struct st_lru_link *e = st_lru__oldest(l); e; e = e->prev, seen++)
		n = n * 10 + st_lru_entry(e, struct item, link)->id;
	assert_int_equal(seen, l->count);
	return n;
}

static void test_push_touch_unlink(void **state)
{
	struct item it[5] = { { 1, { 0 } }, { 2, { 0 } }, { 3, { 0 } }, { 4, { 0 } },
			      { 5, { 0 } } };
	struct st_lru l = { 0 };

	(void)state;
	assert_null(st_lru__oldest(&l));
	for (int i = 0; i < 5; i++)
		st_lru__push(&l, &it[i].link);
	assert_int_equal(order(&l), 12345);
	st_lru__touch(&l, &it[0].link);		/* the oldest */
	assert_int_equal(order(&l), 23451);
	st_lru__touch(&l, &it[2].link);		/* one in the middle */
	assert_int_equal(order(&l), 24513);
	st_lru__touch(&l, &it[2].link);		/* the newest already */
	assert_int_equal(order(&l), 24513);
	st_lru__unlink(&l, &it[1].link);	/* the oldest */
	assert_int_equal(order(&l), 4513);
	st_lru__unlink(&l, &it[2].link);	/* the newest */
	assert_int_equal(order(&l), 451);
	st_lru__unlink(&l, &it[4].link);	/* the middle */
	assert_int_equal(order(&l), 41);
	assert_ptr_equal(st_lru_entry(st_lru__oldest(&l), struct item, link), &it[3]);
	st_lru__unlink(&l, &it[3].link);
	st_lru__unlink(&l, &it[0].link);
	assert_null(st_lru__oldest(&l));
	assert_null(l.newest);
	assert_int_equal(l.count, 0);
	st_lru__push(&l, &it[4].link);		/* usable again once empty */
	assert_int_equal(order(&l), 5);
}

/* Evicting from the oldest end while pushing: a bounded cache. */
static void test_bounded_cache(void **state)
{
	struct item it[100];
	struct st_lru l = { 0 };

	(void)state;
	for (int i = 0; i < 100; i++) {
		it[i].id = i;
		st_lru__push(&l, &it[i].link);
		if (i % 5 == 0)	/* item 0 stays used */
			st_lru__touch(&l, &it[0].link);
		while (l.count > 8)
			st_lru__unlink(&l, st_lru__oldest(&l));
	}
	assert_int_equal(l.count, 8);
	for (struct st_lru_link *e = st_lru__oldest(&l); e; e = e->prev) {
		int id = st_lru_entry(e, struct item, link)->id;

		assert_true(id == 0 || id >= 93);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_touch_unlink),
		cmocka_unit_test(test_bounded_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

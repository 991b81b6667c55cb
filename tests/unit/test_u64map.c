/* test_u64map.c - the one hash table (common/u64map.h) in both its uses:
 * a map by key, and an index by hash with the caller's equality, including
 * colliding hashes and removal by backward shift; and the shared hashes
 * (common/hash.h) against FNV-1a's published values. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/hash.h"
#include "common/u64map.h"

static bool is_str(const void *value, const void *key)
{
	return strcmp(value, key) == 0;
}

static bool same(const void *value, const void *key)
{
	return value == key;
}

static void test_map_put_get_replace(void **state)
{
	struct st_u64map *m = st_u64map__new();
	int a, b;

	(void)state;
	assert_non_null(m);
	assert_int_equal(st_u64map__put(m, 0, &a), -EINVAL);	/* 0 is no key */
	for (uintptr_t k = 1; k <= 1000; k++)
		assert_int_equal(st_u64map__put(m, k, (void *)(k * 8)), 0);
	assert_int_equal(st_u64map__count(m), 1000);
	for (uintptr_t k = 1; k <= 1000; k++)
		assert_ptr_equal(st_u64map__get(m, k), (void *)(k * 8));
	assert_null(st_u64map__get(m, 1001));
	assert_int_equal(st_u64map__put(m, 7, &a), 0);
	assert_int_equal(st_u64map__put(m, 7, &b), 0);
	assert_ptr_equal(st_u64map__get(m, 7), &b);
	assert_int_equal(st_u64map__count(m), 1000);
	st_u64map__clear(m);
	assert_int_equal(st_u64map__count(m), 0);
	assert_null(st_u64map__get(m, 7));
	st_u64map__free(m);
}

/* Values under one hash (every hash 5 here, and 0 kept as 1) are told apart
 * by eq; removing one in the middle of a probe run keeps the others. */
static void test_index_collisions_and_remove(void **state)
{
	static char names[40][8];
	struct st_u64map *m = st_u64map__new();
	size_t pos = 0, seen = 0;

	(void)state;
	assert_non_null(m);
	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "n%d", i);
		assert_int_equal(st_u64map__add(m, i % 2 ? 5 : 0, names[i]), 0);
	}
	for (int i = 0; i < 40; i++)
		assert_ptr_equal(st_u64map__find(m, i % 2 ? 5 : 0, is_str, names[i]), names[i]);
	assert_null(st_u64map__find(m, 5, is_str, "n0"));	/* under hash 0 */
	assert_ptr_equal(st_u64map__find(m, 1, is_str, "n0"), names[0]);	/* 0 is 1 */
	for (int i = 0; i < 40; i += 3)
		assert_ptr_equal(st_u64map__remove(m, i % 2 ? 5 : 0, is_str, names[i]), names[i]);
	assert_null(st_u64map__remove(m, 0, is_str, "n0"));
	for (int i = 0; i < 40; i++) {
		void *v = st_u64map__find(m, i % 2 ? 5 : 0, is_str, names[i]);

		if (i % 3 == 0)
			assert_null(v);
		else
			assert_ptr_equal(v, names[i]);
	}
	while (st_u64map__next(m, &pos, NULL))
		seen++;
	assert_int_equal(seen, 40 - 14);
	assert_int_equal(st_u64map__count(m), 40 - 14);
	st_u64map__free(m);
}

/* Removal in a table full of distinct hashes, wrapped around its end. */
static void test_index_remove_many(void **state)
{
	struct st_u64map *m = st_u64map__new();
	static uintptr_t vals[5000];

	(void)state;
	for (size_t i = 0; i < 5000; i++) {
		vals[i] = i;
		assert_int_equal(st_u64map__add(m, st_hash_u64(i) ^ i, &vals[i]), 0);
	}
	for (size_t i = 0; i < 5000; i += 2)
		assert_non_null(st_u64map__remove(m, st_hash_u64(i) ^ i, same, &vals[i]));
	for (size_t i = 0; i < 5000; i++) {
		void *v = st_u64map__find(m, st_hash_u64(i) ^ i, same, &vals[i]);

		assert_true(i % 2 ? v == &vals[i] : v == NULL);
	}
	st_u64map__free(m);
}

static void test_fnv1a_values(void **state)
{
	(void)state;
	/* FNV-1a 64 test vectors (Fowler, Noll, Vo) */
	assert_true(st_hash_str("") == 0xcbf29ce484222325ull);
	assert_true(st_hash_str("a") == 0xaf63dc4c8601ec8cull);
	assert_true(st_hash_str("foobar") == 0x85944171f73967e8ull);
	assert_true(st_hash_bytes("foobar", 6, ST_HASH_INIT) == 0x85944171f73967e8ull);
	assert_true(st_hash_bytes("bar", 3, st_hash_bytes("foo", 3, ST_HASH_INIT)) ==
		    st_hash_str("foobar"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_put_get_replace),
		cmocka_unit_test(test_index_collisions_and_remove),
		cmocka_unit_test(test_index_remove_many),
		cmocka_unit_test(test_fnv1a_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

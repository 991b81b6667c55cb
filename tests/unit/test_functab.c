/* test_functab.c - a profile's function table (user/model/functab.c):
 * self and total over threads, recursion counted once, the thread filter,
 * the order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/strtab.h"
#include "common/tree.h"
#include "user/model/functab.h"
#include "user/model/profile.h"

/* Two threads: 1 runs main;a;rec;rec (6) and main;b (2), 2 runs main;rec (4). */
static struct st_profile *two_threads(void)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t1, *t2;
	struct st_frame f[4];
	const char *names[] = { "main", "a", "rec", "rec" };

	assert_non_null(p);
	t1 = st_profile__add_thread(p, 10, 10, "x");
	t2 = st_profile__add_thread(p, 10, 11, "x");
	for (int i = 0; i < 4; i++)
		f[i] = (struct st_frame){ .kind = ST_FRAME_FUNCTION,
					  .function = st_strtab__intern(p->strs, names[i]) };
	assert_non_null(st_tree__add_sample(t1->tree, f, 4, 6, ST_CALLS_FUNCTION));
	f[1].function = st_strtab__intern(p->strs, "b");
	assert_non_null(st_tree__add_sample(t1->tree, f, 2, 2, ST_CALLS_FUNCTION));
	f[1].function = st_strtab__intern(p->strs, "rec");
	assert_non_null(st_tree__add_sample(t2->tree, f, 2, 4, ST_CALLS_FUNCTION));
	st_profile__finalize(p);
	return p;
}

static const struct st_functab_row *row(const struct st_functab *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].f.function && !strcmp(t->rows[i].f.function, name))
			return &t->rows[i];
	fail_msg("no row %s", name);
	return NULL;
}

static void test_all_threads(void **state)
{
	struct st_profile *p = two_threads();
	struct st_functab *t = st_functab__new(p, 0);

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->samples, 12);
	assert_int_equal(t->n, 4);
	/* by self: rec 10, b 2, then main and a (0) by total: main 12, a 6 */
	assert_string_equal(t->rows[0].f.function, "rec");
	assert_string_equal(t->rows[1].f.function, "b");
	assert_string_equal(t->rows[2].f.function, "main");
	assert_string_equal(t->rows[3].f.function, "a");
	assert_int_equal(row(t, "rec")->self, 10);
	assert_int_equal(row(t, "rec")->total, 10);	/* rec;rec counted once */
	assert_int_equal(row(t, "main")->total, 12);
	assert_int_equal(row(t, "main")->self, 0);
	assert_int_equal(row(t, "a")->total, 6);
	st_functab__free(t);
	st_profile__free(p);
}

static void test_one_thread(void **state)
{
	struct st_profile *p = two_threads();
	struct st_functab *t = st_functab__new(p, 11);

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->samples, 4);
	assert_int_equal(t->n, 2);
	assert_int_equal(row(t, "rec")->self, 4);
	assert_int_equal(row(t, "main")->total, 4);
	st_functab__free(t);
	st_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_threads),
		cmocka_unit_test(test_one_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

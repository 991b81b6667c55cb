/* test_interp.c - --interpreters' names (user/collect/interp.h): lists,
 * all, none, and the refusal of unknown or empty names. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "user/collect/interp.h"

static void test_names(void **state)
{
	unsigned m = 99;
	char bad[16], names[64];

	(void)state;
	assert_int_equal(st_interp__parse("python", &m, bad, sizeof(bad)), 0);
	assert_int_equal(m, ST_INTERP_PYTHON);
	assert_int_equal(st_interp__parse("none", &m, bad, sizeof(bad)), 0);
	assert_int_equal(m, 0);
	assert_int_equal(st_interp__parse("all", &m, bad, sizeof(bad)), 0);
	assert_int_equal(m, ST_INTERP_ALL);
	assert_int_equal(st_interp__parse("none,python", &m, bad, sizeof(bad)), 0);
	assert_int_equal(m, ST_INTERP_PYTHON);
	assert_int_equal(st_interp__parse("java", &m, bad, sizeof(bad)), 0);
	assert_int_equal(m, ST_INTERP_JAVA);
	assert_int_equal(st_interp__parse("python,java", &m, bad, sizeof(bad)), 0);
	assert_int_equal(m, ST_INTERP_ALL);
	assert_string_equal(st_interp__names(names, sizeof(names)), "python,java");
	assert_string_equal(st_interp__names(names, 4), "pyt");	/* cut, terminated */
}

static void test_refused(void **state)
{
	unsigned m = 7;
	char bad[16];

	(void)state;
	assert_int_equal(st_interp__parse("python,ruby", &m, bad, sizeof(bad)), -EINVAL);
	assert_string_equal(bad, "ruby");
	assert_int_equal(m, 7);	/* untouched */
	assert_int_equal(st_interp__parse("", &m, bad, sizeof(bad)), -EINVAL);
	assert_string_equal(bad, "");
	assert_int_equal(st_interp__parse("python,", &m, bad, sizeof(bad)), -EINVAL);
	assert_int_equal(st_interp__parse("Python", &m, bad, sizeof(bad)), -EINVAL);
	assert_int_equal(st_interp__parse("pythonx", &m, NULL, 0), -EINVAL);
	assert_int_equal(st_interp__parse("a-very-long-runtime-name", &m, bad, sizeof(bad)),
			 -EINVAL);
	assert_int_equal(strlen(bad), sizeof(bad) - 1);	/* cut */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

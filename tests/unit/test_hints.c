/* test_hints.c - unknown options and their nearest known one
 * (user/hints.c): distances, abbreviations, values that look like
 * options, -h, the stop at "--". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "user/hints.h"

static const struct argp_option opts[] = {
	{ "format", 1, "LIST", 0, "", 0 },
	{ "output", 'o', "DIR", 0, "", 0 },
	{ "threshold", 2, "P", 0, "", 0 },
	{ "wide", 3, NULL, 0, "", 0 },
	{ "all", 'a', NULL, 0, "", 0 },
	{ 0 }
};

static const struct st_hint hints[] = { { "stdio", "use --print" }, { NULL, NULL } };

static int check_args(int argc, const char **words)
{
	char *argv[16];

	for (int i = 0; i < argc; i++)
		argv[i] = (char *)words[i];
	return st_hints__check("prog", opts, hints, argc, argv);
}

static void test_nearest(void **state)
{
	const char *const names[] = { "format", "threshold", "output", "wide" };

	(void)state;
	assert_string_equal(st_hints__nearest("formt", names, 4), "format");
	assert_string_equal(st_hints__nearest("treshold", names, 4), "threshold");
	assert_string_equal(st_hints__nearest("wdie", names, 4), "wide");
	assert_null(st_hints__nearest("samplerate", names, 4));
	assert_null(st_hints__nearest("", names, 0));
}

static void test_check(void **state)
{
	const char *ok1[] = { "p", "--format=svg", "--form", "x", "-ao", "--wide", "--wide" };
	const char *ok2[] = { "p", "--output", "--not-an-option", "--", "--anything" };
	const char *bad1[] = { "p", "--formt", "svg" };
	const char *bad2[] = { "p", "--stdio" };
	const char *bad3[] = { "p", "-o", "x", "--nope" };
	char *h[] = { (char *)"p", (char *)"-h" };

	(void)state;
	assert_int_equal(check_args(7, ok1), 0);	/* -ao: o takes the next word */
	assert_int_equal(check_args(5, ok2), 0);
	assert_int_equal(check_args(3, bad1), 64);
	assert_int_equal(check_args(2, bad2), 64);
	assert_int_equal(check_args(4, bad3), 64);
	assert_int_equal(st_hints__check("prog", opts, hints, 2, h), 0);
	assert_string_equal(h[1], "--help");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

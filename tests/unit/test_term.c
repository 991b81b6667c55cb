/* test_term.c - reports on a terminal (user/output/term.h): lines cut to
 * the width with "…" (UTF-8 counted by code point), percentages coloured
 * by value, header and SELF lines styled, nothing changed without a width
 * or colour, lines split across writes, and a raw control byte or bad
 * UTF-8 escaped (\xNN) rather than sent to the terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "user/output/term.h"

/* What the filter writes for text, written in pieces of step bytes. */
static char *filtered(const char *text, unsigned width, bool colour, size_t step)
{
	struct st_term_opts o = { .width = width, .colour = colour };
	char *buf = NULL;
	size_t len = 0, n = strlen(text);
	FILE *mem = open_memstream(&buf, &len);
	FILE *f;

	assert_non_null(mem);
	f = st_term__open(mem, &o);
	assert_non_null(f);
	for (size_t i = 0; i < n; i += step) {
		assert_int_equal(fwrite(text + i, 1, i + step > n ? n - i : step, f),
				 i + step > n ? n - i : step);
		fflush(f);
	}
	assert_int_equal(fclose(f), 0);
	fclose(mem);
	return buf;
}

static const char report[] =
	"# stacktree xtree\n"
	"=== pid 1 tid 1 comm a: 10 samples (100.0% of all)\n"
	"     BASE       CUM    %CUM    CALLS  FRAME\n"
	"        0        10 100.00%        1  [pid 1 tid 1 a]\n"
	"        7         7   3.00%        1    caf\xc3\xa9_na\xc3\xafve_function_with_a_long_name [a]\n"
	"        1         1   0.10%        1    tiny [a]\n";

static void test_unchanged(void **state)
{
	char *out = filtered(report, 0, false, 7);

	(void)state;
	assert_string_equal(out, report);
	free(out);
}

static void test_cut(void **state)
{
	char *out = filtered(report, 46, false, 5), *line, *save = NULL;
	size_t lines = 0;

	(void)state;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t cols = 0;

		for (const char *c = line; *c; c++)
			cols += ((unsigned char)*c & 0xc0) != 0x80;
		assert_true(cols <= 46);
		lines++;
	}
	assert_int_equal(lines, 6);
	free(out);
	/* 45 columns (the \xc3\xa9 is one) and the ellipsis */
	out = filtered(report, 46, false, 1);
	assert_non_null(strstr(out, "        7         7   3.00%        1    caf\xc3\xa9_\xe2\x80\xa6\n"));
	/* shorter lines stay whole */
	assert_non_null(strstr(out, "\n     BASE       CUM    %CUM    CALLS  FRAME\n"));
	free(out);
}

static void test_colour(void **state)
{
	char *out = filtered(report, 0, true, 64);

	(void)state;
	assert_non_null(strstr(out, "\033[2m# stacktree xtree\033[0m\n"));
	assert_non_null(strstr(out, "\033[1m=== pid 1"));
	assert_non_null(strstr(out, " \033[31m100.00%\033[39m "));
	assert_non_null(strstr(out, " \033[32m3.00%\033[39m "));
	assert_non_null(strstr(out, " 0.10% "));	/* under 0.5%: plain */
	free(out);
	/* arcflow: the %CUM column, SELF rows bold */
	out = filtered("SELF              1          0        954  100.00  [0] main\n"
		       "CHILD             1          0          1    0.10  f [1]\n",
		       55, true, 3);
	assert_string_equal(out, "\033[1mSELF              1          0        954  \033[31m100.00"
				 "\033[39m  [0]\xe2\x80\xa6\033[0m\n"
				 "CHILD             1          0          1    0.10  f [\xe2\x80\xa6\n");
	free(out);
}

static void test_last_line_without_newline(void **state)
{
	char *out = filtered("a b 6.0% c\nend", 0, true, 2);

	(void)state;
	assert_string_equal(out, "a b \033[31m6.0%\033[39m c\nend");
	free(out);
}

/* The reports escape their names; a raw byte reaching the filter anyway is
 * escaped too (a report's own backslashes kept), cut or not. */
static void test_raw_bytes_escaped(void **state)
{
	const char *text = "x \x1b]0;t\x07\\x1b \xc2\x9b y\xff\r\n";
	char *out = filtered(text, 200, true, 3), *cut;

	(void)state;
	assert_string_equal(out, "x \\x1b]0;t\\x07\\x1b \\xc2\\x9b y\\xff\\x0d\n");
	cut = filtered(text, 20, false, 2);
	assert_null(strchr(cut, '\x1b'));
	assert_null(strchr(cut, '\r'));
	assert_string_equal(cut, "x \\x1b]0;t\\x07\\x1b \xe2\x80\xa6\n");
	free(cut);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unchanged),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_colour),
		cmocka_unit_test(test_last_line_without_newline),
		cmocka_unit_test(test_raw_bytes_escaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

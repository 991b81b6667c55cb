/* test_jsonpull.c - the pull tokenizer of JSON (user/model/jsonpull.c):
 * tokens and their values, escapes and surrogate pairs, numbers at their
 * limits, strings across its read buffer, the grammar and its bounds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "user/model/jsonpull.h"

static int fd_with(const char *text, size_t len)
{
	int fd = memfd_create("jsonpull", 0);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* All tokens of text; the first error (0 when it ends well). */
static int tokens(const char *text, size_t depth, size_t max_str, struct st_jval *out, size_t n,
		  size_t *got, char *err, size_t errlen)
{
	int fd = fd_with(text, strlen(text)), ret = 0;
	struct st_jpull *j = st_jpull__new(fd, depth, max_str);
	struct st_jval v;

	assert_non_null(j);
	*got = 0;
	do {
		if ((ret = st_jpull__next(j, &v)))
			break;
		if (*got < n)
			out[(*got)++] = v;
	} while (v.tok != ST_J_EOF);
	if (ret && err)
		snprintf(err, errlen, "%s", st_jpull__error(j));
	st_jpull__free(j);
	close(fd);
	return ret;
}

static void test_tokens_and_values(void **state)
{
	const char *doc = " {\"a\" : [1, -2, 18446744073709551615, -9223372036854775808, 0.5, 1e3,"
			  " true, false, null, \"x\\u00e9\\ud83d\\ude00\\n\\\"\"], \"b\": {}}\n";
	static const enum st_jtok want[] = {
		ST_J_OBJ, ST_J_KEY, ST_J_ARR, ST_J_INT, ST_J_INT, ST_J_INT, ST_J_INT, ST_J_DBL,
		ST_J_DBL, ST_J_TRUE, ST_J_FALSE, ST_J_NULL, ST_J_STR, ST_J_ARR_END, ST_J_KEY,
		ST_J_OBJ, ST_J_OBJ_END, ST_J_OBJ_END, ST_J_EOF,
	};
	struct st_jval v[32];
	size_t n;

	(void)state;
	assert_int_equal(tokens(doc, 8, 64, v, 32, &n, NULL, 0), 0);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i].tok, want[i]);
	assert_true(v[3].u == 1 && !v[3].neg);
	assert_true(v[4].neg && v[4].i == -2);
	assert_true(v[5].u == UINT64_MAX && !v[5].neg);
	assert_true(v[6].neg && v[6].i == INT64_MIN);
	assert_true(v[7].d == 0.5 && v[8].d == 1000.0);
}

static void test_string_decoding(void **state)
{
	int fd = fd_with("\"x\\u00e9\\ud83d\\ude00\\n\\\"\\/\\t\"", 30);
	struct st_jpull *j = st_jpull__new(fd, 4, 64);
	struct st_jval v;

	(void)state;
	assert_int_equal(st_jpull__next(j, &v), 0);
	assert_int_equal(v.tok, ST_J_STR);
	assert_string_equal(v.s, "x\xc3\xa9\xf0\x9f\x98\x80\n\"/\t");
	assert_int_equal(v.len, strlen(v.s));
	st_jpull__free(j);
	close(fd);
}

/* Tokens across the 256 KiB read buffer: a string and a number straddle it. */
static void test_across_the_buffer(void **state)
{
	size_t pad = 256 * 1024 - 5, len = pad + 200000 + 64;
	char *doc = malloc(len);
	struct st_jval v[8];
	size_t n, at;

	(void)state;
	assert_non_null(doc);
	memset(doc, ' ', pad);
	at = pad;
	doc[at++] = '[';
	doc[at++] = '"';
	memset(doc + at, 'q', 200000);
	at += 200000;
	strcpy(doc + at, "\", 123456789012]");
	assert_int_equal(tokens(doc, 4, 1 << 20, v, 8, &n, NULL, 0), 0);
	assert_int_equal(n, 5);
	assert_int_equal(v[1].tok, ST_J_STR);
	assert_int_equal(v[2].tok, ST_J_INT);
	assert_true(v[2].u == 123456789012ull);
	/* the string's length bound */
	assert_int_equal(tokens(doc, 4, 100000, v, 8, &n, NULL, 0), -EINVAL);
	free(doc);
}

static void test_refused(void **state)
{
	static const struct {
		const char *doc, *why;
	} bad[] = {
		{ "", "unexpected end of file" },
		{ "{} x", "garbage after the end of the document" },
		{ "{}{}", "garbage after the end of the document" },
		{ "[1,]", "not a JSON value" },
		{ "[1 2]", "expected ','" },
		{ "{\"a\" 1}", "expected ':'" },
		{ "{1:2}", "expected a key" },
		{ "{\"a\":1,}", "expected a key" },
		{ "[}", "not a JSON value" },
		{ "[1}", "does not close" },
		{ "[01]", "leading zero" },
		{ "[1.]", "bad number" },
		{ "[-]", "bad number" },
		{ "[1e]", "bad number" },
		{ "[18446744073709551616]", "out of range" },
		{ "[-9223372036854775809]", "out of range" },
		{ "[tru]", "not a JSON value" },
		{ "[\"\\u0000\"]", "\\u0000" },
		{ "[\"\\ud800x\"]", "unpaired surrogate" },
		{ "[\"\\udc00\"]", "unpaired surrogate" },
		{ "[\"\\x\"]", "bad escape" },
		{ "[\"\\u12g4\"]", "bad \\u escape" },
		{ "[[[[[1]]]]]", "nested deeper than 4" },
		{ "[\"abc", "unexpected end of file" },
	};
	struct st_jval v[8];
	char err[256];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		if (tokens(bad[i].doc, 4, 64, v, 8, &n, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i].why))
			fail_msg("%s: \"%s\", want \"%s\"", bad[i].doc, err, bad[i].why);
	}
	/* a NUL byte in a string */
	{
		int fd = fd_with("[\"a\0b\"]", 7);
		struct st_jpull *j = st_jpull__new(fd, 4, 64);
		struct st_jval t;

		assert_int_equal(st_jpull__next(j, &t), 0);
		assert_int_equal(st_jpull__next(j, &t), -EINVAL);
		assert_non_null(strstr(st_jpull__error(j), "NUL"));
		st_jpull__free(j);
		close(fd);
	}
}

static void test_skip(void **state)
{
	int fd = fd_with("{\"a\":{\"b\":[1,{\"c\":[]}],\"d\":2},\"e\":3}", 36);
	struct st_jpull *j = st_jpull__new(fd, 8, 64);
	struct st_jval v;

	(void)state;
	assert_int_equal(st_jpull__next(j, &v), 0);	/* { */
	assert_int_equal(st_jpull__next(j, &v), 0);	/* "a" */
	assert_int_equal(st_jpull__next(j, &v), 0);	/* { */
	assert_int_equal(st_jpull__skip(j, &v), 0);
	assert_int_equal(st_jpull__depth(j), 1);
	assert_int_equal(st_jpull__next(j, &v), 0);
	assert_int_equal(v.tok, ST_J_KEY);
	assert_string_equal(v.s, "e");
	st_jpull__free(j);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokens_and_values),
		cmocka_unit_test(test_string_decoding),
		cmocka_unit_test(test_across_the_buffer),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_skip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_perfmap.c - /tmp/perf-PID.map parsing (binsym/perfmap.c):
 * the format, malformed lines, overlaps (the later line wins), bounds, and
 * reading this very process's map file with the ownership rules. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "binsym/perfmap.h"

static struct st_perfmap *parse(const char *text, size_t len, size_t max,
				struct st_perfmap_stats *st)
{
	struct st_perfmap *m = st_perfmap__new();

	assert_non_null(m);
	assert_int_equal(st_perfmap__parse(m, text, len, max, st), 0);
	return m;
}

#define PARSE(text, st) parse((text), sizeof(text) - 1, 0, (st))

static void test_basic(void **state)
{
	struct st_perfmap_stats st = {};
	struct st_perfmap *m = PARSE("1000 10 jit_hot_loop\n"
				     "0x2000 0x20 LazyCompile:*foo /app/x.js:12:3\n"
				     "3000\t8\tname\twith tab\r\n"
				     "\n"
				     "4000 4 last without newline", &st);
	__u64 start = 0;

	(void)state;
	assert_int_equal(st.bad_lines, 0);
	assert_int_equal(st_perfmap__count(m), 4);
	assert_string_equal(st_perfmap__find(m, 0x1000, &start), "jit_hot_loop");
	assert_int_equal(start, 0x1000);
	assert_string_equal(st_perfmap__find(m, 0x100f, &start), "jit_hot_loop");
	assert_null(st_perfmap__find(m, 0x1010, NULL));
	assert_null(st_perfmap__find(m, 0xfff, NULL));
	assert_string_equal(st_perfmap__find(m, 0x201f, &start),
			    "LazyCompile:*foo /app/x.js:12:3");
	assert_int_equal(start, 0x2000);
	assert_string_equal(st_perfmap__find(m, 0x3004, NULL), "name\twith tab");
	assert_string_equal(st_perfmap__find(m, 0x4003, NULL), "last without newline");
	assert_null(st_perfmap__find(m, 0x4004, NULL));
	st_perfmap__free(m);
}

static void test_malformed(void **state)
{
	static const char text[] = "zz 10 bad_start\n"
				   "1000 g bad_size\n"
				   "1000 10\n"			/* no name */
				   "1000 10 \n"		/* blank name */
				   "1000\n"
				   "0x 10 no_digits\n"
				   "1000 0 size_zero\n"
				   "ffffffffffffff00 100 wraps\n"
				   "10000000000000000 1 too_many_digits\n"
				   "-1000 10 negative\n"
				   "2000 10 nul\0inside\n"
				   "0000000000000000003000 10 leading_zeros_ok\n";
	struct st_perfmap_stats st = {};
	struct st_perfmap *m = PARSE(text, &st);

	(void)state;
	assert_int_equal(st.bad_lines, 11);
	assert_int_equal(st_perfmap__count(m), 1);
	assert_null(st_perfmap__find(m, 0x1000, NULL));
	assert_null(st_perfmap__find(m, 0x2000, NULL));
	assert_string_equal(st_perfmap__find(m, 0x3000, NULL), "leading_zeros_ok");
	st_perfmap__free(m);
}

static void test_overlaps(void **state)
{
	/* A: [0x1000, 0x2000); B, later, inside it: [0x1400, 0x1800);
	 * C, later still, over A's end: [0x1c00, 0x2400); D: the same
	 * range as B, last: replaces B. */
	struct st_perfmap_stats st = {};
	struct st_perfmap *m = PARSE("1000 1000 A\n"
				     "1400 400 B\n"
				     "1c00 800 C\n"
				     "1400 400 D\n", &st);
	__u64 start = 0;

	(void)state;
	assert_string_equal(st_perfmap__find(m, 0x1000, &start), "A");
	assert_string_equal(st_perfmap__find(m, 0x13ff, NULL), "A");
	assert_string_equal(st_perfmap__find(m, 0x1400, &start), "D");
	assert_int_equal(start, 0x1400);
	assert_string_equal(st_perfmap__find(m, 0x17ff, NULL), "D");
	/* A again after D: its start is still its own */
	assert_string_equal(st_perfmap__find(m, 0x1800, &start), "A");
	assert_int_equal(start, 0x1000);
	assert_string_equal(st_perfmap__find(m, 0x1bff, NULL), "A");
	assert_string_equal(st_perfmap__find(m, 0x1c00, &start), "C");
	assert_string_equal(st_perfmap__find(m, 0x23ff, NULL), "C");
	assert_null(st_perfmap__find(m, 0x2400, NULL));
	/* A (3 pieces) + D + C */
	assert_int_equal(st_perfmap__count(m), 4);
	st_perfmap__free(m);

	/* an earlier large entry entirely hidden by later ones */
	m = PARSE("1000 100 old\n1000 80 x\n1080 80 y\n", &st);
	assert_string_equal(st_perfmap__find(m, 0x1000, NULL), "x");
	assert_string_equal(st_perfmap__find(m, 0x10ff, NULL), "y");
	assert_int_equal(st_perfmap__count(m), 2);
	st_perfmap__free(m);
}

static void test_huge(void **state)
{
	struct st_perfmap_stats st = {};
	/* the whole address space but the last byte, then a small one inside */
	struct st_perfmap *m = PARSE("0 ffffffffffffffff everything\n"
				     "ffffffffffffff00 ff top\n"
				     "7f0000000000 1000 small\n", &st);

	(void)state;
	assert_int_equal(st.bad_lines, 0);
	assert_string_equal(st_perfmap__find(m, 0, NULL), "everything");
	assert_string_equal(st_perfmap__find(m, 0x7f0000000800, NULL), "small");
	assert_string_equal(st_perfmap__find(m, 0x7f0000001000, NULL), "everything");
	assert_string_equal(st_perfmap__find(m, 0xfffffffffffffffeull, NULL), "top");
	assert_null(st_perfmap__find(m, 0xffffffffffffffffull, NULL));
	st_perfmap__free(m);
}

static void test_bounds(void **state)
{
	struct st_perfmap_stats st = {};
	char name[ST_PERFMAP_MAX_NAME + 100], line[ST_PERFMAP_MAX_NAME + 200];
	struct st_perfmap *m;
	const char *got;

	(void)state;
	m = parse("1000 10 a\n2000 10 b\n3000 10 c\n", 30, 2, &st);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st_perfmap__count(m), 2);
	assert_null(st_perfmap__find(m, 0x3000, NULL));
	st_perfmap__free(m);

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(line, sizeof(line), "1000 10 %s\n", name);
	m = parse(line, strlen(line), 0, &st);
	got = st_perfmap__find(m, 0x1000, NULL);
	assert_non_null(got);
	assert_int_equal(strlen(got), ST_PERFMAP_MAX_NAME);
	/* parsing again replaces the entries */
	assert_int_equal(st_perfmap__parse(m, "5000 1 z", 8, 0, &st), 0);
	assert_null(st_perfmap__find(m, 0x1000, NULL));
	assert_string_equal(st_perfmap__find(m, 0x5000, NULL), "z");
	assert_int_equal(st_perfmap__parse(m, NULL, 0, 0, &st), 0);
	assert_int_equal(st_perfmap__count(m), 0);
	st_perfmap__free(m);
	st_perfmap__free(NULL);
}

/* This process's own /tmp/perf-PID.map: read, unchanged, refused as a
 * symlink, kept when removed. */
static void test_read_self(void **state)
{
	struct st_perfmap_stats st = {};
	struct st_perfmap *m = st_perfmap__new();
	char path[64], other[64];
	__u32 euid = 1, nspid = 0;
	FILE *f;

	(void)state;
	assert_int_equal(st_perfmap__proc_ids((unsigned)getpid(), &euid, &nspid), 0);
	assert_int_equal(euid, geteuid());
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", nspid);
	snprintf(other, sizeof(other), "/tmp/perf-%u.map.target", nspid);
	unlink(path);
	assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), 0);	/* none */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("1000 10 self_jit\n", f);
	fclose(f);
	assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), 1);
	assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), 0);	/* unchanged */
	assert_int_equal(st.files, 1);
	assert_string_equal(st_perfmap__find(m, 0x1000, NULL), "self_jit");
	unlink(path);
	assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), 0);
	assert_string_equal(st_perfmap__find(m, 0x1000, NULL), "self_jit");	/* kept */

	f = fopen(other, "w");
	assert_non_null(f);
	fputs("1000 10 through_link\n", f);
	fclose(f);
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), -ELOOP);
	assert_int_equal(st.symlink, 1);
	assert_string_equal(st_perfmap__find(m, 0x1000, NULL), "self_jit");
	unlink(path);
	unlink(other);

	/* another user's file (only root can give one away) */
	if (geteuid() == 0) {
		f = fopen(path, "w");
		assert_non_null(f);
		fputs("1000 10 planted\n", f);
		fclose(f);
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), -EPERM);
		assert_int_equal(st.not_owned, 1);
		assert_string_equal(st_perfmap__find(m, 0x1000, NULL), "self_jit");
		unlink(path);
	}
	assert_int_equal(st_perfmap__read(m, 0x7ffffff0u, &st), -ESRCH);
	st_perfmap__free(m);
}

static void append_to(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A JIT appends to its map: only the new bytes are parsed, a last line
 * still being written is taken back and parsed again once complete, and a
 * file replaced or cut is read from the start. */
static void test_read_appends(void **state)
{
	struct st_perfmap_stats st = {};
	struct st_perfmap *m = st_perfmap__new();
	char path[64];
	__u32 euid, nspid;
	size_t before;

	(void)state;
	assert_int_equal(st_perfmap__proc_ids((unsigned)getpid(), &euid, &nspid), 0);
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", nspid);
	unlink(path);
	append_to(path, "1000 10 first\n2000 10 second\n");
	assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), 1);
	assert_int_equal(st_perfmap__count(m), 2);
	append_to(path, "3000 10 third\n4000 10 par");
	assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), 1);
	assert_string_equal(st_perfmap__find(m, 0x3000, NULL), "third");
	assert_string_equal(st_perfmap__find(m, 0x4000, NULL), "par");	/* for now */
	before = st_perfmap__memory(m);
	append_to(path, "tial\n2000 10 second again\nzz bad\n");
	assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), 1);
	assert_string_equal(st_perfmap__find(m, 0x1000, NULL), "first");
	assert_string_equal(st_perfmap__find(m, 0x4000, NULL), "partial");
	assert_string_equal(st_perfmap__find(m, 0x2000, NULL), "second again");
	assert_int_equal(st_perfmap__count(m), 4);
	assert_int_equal(st.bad_lines, 1);	/* "zz bad" once, the tail never */
	assert_true(st_perfmap__memory(m) >= before);
	/* replaced by a shorter file: from the start */
	unlink(path);
	append_to(path, "5000 10 new\n");
	assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), 1);
	assert_null(st_perfmap__find(m, 0x1000, NULL));
	assert_string_equal(st_perfmap__find(m, 0x5000, NULL), "new");
	assert_int_equal(st_perfmap__count(m), 1);
	/* cut in place (same inode, smaller): from the start */
	assert_int_equal(truncate(path, 0), 0);
	append_to(path, "6000 1 x\n");
	assert_int_equal(st_perfmap__read(m, (unsigned)getpid(), &st), 1);
	assert_null(st_perfmap__find(m, 0x5000, NULL));
	assert_string_equal(st_perfmap__find(m, 0x6000, NULL), "x");
	assert_int_equal(st.files, 5);
	unlink(path);
	st_perfmap__free(m);
}

/* Appends painted over earlier ranges name every address as one parse of
 * the whole text does (fuzz_perfmap checks this on arbitrary input). */
static void test_append_paints(void **state)
{
	static const char *parts[] = {
		"1000 1000 A\n3000 100 B\n",
		"1400 400 C\n2f00 180 D\n0 10 E\n",	/* inside A, over B's start, below */
		"1000 1000 F\n5000 10 G\n",		/* all of A (and C) again */
	};
	struct st_perfmap *whole = st_perfmap__new(), *m = st_perfmap__new();
	char text[256] = "";

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		size_t consumed = 0;

		strcat(text, parts[k]);
		assert_int_equal(st_perfmap__append(m, parts[k], strlen(parts[k]), 0, NULL,
						    &consumed), 0);
		assert_int_equal(consumed, strlen(parts[k]));
		assert_int_equal(st_perfmap__parse(whole, text, strlen(text), 0, NULL), 0);
		for (__u64 a = 0; a < 0x5020; a += 0x10) {
			__u64 s1 = 1, s2 = 2;
			const char *x = st_perfmap__find(whole, a, &s1), *y = st_perfmap__find(m, a, &s2);

			assert_true(!x == !y);
			if (x) {
				assert_string_equal(x, y);
				assert_int_equal(s1, s2);
			}
		}
	}
	assert_string_equal(st_perfmap__find(m, 0x1500, NULL), "F");
	assert_string_equal(st_perfmap__find(m, 0x2f80, NULL), "D");
	assert_string_equal(st_perfmap__find(m, 0x3080, NULL), "B");
	assert_string_equal(st_perfmap__find(m, 0x5, NULL), "E");
	st_perfmap__free(whole);
	st_perfmap__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),	 cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_overlaps), cmocka_unit_test(test_huge),
		cmocka_unit_test(test_bounds),	 cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_read_appends), cmocka_unit_test(test_append_paints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

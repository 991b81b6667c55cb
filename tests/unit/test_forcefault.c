/* test_forcefault.c - the pure parts of user/collect/forcefault.c: the
 * state file parser (what a crashed --force-faults session left) and the
 * page-sample selection. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "user/collect/forcefault.h"

static int parse(const char *s, struct st_ffstate *st)
{
	return st_ffstate__parse(s, strlen(s), st);
}

static void test_state_roundtrip(void **state)
{
	struct st_ffstate in = { .pid = 4242, .zram = 3, .added = true, .swapon = true }, out;
	char buf[256];
	int n;

	(void)state;
	n = st_ffstate__format(&in, buf, sizeof(buf));
	assert_true(n > 0);
	assert_string_equal(buf, "stacktreed-forcefault 1\npid 4242\nzram 3 added\nswapon 3\n");
	assert_int_equal(st_ffstate__parse(buf, (size_t)n, &out), 0);
	assert_int_equal(out.pid, 4242);
	assert_int_equal(out.zram, 3);
	assert_true(out.added && out.swapon);
	/* each step is recorded before it is taken: shorter files are valid */
	assert_int_equal(parse("stacktreed-forcefault 1\npid 7\n", &out), 0);
	assert_int_equal(out.zram, -1);
	assert_false(out.swapon);
	assert_int_equal(parse("stacktreed-forcefault 1\npid 7\nzram 0 added\n", &out), 0);
	assert_int_equal(out.zram, 0);
	assert_false(out.swapon);
	/* too small a buffer */
	assert_int_equal(st_ffstate__format(&in, buf, 20), -ENOSPC);
}

static void test_state_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"pid 7\n",						/* no magic */
		"stacktreed-forcefault 2\npid 7\n",			/* other version */
		"stacktreed-forcefault 1\n",				/* no pid */
		"stacktreed-forcefault 1\npid 7",			/* cut: no newline */
		"stacktreed-forcefault 1\npid 0\n",
		"stacktreed-forcefault 1\npid -7\n",
		"stacktreed-forcefault 1\npid 7x\n",
		"stacktreed-forcefault 1\npid 1234567890\n",		/* over 9 digits */
		"stacktreed-forcefault 1\npid 7\npid 8\n",		/* twice */
		"stacktreed-forcefault 1\npid 7\nzram 1 reused\n",
		"stacktreed-forcefault 1\npid 7\nzram 1 added\nzram 2 added\n",
		"stacktreed-forcefault 1\npid 7\nswapon 1\n",		/* swapon without zram */
		"stacktreed-forcefault 1\npid 7\nzram 1 added\nswapon 2\n", /* other device */
		"stacktreed-forcefault 1\npid 7\nzram  1 added\n",
		"stacktreed-forcefault 1\npid 7\n\n",
		"stacktreed-forcefault 1\npid 7\nswapoff 1\n",
		"stacktreed-forcefault 1\r\npid 7\n",
	};
	struct st_ffstate st;
	char big[ST_FF_STATE_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], &st), -EINVAL);
	/* NUL inside a line */
	assert_int_equal(st_ffstate__parse("stacktreed-forcefault 1\npid 7\0\n", 31, &st), -EINVAL);
	/* longer than the bound */
	memset(big, '\n', sizeof(big));
	assert_int_equal(st_ffstate__parse(big, sizeof(big), &st), -EINVAL);
}

static void test_pick_distinct_sorted_in_ranges(void **state)
{
	const struct st_ff_range r[] = { { 0x10000, 0x20000 }, { 0x7f0000000000, 0x7f0000004000 } };
	__u64 out[64], seed = 12345;
	size_t n;

	(void)state;
	n = st_ff__pick(r, 2, 64, &seed, out);
	assert_true(n > 0 && n <= 64);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(out[i] & 4095, 0);
		assert_true((out[i] >= r[0].start && out[i] < r[0].end) ||
			    (out[i] >= r[1].start && out[i] < r[1].end));
		if (i)
			assert_true(out[i] > out[i - 1]);
	}
	/* 20 pages in all, 1000 picks: every page, once */
	{
		__u64 many[1000];

		n = st_ff__pick(r, 2, 1000, &seed, many);
		assert_int_equal(n, 20);
	}
	assert_int_equal(st_ff__pick(r, 0, 10, &seed, out), 0);
	assert_int_equal(st_ff__pick(r, 2, 0, &seed, out), 0);
}

/* A page of a big range is no likelier than a page of a small one: picks
 * fall into ranges in proportion to their sizes (the 4:1 of the integration
 * test), wherever the ranges are. */
static void test_pick_uniform_over_pages(void **state)
{
	/* the small range first and low, the big one high: no address bias */
	const struct st_ff_range r[] = { { 0x555500000000, 0x555500000000 + (16ull << 20) },
					 { 0x7f0000000000, 0x7f0000000000 + (64ull << 20) } };
	static __u64 out[4096];
	__u64 seed = 0x9e3779b97f4a7c15ull, big = 0, total = 0;

	(void)state;
	for (int round = 0; round < 20; round++) {
		size_t n = st_ff__pick(r, 2, 1000, &seed, out);

		for (size_t i = 0; i < n; i++)
			big += out[i] >= r[1].start;
		total += n;
	}
	assert_true(total > 19000);
	assert_true(big * 100 > total * 78 && big * 100 < total * 82);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_roundtrip),
		cmocka_unit_test(test_state_refused),
		cmocka_unit_test(test_pick_distinct_sorted_in_ranges),
		cmocka_unit_test(test_pick_uniform_over_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_forcefault.c - the pure parts of user/collect/faults/forcefault.c: the
 * state file parser (what a crashed --force-faults session left) and the
 * page-sample selection. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "user/collect/faults/forcefault.h"

static int parse(const char *s, struct st_ffstate *st)
{
	return st_ffstate__parse(s, strlen(s), st);
}

#define BOOT "0f1e2d3c-4b5a-4697-8877-665544332211"
#define UUID "11111111-2222-4333-8444-555555555555"
#define HEAD "stacktreed-forcefault 2\npid 7\nboot " BOOT "\n"

static void test_state_roundtrip(void **state)
{
	struct st_ffstate in = { .pid = 4242, .boot = BOOT, .zram = 3, .added = true,
				 .diskseq = 23, .ino = 20231, .swapon = true, .uuid = UUID }, out;
	char buf[256];
	int n;

	(void)state;
	n = st_ffstate__format(&in, buf, sizeof(buf));
	assert_true(n > 0);
	assert_string_equal(buf, "stacktreed-forcefault 2\npid 4242\nboot " BOOT "\n"
			    "zram 3 added diskseq 23 ino 20231\nswapon 3 uuid " UUID "\n");
	assert_int_equal(st_ffstate__parse(buf, (size_t)n, &out), 0);
	assert_int_equal(out.pid, 4242);
	assert_string_equal(out.boot, BOOT);
	assert_int_equal(out.zram, 3);
	assert_true(out.added && out.swapon);
	assert_true(out.diskseq == 23 && out.ino == 20231);
	assert_string_equal(out.uuid, UUID);
	/* each step is recorded before it is taken: shorter files are valid */
	assert_int_equal(parse(HEAD, &out), 0);
	assert_int_equal(out.zram, -1);
	assert_false(out.swapon);
	assert_int_equal(parse(HEAD "zram 0 added diskseq 0 ino 5\n", &out), 0);
	assert_int_equal(out.zram, 0);
	assert_false(out.swapon);
	/* too small a buffer */
	assert_int_equal(st_ffstate__format(&in, buf, 20), -ENOSPC);
	assert_int_equal(st_ffstate__format(&in, buf, 80), -ENOSPC);
}

static void test_state_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"pid 7\n",						/* no magic */
		"stacktreed-forcefault 1\npid 7\nzram 1 added\n",	/* version 1: no identity */
		"stacktreed-forcefault 3\npid 7\nboot " BOOT "\n",	/* other version */
		"stacktreed-forcefault 2\n",				/* no pid */
		"stacktreed-forcefault 2\npid 7\n",			/* no boot */
		HEAD "boot " BOOT "\n",					/* twice */
		"stacktreed-forcefault 2\npid 7\nboot 0F1E2D3C-4B5A-4697-8877-665544332211\n",
		"stacktreed-forcefault 2\npid 7\nboot 0f1e2d3c-4b5a-4697-8877-66554433221\n",
		"stacktreed-forcefault 2\npid 7\nboot 0f1e2d3c04b5a-4697-8877-665544332211\n",
		"stacktreed-forcefault 2\npid 7\nboot " BOOT,		/* cut: no newline */
		"stacktreed-forcefault 2\npid 0\nboot " BOOT "\n",
		"stacktreed-forcefault 2\npid -7\nboot " BOOT "\n",
		"stacktreed-forcefault 2\npid 7x\nboot " BOOT "\n",
		"stacktreed-forcefault 2\npid 1234567890\nboot " BOOT "\n", /* over 9 digits */
		HEAD "pid 8\n",						/* twice */
		HEAD "zram 1 added\n",					/* no identity */
		HEAD "zram 1 added diskseq 3\n",
		HEAD "zram 1 added diskseq 3 ino\n",
		HEAD "zram 1 added diskseq 3 ino 4 more\n",
		HEAD "zram 1 added diskseq 12345678901234567890 ino 4\n", /* past 19 digits */
		HEAD "zram 1 reused diskseq 3 ino 4\n",
		HEAD "zram 1 added diskseq 3 ino 4\nzram 2 added diskseq 3 ino 4\n",
		HEAD "swapon 1 uuid " UUID "\n",			/* swapon without zram */
		HEAD "zram 1 added diskseq 3 ino 4\nswapon 2 uuid " UUID "\n", /* other device */
		HEAD "zram 1 added diskseq 3 ino 4\nswapon 1\n",	/* no UUID */
		HEAD "zram 1 added diskseq 3 ino 4\nswapon 1 uuid x\n",
		HEAD "zram 1 added diskseq 3 ino 4\nswapon 1 uuid " UUID "\nswapon 1 uuid " UUID "\n",
		HEAD "zram  1 added diskseq 3 ino 4\n",
		HEAD "zram 1 added diskseq 3 ino 4 \n",
		HEAD "\n",
		HEAD "swapoff 1\n",
		"stacktreed-forcefault 2\r\npid 7\nboot " BOOT "\n",
	};
	struct st_ffstate st;
	char big[ST_FF_STATE_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &st) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
	}
	/* NUL inside a line */
	assert_int_equal(st_ffstate__parse(HEAD "zram 1\0 added diskseq 3 ino 4\n",
					   strlen(HEAD) + 31, &st), -EINVAL);
	/* longer than the bound */
	memset(big, '\n', sizeof(big));
	assert_int_equal(st_ffstate__parse(big, sizeof(big), &st), -EINVAL);
}

/* Recovery undoes only what is provably the crashed session's own. */
static void test_plan_only_ours(void **state)
{
	struct st_ffstate s = { .pid = 7, .boot = BOOT, .zram = 1, .added = true, .diskseq = 23,
				.ino = 20231, .swapon = true, .uuid = UUID };
	struct st_ffseen ours = { .same_boot = true, .dev = true, .diskseq = 23, .ino = 20231,
				  .swap = true, .uuid = UUID }, seen;
	char why[256];

	(void)state;
	/* ours, swap on: everything */
	assert_int_equal(st_ffstate__plan(&s, &ours, why, sizeof(why)),
			 ST_FF_SWAPOFF | ST_FF_RESET | ST_FF_REMOVE);
	assert_string_equal(why, "");
	/* ours, killed before swapon (or its header not written yet) */
	seen = ours;
	seen.swap = false;
	seen.uuid[0] = 0;
	assert_int_equal(st_ffstate__plan(&s, &seen, why, sizeof(why)), ST_FF_RESET | ST_FF_REMOVE);
	/* the number reused by another owner: a new disk sequence number */
	seen = ours;
	seen.diskseq = 24;
	seen.ino = 20378;
	assert_int_equal(st_ffstate__plan(&s, &seen, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "zram1 is another device now"));
	assert_non_null(strstr(why, "left alone"));
	/* a kernel without diskseq: the sysfs inode tells */
	s.diskseq = 0;
	seen.diskseq = 0;
	assert_int_equal(st_ffstate__plan(&s, &seen, why, sizeof(why)), 0);
	seen.ino = 20231;
	assert_int_equal(st_ffstate__plan(&s, &seen, why, sizeof(why)) & ST_FF_RESET, ST_FF_RESET);
	s.diskseq = 23;
	/* our device, but someone else's swap on it */
	seen = ours;
	strcpy(seen.uuid, "aaaaaaaa-2222-4333-8444-555555555555");
	assert_int_equal(st_ffstate__plan(&s, &seen, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "not the one that session made"));
	seen.uuid[0] = 0;	/* unreadable header */
	assert_int_equal(st_ffstate__plan(&s, &seen, why, sizeof(why)), 0);
	s.swapon = false;	/* we never made swap, yet swap is on it */
	seen = ours;
	assert_int_equal(st_ffstate__plan(&s, &seen, why, sizeof(why)), 0);
	s.swapon = true;
	/* another boot: nothing of it remains */
	seen = ours;
	seen.same_boot = false;
	assert_int_equal(st_ffstate__plan(&s, &seen, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "restarted"));
	/* the device removed since: nothing to do, nothing left */
	seen = (struct st_ffseen){ .same_boot = true };
	assert_int_equal(st_ffstate__plan(&s, &seen, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	/* nothing changed yet */
	s.zram = -1;
	assert_int_equal(st_ffstate__plan(&s, &ours, why, sizeof(why)), 0);
	assert_string_equal(why, "");
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
		cmocka_unit_test(test_plan_only_ours),
		cmocka_unit_test(test_pick_distinct_sorted_in_ranges),
		cmocka_unit_test(test_pick_uniform_over_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_unwind_walk.c - the daemon's copy of the BPF stack walk
 * (user/collect/unwind_walk.c) on hand-made tables and stacks: CFA rules, saved
 * rbp, frame-pointer fallback, signal frames, and every way a walk ends. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "user/collect/unwind_walk.h"

#define BASE 0x400000ull	/* the module's mapping; module vaddr 0 */
#define SP 0x7ffd0000ull	/* the sampled stack pointer */

static struct st_unwind_row rows[] = {
	{ .pc = 0x1000, .kind = ST_UNW_RSP, .rbp = ST_UNW_RBP_SAME, .off = 8 },	/* A: entry */
	{ .pc = 0x1001, .kind = ST_UNW_RSP, .rbp = -2, .off = 16 },	/* A: after push rbp */
	{ .pc = 0x1004, .kind = ST_UNW_RBP, .rbp = -2, .off = 16 },	/* A: rbp set */
	{ .pc = 0x1100, .kind = ST_UNW_NONE },
	{ .pc = 0x2000, .kind = ST_UNW_RSP, .rbp = ST_UNW_RBP_SAME, .off = 32 }, /* B */
	{ .pc = 0x2100, .kind = ST_UNW_NONE },
	{ .pc = 0x3000, .kind = ST_UNW_END },					/* _start */
	{ .pc = 0x3100, .kind = ST_UNW_NONE },
	{ .pc = 0x4000, .kind = ST_UNW_SIGNAL },				/* __restore_rt */
	{ .pc = 0x4010, .kind = ST_UNW_NONE },
	{ .pc = 0x5000, .kind = ST_UNW_RSP, .rbp = ST_UNW_RBP_SAME, .off = 0 },	/* broken */
	{ .pc = 0x5010, .kind = ST_UNW_NONE },
	{ .pc = 0x6000, .kind = ST_UNW_RSP, .rbp = ST_UNW_RBP_SAME, .off = 8 },	/* loops on itself */
	{ .pc = 0x6100, .kind = ST_UNW_NONE },
	{ .pc = 0x7000, .kind = ST_UNW_RBX, .rbp = ST_UNW_RBP_SAME, .off = 24 }, /* resolver */
	{ .pc = 0x7100, .kind = ST_UNW_NONE },
};

static const struct st_unwind_row *get_rows(void *ctx, __u32 shard, size_t *n)
{
	(void)ctx;
	if (shard != 3)
		return NULL;
	*n = sizeof(rows) / sizeof(rows[0]);
	return rows;
}

static struct st_unwind_proc proc;
static __u8 stack[4096];

static void put(__u64 addr, __u64 v)
{
	memcpy(stack + (addr - SP), &v, sizeof(v));
}

static struct st_uwalk_in input(__u64 ip, __u64 bp, size_t len, bool fallback)
{
	struct st_uwalk_in in = {
		.ip = ip, .sp = SP, .bp = bp, .stack = stack, .stack_len = len,
		.proc = &proc, .rows = get_rows, .fallback = fallback,
	};
	return in;
}

static int setup(void **state)
{
	(void)state;
	memset(&proc, 0, sizeof(proc));
	memset(stack, 0, sizeof(stack));
	proc.nmaps = 2;
	proc.maps[0] = (struct st_unwind_map){ .start = BASE, .len = 0x10000, .vaddr = 0,
					       .shard = 3, .first = 0,
					       .nrows = sizeof(rows) / sizeof(rows[0]) };
	/* a module without rows: frame pointers there in auto mode */
	proc.maps[1] = (struct st_unwind_map){ .start = 0x500000, .len = 0x1000 };
	return 0;
}

/* A (rbp pushed) <- B (CFA = rsp + 32) <- _start: a complete walk. */
static void test_complete(void **state)
{
	__u64 out[8];
	enum st_uwalk_stop stop;
	size_t fp, n;

	(void)state;
	put(SP + 0, 0x1111);		/* A's saved rbp */
	put(SP + 8, BASE + 0x2010);	/* A returns into B */
	put(SP + 16 + 24, BASE + 0x3005); /* B's CFA = SP + 16 + 32: RA at CFA - 8 */
	struct st_uwalk_in in = input(BASE + 0x1002, 0x9999, sizeof(stack), false);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 3);
	assert_int_equal(stop, ST_UWALK_END);
	assert_int_equal(out[0], BASE + 0x1002);
	assert_int_equal(out[1], BASE + 0x2010);
	assert_int_equal(out[2], BASE + 0x3005);
	assert_int_equal(fp, 0);
}

/* The CFA from rbp, and the caller's rbp restored from the frame. */
static void test_rbp_rule(void **state)
{
	__u64 out[8];
	enum st_uwalk_stop stop;
	size_t fp, n;
	__u64 bp = SP + 64;		/* A's frame: CFA = rbp + 16 */

	(void)state;
	put(bp, SP + 256);		/* saved rbp at CFA - 16 */
	put(bp + 8, BASE + 0x3001);	/* straight into _start */
	struct st_uwalk_in in = input(BASE + 0x1010, bp, sizeof(stack), false);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UWALK_END);
	assert_int_equal(out[1], BASE + 0x3001);
}

/* A return address is looked up as ip - 1: a call at the very end of B
 * (0x2100 is past B) still finds B's row. */
static void test_return_address_minus_one(void **state)
{
	__u64 out[8];
	enum st_uwalk_stop stop;
	size_t fp, n;

	(void)state;
	put(SP + 8, BASE + 0x2100);	/* A returns just past B's last byte */
	put(SP + 16 + 24, BASE + 0x3005);
	struct st_uwalk_in in = input(BASE + 0x1002, 0, sizeof(stack), false);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 3);
	assert_int_equal(stop, ST_UWALK_END);
}

/* CFA = rbx + off (ld.so's _dl_runtime_resolve after mov %rsp,%rbx): the
 * leaf's rbx is known, a caller's is not (no row says where a callee saved
 * it), so there the walk stops as unsupported. */
static void test_rbx_cfa_in_the_leaf_only(void **state)
{
	__u64 out[8];
	enum st_uwalk_stop stop;
	size_t fp, n;

	(void)state;
	put(SP + 56, BASE + 0x3005);	/* CFA = rbx + 24 = SP + 64 */
	struct st_uwalk_in in = input(BASE + 0x7010, 0, sizeof(stack), false);
	in.rbx = SP + 40;
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UWALK_END);
	assert_int_equal(out[1], BASE + 0x3005);
	/* B (CFA = rsp + 32) returns into the resolver: not the leaf */
	put(SP + 24, BASE + 0x7010);
	in = input(BASE + 0x2010, 0, sizeof(stack), false);
	in.rbx = SP + 40;
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UWALK_UNSUPPORTED);
}

/* No CFI: dwarf mode stops; auto mode follows the frame pointers. */
static void test_no_cfi_and_fallback(void **state)
{
	__u64 out[8];
	enum st_uwalk_stop stop;
	size_t fp, n;
	__u64 bp = SP + 32;

	(void)state;
	put(bp, 0);			/* outermost by convention */
	put(bp + 8, BASE + 0x3001);
	struct st_uwalk_in in = input(0x500010, bp, sizeof(stack), false);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UWALK_NO_TABLE);
	in.fallback = true;
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 2);
	assert_int_equal(out[1], BASE + 0x3001);
	assert_int_equal(fp, 1);
	assert_int_equal(stop, ST_UWALK_END);
	/* an address no mapping covers */
	in = input(0x900000, 0, sizeof(stack), false);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UWALK_NO_TABLE);
	/* a zero frame pointer in a frame without CFI (an assembly leaf
	 * called from code without frame pointers): no proof of the root */
	in = input(0x500010, 0, sizeof(stack), true);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 1);
	assert_int_equal(fp, 0);
	assert_int_equal(stop, ST_UWALK_NO_TABLE);
	/* but one a call saved ends the stack: B (CFI, rbp kept) returns
	 * into the module without rows with rbp 0 */
	put(SP + 24, 0x500020);
	in = input(BASE + 0x2010, 0, sizeof(stack), true);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UWALK_END);
	/* not when B returns where no mapping is */
	put(SP + 24, 0x900020);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UWALK_NO_TABLE);
}

/* Reads past the copied stack end the walk: a read fault. */
static void test_short_copy(void **state)
{
	__u64 out[8];
	enum st_uwalk_stop stop;
	size_t fp, n;

	(void)state;
	put(SP + 8, BASE + 0x2010);
	put(SP + 16 + 24, BASE + 0x3005);
	struct st_uwalk_in in = input(BASE + 0x1002, 0, 16, false);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UWALK_READ_FAULT);
	in.stack_len = 0;
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UWALK_READ_FAULT);
}

/* A signal frame: the interrupted registers from the ucontext at sp. */
static void test_signal_frame(void **state)
{
	__u64 out[8];
	enum st_uwalk_stop stop;
	size_t fp, n;
	__u64 g = SP + 40 + 10 * 8;	/* gregs[REG_RBP] */

	(void)state;
	put(g + 0, 0);			/* rbp */
	put(g + 5 * 8, SP + 512);	/* rsp */
	put(g + 6 * 8, BASE + 0x1000);	/* rip: A's first instruction */
	put(SP + 512, BASE + 0x3001);	/* A's return address, at its CFA - 8 */
	struct st_uwalk_in in = input(BASE + 0x4002, 0, sizeof(stack), false);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 3);
	assert_int_equal(out[1], BASE + 0x1000);	/* exact: not ip - 1 */
	assert_int_equal(out[2], BASE + 0x3001);
	assert_int_equal(stop, ST_UWALK_END);
}

/* A CFA that does not move up, and the depth limit. */
static void test_bad_frame_and_depth(void **state)
{
	__u64 out[ST_MAX_USER];
	enum st_uwalk_stop stop;
	size_t fp, n;

	(void)state;
	struct st_uwalk_in in = input(BASE + 0x5000, 0, sizeof(stack), false);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UWALK_BAD_FRAME);
	/* a function returning into itself, frame after frame */
	for (__u64 a = SP; a + 8 <= SP + sizeof(stack); a += 8)
		put(a, BASE + 0x6001);
	in = input(BASE + 0x6000, 0, sizeof(stack), false);
	n = st_uwalk(&in, out, 5, &stop, &fp);
	assert_int_equal(n, 5);
	assert_int_equal(stop, ST_UWALK_DEPTH);
	n = st_uwalk(&in, out, ST_MAX_USER, &stop, &fp);
	assert_int_equal(n, ST_MAX_USER);
	assert_int_equal(stop, ST_UWALK_DEPTH);
}

/* Rows a table points at but the shard does not have are "no CFI". */
static void test_rows_out_of_range(void **state)
{
	__u64 out[8];
	enum st_uwalk_stop stop;
	size_t fp, n;

	(void)state;
	proc.maps[0].first = 10;	/* 10 + 14 rows > the shard's 14 */
	struct st_uwalk_in in = input(BASE + 0x1002, 0, sizeof(stack), false);
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UWALK_NO_TABLE);
	proc.maps[0].first = 0;
	proc.maps[0].shard = 4;		/* no such shard */
	n = st_uwalk(&in, out, 8, &stop, &fp);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UWALK_NO_TABLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_complete, setup),
		cmocka_unit_test_setup(test_rbp_rule, setup),
		cmocka_unit_test_setup(test_return_address_minus_one, setup),
		cmocka_unit_test_setup(test_rbx_cfa_in_the_leaf_only, setup),
		cmocka_unit_test_setup(test_no_cfi_and_fallback, setup),
		cmocka_unit_test_setup(test_short_copy, setup),
		cmocka_unit_test_setup(test_signal_frame, setup),
		cmocka_unit_test_setup(test_bad_frame_and_depth, setup),
		cmocka_unit_test_setup(test_rows_out_of_range, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

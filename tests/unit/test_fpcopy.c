/* test_fpcopy.c - --unwind fp's walk of a deferred sample through its stack
 * copy (user/collect/unwind/fpcopy.h): the frames the fp program's walk
 * (bpf/walk.bpf.h) gives for the same stack (the ip, then each frame's return address
 * from its frame pointer on), where the chain ends (a zero or outside
 * pointer, a hole, a copy cut at its bound), the depth bound, and the cut
 * at an address outside user space. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "user/collect/unwind/fpcopy.h"
#include "user/collect/unwind/unwind_native.h"

#define SP 0x7ffc00001000ull	/* page-aligned: page 0 of the copy is a whole page */

static struct st_deferred *sample(__u32 len)
{
	struct st_deferred *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	d->ip = 0x401000;
	d->sp = SP;
	d->stack_len = len;
	return d;
}

/* the pair (saved frame pointer, return address) at offset off of the copy */
static void frame(struct st_deferred *d, __u64 off, __u64 next_fp, __u64 ret)
{
	memcpy(d->stack + off, &next_fp, 8);
	memcpy(d->stack + off + 8, &ret, 8);
}

/* main's frame at offset 0x40, its caller's frame pointer next_fp */
static void first_frame(struct st_deferred *d, __u64 next_fp)
{
	d->bp = SP + 0x40;
	frame(d, 0x40, next_fp, 0x401100);
}

/* walk d (at most max addresses) into out: n addresses, ending with stop */
static void walks(struct st_deferred *d, __u64 *out, size_t max, size_t n, unsigned stop)
{
	unsigned got = 99;

	assert_int_equal(st_fpcopy_walk(d, NULL, out, max, &got), n);
	assert_int_equal(got, stop);
}

static int setup(void **state)
{
	*state = sample(8192);
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* main <- __libc_start_call_main <- _start: the chain ends at a zero
 * frame pointer (the kernel's read at 0 fails): complete */
static void test_chain_to_zero_is_complete(void **state)
{
	struct st_deferred *d = *state;
	__u64 out[16];

	first_frame(d, SP + 0x100);
	frame(d, 0x100, SP + 0x200, 0x401200);
	frame(d, 0x200, 0, 0x401300);
	walks(d, out, 16, 4, ST_UNW_STOP_END);
	assert_true(out[0] == 0x401000 && out[1] == 0x401100 && out[2] == 0x401200 &&
		    out[3] == 0x401300);
}

/* a frame pointer below sp or past the copy (a register used for data by
 * code without frame pointers) ends the walk where the copy cannot follow:
 * complete, as the kernel's walk ends where its read fails */
static void test_pointer_outside_the_copy_ends_it(void **state)
{
	struct st_deferred *d = *state;
	__u64 out[16];

	d->bp = SP - 0x10;
	walks(d, out, 16, 1, ST_UNW_STOP_END);
	first_frame(d, SP + 8192 - 8);	/* the pair would straddle the end */
	walks(d, out, 16, 2, ST_UNW_STOP_END);
}

/* a copy cut at ST_DEFER_STACK, the chain going on past it: cut short */
static void test_chain_past_a_full_copy_is_cut(void **state)
{
	struct st_deferred *d = *state;
	__u64 out[16];

	d->stack_len = ST_DEFER_STACK;
	first_frame(d, SP + ST_DEFER_STACK + 0x40);
	walks(d, out, 16, 2, ST_UNW_STOP_READ_FAULT);
}

/* a pair in a page the copy could not read (a hole: zeros) ends the walk
 * there rather than reading the zeros as a frame */
static void test_hole_ends_the_walk(void **state)
{
	struct st_deferred *d = *state;
	__u64 out[16];

	first_frame(d, SP + 4096 + 0x10);
	d->holes = 1ull << 1;	/* page 1: [SP + 4096, SP + 8192) */
	walks(d, out, 16, 2, ST_UNW_STOP_END);
}

/* the depth bound: max addresses, cut short; a return address outside
 * user space cuts the stack before it (bad frame) as the fp program does */
static void test_depth_and_bad_frame(void **state)
{
	struct st_deferred *d = *state;
	__u64 out[16];

	d->bp = SP;
	for (__u64 i = 0; i < 10; i++)
		frame(d, i * 16, SP + (i + 1) * 16, 0x402000 + i);
	walks(d, out, 4, 4, ST_UNW_STOP_DEPTH);
	frame(d, 2 * 16, SP + 3 * 16, 0xebebebebebebebebull);
	walks(d, out, 16, 3, ST_UNW_STOP_BAD_FRAME);
	assert_true(out[2] == 0x402001);
}

/* A 32-bit (ia32) process's sample: 4-byte words from ebp (saved ebp,
 * return address), as the kernel's perf_callchain_user32() reads them,
 * until a pair lies outside the copy. */
static void test_ia32_frames_are_4_byte_words(void **state)
{
	struct st_deferred *d = *state;
	__u32 sp32 = 0xffd01000u;
	__u64 out[16];

	d->sp = sp32;
	d->ip = 0x8049010;
	d->bp = sp32 + 0x20;
	d->compat = 1;
	memcpy(d->stack + 0x20, (__u32[]){ sp32 + 0x40, 0x8049100 }, 8);
	memcpy(d->stack + 0x40, (__u32[]){ sp32 + 0x80, 0x8049200 }, 8);
	memcpy(d->stack + 0x80, (__u32[]){ 0, 0x8049300 }, 8);
	/* the chain's end: ebp 0, below the copy */
	walks(d, out, 16, 4, ST_UNW_STOP_END);
	assert_true(out[0] == 0x8049010 && out[1] == 0x8049100 && out[2] == 0x8049200 &&
		    out[3] == 0x8049300);
	/* the same words read as 8-byte frames would have been garbage */
	d->compat = 0;
	assert_int_not_equal(st_fpcopy_walk(d, NULL, out, 16, &(unsigned){ 0 }), 4);
	/* the depth bound */
	d->compat = 1;
	walks(d, out, 3, 3, ST_UNW_STOP_DEPTH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_chain_to_zero_is_complete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ia32_frames_are_4_byte_words, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pointer_outside_the_copy_ends_it, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_chain_past_a_full_copy_is_cut, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hole_ends_the_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_depth_and_bad_frame, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_callcheck.c - st_call_before() (user/collect/unwind/callcheck.h) on
 * hand-made byte sequences: direct calls and their targets, each length of
 * an indirect call (register, memory, SIB, disp8/32, rip-relative, REX
 * and notrack prefixes), and what is no call (a jmp, FF /4, a call that
 * ends before or after the address, too few bytes). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "user/collect/unwind/callcheck.h"

#define RET 0x401000ull

/* The kind of the call ending at RET whose last bytes are b (n of them,
 * padded in front with nops). */
static enum st_call_kind kind_of(const __u8 *b, size_t n, __u64 *target)
{
	__u8 code[ST_CALL_MAX_LEN];

	memset(code, 0x90, sizeof(code));
	memcpy(code + sizeof(code) - n, b, n);
	*target = 0;
	return st_call_before(code, sizeof(code), RET, target);
}

static void test_direct(void **state)
{
	static const __u8 back[] = { 0xe8, 0x00, 0xf0, 0xff, 0xff };	/* call RET - 0x1000 */
	static const __u8 fwd[] = { 0xe8, 0x10, 0x00, 0x00, 0x00 };	/* call RET + 0x10 */
	__u64 t;

	(void)state;
	assert_int_equal(kind_of(back, sizeof(back), &t), ST_CALL_DIRECT);
	assert_true(t == RET - 0x1000);
	assert_int_equal(kind_of(fwd, sizeof(fwd), &t), ST_CALL_DIRECT);
	assert_true(t == RET + 0x10);
	/* only 5 bytes given: still read; 4: no room for a direct call */
	assert_int_equal(st_call_before(back, 5, RET, &t), ST_CALL_DIRECT);
	assert_int_equal(st_call_before(back + 1, 4, RET, &t), ST_CALL_NONE);
	/* more than ST_CALL_MAX_LEN bytes: the last ones count */
	{
		__u8 big[32];

		memset(big, 0xcc, sizeof(big));
		memcpy(big + sizeof(big) - 5, fwd, 5);
		assert_int_equal(st_call_before(big, sizeof(big), RET, &t), ST_CALL_DIRECT);
		assert_true(t == RET + 0x10);
	}
}

static void test_indirect_forms(void **state)
{
	static const struct {
		__u8 b[8];
		size_t n;
	} calls[] = {
		{ { 0xff, 0xd0 }, 2 },				/* call *%rax */
		{ { 0x41, 0xff, 0xd3 }, 3 },			/* call *%r11 */
		{ { 0x3e, 0xff, 0xd0 }, 3 },			/* notrack call *%rax */
		{ { 0xff, 0x10 }, 2 },				/* call *(%rax) */
		{ { 0xff, 0x50, 0x38 }, 3 },			/* call *0x38(%rax) */
		{ { 0xff, 0x90, 0x00, 0x01, 0x00, 0x00 }, 6 },	/* call *0x100(%rax) */
		{ { 0xff, 0x14, 0xc5, 0x00, 0x10, 0x00, 0x00 }, 7 },	/* *0x1000(,%rax,8) */
		{ { 0xff, 0x54, 0x24, 0x08 }, 4 },		/* call *0x8(%rsp) */
		{ { 0xff, 0x14, 0x24 }, 3 },			/* call *(%rsp) */
		{ { 0xff, 0x15, 0x10, 0x20, 0x00, 0x00 }, 6 },	/* call *0x2010(%rip) */
		{ { 0x41, 0xff, 0x94, 0x24, 0x80, 0, 0, 0 }, 8 },	/* *0x80(%r12) */
	};
	__u64 t;

	(void)state;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		assert_int_equal(kind_of(calls[i].b, calls[i].n, &t), ST_CALL_INDIRECT);
}

static void test_not_calls(void **state)
{
	static const struct {
		__u8 b[8];
		size_t n;
	} none[] = {
		{ { 0xe9, 0x00, 0xf0, 0xff, 0xff }, 5 },	/* jmp rel32 */
		{ { 0xff, 0xe0 }, 2 },				/* jmp *%rax (FF /4) */
		{ { 0xff, 0x30 }, 2 },				/* push (%rax) (FF /6) */
		{ { 0xff, 0x50 }, 2 },				/* FF /2 whose disp8 is missing */
		{ { 0xff, 0xd0, 0x90 }, 3 },			/* a call, then a nop: ends before */
		{ { 0xff, 0x15, 0x10, 0x20 }, 4 },		/* rip-relative cut short */
		{ { 0x90, 0x90 }, 2 },
	};
	__u64 t;

	(void)state;
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		assert_int_equal(kind_of(none[i].b, none[i].n, &t), ST_CALL_NONE);
	/* nothing given */
	assert_int_equal(st_call_before(NULL, 0, RET, &t), ST_CALL_NONE);
	/* one byte: too short for either */
	assert_int_equal(st_call_before((const __u8 *)"\xd0", 1, RET, &t), ST_CALL_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_direct),
		cmocka_unit_test(test_indirect_forms),
		cmocka_unit_test(test_not_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

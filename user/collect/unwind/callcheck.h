/* callcheck.h - whether the bytes before an address end in a call
 * instruction (x86-64): the check that makes a word found on the stack a
 * return address, for the scan through code without CFI
 * (user/collect/unwind/unwind_native.h, st_unw_scan()). Pure: decodes the
 * bytes it is given, nothing else. Owner: user/collect/unwind/callcheck.c. */
#ifndef STACKTREE_CALLCHECK_H
#define STACKTREE_CALLCHECK_H

#include <stddef.h>
#include <linux/types.h>

/* Bytes before a return address that st_call_before() looks at: a call
 * is at most 8 (a REX prefix, FF, ModRM, SIB, disp32), a direct one 5. */
#define ST_CALL_MAX_LEN 8

enum st_call_kind {
	ST_CALL_NONE,		/* no call instruction ends there */
	ST_CALL_DIRECT,		/* E8 rel32: its target known */
	ST_CALL_INDIRECT,	/* FF /2 (call through a register or memory): target not known */
};

/* code: the n bytes just before ret (code[n - 1] is the byte at ret - 1;
 * n <= ST_CALL_MAX_LEN is read, fewer when the code starts later). A
 * direct call ending at ret: ST_CALL_DIRECT and its target in *target;
 * else an indirect one (FF with ModRM reg 2, its length from ModRM, SIB
 * and displacement exactly reaching ret): ST_CALL_INDIRECT; else
 * ST_CALL_NONE. The direct form is tried first. */
enum st_call_kind st_call_before(const __u8 *code, size_t n, __u64 ret, __u64 *target);

#endif

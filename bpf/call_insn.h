/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * call_insn.h - whether the bytes before an address end in a call
 * instruction (x86-64): the check that makes a word a return address. One
 * rule, compiled into the BPF object (bpf/hotspot_blob.h: the return
 * address of a frameless HotSpot stub at the leaf, at its sp) and natively
 * (user/collect/unwind/callcheck.c: the scan through code without CFI;
 * the daemon's HotSpot rule, the same header as BPF's). Pure: decodes the
 * bytes it is given, nothing else; unit test tests/unit/test_callcheck.c.
 */
#ifndef STACKTREE_CALL_INSN_H
#define STACKTREE_CALL_INSN_H

#include "dual.h"

/* Bytes before a return address that st_call_insn_before() looks at: a
 * call is at most 8 (a REX prefix, FF, ModRM, SIB, disp32), a direct one 5. */
#define ST_CALL_MAX_LEN 8

enum st_call_kind {
	ST_CALL_NONE,		/* no call instruction ends there */
	ST_CALL_DIRECT,		/* E8 rel32: its target known */
	ST_CALL_INDIRECT,	/* FF /2 (call through a register or memory): target not known */
};

/* The length of FF /r from its ModRM byte on (ModRM, SIB, displacement),
 * given the bytes after the opcode (avail of them): 0 when they are not
 * there. */
static __always_inline __u32 st_call_modrm_len(const __u8 *p, __u32 avail)
{
	__u8 modrm, mod, rm;
	__u32 len = 1;

	if (!avail)
		return 0;
	modrm = p[0];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {		/* a SIB byte */
		if (avail < 2)
			return 0;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			return len + 4;	/* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		return len + 4;		/* rip + disp32 */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

/* code: the ST_CALL_MAX_LEN bytes just before ret (code[7] is the byte at
 * ret - 1), of which the last n are there (n < 8: the code starts later).
 * A direct call ending at ret: ST_CALL_DIRECT and its target in *target;
 * else an indirect one (FF with ModRM reg 2, its length from ModRM, SIB
 * and displacement exactly reaching ret): ST_CALL_INDIRECT; else
 * ST_CALL_NONE. The direct form is tried first. */
static __always_inline enum st_call_kind st_call_insn_before(const __u8 code[ST_CALL_MAX_LEN],
							     __u32 n, __u64 ret, __u64 *target)
{
	const __u32 m = ST_CALL_MAX_LEN;

	if (n >= 5 && code[m - 5] == 0xe8) {
		__s32 rel = (__s32)((__u32)code[m - 4] | (__u32)code[m - 3] << 8 |
				    (__u32)code[m - 2] << 16 | (__u32)code[m - 1] << 24);

		*target = ret + (__u64)(__s64)rel;
		return ST_CALL_DIRECT;
	}
	/* FF /2: opcode at ret - len, len 2 (ModRM only) to 7 (ModRM, SIB,
	 * disp32); a REX or other prefix before it changes nothing here */
#if ST_BPF
#pragma unroll
#endif
	for (__u32 len = 2; len <= 7; len++) {
		const __u8 *op = code + m - len;

		if (len > n)
			break;
		if (op[0] != 0xff || ((op[1] >> 3) & 7) != 2)
			continue;
		if (st_call_modrm_len(op + 1, len - 1) == len - 1)
			return ST_CALL_INDIRECT;
	}
	return ST_CALL_NONE;
}

#endif

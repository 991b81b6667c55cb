/* callcheck.c - call instructions ending at an address (see callcheck.h). */
#include "user/collect/unwind/callcheck.h"

#include <stdint.h>

/* The length of FF /r from its ModRM byte on (ModRM, SIB, displacement),
 * given the bytes after the opcode (avail of them): 0 when they are not
 * there. */
static size_t modrm_len(const __u8 *p, size_t avail)
{
	__u8 modrm, mod, rm;
	size_t len = 1;

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

enum st_call_kind st_call_before(const __u8 *code, size_t n, __u64 ret, __u64 *target)
{
	if (n > ST_CALL_MAX_LEN) {
		code += n - ST_CALL_MAX_LEN;
		n = ST_CALL_MAX_LEN;
	}
	if (n >= 5 && code[n - 5] == 0xe8) {
		__s32 rel = (__s32)((__u32)code[n - 4] | (__u32)code[n - 3] << 8 |
				    (__u32)code[n - 2] << 16 | (__u32)code[n - 1] << 24);

		*target = ret + (__u64)(__s64)rel;
		return ST_CALL_DIRECT;
	}
	/* FF /2: opcode at ret - len, len 2 (ModRM only) to 7 (ModRM, SIB,
	 * disp32); a REX or other prefix before it changes nothing here */
	for (size_t len = 2; len <= 7 && len <= n; len++) {
		const __u8 *op = code + n - len;

		if (op[0] != 0xff || ((op[1] >> 3) & 7) != 2)
			continue;
		if (modrm_len(op + 1, len - 1) == len - 1)
			return ST_CALL_INDIRECT;
	}
	return ST_CALL_NONE;
}

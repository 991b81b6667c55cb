/* callcheck.c - call instructions ending at an address (see callcheck.h;
 * the rule: bpf/call_insn.h). */
#include "user/collect/unwind/callcheck.h"

#include <string.h>

enum st_call_kind st_call_before(const __u8 *code, size_t n, __u64 ret, __u64 *target)
{
	__u8 last[ST_CALL_MAX_LEN] = { 0 };

	if (n > ST_CALL_MAX_LEN) {
		code += n - ST_CALL_MAX_LEN;
		n = ST_CALL_MAX_LEN;
	}
	if (n)
		memcpy(last + ST_CALL_MAX_LEN - n, code, n);
	return st_call_insn_before(last, (__u32)n, ret, target);
}

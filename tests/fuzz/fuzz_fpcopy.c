/* fuzz_fpcopy.c - --unwind fp's walk of a deferred sample through its stack
 * copy (user/collect/unwind/fpcopy.h), 64-bit and 32-bit (ia32), on
 * registers, holes and a stack copy that a profiled process controls. It
 * may stop anywhere, never read outside the copy, never loop past its
 * bound; it returns at most max frames, the first of them the ip.
 * Input: a flags byte (bit 0: compat), max (2 bytes), ip, sp, bp, holes
 * (8 bytes each), then the stack (at most ST_DEFER_STACK bytes). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/collect/unwind/fpcopy.h"

static struct st_deferred d;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u64 out[ST_MAX_USER], regs[4];
	unsigned stop = 0;
	__u16 max;
	size_t n;

	if (size < 3 + sizeof(regs))
		return 0;
	memset(&d, 0, offsetof(struct st_deferred, stack));
	d.compat = data[0] & 1;
	memcpy(&max, data + 1, 2);
	max %= ST_MAX_USER + 1;
	memcpy(regs, data + 3, sizeof(regs));
	data += 3 + sizeof(regs);
	size -= 3 + sizeof(regs);
	d.ip = regs[0];
	d.sp = regs[1];
	d.bp = regs[2];
	d.holes = regs[3];
	if (size > ST_DEFER_STACK)
		size = ST_DEFER_STACK;
	memcpy(d.stack, data, size);
	d.stack_len = (__u32)size;
	n = st_fpcopy_walk(&d, NULL, out, max, &stop);
	if (n > max || (n && out[0] != (d.compat ? (__u32)d.ip : d.ip)))
		abort();
	return 0;
}

/* fuzz_callcheck.c - the checked scan through code without CFI
 * (user/collect/unwind/unwind_native.h, st_unw_scan(); the frame-pointer
 * check before it, st_unw_fp_checked(), whose code reads for addresses no
 * mapping covers get a mapping of just the bytes read) and its decoder of
 * call instructions (user/collect/unwind/callcheck.h), on code bytes, rows
 * and a stack that a profiled process controls. The decoder reads only
 * the bytes it is given; a walk never reads outside the copy (holes
 * included), the rows, or the code, and returns at most max frames, the
 * first of them the ip. Input: 3 registers (ip, sp, bp; 8 bytes each), the
 * holes mask (8 bytes), a flags byte (bit 0 fallback), a row count byte,
 * 2 bytes unused, that many rows (8 bytes each), 256 bytes of code (the
 * module's first bytes, nops after them), then the stack. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/collect/unwind/callcheck.h"
#include "user/collect/unwind/unwind_native.h"

#define MOD_LEN 0x10000ull
#define CODE 256

static struct st_unwind_row shard[256];
static size_t nshard;
static struct st_unwind_proc proc;
static __u8 code[CODE];

static const struct st_unwind_row *rows(void *ctx, __u32 slot, size_t *n)
{
	(void)ctx;
	if (slot != 1)
		return NULL;
	*n = nshard;
	return shard;
}

static long code_at(void *ctx, const struct st_unwind_map *m, __u64 addr, void *dst, __u32 n)
{
	__u64 off = addr - m->start;

	(void)ctx;
	if (addr < m->start || off > m->len || n > m->len - off)
		abort();	/* the scan asked outside its mapping */
	for (__u32 i = 0; i < n; i++)
		((__u8 *)dst)[i] = off + i < CODE ? code[off + i] : 0x90;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_unw_native_in in = { .rows = rows, .code = code_at };
	struct st_unw_native_out res;
	__u64 regs[4], out[ST_MAX_USER], target, ret = 0;
	size_t n;
	__u8 flags, nrows;

	/* the decoder alone, on the whole input */
	if (size >= 8)
		memcpy(&ret, data, 8);
	st_call_before(data, size, ret, &target);
	if (size < sizeof(regs) + 4 + CODE)
		return 0;
	memcpy(regs, data, sizeof(regs));
	data += sizeof(regs);
	size -= sizeof(regs);
	flags = data[0];
	nrows = data[1];
	data += 4;
	size -= 4;
	nshard = nrows;
	if (nshard * sizeof(shard[0]) > size - CODE)
		nshard = (size - CODE) / sizeof(shard[0]);
	memcpy(shard, data, nshard * sizeof(shard[0]));
	data += nshard * sizeof(shard[0]);
	size -= nshard * sizeof(shard[0]);
	memcpy(code, data, CODE);
	data += CODE;
	size -= CODE;

	memset(&proc, 0, sizeof(proc));
	proc.nmaps = 1;
	proc.maps[0] = (struct st_unwind_map){ .start = regs[0] & ~0xfffull, .len = MOD_LEN,
					       .shard = 1, .nrows = (__u32)nshard };
	in.ip = regs[0];
	in.sp = regs[1];
	in.bp = regs[2];
	in.holes = regs[3];
	in.fallback = flags & 1;
	in.proc = &proc;
	in.stack = data;	/* exactly the input's bytes: ASan sees a read past them */
	in.stack_len = size;
	n = st_unw_walk_native(&in, out, ST_MAX_USER, &res);
	if (n > ST_MAX_USER || (n && out[0] != regs[0]) ||
	    res.scanned + res.scan_failed > ST_UNW_SCAN_MAX)
		abort();
	return 0;
}

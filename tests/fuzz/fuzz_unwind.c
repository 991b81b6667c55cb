/* fuzz_unwind.c - the stack walk of bpf/unwind_step.h as the daemon runs it
 * (user/collect/unwind/unwind_native.h) on a deferred sample: registers and a stack
 * copy that a profiled process controls, and rows, pc index and table
 * shapes from the input too. It may stop anywhere, never read outside the
 * copy, the rows or the table, never loop past its bound; it returns at
 * most max frames, the first of them the ip. Input: 5 registers (8 bytes
 * each), a flags byte (bit 0 fallback, bit 1 chunked table, bit 2
 * truncated), a row count byte, the index's shape (nbuckets byte, ishift
 * byte, ibase 4 bytes), that many rows and buckets (8 bytes each), then the
 * stack. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/collect/unwind/unwind_native.h"

static struct st_unwind_row shard[512];
static size_t nshard;
static struct st_unwind_proc proc, chunk;

static const struct st_unwind_row *rows(void *ctx, __u32 slot, size_t *n)
{
	(void)ctx;
	if (slot != 1)
		return NULL;
	*n = nshard;
	return shard;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_unw_native_in in = { .rows = rows };
	struct st_unw_native_out res;
	__u64 regs[5], out[ST_MAX_USER];
	__u32 nrows, nb, ishift, ibase, max;
	size_t n;
	__u8 flags;

	if (size < sizeof(regs) + 8)
		return 0;
	memcpy(regs, data, sizeof(regs));
	data += sizeof(regs);
	size -= sizeof(regs);
	flags = data[0];
	nrows = data[1];
	nb = data[2];
	ishift = data[3];
	memcpy(&ibase, data + 4, 4);
	data += 8;
	size -= 8;
	nshard = nrows + nb;
	if (nshard * sizeof(shard[0]) > size)
		nshard = size / sizeof(shard[0]);
	memcpy(shard, data, nshard * sizeof(shard[0]));
	data += nshard * sizeof(shard[0]);
	size -= nshard * sizeof(shard[0]);

	memset(&proc, 0, sizeof(proc));
	memset(&chunk, 0, sizeof(chunk));
	/* the module with the rows where the ip is, a module without rows
	 * above it, and (chunked) the table an index of one chunk */
	struct st_unwind_map maps[2] = {
		{ .start = regs[0] & ~0xfffull, .len = 0x100000, .vaddr = (__u32)(regs[1] >> 40),
		  .shard = 1, .first = 0, .nrows = nrows, .nbuckets = nb, .ishift = ishift,
		  .ibase = ibase },
		{ .start = (regs[0] & ~0xfffull) + 0x100000, .len = 0x1000 },
	};
	if (flags & 2) {
		chunk.nmaps = 2;
		memcpy(chunk.maps, maps, sizeof(maps));
		proc.nmaps = 1;
		proc.maps[0] = (struct st_unwind_map){ .start = maps[0].start,
						       .flags = ST_UNWIND_MAP_CHUNK };
		in.chunks = &chunk;
		in.nchunks = 1;
	} else {
		proc.nmaps = 2;
		memcpy(proc.maps, maps, sizeof(maps));
	}
	if (flags & 4)
		proc.flags = ST_UNWIND_PROC_TRUNCATED;
	in.ip = regs[0];
	in.sp = regs[1];
	in.bp = regs[2];
	in.r10 = regs[3];
	in.rbx = regs[4];
	in.fallback = flags & 1;
	in.proc = &proc;
	in.stack = data;	/* exactly the input's bytes: ASan sees a read past them */
	in.stack_len = size;
	max = (flags >> 3) % (ST_MAX_USER + 1);
	n = st_unw_walk_native(&in, out, max, &res);
	if (n > max || (n && out[0] != regs[0]) || res.stop > ST_UNW_STOP_TOO_MANY_MAPS)
		abort();
	return 0;
}

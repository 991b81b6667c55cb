/* fuzz_jvm.c - libFuzzer target: the daemon's readers of a JVM's memory
 * that the other Java targets do not drive, chosen by the input's first
 * byte (tests/fuzz/jvm_image.h: the memory as records of reads):
 *   JVM_BLOB    a code cache pc's name (user/collect/runtimes/java/jcode.c:
 *               the blob found through the heaps' segment maps, its name
 *               and Method* read): a name read is printable, within its
 *               bound, its blob's size positive;
 *   JVM_WALK    a deferred sample's Java walk (java.c st_java__deferred():
 *               bpf/hotspot_step.h natively) through the kept memory of
 *               user/collect/runtimes/java/jkeep.c, then the same walk with
 *               the process gone (every read failing): the same frames,
 *               from what was kept, when every read was keepable;
 *   JVM_LAYOUT  the walker's JVM read through a layout
 *               (jvmlayout.c st_jvm_layout__java_proc, __java_blobs, the
 *               version), then JVM_BLOB on what it read: heaps inside the
 *               code cache's bounds, at most ST_JAVA_MAX_HEAPS.
 * Seeds: tests/fuzz/corpus/jvm/, dumped from running JDK 17 and Temurin 25
 * JVMs by tests/fuzz/jvm_seed.c. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/jvm_image.h"
#include "user/collect/runtimes/java/jcode.h"
#include "user/collect/runtimes/java/jkeep.h"
#include "user/collect/runtimes/java/jvmlayout.h"
#include "user/collect/unwind/unwind_native.h"

static void blob(const struct st_java_proc *p, struct jvm_image *im, __u64 pc)
{
	struct st_jcode c;
	__u64 b = 0;
	size_t n;

	(void)st_jcode__fixed(p, pc);
	if (st_jcode__find(p, jvm_image__read, im, pc, &b) != 1)
		b = pc;	/* (the read on any address too) */
	if (st_jcode__read(&p->blobs, jvm_image__read, im, b, &c))
		return;
	n = strlen(c.name);
	if (n > ST_JCODE_NAME_MAX || c.start != b || c.end <= c.start || (!n && !c.method) ||
	    (c.method & 7))
		__builtin_trap();
	for (size_t i = 0; i < n; i++)
		if (c.name[i] < 0x20 || c.name[i] > 0x7e)
			__builtin_trap();
}

/* The walk's reader: through the kept memory, counting the reads that
 * could not be kept. */
struct keep_arg {
	struct st_jkeep *k;
	st_vm_read_fn rd;
	void *arg;
	unsigned unkept;
};

static long keep_rd(void *arg, void *dst, __u32 n, __u64 addr)
{
	struct keep_arg *a = arg;
	enum st_jkeep_how how;
	long r = st_jkeep__read(a->k, true, a->rd, a->arg, dst, n, addr, &how);

	if (how == ST_JKEEP_LIVE)
		a->unkept++;
	return r;
}

static long gone_rd(void *arg, void *dst, __u32 n, __u64 addr)
{
	(void)arg;
	(void)dst;
	(void)n;
	(void)addr;
	return -3;	/* ESRCH */
}

static const struct st_unwind_row *no_rows(void *ctx, __u32 shard, size_t *n)
{
	(void)ctx;
	(void)shard;
	*n = 0;
	return NULL;
}

static __u64 f1[ST_MAX_USER], f2[ST_MAX_USER];

static void walk(struct jvm_image *im)
{
	struct keep_arg a = { .k = st_jkeep__new(), .rd = jvm_image__read, .arg = im };
	struct st_java_counts c = {};
	struct st_unw_native_in in = {
		.ip = im->regs[0], .sp = im->regs[1], .bp = im->regs[2], .r10 = im->regs[3],
		.rbx = im->regs[4], .r13 = im->regs[5], .rows = no_rows, .java = &im->p, .jc = &c,
		.mem = keep_rd, .mem_arg = &a,
	};
	struct st_unw_native_out r1, r2;
	const __u8 *stack;
	size_t n1, n2, pos = 0;
	__u64 at;
	__u16 len;

	if (!a.k)
		__builtin_trap();
	if (!jvm_image__next(im, &pos, &at, &stack, &len) && at == in.sp) {
		in.stack = stack;
		in.stack_len = len;
	}
	n1 = st_unw_walk_native(&in, f1, ST_MAX_USER, &r1);
	/* (interpreted frames are counted FRAMES, compiled ones HS_FRAMES) */
	if (n1 > ST_MAX_USER || r1.jframes > n1 || c.n[ST_JAVA_STAT_FRAMES] > r1.jframes ||
	    st_jkeep__count(a.k) > ST_JKEEP_MAX)
		__builtin_trap();
	/* the process gone: the same walk from what was kept */
	a.rd = gone_rd;
	if (!a.unkept) {
		memset(&c, 0, sizeof(c));
		n2 = st_unw_walk_native(&in, f2, ST_MAX_USER, &r2);
		if (n2 != n1 || memcmp(f1, f2, n1 * sizeof(f1[0])) || r2.jframes != r1.jframes)
			__builtin_trap();
	}
	st_jkeep__free(a.k);
}

static void layout(struct jvm_image *im)
{
	struct st_java_proc p = {};
	struct st_jvm_version v;
	const struct st_java_blobs *b = &p.blobs;

	if (!st_jvm_version__read(&im->l, jvm_image__read, im, &v) &&
	    strnlen(v.release, sizeof(v.release)) >= sizeof(v.release))
		__builtin_trap();
	if (!st_jvm_layout__java_proc(&im->l, jvm_image__read, im, &p) &&
	    p.interp_start >= p.interp_end)
		__builtin_trap();
	if (st_jvm_layout__java_blobs(&im->l, jvm_image__read, im, &p.blobs))
		return;
	if (!b->nheaps || b->nheaps > ST_JAVA_MAX_HEAPS || b->cc_lo >= b->cc_hi)
		__builtin_trap();
	for (int i = 0; i < b->nheaps; i++)
		if (b->heaps[i].lo >= b->heaps[i].hi || b->heaps[i].lo < b->cc_lo ||
		    b->heaps[i].hi > b->cc_hi)
			__builtin_trap();
	blob(&p, im, im->regs[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct jvm_image im;	/* (its layout: 1 KiB) */

	if (jvm_image__parse(data, size, &im))
		return 0;
	switch (im.mode) {
	case JVM_BLOB:
		blob(&im.p, &im, im.regs[0]);
		break;
	case JVM_WALK:
		walk(&im);
		break;
	default:
		layout(&im);
		break;
	}
	return 0;
}

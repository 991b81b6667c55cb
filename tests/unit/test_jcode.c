/* test_jcode.c - the daemon's readers of a JVM's code cache names and of
 * its walks' kept memory: user/collect/runtimes/java/jcode.c on the seeds
 * of fuzz_jvm dumped from running JDK 17 and Temurin 25 JVMs (each pc
 * found in its blob and named as the JVM names it; the layout's reads
 * give the same code cache), and on hostile blobs (a name unreadable, cut
 * by an unmapped page, not printable; a size not positive; a Method*
 * unaligned); user/collect/runtimes/java/jkeep.c: a read kept and given
 * back when the process is gone, only for the same address and size,
 * never what is not keepable, at most ST_JKEEP_MAX reads; and a walk of
 * each walk seed replayed from what it kept gives the same frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/fuzz/jvm_image.h"
#include "user/collect/runtimes/java/jcode.h"
#include "user/collect/runtimes/java/jkeep.h"
#include "user/collect/unwind/unwind_native.h"

static __u8 seed[1 << 17];

/* Seed name of tests/fuzz/corpus/jvm/ into *im (its bytes in seed[]). */
static void load(const char *name, struct jvm_image *im)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	ssize_t k = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	size_t n;
	FILE *f;

	dir[k > 0 ? k : 0] = '\0';
	dirname(dir);
	snprintf(path, sizeof(path), "%s/../../tests/fuzz/corpus/jvm/%s", dir, name);
	if (!(f = fopen(path, "rb")))
		fail_msg("seed absent: %s", path);
	n = fread(seed, 1, sizeof(seed), f);
	fclose(f);
	assert_int_equal(jvm_image__parse(seed, n, im), 0);
}

static void test_seed_names(void **state)
{
	static const struct {
		const char *seed, *name;
		bool method;
	} s[] = {
		{ "jdk17-blob-0", "native nmethod", true },
		{ "jdk17-blob-1", "nmethod", true },
		{ "jdk17-blob-4", "StubRoutines (1)", false },
		{ "jdk17-blob-6", "Interpreter", false },
		{ "jdk17-blob-7", "I2C/C2I adapters", false },
		{ "jdk17-blob-11", "NullPointerException at call throw_exception", false },
		{ "jdk25-blob-0", "native nmethod", true },
		{ "jdk25-blob-1", "nmethod", true },
		{ "jdk25-blob-4", "StubRoutines (initialstubs)", false },
		{ "jdk25-blob-10", "I2C/C2I adapters", false },
	};
	static struct jvm_image im;

	(void)state;
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		struct st_jcode c;
		__u64 b = 0;

		load(s[i].seed, &im);
		assert_int_equal(im.mode, JVM_BLOB);
		assert_int_equal(st_jcode__find(&im.p, jvm_image__read, &im, im.regs[0], &b), 1);
		/* (the seeds' pcs are spread over the heaps: one may be in its
		 * block's header before the blob, or its padding past _size) */
		assert_true(b <= im.regs[0] + im.p.blobs.heapblock);
		assert_int_equal(st_jcode__read(&im.p.blobs, jvm_image__read, &im, b, &c), 0);
		assert_string_equal(c.name, s[i].name);
		assert_true(c.start == b && c.end > b);
		assert_true(s[i].method ? c.method && !(c.method & 7) : !c.method);
		/* the same pc with its JVM gone: nothing found, nothing read */
		im.nrec = 0;
		assert_int_equal(st_jcode__find(&im.p, jvm_image__read, &im, im.regs[0], &b), -1);
	}
}

/* The layout's reads give the code cache the blob seeds were taken with. */
static void test_seed_layout(void **state)
{
	static struct jvm_image lay, blob;
	static const char *const jdk[] = { "jdk17", "jdk25" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct st_java_proc p = {};
		struct st_jvm_version v;
		char name[64];

		snprintf(name, sizeof(name), "%s-layout", jdk[i]);
		load(name, &lay);
		assert_int_equal(st_jvm_layout__java_proc(&lay.l, jvm_image__read, &lay, &p), 0);
		assert_int_equal(st_jvm_layout__java_blobs(&lay.l, jvm_image__read, &lay, &p.blobs), 0);
		assert_int_equal(st_jvm_version__read(&lay.l, jvm_image__read, &lay, &v), 0);
		assert_int_equal(v.major, i ? 25 : 17);
		snprintf(name, sizeof(name), "%s-blob-0", jdk[i]);
		load(name, &blob);
		assert_true(p.interp_start == blob.p.interp_start && p.interp_end == blob.p.interp_end);
		assert_memory_equal(&p.blobs, &blob.p.blobs, sizeof(p.blobs));
	}
}

/* ---- hostile blobs ------------------------------------------------------ */

#define MEM 0x10000000ULL
static __u8 mem[512];
static size_t mem_len = sizeof(mem);

static long mem_rd(void *arg, void *dst, __u32 n, __u64 a)
{
	(void)arg;
	if (a < MEM || a - MEM > mem_len || n > mem_len - (a - MEM))
		return -EFAULT;
	memcpy(dst, mem + (a - MEM), n);
	return 0;
}

static void test_hostile(void **state)
{
	const struct st_java_blobs b = { .name = 8, .size = 16, .method = 24 };
	const __u64 blob = MEM, name = MEM + 256, m = 0x20000008ULL;
	__s32 size = 100;
	struct st_jcode c;

	(void)state;
	memset(mem, 0, sizeof(mem));
	memcpy(mem + 8, &name, 8);
	memcpy(mem + 16, &size, 4);
	memcpy(mem + 24, &m, 8);
	strcpy((char *)mem + 256, "nmethod");
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, blob, &c), 0);
	assert_string_equal(c.name, "nmethod");
	assert_true(c.method == m && c.start == blob && c.end == blob + 100);
	/* an unaligned Method*: the blob's name only */
	mem[24] |= 1;
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, blob, &c), 0);
	assert_int_equal(c.method, 0);
	/* not printable; and cut by the end of what reads (12 bytes: 8 read) */
	strcpy((char *)mem + 256, "I2C\x01\x7f adapters");
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, blob, &c), 0);
	assert_string_equal(c.name, "I2C?? adapters");
	mem_len = 256 + 12;
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, blob, &c), 0);
	assert_string_equal(c.name, "I2C?? adapte");
	/* fewer than 8 bytes readable and no method: refused */
	mem_len = 256 + 7;
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, blob, &c), -EFAULT);
	mem_len = sizeof(mem);
	/* an empty name and no method: refused */
	mem[256] = '\0';
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, blob, &c), -EFAULT);
	strcpy((char *)mem + 256, "vtable chunks");
	/* a size not positive, a name pointer out of user space or absent */
	size = 0;
	memcpy(mem + 16, &size, 4);
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, blob, &c), -EFAULT);
	size = 64;
	memcpy(mem + 16, &size, 4);
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, blob, &c), 0);
	memset(mem + 8, 0xff, 8);
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, blob, &c), -EFAULT);
	memset(mem + 8, 0, 8);
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, blob, &c), -EFAULT);
	assert_int_equal(st_jcode__read(&b, mem_rd, NULL, ST_USER_END, &c), -EFAULT);
}

static void test_fixed(void **state)
{
	struct st_java_proc p = { .interp_start = 0x1000, .interp_end = 0x2000 };

	(void)state;
	p.blobs.call_stub_ret = 0x3000;
	assert_string_equal(st_jcode__fixed(&p, 0x3000), ST_JCODE_CALL_STUB);
	assert_string_equal(st_jcode__fixed(&p, 0x1fff), ST_JCODE_INTERPRETER);
	assert_null(st_jcode__fixed(&p, 0x2000));
	p.blobs.call_stub_ret = 0;
	assert_null(st_jcode__fixed(&p, 0));
}

/* ---- kept memory -------------------------------------------------------- */

static long gone_rd(void *arg, void *dst, __u32 n, __u64 a)
{
	(void)arg;
	(void)dst;
	(void)n;
	(void)a;
	return -ESRCH;
}

static long any_rd(void *arg, void *dst, __u32 n, __u64 a)
{
	(void)arg;
	memset(dst, (int)(a & 0xff), n);
	return 0;
}

static void test_keep(void **state)
{
	struct st_jkeep *k = st_jkeep__new();
	enum st_jkeep_how how;
	__u8 buf[300];

	(void)state;
	assert_non_null(k);
	for (size_t i = 0; i < sizeof(mem); i++)
		mem[i] = (__u8)i;
	mem_len = sizeof(mem);
	assert_int_equal(st_jkeep__read(k, true, mem_rd, NULL, buf, 16, MEM + 32, &how), 0);
	assert_int_equal(how, ST_JKEEP_KEPT);
	assert_int_equal(st_jkeep__read(k, true, mem_rd, NULL, buf, 16, MEM + 32, &how), 0);
	assert_int_equal(how, ST_JKEEP_LIVE);	/* kept once */
	assert_int_equal(st_jkeep__count(k), 1);
	/* not keepable: empty, larger than ST_JKEEP_READ_MAX, not asked to */
	assert_int_equal(st_jkeep__read(k, true, mem_rd, NULL, buf, 0, MEM, &how), 0);
	assert_int_equal(how, ST_JKEEP_LIVE);
	assert_int_equal(st_jkeep__read(k, true, mem_rd, NULL, buf, ST_JKEEP_READ_MAX + 1, MEM, &how), 0);
	assert_int_equal(how, ST_JKEEP_LIVE);
	assert_int_equal(st_jkeep__read(k, false, mem_rd, NULL, buf, 8, MEM, &how), 0);
	assert_int_equal(how, ST_JKEEP_LIVE);
	assert_int_equal(st_jkeep__count(k), 1);
	/* the process gone: the same read replayed, no other */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(st_jkeep__read(k, true, gone_rd, NULL, buf, 16, MEM + 32, &how), 0);
	assert_int_equal(how, ST_JKEEP_REPLAYED);
	assert_memory_equal(buf, mem + 32, 16);
	assert_int_equal(st_jkeep__read(k, true, gone_rd, NULL, buf, 8, MEM + 32, &how), -ESRCH);
	assert_int_equal(how, ST_JKEEP_FAILED);
	assert_int_equal(st_jkeep__read(k, true, gone_rd, NULL, buf, 16, MEM + 40, &how), -ESRCH);
	assert_int_equal(st_jkeep__read(k, true, gone_rd, NULL, buf, 8, MEM, &how), -ESRCH);
	assert_int_equal(st_jkeep__read(k, true, gone_rd, NULL, buf, 0, 0, &how), -ESRCH);
	/* bounded: ST_JKEEP_MAX reads kept, those after it read live */
	for (__u64 i = 0; i < ST_JKEEP_MAX + 10; i++)
		(void)st_jkeep__read(k, true, any_rd, NULL, buf, 1, 0x7000000000ULL + i, &how);
	assert_int_equal(how, ST_JKEEP_LIVE);
	assert_int_equal(st_jkeep__count(k), ST_JKEEP_MAX);
	st_jkeep__free(k);
	st_jkeep__free(NULL);
}

static const struct st_unwind_row *no_rows(void *ctx, __u32 shard, size_t *n)
{
	(void)ctx;
	(void)shard;
	*n = 0;
	return NULL;
}

struct keep_arg {
	struct st_jkeep *k;
	st_vm_read_fn rd;
	void *arg;
};

static long keep_rd(void *arg, void *dst, __u32 n, __u64 addr)
{
	struct keep_arg *a = arg;

	return st_jkeep__read(a->k, true, a->rd, a->arg, dst, n, addr, NULL);
}

/* Each walk seed: Java frames from the live memory, the same from what
 * was kept once the process is gone, none without it. */
static void test_seed_walks(void **state)
{
	static struct jvm_image im;
	static __u64 f1[ST_MAX_USER], f2[ST_MAX_USER];
	static const char *const seeds[] = { "jdk17-walk-2", "jdk25-walk-1", "jdk25-walk-5" };

	(void)state;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct keep_arg a = { .k = st_jkeep__new(), .rd = jvm_image__read, .arg = &im };
		struct st_unw_native_in in = { .rows = no_rows, .mem = keep_rd, .mem_arg = &a };
		struct st_unw_native_out r1, r2;
		const __u8 *stack = NULL;
		size_t n1, n2, pos = 0;
		__u64 at = 0;
		__u16 len = 0;

		load(seeds[i], &im);
		assert_non_null(a.k);
		assert_int_equal(jvm_image__next(&im, &pos, &at, &stack, &len), 0);
		in.ip = im.regs[0];
		in.sp = im.regs[1];
		in.bp = im.regs[2];
		in.r10 = im.regs[3];
		in.rbx = im.regs[4];
		in.r13 = im.regs[5];
		in.stack = stack;
		in.stack_len = len;
		in.java = &im.p;
		n1 = st_unw_walk_native(&in, f1, ST_MAX_USER, &r1);
		assert_true(r1.jframes >= 50);
		assert_true(st_jkeep__count(a.k) > 0);
		a.rd = gone_rd;
		n2 = st_unw_walk_native(&in, f2, ST_MAX_USER, &r2);
		assert_int_equal(n2, n1);
		assert_memory_equal(f1, f2, n1 * sizeof(f1[0]));
		st_jkeep__free(a.k);
		a.k = st_jkeep__new();	/* nothing kept: the walk stops early */
		n2 = st_unw_walk_native(&in, f2, ST_MAX_USER, &r2);
		assert_true(r2.jframes < r1.jframes);
		st_jkeep__free(a.k);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_names),  cmocka_unit_test(test_seed_layout),
		cmocka_unit_test(test_hostile),	    cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_keep),	    cmocka_unit_test(test_seed_walks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

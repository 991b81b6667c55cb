/* test_hsblob.c - compiled Java frames: bpf/hotspot_blob.h's step over
 * HotSpot code blobs, natively (user/collect/unwind/unwind_native.h's
 * env), on a fake code cache (the segment map's hops, an
 * nmethod's frame, its prologue, return sequence and stub section, a
 * native method's wrapper, a runtime stub, the call stub, a vtable stub, a
 * stub without a frame, free and absurd segments, a return address out of
 * the code cache); jscopes.c's inlined scopes on JDK 17's and Temurin 25's
 * layouts (the seeds of fuzz_jscopes); the daemon's read of the code
 * cache (jvmlayout.c st_jvm_layout__java_blobs); and, when
 * ST_TEST_JVM_PID and ST_TEST_JVM_TID name a JVM's thread spinning in
 * C2-compiled code (tests/integration/test_java.py test_java_jit), that
 * thread stopped again and again with ptrace and walked from its
 * registers by the unwinder's HotSpot rule (bpf/hotspot_step.h
 * st_hs_frame: this step for compiled frames and stubs, the interpreted
 * rule for the rest), every frame named (jscopes.c, jmethod.c), the
 * chain compared with ST_TEST_JAVA_EXPECT; with ST_TEST_JAVA_MIXED, a
 * program that runs the VM's and native code too (javac in process): the
 * chain required of the walks that start in Java code (native frames are
 * the native unwinder's, not walked here). */
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
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/fuzz/jscopes_fake.h"
#include "user/collect/runtimes/java/jmethod.h"
#include "user/collect/runtimes/java/jscopes.h"
#include "user/collect/runtimes/java/jvmlayout.h"
#include "user/collect/runtimes/java/jvmproc.h"
#include "user/collect/unwind/unwind_native.h"

/* ---- a fake code cache, its segment map, a stack ------------------------ */

#define CC 0x7f0000000000ULL
#define CC_BYTES 0x10000	/* 1024 segments of 64 bytes */
#define SEGMAP 0x7f1000000000ULL
#define NAMES 0x7f2000000000ULL
#define STACK 0x7ff000000000ULL
#define STACK_BYTES 0x4000
#define NATIVE_PC 0x400123ULL
#define M_NATIVE 0x20000800ULL

static struct {
	__u8 cc[CC_BYTES];
	__u8 segmap[CC_BYTES >> 6];
	char names[256];
	__u8 stack[STACK_BYTES];
} fk;

static long fake_rd(void *arg, void *dst, __u32 n, __u64 a)
{
	static const struct {
		__u64 base;
		size_t off, len;
	} r[] = {
		{ CC, offsetof(__typeof__(fk), cc), CC_BYTES },
		{ SEGMAP, offsetof(__typeof__(fk), segmap), CC_BYTES >> 6 },
		{ NAMES, offsetof(__typeof__(fk), names), 256 },
		{ STACK, offsetof(__typeof__(fk), stack), STACK_BYTES },
	};

	(void)arg;
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (a >= r[i].base && a - r[i].base <= r[i].len && n <= r[i].len - (a - r[i].base)) {
			memcpy(dst, (__u8 *)&fk + r[i].off + (a - r[i].base), n);
			return 0;
		}
	return -EFAULT;
}

/* the walk's env over the fake memory: the stack copied, the rest read */
#define FAKE_ENV { .stack = fk.stack, .stack_len = STACK_BYTES, .stack_base = STACK, .mem = fake_rd }

/* JDK 17's offsets (as its VMStructs say) */
static struct st_java_proc fake_proc(void)
{
	struct st_java_proc p = {
		.interp_start = CC + 0xe000,
		.interp_end = CC + 0xf000,
		.blobs = { .cc_lo = CC, .cc_hi = CC + CC_BYTES, .nheaps = 1,
			   .heaps = { { CC, CC + CC_BYTES, SEGMAP } }, .log2_segment = 6, .heapblock = 16,
			   .name = 96, .frame_size = 28, .frame_complete = 20, .code = 32, .method = 112,
			   .compile_id = 304, .stub = 252, .call_stub_ret = 0, .deopt = 128,
			   .orig_pc = 300, .size = 12 },
	};
	return p;
}

#define BLOB(seg) (CC + 64ULL * (seg) + 16)
#define NM BLOB(0)		/* an nmethod: 40 segments */
#define NM_CODE (NM + 0x180)
#define NAT BLOB(40)		/* a native method's wrapper: 10 */
#define RT BLOB(50)		/* a runtime stub: 10 */
#define CALLSTUB BLOB(60)	/* StubRoutines: 10 */
#define VT BLOB(70)		/* vtable chunks: 10 */
#define BIG BLOB(100)		/* an nmethod of 600 segments */
#define INTERP_PC (CC + 0xe100)
#define SP (STACK + 0x1000)

static void put(__u64 a, const void *v, size_t n)
{
	__u8 *base = a >= STACK ? fk.stack : fk.cc;

	memcpy(base + (a - (a >= STACK ? STACK : CC)), v, n);
}

static void put64(__u64 a, __u64 v)
{
	put(a, &v, 8);
}

static void put32(__u64 a, __u32 v)
{
	put(a, &v, 4);
}

/* A block of n segments at segment s, as HotSpot marks it: 0, then 1, 2,
 * ... up to 254, again from 1 (CodeHeap::mark_segmap_as_used). */
static void mark(__u32 s, __u32 n)
{
	fk.segmap[s] = 0;
	if (n > 1)
		fk.segmap[s + 1] = 1;
	for (__u32 i = 2; i < n; i++)
		fk.segmap[s + i] = (__u8)(n <= 255 ? i : 1 + (i - 2) % 254);
}

static void blob(__u64 b, __u32 seg, __u32 nseg, const char *name, __s32 fs, __s16 fc,
		 __u64 code)
{
	static size_t names_at = 0;
	size_t len = strlen(name) + 1;

	mark(seg, nseg);
	memcpy(fk.names + names_at, name, len);
	put64(b + 96, NAMES + names_at);
	names_at = (names_at + len) % (sizeof(fk.names) - 32);
	put32(b + 28, (__u32)fs);
	put32(b + 20, (__u32)(__s32)fc);
	put64(b + 32, code);
}

static void fake_cc(void)
{
	/* the return sequence at NM_CODE + 0x100: add rsp, 0x20; pop rbp;
	 * cmp rsp, [r15 + 0x348]; ja +0x10; ret */
	static const __u8 epi[] = { 0x48, 0x83, 0xc4, 0x20, 0x5d, 0x49, 0x3b, 0xa7, 0x48, 0x03, 0x00,
				    0x00, 0x0f, 0x87, 0x10, 0x00, 0x00, 0x00, 0xc3 };

	memset(&fk, 0, sizeof(fk));
	memset(fk.segmap, 0xff, sizeof(fk.segmap));
	blob(NM, 0, 40, "nmethod", 6, 0x20, NM_CODE);
	put32(NM + 304, 1234);
	put32(NM + 252, 0x900);
	put(NM_CODE + 0x100, epi, sizeof(epi));
	blob(NAT, 40, 10, "native nmethod", 4, 0x20, NAT + 0x100);
	put64(NAT + 112, M_NATIVE);
	blob(RT, 50, 10, "_new_instance_Java", 2, 0x10, RT + 0x80);
	blob(CALLSTUB, 60, 10, "StubRoutines (1)", 0, -1, CALLSTUB + 0x80);
	blob(VT, 70, 10, "vtable chunks", 0, -1, VT + 0x40);
	blob(BLOB(80), 80, 4, "jni_fast_GetIntField", 0, -1, BLOB(80) + 0x40);
	blob(BIG, 100, 600, "nmethod", 4, 0x20, BIG + 0x180);
	put32(BIG + 304, 77);
	put32(BIG + 252, 600 * 64 - 0x100);
	/* the interpreter's code: a blob of its own */
	blob(BLOB(0xe000 / 64 - 1), 0xe000 / 64 - 1, 0x1000 / 64 + 1, "Interpreter", 0, -1, CC + 0xe000);
}

static struct st_hs_frame f;

static int step(__u64 ip, __u64 sp, __u64 bp, bool exact)
{
	struct st_java_proc p = fake_proc();
	struct st_unw_env e = FAKE_ENV;

	memset(&f, 0xa5, sizeof(f));
	p.blobs.call_stub_ret = CALLSTUB + 0x100;
	return st_hs_blob_step(&e, &p, ip, sp, bp, exact, &f);
}

static __u64 jit_entry(__u64 blob_at, __u64 ip, int leaf, __u32 cid)
{
	return ST_JAVA_TAG | ST_JAVA_JIT |
	       ST_JAVA_JIT_ADDR((blob_at - 16 - CC) >> 6, ip - blob_at, leaf, cid);
}

static void test_compiled(void **state)
{
	__u64 ip = NM_CODE + 0x50;

	(void)state;
	fake_cc();
	/* a return address: caller sp = sp + 48, its pc at - 8, rbp at - 16 */
	put64(SP + 40, INTERP_PC);
	put64(SP + 32, STACK + 0x2000);
	assert_int_equal(step(ip, SP, 0x1111, false), 1);
	assert_int_equal(f.ip, INTERP_PC);
	assert_int_equal(f.sp, SP + 48);
	assert_int_equal(f.bp, STACK + 0x2000);
	assert_int_equal(f.note, ST_JAVA_STAT__MAX);
	assert_int_equal(f.entry, jit_entry(NM, ip, 0, 1234));
	assert_true(st_java_entry_is(f.entry) && st_java_entry_jit(f.entry));
	assert_int_equal(ST_JAVA_JIT_PC(f.entry), ip - NM);
	assert_int_equal(ST_JAVA_JIT_SEG(f.entry), 0);
	assert_int_equal(ST_JAVA_JIT_CID(f.entry), 1234);
	assert_false(ST_JAVA_JIT_LEAF(f.entry));
	/* an interpreted entry is never taken for a compiled one */
	assert_false(st_java_entry_jit(ST_JAVA_TAG | ST_JAVA_ADDR(ST_USER_END - 8, 0xffff)));
	/* the leaf in the body: the same frame, its entry marked */
	assert_int_equal(step(ip, SP, 0x1111, true), 1);
	assert_int_equal(f.sp, SP + 48);
	assert_true(ST_JAVA_JIT_LEAF(f.entry));
	/* a big nmethod: its block found over 3 hops of the segment map */
	put64(SP + 24, NM_CODE + 0x60);
	assert_int_equal(step(BIG + 64 * 580, SP, 0, false), 1);
	assert_int_equal(f.sp, SP + 32);
	assert_int_equal(f.ip, NM_CODE + 0x60);
	assert_int_equal(ST_JAVA_JIT_SEG(f.entry), 100);
	assert_int_equal(ST_JAVA_JIT_CID(f.entry), 77);
	assert_int_equal(st_jscopes__nmethod(&(struct st_java_blobs){ .cc_lo = CC, .log2_segment = 6,
								      .heapblock = 16 }, f.entry), BIG);
	/* a deoptimized frame: its return address the deopt handler, its
	 * original pc saved at sp + _orig_pc_offset */
	put64(NM + 128, NM_CODE + 0x800);
	put32(NM + 300, 16);
	put32(NM + 12, 40 * 64 - 16);
	put64(SP + 16, NM_CODE + 0x66);
	assert_int_equal(step(NM_CODE + 0x800, SP, 0, false), 1);
	assert_int_equal(f.note, ST_JAVA_STAT_HS_DEOPT);
	assert_int_equal(f.sp, SP + 48);
	assert_int_equal(ST_JAVA_JIT_PC(f.entry), NM_CODE + 0x66 - NM);
	put64(SP + 16, NATIVE_PC);		/* an original pc out of the nmethod: kept */
	assert_int_equal(step(NM_CODE + 0x800, SP, 0, false), 1);
	assert_int_equal(f.note, ST_JAVA_STAT__MAX);
	assert_int_equal(ST_JAVA_JIT_PC(f.entry), NM_CODE + 0x800 - NM);
	/* a return address out of the code cache: stop, never a wrong frame */
	put64(SP + 40, NATIVE_PC);
	assert_int_equal(step(ip, SP, 0, false), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_BAD_RA);
	/* unreadable stack */
	assert_int_equal(step(ip, STACK + STACK_BYTES, 0, false), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_READ);
}

static void test_leaf_edges(void **state)
{
	__u64 epi = NM_CODE + 0x100;

	(void)state;
	fake_cc();
	/* the return sequence: at add rsp the frame is whole */
	put64(SP + 40, INTERP_PC);
	put64(SP + 32, STACK + 0x2000);
	assert_int_equal(step(epi, SP, 7, true), 1);
	assert_int_equal(f.sp, SP + 48);
	assert_int_equal(f.note, ST_JAVA_STAT__MAX);
	/* at pop rbp: rbp at sp, the return address above */
	memset(fk.stack, 0, sizeof(fk.stack));
	put64(SP, STACK + 0x2000);
	put64(SP + 8, INTERP_PC);
	assert_int_equal(step(epi + 4, SP, 7, true), 1);
	assert_int_equal(f.ip, INTERP_PC);
	assert_int_equal(f.sp, SP + 16);
	assert_int_equal(f.bp, STACK + 0x2000);
	assert_int_equal(f.note, ST_JAVA_STAT_HS_EPILOGUE);
	/* after it (the poll, its ja, ret): the return address at sp */
	put64(SP, INTERP_PC + 8);
	for (int at = 5; at <= 18; at += (at == 5 ? 7 : 6)) {
		assert_int_equal(step(epi + (__u64)at, SP, 9, true), 1);
		assert_int_equal(f.ip, INTERP_PC + 8);
		assert_int_equal(f.sp, SP + 8);
		assert_int_equal(f.bp, 9);
		assert_int_equal(f.note, ST_JAVA_STAT_HS_EPILOGUE);
	}
	/* the prologue: the one candidate in the code cache */
	memset(fk.stack, 0, sizeof(fk.stack));
	put64(SP, INTERP_PC);			/* nothing pushed yet */
	put64(SP + 8, STACK + 0x3000);
	put64(SP + 40, 0x1234);
	assert_int_equal(step(NM_CODE + 0x10, SP, 5, true), 1);
	assert_int_equal(f.ip, INTERP_PC);
	assert_int_equal(f.sp, SP + 8);
	assert_int_equal(f.bp, 5);
	put64(SP, STACK + 0x3000);		/* rbp pushed */
	put64(SP + 8, INTERP_PC);
	assert_int_equal(step(NM_CODE + 0x10, SP, 5, true), 1);
	assert_int_equal(f.sp, SP + 16);
	assert_int_equal(f.bp, STACK + 0x3000);
	put64(SP + 40, NM_CODE + 0x44);		/* two candidates: stop */
	assert_int_equal(step(NM_CODE + 0x10, SP, 5, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_PROLOGUE);
	put64(SP + 8, 0);			/* the frame built: its slot */
	assert_int_equal(step(NM_CODE + 0x10, SP, 5, true), 1);
	assert_int_equal(f.sp, SP + 48);
	put64(SP + 40, 0);			/* none */
	assert_int_equal(step(NM_CODE + 0x10, SP, 5, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_PROLOGUE);
	/* the prologue decoded: the stack bang, push rbp, sub rsp after it;
	 * C2's sub rsp first, then mov [rsp + d], rbp */
	{
		static const __u8 pro[] = { 0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff, 0x55, 0x48, 0x83,
					    0xec, 0x20 };
		static const __u8 c2[] = { 0x90, 0x48, 0x81, 0xec, 0x28, 0x00, 0x00, 0x00, 0x48, 0x89,
					   0x6c, 0x24, 0x20 };

		put(NM_CODE + 0x8, pro, sizeof(pro));
		put(NM_CODE + 0x14, c2, sizeof(c2));
	}
	memset(fk.stack, 0, sizeof(fk.stack));
	put64(SP, INTERP_PC);
	put64(SP + 8, NM_CODE + 0x44);		/* a code address: no matter */
	assert_int_equal(step(NM_CODE + 0x8, SP, 5, true), 1);	/* at the bang */
	assert_int_equal(f.ip, INTERP_PC);
	assert_int_equal(f.sp, SP + 8);
	assert_int_equal(step(NM_CODE + 0xf, SP, 5, true), 1);	/* at push rbp */
	assert_int_equal(f.sp, SP + 8);
	assert_int_equal(step(NM_CODE + 0x15, SP, 5, true), 1);	/* at sub, no push before */
	assert_int_equal(f.sp, SP + 8);
	put64(SP, STACK + 0x3000);
	put64(SP + 8, INTERP_PC);
	assert_int_equal(step(NM_CODE + 0x10, SP, 5, true), 1);	/* at sub after push */
	assert_int_equal(f.ip, INTERP_PC);
	assert_int_equal(f.sp, SP + 16);
	assert_int_equal(f.bp, STACK + 0x3000);
	put64(SP + 40, INTERP_PC + 4);
	assert_int_equal(step(NM_CODE + 0x1c, SP, 5, true), 1);	/* at mov [rsp + d], rbp */
	assert_int_equal(f.ip, INTERP_PC + 4);
	assert_int_equal(f.sp, SP + 48);
	assert_int_equal(f.bp, 5);
	put64(SP, NATIVE_PC);			/* decoded, but not code cache code */
	assert_int_equal(step(NM_CODE + 0x8, SP, 5, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_PROLOGUE);
	/* the stub section: stop */
	assert_int_equal(step(NM + 0x900, SP, 5, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_STUB_LEAF);
}

static void test_stubs(void **state)
{
	(void)state;
	fake_cc();
	/* a native method's wrapper: its Java method */
	put64(SP + 24, INTERP_PC);
	put64(SP + 16, STACK + 0x2000);
	assert_int_equal(step(NAT + 0x180, SP, 0, false), 1);
	assert_int_equal(f.sp, SP + 32);
	assert_int_equal(f.entry, ST_JAVA_TAG | ST_JAVA_ADDR(M_NATIVE, ST_JAVA_BCI_NONE));
	assert_false(st_java_entry_jit(f.entry));
	/* a runtime stub: by its frame size, kept as its return address */
	put64(SP + 8, NM_CODE + 0x30);
	put64(SP, STACK + 0x2100);
	assert_int_equal(step(RT + 0x90, SP, 0, false), 1);
	assert_int_equal(f.ip, NM_CODE + 0x30);
	assert_int_equal(f.sp, SP + 16);
	assert_int_equal(f.bp, STACK + 0x2100);
	assert_int_equal(f.entry, 0);
	/* ... its leaf before its frame is complete: stop */
	assert_int_equal(step(RT + 0x84, SP, 0, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_STUB_LEAF);
	/* the call stub: by rbp, to the VM's C++ */
	put64(SP + 0x100, STACK + 0x3000);
	put64(SP + 0x108, NATIVE_PC);
	assert_int_equal(step(CALLSTUB + 0x100, SP, SP + 0x100, false), 1);
	assert_int_equal(f.ip, NATIVE_PC);
	assert_int_equal(f.sp, SP + 0x110);
	assert_int_equal(f.bp, STACK + 0x3000);
	assert_int_equal(step(CALLSTUB + 0x100, SP, SP - 0x100, false), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_END_BAD_FP);
	/* another stub without a frame size: by rbp only when it is its own */
	put64(SP + 0x108, NM_CODE + 0x70);
	assert_int_equal(step(CALLSTUB + 0x200, SP, SP + 0x100, true), 1);
	assert_int_equal(f.ip, NM_CODE + 0x70);
	put64(SP + 0x108, NATIVE_PC);
	assert_int_equal(step(CALLSTUB + 0x200, SP, SP + 0x100, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_STUB_LEAF);
	assert_int_equal(step(CALLSTUB + 0x200, SP, SP + 0x2000, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_STUB_LEAF);
	/* a method handle intrinsic: a native nmethod without a frame */
	put32(NAT + 28, 0);
	put64(SP, NM_CODE + 0x30);
	assert_int_equal(step(NAT + 0x110, SP, 3, true), 1);
	assert_int_equal(f.ip, NM_CODE + 0x30);
	assert_int_equal(f.sp, SP + 8);
	assert_int_equal(f.entry, 0);
	put32(NAT + 28, 4);
	/* JNI's fast field getter: its caller native code */
	put64(SP, NATIVE_PC);
	assert_int_equal(step(BLOB(80) + 0x50, SP, 3, true), 1);
	assert_int_equal(f.ip, NATIVE_PC);
	assert_int_equal(f.sp, SP + 8);
	assert_int_equal(f.entry, 0);
	/* a stub whose frame size is -1 (C1's Runtime1 stubs): frameless */
	put32(CALLSTUB + 28, (__u32)-1);
	assert_int_equal(step(CALLSTUB + 0x200, SP, SP + 0x2000, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_STUB_LEAF);
	put32(CALLSTUB + 28, (__u32)-2);
	assert_int_equal(step(CALLSTUB + 0x200, SP, SP + 0x2000, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_BAD_BLOB);
	put32(CALLSTUB + 28, 0);
	/* a vtable stub: the return address at sp */
	put64(SP, NM_CODE + 0x90);
	assert_int_equal(step(VT + 0x50, SP, 3, true), 1);
	assert_int_equal(f.ip, NM_CODE + 0x90);
	assert_int_equal(f.sp, SP + 8);
	assert_int_equal(f.bp, 3);
}

static void test_not_blobs(void **state)
{
	(void)state;
	fake_cc();
	/* out of the code cache, in the interpreter: not the step's */
	assert_int_equal(step(NATIVE_PC, SP, 0, true), 0);
	assert_int_equal(step(INTERP_PC, SP, 0, true), 0);
	/* a free segment; a map that never reaches a block's start */
	assert_int_equal(step(CC + 64 * 800, SP, 0, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_NO_BLOB);
	for (int i = 701; i < 760; i++)
		fk.segmap[i] = 1;
	fk.segmap[700] = 0xff;
	assert_int_equal(step(CC + 64 * 759, SP, 0, true), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_NO_BLOB);
	/* a hop past the heap's start */
	fk.segmap[5] = 9;
	assert_int_equal(step(NM + 64 * 5, SP, 0, false), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_NO_BLOB);
	/* an absurd frame size; a name unreadable */
	fake_cc();
	put32(NM + 28, 0x7fffffff);
	assert_int_equal(step(NM_CODE + 0x50, SP, 0, false), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_BAD_BLOB);
	fake_cc();
	put64(NM + 96, 0x1000);
	assert_int_equal(step(NM_CODE + 0x50, SP, 0, false), -1);
	assert_int_equal(f.stop, ST_JAVA_STAT_HS_BAD_BLOB);
	/* a JVM whose code cache was not read */
	{
		struct st_java_proc p = {};
		struct st_unw_env e = FAKE_ENV;

		assert_int_equal(st_hs_blob_step(&e, &p, NM_CODE, SP, 0, true, &f), 0);
	}
}

/* ---- inlined scopes ------------------------------------------------------ */

static unsigned char img[JS_IMAGE];

static long img_rd(void *arg, void *dst, __u32 n, __u64 a)
{
	const unsigned char *m = arg;

	if (a < JS_MEM || a - JS_MEM > JS_IMAGE || n > JS_IMAGE - (a - JS_MEM))
		return -EFAULT;
	memcpy(dst, m + (a - JS_MEM), n);
	return 0;
}

static struct st_jscopes sc;

static int scopes(int jdk25, __u32 code_off, bool leaf, int cid)
{
	struct st_jvm_layout l;

	js_fake_layout(&l, jdk25);
	return st_jscopes__read(&l, jdk25 ? 25 : 17, img_rd, img, JS_NM, JS_CODE_OFF + code_off, leaf,
				cid, &sc);
}

static void test_scopes(void **state)
{
	(void)state;
	for (int jdk25 = 0; jdk25 < 2; jdk25++) {
		struct st_jvm_layout l;

		js_fake_image(img, jdk25, 0, 0, 0);
		/* a return address at 0x20: M2 < M1 < M0 */
		assert_int_equal(scopes(jdk25, 0x20, false, JS_CID), 0);
		assert_int_equal(sc.stop, ST_JSCOPES_OK);
		assert_int_equal(sc.n, 3);
		assert_int_equal(sc.s[0].method, JS_M2);
		assert_int_equal(sc.s[0].bci, 2);
		assert_int_equal(sc.s[1].method, JS_M1);
		assert_int_equal(sc.s[1].bci, 5);
		assert_int_equal(sc.s[2].method, JS_M0);
		assert_int_equal(sc.s[2].bci, 10);
		assert_int_equal(sc.method, JS_M0);
		assert_int_equal(sc.compile_id, JS_CID);
		assert_int_equal(sc.pc_offset, 0x20);
		/* the leaf at 0x18: the desc after it (0x20) */
		assert_int_equal(scopes(jdk25, 0x18, true, -1), 0);
		assert_int_equal(sc.n, 3);
		/* the leaf at 0x20 exactly: the desc after it (0x30, no scope),
		 * as pc_desc_near(pc + 1) */
		assert_int_equal(scopes(jdk25, 0x20, true, -1), 0);
		assert_int_equal(sc.stop, ST_JSCOPES_NO_SCOPE);
		assert_int_equal(sc.n, 1);
		/* a return address at 0x18: none exactly there */
		assert_int_equal(scopes(jdk25, 0x18, false, -1), 0);
		assert_int_equal(sc.stop, ST_JSCOPES_NO_PCDESC);
		assert_int_equal(sc.n, 1);
		assert_int_equal(sc.s[0].method, JS_M0);
		assert_int_equal(sc.s[0].bci, -1);
		/* one scope; none; the entry's bci */
		assert_int_equal(scopes(jdk25, 0x10, false, -1), 0);
		assert_int_equal(sc.n, 1);
		assert_int_equal(sc.s[0].bci, 10);
		assert_int_equal(sc.stop, ST_JSCOPES_OK);
		assert_int_equal(scopes(jdk25, 0x30, false, -1), 0);
		assert_int_equal(sc.stop, ST_JSCOPES_NO_SCOPE);
		assert_int_equal(scopes(jdk25, 0x40, false, -1), 0);
		assert_int_equal(sc.s[0].bci, -1);
		/* past the last desc; before the code */
		assert_int_equal(scopes(jdk25, 0x41, true, -1), 0);
		assert_int_equal(sc.stop, ST_JSCOPES_NO_PCDESC);
		js_fake_layout(&l, jdk25);
		assert_int_equal(st_jscopes__read(&l, jdk25 ? 25 : 17, img_rd, img, JS_NM, 8, true, -1,
						  &sc), 0);
		assert_int_equal(sc.n, 1);
		/* another compile in its place */
		assert_int_equal(scopes(jdk25, 0x20, false, JS_CID + 1), -1);
		assert_int_equal(sc.stop, ST_JSCOPES_GONE);
		assert_int_equal(sc.n, 0);
		/* the wrong UNSIGNED5 form: a scope refused, the method kept */
		js_fake_layout(&l, jdk25);
		assert_int_equal(st_jscopes__read(&l, jdk25 ? 17 : 25, img_rd, img, JS_NM,
						  JS_CODE_OFF + 0x20, false, -1, &sc), 0);
		assert_true(sc.stop == ST_JSCOPES_BAD_SCOPE || sc.n != 3);
		/* a member missing; not an nmethod */
		l.missing[ST_JF_pcdesc_size / 64] |= 1ULL << (ST_JF_pcdesc_size % 64);
		assert_int_equal(scopes(jdk25, 0x20, false, -1), 0);
		assert_int_equal(st_jscopes__read(&l, 17, img_rd, img, JS_NM, 0x220, false, -1, &sc), -1);
		assert_int_equal(sc.stop, ST_JSCOPES_NO_LAYOUT);
		assert_int_equal(scopes(jdk25, 0x20, false, -1), 0);
		js_fake_layout(&l, jdk25);
		assert_int_equal(st_jscopes__read(&l, 17, img_rd, img, JS_MEM + 0x2000, 0x220, false, -1,
						  &sc), -1);
		assert_int_equal(sc.stop, ST_JSCOPES_BAD_NMETHOD);
	}
}

static void test_scopes_hostile(void **state)
{
	__s32 v;

	(void)state;
	/* a sender after its scope (a loop): refused, what was read kept */
	js_fake_image(img, 0, 0, 0, 0);
	{
		/* JDK 17: the scopes data at JS_NM + 0x400 + 24; M1's sender
		 * (offset 4) made 7 */
		__u64 data = JS_NM + 0x400 + 24;

		img[data + 4 - JS_MEM] = 7;
		assert_int_equal(scopes(0, 0x20, false, -1), 0);
		assert_int_equal(sc.stop, ST_JSCOPES_BAD_SCOPE);
		assert_int_equal(sc.n, 2);
		img[data + 4 - JS_MEM] = 1;
		/* a method index past the metadata */
		img[data + 8 - JS_MEM] = 9;
		assert_int_equal(scopes(0, 0x20, false, -1), 0);
		assert_int_equal(sc.stop, ST_JSCOPES_BAD_SCOPE);
		assert_int_equal(sc.n, 1);
		assert_int_equal(sc.s[0].method, JS_M0);
	}
	/* absurd regions: a PC desc table of 1 GiB */
	js_fake_image(img, 1, 0, 0, 0);
	v = 1 << 30;
	memcpy(img + (JS_NM + 200 - JS_MEM), &v, 4);
	assert_int_equal(scopes(1, 0x20, false, -1), 0);
	assert_int_equal(sc.n, 1);
	assert_int_equal(sc.s[0].method, JS_M0);
	assert_int_equal(sc.s[0].bci, -1);
}

/* The seeds of fuzz_jscopes are js_fake_image()'s, and read as expected. */
static void test_seeds(void **state)
{
	static const struct {
		const char *name;
		int jdk25, leaf;
		__u32 pc;
		int cid;
		__u32 n, stop;
	} s[] = {
		{ "jdk17_ret20", 0, 0, JS_CODE_OFF + 0x20, JS_CID, 3, ST_JSCOPES_OK },
		{ "jdk17_leaf18", 0, 1, JS_CODE_OFF + 0x18, -1, 3, ST_JSCOPES_OK },
		{ "jdk17_ret30", 0, 0, JS_CODE_OFF + 0x30, JS_CID, 1, ST_JSCOPES_NO_SCOPE },
		{ "jdk17_leaf41", 0, 1, JS_CODE_OFF + 0x3c, JS_CID, 1, ST_JSCOPES_OK },
		{ "jdk25_ret20", 1, 0, JS_CODE_OFF + 0x20, JS_CID, 3, ST_JSCOPES_OK },
		{ "jdk25_leaf18", 1, 1, JS_CODE_OFF + 0x18, -1, 3, ST_JSCOPES_OK },
		{ "jdk25_ret10", 1, 0, JS_CODE_OFF + 0x10, JS_CID, 1, ST_JSCOPES_OK },
		{ "jdk25_gone", 1, 0, JS_CODE_OFF + 0x20, JS_CID + 1, 0, ST_JSCOPES_GONE },
	};
	static unsigned char want[JS_IMAGE];
	char dir[PATH_MAX], path[PATH_MAX + 64];
	ssize_t k = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

	(void)state;
	dir[k > 0 ? k : 0] = '\0';
	dirname(dir);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		struct st_jvm_layout l;
		__u32 pc = 0;
		__s32 cid = 0;
		FILE *fp;

		snprintf(path, sizeof(path), "%s/../../tests/fuzz/corpus/jscopes/%s", dir, s[i].name);
		fp = fopen(path, "rb");
		if (!fp)
			fail_msg("seed absent: %s", path);
		assert_int_equal(fread(img, 1, sizeof(img), fp), sizeof(img));
		fclose(fp);
		js_fake_image(want, s[i].jdk25, s[i].leaf, s[i].pc, s[i].cid);
		assert_memory_equal(img, want, sizeof(img));
		memcpy(&pc, img + 4, 4);
		memcpy(&cid, img + 8, 4);
		js_fake_layout(&l, img[0] & 1);
		st_jscopes__read(&l, (img[0] & 1) ? 25 : 17, img_rd, img, JS_NM, pc, img[0] & 2, cid, &sc);
		assert_int_equal(sc.n, s[i].n);
		assert_int_equal(sc.stop, s[i].stop);
	}
}

/* ---- the daemon's read of the code cache --------------------------------- */

struct ccmem {
	__u8 b[0x400];	/* at 0x1000 */
};

static long cc_rd(void *arg, void *dst, __u32 n, __u64 a)
{
	struct ccmem *m = arg;

	if (a < 0x1000 || a - 0x1000 > sizeof(m->b) || n > sizeof(m->b) - (a - 0x1000))
		return -EFAULT;
	memcpy(dst, m->b + (a - 0x1000), n);
	return 0;
}

static void cc64(struct ccmem *m, __u64 a, __u64 v)
{
	memcpy(m->b + (a - 0x1000), &v, 8);
}

static void cc32(struct ccmem *m, __u64 a, __u32 v)
{
	memcpy(m->b + (a - 0x1000), &v, 4);
}

static void test_java_blobs(void **state)
{
	struct st_jvm_layout l;
	struct st_java_blobs b;
	struct ccmem m = {};

	(void)state;
	js_fake_layout(&l, 0);
	/* statics at 0x1000.. (heaps, low, high, call stub), the array at
	 * 0x1100, heaps at 0x1200 and 0x1300 (JDK 17's CodeHeap offsets) */
	l.codecache_heaps = 0x1000;
	l.codecache_low_bound = 0x1008;
	l.codecache_high_bound = 0x1010;
	l.stubroutines_call_stub_return_address = 0x1018;
	l.growablearray_len = 4;
	l.growablearray_data = 8;
	l.codeheap_memory = 8;
	l.codeheap_segmap = 120;
	l.codeheap_log2_segment_size = 256;
	l.virtualspace_low = 16;
	l.virtualspace_high_boundary = 8;
	l.heapblock_size = 16;
	l.codeblob_name = 96;
	l.codeblob_frame_size = 28;
	l.codeblob_frame_complete_offset = 20;
	l.nmethod_stub_offset = 252;
	cc64(&m, 0x1000, 0x1100);
	cc64(&m, 0x1008, CC);
	cc64(&m, 0x1010, CC + 0x30000);
	cc64(&m, 0x1018, CC + 0x1234);
	cc32(&m, 0x1104, 2);
	cc64(&m, 0x1108, 0x1180);
	cc64(&m, 0x1180, 0x1200);
	cc64(&m, 0x1188, 0x1280);
	cc64(&m, 0x1200 + 8 + 16, CC);
	cc64(&m, 0x1200 + 8 + 8, CC + 0x10000);
	cc64(&m, 0x1200 + 120 + 16, SEGMAP);
	cc32(&m, 0x1200 + 256, 6);
	cc64(&m, 0x1280 + 8 + 16, CC + 0x10000);
	cc64(&m, 0x1280 + 8 + 8, CC + 0x30000);
	cc64(&m, 0x1280 + 120 + 16, SEGMAP + 0x400);
	cc32(&m, 0x1280 + 256, 6);
	assert_int_equal(st_jvm_layout__java_blobs(&l, cc_rd, &m, &b), 0);
	assert_int_equal(b.nheaps, 2);
	assert_int_equal(b.cc_lo, CC);
	assert_int_equal(b.cc_hi, CC + 0x30000);
	assert_int_equal(b.call_stub_ret, CC + 0x1234);
	assert_int_equal(b.heaps[1].lo, CC + 0x10000);
	assert_int_equal(b.heaps[1].segmap, SEGMAP + 0x400);
	assert_int_equal(b.log2_segment, 6);
	assert_int_equal(b.heapblock, 16);
	assert_int_equal(b.code, 32);
	assert_int_equal(b.code_is_offset, 0);
	assert_int_equal(b.compile_id, 304);
	assert_int_equal(b.deopt, 0);		/* its members not given: not read */
	/* heaps of different segment sizes; a heap outside the bounds; too
	 * many heaps; a member missing */
	cc32(&m, 0x1280 + 256, 7);
	assert_int_equal(st_jvm_layout__java_blobs(&l, cc_rd, &m, &b), -ENOTSUP);
	cc32(&m, 0x1280 + 256, 6);
	cc64(&m, 0x1280 + 8 + 8, CC + 0x40000);
	assert_int_equal(st_jvm_layout__java_blobs(&l, cc_rd, &m, &b), -EFAULT);
	cc32(&m, 0x1104, ST_JAVA_MAX_HEAPS + 1);
	assert_int_equal(st_jvm_layout__java_blobs(&l, cc_rd, &m, &b), -ENOTSUP);
	assert_int_equal(b.nheaps, 0);
	cc32(&m, 0x1104, 2);
	cc64(&m, 0x1280 + 8 + 8, CC + 0x30000);
	/* JDK 25: the code by its offset */
	l.missing[ST_JF_codeblob_code_begin / 64] |= 1ULL << (ST_JF_codeblob_code_begin % 64);
	l.missing[ST_JF_codeblob_code_offset / 64] &= ~(1ULL << (ST_JF_codeblob_code_offset % 64));
	l.codeblob_code_offset = 36;
	assert_int_equal(st_jvm_layout__java_blobs(&l, cc_rd, &m, &b), 0);
	assert_int_equal(b.code, 36);
	assert_int_equal(b.code_is_offset, 1);
	l.missing[ST_JF_codeheap_segmap / 64] |= 1ULL << (ST_JF_codeheap_segmap % 64);
	assert_int_equal(st_jvm_layout__java_blobs(&l, cc_rd, &m, &b), -ENOENT);
}

/* ---- a live JVM --------------------------------------------------------- */

struct want {
	char name[128];
	__u32 lo, hi;
};

/* "Jit.mid:4-8|Jit.outer:11-11|..." into up to max frames. */
static int parse_expect(const char *s, struct want *w, int max)
{
	int n = 0;

	while (*s && n < max) {
		const char *bar = strchr(s, '|'), *colon = strchr(s, ':');
		size_t len = bar ? (size_t)(bar - s) : strlen(s);

		if (!colon || colon - s >= (long)sizeof(w[n].name) || (bar && colon > bar))
			return -1;
		memcpy(w[n].name, s, (size_t)(colon - s));
		w[n].name[colon - s] = '\0';
		if (sscanf(colon + 1, "%u-%u", &w[n].lo, &w[n].hi) != 2)
			return -1;
		n++;
		s += len + (bar ? 1 : 0);
	}
	return n;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void stop_thread(int tid)
{
	int status;

	assert_int_equal(ptrace(PTRACE_INTERRUPT, tid, NULL, NULL), 0);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(waitpid(tid, &status, __WALL), tid);
		assert_true(WIFSTOPPED(status));
		if (status >> 16 == PTRACE_EVENT_STOP)
			return;
		assert_int_equal(ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(status)), 0);
	}
	fail_msg("thread %d: no interrupt stop after 100 signals", tid);
}

#define LIVE_FRAMES 512

/* One frame named: "Class.method", its line. */
struct named {
	char name[2 * ST_JNAME_MAX + 2];
	__u32 line;
	char kind;	/* 'c' compiled (inlined: 'i'), 'j' interpreted, 'n' native wrapper */
};

static struct st_jmethod jm;

static int name_method(const struct st_jvm_proc *jp, int *pid, __u64 method, __s32 bci,
		       struct named *out)
{
	const char *dot;

	if (st_jmethod__read(&jp->l, jp->version.major, st_jvm_read_process, pid, method, &jm))
		return -1;
	dot = strrchr(jm.klass, '.');
	snprintf(out->name, sizeof(out->name), "%s.%s", dot ? dot + 1 : jm.klass, jm.name);
	out->line = bci >= 0 ? st_jmethod__line(&jm, (__u32)bci) : 0;
	return 0;
}

#define LIVE_STACK (256 << 10)	/* bytes of the stack copied (from rsp) */
static __u8 live_stack[LIVE_STACK];

/* The env of a walk from sp, as the daemon's deferred walk has it: the
 * stack copied from sp (a read that crosses the stack's top retried
 * shorter), the rest of the process's memory through its reader. */
static struct st_unw_env live_env(int *pid, __u64 sp)
{
	struct st_unw_env e = { .stack = live_stack, .stack_base = sp,
				.mem = st_jvm_read_process, .mem_arg = pid };
	size_t n = LIVE_STACK;

	while (n >= 4096 && st_jvm_read_process(pid, live_stack, (__u32)n, sp))
		n /= 2;
	e.stack_len = n >= 4096 ? n : 0;
	return e;
}

/* Walk the stopped thread from regs with the unwinder's HotSpot rule
 * (bpf/hotspot_step.h st_hs_frame, natively: compiled frames and stubs by
 * the blob step, interpreted ones by the interpreted rule, their caller's
 * sp the frame's sender sp slot when it is compiled code), until a pc
 * outside the code cache or a stop; every Java frame named into out (leaf
 * first). The frames' count, and *stop the rule's stop (ST_JAVA_STAT__MAX:
 * it reached native code), at the pc *stop_ip; *call_stub: the last frame
 * was the call stub's (the Java code below was called from the VM's C++
 * or JNI: the rest is the native unwinder's). */
static int live_walk(const struct st_java_proc *p, const struct st_jvm_proc *jp, int *pid,
		     const struct user_regs_struct *regs, struct st_java_counts *c, struct named *out,
		     __u32 *stop, __u64 *stop_ip, bool *call_stub, double *t_walk, double *t_name)
{
	struct st_unw_env e = live_env(pid, regs->rsp);
	static struct st_hs_io io;
	int n = 0;

	memset(&io, 0, sizeof(io));
	memcpy(&io.java, p, sizeof(io.java));
	io.proc = (uintptr_t)p;
	io.env = (uintptr_t)&e;
	io.jc = (uintptr_t)c;
	io.ip = regs->rip;
	io.sp = regs->rsp;
	io.bp = regs->rbp;
	io.r13 = regs->r13;
	io.exact = 1;
	*stop = ST_JAVA_STAT__MAX;
	*call_stub = false;
	for (__u32 step = 0; step < 256 && n < LIVE_FRAMES - ST_JSCOPES_MAX;
	     step++) {
		double t0 = now_ms();
		__u64 ip = io.ip;
		bool exact = io.exact;
		__u64 entry;

		if (!st_hs_in(ip, p->blobs.cc_lo, p->blobs.cc_hi))
			break;	/* native code: the rest is the native unwinder's */
		io.n = step;
		if (st_hs_frame(&io)) {
			*t_walk += now_ms() - t0;
			*stop = io.stat;
			*stop_ip = ip;
			break;
		}
		*t_walk += now_ms() - t0;
		*call_stub = !exact && ip == p->blobs.call_stub_ret;
		io.exact = 0;
		entry = io.entry;
		t0 = now_ms();
		if (st_java_entry_jit(entry)) {
			struct st_jscopes s;

			st_jscopes__read(&jp->l, jp->version.major, st_jvm_read_process, pid,
					 st_jscopes__nmethod(&p->blobs, entry), ST_JAVA_JIT_PC(entry),
					 ST_JAVA_JIT_LEAF(entry), (int)ST_JAVA_JIT_CID(entry), &s);
			for (__u32 i = 0; i < s.n; i++)
				if (!name_method(jp, pid, s.s[i].method, s.s[i].bci, &out[n])) {
					out[n].kind = i + 1 < s.n ? 'i' : 'c';
					n++;
				}
		} else if (st_java_entry_is(entry)) {
			bool native = ST_JAVA_BCI(entry) == ST_JAVA_BCI_NONE;

			if (!name_method(jp, pid, ST_JAVA_METHOD(entry),
					 native ? -1 : (__s32)ST_JAVA_BCI(entry), &out[n])) {
				out[n].kind = native ? 'n' : 'j';
				n++;
			}
		}
		*t_name += now_ms() - t0;
	}
	return n;
}

/* What the blob at a leaf pc that stopped the walk holds (a walk's
 * diagnosis): its name, frame size, frame-complete and code offsets. */
static void describe_blob(const struct st_java_proc *p, int *pid, __u64 ip)
{
	struct st_unw_env e = { .mem = st_jvm_read_process, .mem_arg = pid };
	__u64 blob = 0, name = 0, code = 0;
	__s32 fs = 0;
	__s16 fc = 0;
	char text[32] = "";

	if (st_hs_blob_find(&e, p, ip, &blob) != 1) {
		printf("      (no blob found for %#llx)\n", (unsigned long long)ip);
		return;
	}
	st_unw_read_mem(&e, &name, 8, blob + p->blobs.name);
	st_unw_read_mem(&e, text, sizeof(text) - 1, name);
	st_unw_read_mem(&e, &fs, 4, blob + p->blobs.frame_size);
	st_unw_read_mem(&e, &fc, 2, blob + p->blobs.frame_complete);
	st_unw_read_mem(&e, &code, p->blobs.code_is_offset ? 4 : 8, blob + p->blobs.code);
	if (p->blobs.code_is_offset)
		code += blob;
	printf("      blob %#llx \"%.31s\": frame size %d, frame complete %d, code +%lld, pc +%lld\n",
	       (unsigned long long)blob, text, fs, fc, (long long)(code - blob),
	       (long long)(ip - blob));
}

static const char *stat_name(__u32 s)
{
	static const char *const names[ST_JAVA_STAT__MAX] = {
		"walks", "walked", "frames", "leaf-out", "bad-method", "bad-bcp", "end-read",
		"code-cache", "fp-mode", "methods", "methods-lost", "deferred", "late-no-mem",
		"end-bad-fp", "hs-frames", "hs-epilogue", "hs-far-pc", "hs-deopt", "hs-no-blob",
		"hs-bad-blob", "hs-prologue", "hs-stub-leaf", "hs-bad-ra", "hs-read", "hs-entry",
		"hs-cache-miss", "hs-cache-stale",
	};
	_Static_assert(ST_JAVA_STAT__MAX == 27, "names");

	return s < ST_JAVA_STAT__MAX && names[s] ? names[s] : "native";
}

static void test_live_jit(void **state)
{
	const char *pid_s = getenv("ST_TEST_JVM_PID"), *tid_s = getenv("ST_TEST_JVM_TID"),
		   *expect_s = getenv("ST_TEST_JAVA_EXPECT"), *walks_s = getenv("ST_TEST_JAVA_WALKS");
	/* mixed: a program that also runs the VM's and native code (javac):
	 * no warm-up, the chain required of the walks that start in Java */
	bool mixed = getenv("ST_TEST_JAVA_MIXED") != NULL;
	struct st_jvm_proc *jp = calloc(1, sizeof(*jp));
	static struct named fr[LIVE_FRAMES];
	int java_leaf = 0, shown = 0, upcalls = 0;
	struct st_java_proc p;
	struct want want[8];
	struct st_java_counts c = {};
	int nwant, pid, tid, walks, full = 0, other = 0, inlined = 0, compiled_leaf = 0;
	double t_walk = 0, t_name = 0;

	(void)state;
	if (!pid_s || !tid_s || !expect_s) {
		printf("    needs a JVM's thread in compiled code: ST_TEST_JVM_PID, ST_TEST_JVM_TID, "
		       "ST_TEST_JAVA_EXPECT (tests/integration/test_java.py test_java_jit)\n");
		free(jp);
		skip();
	}
	assert_non_null(jp);
	pid = atoi(pid_s);
	tid = atoi(tid_s);
	walks = walks_s ? atoi(walks_s) : 50;
	nwant = parse_expect(expect_s, want, 8);
	assert_true(nwant > 0);
	assert_int_equal(st_jvm_proc__probe(NULL, pid, jp), ST_JVM_PROBE_OK);
	assert_int_equal(st_jvm_layout__java_proc(&jp->l, st_jvm_read_process, &pid, &p), 0);
	assert_int_equal(st_jvm_layout__java_blobs(&jp->l, st_jvm_read_process, &pid, &p.blobs), 0);
	p.code_start = p.blobs.cc_lo;	/* as the daemon widens them (java.c) */
	p.code_end = p.blobs.cc_hi;
	printf("    pid %d tid %d: JDK %d, code cache [%#llx, %#llx), %u heaps, segments of %u "
	       "bytes, blob header %u, code %s\n", pid, tid, jp->version.major,
	       (unsigned long long)p.blobs.cc_lo, (unsigned long long)p.blobs.cc_hi, p.blobs.nheaps,
	       1U << p.blobs.log2_segment, p.blobs.heapblock,
	       p.blobs.code_is_offset ? "by offset" : "by pointer");
	assert_int_equal(ptrace(PTRACE_SEIZE, tid, NULL, NULL), 0);
	/* warm-up: until the thread is in compiled code with methods inlined,
	 * 10 stops in a row (tiered compilation reaches it after some seconds,
	 * more on a busy machine; C1's code inlines less), at most a minute */
	{
		double t0 = now_ms();
		int in_row = 0;

		while (!mixed && in_row < 10 && now_ms() - t0 < 60000) {
			struct user_regs_struct regs = {};
			struct st_unw_env e;
			struct st_hs_frame hf;

			usleep(100000);
			stop_thread(tid);
			assert_int_equal(ptrace(PTRACE_GETREGS, tid, NULL, &regs), 0);
			struct st_jscopes s = {};

			e = live_env(&pid, regs.rsp);

			if (st_hs_blob_step(&e, &p, regs.rip, regs.rsp, regs.rbp, true, &hf) == 1 &&
			    st_java_entry_jit(hf.entry))
				st_jscopes__read(&jp->l, jp->version.major, st_jvm_read_process, &pid,
						 st_jscopes__nmethod(&p.blobs, hf.entry),
						 ST_JAVA_JIT_PC(hf.entry), true, -1, &s);
			in_row = s.n > 1 ? in_row + 1 : 0;
			assert_int_equal(ptrace(PTRACE_CONT, tid, NULL, NULL), 0);
		}
		printf("    in compiled code after %.1f s more\n", (now_ms() - t0) / 1000);
	}
	for (int i = 0; i < walks; i++) {
		struct user_regs_struct regs = {};
		int n, k = 0, matched = 0, has_inlined = 0;
		char chain[4096] = "";
		__u32 stop;
		__u64 stop_ip = 0;
		bool call_stub = false;

		usleep(20000 + (i % 7) * 3000);
		stop_thread(tid);
		assert_int_equal(ptrace(PTRACE_GETREGS, tid, NULL, &regs), 0);
		c.n[ST_JAVA_STAT_WALKS]++;
		n = live_walk(&p, jp, &pid, &regs, &c, fr, &stop, &stop_ip, &call_stub, &t_walk,
			      &t_name);
		for (int j = 0; j < n; j++) {
			if (strlen(chain) < sizeof(chain) - 200)
				snprintf(chain + strlen(chain), sizeof(chain) - strlen(chain),
					 "%s%.160s:%u%s", j ? " < " : "", fr[j].name, fr[j].line,
					 fr[j].kind == 'i' ? "(inl)" : fr[j].kind == 'c' ? "(jit)" :
					 fr[j].kind == 'n' ? "(jni)" : "(int)");
			if (fr[j].kind == 'i')
				has_inlined = 1;
			if (k < nwant && !strcmp(fr[j].name, want[k].name)) {
				if (fr[j].line >= want[k].lo && fr[j].line <= want[k].hi)
					matched++;
				k++;
			}
		}
		if (stop < ST_JAVA_STAT__MAX && stop >= ST_JAVA_STAT_HS_NO_BLOB)
			describe_blob(&p, &pid, stop_ip);
		if (n && (fr[0].kind == 'i' || fr[0].kind == 'c'))
			compiled_leaf++;
		inlined += has_inlined;
		java_leaf += n > 0;
		/* Java called from the VM (class loading, call site linking)
		 * or from JNI: main is beyond native frames */
		if (n > 0 && matched != nwant && call_stub && stop == ST_JAVA_STAT__MAX &&
		    strcmp(fr[n - 1].name, want[nwant - 1].name))
			upcalls++;
		if (i < 3 || (matched != nwant && shown < 6 && (n || !mixed) &&
			      !(mixed && call_stub && strcmp(fr[n - 1].name, want[nwant - 1].name))) || (stop < ST_JAVA_STAT__MAX && getenv("ST_TEST_JAVA_VERBOSE")))
			shown += printf("    walk %d: pc %#llx, %d frames, end %s: %s\n", i,
					(unsigned long long)regs.rip, n, stat_name(stop), chain) > 0 &&
				 i >= 3;
		if (matched == nwant)
			full++;
		else
			other++;
		assert_int_equal(ptrace(PTRACE_CONT, tid, NULL, NULL), 0);
	}
	stop_thread(tid);
	assert_int_equal(ptrace(PTRACE_DETACH, tid, NULL, NULL), 0);
	printf("    %d of %d walks named the whole chain (%.0f%%; %d started in Java code, %d of them "
	       "in Java the VM or JNI called), %d with a compiled leaf, %d with inlined frames; walk "
	       "%.3f ms, naming %.3f ms on average; counts:", full, walks, 100.0 * full / walks,
	       java_leaf, upcalls, compiled_leaf, inlined, t_walk / walks, t_name / walks);
	for (int s = 0; s < ST_JAVA_STAT__MAX; s++)
		if (c.n[s])
			printf(" %s %llu", stat_name((__u32)s), (unsigned long long)c.n[s]);
	printf("\n");
	/* the chain whole in 90%; compiled leaves as often; inlined frames in
	 * half the walks at least (tiered compilation may still be replacing
	 * C1's code, which inlines less, with C2's: mid then a compiled frame
	 * of its own, the chain whole all the same) */
	if (mixed) {
		/* the walks that start in Java code reach main: 90%, of 20 at
		 * least; inlined frames among them */
		assert_true(java_leaf - upcalls >= 20);
		assert_true(full * 10 >= (java_leaf - upcalls) * 9);
		assert_true(inlined > 0);
	} else {
		assert_true(full * 10 >= walks * 9);
		assert_true(compiled_leaf * 10 >= walks * 9);
		assert_true(inlined * 2 >= walks);
	}
	free(jp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compiled),
		cmocka_unit_test(test_leaf_edges),
		cmocka_unit_test(test_stubs),
		cmocka_unit_test(test_not_blobs),
		cmocka_unit_test(test_scopes),
		cmocka_unit_test(test_scopes_hostile),
		cmocka_unit_test(test_seeds),
		cmocka_unit_test(test_java_blobs),
		cmocka_unit_test(test_live_jit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

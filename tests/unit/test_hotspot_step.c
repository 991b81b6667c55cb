/* test_hotspot_step.c - bpf/hotspot_step.h's HotSpot rule inside the
 * unwinder (bpf/unwind_step.h, built natively: unwind_native.h) and the
 * namer (user/collect/runtimes/java/jmethod.c): walks of fake stacks (the
 * leaf's bcp in r13 or its slot, recursion, a frame without a method or
 * with its bcp outside, which keeps its return address, a loop, a native
 * frame between, the depth limit); the line table's decoding (both
 * UNSIGNED5 forms); the names and lines of the seeds of fuzz_jmethod
 * (tests/fuzz/corpus/jmethod/); the interpreter's slots derived from the
 * exported ones; and, when ST_TEST_JVM_PID and ST_TEST_JVM_TID name a
 * JVM's thread running interpreted code (tests/integration/test_java.py),
 * that thread stopped again and again with ptrace, its stack copied and
 * walked from its registers as the daemon walks a deferred sample, the
 * frames named and compared with ST_TEST_JAVA_EXPECT. Also --unwind fp's
 * walk of a deferred sample with the rule (user/collect/unwind/fpcopy.h)
 * on the fake stack. */
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

#include "common/hash.h"
#include "tests/fuzz/jmethod_fake.h"
/* bpf/hotspot_step.h's memo of interpreted methods across samples (BPF's
 * java_code_memo): test_walk_code_memo()'s, off elsewhere */
struct st_hs_code_ent;
static struct st_hs_code_ent *test_code_memo(__u64 method);
#define ST_HS_CODE_MEMO(io, m) test_code_memo(m)
#include "user/collect/unwind/unwind_native.h"
#include "user/collect/unwind/fpcopy.h"
#include "user/collect/unwind/unwinder.h"
#include "user/collect/runtimes/java/jmethod.h"
#include "user/collect/runtimes/java/jvmlayout.h"
#include "user/collect/runtimes/java/jvmproc.h"

/* ---- fake memory: a stack and a metaspace ------------------------------ */

#define STACK 0x7ff000000000ULL
#define STACK_WORDS (12 * (ST_MAX_USER + 16) + 64)	/* test_walk_limits(): 0x60 bytes a frame */
#define META 0x20000000ULL
#define META_BYTES 8192
#define INTERP 0x1000000ULL
#define NATIVE_PC 0x400123ULL

struct fake {
	__u64 stack[STACK_WORDS];
	__u8 meta[META_BYTES];
};

static struct fake fk;
static unsigned meta_reads;	/* fake_rd()'s reads of the metaspace */

static long fake_rd(void *arg, void *dst, __u32 n, __u64 a)
{
	struct fake *f = arg;

	if (a >= META && a < META + sizeof(f->meta))
		meta_reads++;

	if (a >= STACK && a - STACK <= sizeof(f->stack) && n <= sizeof(f->stack) - (a - STACK)) {
		memcpy(dst, (__u8 *)f->stack + (a - STACK), n);
		return 0;
	}
	if (a >= META && a - META <= sizeof(f->meta) && n <= sizeof(f->meta) - (a - META)) {
		memcpy(dst, f->meta + (a - META), n);
		return 0;
	}
	return -EFAULT;
}

static void word(__u64 a, __u64 v)
{
	assert_true(a >= STACK && a - STACK + 8 <= sizeof(fk.stack));
	fk.stack[(a - STACK) / 8] = v;
}

static void meta64(__u64 a, __u64 v)
{
	memcpy(fk.meta + (a - META), &v, 8);
}

static void meta16(__u64 a, __u16 v)
{
	memcpy(fk.meta + (a - META), &v, 2);
}

static const struct st_java_proc fake_proc = {
	.interp_start = INTERP,
	.interp_end = INTERP + 0x100000,
	.code_start = INTERP,
	.code_end = INTERP + 0x100000,
	.l = { .method_constmethod = 8, .constmethod_size = 48, .constmethod_code_size = 32,
	       .frame_method = -3, .frame_bcp = -8 },
};

#define M_A (META + 0x100)
#define CM_A (META + 0x200)
#define M_B (META + 0x400)
#define CM_B (META + 0x500)
#define CODE(cm) ((cm) + 48)

static __u64 fp_at(int i)
{
	return STACK + 0x100 + 0x200 * (__u64)i;
}

/* Interpreted frame i: its method and bcp slots, its links. */
static void iframe(int i, __u64 method, __u64 bcp, __u64 next_fp, __u64 ret)
{
	__u64 fp = fp_at(i);

	word(fp - 3 * 8, method);
	word(fp - 8 * 8, bcp);
	word(fp, next_fp);
	word(fp + 8, ret);
}

/* Methods A (20 bytes of code) and B (40); three interpreted frames A, B,
 * B (recursion) under a native frame whose caller's fp is 0. */
static void fake_stack(void)
{
	memset(&fk, 0, sizeof(fk));
	meta64(M_A + 8, CM_A);
	meta16(CM_A + 32, 20);
	meta64(M_B + 8, CM_B);
	meta16(CM_B + 32, 40);
	iframe(0, M_A, CODE(CM_A) + 3, fp_at(1), INTERP + 0x500);
	iframe(1, M_B, CODE(CM_B) + 30, fp_at(2), INTERP + 0x600);
	iframe(2, M_B, CODE(CM_B) + 5, fp_at(3), NATIVE_PC);
	word(fp_at(3), 0);
	word(fp_at(3) + 8, NATIVE_PC + 0x10);
}

/* A walk's output. */
static __u64 out[ST_MAX_USER];
static size_t nout;
static __u32 stop;
static struct st_java_counts cnt;
static __u64 leaf_rbx;	/* the leaf's rbx (a method entry's Method*) */

/* Walk from pc, fp = sp0 (the fake stack copied from sp0 up), r13; proc
 * NULL: no CFI anywhere, frame pointers (auto). */
static void walk_from(__u64 pc, __u64 fp, __u64 sp0, __u64 r13, __u32 max)
{
	struct st_unw_native_in in = {
		.ip = pc, .sp = sp0, .bp = fp, .r13 = r13, .rbx = leaf_rbx, .fallback = true,
		.stack = (const __u8 *)fk.stack + (sp0 - STACK),
		.stack_len = sizeof(fk.stack) - (sp0 - STACK),
		.java = &fake_proc, .jc = &cnt, .mem = fake_rd, .mem_arg = &fk,
	};
	struct st_unw_native_out res;

	memset(out, 0, sizeof(out));
	memset(&cnt, 0, sizeof(cnt));
	nout = st_unw_walk_native(&in, out, max, &res);
	stop = res.stop;
}

static void walk(__u64 pc, __u64 r13)
{
	walk_from(pc, fp_at(0), STACK, r13, ST_MAX_USER);
}

static void test_walk_fake(void **state)
{
	(void)state;
	fake_stack();
	/* the leaf's live bcp from r13; the native frames kept */
	walk(INTERP + 0x100, CODE(CM_A) + 7);
	/* (a zero fp at an address no mapping covers proves no end) */
	assert_int_equal(stop, ST_UNW_STOP_NO_TABLE);
	assert_int_equal(nout, 5);
	assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, 7));
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	assert_int_equal(out[2], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 5));
	assert_int_equal(out[3], NATIVE_PC);
	assert_int_equal(out[4], NATIVE_PC + 0x10);
	assert_int_equal(ST_JAVA_METHOD(out[1]), M_B);
	assert_int_equal(ST_JAVA_BCI(out[1]), 30);
	assert_int_equal(cnt.n[ST_JAVA_STAT_WALKS], 1);
	assert_int_equal(cnt.n[ST_JAVA_STAT_WALKED], 1);
	assert_int_equal(cnt.n[ST_JAVA_STAT_FRAMES], 3);
	assert_int_equal(cnt.n[ST_JAVA_STAT_LEAF_OUT], 0);
	/* r13 elsewhere: the leaf's slot */
	walk(INTERP + 0x100, 0x1234);
	assert_int_equal(nout, 5);
	assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, 3));
	/* the leaf in a method entry building its frame (rbp set, two of
	 * its slots pushed): rbx's method at bci 0, then its caller by the
	 * links; rbx not a method: its pc kept, the walk goes on */
	leaf_rbx = M_B;
	walk_from(INTERP + 0x100, fp_at(0), fp_at(0) - 16, 0x1234, ST_MAX_USER);
	assert_int_equal(nout, 5);
	assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 0));
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	assert_int_equal(out[2], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 5));
	assert_int_equal(cnt.n[ST_JAVA_STAT_HS_ENTRY], 1);
	assert_int_equal(cnt.n[ST_JAVA_STAT_END_READ], 0);
	leaf_rbx = 0x1235;
	walk_from(INTERP + 0x100, fp_at(0), fp_at(0) - 16, 0x1234, ST_MAX_USER);
	assert_int_equal(nout, 5);
	assert_int_equal(out[0], INTERP + 0x100);
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	assert_int_equal(cnt.n[ST_JAVA_STAT_BAD_METHOD], 1);
	leaf_rbx = 0;
	/* a native method's interpreted frame (no bytecodes: a JNI call
	 * under -Xint): the method without a bci */
	meta16(CM_A + 32, 0);
	walk(INTERP + 0x100, 0x1234);
	assert_int_equal(nout, 5);
	assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, ST_JAVA_BCI_NONE));
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	meta16(CM_A + 32, 20);
	/* the leaf in native code (its rbp the first Java frame's fp): the
	 * leaf's pc, then its caller, the first Java frame, by its slot */
	walk(NATIVE_PC, CODE(CM_A) + 7);
	assert_int_equal(cnt.n[ST_JAVA_STAT_LEAF_OUT], 1);
	assert_int_equal(nout, 5);
	assert_int_equal(out[0], NATIVE_PC);
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	/* the tag: neither native nor Python */
	assert_true(st_java_entry_is(out[1]));
	assert_false(st_java_entry_is(ST_PY_TAG | ST_PY_ADDR(ST_USER_END - 16, 5)));
	assert_false(st_java_entry_is(ST_USER_END - 1));
	assert_true(ST_JAVA_ADDR(ST_USER_END - 8, 0xffff) < (1ULL << 60));
	/* no JVM: the same stack walked by frame pointers, addresses only */
	{
		struct st_unw_native_in in = {
			.ip = INTERP + 0x100, .sp = STACK, .bp = fp_at(0), .fallback = true,
			.stack = (const __u8 *)fk.stack, .stack_len = sizeof(fk.stack),
		};
		struct st_unw_native_out res;

		nout = st_unw_walk_native(&in, out, ST_MAX_USER, &res);
		assert_int_equal(nout, 5);
		assert_int_equal(out[1], INTERP + 0x500);
		assert_int_equal(res.jframes, 0);
	}
}

/* The code memo: 8 entries, direct-mapped as BPF's, on only in
 * test_walk_code_memo(). */
static struct st_hs_code_ent code_memo[8];
static bool code_memo_on;

static struct st_hs_code_ent *test_code_memo(__u64 method)
{
	return code_memo_on ? &code_memo[st_hash_u64(method) & 7] : NULL;
}

static struct st_hs_code_ent *memo_of(__u64 method)
{
	struct st_hs_code_ent *e = test_code_memo(method);

	return e && e->method == method ? e : NULL;
}

/* Interpreted methods kept across walks: a method met before reads no
 * metaspace and gives the same frames; an entry whose bytecodes the
 * frame's bcp misses (the Method's space reused by another method, its
 * ConstMethod elsewhere) is read again and replaced; another process's
 * entry is not used; a native method (no bytecodes) is never kept. */
static void test_walk_code_memo(void **state)
{
	(void)state;
	memset(code_memo, 0, sizeof(code_memo));
	code_memo_on = true;
	fake_stack();
	/* first walk: A and B read (B's recursion once), then kept */
	meta_reads = 0;
	walk(INTERP + 0x100, CODE(CM_A) + 7);
	assert_int_equal(nout, 5);
	assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, 7));
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	assert_int_equal(out[2], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 5));
	assert_int_equal(meta_reads, 4);
	assert_non_null(memo_of(M_A));
	assert_int_equal(memo_of(M_A)->base, CODE(CM_A));
	assert_int_equal(memo_of(M_A)->size, 20);
	assert_non_null(memo_of(M_B));
	/* again, the leaf by r13 and by its slot: no read, the same frames */
	meta_reads = 0;
	walk(INTERP + 0x100, CODE(CM_A) + 7);
	assert_int_equal(meta_reads, 0);
	assert_int_equal(nout, 5);
	assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, 7));
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	assert_int_equal(out[2], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 5));
	assert_int_equal(cnt.n[ST_JAVA_STAT_FRAMES], 3);
	walk(INTERP + 0x100, 0x1234);
	assert_int_equal(meta_reads, 0);
	assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, 3));
	/* A's Method now another method's, its bytecodes elsewhere (B's old
	 * ConstMethod's space, 40 bytes): its bcp misses the kept range, so
	 * A is read again, and kept anew */
	meta64(M_A + 8, CM_B);
	word(fp_at(0) - 8 * 8, CODE(CM_B) + 33);
	meta_reads = 0;
	walk(INTERP + 0x100, 0x1234);
	assert_int_equal(meta_reads, 2);
	assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, 33));
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	assert_int_equal(memo_of(M_A)->base, CODE(CM_B));
	assert_int_equal(memo_of(M_A)->size, 40);
	/* an entry of another process (or image) is read past */
	memo_of(M_A)->tgid = 7;
	meta_reads = 0;
	walk(INTERP + 0x100, 0x1234);
	assert_int_equal(meta_reads, 2);
	assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, 33));
	assert_int_equal(memo_of(M_A)->tgid, 0);
	/* a native method: read at each walk, never kept */
	fake_stack();
	memset(code_memo, 0, sizeof(code_memo));
	meta16(CM_A + 32, 0);
	for (int k = 0; k < 2; k++) {
		meta_reads = 0;
		walk(INTERP + 0x100, 0x1234);
		assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, ST_JAVA_BCI_NONE));
		assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
		assert_int_equal(meta_reads, k ? 2 : 4);
	}
	assert_null(memo_of(M_A));
	code_memo_on = false;
}

/* An interpreted frame called by compiled code (a code cache pc outside
 * the interpreter): its caller's sp is the frame's own sender sp slot (fp
 * - 8), read before the walk moves to the caller's fp (a slot read from
 * the caller's frame instead, here a word above the caller's fp, would
 * stop the frame-pointer step there). */
/* --unwind fp's walk of a deferred sample (fpcopy.h) with the rule's
 * hooks: the fake JVM's */
static int seen_calls;

static const struct st_java_proc *fp_proc(void *ctx, __u32 pid, __u32 image)
{
	(void)ctx;
	(void)image;
	return pid == 42 ? &fake_proc : NULL;
}

static long fp_mem(void *arg, void *dst, __u32 n, __u64 addr)
{
	return fake_rd(((struct st_unw_java_arg *)arg)->ctx, dst, n, addr);
}

static void fp_seen(void *ctx, __u32 pid, __u32 image, const __u64 *frames, size_t n)
{
	(void)ctx;
	(void)image;
	(void)frames;
	assert_int_equal(pid, 42);
	assert_true(n == 5 || n == 2);
	seen_calls++;
}

static void test_fpcopy_java(void **state)
{
	struct st_unw_java_ops ops = { .proc = fp_proc, .mem = fp_mem, .seen = fp_seen,
				       .counts = &cnt, .ctx = &fk };
	struct st_deferred *d = calloc(1, sizeof(*d));
	unsigned st = 99;

	(void)state;
	assert_non_null(d);
	fake_stack();
	d->pid = 42;
	d->ip = INTERP + 0x100;
	d->sp = STACK;
	d->bp = fp_at(0);
	d->r13 = CODE(CM_A) + 7;
	d->stack_len = sizeof(fk.stack);
	memcpy(d->stack, fk.stack, sizeof(fk.stack));
	/* the Java frames by the rule, the native ones by frame pointers,
	 * complete where the chain ends (the kernel's walk) */
	memset(&cnt, 0, sizeof(cnt));
	memset(out, 0, sizeof(out));
	assert_int_equal(st_fpcopy_walk(d, &ops, out, ST_MAX_USER, &st), 5);
	assert_int_equal(st, ST_UNW_STOP_END);
	assert_int_equal(out[0], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, 7));
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	assert_int_equal(out[2], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 5));
	assert_int_equal(out[3], NATIVE_PC);
	assert_int_equal(out[4], NATIVE_PC + 0x10);
	assert_int_equal(cnt.n[ST_JAVA_STAT_FRAMES], 3);
	assert_int_equal(cnt.n[ST_JAVA_STAT_WALKED], 1);
	assert_int_equal(cnt.n[ST_JAVA_STAT_DEFERRED], 1);
	assert_int_equal(seen_calls, 1);
	/* at the depth bound: cut there */
	assert_int_equal(st_fpcopy_walk(d, &ops, out, 2, &st), 2);
	assert_int_equal(st, ST_UNW_STOP_DEPTH);
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	/* another process, or no hooks: the kernel's walk, addresses only */
	d->pid = 43;
	assert_int_equal(st_fpcopy_walk(d, &ops, out, ST_MAX_USER, &st), 5);
	assert_int_equal(st, ST_UNW_STOP_END);
	assert_int_equal(out[0], INTERP + 0x100);
	assert_int_equal(out[1], INTERP + 0x500);
	assert_int_equal(out[2], INTERP + 0x600);
	assert_int_equal(out[3], NATIVE_PC);
	assert_int_equal(st_fpcopy_walk(d, NULL, out, ST_MAX_USER, &st), 5);
	assert_int_equal(out[1], INTERP + 0x500);
	assert_int_equal(seen_calls, 2);	/* (the depth-bound walk's) */
	free(d);
}

static void test_walk_compiled_caller(void **state)
{
	struct st_java_proc proc = fake_proc;
	const __u64 cc_pc = INTERP + 0x150000;	/* compiled code: no blob tables */
	struct st_unw_native_in in = {
		.ip = INTERP + 0x100, .sp = STACK, .bp = fp_at(0), .r13 = 0x1234, .fallback = true,
		.stack = (const __u8 *)fk.stack, .stack_len = sizeof(fk.stack),
		.java = &proc, .jc = &cnt, .mem = fake_rd, .mem_arg = &fk,
	};
	struct st_unw_native_out res;

	(void)state;
	proc.code_end = INTERP + 0x200000;
	fake_stack();
	word(fp_at(2) + 8, cc_pc);		/* frame 2 returns to compiled code */
	word(fp_at(2) - 8, fp_at(3) - 16);	/* its sender sp */
	word(fp_at(3) - 8, fp_at(3) + 64);	/* the caller's word there: not an sp */
	memset(&cnt, 0, sizeof(cnt));
	nout = st_unw_walk_native(&in, out, ST_MAX_USER, &res);
	assert_int_equal(nout, 5);
	assert_int_equal(out[2], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 5));
	assert_int_equal(out[3], cc_pc);
	assert_int_equal(out[4], NATIVE_PC + 0x10);	/* by the fp from the right sp */
	assert_int_equal(cnt.n[ST_JAVA_STAT_FRAMES], 3);
	assert_int_equal(cnt.n[ST_JAVA_STAT_END_READ], 0);
}

static void test_walk_bad(void **state)
{
	(void)state;
	/* a frame without a Method*: its return address kept, counted, the
	 * walk goes on */
	fake_stack();
	word(fp_at(1) - 24, M_B + 1);
	walk(INTERP + 0x100, CODE(CM_A) + 7);
	assert_int_equal(nout, 5);
	assert_int_equal(cnt.n[ST_JAVA_STAT_BAD_METHOD], 1);
	assert_int_equal(out[1], INTERP + 0x500);
	assert_int_equal(out[2], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 5));
	/* a method whose ConstMethod is unreadable */
	fake_stack();
	meta64(M_B + 8, 0x30000000);
	walk(INTERP + 0x100, CODE(CM_A) + 7);
	assert_int_equal(cnt.n[ST_JAVA_STAT_FRAMES], 1);
	assert_int_equal(cnt.n[ST_JAVA_STAT_BAD_METHOD], 2);
	/* a bcp past its method's code (also the leaf's: r13 and slot) */
	fake_stack();
	word(fp_at(2) - 64, CODE(CM_B) + 40);
	word(fp_at(0) - 64, CODE(CM_A) - 1);
	walk(INTERP + 0x100, CODE(CM_A) + 20);
	assert_int_equal(cnt.n[ST_JAVA_STAT_FRAMES], 1);
	assert_int_equal(out[0], INTERP + 0x100);
	assert_int_equal(out[1], ST_JAVA_TAG | ST_JAVA_ADDR(M_B, 30));
	assert_int_equal(cnt.n[ST_JAVA_STAT_BAD_BCP], 2);
	/* a loop: a caller's fp not above */
	fake_stack();
	word(fp_at(1), fp_at(0));
	walk(INTERP + 0x100, CODE(CM_A) + 7);
	assert_int_equal(stop, ST_UNW_STOP_NO_TABLE);
	assert_int_equal(nout, 3);
	/* unaligned, unreadable */
	fake_stack();
	word(fp_at(1), fp_at(2) + 1);
	walk(INTERP + 0x100, CODE(CM_A) + 7);
	assert_int_equal(stop, ST_UNW_STOP_NO_TABLE);
	fake_stack();
	word(fp_at(1), STACK + 8 * STACK_WORDS + 0x1000);
	walk(INTERP + 0x100, CODE(CM_A) + 7);
	assert_int_equal(stop, ST_UNW_STOP_NO_TABLE);
	assert_int_equal(cnt.n[ST_JAVA_STAT_END_READ], 1);
	assert_int_equal(nout, 3);
	/* its methods unreadable (the process gone): addresses, counted */
	fake_stack();
	{
		struct st_unw_native_in in = {
			.ip = INTERP + 0x100, .sp = STACK, .bp = fp_at(0), .fallback = true,
			.stack = (const __u8 *)fk.stack, .stack_len = sizeof(fk.stack),
			.java = &fake_proc, .jc = &cnt,
		};
		struct st_unw_native_out res;

		memset(&cnt, 0, sizeof(cnt));
		nout = st_unw_walk_native(&in, out, ST_MAX_USER, &res);
		assert_int_equal(nout, 5);
		assert_int_equal(res.jframes, 0);
		assert_true(res.mem_failed > 0);
		assert_int_equal(cnt.n[ST_JAVA_STAT_BAD_METHOD], 3);
	}
}

static void test_walk_limits(void **state)
{
	int i, frames = ST_MAX_USER + 10;

	(void)state;
	/* more Java frames than walked: cut at the depth limit */
	memset(&fk, 0, sizeof(fk));
	meta64(M_A + 8, CM_A);
	meta16(CM_A + 32, 20);
	for (i = 0; i < frames; i++) {
		__u64 fp = STACK + 0x100 + 0x60 * (__u64)i;

		word(fp - 24, M_A);
		word(fp - 64, CODE(CM_A) + 1);
		word(fp, fp + 0x60);
		word(fp + 8, INTERP + 0x40);
	}
	walk_from(INTERP + 0x10, STACK + 0x100, STACK, 0, ST_MAX_USER);
	assert_int_equal(nout, ST_MAX_USER);
	assert_int_equal(stop, ST_UNW_STOP_DEPTH);
	assert_int_equal(cnt.n[ST_JAVA_STAT_FRAMES], ST_MAX_USER);
	for (i = 0; i < ST_MAX_USER; i++)
		assert_int_equal(out[i], ST_JAVA_TAG | ST_JAVA_ADDR(M_A, 1));
}

/* ---- the line table ----------------------------------------------------- */

static void test_lines(void **state)
{
	/* JDK 17 (X = 0): (0, 17) long: 0xff, 0, 34; (4, 18) short: 4 << 3 | 1;
	 * (300, 25) long: bci delta 296 -> zigzag 592 -> 592 - 192 = 400 ->
	 * bytes 192 + 400 % 64 = 208, 400 >> 6 = 6; line delta 7 -> 14 */
	static const __u8 t17[] = { 0xff, 0, 34, 33, 0xff, 208, 6, 14, 0 };
	/* Temurin 25 (X = 1): each byte one more, the low range 191 wide:
	 * 592 - 191 = 401 -> 1 + 191 + 401 % 64 = 209, 401 >> 6 = 6 -> 7 */
	static const __u8 t25[] = { 0xff, 1, 35, 33, 0xff, 209, 7, 15, 0 };

	(void)state;
	assert_int_equal(st_jlines__find(t17, sizeof(t17), 0, 0), 17);
	assert_int_equal(st_jlines__find(t17, sizeof(t17), 0, 3), 17);
	assert_int_equal(st_jlines__find(t17, sizeof(t17), 0, 4), 18);
	assert_int_equal(st_jlines__find(t17, sizeof(t17), 0, 299), 18);
	assert_int_equal(st_jlines__find(t17, sizeof(t17), 0, 300), 25);
	assert_int_equal(st_jlines__find(t17, sizeof(t17), 0, 5000), 25);
	assert_int_equal(st_jlines__end(t17, sizeof(t17), 0), sizeof(t17));
	assert_int_equal(st_jlines__find(t25, sizeof(t25), 1, 0), 17);
	assert_int_equal(st_jlines__find(t25, sizeof(t25), 1, 300), 25);
	assert_int_equal(st_jlines__find(t25, sizeof(t25), 1, 100), 18);
	assert_int_equal(st_jlines__end(t25, sizeof(t25), 1), sizeof(t25));
	/* X = 1 refuses the byte 0 inside a number: the table ends there */
	assert_int_equal(st_jlines__end(t17, sizeof(t17), 1), 0);
	/* cut tables: what is whole is used, no end */
	assert_int_equal(st_jlines__find(t17, 6, 0, 300), 18);
	assert_int_equal(st_jlines__end(t17, 6, 0), 0);
	assert_int_equal(st_jlines__find(t17, 0, 0, 3), 0);
}

/* ---- the seeds: names and lines ----------------------------------------- */

struct img {
	__u8 b[1 << 16];
	size_t n;
};

static struct img seed;

static long seed_rd(void *arg, void *dst, __u32 n, __u64 a)
{
	const struct img *m = arg;

	if (a < JM_MEM || a - JM_MEM > m->n || n > m->n - (a - JM_MEM))
		return -EFAULT;
	memcpy(dst, m->b + (a - JM_MEM), n);
	return 0;
}

static int load_seed(const char *name)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	ssize_t k = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	FILE *f;

	dir[k > 0 ? k : 0] = '\0';
	snprintf(path, sizeof(path), "%s/../../tests/fuzz/corpus/jmethod/%s", dirname(dir), name);
	f = fopen(path, "rb");
	if (!f)
		return -1;
	seed.n = fread(seed.b, 1, sizeof(seed.b), f);
	fclose(f);
	return 0;
}

static struct st_jmethod jm;

static void test_names(void **state)
{
	static const struct {
		const char *seed;
		__u32 bci, line;
	} cases[] = {
		{ "jdk17_bci0", 0, 17 }, { "jdk17_bci3", 3, 17 }, { "jdk17_bci4", 4, 18 },
		{ "jdk17_bci299", 299, 18 }, { "jdk17_bci300", 300, 25 },
		{ "jdk25_bci0", 0, 17 }, { "jdk25_bci4", 4, 18 }, { "jdk25_bci300", 300, 25 },
	};
	struct st_jvm_layout l;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int jdk25 = cases[i].seed[3] == '2';

		if (load_seed(cases[i].seed)) {
			printf("    seed absent: tests/fuzz/corpus/jmethod/%s\n", cases[i].seed);
			fail();
		}
		jm_fake_layout(&l, jdk25);
		assert_int_equal(st_jmethod__read(&l, jdk25 ? 25 : 17, seed_rd, &seed, JM_METHOD, &jm),
				 0);
		assert_string_equal(jm.klass, "com.example.Deep");
		assert_string_equal(jm.name, "main");
		assert_string_equal(jm.sig, "([Ljava/lang/String;)V");
		assert_string_equal(jm.source, "Deep.java");
		assert_int_equal(jm.code_size, 320);
		assert_int_equal(jm.lines_x, jdk25);
		assert_true(jm.nlines > 0 && jm.nlines < 16);
		assert_int_equal(st_jmethod__line(&jm, cases[i].bci), cases[i].line);
		/* out of the code: no line */
		assert_int_equal(st_jmethod__line(&jm, 320), 0);
	}
	/* a hidden class (a lambda's): its Symbol's '+' shown '/', as the
	 * JVM's Class.getName() */
	load_seed("jdk17_bci0");
	jm_fake_layout(&l, 0);
	{
		char *k = memmem(seed.b, seed.n, "com/example/Deep", 16);

		assert_non_null(k);
		memcpy(k, "Led$$Lam+0x7f10a", 16);
	}
	assert_int_equal(st_jmethod__read(&l, 17, seed_rd, &seed, JM_METHOD, &jm), 0);
	assert_string_equal(jm.klass, "Led$$Lam/0x7f10a");
	/* a name index out of the pool; a layout member missing */
	load_seed("jdk17_bci0");
	jm_fake_layout(&l, 0);
	seed.b[0x100 + 34] = 9;
	assert_int_equal(st_jmethod__read(&l, 17, seed_rd, &seed, JM_METHOD, &jm), 0);
	assert_string_equal(jm.name, "");
	assert_string_equal(jm.klass, "com.example.Deep");
	l.missing[ST_JF_klass_name / 64] |= 1ULL << (ST_JF_klass_name % 64);
	assert_int_equal(st_jmethod__read(&l, 17, seed_rd, &seed, JM_METHOD, &jm), -ENOENT);
	/* not a method */
	jm_fake_layout(&l, 0);
	assert_int_equal(st_jmethod__read(&l, 17, seed_rd, &seed, JM_METHOD + 4, &jm), -EFAULT);
	assert_int_equal(st_jmethod__read(&l, 17, seed_rd, &seed, 0x50000000, &jm), -EFAULT);
}

/* ---- the interpreter's slots and range from the layout ------------------ */

struct qmem {
	__u64 queue;	/* at 0x1000: AbstractInterpreter::_code */
	__u8 q[48];	/* at 0x2000: the StubQueue */
};

static long q_rd(void *arg, void *dst, __u32 n, __u64 a)
{
	struct qmem *m = arg;

	if (a == 0x1000 && n == 8) {
		memcpy(dst, &m->queue, 8);
		return 0;
	}
	if (a >= 0x2000 && a + n <= 0x2000 + sizeof(m->q)) {
		memcpy(dst, m->q + (a - 0x2000), n);
		return 0;
	}
	return -EFAULT;
}

static void test_java_proc(void **state)
{
	struct st_jvm_layout l;
	struct st_java_proc p;
	struct qmem m = { .queue = 0x2000 };
	__u64 buf = 0x7f0000100000ULL;
	__s32 limit = 300000;

	(void)state;
	memcpy(m.q + 8, &buf, 8);
	memcpy(m.q + 20, &limit, 4);
	jm_fake_layout(&l, 0);
	l.abstractinterpreter_code = 0x1000;
	l.stubqueue_stub_buffer = 8;
	l.stubqueue_buffer_limit = 20;
	l.frame_interpreter_sender_sp_offset = -1;
	l.frame_interpreter_last_sp_offset = -2;
	/* as in JDK 17 and 25: the method and bcp slots not described */
	l.missing[ST_JF_frame_interpreter_method_offset / 64] |=
		1ULL << (ST_JF_frame_interpreter_method_offset % 64);
	l.missing[ST_JF_frame_interpreter_bcp_offset / 64] |=
		1ULL << (ST_JF_frame_interpreter_bcp_offset % 64);
	assert_int_equal(st_jvm_layout__java_proc(&l, q_rd, &m, &p), 0);
	assert_int_equal(p.l.frame_method, -3);
	assert_int_equal(p.l.frame_bcp, -8);
	assert_int_equal(p.interp_start, buf);
	assert_int_equal(p.interp_end, buf + 300000);
	assert_int_equal(p.l.constmethod_size, 48);
	assert_int_equal(p.l.constmethod_code_size, 32);
	/* another frame layout: refused */
	l.frame_interpreter_last_sp_offset = -3;
	assert_int_equal(st_jvm_layout__java_proc(&l, q_rd, &m, &p), -ENOTSUP);
	l.frame_interpreter_last_sp_offset = -2;
	/* an absurd queue */
	limit = -1;
	memcpy(m.q + 20, &limit, 4);
	assert_int_equal(st_jvm_layout__java_proc(&l, q_rd, &m, &p), -EFAULT);
	m.queue = 0;
	assert_int_equal(st_jvm_layout__java_proc(&l, q_rd, &m, &p), -EFAULT);
	l.missing[ST_JF_abstractinterpreter_code / 64] |= 1ULL << (ST_JF_abstractinterpreter_code % 64);
	assert_int_equal(st_jvm_layout__java_proc(&l, q_rd, &m, &p), -ENOENT);
}

/* ---- a live JVM --------------------------------------------------------- */

/* "Deep.c:4-8|Deep.b:11-11|..." into up to max frames. */
struct want {
	char name[128];
	__u32 lo, hi;
};

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

static const char *const stat_names[ST_JAVA_STAT__MAX] = {
	"walks", "walked", "frames", "leaf-out", "bad-method", "bad-bcp", "end-read", "code-cache",
	"fp-mode", "methods", "methods-lost", "deferred", "late-no-mem", "end-bad-fp", "hs-frames",
	"hs-epilogue", "hs-far-pc", "hs-deopt", "hs-no-blob", "hs-bad-blob", "hs-prologue",
	"hs-stub-leaf", "hs-bad-ra", "hs-read", "hs-entry", "hs-cache-miss", "hs-cache-stale",
};
_Static_assert(ST_JAVA_STAT__MAX == 27, "stat_names");

#define LIVE_STACK (256 << 10)	/* bytes of the stack copied (from rsp) */

/* Copy up to LIVE_STACK bytes of tid's stack from sp into buf: the bytes
 * copied (a read that crosses the stack's top is retried shorter). */
static size_t copy_stack(int pid, __u64 sp, __u8 *buf)
{
	size_t n = LIVE_STACK;

	while (n >= 4096) {
		if (!st_jvm_read_process(&pid, buf, (__u32)n, sp))
			return n;
		n /= 2;
	}
	return 0;
}

/* Stop the seized thread tid (PTRACE_INTERRUPT) and wait for that stop;
 * a signal the thread got meanwhile (the JVM's own SIGSEGV at a safepoint
 * poll, say) is passed on, not swallowed. */
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

static void test_live(void **state)
{
	const char *pid_s = getenv("ST_TEST_JVM_PID"), *tid_s = getenv("ST_TEST_JVM_TID"),
		   *expect_s = getenv("ST_TEST_JAVA_EXPECT"), *walks_s = getenv("ST_TEST_JAVA_WALKS");
	struct st_jvm_proc *jp = calloc(1, sizeof(*jp));
	struct st_java_proc p;
	struct want want[8];
	struct st_java_counts c = {};
	__u8 *stack = malloc(LIVE_STACK);
	int nwant, pid, tid, walks, full = 0, other = 0;
	double t_walk = 0, t_name = 0;

	(void)state;
	if (!pid_s || !tid_s || !expect_s) {
		printf("    needs a JVM's thread in interpreted code: ST_TEST_JVM_PID, "
		       "ST_TEST_JVM_TID, ST_TEST_JAVA_EXPECT (tests/integration/test_java.py)\n");
		free(jp);
		free(stack);
		skip();
	}
	assert_non_null(jp);
	assert_non_null(stack);
	pid = atoi(pid_s);
	tid = atoi(tid_s);
	walks = walks_s ? atoi(walks_s) : 50;
	nwant = parse_expect(expect_s, want, 8);
	assert_true(nwant > 0);
	assert_int_equal(st_jvm_proc__probe(NULL, pid, jp), ST_JVM_PROBE_OK);
	assert_int_equal(st_jvm_layout__java_proc(&jp->l, st_jvm_read_process, &pid, &p), 0);
	printf("    pid %d tid %d: JDK %d, interpreter [%#llx, %#llx) (%llu KiB), slots "
	       "method %d bcp %d\n", pid, tid, jp->version.major,
	       (unsigned long long)p.interp_start, (unsigned long long)p.interp_end,
	       (unsigned long long)(p.interp_end - p.interp_start) / 1024, p.l.frame_method,
	       p.l.frame_bcp);
	assert_int_equal(ptrace(PTRACE_SEIZE, tid, NULL, NULL), 0);
	for (int i = 0; i < walks; i++) {
		struct user_regs_struct regs;
		struct st_unw_native_in in = { .fallback = true, .java = &p, .jc = &c,
					       .mem = st_jvm_read_process, .mem_arg = &pid };
		struct st_unw_native_out res;
		int k = 0, matched = 0, jn = 0;
		char chain[1024] = "";
		double t0;

		usleep(20000 + (i % 7) * 3000);	/* somewhere else in the loop each time */
		stop_thread(tid);
		assert_int_equal(ptrace(PTRACE_GETREGS, tid, NULL, &regs), 0);
		in.ip = regs.rip;
		in.sp = regs.rsp;
		in.bp = regs.rbp;
		in.r13 = regs.r13;
		in.stack = stack;
		in.stack_len = copy_stack(pid, regs.rsp, stack);
		t0 = now_ms();
		nout = st_unw_walk_native(&in, out, ST_MAX_USER, &res);
		t_walk += now_ms() - t0;
		/* the Java frames named, in order, against the expected chain */
		for (size_t f = 0; f < nout; f++) {
			__u64 m = ST_JAVA_METHOD(out[f]);
			__u32 bci = ST_JAVA_BCI(out[f]), line;

			if (!st_java_entry_is(out[f]))
				continue;
			char name[2 * ST_JNAME_MAX + 2];
			const char *dot;

			t0 = now_ms();
			assert_int_equal(st_jmethod__read(&jp->l, jp->version.major, st_jvm_read_process,
							  &pid, m, &jm), 0);
			line = st_jmethod__line(&jm, bci);
			t_name += now_ms() - t0;
			dot = strrchr(jm.klass, '.');
			snprintf(name, sizeof(name), "%s.%s", dot ? dot + 1 : jm.klass, jm.name);
			if (strlen(chain) < sizeof(chain) - 200)
				snprintf(chain + strlen(chain), sizeof(chain) - strlen(chain), "%s%s:%u(%s)",
					 jn++ ? " < " : "", name, line, jm.source);
			if (k < nwant && !strcmp(name, want[k].name)) {
				if (line >= want[k].lo && line <= want[k].hi)
					matched++;
				k++;
			}
		}
		if (i < 3 || (matched != nwant && other < 5))
			printf("    walk %d: pc %#llx %s, %zu frames (%u Java), stop %u: %s\n", i,
			       (unsigned long long)regs.rip,
			       regs.rip >= p.interp_start && regs.rip < p.interp_end ? "(interpreter)"
										      : "(elsewhere)",
			       nout, res.jframes, res.stop, chain);
		if (matched == nwant)
			full++;
		else
			other++;
		assert_int_equal(ptrace(PTRACE_CONT, tid, NULL, NULL), 0);
	}
	stop_thread(tid);	/* (a running tracee cannot be detached) */
	assert_int_equal(ptrace(PTRACE_DETACH, tid, NULL, NULL), 0);
	printf("    %d of %d walks named the whole chain (%.0f%%); walk %.3f ms, naming %.3f ms "
	       "on average; counts:", full, walks, 100.0 * full / walks, t_walk / walks,
	       t_name / walks);
	for (int s = 0; s < ST_JAVA_STAT__MAX; s++)
		printf(" %s %llu", stat_names[s], (unsigned long long)c.n[s]);
	printf("\n");
	assert_int_equal(c.n[ST_JAVA_STAT_WALKS], walks);
	assert_true(full * 10 >= walks * 9);
	free(stack);
	free(jp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_fake),
		cmocka_unit_test(test_walk_code_memo),
		cmocka_unit_test(test_fpcopy_java),
		cmocka_unit_test(test_walk_compiled_caller),
		cmocka_unit_test(test_walk_bad),
		cmocka_unit_test(test_walk_limits),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_java_proc),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

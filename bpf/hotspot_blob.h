/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hotspot_blob.h - one step of a stack walk over a HotSpot code blob: a
 * compiled Java method (an nmethod, C1 or C2), a native method's wrapper
 * (a JNI call), or a stub (the call stub, runtime stubs, adapters, vtable
 * stubs). From a frame's pc, sp and rbp: the blob that holds the pc, the
 * frame's caller (pc, sp, rbp) and what the frame array keeps for it. One
 * source, compiled into the BPF program (the unwinder's HotSpot hook) and
 * natively (the daemon's deferred walks, user/collect/unwind/unwind_native.h;
 * tests/unit/test_hsblob.c, on fake memory and on a live JVM). Called by
 * bpf/hotspot_step.h's rule. Interpreted frames are not this file's: a pc
 * in the interpreter returns 0, as any pc outside the code cache does.
 *
 * The blob: the code cache's heaps (struct st_java_blobs, read by the
 * daemon once per JVM) are split in segments of 2^log2 bytes; a heap's
 * segment map holds a byte per segment: 0xff free, 0 the first segment of
 * a block, else how many segments back to hop (at most 254: a long block
 * takes one hop per 254 segments; ST_HS_SEGMAP_STEPS bounds them). The
 * block starts with a HeapBlock header, the CodeBlob follows it
 * (HotSpot's CodeHeap::find_block_for). Its name's first four bytes tell
 * its kind ("nmethod", "native nmethod", "vtable chunks", others: stubs),
 * as in both JDK 17 and 25 (25 also has CodeBlob::_kind; 17 has not).
 *
 * The frame (HotSpot's frame::sender for a code blob, frame_x86.cpp): a
 * compiled frame keeps no frame pointer; the caller's sp is sp + 8 *
 * CodeBlob::_frame_size, the return address at caller sp - 8, the
 * caller's rbp at caller sp - 16 (every compiled prologue saves it there).
 * The leaf (exact: an interrupted pc, not a return address) may be where
 * the frame is not whole:
 *   - before CodeBlob::_frame_complete_offset (the prologue: the inline
 *     cache check, the stack bang, push rbp, sub rsp): the return address
 *     is at sp, sp + 8 or sp + frame size - 8, as the instruction at the
 *     pc tells (st_hs_prologue), else the one candidate that is code
 *     cache code; none or more than one stops the walk
 *     (ST_JAVA_STAT_HS_PROLOGUE): never a guess;
 *   - in the return sequence (add rsp; pop rbp; the return poll, cmp rsp,
 *     [r15 + d]; ja; ret): recognized by its bytes at the pc, which
 *     decode exactly (a pc is an instruction's start): from pop rbp on,
 *     the frame is gone (counted ST_JAVA_STAT_HS_EPILOGUE);
 *   - in the nmethod's stub section (past nmethod::_stub_offset: the
 *     return poll's slow path, exception and deopt handlers): stop
 *     (ST_JAVA_STAT_HS_STUB_LEAF).
 * Stubs: those with a frame size (runtime stubs, the safepoint,
 * deoptimization, uncommon trap and exception blobs, native wrappers) are
 * left the same way; those without (StubRoutines, adapters, C1's Runtime1
 * stubs whose frame size is -1) at the leaf by the word at sp when it is
 * code cache code after a call instruction (st_hs_ra_at_sp(): nothing
 * pushed yet), else by rbp, where
 * rbp is a frame pointer of theirs (within ST_HS_STUB_FP_MAX above sp, its
 * return address code cache code): the call stub (its return address
 * StubRoutines::_call_stub_return_address, called from the VM's C++)
 * always, others only so, else the leaf stops (ST_JAVA_STAT_HS_STUB_LEAF);
 * a vtable stub and a method handle intrinsic (a native nmethod without
 * a frame: leaves that only jump) and JNI's fast field getters
 * (leaves called from native code that push nothing) by the return
 * address at sp.
 * Every caller of compiled code, a native wrapper or a stub but the call
 * stub is code cache code: a return address elsewhere stops the walk
 * (ST_JAVA_STAT_HS_BAD_RA) rather than emit a wrong frame.
 *
 * What the frame array keeps (f->entry): an nmethod's frame as
 * ST_JAVA_TAG | ST_JAVA_JIT | ST_JAVA_JIT_ADDR (bpf/stacktree.h: the
 * nmethod, the pc, the compile id: the daemon expands the inlined methods,
 * user/collect/runtimes/java/jscopes.h); a native wrapper's as its Java
 * native method's, ST_JAVA_TAG | ST_JAVA_ADDR(Method*, ST_JAVA_BCI_NONE);
 * a stub's 0 (the caller keeps the return address: a native frame).
 *
 * A blob's fields are read once a walk and, across samples, once while
 * the blob lives: st_hs_blob_get() takes a blob from the walk's memo
 * (bpf/hotspot_memo.h; NULL natively), else from the includer's blob
 * cache (st_hs_cache_get()/st_hs_cache_put(): BPF's java_blob_cache,
 * natively none) when its name pointer and compile id are still at its
 * address (st_hs_blob_valid()), else reads it (st_hs_blob_read()).
 *
 * A deoptimized frame returns to its nmethod's deopt handler: its entry
 * takes the original pc the JVM saved (at sp + nmethod::_orig_pc_offset)
 * for its scopes (counted ST_JAVA_STAT_HS_DEOPT).
 *
 * Not handled (left for later, each stops or shows as its own method):
 * the upcall stubs of the foreign function API.
 *
 * Contract with the includer (as bpf/unwind_step.h's): ST_HS_PART(i) (a
 * bench build's count of enum st_java_part i, bpf/java.bpf.h; else
 * nothing), struct st_unw_env,
 * st_unw_read_mem(e, dst, size, addr) (code cache and blob reads: BPF one
 * helper call each, natively the process's memory through the env's
 * reader), st_unw_read8(e, addr, out) (stack words: natively the copied
 * stack). Loops: bpf/dual.h's st_loop.
 */
#ifndef STACKTREE_HOTSPOT_BLOB_H
#define STACKTREE_HOTSPOT_BLOB_H

#include "dual.h"
#include "stacktree.h"
#include "call_insn.h"
#include "hotspot_memo.h"

#define ST_HS_SEGMAP_STEPS 32	/* segment map hops: blocks up to 8128 segments
				 * (508 KiB of 64-byte segments) */
#define ST_HS_FRAME_MAX 0x4000	/* a frame size in words above this is absurd (128 KiB) */
#define ST_HS_STUB_FP_MAX 4096	/* a stub's rbp at most this far above its sp */

/* The first four bytes of a blob's name, little-endian */
#define ST_HS_NAME_NMETHOD 0x74656d6eU	/* "nmethod" */
#define ST_HS_NAME_NATIVE 0x6974616eU	/* "native nmethod" */
#define ST_HS_NAME_INTERP 0x65746e49U	/* "Interpreter" */
#define ST_HS_NAME_VTABLE 0x62617476U	/* "vtable chunks" */
#define ST_HS_NAME_JNI_FAST 0x5f696e6aU	/* "jni_fast_Get...Field" */

/* One step's output: the caller's registers and what to keep. */
struct st_hs_frame {
	__u64 ip, sp, bp;	/* the caller's */
	__u64 entry;		/* what the frame array holds for this frame: a Java
				 * entry, or 0 to keep the return address */
	__u32 stop;		/* enum st_java_stat when the walk must stop */
	__u32 note;		/* an enum st_java_stat to count besides
				 * ST_JAVA_STAT_HS_FRAMES (the walk goes on), or
				 * ST_JAVA_STAT__MAX */
	__u32 cache;		/* the blob cache's: ST_JAVA_STAT_HS_CACHE_MISS or
				 * _STALE, or ST_JAVA_STAT__MAX (a hit, or none) */
	__u32 pad;
};

static __always_inline bool st_hs_in_cc(const struct st_java_blobs *b, __u64 a)
{
	return a >= b->cc_lo && a < b->cc_hi;
}

static __always_inline int st_hs_stop(struct st_hs_frame *f, __u32 why)
{
	f->stop = why;
	return -1;
}

/* The segment map walk back to a block's first segment. */
struct st_hs_seg {
	struct st_unw_env *e;
	__u64 segmap, seg;
	__u32 found;		/* 1: seg is the block's start; 2: failed */
};

ST_CB long st_hs_seg_step(__u32 i, void *ctx)
{
	struct st_hs_seg *q = ctx;
	__u8 v = 0xff;

	(void)i;
	if (st_unw_read_mem(q->e, &v, 1, q->segmap + q->seg) || v == 0xff || v > q->seg) {
		q->found = 2;
		return 1;
	}
	if (!v) {
		q->found = 1;
		return 1;
	}
	q->seg -= v;
	return 0;
}

/* The caller of a frame whose return address is at sp + ra_at, its
 * caller's rbp at sp + ra_at - 8 when bp_saved (else bp is kept): 0, or
 * -1 (unreadable: f->stop set). */
static __always_inline int st_hs_leave(struct st_unw_env *e, __u64 sp, __u64 bp, __u64 ra_at,
				       bool bp_saved, struct st_hs_frame *f)
{
	__u64 ra = 0, nbp = bp;

	if (st_unw_read8(e, sp + ra_at, &ra) || (bp_saved && st_unw_read8(e, sp + ra_at - 8, &nbp)))
		return st_hs_stop(f, ST_JAVA_STAT_HS_READ);
	f->ip = ra;
	f->sp = sp + ra_at + 8;
	f->bp = nbp;
	return 0;
}

/* Whether the word at sp is a return address into the code cache: code
 * cache code that a call instruction ends at (bpf/call_insn.h). */
static __always_inline bool st_hs_ra_at_sp(struct st_unw_env *e, const struct st_java_blobs *b,
					   __u64 sp)
{
	__u8 code[ST_CALL_MAX_LEN];
	__u64 ra = 0, target;

	if (st_unw_read8(e, sp, &ra) || !st_hs_in_cc(b, ra) ||
	    st_unw_read_mem(e, code, sizeof(code), ra - sizeof(code)))
		return false;
	return st_call_insn_before(code, sizeof(code), ra, &target) != ST_CALL_NONE;
}

/* The leaf in a frame's prologue (size: the whole frame's bytes, return
 * address included). First from the instruction at ip, which decodes
 * exactly (ip is an instruction's start): at the stack bang (89 84 24
 * d32) or push rbp (55) nothing is pushed yet; at sub rsp (48 83|81 ec)
 * after push rbp (55, or 48 89 e5 after it) rbp is pushed, else nothing
 * is; at mov [rsp + d], rbp (48 89 6c|ac 24: C2 without a stack bang) the
 * frame is allocated, rbp not saved. Elsewhere (the inline cache check,
 * an entry barrier): the one place of the return address that holds code
 * cache code, of sp (nothing pushed), sp + 8 (rbp pushed), size - 8 (the
 * frame built). 0, or -1 (no place or more than one, a return address
 * out of the code cache, unreadable). */
static __always_inline int st_hs_prologue(struct st_unw_env *e, const struct st_java_blobs *b,
					  __u64 ip, __u64 sp, __u64 bp, __u64 size,
					  struct st_hs_frame *f)
{
	__u64 w0 = 0, w1 = 0, wf = 0;
	__u8 c[8];	/* the code at [ip - 4, ip + 4) */
	__u32 n = 0;
	int state = -1;	/* 0: nothing pushed; 1: rbp pushed; 2: frame allocated */

	if (!st_unw_read_mem(e, c, sizeof(c), ip - 4)) {
		if (c[4] == 0x55 || (c[4] == 0x89 && c[5] == 0x84 && c[6] == 0x24))
			state = 0;
		else if (c[4] == 0x48 && (c[5] == 0x83 || c[5] == 0x81) && c[6] == 0xec)
			state = c[3] == 0x55 || (c[1] == 0x48 && c[2] == 0x89 && c[3] == 0xe5) ? 1 : 0;
		else if (c[4] == 0x48 && c[5] == 0x89 && c[6] == 0xe5 && c[3] == 0x55)
			state = 1;
		else if (c[4] == 0x48 && c[5] == 0x89 && (c[6] == 0x6c || c[6] == 0xac) && c[7] == 0x24)
			state = 2;
	}
	if (state >= 0) {
		if (st_hs_leave(e, sp, bp, state == 0 ? 0 : state == 1 ? 8 : size - 8, state == 1, f))
			return -1;
		return st_hs_in_cc(b, f->ip) ? 0 : st_hs_stop(f, ST_JAVA_STAT_HS_PROLOGUE);
	}
	if (st_unw_read8(e, sp, &w0) || st_unw_read8(e, sp + 8, &w1))
		return st_hs_stop(f, ST_JAVA_STAT_HS_READ);
	if (size > 16 && st_unw_read8(e, sp + size - 8, &wf))
		return st_hs_stop(f, ST_JAVA_STAT_HS_READ);
	n = st_hs_in_cc(b, w0) + st_hs_in_cc(b, w1) + (size > 16 && st_hs_in_cc(b, wf));
	if (n != 1)
		return st_hs_stop(f, ST_JAVA_STAT_HS_PROLOGUE);
	if (st_hs_in_cc(b, w0))
		return st_hs_leave(e, sp, bp, 0, false, f);
	if (st_hs_in_cc(b, w1))
		return st_hs_leave(e, sp, bp, 8, true, f);
	return st_hs_leave(e, sp, bp, size - 8, true, f);
}

/* Whether the code at ip is a compiled method's return sequence from its
 * pop rbp on: 0 no, 1 yes and rbp popped already (return address at sp),
 * 2 yes before the pop (rbp at sp, the return address at sp + 8). The
 * sequence (C1 and C2, JDK 17 to 25): [pop rbp] [cmp rsp, [r15 + d8|d32];
 * ja rel8|rel32] ret; or the pc at its ja. */
static __always_inline int st_hs_epilogue(struct st_unw_env *e, __u64 ip)
{
	__u8 c[16];
	int popped = 1;

	if (st_unw_read_mem(e, c, 1, ip))
		return 0;
	if (c[0] == 0x5d) {	/* pop rbp */
		popped = 2;
		ip++;
	}
	if (st_unw_read_mem(e, c, sizeof(c), ip))
		return 0;
	if (c[0] == 0xc3)	/* ret */
		return popped;
	/* cmp rsp, [r15 + d8] (49 3b 67 d8) or [r15 + d32] (49 3b a7 d32) */
	if (c[0] == 0x49 && c[1] == 0x3b && c[2] == 0x67) {
		if ((c[4] == 0x0f && c[5] == 0x87 && c[10] == 0xc3) || (c[4] == 0x77 && c[6] == 0xc3))
			return popped;
	}
	if (c[0] == 0x49 && c[1] == 0x3b && c[2] == 0xa7) {
		if ((c[7] == 0x0f && c[8] == 0x87 && c[13] == 0xc3) || (c[7] == 0x77 && c[9] == 0xc3))
			return popped;
	}
	/* at the poll's ja: only after the pop */
	if (popped == 1 && ((c[0] == 0x0f && c[1] == 0x87 && c[6] == 0xc3) ||
			    (c[0] == 0x77 && c[2] == 0xc3)))
		return 1;
	return 0;
}

/* Whether ip is the nmethod k's deopt handler (a deoptimized frame's
 * return address): then *ip becomes the original pc the JVM saved at sp +
 * nmethod::_orig_pc_offset, when it lies in the nmethod's code. */
static __always_inline bool st_hs_deopt_pc(struct st_unw_env *e, const struct st_java_blobs *b,
					   const struct st_hs_blob *k, __u64 sp, __u64 *ip)
{
	__u64 orig = 0;
	__s32 off = 0, size = 0;

	if (!k->deopt_ok || *ip != k->deopt ||
	    st_unw_read_mem(e, &off, sizeof(off), k->lo + b->orig_pc) || off < 0 ||
	    off > 8 * ST_HS_FRAME_MAX || st_unw_read8(e, sp + (__u64)off, &orig) ||
	    st_unw_read_mem(e, &size, sizeof(size), k->lo + b->size) || size <= 0 ||
	    orig < k->code || orig >= k->lo + (__u64)size)
		return false;
	*ip = orig;
	return true;
}

/* The CodeBlob holding ip, a code cache pc out of the interpreter, into
 * *blob: 1; 0 (not a blob's pc: outside the code cache, in the
 * interpreter, between heaps); -1 (a free segment, a map absurd or longer
 * than ST_HS_SEGMAP_STEPS hops). */
static __always_inline int st_hs_blob_find_b(struct st_unw_env *e, const struct st_java_blobs *b,
					     __u64 interp_start, __u64 interp_end, __u64 ip,
					     __u64 *blob)
{
	struct st_hs_seg q = { .e = e };
	__u32 log2 = b->log2_segment & 31;
	__u64 lo = 0;
	int i;

	if (!b->nheaps || !st_hs_in_cc(b, ip) || (ip >= interp_start && ip < interp_end))
		return 0;
	for (i = 0; i < ST_JAVA_MAX_HEAPS; i++) {
		if (i < b->nheaps && ip >= b->heaps[i].lo && ip < b->heaps[i].hi) {
			lo = b->heaps[i].lo;
			q.segmap = b->heaps[i].segmap;
			break;
		}
	}
	if (!lo)
		return 0;	/* between heaps: no code there */
	q.seg = (ip - lo) >> log2;
	st_loop(ST_HS_SEGMAP_STEPS, st_hs_seg_step, &q);
	if (q.found != 1)
		return -1;
	*blob = lo + (q.seg << log2) + b->heapblock;
	return 1;
}

/* st_hs_blob_find_b() for the JVM p (tests/unit/test_hsblob.c) */
static __always_inline int st_hs_blob_find(struct st_unw_env *e, const struct st_java_proc *p,
					   __u64 ip, __u64 *blob)
{
	return st_hs_blob_find_b(e, &p->blobs, p->interp_start, p->interp_end, ip, blob);
}

/* The fields of the blob holding ip into *k: 1; 0 (not a blob's pc); -1
 * (stop: f->stop says why). An nmethod's compile id and deopt handler and
 * the blob's size (the pcs a memo entry answers for) are read here too,
 * each flagged when the read failed, so that a memo hit answers as these
 * reads would. */
static __always_inline int st_hs_blob_read(struct st_unw_env *e, const struct st_java_blobs *b,
					   __u64 interp_start, __u64 interp_end, __u64 ip,
					   struct st_hs_blob *k, struct st_hs_frame *f)
{
	__u64 blob = 0, name = 0, h = 0;
	__s32 coff = 0, size = 0;
	int r;

	r = st_hs_blob_find_b(e, b, interp_start, interp_end, ip, &blob);
	if (r <= 0)
		return r ? st_hs_stop(f, ST_JAVA_STAT_HS_NO_BLOB) : 0;
	k->lo = blob;
	k->hi = 0;
	k->name = 0;
	k->code = 0;
	k->deopt = 0;
	k->fs = 0;
	k->fc = 0;
	k->deopt_ok = 0;
	k->cid_ok = 0;
	k->kind = 0;
	k->cid = 0;
	/* the blob's name (its kind), frame size, frame-complete offset, code */
	if (st_unw_read_mem(e, &name, sizeof(name), blob + b->name) ||
	    (k->name = name, st_unw_read_mem(e, &k->kind, sizeof(k->kind), name)) ||
	    st_unw_read_mem(e, &k->fs, sizeof(k->fs), blob + b->frame_size) ||
	    st_unw_read_mem(e, &k->fc, sizeof(k->fc), blob + b->frame_complete))
		return st_hs_stop(f, ST_JAVA_STAT_HS_BAD_BLOB);
	if (b->code_is_offset) {
		if (st_unw_read_mem(e, &coff, sizeof(coff), blob + b->code))
			return st_hs_stop(f, ST_JAVA_STAT_HS_BAD_BLOB);
		k->code = blob + (__u64)(__s64)coff;
	} else if (st_unw_read_mem(e, &k->code, sizeof(k->code), blob + b->code)) {
		return st_hs_stop(f, ST_JAVA_STAT_HS_BAD_BLOB);
	}
	if (k->kind == ST_HS_NAME_NMETHOD || k->kind == ST_HS_NAME_NATIVE)
		k->cid_ok = !st_unw_read_mem(e, &k->cid, sizeof(k->cid), blob + b->compile_id);
	if (k->kind == ST_HS_NAME_NMETHOD) {
		if (b->deopt && b->deopt_is_offset) {
			if (!st_unw_read_mem(e, &coff, sizeof(coff), blob + b->deopt)) {
				k->deopt = blob + (__u64)(__s64)coff;
				k->deopt_ok = 1;
			}
		} else if (b->deopt && !st_unw_read_mem(e, &h, sizeof(h), blob + b->deopt)) {
			k->deopt = h;
			k->deopt_ok = 1;
		}
	}
	if (!st_unw_read_mem(e, &size, sizeof(size), blob + b->size) && size > 0 &&
	    (__u32)size <= ST_HS_MEMO_SPAN && blob + (__u64)size <= b->cc_hi)
		k->hi = blob + (__u64)size;
	return 1;
}

/* Whether a blob cached by an earlier sample is still where it was: its
 * name pointer again at its address, and an nmethod's (or a native
 * wrapper's, which the JVM frees too) compile id, unique for the JVM's
 * life. A blob freed and its space taken by another fails: another
 * nmethod there has another compile id; another blob kind another name;
 * code or data of a blob that starts elsewhere would have to hold both
 * the name pointer and the compile id at those offsets. Stubs, the
 * interpreter and adapters are never freed. */
static __always_inline bool st_hs_blob_valid(struct st_unw_env *e, const struct st_java_blobs *b,
					     const struct st_hs_blob *k, struct st_hs_memo *m)
{
	__u32 no = b->name, co = b->compile_id;
	__u32 lo = no < co ? no : co, hi = no + 8 > co + 4 ? no + 8 : co + 4, span = hi - lo;
	__u64 name = 0;
	__u32 cid = 0;

	if (k->kind != ST_HS_NAME_NMETHOD && k->kind != ST_HS_NAME_NATIVE)
		return !st_unw_read_mem(e, &name, sizeof(name), k->lo + b->name) &&
		       name == k->name;
	if (!k->cid_ok)
		return false;
	/* an nmethod's (most of a JIT walk's cache hits): both fields in one
	 * read when they lie close (one helper call in BPF, not two; the
	 * offsets masked for the verifier: in the buffer whatever they are) */
	if (span <= ST_HS_CHECK_SPAN) {
		if (st_unw_read_mem(e, m->check, ((span - 1) & (ST_HS_CHECK_SPAN - 1)) + 1,
				    k->lo + lo))
			return false;
		__builtin_memcpy(&name, &m->check[(no - lo) & (ST_HS_CHECK_SPAN - 1)],
				 sizeof(name));
		__builtin_memcpy(&cid, &m->check[(co - lo) & (ST_HS_CHECK_SPAN - 1)], sizeof(cid));
		return name == k->name && cid == k->cid;
	}
	return !st_unw_read_mem(e, &name, sizeof(name), k->lo + b->name) && name == k->name &&
	       !st_unw_read_mem(e, &cid, sizeof(cid), k->lo + b->compile_id) && cid == k->cid;
}

/* The blob holding ip: from the walk's memo m (NULL: none), else from
 * the blob cache of earlier samples (st_hs_cache_get(), the includer's:
 * BPF's java_blob_cache, natively none) when still valid, else read; a
 * blob found so is memoized (and cached). 1, 0 or -1 as
 * st_hs_blob_read(); f->cache what the cache did. */
static __always_inline int st_hs_blob_get(struct st_unw_env *e, const struct st_java_blobs *b,
					  __u64 interp_start, __u64 interp_end,
					  struct st_hs_memo *m, __u64 ip, struct st_hs_blob *k,
					  struct st_hs_frame *f)
{
	struct st_hs_blob *c;
	int i, r;

	f->cache = ST_JAVA_STAT__MAX;
	if (!m)
		return st_hs_blob_read(e, b, interp_start, interp_end, ip, k, f);
	for (i = 0; i < ST_HS_MEMO_BLOBS; i++) {
		c = &m->e[i];
		if (ip >= c->lo && ip < c->hi) {
			*k = *c;
			ST_HS_PART(ST_JAVA_PART_MEMO_HIT);
			return 1;
		}
	}
	if (st_hs_cache_get(m, ip, k)) {
		if (ip >= k->lo && ip < k->hi && st_hs_blob_valid(e, b, k, m)) {
			ST_HS_PART(ST_JAVA_PART_CACHE_HIT);
			r = 1;
			goto memo;
		}
		f->cache = ST_JAVA_STAT_HS_CACHE_STALE;
	} else {
		f->cache = ST_JAVA_STAT_HS_CACHE_MISS;
	}
	r = st_hs_blob_read(e, b, interp_start, interp_end, ip, k, f);
	ST_HS_PART(ST_JAVA_PART_BLOB_READ);
	if (r <= 0 || !k->hi)
		return r;
	if (k->cid_ok || (k->kind != ST_HS_NAME_NMETHOD && k->kind != ST_HS_NAME_NATIVE))
		st_hs_cache_put(m, ip, k);
memo:
	m->e[m->next & (ST_HS_MEMO_BLOBS - 1)] = *k;
	m->next++;
	return r;
}

/* One frame at (ip, sp, bp) of the JVM p: 1 when ip was in a code blob and
 * f holds its caller (and the entry for this frame; f->note something to
 * count); 0 when ip is not a blob's (outside the code cache, or the
 * interpreter's: the caller goes on as before); -1 when the walk must stop
 * (f->stop says why: a ST_JAVA_STAT_HS_*). exact: ip is an interrupted pc
 * (the leaf, or after a signal frame), not a return address. b: the JVM's
 * heaps, [interp_start, interp_end) its interpreter; m: the walk's memo of
 * blobs, or NULL. */
static __always_inline int st_hs_blob_step_b(struct st_unw_env *e, const struct st_java_blobs *b,
					     __u64 interp_start, __u64 interp_end,
					     struct st_hs_memo *m, __u64 ip, __u64 sp, __u64 bp,
					     bool exact, struct st_hs_frame *f)
{
	struct st_hs_blob k;
	__u64 blob, code, size, method = 0;
	__u32 kind, log2 = b->log2_segment & 31, stub = 0;
	__s32 fs;
	__s16 fc;
	int epi;

	f->ip = 0;
	f->sp = 0;
	f->bp = 0;
	f->entry = 0;
	f->stop = ST_JAVA_STAT__MAX;
	f->note = ST_JAVA_STAT__MAX;
	f->cache = ST_JAVA_STAT__MAX;
	epi = st_hs_blob_get(e, b, interp_start, interp_end, m, ip, &k, f);
	if (epi <= 0)
		return epi;
	blob = k.lo;
	code = k.code;
	kind = k.kind;
	fs = k.fs;
	fc = k.fc;
	/* -1: a stub that builds no frame (C1's Runtime1 stubs) */
	if (fs == -1)
		fs = 0;
	if (fs < 0 || fs > ST_HS_FRAME_MAX || code < blob || code > ip)
		return st_hs_stop(f, ST_JAVA_STAT_HS_BAD_BLOB);
	if (kind == ST_HS_NAME_INTERP)
		return 0;
	size = 8ULL * (__u64)fs;

	if (kind == ST_HS_NAME_NATIVE && !size && exact) {
		/* a method handle intrinsic (linkToStatic ...): a native
		 * nmethod without a frame, that only jumps */
		if (st_hs_leave(e, sp, bp, 0, false, f))
			return -1;
		return st_hs_in_cc(b, f->ip) ? 1 : st_hs_stop(f, ST_JAVA_STAT_HS_BAD_RA);
	}
	if (kind == ST_HS_NAME_NMETHOD || kind == ST_HS_NAME_NATIVE) {
		if (size < 16)
			return st_hs_stop(f, ST_JAVA_STAT_HS_BAD_BLOB);
		if (exact && (fc < 0 || ip < code + (__u64)fc)) {
			if (st_hs_prologue(e, b, ip, sp, bp, size, f))
				return -1;
		} else if (exact && kind == ST_HS_NAME_NMETHOD &&
			   (st_unw_read_mem(e, &stub, sizeof(stub), blob + b->stub) || ip >= blob + stub)) {
			return st_hs_stop(f, ST_JAVA_STAT_HS_STUB_LEAF);
		} else if (exact && (epi = st_hs_epilogue(e, ip))) {
			if (st_hs_leave(e, sp, bp, epi == 1 ? 0 : 8, epi == 2, f))
				return -1;
			f->note = ST_JAVA_STAT_HS_EPILOGUE;
		} else if (st_hs_leave(e, sp, bp, size - 8, true, f)) {
			return -1;
		}
		if (!st_hs_in_cc(b, f->ip))
			return st_hs_stop(f, ST_JAVA_STAT_HS_BAD_RA);
		if (kind == ST_HS_NAME_NATIVE) {
			if (!st_unw_read_mem(e, &method, sizeof(method), blob + b->method) && method &&
			    method < ST_USER_END && !(method & 7))
				f->entry = ST_JAVA_TAG | ST_JAVA_ADDR(method, ST_JAVA_BCI_NONE);
			return 1;
		}
		/* a deoptimized frame returns to its deopt handler: its pc
		 * for the scopes is the original one the JVM saved */
		if (!exact && b->deopt && st_hs_deopt_pc(e, b, &k, sp, &ip))
			f->note = ST_JAVA_STAT_HS_DEOPT;
		if (ip - blob >= ST_JAVA_JIT_PC_MAX) {
			f->note = ST_JAVA_STAT_HS_FAR_PC;
			return 1;
		}
		if (!k.cid_ok)
			return st_hs_stop(f, ST_JAVA_STAT_HS_BAD_BLOB);
		f->entry = ST_JAVA_TAG | ST_JAVA_JIT |
			   ST_JAVA_JIT_ADDR((blob - b->cc_lo) >> log2, ip - blob, exact, k.cid);
		return 1;
	}

	/* stubs */
	if (kind == ST_HS_NAME_JNI_FAST && exact) {
		/* JNI's fast field getters: leaves that push nothing, called
		 * from native code */
		if (st_hs_leave(e, sp, bp, 0, false, f))
			return -1;
		return f->ip && f->ip < ST_USER_END ? 1 : st_hs_stop(f, ST_JAVA_STAT_HS_BAD_RA);
	} else if (kind == ST_HS_NAME_VTABLE && exact) {
		if (st_hs_leave(e, sp, bp, 0, false, f))
			return -1;
	} else if (size) {
		if (exact && (fc < 0 || ip < code + (__u64)fc))
			return st_hs_stop(f, ST_JAVA_STAT_HS_STUB_LEAF);
		if (st_hs_leave(e, sp, bp, size - 8, size >= 16, f))
			return -1;
	} else if (!exact && ip == b->call_stub_ret) {
		/* the call stub's frame (rbp-based), called from the VM's C++ */
		if (bp < sp || (bp & 7))
			return st_hs_stop(f, ST_JAVA_STAT_END_BAD_FP);
		if (st_hs_leave(e, bp, bp, 8, true, f))
			return -1;
		if (!f->ip || f->ip >= ST_USER_END)
			return st_hs_stop(f, ST_JAVA_STAT_HS_BAD_RA);
		return 1;
	} else if (exact && st_hs_ra_at_sp(e, b, sp)) {
		/* the leaf in a stub without a frame size that has pushed
		 * nothing (an adapter, a StubRoutines or Runtime1 stub at its
		 * work): its return address at sp, code cache code after a
		 * call instruction (bpf/call_insn.h) */
		if (st_hs_leave(e, sp, bp, 0, false, f))
			return -1;
	} else {
		/* a stub without a frame size: by rbp, when it is its frame's
		 * (above sp, near, and its return address code cache code) */
		if (bp < sp || bp - sp > ST_HS_STUB_FP_MAX || (bp & 7))
			return st_hs_stop(f, ST_JAVA_STAT_HS_STUB_LEAF);
		if (st_hs_leave(e, bp, bp, 8, true, f))
			return -1;
		if (!st_hs_in_cc(b, f->ip))
			return st_hs_stop(f, ST_JAVA_STAT_HS_STUB_LEAF);
	}
	if (!st_hs_in_cc(b, f->ip))
		return st_hs_stop(f, ST_JAVA_STAT_HS_BAD_RA);
	return 1;
}

/* st_hs_blob_step_b() for the JVM p, without a memo (the unit tests) */
static __always_inline int st_hs_blob_step(struct st_unw_env *e, const struct st_java_proc *p,
					   __u64 ip, __u64 sp, __u64 bp, bool exact,
					   struct st_hs_frame *f)
{
	return st_hs_blob_step_b(e, &p->blobs, p->interp_start, p->interp_end, NULL, ip, sp, bp,
				 exact, f);
}

#endif

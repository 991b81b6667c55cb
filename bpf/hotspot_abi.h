/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hotspot_abi.h - the HotSpot part of bpf/stacktree.h (included there, at
 * its place: it uses ST_PY_TAG): Java frame entries (interpreted and
 * compiled), what the daemon pushes per JVM (struct st_java_proc: the
 * interpreter's and code cache's bounds, the frame layout, the code
 * heaps), the rule's counts and the method reports. Shared by the BPF
 * programs (bpf/hotspot_step.h, bpf/hotspot_blob.h, bpf/java.bpf.h) and
 * the daemon (user/collect/runtimes/java/). Fixed-width types only.
 */
#ifndef STACKTREE_HOTSPOT_ABI_H
#define STACKTREE_HOTSPOT_ABI_H

/* ---- HotSpot (bpf/hotspot_step.h walks its interpreted frames inside the
 * native unwinder, user/collect/runtimes/java/ feeds it and names them) ---- */

#define ST_JAVA_BCI_NONE 0xffffULL	/* no bci (a code size is a u2: bci <= 0xfffe) */

/* A Java node's address (ST_NODE_JAVA): (Method* >> 3) << 16 | bci. A
 * Method* is 8-aligned metaspace, a user address below 2^47: its 44 high
 * bits and the 16 of the bci fit in 60 bits.
 * In a frame array (native return addresses, Python and Java frames
 * together) a Java entry is ST_JAVA_TAG | ST_JAVA_ADDR: bit 62 set, bit 63
 * clear. Proof that the three kinds cannot be taken for one another:
 * a native frame is below ST_USER_END (2^47): bits 47..63 clear; a Python
 * entry is ST_PY_TAG | ST_PY_ADDR: bit 63 set (its address, code << 16
 * with code < 2^47, may use bits 16..62, bit 62 included: so bit 62
 * alone does not tell Java from Python, bit 63 does); a Java entry has bit
 * 63 clear (ST_JAVA_ADDR < 2^60) and bit 62 set. Test bit 63 first, then
 * bit 62 (st_java_entry_is()). */
#define ST_JAVA_TAG (1ULL << 62)
#define ST_JAVA_ADDR(method, bci) ((((__u64)(method) >> 3) << 16) | ((__u64)(bci) & 0xffff))
#define ST_JAVA_METHOD(addr) ((((addr) & ~ST_JAVA_TAG) >> 16) << 3)
#define ST_JAVA_BCI(addr) ((__u32)((addr) & 0xffff))
#define st_java_entry_is(e) (!((e) & ST_PY_TAG) && ((e) & ST_JAVA_TAG))

/* A compiled Java frame's entry (bpf/hotspot_blob.h: an nmethod's frame;
 * the daemon expands its inlined methods, user/collect/runtimes/java/
 * jscopes.h): ST_JAVA_TAG | ST_JAVA_JIT | ST_JAVA_JIT_ADDR, bit 61 set,
 * which no ST_JAVA_ADDR has (< 2^60). Its bits:
 *   0..19   the pc's offset from the nmethod's start (the CodeBlob's
 *           address; a pc farther is not encoded: the return address is
 *           kept instead, counted ST_JAVA_STAT_HS_FAR_PC)
 *   20      1: the leaf (an interrupted pc, not a return address: its
 *           scope is the first PcDesc after it, as AsyncGetCallTrace's)
 *   21..45  the nmethod's segment in the code cache: (nmethod -
 *           st_java_proc.cc_lo) >> log2 segment size (a HeapBlock starts
 *           each segment-aligned block, the nmethod its header's size
 *           after it: nmethod = cc_lo + (seg << log2) + heapblock size);
 *           25 bits: 2 GiB (HotSpot's largest code cache) of 64-byte
 *           segments
 *   46..60  the nmethod's compile id, low 15 bits: an nmethod freed and
 *           its space reused by another compile before the daemon reads it
 *           is told apart (a compile id is unique for the JVM's life)
 * A native method's wrapper (a JNI call) is its Java method's frame as an
 * interpreted one is: ST_JAVA_ADDR(Method*, ST_JAVA_BCI_NONE). */
#define ST_JAVA_JIT (1ULL << 61)
#define ST_JAVA_JIT_PC_MAX (1U << 20)
#define ST_JAVA_JIT_SEG_MAX (1U << 25)
#define ST_JAVA_JIT_ADDR(seg, pc, leaf, cid)                                                       \
	((((__u64)(cid) & 0x7fff) << 46) | (((__u64)(seg) & (ST_JAVA_JIT_SEG_MAX - 1)) << 21) |   \
	 ((__u64)!!(leaf) << 20) | ((__u64)(pc) & (ST_JAVA_JIT_PC_MAX - 1)))
#define ST_JAVA_JIT_PC(e) ((__u32)((e) & (ST_JAVA_JIT_PC_MAX - 1)))
#define ST_JAVA_JIT_LEAF(e) ((__u32)(((e) >> 20) & 1))
#define ST_JAVA_JIT_SEG(e) ((__u32)(((e) >> 21) & (ST_JAVA_JIT_SEG_MAX - 1)))
#define ST_JAVA_JIT_CID(e) ((__u32)(((e) >> 46) & 0x7fff))
#define st_java_entry_jit(e) (st_java_entry_is(e) && ((e) & ST_JAVA_JIT))

/* What the walker needs of a JVM's layout (the daemon's
 * user/collect/runtimes/java/jvmlayout.h has the rest; the namer's offsets
 * stay there). Interpreter frame slots are in words from the frame
 * pointer, x86-64 JDK 9+: Method* at -3, bcp at -8 (docs/java.md: checked
 * on JDK 17 and 25); both within [-ST_JAVA_SLOTS_BELOW, -1]. */
#define ST_JAVA_SLOTS_BELOW 8
struct st_java_layout {
	__u16 method_constmethod;	/* Method::_constMethod */
	__u16 constmethod_size;		/* sizeof(ConstMethod): the bytecodes follow it */
	__u16 constmethod_code_size;	/* ConstMethod::_code_size (a u2) */
	__s8 frame_method;		/* the Method* slot (-3) */
	__s8 frame_bcp;			/* the bytecode pointer slot (-8) */
};

/* The code cache, for compiled frames and stubs (bpf/hotspot_blob.h);
 * read by the daemon once per JVM (jvmlayout.h st_jvm_layout__java_blobs):
 * the heaps are reserved at start-up and do not move (their committed
 * part grows within the reservation), nor do their segment maps. */
#define ST_JAVA_MAX_HEAPS 4	/* HotSpot has 1 (unsegmented) or 3 */
struct st_java_heap {
	__u64 lo, hi;		/* CodeHeap::_memory: [_low_boundary, _high_boundary) */
	__u64 segmap;		/* CodeHeap::_segmap._low: a byte per segment */
};
struct st_java_blobs {
	__u64 cc_lo, cc_hi;	/* CodeCache::_low_bound, _high_bound: all heaps */
	__u64 call_stub_ret;	/* StubRoutines::_call_stub_return_address */
	struct st_java_heap heaps[ST_JAVA_MAX_HEAPS];
	__u16 name;		/* CodeBlob::_name (a const char *) */
	__u16 frame_size;	/* CodeBlob::_frame_size (an int, in words) */
	__u16 frame_complete;	/* CodeBlob::_frame_complete_offset (JDK 17 an int, 25 an
				 * int16_t: its low 16 bits read, little-endian) */
	__u16 code;		/* CodeBlob::_code_begin (a pointer), or _code_offset (JDK 23+,
				 * an int from the blob) when code_is_offset */
	__u16 method;		/* nmethod's _method (JDK 17: CompiledMethod's) */
	__u16 compile_id;	/* nmethod::_compile_id */
	__u16 stub;		/* nmethod::_stub_offset (an int from the blob): its stubs */
	__u16 deopt;		/* the deopt handler: CompiledMethod::_deopt_handler_begin (JDK
				 * 17, a pointer) or nmethod::_deopt_handler_offset (23+, an
				 * int from the blob) when deopt_is_offset; 0: not read */
	__u16 orig_pc;		/* nmethod::_orig_pc_offset (an int): a deoptimized frame's
				 * pc saved at sp + it */
	__u16 size;		/* CodeBlob::_size (an int): the blob's bytes */
	__u8 deopt_is_offset;
	__u8 pad[3];
	__u8 code_is_offset;
	__u8 heapblock;		/* sizeof(HeapBlock): the blob follows its block's header */
	__u8 log2_segment;	/* CodeHeap::_log2_segment_size (the same in every heap) */
	__u8 nheaps;		/* 0: compiled frames not walked (the JVM's not read) */
};

/* What the daemon pushes per JVM (java_procs, key: tgid): the template
 * interpreter's code, AbstractInterpreter::_code's StubQueue buffer
 * [_stub_buffer, _stub_buffer + _buffer_limit), which no JIT code shares,
 * and the code cache [CodeCache::_low_bound, _high_bound), which holds it
 * and every other blob (compiled methods, stubs). */
#define ST_JAVA_HEAD                                                                               \
	__u64 interp_start, interp_end;                                                            \
	__u64 code_start, code_end;	/* (0, 0: not known) */                                   \
	__u32 image;			/* the image (self_exec_id) it was found in */            \
	__u32 pad;                                                                                 \
	struct st_java_layout l;
struct st_java_proc {
	ST_JAVA_HEAD
	struct st_java_blobs blobs;	/* compiled frames (bpf/hotspot_blob.h) */
};
/* Its head: what the unwinder's rule copies into its walk's state
 * (bpf/hotspot_step.h; the blobs, 168 bytes, would not fit BPF's stack:
 * the blob step reads them from the map). */
struct st_java_head {
	ST_JAVA_HEAD
};

/* What the Java rule of the unwinder met (bpf/hotspot_step.h), per CPU in
 * java_stats; the daemon adds those of the samples it unwinds. */
enum st_java_stat {
	ST_JAVA_STAT_WALKS,	/* walks of threads of a known JVM */
	ST_JAVA_STAT_WALKED,	/* ... with at least one Java frame */
	ST_JAVA_STAT_FRAMES,	/* Java frames kept */
	ST_JAVA_STAT_LEAF_OUT,	/* the sample's pc was not in the interpreter */
	ST_JAVA_STAT_BAD_METHOD, /* a frame in the interpreter without a Method* in its
				  * slot (not aligned, not a user address, its
				  * ConstMethod unreadable): its return address kept */
	ST_JAVA_STAT_BAD_BCP,	/* ... whose bcp is outside its method's bytecodes
				 * (entry or exit code: the frame not built yet) */
	ST_JAVA_STAT_END_READ,	/* an interpreted frame's slots unreadable: walk stopped */
	ST_JAVA_STAT_CODE_CACHE, /* frames elsewhere in the code cache (compiled code,
				  * stubs): walked as before, not named */
	ST_JAVA_STAT_FP_MODE,	/* samples of a JVM walked by --unwind fp: no Java frames */
	ST_JAVA_STAT_METHODS,	/* methods reported to the daemon (first sight) */
	ST_JAVA_STAT_METHODS_LOST, /* ... lost: the ring buffer was full */
	ST_JAVA_STAT_DEFERRED,	/* samples of a JVM unwound by the daemon */
	ST_JAVA_STAT_LATE_NO_MEM, /* ... whose method reads failed there (process gone) */
	ST_JAVA_STAT_END_BAD_FP, /* stop: a frame pointer not above the last, unaligned
				  * or out of user space (code without frame pointers) */
	/* compiled frames and stubs (bpf/hotspot_blob.h) */
	ST_JAVA_STAT_HS_FRAMES,	/* code blob frames stepped (compiled, native wrappers, stubs) */
	ST_JAVA_STAT_HS_EPILOGUE, /* ... the leaf in a compiled method's return sequence */
	ST_JAVA_STAT_HS_FAR_PC,	/* ... a compiled pc past ST_JAVA_JIT_PC_MAX: kept unnamed */
	ST_JAVA_STAT_HS_DEOPT,	/* ... a deoptimized frame: its original pc taken */
	ST_JAVA_STAT_HS_NO_BLOB, /* stop: a code cache pc in no blob (a free or absurd segment
				  * map, or more hops than ST_HS_SEGMAP_STEPS) */
	ST_JAVA_STAT_HS_BAD_BLOB, /* stop: a blob unreadable, or its frame size absurd */
	ST_JAVA_STAT_HS_PROLOGUE, /* stop: the leaf in a frame being built (its return address
				   * in more than one place, or in none) */
	ST_JAVA_STAT_HS_STUB_LEAF, /* stop: the leaf in a stub without a frame it can be left by */
	ST_JAVA_STAT_HS_BAD_RA,	/* stop: a blob frame's return address outside the code cache
				 * (compiled code is called from code cache code only) */
	ST_JAVA_STAT_HS_READ,	/* stop: the stack unreadable at a blob frame */
	ST_JAVA_STAT_HS_ENTRY,	/* the leaf in a method entry building its frame: its method
				 * from rbx, its caller by its links */
	ST_JAVA_STAT_HS_CACHE_MISS, /* code blobs not in the blob cache (first sight, or
				     * evicted): read (bpf/hotspot_blob.h) */
	ST_JAVA_STAT_HS_CACHE_STALE, /* ... cached, but freed and their space reused since:
				      * read again */
	ST_JAVA_STAT__MAX,
};

struct st_java_counts {
	__u64 n[ST_JAVA_STAT__MAX];
};

/* java_events ring buffer: a method not reported before by the process. */
struct st_java_event {
	__u32 pid;
	__u32 image;
	__u64 method;	/* its Method*, or a compiled frame's entry (st_java_entry_jit) */
};

#endif

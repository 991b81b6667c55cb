/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hotspot_memo.h - a walk's memo of the HotSpot code blobs it met
 * (bpf/hotspot_blob.h reads a blob's fields once a walk, not once a
 * frame): the JVM's code heaps, copied from its java_procs entry at the
 * walk's first code cache frame, and the last ST_HS_MEMO_BLOBS blobs
 * resolved, by the pcs they hold. Per CPU and per program kind in BPF
 * (bpf/java.bpf.h's java_blob_memo, as the stack window's slots), begun
 * anew by each walk (struct st_hs_io.memo_on is 0 at a walk's start): it
 * never outlives the sample, so a blob freed and its space reused by
 * another compile is never taken for the old one. Natively (the daemon's
 * deferred walks, the unit tests) there is none: each frame resolves its
 * blob as before. Both give the same frames: a memo hit holds what the
 * segment map walk and the reads would give. struct st_hs_blob is also
 * the value of the blob cache across samples (BPF's java_blob_cache, by
 * struct st_hs_blob_key), whose entries are checked before use
 * (bpf/hotspot_blob.h's st_hs_blob_valid()).
 */
#ifndef STACKTREE_HOTSPOT_MEMO_H
#define STACKTREE_HOTSPOT_MEMO_H

#include "dual.h"
#include "stacktree.h"

#define ST_HS_MEMO_BLOBS 4	/* blobs a walk keeps (power of two): a recursion's
				 * frames share one or two */
#define ST_HS_MEMO_SPAN (1U << 24)	/* a blob's _size above this is not memoized */
#define ST_HS_CHECK_SPAN 512	/* the blob cache's check reads the name pointer and the
				 * compile id in one read when they lie within this
				 * (power of two): JDK 17's some 200 bytes apart */

/* A blob's fields, as bpf/hotspot_blob.h reads them. */
struct st_hs_blob {
	__u64 lo, hi;		/* [the CodeBlob, + its _size): its pcs (hi 0: empty) */
	__u64 name;		/* CodeBlob::_name (checked on a cache hit) */
	__u64 code;		/* its code's start */
	__u64 deopt;		/* an nmethod's deopt handler (deopt_ok) */
	__s32 fs;		/* _frame_size (words) */
	__s16 fc;		/* _frame_complete_offset */
	__u8 deopt_ok;		/* deopt read */
	__u8 cid_ok;		/* cid read */
	__u32 kind;		/* its name's first four bytes (ST_HS_NAME_*) */
	__u32 cid;		/* an nmethod's compile id (a native wrapper's too) */
};

/* The blob cache's key (BPF: java_blob_cache, bpf/java.bpf.h): a pc of a
 * process's JVM. */
struct st_hs_blob_key {
	__u32 tgid, image;
	__u64 pc;
};

struct st_hs_memo {
	struct st_java_blobs b;	/* the JVM's heaps (its java_procs entry's) */
	__u32 next;		/* the entry the next miss takes */
	__u32 pad;
	struct st_hs_blob_key key;	/* the process (key.pc: scratch) */
	struct st_hs_blob e[ST_HS_MEMO_BLOBS];
	__u8 check[ST_HS_CHECK_SPAN + 8];	/* the blob cache check's read (BPF: no
						 * room on the stack) */
};

/* An interpreted method's bytecodes, kept across samples (BPF's
 * java_code_memo, bpf/java.bpf.h: per CPU and program kind, direct-mapped
 * by the Method*):
 * its ConstMethod's bytecodes [base, base + size) as
 * bpf/hotspot_step.h's st_hs_code_of() read them for process tgid running
 * image. Used only when the frame's bcp lies in them (st_hs_interp()). */
struct st_hs_code_ent {
	__u32 tgid, image;
	__u64 method, base;
	__u32 size, pad;
};

#endif

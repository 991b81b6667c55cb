/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hotspot_step.h - the unwinder's HotSpot rule: a frame of the template
 * interpreter becomes a Java frame (ST_JAVA_TAG | ST_JAVA_ADDR(Method*,
 * bci), bpf/stacktree.h) in place of its return address, then the walk
 * goes on by the frame pointer. Included by bpf/unwind_step.h, whose
 * st_unw_frame() calls st_hs_step() for each frame of a process with a JVM
 * (struct st_java_proc, looked up once per walk: BPF's java_procs, the
 * daemon's copy natively). One source for both builds (bpf/dual.h): the
 * BPF walk at every sample and the daemon's walk of deferred samples
 * (user/collect/unwind/unwind_native.h); tests/unit/test_hotspot_step.c
 * walks fake stacks and a live JVM's stopped thread with it.
 *
 * The frames: HotSpot's x86-64 interpreter keeps rbp as each interpreted
 * frame's frame pointer ([fp] the caller's fp, [fp + 8] the return
 * address), the frame's Method* at fp + 8 * frame_method and its bytecode
 * pointer at fp + 8 * frame_bcp (frame_x86.hpp, JDK 9+: -3 and -8). The
 * bcp slot is written at each call the frame makes: in the frame that
 * runs (the sample's leaf) the live bcp is in r13, and the slot is stale.
 * A frame is kept when its Method*'s ConstMethod is readable and the bcp
 * lies in its bytecodes; one that fails (a sample in the interpreter's
 * entry or exit code, its frame not built yet or torn down) keeps its
 * return address, counted by reason (enum st_java_stat); before the
 * callee's rbp is set, its caller is taken for the leaf; once it is set
 * and before its slots are all pushed (fp - 8 * ST_JAVA_SLOTS_BELOW below
 * sp: the method entry's generate_fixed_frame), the leaf is the method in
 * rbx (the entry's Method*) at bci 0, its caller by its links
 * (ST_JAVA_STAT_HS_ENTRY): before, such a walk stopped there, 7% of an
 * -Xint run's samples of a call-heavy thread.
 *
 * Any other pc in the code cache (compiled methods, native method
 * wrappers, stubs) is st_hs_blob_step()'s (bpf/hotspot_blob.h): a compiled
 * frame becomes ST_JAVA_TAG | ST_JAVA_JIT | ST_JAVA_JIT_ADDR (the daemon
 * expands its inlined methods), a native wrapper its method's frame, a
 * stub keeps its return address; the walk goes on from the frame's caller
 * (counted ST_JAVA_STAT_HS_FRAMES), or stops where the blob step cannot
 * tell it (counted by reason). A pc the step does not take is walked as
 * any frame without CFI (frame pointers in --unwind auto, the end of the
 * walk in dwarf), counted (ST_JAVA_STAT_CODE_CACHE), but never taken for
 * an address no mapping covers (which would defer the sample to the
 * daemon for tables that will not come). An interpreted frame called by
 * compiled code: its caller's sp is the frame's sender sp slot (fp - 8;
 * fp + 16 is its own args' end), and the rbp it saved is compiled code's
 * register, not a frame pointer: the blob step does not need it.
 *
 * The rule is a global function in BPF (st_hs_frame(), verified once,
 * whatever the states the walk reaches it in: inlined in the unwinder's
 * frame callback it was verified in each, +430,000 instructions, the
 * dwarf timer program at 68% of the verifier's limit), on its own state
 * (struct st_hs_io, in the walk's state: scalars only).
 *
 * bpf/unwind_step.h keeps the rule's state in its walk's (struct
 * st_hs_io hs: hs.java a copy of the JVM's entry, all 0 for none: a copy,
 * not a pointer, so that the verifier does not check the whole walk twice,
 * with and without one) and calls st_hs_frame() from st_unw_frame()
 * (st_hs_step()). Contract with the includer:
 *   ST_HS_READ(io, dst, n, addr)  n bytes of user memory: 0, or non-zero
 *                              (BPF: the task's memory; natively: the
 *                              copied stack, else the process's through
 *                              the env's reader, io->env)
 *   ST_HS_GLOBAL               the storage of st_hs_frame() (BPF: a
 *                              global function; natively static inline)
 *   ST_HS_COUNT(io, what)      count enum st_java_stat what (BPF:
 *                              java_stats; natively io->jc's)
 *   ST_HS_ENV(io)              the blob step's struct st_unw_env * (BPF:
 *                              an empty one, helper reads; natively
 *                              io->env), with bpf/hotspot_blob.h's reads
 *   ST_HS_PROC(io)             the JVM's whole struct st_java_proc *, or
 *                              NULL (BPF: java_procs' entry of io->tgid;
 *                              natively io->proc)
 *   ST_HS_READ8(e, addr, out)  a stack word through the env e (BPF: the
 *                              walk's stack window, a load when the page
 *                              is in it; natively the copy, else the
 *                              process's memory)
 *   ST_HS_MEMO(io)             the walk's struct st_hs_memo * (BPF: the
 *                              CPU's java_blob_memo slot io->slot), or
 *                              NULL (natively: none)
 *   ST_HS_CODE_MEMO(io, m)     the struct st_hs_code_ent * where method m's
 *                              bytecodes may be kept across samples
 *                              (BPF: the CPU's java_code_memo entry; natively
 *                              NULL: read each time)
 *   ST_HS_REPORT(io, entry)    a Java entry made, unlike the last one: its
 *                              method reported to the daemon when new
 *                              (BPF: bpf/java.bpf.h's st_java_report();
 *                              natively nothing: the daemon reads them):
 *                              true, or false when it must be tried again
 * The walk's state keeps nothing that changes per Java frame (the count
 * of Java frames, the counts): in it, the verifier told each count from
 * the next and checked the walk again for each (the program over 1M).
 */
#ifndef STACKTREE_HOTSPOT_STEP_H
#define STACKTREE_HOTSPOT_STEP_H

#include "dual.h"
#include "stacktree.h"
#include "hotspot_blob.h"

/* One frame of the rule: its inputs, outputs and scratch. */
struct st_hs_io {
	struct st_java_head java;	/* the JVM (set once per walk) */
	__u64 proc;		/* natively: its struct st_java_proc * (the blobs) */
	__u32 tgid;		/* BPF: its java_procs key (the blobs) */
	__u32 slot;		/* BPF: the walk's stack window and blob memo (0 timer,
				 * 1 page faults: bpf/unwind.h's) */
	__u64 env;		/* natively: the walk's struct st_unw_env * */
	__u64 jc;		/* natively: the rule's struct st_java_counts *, or 0 */
	__u32 jframes;		/* Java frames written in the walk */
	__u32 exact;		/* in: io->ip is the interrupted pc, not a return address */
	__u64 ip, sp, bp;	/* in: the frame; out: its caller's (return 0) */
	__u64 r13;		/* in: the leaf's r13 (the live bcp) */
	__u64 rbx;		/* in: the leaf's rbx (the Method* at a method entry) */
	__u64 entry;		/* out: the Java entry for out[n], or 0 (keep the ip) */
	__u64 method, base;	/* the last method's bytecodes (recursion: read once) */
	__u32 size;		/* ... their size */
	__u32 n;		/* in: the frame's index (0: the leaf) */
	__u32 fallback;		/* in: frame pointers where there is no CFI (auto) */
	__u32 stat;		/* out: what was counted (ST_JAVA_STAT_*, __MAX: none) */
	__u32 memo_on;		/* the blob memo is this walk's (0 at a walk's start) */
	__u32 image;		/* BPF: the image sampled (the methods' reports) */
	__u64 last;		/* the last entry reported (ST_HS_REPORT) */
	__u64 words[16];	/* the frame: fp - 64 .. fp + 16 (room: a mask) */
	__u64 cm, cn;		/* a method's ConstMethod, its code size */
};

/* Whether a is [lo, hi)'s (one compare: hi - lo as unsigned). */
static __always_inline bool st_hs_in(__u64 a, __u64 lo, __u64 hi)
{
	return a - lo < hi - lo;
}

static __always_inline bool st_hs_ptr_ok(__u64 a)
{
	return a && a < ST_USER_END && !(a & 7);
}

/* A word of the frame read last (words from its fp, -ST_JAVA_SLOTS_BELOW
 * .. 1: [fp] the caller's fp, [fp + 8] the return address). */
static __always_inline __u64 st_hs_word(const struct st_hs_io *io, int slot)
{
	return io->words[(__u32)(slot + ST_JAVA_SLOTS_BELOW) & 15];
}

/* The bytecodes of method (its ConstMethod's, after the object) into
 * io->base and io->size: 0, or -1 (not a Method: unreadable or absurd). */
static __always_inline int st_hs_code_of(struct st_hs_io *io, __u64 method)
{
	const struct st_java_layout *l = &io->java.l;

	if (method == io->method && method)
		return 0;	/* recursion: its caller's */
	io->method = 0;
	io->cm = 0;
	io->cn = 0;
	if (!st_hs_ptr_ok(method) ||
	    ST_HS_READ(io, &io->cm, sizeof(io->cm), method + l->method_constmethod) ||
	    !st_hs_ptr_ok(io->cm) ||
	    ST_HS_READ(io, &io->cn, sizeof(__u16), io->cm + l->constmethod_code_size))
		return -1;
	io->method = method;
	io->base = io->cm + l->constmethod_size;
	io->size = (__u16)io->cn;
	return 0;
}

/* The interpreted frame at io->bp, read into io->words: its entry when it
 * validates (else its stat says why not). A method met by an earlier
 * sample on this CPU (ST_HS_CODE_MEMO) is taken from there when the
 * frame's bcp lies in its bytecodes; else read (st_hs_code_of()) and, once
 * the bcp validates, kept there. */
static __always_inline void st_hs_interp(struct st_hs_io *io)
{
	const struct st_java_layout *l = &io->java.l;
	__u64 method = st_hs_word(io, l->frame_method), bcp = st_hs_word(io, l->frame_bcp);
	struct st_hs_code_ent *ce = method != io->method ? ST_HS_CODE_MEMO(io, method) : NULL;
	bool kept = ce && ce->method == method && method && ce->tgid == io->tgid &&
		    ce->image == io->image && ce->size &&
		    (st_hs_in(bcp, ce->base, ce->base + ce->size) ||
		     (io->n == 0 && st_hs_in(io->r13, ce->base, ce->base + ce->size)));

	if (kept) {
		io->method = method;
		io->base = ce->base;
		io->size = ce->size;
	} else if (st_hs_code_of(io, method)) {
		io->stat = ST_JAVA_STAT_BAD_METHOD;
		return;
	}
	/* the leaf's live bcp is r13; the slot's is the last call's */
	if (io->n == 0 && st_hs_in(io->r13, io->base, io->base + io->size))
		bcp = io->r13;
	/* a native method (no bytecodes: the interpreter's native entry
	 * called it, a JNI call under -Xint) has no bcp */
	if (!io->size) {
		io->entry = ST_JAVA_TAG | ST_JAVA_ADDR(method, ST_JAVA_BCI_NONE);
		io->stat = ST_JAVA_STAT_FRAMES;
		return;
	}
	if (!st_hs_in(bcp, io->base, io->base + io->size)) {
		io->stat = ST_JAVA_STAT_BAD_BCP;
		return;
	}
	if (ce && !kept) {
		ce->tgid = io->tgid;
		ce->image = io->image;
		ce->method = method;
		ce->base = io->base;
		ce->size = io->size;
	}
	io->entry = ST_JAVA_TAG | ST_JAVA_ADDR(method, bcp - io->base);
	io->stat = ST_JAVA_STAT_FRAMES;
}

static __always_inline int st_hs_frame_do(struct st_hs_io *io);

/* n words of the stack from addr into io->words from index i (the frame's
 * slots, -ST_JAVA_SLOTS_BELOW at index 0): 0, or non-zero when one is
 * unreadable. Word by word through the walk's stack window (BPF): loads
 * from the page it holds, not a helper call a frame. */
static __always_inline int st_hs_read_words(struct st_hs_io *io, struct st_unw_env *e, __u32 i,
					    __u32 n, __u64 addr)
{
	__u32 k;

	for (k = 0; k < ST_JAVA_SLOTS_BELOW + 2; k++) {
		if (k >= n)
			break;
		if (ST_HS_READ8(e, addr + 8 * k, &io->words[(i + k) & 15]))
			return -1;
	}
	return 0;
}

/* The slot of the frame at fp (words from fp, -ST_JAVA_SLOTS_BELOW ..
 * -1) into io->words: 0, or non-zero when unreadable or not such a slot. */
static __always_inline int st_hs_read_slot(struct st_hs_io *io, struct st_unw_env *e, __u64 fp,
					   int slot)
{
	if (slot < -ST_JAVA_SLOTS_BELOW || slot > -1)
		return -1;
	return ST_HS_READ8(e, fp + 8 * (__s64)slot,
			   &io->words[(__u32)(slot + ST_JAVA_SLOTS_BELOW) & 15]);
}

/* The JVM's code heaps for the blob step: the walk's memo's copy (read
 * from the JVM's entry at the walk's first blob frame, which starts the
 * memo: io->memo_on), else the entry's own, or NULL (none). */
static __always_inline const struct st_java_blobs *st_hs_blobs(struct st_hs_io *io,
							       struct st_hs_memo *m)
{
	const struct st_java_proc *p;
	__u32 i;

	if (m && io->memo_on)
		return &m->b;
	ST_HS_PART(ST_JAVA_PART_MEMO_START);
	p = ST_HS_PROC(io);
	if (!p)
		return NULL;
	if (!m)
		return &p->blobs;
	m->b = p->blobs;
	for (i = 0; i < ST_HS_MEMO_BLOBS; i++)
		m->e[i].hi = 0;
	m->next = 0;
	m->key.tgid = io->tgid;
	m->key.image = io->java.image;
	io->memo_on = 1;
	return &m->b;
}

/*
 * The frame at io->ip, in the JVM's code cache (the interpreter is in
 * it): 0, its caller in io->ip, sp, bp (by the frame pointer) and its
 * entry in io->entry (0: keep the return address); 1: the walk ends
 * there. io->stat: what to count.
 */
ST_HS_GLOBAL int st_hs_frame(struct st_hs_io *io)
{
	int r;

	if (!io)
		return 1;
#ifdef ST_HS_PARTS_ON
	{	/* a bench build's per-part costs (bpf/java.bpf.h) */
		__u64 t0 = ST_HS_PARTS_NOW(), dt;

		r = st_hs_frame_do(io);
		dt = ST_HS_PARTS_NOW() - t0;
		ST_HS_PARTS(io, dt);
	}
#else
	r = st_hs_frame_do(io);
#endif
	if (io->stat < ST_JAVA_STAT__MAX)
		ST_HS_COUNT(io, io->stat);
	if (io->entry) {
		io->jframes++;
		if (io->entry != io->last && ST_HS_REPORT(io, io->entry))
			io->last = io->entry;
	}
	return r;
}

static __always_inline int st_hs_frame_do(struct st_hs_io *io)
{
	struct st_unw_env *e = ST_HS_ENV(io);
	struct st_hs_memo *m = ST_HS_MEMO(io);
	bool interp;
	__u64 lo;

	io->entry = 0;
	io->stat = ST_JAVA_STAT__MAX;
	interp = st_hs_in(io->ip, io->java.interp_start, io->java.interp_end);
	if (!interp) {
		const struct st_java_blobs *b = st_hs_blobs(io, m);
		struct st_hs_frame f;
		int r = b ? st_hs_blob_step_b(e, b, io->java.interp_start, io->java.interp_end, m,
					      io->ip, io->sp, io->bp, io->exact, &f)
			  : 0;

		if (f.cache < ST_JAVA_STAT__MAX)
			ST_HS_COUNT(io, f.cache);
		if (r > 0) {
			if (f.note < ST_JAVA_STAT__MAX)
				ST_HS_COUNT(io, f.note);
			io->stat = ST_JAVA_STAT_HS_FRAMES;
			io->entry = f.entry;
			io->ip = f.ip;
			io->sp = f.sp;
			io->bp = f.bp;
			return 0;
		}
		if (r < 0) {
			io->stat = f.stop;
			return 1;
		}
		io->stat = ST_JAVA_STAT_CODE_CACHE;
		/* no CFI there: what the unwinder does with such a frame
		 * (frame pointers in auto, the end in dwarf) */
		if (!io->fallback)
			return 1;
	}
	/* the frame: an interpreted one's slots with its links */
	lo = interp ? io->bp - 8 * ST_JAVA_SLOTS_BELOW : io->bp;
	if (interp && io->exact && st_hs_ptr_ok(io->bp) && lo < io->sp && io->bp >= io->sp) {
		/* the leaf in a method entry building its frame (rbp set,
		 * its slots not all pushed): its links only, its method the
		 * entry's rbx, at bci 0 */
		if (st_hs_read_words(io, e, ST_JAVA_SLOTS_BELOW, 2, io->bp)) {
			io->stat = ST_JAVA_STAT_END_READ;
			return 1;
		}
		if (!st_hs_code_of(io, io->rbx)) {
			io->entry = ST_JAVA_TAG | ST_JAVA_ADDR(io->rbx, 0);
			io->stat = ST_JAVA_STAT_HS_ENTRY;
		} else {
			io->stat = ST_JAVA_STAT_BAD_METHOD;
		}
		lo = io->bp;
		io->bp = st_hs_word(io, 0);
		io->ip = st_hs_word(io, 1);
		io->sp = lo + 16;
		return 0;
	}
	/* the frame's links; an interpreted one's Method* and bcp slots too
	 * (the words a frame needs: four loads from the stack window) */
	if (!st_hs_ptr_ok(io->bp) || lo < io->sp ||
	    st_hs_read_words(io, e, ST_JAVA_SLOTS_BELOW, 2, io->bp) ||
	    (interp && (st_hs_read_slot(io, e, io->bp, io->java.l.frame_method) ||
			st_hs_read_slot(io, e, io->bp, io->java.l.frame_bcp)))) {
		if (interp)
			io->stat = ST_JAVA_STAT_END_READ;
		return 1;
	}
	if (interp)
		st_hs_interp(io);
	lo = io->bp;
	io->bp = st_hs_word(io, 0);
	io->ip = st_hs_word(io, 1);
	/* a compiled caller: its sp the sender sp slot (fp - 8) */
	if (interp && st_hs_in(io->ip, io->java.code_start, io->java.code_end) &&
	    !st_hs_in(io->ip, io->java.interp_start, io->java.interp_end)) {
		if (st_hs_read_slot(io, e, lo, -1)) {
			io->stat = ST_JAVA_STAT_END_READ;
			io->entry = 0;
			return 1;
		}
		io->sp = st_hs_word(io, -1);
	} else {
		io->sp = lo + 16;
	}
	return 0;
}

#endif

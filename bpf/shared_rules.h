/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shared_rules.h - the rules the session's object (sample.bpf.c) and the
 * early object (early.bpf.c) both run, one source each, on the maps of
 * shared_maps.h: the counters, a process's first-sample event, a deferred
 * sample's stack copy and fill, and its submission to the `deferred` ring.
 * CO-RE-free, as the early object must be (no field of a kernel structure
 * read here: libbpf does not read the kernel's BTF for it): what a caller
 * reads through CO-RE (the task's image, its registers) it passes as
 * arguments. Included by base.bpf.h and early.bpf.c.
 */
#ifndef STACKTREE_SHARED_RULES_H
#define STACKTREE_SHARED_RULES_H

#include "shared_maps.h"

/* One more of counter which (ST_STAT_*) of event ev (ST_EVENT_*). */
static __always_inline void stat_ev(__u32 ev, __u32 which)
{
	__u32 key = ev * ST_STAT__MAX + which;
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		*v += 1;
}

/* A cpu-clock counter (the events' shared paths count for ST_EVENT_CPU). */
static __always_inline void stat_inc(__u32 which)
{
	stat_ev(ST_EVENT_CPU, which);
}

/* An event for the daemon (struct st_event), the current task's image
 * image; false when the ring is full (counted). */
static __always_inline bool emit_event_image(__u32 type, __u32 pid, __u32 tid, __u32 ppid,
					     __u32 image)
{
	struct st_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(ST_STAT_NEW_PROC_LOST);
		return false;
	}
	e->type = type;
	e->pid = pid;
	e->tid = tid;
	e->ppid = ppid;
	e->image = image;
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return true;
}

/* A process's first sample (not in seen_procs: the caller looked), running
 * image; pi its proc_images entry or NULL: marked seen, and the daemon told
 * (it reads the process's maps), with its parent when it has not exec'd
 * since its fork (its parent's mappings then). */
static __always_inline void new_proc_event(__u32 tgid, __u32 tid, __u32 image,
					   const struct st_proc_image *pi)
{
	__u32 ppid = pi && pi->parent && pi->fork_image == image ? pi->parent : 0;
	__u8 one = 1;

	bpf_map_update_elem(&seen_procs, &tgid, &one, BPF_ANY);
	emit_event_image(ST_EV_NEW_PROC, tgid, tid, ppid, image);
}

/* Copy the stack page by page (a bpf_loop() callback of each object,
 * copy_page(), calls copy_stack_page()), a page that is not there a hole
 * (a single read of the whole range fails on any page missing, seen for
 * young processes); sp's own page missing: a hole too in sp's mapping (a
 * leaf that has just moved sp down into its big frame: glibc's
 * buffered_vfprintf, 8 KiB), else nothing. stop_at_hole (a constant of
 * the callback: the branch it does not take is not verified): the range
 * is not the mapping's (the early object cannot look it up: a CO-RE
 * read), and the copy ends where ST_EARLY_HOLES + 1 pages in a row are
 * not there (the mapping's end, as a rule), holes of up to
 * ST_EARLY_HOLES pages inside a big frame's untouched part kept as holes
 * (HotSpot's Threads::create_vm in Temurin 25, 8.5 KiB built without
 * stack-clash probes: a JVM's start-up samples on the early object were
 * cut there, 116 of the 124 of `java -version`'s main thread). */
#define ST_EARLY_HOLES 2

struct stack_copy {
	struct st_deferred *d;
	__u64 start, end;	/* sp, and the end of the range to copy (not with
				 * stop_at_hole: ST_DEFER_STACK's) */
	bool mapped;		/* [start, end) is sp's mapping (bpf_find_vma()) */
	__u32 first;		/* bytes in sp's page (copy 0), then whole pages */
	__u32 len;		/* out: bytes copied */
	__u64 holes;		/* out: pages not there (struct st_deferred's) */
};

/* Copy i: sp's page for i == 0, then the i-th page above. Offsets derive
 * from i, not from the previous copy, so that the verifier checks the
 * callback once for any i. */
static __always_inline long copy_stack_page(struct stack_copy *c, __u32 i, bool stop_at_hole)
{
	__u32 off = i ? c->first + (i - 1) * 4096 : 0, n = i ? 4096 : c->first;
	__u64 addr = c->start + off;

	if (off > ST_DEFER_STACK - 4096 || n > 4096)
		return 1;
	/* (stop_at_hole: no end but ST_DEFER_STACK's; without these checks
	 * the early object's program verifies in 1,058 instructions, with
	 * them 5,240) */
	if (!stop_at_hole && addr >= c->end)
		return 1;
	if (!stop_at_hole && n > c->end - addr)
		n = (__u32)(c->end - addr);
	/* a page not there (a big frame's untouched part: x264's 31 KiB
	 * one) is a hole, zeros (the failed read clears it), not the end:
	 * the frames above it are wanted */
	if (bpf_probe_read_user(&c->d->stack[off], n, (const void *)addr)) {
		/* stop_at_hole: a hole if a page after it is there; the pages
		 * before it in holes, not a count (a counter on the stack, a
		 * value the verifier tracks exactly, made it check the
		 * callback over a million instructions) */
		if (stop_at_hole && (!i || (i > ST_EARLY_HOLES &&
					    ((c->holes >> ((i - ST_EARLY_HOLES) & 63)) &
					     ((1ull << ST_EARLY_HOLES) - 1)) ==
					    (1ull << ST_EARLY_HOLES) - 1)))
			return 1;
		if (!stop_at_hole && !i && !c->mapped)
			return 1;
		c->holes |= 1ull << (i & 63);
		if (stop_at_hole)
			return 0;	/* (c->len: up to the last page there) */
	}
	c->len = off + n;
	return 0;
}

/* x86-64's saved user registers (the uapi's struct pt_regs: a layout the
 * kernel's entry code keeps), read whole: no field offset to relocate, and
 * one read where CO-RE reads one field at a time. */
struct uregs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/* The current task's user registers into r: false when they cannot be
 * read. */
static __always_inline bool read_uregs(struct uregs *r)
{
	return !bpf_probe_read_kernel(r, sizeof(*r),
				      (const void *)bpf_task_pt_regs(bpf_get_current_task_btf()));
}

/* A deferred sample's head: the thread, its image, its number in the
 * thread's deferred samples (seq), its registers and comm. */
static __always_inline void deferred_fill(struct st_deferred *d, __u64 pid_tgid, __u32 image,
					  __u32 seq, const struct uregs *r)
{
	d->pid = pid_tgid >> 32;
	d->tid = (__u32)pid_tgid;
	d->image = image;
	d->seq = seq;
	d->ip = r->ip;
	d->sp = r->sp;
	d->bp = r->bp;
	d->r10 = r->r10;
	d->rbx = r->bx;
	d->r13 = r->r13;
	d->compat = st_cs_compat(r->cs);
	bpf_get_current_comm(d->comm, sizeof(d->comm));
}

/* d, its stack cut at len bytes, into the `deferred` ring: false when
 * there is no ring yet or it is full (counted by the caller). The consumer
 * is not woken for each record: a wakeup per sample put the daemon's reader
 * on the target's CPU once a sample, preempting it (a spinning command
 * launched in dwarf mode: ~700 involuntary context switches in its first
 * second, its CPU clock 5% behind its samples, perf's as ours). It reads
 * the ring every ST_DEFER_READ_MS while records come
 * (user/collect/unwind/defer_ring.c), and is woken when one
 * ST_DEFER_WAKE_SHARE of the ring waits, or (wake) for each sample of a
 * thread waiting for its handoff (take_handoff(): the daemon's path must
 * reach its newest sample, which a batched read keeps behind: 2,000
 * samples waited and the handoff missed). */
static __always_inline bool deferred_submit(struct st_deferred *d, __u32 len, bool wake)
{
	__u32 zero = 0;
	void *ring = bpf_map_lookup_elem(&deferred, &zero);
	__u64 avail, flags;

	if (!ring || len > ST_DEFER_STACK)
		return false;
	avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
	flags = wake || avail >= bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / ST_DEFER_WAKE_SHARE ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	return bpf_ringbuf_output(ring, d, offsetof(struct st_deferred, stack) + len, flags) == 0;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * defer.bpf.h - deferral and handoff: a sample whose walk needs tables not
 * in yet goes to the daemon whole (registers, stack copy, kernel frames:
 * the `deferred` ring buffer, user/collect/unwind/defer_ring.c, with its Python
 * frames walked at the sample: bpf/pywalk.h); a thread whose
 * samples went there comes back to the BPF fold with the daemon's last path
 * for it (`handoffs`, user/collect/unwind/deferred.c), so that its calls count
 * once across the switch. See kernel-notes/unwinding.md.
 */
#ifndef STACKTREE_DEFER_BPF_H
#define STACKTREE_DEFER_BPF_H

#include "base.bpf.h"
#include "procs.bpf.h"
#include "threads.bpf.h"
#include "walk.bpf.h"
#include "python.bpf.h"

/* `deferred` (the ring of struct st_deferred the daemon reads) and
 * `defer_buf` (a sample being assembled, one per CPU): shared_maps.h */

/* A thread's path handed back by the daemon (struct st_handoff), by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct st_handoff);
	/* not created in fp mode but with the early object
	 * (user/collect/session.c, early_object_fp()) */
	__uint(max_entries, 1024);
} handoffs SEC(".maps");

struct stack_top {
	__u64 end;
	bool found;
};

static long stack_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct stack_top *t = data;

	t->found = true;
	t->end = vma->vm_end;
	return 0;
}

/* Copy the stack page by page, a page that is not there a hole (a single
 * read of the whole range fails on any page missing, seen for young
 * processes); sp's own page missing: a hole too in sp's mapping (a leaf
 * that has just moved sp down into its big frame: glibc's
 * buffered_vfprintf, 8 KiB), else nothing. */
struct stack_copy {
	struct st_deferred *d;
	__u64 start, end;	/* sp, and the end of the range to copy */
	bool mapped;		/* [start, end) is sp's mapping (bpf_find_vma()) */
	__u32 first;		/* bytes in sp's page (copy 0), then whole pages */
	__u32 len;		/* out: bytes copied */
	__u64 holes;		/* out: pages not there (struct st_deferred's) */
};

/* Copy i: sp's page for i == 0, then the i-th page above. Offsets derive
 * from i, not from the previous copy, so that the verifier checks the
 * callback once for any i. */
static long copy_page(__u32 i, void *data)
{
	struct stack_copy *c = data;
	__u32 off = i ? c->first + (i - 1) * 4096 : 0, n = i ? 4096 : c->first;
	__u64 addr = c->start + off;

	if (addr >= c->end || off > ST_DEFER_STACK - 4096 || n > 4096)
		return 1;
	if (n > c->end - addr)
		n = (__u32)(c->end - addr);
	/* a page not there (a big frame's untouched part: x264's 31 KiB
	 * one) is a hole, zeros (the failed read clears it), not the end:
	 * the frames above it are wanted */
	if (bpf_probe_read_user(&c->d->stack[off], n, (const void *)addr)) {
		if (!i && !c->mapped)
			return 1;
		c->holes |= 1ull << (i & 63);
	}
	c->len = off + n;
	return 0;
}

/* The frame-pointer chain from the interrupted rbp, followed through the
 * copy (no read of the process) for as long as it climbs; where its next
 * pair (saved rbp, return address) lies past the copy's end, the copy goes
 * on a page at a time, read from the process whatever mapping holds it,
 * and ends at the first page that is not there. A goroutine's stack lies
 * in Go's heap, whose mapping a copy to the end of sp's mapping does not
 * follow across a split, nor past sp's page when the mapping could not be
 * looked up (bpf_find_vma() busy: another program's lookup on this CPU in
 * the same interrupt, seen under three other profilers); a native stack
 * whose mapping really ends keeps a chain inside it (a chain of garbage
 * leaves it at most ST_DEFER_STACK bytes, at a guard page at once). */
struct stack_chain {
	struct st_deferred *d;
	__u64 bp;	/* the frame pointer followed */
	__u32 len;	/* bytes copied */
};

#define ST_CHAIN_STEP 8	/* frames a bpf_loop step (a frame a step: ~5 ns a frame more) */

static long chain_step(__u32 i, void *data)
{
	struct stack_chain *c = data;
	struct st_deferred *d = c->d;
	__u64 off, addr, next;
	__u32 at, n;

#pragma unroll
	for (__u32 j = 0; j < ST_CHAIN_STEP; j++) {
		off = c->bp - d->sp;
		if (c->bp < d->sp || (off & 7) || off > ST_DEFER_STACK - 16)
			return 1;
		if (off + 16 > c->len) {	/* past the copy: its next page */
			at = c->len;
			addr = d->sp + at;
			n = 4096 - (__u32)(addr & 4095);
			if (at > ST_DEFER_STACK - 4096 ||
			    bpf_probe_read_user(&d->stack[at], n, (const void *)addr))
				return 1;
			c->len = at + n;
			return 0;
		}
		next = *(__u64 *)&d->stack[off];
		if (next <= c->bp)	/* 0 at a chain's end; a chain climbs */
			return 1;
		c->bp = next;
	}
	return 0;
}

/* The sample for the daemon to unwind (sc->defer): registers, the stack
 * from sp up to the end of its mapping and on as its frame-pointer chain
 * leads (at most ST_DEFER_STACK bytes: chain_step()), the kernel frames,
 * and the py_n Python frames st_py_walk_sample() walked
 * (the daemon merges them after its unwind). False when the ring buffer is
 * full. */
__noinline int defer_sample(struct scratch *sc, __u32 kn, __u32 seq, __u32 py_n)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();	/* (five arguments at most) */
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct stack_top top = {};
	struct st_deferred *d;
	__u32 cpu = bpf_get_smp_processor_id(), len = 0, zero = 0;
	struct stack_copy cp = {};
	struct stack_chain ch = {};
	void *ring;
	__u64 avail, start_stack, flags;

	d = bpf_map_lookup_elem(&defer_buf, &cpu);
	if (!d || !sc)
		return 0;
	d->pid = tgid;
	d->tid = tid;
	d->image = task_image(task);
	/* the daemon reads this process's maps for d->image: say which it is */
	set_proc_image(tgid, d->image, 0, BPF_NOEXIST);
	d->seq = seq;
	d->ip = BPF_CORE_READ(regs, ip);
	d->sp = BPF_CORE_READ(regs, sp);
	d->bp = BPF_CORE_READ(regs, bp);
	d->r10 = BPF_CORE_READ(regs, r10);
	d->rbx = BPF_CORE_READ(regs, bx);
	d->r13 = BPF_CORE_READ(regs, r13);
	bpf_get_current_comm(d->comm, sizeof(d->comm));
	d->kn = kn <= ST_MAX_KERNEL ? kn : 0;
	if (d->kn)
		__builtin_memcpy(d->kstack, sc->kstack, sizeof(d->kstack));
	st_py_defer(&d->py, tgid, py_n);
	start_stack = BPF_CORE_READ(task, mm, start_stack);
	if (test_defer != ST_TEST_DEFER_NO_VMA &&
	    !bpf_find_vma(task, d->sp, stack_vma_cb, &top, 0) && top.found && top.end > d->sp) {
		avail = top.end - d->sp;
		cp.mapped = true;
	} else if (start_stack > d->sp && start_stack - d->sp < (8u << 20)) {
		/* the lookup refused (the mmap lock, or the irq_work that
		 * releases it, busy): the main thread's stack */
		avail = start_stack - d->sp;
	} else {
		avail = 4096 - (d->sp & 4095);	/* the rest of sp's page */
	}
	cp.d = d;
	cp.start = d->sp;
	cp.end = d->sp + (avail > ST_DEFER_STACK ? ST_DEFER_STACK : avail);
	cp.first = 4096 - (__u32)(d->sp & 4095);
	bpf_loop(ST_DEFER_STACK / 4096 + 1, copy_page, &cp, 0);
	len = cp.len;
	if (len && len <= ST_DEFER_STACK - 4096) {	/* room to go on */
		ch.d = d;
		ch.bp = d->bp;
		ch.len = len;
		bpf_loop(ST_DEFER_CHAIN, chain_step, &ch, 0);
		len = ch.len;
	}
	if (len > ST_DEFER_STACK)
		len = 0;
	d->stack_len = len;
	d->holes = cp.holes;
	ring = bpf_map_lookup_elem(&deferred, &zero);
	if (!ring)	/* none yet: as a full one (counted by the caller) */
		return 0;
	/* The consumer is not woken for each record: a wakeup per sample put
	 * the daemon's reader on the target's CPU once a sample, preempting it
	 * (a spinning command launched in dwarf mode: ~700 involuntary context
	 * switches in its first second, its CPU clock 5% behind its samples,
	 * perf's as ours). It reads the ring every ST_DEFER_READ_MS while
	 * records come (user/collect/unwind/defer_ring.c), and is woken when
	 * one ST_DEFER_WAKE_SHARE of the ring waits, or for each sample of a
	 * thread waiting for its handoff (take_handoff(): the daemon's path
	 * must reach its newest sample, which a batched read keeps behind:
	 * 2,000 samples waited and the handoff missed). */
	avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
	flags = sc->force_defer ||
		avail >= bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / ST_DEFER_WAKE_SHARE ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	return bpf_ringbuf_output(ring, d, offsetof(struct st_deferred, stack) + len, flags) == 0;
}

/* A thread comes back to the fold here without the daemon's path: its
 * next sample starts a path afresh (every frame a new call). */
static __always_inline void end_deferral(struct thread_state *ts)
{
	ts->depth = 0;
	ts->root = 0;
	ts->deferring = 0;
}

/* A thread whose samples went to the daemon (deferred) comes back to the
 * fold here only with the daemon's last path for it (struct st_handoff,
 * written once the daemon has unwound them all): compared with that path,
 * its next sample counts as new calls only the frames that are new. Until
 * then its samples are deferred, even those walked whole here, and after
 * ST_HANDOFF_WAIT of them it comes back without the path (counted). */
static __always_inline bool take_handoff(struct thread_state *ts, __u32 tid)
{
	struct st_handoff *h = bpf_map_lookup_elem(&handoffs, &tid);

	if (h && h->seq == ts->defer_seq) {
		bpf_probe_read_kernel(ts->addrs, sizeof(ts->addrs), h->addrs);
		bpf_probe_read_kernel(ts->flags, sizeof(ts->flags), h->flags);
		ts->depth = h->n < ST_PATH_SLOTS ? h->n : ST_PATH_SLOTS - 1;
		ts->root = 0;
		ts->epoch = ST_EPOCH_HANDOFF;
		ts->deferring = 0;
		bpf_map_delete_elem(&handoffs, &tid);
		stat_inc(ST_STAT_HANDOFF);
		return false;
	}
	if (ts->deferring >= ST_HANDOFF_WAIT) {
		end_deferral(ts);
		stat_inc(ST_STAT_HANDOFF_MISSED);
		return false;
	}
	return true;
}

#endif

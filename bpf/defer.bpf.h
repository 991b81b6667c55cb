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

/* A thread's path handed back by the daemon (struct st_handoff, as its
 * sums: bpf/pathhash.h), by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct st_handoff_sums);
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

/* The stack's copy page by page, holes and all (struct stack_copy:
 * shared_rules.h). */
static long copy_page(__u32 i, void *data)
{
	return copy_stack_page(data, i, false);
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
		/* one aligned load (off & 7 is 0; through &d->stack[off], the
		 * byte array's alignment made clang load it byte by byte:
		 * st_unw_read8() in bpf/unwind.h says more) */
		next = ((const __u64 *)d->stack)[(off >> 3) & (ST_DEFER_STACK / 8 - 1)];
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
	__u32 tgid = pid_tgid >> 32;
	struct task_struct *task = bpf_get_current_task_btf();
	struct stack_top top = {};
	struct st_deferred *d;
	__u32 cpu = bpf_get_smp_processor_id(), len = 0;
	struct stack_copy cp = {};
	struct stack_chain ch = {};
	struct uregs r;
	__u64 avail, start_stack;

	d = bpf_map_lookup_elem(&defer_buf, &cpu);
	if (!d || !sc || !read_uregs(&r))	/* (as a full ring: counted by the caller) */
		return 0;
	deferred_fill(d, pid_tgid, task_image(task), seq, &r);
	/* the daemon reads this process's maps for d->image: say which it is */
	set_proc_image(tgid, d->image, 0, BPF_NOEXIST);
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
	/* no ring yet: as a full one (counted by the caller); each sample of
	 * a thread waiting for its handoff wakes the reader */
	return deferred_submit(d, len, sc->force_defer);
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
	struct st_handoff_sums *h = bpf_map_lookup_elem(&handoffs, &tid);

	if (h && h->seq == ts->defer_seq) {
		bpf_probe_read_kernel(&ts->prev, sizeof(ts->prev), &h->s);
		ts->depth = h->s.n < ST_PATH_SLOTS ? h->s.n : ST_PATH_SLOTS - 1;
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

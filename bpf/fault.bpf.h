/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fault.bpf.h - the page-fault program (--event faults): a user page
 * fault's stack, with a data leaf for a data fault classified in the kernel
 * (module / stack / heap, bpf/classify.h, from bpf_find_vma), folded into
 * the thread's page-fault tree; --force-faults' pages (`forced_pages`) are
 * flagged at their next fault. Loaded only with --event faults.
 */
#ifndef STACKTREE_FAULT_BPF_H
#define STACKTREE_FAULT_BPF_H

#include "base.bpf.h"
#include "classify.h"
#include "procs.bpf.h"
#include "threads.bpf.h"
#include "walk.bpf.h"
#include "fold.bpf.h"
#include "python.bpf.h"

/* --force-faults: pages the daemon paged out, until their next fault */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct st_forced_key);
	__type(value, __u8);
	__uint(max_entries, 1);	/* resized before load when forcing */
} forced_pages SEC(".maps");

#define X86_PF_INSTR (1UL << 4)	/* the fault was an instruction fetch */
#define ST_VM_GROWSDOWN 0x100UL	/* VM_GROWSDOWN: the main thread's stack */

struct vma_info {
	__u64 start, end, sp;
	bool found, file, growsdown;
};

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_info *v = data;

	v->found = true;
	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->file = vma->vm_file != NULL;
	v->growsdown = (BPF_CORE_READ(vma, vm_flags) & ST_VM_GROWSDOWN) != 0;
	return 0;
}

/* The data leaf for a data fault at addr (see classify.h). Only one
 * bpf_find_vma() per program run is allowed here: the tracepoint runs with
 * interrupts off, so the mmap lock is released later, by an irq_work, and a
 * second call fails with EBUSY. */
static __always_inline __u16 classify(struct task_struct *task, __u64 addr, __u64 sp, __u64 bp,
				      __u64 *leaf)
{
	struct st_fault_in in = { .addr = addr, .sp = sp, .bp = bp };
	struct vma_info v = {};

	if (!bpf_find_vma(task, addr, vma_cb, &v, 0) && v.found) {
		in.vma_found = 1;
		in.vma_start = v.start;
		in.vma_end = v.end;
		in.vma_file = v.file;
		in.vma_growsdown = v.growsdown;
	}
	in.start_data = BPF_CORE_READ(task, mm, start_data);
	in.start_brk = BPF_CORE_READ(task, mm, start_brk);
	in.brk = BPF_CORE_READ(task, mm, brk);
	return st_classify_fault(&in, leaf);
}

/* A page fault; dwarf: the variant (walk.bpf.h's user_stack()). */
static __always_inline int fault_sample(void *ctx, unsigned long address, struct pt_regs *regs,
					unsigned long error_code, bool dwarf)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0, n;
	struct task_struct *task = bpf_get_current_task_btf();
	struct path_view pv = {};
	struct scratch *sc;
	__u64 leaf = 0;
	__u16 cls;
	long un;

	if (!wanted(tgid, tid, ST_EVENT_FAULTS))
		return 0;
	stat_ev(ST_EVENT_FAULTS, ST_STAT_SAMPLES);
	sc = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!sc)
		return 0;
	un = user_stack(ctx, sc, NULL, dwarf, false, false);
	if (un < 0) {
		stat_ev(ST_EVENT_FAULTS, ST_STAT_LOST_STACK);
		return 0;
	}
	if (un > 0)	/* the Python line whose work touched the data */
		un = st_py_sample((struct st_py_ustack *)sc->ustack, (__u32)un, ST_MAX_USER,
				  pid_tgid, task_image(task), &sc->utrunc);
	path_user(&pv, sc, un, ST_EVENT_FAULTS);
	if (error_code & X86_PF_INSTR) {
		/* an instruction fetch: the path ends at the faulting function */
		stat_ev(ST_EVENT_FAULTS, ST_STAT_FAULT_INSTR);
	} else {
		cls = classify(task, address, regs->sp, regs->bp, &leaf);
		if (!cls)
			stat_ev(ST_EVENT_FAULTS, ST_STAT_FAULT_UNKNOWN);
		if (cls) {
			/* a page --force-faults paged out: its key is deleted at its next
			 * fault. Branch-free (0 or ST_NODE_FORCED): a branch here doubles the
			 * verifier's states of the fold below, past its 1M-instruction limit */
			struct st_forced_key fk = { .tgid = tgid, .page = address & ~4095ULL };
			__u64 forced = ~(__u64)bpf_map_delete_elem(&forced_pages, &fk) >> 63;
			__u32 key = ST_EVENT_FAULTS * ST_STAT__MAX + ST_STAT_FAULT_FORCED;
			__u64 *v = bpf_map_lookup_elem(&stats, &key);

			if (v)
				*v += forced;
			cls |= (__u16)(forced << 10);	/* ST_NODE_FORCED */
			stat_ev(ST_EVENT_FAULTS, (cls & ST_NODE_DATA_MODULE) ? ST_STAT_FAULT_MODULE :
						 (cls & ST_NODE_DATA_STACK)	 ? ST_STAT_FAULT_STACK :
											   ST_STAT_FAULT_HEAP);
			pv.extra = 1;
			pv.extra_flags = cls;
			pv.extra_addr = leaf;
		}
	}
	if (!pv.un && !pv.extra) {
		stat_ev(ST_EVENT_FAULTS, ST_STAT_EMPTY_STACK);
		pv.extra = 1;
		pv.extra_flags = ST_NODE_KERNEL | ST_NODE_LEAF;
	}
	n = pv.trunc + pv.un + pv.extra;
	if (n > ST_PATH_SLOTS - 1)
		n = ST_PATH_SLOTS - 1;
	pv.n = n;
	fold_sample(sc, &pv,
		    bpf_task_storage_get(&fault_threads, bpf_get_current_task_btf(), 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE),
		    ((__u64)tgid << 32) | tid, ST_EVENT_FAULTS);
	return 0;
}

/* --unwind fp (2.7% here). Verifier budgets: see sample.bpf.c. */
#define ST_BUDGET_ON_FAULT_FP 20
SEC("tp_btf/page_fault_user")
int BPF_PROG(on_fault_fp, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return fault_sample(ctx, address, regs, error_code, false);
}

/* --unwind dwarf and auto (44.7% here, the DWARF walker with its HotSpot
 * rule most of it). */
#define ST_BUDGET_ON_FAULT_DWARF 60
SEC("tp_btf/page_fault_user")
int BPF_PROG(on_fault_dwarf, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	return fault_sample(ctx, address, regs, error_code, true);
}

#endif

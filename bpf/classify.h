/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * classify.h - the page-fault data classes (module / stack / heap), as a
 * pure function of what the kernel knows about the fault: used by the BPF
 * program (bpf/fault.bpf.h gathers the inputs with bpf_find_vma) and by
 * the unit tests, on synthetic maps.
 */
#ifndef STACKTREE_CLASSIFY_H
#define STACKTREE_CLASSIFY_H

#include "stacktree.h"

#define ST_STACK_SLACK (1ULL << 20)	/* unmapped, this close to sp: stack growth */

struct st_fault_in {
	__u64 addr;		/* the faulting data address */
	__u64 sp, bp;		/* user registers at the fault */
	__u64 start_data, start_brk, brk;	/* from the mm */
	__u64 vma_start, vma_end;	/* the mapping containing addr, if found */
	__u8 vma_found, vma_file, vma_growsdown;
};

/* ST_NODE_DATA_* flags (0: unclassified) and the data leaf's address. */
static inline __u16 st_classify_fault(const struct st_fault_in *in, __u64 *leaf)
{
	__u64 a = in->addr;

	if (!in->vma_found) {
		/* no mapping yet: the main stack growing down to addr */
		if (a + ST_STACK_SLACK >= in->sp && a < in->sp + ST_STACK_SLACK) {
			*leaf = a - (in->bp + 16);
			return ST_NODE_DATA_STACK;
		}
		return 0;
	}
	if (in->vma_file) {
		*leaf = a; /* user space finds the module and the symbol */
		return ST_NODE_DATA_MODULE;
	}
	if (in->vma_growsdown || (in->sp >= in->vma_start && in->sp < in->vma_end)) {
		/* from the faulting function's canonical frame address */
		*leaf = a - (in->bp + 16);
		return ST_NODE_DATA_STACK;
	}
	if (a >= in->start_brk && a < in->brk) {
		*leaf = a - in->start_brk;
		return ST_NODE_DATA_HEAP | ST_NODE_HEAP_BRK;
	}
	/* the executable's .bss (anonymous, possibly split by madvise or
	 * mprotect) lies between its data and the brk heap; a library's .bss is
	 * told from other anonymous memory by user space, which knows the
	 * modules' extents */
	if (a >= in->start_data && a < in->start_brk) {
		*leaf = a;
		return ST_NODE_DATA_MODULE;
	}
	*leaf = a; /* anonymous: the address itself */
	return ST_NODE_DATA_HEAP;
}

#endif

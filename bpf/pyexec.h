/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pyexec.h - a CPython executable's py_procs entry as a template of its
 * file (struct st_py_exe, bpf/stacktree.h), relocated by a process's load
 * bias: the exec program's side (bpf/python.bpf.h, st_py_on_exec()) and
 * the daemon's (user/collect/runtimes/python/python.c, which makes the
 * template from a probed process). Compiled for BPF and natively
 * (tests/unit/test_pyexec.c).
 *
 * The bias: the kernel's ELF loader sets mm->start_code to the p_vaddr of
 * the lowest executable PT_LOAD plus the load bias (0 for a non-PIE
 * executable), so bias = start_code - text_vaddr; a page-aligned value, or
 * the template is not this file's (refused).
 */
#ifndef STACKTREE_PYEXEC_H
#define STACKTREE_PYEXEC_H

#include "stacktree.h"

/* Move every address of p (0: absent, kept) by delta (mod 2^64: a
 * negative delta is its two's complement). */
static inline void st_py_proc_shift(struct st_py_proc *p, __u64 delta)
{
	__u64 *a[] = { &p->runtime,   &p->eval_start, &p->eval_end,   &p->cold_start,
		       &p->cold_end,  &p->code_type,  &p->text_start, &p->text_end };

	for (unsigned i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		if (*a[i])
			*a[i] += delta;
}

/* The load bias of a process whose mm->start_code is start_code, running
 * the file of template e: 0 and *bias, or -1 when the template cannot be
 * this file's (start_code below its text, or a bias not page-aligned). */
static inline int st_py_exe_bias(const struct st_py_exe *e, __u64 start_code, __u64 *bias)
{
	if (start_code < e->text_vaddr || ((start_code - e->text_vaddr) & 4095))
		return -1;
	*bias = start_code - e->text_vaddr;
	return 0;
}

/* The template of a py_procs entry p found with load bias bias in a file
 * whose lowest executable PT_LOAD is at text_vaddr: its addresses as the
 * file's (ELF virtual addresses), no image. */
static inline void st_py_exe_make(struct st_py_exe *out, const struct st_py_proc *p, __u64 bias,
				  __u64 text_vaddr)
{
	out->text_vaddr = text_vaddr;
	out->tmpl = *p;
	out->tmpl.image = 0;
	out->tmpl.from_exec = 0;
	st_py_proc_shift(&out->tmpl, (__u64)0 - bias);
}

#endif

/* pyproc.h - finding CPython in a process: where its runtime state is,
 * which version it is, and the layout the BPF walker needs.
 *
 * Owner: user/collect/runtimes/python/pyproc.c. st_py_elf__find() reads one ELF file (a
 * python executable or libpython) for the symbols the walker needs;
 * st_py_proc__probe() scans /proc/PID/maps for a mapping of such a file and
 * turns its symbols into runtime addresses. Files are opened with the
 * symbolizer's ELF code (st_elf__open: regular files of bounded size).
 */
#ifndef STACKTREE_PYPROC_H
#define STACKTREE_PYPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "user/collect/runtimes/python/pywalk_native.h"

/* Symbols of one ELF file (ELF virtual addresses; 0: absent). */
struct st_py_elf {
	__u64 runtime;		/* _PyRuntime */
	__u64 eval, eval_size;	/* _PyEval_EvalFrameDefault */
	__u64 cold, cold_size;	/* _PyEval_EvalFrameDefault.cold: the part GCC split
				 * off as cold; from the file, else from its debug
				 * file under /usr/lib/debug/.build-id/ (Debian's
				 * python3.11 names it only there) */
	__u64 code_type;	/* PyCode_Type */
	__u32 version;		/* Py_Version (0x030b07f0), or major.minor from the
				 * file name (0x030b0000), or 0 */
	__u64 text_vaddr;	/* p_vaddr of its lowest executable PT_LOAD (0: none) */
	__u64 text_end;		/* ... and that segment's end, page-aligned */
};

/* Read path's .dynsym and .symtab (name: the file's own name, for the
 * version when it exports no Py_Version). 0, -ENOENT (no _PyRuntime: not
 * an interpreter), or another negative errno. x86-64: Py_Version (an
 * unsigned long in 3.11) is read as its low 32 bits, little endian. */
int st_py_elf__find(const char *path, const char *name, struct st_py_elf *out);

/* Whether a mapped file's name looks like a CPython binary ("python3.11",
 * "libpython3.11.so.1.0", "python3"): the only ones st_py_proc__probe opens. */
bool st_py_elf__candidate(const char *path);

enum st_py_probe {
	ST_PY_PROBE_NONE,	/* no CPython mapped */
	ST_PY_PROBE_OK,		/* *out filled */
	ST_PY_PROBE_UNSUPPORTED, /* CPython of a version without a layout: *version */
};

/* Where st_py_proc__probe() found the interpreter. */
struct st_py_where {
	char file[128];		/* its mapping's /proc/PID/map_files/ link */
	__u64 bias;		/* runtime address = ELF vaddr + bias */
	__u64 text_vaddr;	/* st_py_elf's */
};

/* Look for CPython in process pid: ST_PY_PROBE_* (out filled when OK,
 * out->l the version's layout, and *where when not NULL), or a negative
 * errno (-ENOENT: gone). */
int st_py_proc__probe(int pid, struct st_py_proc *out, __u32 *version, struct st_py_where *where);

/* The py_exes template (bpf/pyexec.h) of executable path, read from the
 * file alone (an ELF read: its symbols, as st_py_elf__find()): 0, -ENOENT
 * (not CPython, or no executable PT_LOAD), -ENOTSUP (a version without a
 * layout), or another negative errno. Its 3.10 text range is the
 * executable segment's pages, as the kernel maps it. */
int st_py_exe__template(const char *path, struct st_py_exe *out);

#endif

/* pywalk_native.h - CPython's walk, its code keys and its merge
 * (bpf/pywalk.h, bpf/pymemo.h, bpf/pymerge.h) built natively: the daemon
 * merges the samples it unwinds late (pymerge.c) and names code objects
 * with the walker's identity (python.c, pyoffsets.c); the unit tests and
 * the fuzzers walk a live interpreter, or bytes, through a reader
 * callback. Only the reads are here (the contract on top of
 * bpf/pywalk.h); the rest is the BPF program's own source. */
#ifndef STACKTREE_PYWALK_NATIVE_H
#define STACKTREE_PYWALK_NATIVE_H

#include <linux/types.h>

/* Natively, memory is read by a callback: 0 or a negative errno. */
typedef long (*st_py_read_fn)(void *arg, void *dst, __u32 n, __u64 addr);

#define ST_PY_WALK_ENV                                                                             \
	st_py_read_fn read;                                                                        \
	void *read_arg;
#define ST_PY_READ(w, dst, n, a) ((w)->read((w)->read_arg, (dst), (n), (a)))

#include "bpf/pywalk.h"
#include "bpf/pymerge.h"

#endif

/* pycode.h - reading CPython code objects out of a process's memory.
 *
 * Owner: user/collect/runtimes/python/pycode.c. The memory is the target's, which its owner
 * controls: every length is bounded, every string checked, a read that
 * fails or a value out of range makes the object refused (negative errno),
 * never a crash. Reads go through a reader callback (process_vm_readv for
 * the daemon, a buffer for tests and the fuzz target tests/fuzz/fuzz_pycode.c).
 */
#ifndef STACKTREE_PYCODE_H
#define STACKTREE_PYCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "user/collect/runtimes/python/pywalk_native.h"

#define ST_PY_NAME_MAX 256		/* bytes of a qualname kept (UTF-8, NUL included) */
#define ST_PY_FILE_MAX 512		/* ... of a file name */
#define ST_PY_STR_MAX (1u << 16)	/* longer strings are refused */
#define ST_PY_LINETABLE_MAX (1u << 20)	/* longer location tables are refused */

/* Bit positions in PyASCIIObject.state, the same in 3.11, 3.12 and 3.13
 * (interned:2, kind:3, compact:1, ascii:1; tests/unit/test_pyoffsets.c
 * checks them against each supported version's DWARF): a version that
 * moves them needs them in struct st_py_layout. */
#define ST_PY_STATE_KIND 2
#define ST_PY_STATE_COMPACT 5
#define ST_PY_STATE_ASCII 6

struct st_py_code {
	char qualname[ST_PY_NAME_MAX];
	char filename[ST_PY_FILE_MAX];
	__u32 firstlineno;
	__u8 *linetable;	/* malloc'ed copy of co_linetable's bytes */
	__u32 linetable_len;
	bool lines_lost;	/* the table could not be read: lines are the first */
};

/* Read the code object at addr: 0, or -EFAULT (a read of the object or its
 * names failed), -EINVAL (not a code object: type is not code_type when
 * that is non-zero, or a field is absurd), -ENOMEM. A table that cannot be
 * read leaves the names (lines_lost). out->linetable is NULL on error. */
int st_py_code__read(const struct st_py_layout *l, __u64 code_type, st_py_read_fn rd, void *arg,
		     __u64 addr, struct st_py_code *out);
void st_py_code__release(struct st_py_code *c);

/* A reader of process *(pid_t *)arg's memory (process_vm_readv): 0 or
 * -EFAULT. */
long st_py_read_pid(void *arg, void *dst, __u32 n, __u64 addr);

/* A reader of a report's copies of memory (struct st_py_event, taken by BPF
 * at the sample), and through rd(arg) of what they do not hold. */
struct st_py_snaps {
	const struct st_py_event *e;
	st_py_read_fn rd;	/* NULL: the copies only */
	void *arg;
};
long st_py_read_snaps(void *arg, void *dst, __u32 n, __u64 addr);

/* A str object's text as UTF-8 into buf (cut to len - 1 bytes at a
 * character boundary): 0 or negative errno. */
int st_py_unicode__read(const struct st_py_layout *l, st_py_read_fn rd, void *arg, __u64 addr,
			char *buf, size_t len);

/* The line of code unit `index` from a 3.11 location table (PEP 626/657:
 * entries of (byte & 7) + 1 code units, kind in bits 3-6, line deltas as
 * signed varints), starting at firstlineno: the line, or 0 when the table
 * says none or does not cover index. Work is bounded by n. Entries are
 * decoded by bpf/pylines.h's st_py_loc_next(), as the BPF program's runs
 * of one line are: a node keyed by a run's first unit has its line. */
__u32 st_py_linetable__line(const __u8 *t, size_t n, __u32 firstlineno, __u32 index);

/* The same from a 3.10 line table (PEP 626's first form: pairs of bytes
 * of code, unsigned, and line delta, signed, -128 for none). */
__u32 st_py_linetable310__line(const __u8 *t, size_t n, __u32 firstlineno, __u32 index);

/* The line of code unit `index` by the table's form in version l. */
__u32 st_py_code__line(const struct st_py_layout *l, const __u8 *t, size_t n, __u32 firstlineno,
		       __u32 index);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pylines.h - CPython 3.11+'s location table (co_linetable, CPython's
 * Objects/locations.md): one entry decoded (st_py_loc_next), and the runs
 * of one line it makes (st_py_runs_step, st_py_canon). One source for the
 * daemon, which names a code unit's line with it (user/collect/runtimes/python/pycode.c),
 * and for the BPF program, which keys a Python frame by the first code unit
 * of its line's run (bpf/pymemo.h): two instructions of one line are one
 * node in the kernel's tree, as they are one node in the report
 * (kernel-notes/python.md, "Keys by line"). Compiled into BPF (a table
 * byte is read from a buffer of ST_PY_LT_BUF bytes, its index masked) and
 * natively (from the table itself); unit-tested natively against CPython's
 * own co_positions() (tests/unit/test_pycode.c).
 */
#ifndef STACKTREE_PYLINES_H
#define STACKTREE_PYLINES_H

#include "dual.h"
#include "stacktree.h"

#define ST_PY_LT_BUF 1024	/* BPF: bytes of the buffer a table is decoded from */
#define ST_PY_LOC_SCAN 32	/* bytes an entry may span (a long form: 1 + 4 varints of 5) */

/* kinds of location entries */
#define ST_PY_LOC_LONG 14
#define ST_PY_LOC_NO_COLUMNS 13
#define ST_PY_LOC_NONE 15
#define ST_PY_LOC_ONE_LINE0 10
#define ST_PY_LOC_ONE_LINE2 12

/* A byte of a table: in BPF from a buffer of ST_PY_LT_BUF bytes, natively
 * from the table itself (bpf/dual.h) */
#define ST_PY_LT_AT(buf, i) ST_AT(buf, i, ST_PY_LT_BUF)

/* One entry: `units` code units whose line is the previous entry's plus
 * `delta` (the first entry's: co_firstlineno's plus delta). */
struct st_py_loc {
	__u32 kind;
	__u32 units;
	__s32 delta;
};

/* The entry whose first byte is buf[base + p] (p < n, the table's bytes
 * being buf[base .. base + n)) into *e: the position of the next entry, or
 * 0 when that byte does not start an entry (a corrupt table ends there). A
 * varint is 6-bit chunks, bit 6 set in all but the last, at most 5; the
 * next entry starts at the next byte with bit 7 set, at most
 * ST_PY_LOC_SCAN bytes on. */
static __always_inline __u32 st_py_loc_next(const __u8 *buf, __u32 base, __u32 n, __u32 p,
					    struct st_py_loc *e)
{
	__u8 first = ST_PY_LT_AT(buf, base + p);
	__u32 q = p + 1, u = 0, shift = 0, k;

	if (!(first & 128))
		return 0;
	e->kind = (first >> 3) & 15;
	e->units = (first & 7) + 1;
	e->delta = 0;
	if (e->kind == ST_PY_LOC_LONG || e->kind == ST_PY_LOC_NO_COLUMNS) {
		for (k = 0; k < 5 && q < n; k++) {
			__u8 b = ST_PY_LT_AT(buf, base + q);

			q++;
			u |= (__u32)(b & 63) << shift;
			shift += 6;
			if (!(b & 64))
				break;
		}
		e->delta = (u & 1) ? -(__s32)(u >> 1) : (__s32)(u >> 1);
	} else if (e->kind >= ST_PY_LOC_ONE_LINE0 && e->kind <= ST_PY_LOC_ONE_LINE2) {
		e->delta = (__s32)(e->kind - ST_PY_LOC_ONE_LINE0);
	}
	for (k = 0; k < ST_PY_LOC_SCAN && q < n; k++) {
		if (ST_PY_LT_AT(buf, base + q) & 128)
			break;
		q++;
	}
	return q;
}

/* The line of an entry's units as the daemon names them: 0 for none (no
 * location, or a line out of range). */
static __always_inline __s64 st_py_loc_line(__u32 kind, __s64 line)
{
	return kind == ST_PY_LOC_NONE || line <= 0 || line > 0x7fffffff ? 0 : line;
}

/* Runs of one line: struct st_py_runs (bpf/stacktree.h). */

/* The decoding of a table into runs, one entry a step: its state. */
struct st_py_runs_at {
	struct st_py_runs runs;
	__s64 line;	/* the line so far (co_firstlineno to start with) */
	__s64 prev;	/* the previous entry's st_py_loc_line() */
	__u32 base, n;	/* the table: buf[base .. base + n) */
	__u32 p;	/* the next entry's first byte */
	__u32 at;	/* ... and first code unit: the units decoded (the cover) */
	__u32 cut;	/* 1: the table goes on past n (a copy of its start): an
			 * entry that reaches n may be cut short, and is not taken */
	__u32 pad;
};

static __always_inline void st_py_runs_begin(struct st_py_runs_at *r, __u32 base, __u32 n,
					     bool cut, __u32 firstlineno)
{
	__u32 k;

	for (k = 0; k < ST_PY_RUN_WORDS; k++)
		r->runs.starts[k] = 0;
	r->line = firstlineno;
	r->prev = 0;
	r->base = base;
	r->n = n;
	r->p = 0;
	r->at = 0;
	r->cut = cut;
}

/* One entry into r: 0 to go on, 1 when done (the table's end, a corrupt
 * entry, the end of a cut copy, or ST_PY_RUN_UNITS units covered). */
static __always_inline int st_py_runs_step(struct st_py_runs_at *r, const __u8 *buf)
{
	struct st_py_loc e;
	__u32 next, at = r->at;
	__s64 key;

	if (r->p >= r->n || at >= ST_PY_RUN_UNITS)
		return 1;
	next = st_py_loc_next(buf, r->base, r->n, r->p, &e);
	if (!next || (r->cut && next >= r->n))
		return 1;
	r->line += e.delta;
	key = st_py_loc_line(e.kind, r->line);
	if (at == 0 || key != r->prev)
		r->runs.starts[(at >> 6) & (ST_PY_RUN_WORDS - 1)] |= 1ULL << (at & 63);
	r->prev = key;
	r->at = at + e.units;
	r->p = next;
	return 0;
}

/* The units r covers (at most ST_PY_RUN_UNITS). */
static __always_inline __u32 st_py_runs_cover(const struct st_py_runs_at *r)
{
	return r->at < ST_PY_RUN_UNITS ? r->at : ST_PY_RUN_UNITS;
}

/* The index of the highest bit set in m (m != 0), without a branch: the
 * bits below it set too, then counted. */
static __always_inline __u32 st_py_fls64(__u64 m)
{
	m |= m >> 1;
	m |= m >> 2;
	m |= m >> 4;
	m |= m >> 8;
	m |= m >> 16;
	m |= m >> 32;
	m = m - ((m >> 1) & 0x5555555555555555ULL);
	m = (m & 0x3333333333333333ULL) + ((m >> 2) & 0x3333333333333333ULL);
	m = (m + (m >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((m * 0x0101010101010101ULL) >> 56) - 1;
}

/* The first code unit of the run that unit idx is in, when the runs (of
 * the first `cover` units) have it; else idx. */
static __always_inline __u32 st_py_canon(const struct st_py_runs *r, __u32 cover, __u32 idx)
{
	__u32 w, k;
	__u64 m;

	if (idx >= cover || idx >= ST_PY_RUN_UNITS)
		return idx;
	w = idx >> 6;
	m = r->starts[w & (ST_PY_RUN_WORDS - 1)] & (~0ULL >> (63 - (idx & 63)));
	for (k = 0; k < ST_PY_RUN_WORDS; k++) {
		if (m)
			return (w << 6) + st_py_fls64(m);
		if (!w)
			break;
		w--;
		m = r->starts[w & (ST_PY_RUN_WORDS - 1)];
	}
	return idx;	/* no start below it: not from st_py_runs_step() */
}

#endif

/* fuzz_pycode.c - libFuzzer target: the daemon's readers of a CPython
 * process's memory (user/collect/runtimes/python/pycode.c): a code object, its str
 * objects (qualname, file name) and its 3.11 location table (and 3.10's
 * line table), read from an input that stands for the target's memory,
 * mapped at MEM; plus the walker of bpf/pywalk.h over the same memory
 * (thread list and frames; 3.10's PyFrameObjects when the index is odd).
 * Input: 4 bytes of instruction index, then the memory (the code object at
 * its start, the runtime state at its start too). Seeds:
 * tests/fuzz/corpus/pycode/ (code objects as python3.11 lays them out,
 * with real location tables). The table's runs of one line
 * (bpf/pylines.h) are checked against the daemon's lines. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "user/collect/runtimes/python/pywalk_native.h"
#include "user/collect/runtimes/python/pycode.h"
#include "user/collect/runtimes/python/pyoffsets.h"

#define MEM 0x10000000ULL

struct mem {
	const uint8_t *p;
	size_t n;
};

static long rd(void *arg, void *dst, __u32 n, __u64 addr)
{
	const struct mem *m = arg;

	if (addr < MEM || addr - MEM > m->n || n > m->n - (addr - MEM))
		return -14;
	memcpy(dst, m->p + (addr - MEM), n);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct st_py_layout *l = st_py_layout__find(0x030b), *l310 = st_py_layout__find(0x030a);
	struct st_py_scratch s;
	struct st_py_proc p = { .runtime = MEM, .eval_start = 0x1000, .eval_end = 0x2000 };
	struct st_py_walk w = { .p = &p, .s = &s, .read = rd, .tid = 1 };
	__u64 frames[ST_PY_MAX_FRAMES * 2] = { 0x1100, 0x3000, 0x1200 };
	static struct st_py_event ev;
	struct st_py_snaps sn;
	struct st_py_code c;
	struct mem m;
	__u32 idx, line, n, units, lines[ST_PY_RUN_UNITS];
	__s64 ln = 1;
	bool cut, unm;
	__u64 ts;

	if (size < 4 || !l || !l310)
		return 0;
	memcpy(&idx, data, 4);
	m.p = data + 4;
	m.n = size - 4;
	if (st_py_code__read(l, 0, rd, &m, MEM, &c) == 0) {
		line = st_py_linetable__line(c.linetable, c.linetable_len, c.firstlineno, idx);
		(void)line;
		if (strlen(c.qualname) >= sizeof(c.qualname) || strlen(c.filename) >= sizeof(c.filename))
			__builtin_trap();
		st_py_code__release(&c);
	}
	/* the same through a report's copies (the input's first bytes copied
	 * as the code object's header, its whole as the other three copies'
	 * memory at MEM: reads inside or across their ends) and the input */
	memset(&ev, 0, sizeof(ev));
	ev.code = MEM;
	for (int i = 0; i < ST_PY_SNAPS; i++) {
		ev.at[i] = MEM + (i ? (__u64)(idx & 0xff) * 8 : 0);
		ev.len[i] = (__u32)(i ? idx >> 8 : m.n);
	}
	memcpy(ev.hdr, m.p, m.n < sizeof(ev.hdr) ? m.n : sizeof(ev.hdr));
	memcpy(ev.qual, m.p, m.n < sizeof(ev.qual) ? m.n : sizeof(ev.qual));
	memcpy(ev.file, m.p, m.n < sizeof(ev.file) ? m.n : sizeof(ev.file));
	memcpy(ev.table, m.p, m.n < sizeof(ev.table) ? m.n : sizeof(ev.table));
	sn.e = &ev;
	sn.rd = (idx & 1) ? rd : NULL;
	sn.arg = &m;
	if (st_py_code__read(l, 0, st_py_read_snaps, &sn, MEM, &c) == 0) {
		line = st_py_linetable__line(c.linetable, c.linetable_len, c.firstlineno, idx);
		(void)line;
		st_py_code__release(&c);
	}
	/* the table alone, as raw bytes, in both forms */
	line = st_py_linetable__line(m.p, m.n, 1, idx);
	line = st_py_linetable310__line(m.p, m.n, 1, idx);
	(void)line;
	/* its runs of one line (bpf/pylines.h), of the whole table and of a
	 * copy of its start: a unit is keyed by one of its own line, at or
	 * before it */
	n = m.n > ST_PY_LT_BUF ? ST_PY_LT_BUF : (__u32)m.n;
	units = 0;	/* each unit's line, as st_py_linetable__line() gives it */
	for (__u32 p = 0, next; p < n && units < ST_PY_RUN_UNITS; p = next) {
		struct st_py_loc e;

		next = st_py_loc_next(m.p, 0, n, p, &e);
		if (!next)
			break;
		ln += e.delta;
		for (__u32 u = 0; u < e.units && units < ST_PY_RUN_UNITS; u++)
			lines[units++] = (__u32)st_py_loc_line(e.kind, ln);
	}
	if (units && lines[units - 1] != st_py_linetable__line(m.p, n, 1, units - 1))
		__builtin_trap();
	for (int cut = 0; cut < 2; cut++) {
		struct st_py_runs_at r;
		__u32 cover;

		st_py_runs_begin(&r, 0, cut ? n / 2 : n, cut && n / 2 < n, 1);
		for (__u32 k = 0; k < ST_PY_RUN_UNITS; k++)
			if (st_py_runs_step(&r, m.p))
				break;
		cover = st_py_runs_cover(&r);
		if (cover > units)
			__builtin_trap();
		for (__u32 i = 0; i < cover; i++) {
			__u32 c = st_py_canon(&r.runs, cover, i);

			if (c > i || lines[c] != lines[i])
				__builtin_trap();
		}
	}
	p.l = (idx & 1) ? *l310 : *l;
	w.read_arg = &m;
	memset(&s, 0, sizeof(s));
	ts = st_py_find_tstate(&w);
	if (ts) {
		st_py_walk_frames(&w, ts);
		if (s.n > ST_PY_MAX_FRAMES)
			__builtin_trap();
		if (st_py_merge(&s, &p, frames, 3, ST_MAX_USER, &cut, &unm) > ST_MAX_USER)
			__builtin_trap();
	}
	return 0;
}

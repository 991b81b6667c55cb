/* test_pycode.c - user/collect/runtimes/python/pycode.c's location-table readers against
 * CPython's own answer, 3.11 (Debian's python3.11), 3.12 and 3.13 (pyenv's;
 * the format is unchanged), and 3.10's line table (pyenv's): for every
 * code object of a few standard library modules, the interpreter prints
 * its co_linetable and, per code unit, the line co_positions() gives
 * (3.10: co_lines(), by byte ranges); st_py_code__line must agree on
 * every one. Also str objects of each kind, in each version's layout.
 * Each version is skipped without its interpreter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/collect/runtimes/python/pycode.h"
#include "user/collect/runtimes/python/pyoffsets.h"

#define PY310 "/root/.pyenv/versions/3.10.13/bin/python3.10"
#define PY311 "/usr/bin/python3.11"
#define PY312 "/root/.pyenv/versions/3.12.1/bin/python3.12"
#define PY313 "/root/.pyenv/versions/3.13.0/bin/python3.13"

/* The interpreter's path goes before it: for every code object of three
 * modules, its table, first line and the line of each code unit (LINES
 * sets ls, 3.11+ by co_positions(); 3.10 has only co_lines(), byte ranges
 * and their line). */
#define DUMP(LINES)                                                                   \
	" -c '\n"                                                                     \
	"import json.decoder, argparse, traceback, types\n"                           \
	"def walk(c):\n"                                                              \
	"    yield c\n"                                                               \
	"    for k in c.co_consts:\n"                                                 \
	"        if isinstance(k, types.CodeType): yield from walk(k)\n"              \
	"for m in (json.decoder, argparse, traceback):\n"                             \
	"    src = open(m.__file__).read()\n"                                         \
	"    for c in walk(compile(src, m.__file__, \"exec\")):\n"                    \
	LINES                                                                         \
	"        print(c.co_linetable.hex(), c.co_firstlineno, \",\".join(map(str, ls)))\n" \
	"'"
static const char dump[] = DUMP("        ls = [p[0] or 0 for p in c.co_positions()]\n");
static const char dump310[] = DUMP("        ls = [0] * (len(c.co_code) // 2)\n"
				   "        for s, e, l in c.co_lines():\n"
				   "            for b in range(s, e, 2): ls[b // 2] = l or 0\n");

static int unhex(const char *h, __u8 *out, size_t max)
{
	size_t n = strlen(h) / 2;

	if (n > max)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (__u8)v;
	}
	return (int)n;
}

/* The runs of one line of a table (bpf/pylines.h), as the BPF program
 * makes them: from the table itself, and through st_py_runs_decode() from
 * a copy of its bytes object when it fits one: each unit they cover is
 * keyed by a unit of its own line, at or before it. The keys they make
 * are counted in *keys, the units they cover in *covered. */
static void runs_match(const struct st_py_layout *l, const __u8 *table, __u32 n, __u32 first,
		       const __u32 *lines, __u32 units, size_t *keys, size_t *covered)
{
	static struct st_py_scratch s;
	struct st_py_code_seen seen = {};
	struct st_py_runs_at r;
	__u32 cover, k;

	st_py_runs_begin(&r, 0, n, false, first);
	for (k = 0; k < ST_PY_RUN_UNITS; k++)
		if (st_py_runs_step(&r, table))
			break;
	cover = st_py_runs_cover(&r);
	assert_true(cover <= units || !units);
	for (__u32 i = 0; i < cover && i < units; i++) {
		__u32 c = st_py_canon(&r.runs, cover, i);

		if (c > i || lines[c] != lines[i])
			fail_msg("unit %u keyed by unit %u: line %u, not %u", i, c, lines[c], lines[i]);
		*keys += c == i;
	}
	*covered += cover;
	assert_int_equal(st_py_canon(&r.runs, cover, cover), cover);	/* past it: itself */
	if (l->bytes_data + n > ST_PY_LT_BUF)
		return;
	/* the BPF program's way: the bytes object's copy, its size in it */
	memset(&s, 0, sizeof(s));
	s.win[l->bytes_size / 8] = n;
	memcpy((__u8 *)s.win + l->bytes_data, table, n);
	st_py_runs_decode(&s, l, l->bytes_data + n + 7, first, &seen);	/* the size bounds it */
	assert_int_equal(seen.cover, cover);
	assert_memory_equal(&seen.runs, &r.runs, sizeof(r.runs));
	st_py_runs_decode(&s, l, l->bytes_data + n / 2, first, &seen);	/* a cut copy: less */
	assert_true(seen.cover <= cover);
	for (__u32 i = 0; i < seen.cover; i++)
		assert_int_equal(lines[st_py_canon(&seen.runs, seen.cover, i)], lines[i]);
}

static void linetable_matches(const char *python, __u16 version)
{
	static char line[1 << 20], cmd[sizeof(dump310) + 256];
	static __u8 table[1 << 18];
	static __u32 lines[1 << 18];
	const struct st_py_layout *l = st_py_layout__find(version);
	size_t codes = 0, units = 0, keys = 0, covered = 0;
	FILE *f;

	assert_non_null(l);
	if (access(python, X_OK)) {
		skip();
		return;
	}
	snprintf(cmd, sizeof(cmd), "%s%s", python, version < 0x030b ? dump310 : dump);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *hex = strtok(line, " "), *first = strtok(NULL, " "), *ls = strtok(NULL, " \n");
		int n = unhex(hex, table, sizeof(table));
		__u32 idx = 0;

		assert_true(n >= 0 && first);
		for (char *t = ls ? strtok(ls, ",") : NULL; t; t = strtok(NULL, ","), idx++) {
			__u32 want = (__u32)atoi(t);

			__u32 got = st_py_code__line(l, table, (size_t)n, (__u32)atoi(first), idx);

			if (got != want)
				fail_msg("code %zu unit %u: %u, want %u", codes, idx, got, want);
			if (idx < sizeof(lines) / sizeof(lines[0]))
				lines[idx] = want;
			units++;
		}
		if (version >= 0x030b)
			runs_match(l, table, (__u32)n, (__u32)atoi(first), lines, idx, &keys, &covered);
		codes++;
	}
	assert_int_equal(pclose(f), 0);
	print_message("%zu code objects, %zu code units; runs: %zu units covered, %zu keys\n",
		      codes, units, covered, keys);
	assert_true(codes > 200 && units > 10000);
	/* 3.11+: two units in three share a key with an earlier one */
	assert_true(version < 0x030b || (covered > units / 4 && keys * 3 < covered));
	/* past the table's end, and garbage */
	assert_int_equal(st_py_code__line(l, table, 0, 5, 0), 0);
	table[0] = 0x01;	/* 3.11+: not an entry's first byte; 3.10: half a pair */
	assert_int_equal(st_py_code__line(l, table, 1, 5, 0), 0);
}

/* 3.10's pairs by hand: a range without a line (-128), one of 0 bytes
 * that only moves the line, a negative delta, the end of the table. */
static void test_linetable_310_by_hand(void **state)
{
	const __u8 t[] = { 2, 0x80, 0, 3, 4, 2, 2, (__u8)-4 };

	(void)state;
	assert_int_equal(st_py_linetable310__line(t, sizeof(t), 10, 0), 0);	/* bytes 0-1 */
	assert_int_equal(st_py_linetable310__line(t, sizeof(t), 10, 1), 15);	/* 2-5: 10 + 3 + 2 */
	assert_int_equal(st_py_linetable310__line(t, sizeof(t), 10, 2), 15);
	assert_int_equal(st_py_linetable310__line(t, sizeof(t), 10, 3), 11);	/* 6-7 */
	assert_int_equal(st_py_linetable310__line(t, sizeof(t), 10, 4), 0);	/* past the end */
	assert_int_equal(st_py_linetable310__line(t, 3, 10, 1), 0);		/* cut mid-pair */
	/* a line below 1 */
	assert_int_equal(st_py_linetable310__line((const __u8[]){ 2, (__u8)-5 }, 2, 3, 0), 0);
}

static void test_linetable_matches_cpython_310(void **state)
{
	(void)state;
	linetable_matches(PY310, 0x030a);
}

static void test_linetable_matches_cpython_311(void **state)
{
	(void)state;
	linetable_matches(PY311, 0x030b);
}

static void test_linetable_matches_cpython_312(void **state)
{
	(void)state;
	linetable_matches(PY312, 0x030c);
}

static void test_linetable_matches_cpython_313(void **state)
{
	(void)state;
	linetable_matches(PY313, 0x030d);
}

#define MEM 0x10000000ULL
static __u8 mem[1024];

static long rd(void *arg, void *dst, __u32 n, __u64 addr)
{
	(void)arg;
	if (addr < MEM || addr + n > MEM + sizeof(mem))
		return -EFAULT;
	memcpy(dst, mem + (addr - MEM), n);
	return 0;
}

static void put_str(const struct st_py_layout *l, __u32 kind, bool ascii, const void *data,
		    __u64 len)
{
	__u32 st = (kind << ST_PY_STATE_KIND) | (1u << ST_PY_STATE_COMPACT) |
		   ((ascii ? 1u : 0u) << ST_PY_STATE_ASCII) | (1u << 7);

	memset(mem, 0, sizeof(mem));
	memcpy(mem + l->unicode_length, &len, 8);
	memcpy(mem + l->unicode_state, &st, 4);
	memcpy(mem + (ascii ? l->unicode_ascii_data : l->unicode_compact_data), data,
	       len * kind);
}

static void unicode_kinds(const struct st_py_layout *l)
{
	const __u16 ucs2[] = { 'p', 0xf6, 0x20ac };
	const __u32 ucs4[] = { 'a', 0x1f600 };
	char buf[64];

	assert_non_null(l);
	put_str(l, 1, true, "fib", 3);
	assert_int_equal(st_py_unicode__read(l, rd, NULL, MEM, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "fib");
	put_str(l, 2, false, ucs2, 3);
	assert_int_equal(st_py_unicode__read(l, rd, NULL, MEM, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "p\xc3\xb6\xe2\x82\xac");
	put_str(l, 4, false, ucs4, 2);
	assert_int_equal(st_py_unicode__read(l, rd, NULL, MEM, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "a\xf0\x9f\x98\x80");
	/* cut at a character boundary */
	put_str(l, 2, false, ucs2, 3);
	assert_int_equal(st_py_unicode__read(l, rd, NULL, MEM, buf, 4), 0);
	assert_string_equal(buf, "p\xc3\xb6");
	/* absurd: a huge length, a bad kind, a non-compact string, ASCII > 127 */
	put_str(l, 1, true, "x", 1);
	memcpy(mem + l->unicode_length, &(__u64){ 1ULL << 40 }, 8);
	assert_int_equal(st_py_unicode__read(l, rd, NULL, MEM, buf, sizeof(buf)), -EINVAL);
	put_str(l, 3, false, "xyz", 1);
	assert_int_equal(st_py_unicode__read(l, rd, NULL, MEM, buf, sizeof(buf)), -EINVAL);
	put_str(l, 1, true, "\xff", 1);
	assert_int_equal(st_py_unicode__read(l, rd, NULL, MEM, buf, sizeof(buf)), -EINVAL);
	/* beyond readable memory */
	put_str(l, 1, true, "x", 1);
	memcpy(mem + l->unicode_length, &(__u64){ 2000 }, 8);
	assert_int_equal(st_py_unicode__read(l, rd, NULL, MEM, buf, 2000), -EFAULT);
	assert_int_equal(st_py_unicode__read(l, rd, NULL, MEM + 2048, buf, sizeof(buf)), -EFAULT);
}

/* The reader of a report's copies (st_py_read_snaps): a read inside a
 * copy comes from it, one that runs past a copy's end or misses them all
 * goes to the process's reader, or fails without one; a code object whose
 * table is beyond the copies and the process keeps its names. */
static void test_read_from_copies(void **state)
{
	const struct st_py_layout *l = st_py_layout__find(0x030b);
	static struct st_py_event e;
	struct st_py_snaps sn = { .e = &e, .rd = rd };
	struct st_py_code c;
	__u64 q = 0x7000, f = 0x7400, lt = 0x7800, v = 0;
	__u32 st = (1u << 2) | (1u << 5) | (1u << 6), first = 12;

	(void)state;
	memset(&e, 0, sizeof(e));
	memset(mem, 0, sizeof(mem));
	e.code = 0x6000;
	e.at[ST_PY_SNAP_CODE] = e.code;
	e.len[ST_PY_SNAP_CODE] = ST_PY_CODE_BUF;
	memcpy((__u8 *)e.hdr + l->code_qualname, &q, 8);
	memcpy((__u8 *)e.hdr + l->code_filename, &f, 8);
	memcpy((__u8 *)e.hdr + l->code_linetable, &lt, 8);
	memcpy((__u8 *)e.hdr + l->code_firstlineno, &first, 4);
	e.at[ST_PY_SNAP_QUAL] = q;
	e.len[ST_PY_SNAP_QUAL] = ST_PY_SNAP_NAME;
	memcpy(e.qual + l->unicode_length, &(__u64){ 3 }, 8);
	memcpy(e.qual + l->unicode_state, &st, 4);
	memcpy(e.qual + l->unicode_ascii_data, "fib", 3);
	e.at[ST_PY_SNAP_FNAME] = f;
	e.len[ST_PY_SNAP_FNAME] = ST_PY_SNAP_SMALL;	/* the short copy */
	memcpy(e.file + l->unicode_length, &(__u64){ 4 }, 8);
	memcpy(e.file + l->unicode_state, &st, 4);
	memcpy(e.file + l->unicode_ascii_data, "a.py", 4);
	/* inside a copy; past its end with no process; missed */
	sn.rd = NULL;
	assert_int_equal(st_py_read_snaps(&sn, &v, 8, q + l->unicode_length), 0);
	assert_int_equal(v, 3);
	assert_int_equal(st_py_read_snaps(&sn, &v, 8, f + ST_PY_SNAP_SMALL - 4), -EFAULT);
	assert_int_equal(st_py_read_snaps(&sn, &v, 8, 0x5000), -EFAULT);
	assert_int_equal(st_py_read_snaps(&sn, &v, 8, ~0ULL - 3), -EFAULT);
	/* the table is in no copy and the process is gone: names, no lines */
	assert_int_equal(st_py_code__read(l, 0, st_py_read_snaps, &sn, e.code, &c), 0);
	assert_string_equal(c.qualname, "fib");
	assert_string_equal(c.filename, "a.py");
	assert_int_equal(c.firstlineno, 12);
	assert_true(c.lines_lost);
	assert_null(c.linetable);
	/* its size in a copy, its bytes nowhere: no table, no length */
	e.at[ST_PY_SNAP_LT] = 0x7800;
	e.len[ST_PY_SNAP_LT] = ST_PY_SNAP_SMALL;
	memcpy(e.table + l->bytes_size, &(__u64){ 1000 }, 8);
	assert_int_equal(st_py_code__read(l, 0, st_py_read_snaps, &sn, e.code, &c), 0);
	assert_true(c.lines_lost);
	assert_null(c.linetable);
	assert_int_equal(c.linetable_len, 0);
	/* ... the process has it: read there */
	memcpy(mem + l->bytes_size, &(__u64){ 2 }, 8);
	memcpy(mem + l->bytes_data, "\x80\x01", 2);
	lt = MEM;
	memcpy((__u8 *)e.hdr + l->code_linetable, &lt, 8);
	sn.rd = rd;
	assert_int_equal(st_py_code__read(l, 0, st_py_read_snaps, &sn, e.code, &c), 0);
	assert_false(c.lines_lost);
	assert_int_equal(c.linetable_len, 2);
	st_py_code__release(&c);
	/* no copy of the object itself and no process: unreadable */
	e.len[ST_PY_SNAP_CODE] = 0;
	sn.rd = NULL;
	assert_int_equal(st_py_code__read(l, 0, st_py_read_snaps, &sn, e.code, &c), -EFAULT);
}

static void test_unicode_kinds(void **state)
{
	(void)state;
	unicode_kinds(st_py_layout__find(0x030a));	/* as 3.11 */
	unicode_kinds(st_py_layout__find(0x030b));
	/* 3.12, 3.13: the text 8 bytes nearer (no wstr) */
	unicode_kinds(st_py_layout__find(0x030c));
	unicode_kinds(st_py_layout__find(0x030d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linetable_310_by_hand),
		cmocka_unit_test(test_linetable_matches_cpython_310),
		cmocka_unit_test(test_linetable_matches_cpython_311),
		cmocka_unit_test(test_linetable_matches_cpython_312),
		cmocka_unit_test(test_linetable_matches_cpython_313),
		cmocka_unit_test(test_read_from_copies),
		cmocka_unit_test(test_unicode_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

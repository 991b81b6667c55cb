/* test_pymerge.c - a deferred sample's Python frames (struct st_py_frames,
 * walked by BPF at the sample) merged after the daemon's native unwind
 * (user/collect/runtimes/python/pymerge.h): the same result as bpf/pymerge.h's st_py_merge()
 * on the same frames, nothing changed without Python frames, and the late
 * fold of a merged stack (user/collect/collector.h): Python nodes under
 * their native callers, with the flags BPF gives them in the path handed
 * back. Processes are pids that cannot exist: nothing is read or named. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "user/collect/runtimes/python/pywalk_native.h"
#include "common/tree.h"
#include "user/collect/collector.h"
#include "user/collect/runtimes/python/pymerge.h"

#define PID 5000001u	/* > PID_MAX_LIMIT (4194304): never a process */
#define TID 5000002u

/* leaf first: zlib (0x9000), eval (run A), PyObject_Call (0x3000), eval
 * in the cold part (run B), Py_RunMain (0x4000), main (0x5000) */
static const __u64 native[] = { 0x9000, 0x1100, 0x3000, 0x7050, 0x4000, 0x5000 };

/* Python frames leaf first: run A is frames 0-1, run B frames 2-4. */
static void frames_of(struct st_py_frames *py)
{
	memset(py, 0, sizeof(*py));
	py->eval_start = 0x1000;
	py->eval_end = 0x2000;
	py->cold_start = 0x7000;
	py->cold_end = 0x7100;
	for (int i = 0; i < 5; i++)
		py->addr[i] = ST_PY_ADDR(0x10000 + 0x100 * (__u64)i, (__u64)i);
	py->ends[1] = 1;
	py->ends[4] = 1;
	py->n = 5;
}

static void test_same_merge_as_bpf(void **state)
{
	struct st_py_frames py;
	struct st_py_scratch s = {};
	struct st_py_proc p = {};
	__u64 a[ST_MAX_USER] = {}, b[ST_PY_MAX_FRAMES * 2] = {};
	bool cut = true, unmatched = true, cut2, unmatched2;
	__u32 n, n2;

	(void)state;
	frames_of(&py);
	memcpy(a, native, sizeof(native));
	memcpy(b, native, sizeof(native));
	n = st_py_merge_deferred(&py, a, 6, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(n, 9);
	assert_false(cut);
	assert_false(unmatched);
	assert_int_equal(a[0], 0x9000);
	assert_int_equal(a[1], py.addr[0] | ST_PY_TAG);
	assert_int_equal(a[2], py.addr[1] | ST_PY_TAG);
	assert_int_equal(a[3], 0x3000);
	assert_int_equal(a[6], py.addr[4] | ST_PY_TAG);
	assert_int_equal(a[7], 0x4000);
	assert_int_equal(a[8], 0x5000);
	/* bpf/pymerge.h's own merge on the same frames: the same stack */
	memcpy(s.addr, py.addr, sizeof(s.addr));
	memcpy(s.ends, py.ends, sizeof(s.ends));
	s.n = py.n;
	p.eval_start = py.eval_start;
	p.eval_end = py.eval_end;
	p.cold_start = py.cold_start;
	p.cold_end = py.cold_end;
	n2 = st_py_merge(&s, &p, b, 6, ST_MAX_USER, &cut2, &unmatched2);
	assert_int_equal(n2, n);
	assert_memory_equal(a, b, n * sizeof(__u64));
	/* cut at the root as BPF cuts it */
	memcpy(a, native, sizeof(native));
	n = st_py_merge_deferred(&py, a, 6, 5, &cut, &unmatched);
	assert_int_equal(n, 5);
	assert_true(cut);
}

/* A whole Python stack (the walk reached its outermost frame) sampled in
 * an evaluation call's prologue: one evaluation frame more than runs, at
 * the leaf. The runs pair from the root, as in BPF; a record of a walk
 * cut short keeps pairing from the leaf. */
static void test_whole_stack_pairs_from_the_root(void **state)
{
	/* leaf first: eval not started (0x1300), PyObject_Call, eval (run A),
	 * PyObject_Call, eval (run B), Py_RunMain, main */
	static const __u64 prologue[] = { 0x1300, 0x3000, 0x1100, 0x3000, 0x7050, 0x4000, 0x5000 };
	struct st_py_frames py;
	__u64 a[ST_MAX_USER] = {};
	bool cut, unmatched;
	__u32 n;

	(void)state;
	frames_of(&py);
	py.whole = 1;
	memcpy(a, prologue, sizeof(prologue));
	n = st_py_merge_deferred(&py, a, 7, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(n, 10);
	assert_false(cut);
	assert_true(unmatched);		/* the leaf evaluation frame: counted */
	assert_int_equal(a[0], 0x1300);
	assert_int_equal(a[2], py.addr[0] | ST_PY_TAG);
	assert_int_equal(a[7], py.addr[4] | ST_PY_TAG);
	assert_int_equal(a[8], 0x4000);
	/* the same record from a walk cut short: from the leaf */
	py.whole = 0;
	memcpy(a, prologue, sizeof(prologue));
	n = st_py_merge_deferred(&py, a, 7, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(n, 10);
	assert_int_equal(a[0], py.addr[0] | ST_PY_TAG);
	assert_int_equal(a[7], 0x7050);	/* left over at the root, native */
}

static void test_no_python_frames(void **state)
{
	struct st_py_frames py;
	__u64 a[ST_MAX_USER] = {};
	bool cut = true, unmatched = true;

	(void)state;
	frames_of(&py);
	py.n = 0;	/* not a Python process, or no thread state */
	memcpy(a, native, sizeof(native));
	assert_int_equal(st_py_merge_deferred(&py, a, 6, ST_MAX_USER, &cut, &unmatched), 6);
	assert_memory_equal(a, native, sizeof(native));
	assert_false(cut);
	assert_false(unmatched);
	/* Python frames but no evaluation frame unwound (a walk cut short
	 * in the daemon): native frames kept, the pairing counted */
	py.n = 5;
	assert_int_equal(st_py_merge_deferred(&py, a, 1, ST_MAX_USER, &cut, &unmatched), 1);
	assert_int_equal(a[0], 0x9000);
	assert_true(unmatched);
	/* an absurd count (the record is the daemon's copy): bounded */
	py.n = 1000;
	memcpy(a, native, sizeof(native));
	assert_true(st_py_merge_deferred(&py, a, 6, ST_MAX_USER, &cut, &unmatched) <= ST_MAX_USER);
}

static void comm_of(void *ctx, __u32 pid, __u32 tid, __u32 image, char *comm, size_t len)
{
	(void)ctx;
	(void)pid;
	(void)tid;
	snprintf(comm, len, "py.%u", image);
}

static const struct st_node *only_child(const struct st_node *n)
{
	assert_non_null(n->first_child);
	assert_null(n->first_child->next_sibling);
	return n->first_child;
}

/* The merged stack folded by the daemon: Python nodes (runtime python,
 * the node address without the tag) between their native callers and
 * callees; the path handed back flags them as BPF does. */
static void test_late_fold_of_merged_stack(void **state)
{
	struct st_collector *c = st_collector__new(NULL, comm_of, NULL);
	struct st_raw_thread t;
	struct st_handoff h;
	struct st_py_frames py;
	__u64 a[ST_MAX_USER] = {};
	const struct st_node *n;
	bool cut, unmatched, found = false;
	size_t pos = 0;
	__u32 un;

	(void)state;
	frames_of(&py);
	memcpy(a, native, sizeof(native));
	un = st_py_merge_deferred(&py, a, 6, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(st_collector__add_sample(c, PID, TID, 7, "py", a, un, false, NULL, 0), 0);
	while (!found && st_collector__next_thread(c, &pos, &t))
		found = t.pid == PID && t.tid == TID;
	assert_true(found);
	n = only_child(st_tree__root(t.tree));	/* main */
	assert_int_equal(n->f.addr, 0x5000);
	assert_int_equal(n->f.runtime, ST_RUNTIME_NATIVE);
	n = only_child(n);	/* Py_RunMain */
	assert_int_equal(n->f.addr, 0x4000);
	for (int i = 4; i >= 2; i--) {	/* run B, root first */
		n = only_child(n);
		assert_int_equal(n->f.runtime, ST_RUNTIME_PYTHON);
		assert_int_equal(n->f.addr, py.addr[i]);
		assert_int_equal(n->f.kind, ST_FRAME_CALLSITE);
	}
	n = only_child(n);	/* PyObject_Call */
	assert_int_equal(n->f.addr, 0x3000);
	assert_int_equal(n->f.runtime, ST_RUNTIME_NATIVE);
	n = only_child(only_child(n));	/* run A */
	assert_int_equal(n->f.runtime, ST_RUNTIME_PYTHON);
	assert_int_equal(n->f.addr, py.addr[0]);
	n = only_child(n);	/* the C leaf under its Python caller */
	assert_int_equal(n->f.kind, ST_FRAME_LEAF);
	assert_int_equal(n->f.addr, 0x9000);
	assert_int_equal(n->f.runtime, ST_RUNTIME_NATIVE);
	assert_int_equal(n->base, 1);

	assert_int_equal(st_collector__late_path(c, PID, TID, 7, &h), 0);
	assert_int_equal(h.n, 9);
	assert_int_equal(h.flags[0], 0);
	assert_int_equal(h.addrs[2], py.addr[4]);
	assert_int_equal(h.flags[2], ST_NODE_PYTHON);
	assert_int_equal(h.flags[5], 0);
	assert_int_equal(h.flags[7], ST_NODE_PYTHON);
	assert_int_equal(h.flags[8], ST_NODE_LEAF);
	/* the same stack again: one call each, the leaf sampled twice */
	memcpy(a, native, sizeof(native));
	un = st_py_merge_deferred(&py, a, 6, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(st_collector__add_sample(c, PID, TID, 7, "py", a, un, false, NULL, 0), 0);
	assert_int_equal(n->base, 2);
	assert_int_equal(n->calls, 1);
	st_collector__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_merge_as_bpf),
		cmocka_unit_test(test_whole_stack_pairs_from_the_root),
		cmocka_unit_test(test_no_python_frames),
		cmocka_unit_test(test_late_fold_of_merged_stack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

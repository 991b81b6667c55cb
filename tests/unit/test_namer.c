/* test_namer.c - the namer's invented outermost frames
 * (user/symbolize/namer.h): a cut stack's outermost return address in no
 * mapping of a process whose mappings are known is left out and counted,
 * several deep too; one inside a mapping, one under a named frame, and
 * any of a process with no known mapping are kept. The process is the
 * test's own (its maps read from /proc), the garbage a stack address. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/strtab.h"
#include "common/tree.h"
#include "binsym/symbolizer.h"
#include "user/collect/collector.h"
#include "user/collect/procmaps.h"
#include "user/symbolize/namer.h"

__attribute__((noinline)) static int marker(int x)
{
	return x + 1;
}

static int no_module(void *ctx, const char *name, const char *path, const char *build_id)
{
	(void)ctx;
	(void)name;
	(void)path;
	(void)build_id;
	return 0;
}

static struct st_node *add(struct st_tree *t, struct st_node *at, enum st_frame_kind kind,
			   __u64 addr, __u64 base)
{
	struct st_frame f = { .kind = kind, .addr = addr, .runtime = ST_RUNTIME_NATIVE };
	struct st_node *n;

	if (kind == ST_FRAME_SPECIAL)
		f.function = ST_TRUNCATED_NAME;
	n = st_tree__child(t, at, &f, true);
	assert_non_null(n);
	n->base += base;
	return n;
}

/* Names raw tree `raw` of our own process (maps: read or not), its names
 * in strs; returns the named tree, *invented the samples left out. */
static struct st_tree *name(struct st_tree *raw, bool maps, struct st_strtab *strs,
			    __u64 *invented)
{
	struct st_symbolizer_opts so = { 0 };
	struct st_symbolizer *sym = st_symbolizer__new(&so);
	struct st_namer *n = st_namer__new(sym);
	struct st_procmaps *pm = st_procmaps__new((int)getpid());
	struct st_tree *dst = st_tree__new();
	struct st_raw_thread t = { .pid = (__u32)getpid(), .tid = (__u32)getpid(), .comm = "t",
				   .tree = raw, .maps = pm };

	assert_true(sym && n && pm && strs && dst);
	if (maps)
		assert_true(st_procmaps__refresh(pm, sym) > 0);
	*invented = 0;
	assert_int_equal(st_namer__tree(n, &t, dst, strs, no_module, NULL, invented), 0);
	st_tree__finalize(dst);
	st_procmaps__free(pm);
	st_namer__free(n);
	st_symbolizer__free(sym);
	return dst;
}

static void test_garbage_outermost_left_out(void **state)
{
	struct st_tree *raw = st_tree__new();
	struct st_node *cut, *g1, *g2, *call;
	struct st_node *r;
	int local = 0;
	__u64 garbage = (__u64)(uintptr_t)&local, code = (__u64)(uintptr_t)marker + 1;
	struct st_strtab *strs = st_strtab__new();
	__u64 invented;
	struct st_tree *dst;

	(void)state;
	assert_true(raw && strs);
	/* [truncated] > garbage > garbage > marker > leaf in marker */
	cut = add(raw, st_tree__root(raw), ST_FRAME_SPECIAL, 0, 0);
	g1 = add(raw, cut, ST_FRAME_CALLSITE, garbage, 0);
	g2 = add(raw, g1, ST_FRAME_CALLSITE, garbage + 64, 0);
	call = add(raw, g2, ST_FRAME_CALLSITE, code, 0);
	add(raw, call, ST_FRAME_LEAF, code, 3);
	/* a garbage value under a named frame is no outermost frame: kept */
	add(raw, call, ST_FRAME_CALLSITE, garbage, 2);
	/* CALLS: [truncated] once, each garbage value seen change (a new
	 * "call"), marker's call site twice */
	cut->calls = 1;
	g1->calls = 4;
	g2->calls = 4;
	call->calls = 2;
	dst = name(raw, true, strs, &invented);
	assert_int_equal(invented, 5);
	r = st_tree__root(dst);
	assert_int_equal(r->cum, 5);
	assert_int_equal(r->nchildren, 1);
	cut = r->first_child;
	assert_string_equal(cut->f.function, ST_TRUNCATED_NAME);
	assert_int_equal(cut->nchildren, 1);
	call = cut->first_child;	/* marker's call site, right under [truncated] */
	assert_int_equal(call->f.kind, ST_FRAME_CALLSITE);
	assert_non_null(call->f.module);
	assert_int_equal(call->cum, 5);
	assert_int_equal(call->nchildren, 2);
	/* the left-out frames' CALLS are not [truncated]'s: it keeps its own
	 * (before, 1 + 4 + 4 = 9 for its 5 samples) */
	assert_int_equal(cut->calls, 1);
	assert_int_equal(call->calls, 2);
	st_tree__free(dst);

	/* a process whose mappings are not known: nothing is judged */
	dst = name(raw, false, strs, &invented);
	assert_int_equal(invented, 0);
	assert_int_equal(st_tree__root(dst)->first_child->first_child->f.addr, garbage);
	st_tree__free(dst);
	st_tree__free(raw);
	st_strtab__free(strs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_garbage_outermost_left_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

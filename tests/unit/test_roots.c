/* test_roots.c - stacks short of a process's or thread's entry go under
 * [truncated] (user/model/roots.c), on a hand-built profile: entries kept
 * at the root, named and unnamed outermost frames moved and counted, the
 * walk's own [truncated] merged with them into one node, pseudo frames
 * and kernel-only stacks left alone, counts preserved. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "profile_fx.h"
#include "user/model/profile.h"
#include "user/model/roots.h"
#include "common/strtab.h"

static const struct st_node *child_named(const struct st_node *n, const char *fn)
{
	for (const struct st_node *c = n->first_child; c; c = c->next_sibling)
		if (c->f.function && !strcmp(c->f.function, fn))
			return c;
	return NULL;
}

static void test_entries(void **state)
{
	(void)state;
	assert_true(st_roots__is_entry("_start"));
	assert_true(st_roots__is_entry("start_thread"));
	assert_true(st_roots__is_entry("clone3"));
	assert_true(st_roots__is_entry("__libc_start_call_main"));
	assert_true(st_roots__is_entry("runtime.goexit"));
	assert_true(st_roots__is_entry("runtime.goexit.abi0"));
	assert_true(st_roots__is_entry("runtime.systemstack.abi0"));
	assert_false(st_roots__is_entry("main"));
	assert_false(st_roots__is_entry("_start2"));
	assert_false(st_roots__is_entry(".abi0"));
	assert_false(st_roots__is_entry("runtime.goexit.abi"));
	assert_false(st_roots__is_entry(NULL));
}

static void test_mark_short(void **state)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t = st_profile__add_thread(p, 10, 10, "prog");
	struct st_thread *ok = st_profile__add_thread(p, 10, 11, "complete");
	const char *prog = "/bin/prog";
	struct st_frame trunc = { .kind = ST_FRAME_SPECIAL,
				  .function = st_strtab__intern(p->strs, ST_TRUNCATED_NAME) };
	struct st_frame kern = { .kind = ST_FRAME_SPECIAL,
				 .function = st_strtab__intern(p->strs, "[kernel]") };
	struct st_frame kf = { .kind = ST_FRAME_LEAF, .addr = 0xffffffff81000010ull,
			       .runtime = ST_RUNTIME_KERNEL,
			       .function = st_strtab__intern(p->strs, "do_exit") };
	struct st_frame unnamed = { .kind = ST_FRAME_CALLSITE, .addr = 0x7000,
				    .module = st_strtab__intern(p->strs, prog) };
	struct st_frame full[] = { cs(p, "_start", 1, prog), cs(p, "main", 2, prog),
				   lf(p, "work", prog) };
	struct st_frame named[] = { cs(p, "helper", 3, prog), lf(p, "work", prog) };
	struct st_frame nosym[] = { unnamed, lf(p, "work", prog) };
	struct st_frame walked[] = { trunc, cs(p, "helper", 3, prog), lf(p, "leaf", prog) };
	struct st_short_counts n = { 0, 0 };
	const struct st_node *root, *tr, *h;

	(void)state;
	st_tree__add_sample(t->tree, full, 3, 50, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, named, 2, 7, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, nosym, 2, 3, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, walked, 3, 4, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, &kern, 1, 2, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, &kf, 1, 1, ST_CALLS_FRAME);
	st_tree__add_sample(ok->tree, full, 3, 9, ST_CALLS_FRAME);
	struct st_tree *before = ok->tree;

	st_profile__finalize(p);	/* as st_build__finish() */
	assert_int_equal(st_roots__mark_short(p, &n), 0);
	assert_int_equal(n.named, 7);
	assert_int_equal(n.unnamed, 3);
	assert_ptr_equal(ok->tree, before);	/* nothing short: not copied */

	root = st_tree__root(t->tree);
	assert_int_equal(root->cum, 67);
	assert_int_equal(child_named(root, "_start")->cum, 50);
	assert_int_equal(child_named(root, "[kernel]")->cum, 2);
	assert_int_equal(child_named(root, "do_exit")->cum, 1);
	assert_null(child_named(root, "helper"));
	/* one [truncated]: the walk's 4, helper's 7, the unnamed frame's 3 */
	tr = child_named(root, ST_TRUNCATED_NAME);
	assert_non_null(tr);
	assert_int_equal(tr->cum, 14);
	assert_int_equal(root->nchildren, 4);
	h = child_named(tr, "helper");	/* the walk's helper and the moved one: one node */
	assert_non_null(h);
	assert_int_equal(h->cum, 11);
	assert_int_equal(child_named(h, "work")->base, 7);
	assert_int_equal(child_named(h, "leaf")->base, 4);

	/* a second pass finds nothing (a service window's merged profile) */
	n = (struct st_short_counts){ 0, 0 };
	assert_int_equal(st_roots__mark_short(p, &n), 0);
	assert_int_equal(n.named + n.unnamed, 0);
	st_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_mark_short),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

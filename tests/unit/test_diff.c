/* test_diff.c - two profiles compared (user/model/diff.c) and the diff's
 * text, folded and SVG reports (user/output/out_diff.c): a phase that
 * moved, a path only the baseline has, recursion counted once. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/tree.h"
#include "user/model/diff.h"
#include "user/model/folded.h"
#include "user/model/profile.h"
#include "user/output/out_diff.h"

/* A: phase_a 60%, phase_b 20%; B (twice the samples): phase_a 20%,
 * phase_b 70%: the work moved from a to b. gone: only in A. */
static const char prof_a[] = "main;phase_a 60\nmain;phase_b 20\nmain;gone 10\nmain 10\n";
static const char prof_b[] = "main;phase_a 40\nmain;phase_b 140\nmain 20\n";

static struct st_profile *read_str(const char *text, const char *name)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct st_profile *p = NULL;
	char err[256] = "";

	assert_non_null(f);
	if (st_folded__read(f, name, &p, err, sizeof(err)))
		fail_msg("%s", err);
	fclose(f);
	return p;
}

static struct st_diff *diff_of(const char *a, const char *b)
{
	struct st_profile *pa = read_str(a, "a"), *pb = read_str(b, "b");
	struct st_diff *d = st_diff__new(pa, pb);

	assert_non_null(d);
	/* the diff keeps nothing of its inputs */
	st_profile__free(pa);
	st_profile__free(pb);
	return d;
}

static const struct st_diff_fn *fn_named(const struct st_diff *d, const char *name)
{
	size_t n;
	const struct st_diff_fn *fns = st_diff__functions(d, &n);

	for (size_t i = 0; i < n; i++)
		if (fns[i].node->f.function && !strcmp(fns[i].node->f.function, name))
			return &fns[i];
	fail_msg("no function %s", name);
	return NULL;
}

static const struct st_node *child_named(const struct st_node *n, const char *name)
{
	for (const struct st_node *c = n->first_child; c; c = c->next_sibling)
		if (c->f.function && !strcmp(c->f.function, name))
			return c;
	return NULL;
}

static char *render(const struct st_diff *d, int (*fn)(const struct st_diff *, FILE *,
							const struct st_diff_out_opts *))
{
	struct st_diff_out_opts o = { .name_a = "a.folded", .name_b = "b.folded",
				      .threshold = 0.5 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(d, f, &o), 0);
	fclose(f);
	return buf;
}

static int folded(const struct st_diff *d, FILE *f, const struct st_diff_out_opts *o)
{
	(void)o;
	return st_diff__write_folded(d, f);
}

static void test_functions(void **state)
{
	struct st_diff *d = diff_of(prof_a, prof_b);
	const struct st_diff_fn *fns, *f;
	size_t n;

	(void)state;
	assert_int_equal(st_diff__samples(d, ST_DIFF_A), 100);
	assert_int_equal(st_diff__samples(d, ST_DIFF_B), 200);
	fns = st_diff__functions(d, &n);
	assert_int_equal(n, 4);	/* main, phase_a, phase_b, gone */
	/* most moved first: phase_b +50 points, phase_a -40, gone -10, main 0 */
	assert_string_equal(fns[0].node->f.function, "phase_b");
	assert_string_equal(fns[1].node->f.function, "phase_a");
	assert_string_equal(fns[2].node->f.function, "gone");
	assert_string_equal(fns[3].node->f.function, "main");
	assert_float_equal(fns[0].dself, 50.0, 1e-9);
	assert_float_equal(fns[1].dself, -40.0, 1e-9);
	assert_float_equal(fns[2].dself, -10.0, 1e-9);
	f = fn_named(d, "main");
	assert_int_equal(f->self[ST_DIFF_A], 10);
	assert_int_equal(f->self[ST_DIFF_B], 20);
	assert_int_equal(f->total[ST_DIFF_A], 100);
	assert_int_equal(f->total[ST_DIFF_B], 200);
	assert_float_equal(f->dtotal, 0.0, 1e-9);
	f = fn_named(d, "gone");
	assert_int_equal(f->total[ST_DIFF_A], 10);
	assert_int_equal(f->total[ST_DIFF_B], 0);
	st_diff__free(d);
}

/* The union tree: B's counts, A's beside them, A's paths with B at 0. */
static void test_union_tree(void **state)
{
	struct st_diff *d = diff_of(prof_a, prof_b);
	const struct st_profile *p = st_diff__profile(d);
	const struct st_node *root, *main_, *gone, *pa;
	struct st_diff_counts c;

	(void)state;
	assert_int_equal(p->nthreads, 1);
	root = st_tree__root(p->threads[0]->tree);
	assert_int_equal(root->cum, 200);
	main_ = child_named(root, "main");
	assert_non_null(main_);
	gone = child_named(main_, "gone");
	assert_non_null(gone);
	st_diff__node(d, gone, &c);
	assert_int_equal(c.cum[ST_DIFF_A], 10);
	assert_int_equal(c.cum[ST_DIFF_B], 0);
	assert_float_equal(st_diff__dcum(d, gone), -10.0, 1e-9);
	pa = child_named(main_, "phase_a");
	st_diff__node(d, pa, &c);
	assert_int_equal(c.base[ST_DIFF_A], 60);
	assert_int_equal(c.base[ST_DIFF_B], 40);
	assert_float_equal(st_diff__dcum(d, pa), -40.0, 1e-9);
	/* B's order: the biggest of B first, A's only path last */
	assert_string_equal(main_->first_child->f.function, "phase_b");
	assert_ptr_equal(main_->last_child, gone);
	st_diff__free(d);
}

/* A function's total counts once per stack, however deep it recurses. */
static void test_recursion(void **state)
{
	struct st_diff *d = diff_of("main;rec 5\n", "main;rec;rec;rec 5\nmain;rec 5\n");
	const struct st_diff_fn *f;

	(void)state;
	f = fn_named(d, "rec");
	assert_int_equal(f->total[ST_DIFF_A], 5);
	assert_int_equal(f->total[ST_DIFF_B], 10);
	assert_int_equal(f->self[ST_DIFF_B], 10);
	assert_float_equal(f->dtotal, 0.0, 1e-9);
	st_diff__free(d);
}

static void test_text(void **state)
{
	struct st_diff *d = diff_of(prof_a, prof_b);
	char *t = render(d, st_diff__write_text);

	(void)state;
	assert_non_null(strstr(t, "a.folded (A, 100 samples) -> b.folded (B, 200 samples)"));
	assert_non_null(strstr(t, "  20.00%   70.00%    +50.00    20.00%   70.00%    +50.00  phase_b\n"));
	assert_non_null(strstr(t, "  60.00%   20.00%    -40.00    60.00%   20.00%    -40.00  phase_a\n"));
	/* main did not move: not in the functions, but in the paths as a caller */
	assert_non_null(strstr(t, "# 3 of 4 functions moved by 0.50 points or more\n"));
	assert_non_null(strstr(t, " 100.00%  100.00%    +0.00  main\n"));
	assert_non_null(strstr(t, "  10.00%    0.00%   -10.00    gone\n"));
	free(t);
	st_diff__free(d);
}

/* difffolded.pl's format, A scaled to B's samples. */
static void test_folded(void **state)
{
	struct st_diff *d = diff_of(prof_a, prof_b);
	char *t = render(d, folded);

	(void)state;
	assert_string_equal(t, "main 20 20\nmain;phase_b 40 140\nmain;phase_a 120 40\n"
			       "main;gone 20 0\n");
	free(t);
	st_diff__free(d);
}

/* needle within the <g> box that starts at box */
static bool in_box(const char *box, const char *needle)
{
	const char *at = strstr(box, needle), *end = strstr(box, "</g>");

	return at && end && at < end;
}

/* Red where the share grew (the most: pure red), blue where it shrank. */
static void test_svg(void **state)
{
	struct st_diff *d = diff_of(prof_a, prof_b);
	char *t = render(d, st_diff__write_svg);
	const char *b = strstr(t, "data-n=\"phase_b\""), *a = strstr(t, "data-n=\"phase_a\"");

	(void)state;
	assert_non_null(strstr(t, "Differential flame graph"));
	assert_non_null(b);
	assert_non_null(a);
	assert_non_null(strstr(b, "A 20.00% -&gt; B 70.00% of the samples (+50.00 points)"));
	assert_true(in_box(b, "fill=\"#ff0000\""));
	assert_true(in_box(a, "fill=\"#2a2aff\""));
	assert_null(strstr(t, "data-n=\"gone\""));	/* no samples in B: not drawn */
	free(t);
	st_diff__free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_union_tree),
		cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_svg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

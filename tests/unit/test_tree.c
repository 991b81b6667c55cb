/* test_tree.c - call-stack tree folding, CALLS rules, merge, finalize. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strtab.h"
#include "common/tree.h"

struct fx {
	struct st_strtab *strs;
	struct st_tree *t;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->strs = st_strtab__new();
	f->t = st_tree__new();
	*state = f;
	return f->strs && f->t ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	st_tree__free(f->t);
	st_strtab__free(f->strs);
	free(f);
	return 0;
}

/* Folds "C;A;B" as function frames. */
static struct st_node *fold_names(struct fx *f, struct st_tree *t, const char *stack,
				  __u64 count)
{
	struct st_frame path[64];
	char buf[256], *save = NULL;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		path[n++] = (struct st_frame){ .kind = ST_FRAME_FUNCTION,
					       .function = st_strtab__intern(f->strs, tok) };
	return st_tree__add_sample(t, path, n, count, ST_CALLS_FUNCTION);
}

static struct st_node *find(struct fx *f, struct st_tree *t, const char *stack)
{
	struct st_node *n = st_tree__root(t);
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *tok = strtok_r(buf, ";", &save); tok && n; tok = strtok_r(NULL, ";", &save)) {
		struct st_frame fr = { .kind = ST_FRAME_FUNCTION,
				       .function = st_strtab__intern(f->strs, tok) };

		n = st_tree__child(t, n, &fr, false);
	}
	return n;
}

static void expect_node(struct fx *f, const char *stack, __u64 calls, __u64 base, __u64 cum)
{
	struct st_node *n = find(f, f->t, stack);

	assert_non_null(n);
	if (n->calls != calls || n->base != base || n->cum != cum)
		fail_msg("%s: calls/base/cum %llu/%llu/%llu, want %llu/%llu/%llu", stack,
			 (unsigned long long)n->calls, (unsigned long long)n->base,
			 (unsigned long long)n->cum, (unsigned long long)calls,
			 (unsigned long long)base, (unsigned long long)cum);
}

/* The seed's Figure 4A trace read as 19 consecutive samples. */
static const char *const seed[] = {
	"C", "C;A", "C;A;B", "C;A", "C;A;B", "C;A;B;B", "C;A;B", "C;A", "C", "C;B",
	"C;B;A", "C;B;A;B", "C;B;A;B;A", "C;B;A;B", "C;B;A", "C;B;A;X", "C;B;A", "C;B", "C",
};

static void test_seed_vector_nodes(void **state)
{
	struct fx *f = *state;

	for (size_t i = 0; i < sizeof(seed) / sizeof(seed[0]); i++)
		assert_non_null(fold_names(f, f->t, seed[i], 1));
	st_tree__finalize(f->t);
	assert_int_equal(st_tree__root(f->t)->cum, 19);
	expect_node(f, "C", 1, 3, 19);
	expect_node(f, "C;A", 1, 3, 7);
	expect_node(f, "C;A;B", 2, 3, 4);
	expect_node(f, "C;A;B;B", 1, 1, 1);
	expect_node(f, "C;B", 1, 2, 9);
	expect_node(f, "C;B;A", 1, 3, 7);
	expect_node(f, "C;B;A;B", 1, 2, 3);
	expect_node(f, "C;B;A;B;A", 1, 1, 1);
	expect_node(f, "C;B;A;X", 1, 1, 1);
	assert_int_equal(st_tree__node_count(f->t), 10); /* root + 9 */
	/* children sorted by CUM, descending: C;B (9) before C;A (7) */
	assert_ptr_equal(find(f, f->t, "C")->first_child, find(f, f->t, "C;B"));
	assert_ptr_equal(find(f, f->t, "C")->last_child, find(f, f->t, "C;A"));
}

static void test_count_is_consecutive_samples(void **state)
{
	struct fx *f = *state;

	fold_names(f, f->t, "start;main", 10);
	fold_names(f, f->t, "start;main;A", 100);
	fold_names(f, f->t, "start;main", 5);
	st_tree__finalize(f->t);
	expect_node(f, "start", 1, 0, 115);
	expect_node(f, "start;main", 1, 15, 115);
	expect_node(f, "start;main;A", 1, 100, 100);
}

static struct st_frame site(const char *fn, __u64 off, struct fx *f)
{
	return (struct st_frame){ .kind = ST_FRAME_CALLSITE, .addr = 0x1000 + off,
				  .function = st_strtab__intern(f->strs, fn), .offset = off };
}

static struct st_frame leaf(const char *fn, struct fx *f)
{
	return (struct st_frame){ .kind = ST_FRAME_LEAF,
				  .function = st_strtab__intern(f->strs, fn) };
}

/* st_tree__adopt(): a subtree moved under another node keeps its counts,
 * is found under its new parent only, its depths follow; moved onto a
 * frame the new parent has, it is merged; a node under itself is refused. */
/* A tree far deeper than any stack folds (and than C's stack could
 * recurse: 8 MiB at 48 bytes a frame is ~175,000 levels): CUM and the
 * order are computed without recursion. */
static void test_deep_tree_no_recursion(void **state)
{
	struct fx *f = *state;
	const unsigned int depth = 400000;
	struct st_node *n = st_tree__root(f->t), *leaf;
	struct st_frame fr = { .kind = ST_FRAME_CALLSITE };

	for (unsigned int i = 0; i < depth; i++) {
		fr.addr = 0x1000 + (i & 1);	/* two frames alternating, as deep recursion */
		n = st_tree__child(f->t, n, &fr, true);
		assert_non_null(n);
		if (i == depth / 2) {	/* a second, lighter branch half way down */
			struct st_frame side = { .kind = ST_FRAME_CALLSITE, .addr = 0x9000 };
			struct st_node *s = st_tree__child(f->t, n->parent, &side, true);

			assert_non_null(s);
			s->base = 1;
		}
	}
	leaf = n;
	leaf->base = 7;
	st_tree__finalize(f->t);
	assert_int_equal(st_tree__root(f->t)->cum, 8);
	assert_int_equal(leaf->cum, 7);
	assert_int_equal(leaf->depth, depth);
	/* half way: the heavier deep branch first, then the side one */
	for (n = leaf; n->depth > depth / 2 + 1; n = n->parent)
		assert_int_equal(n->cum, 7);
	assert_int_equal(n->parent->cum, 8);
	assert_ptr_equal(n->parent->first_child, n);
	assert_int_equal(n->parent->last_child->f.addr, 0x9000);
	assert_int_equal(n->parent->last_child->cum, 1);
	/* merged into another tree as deep (the daemon's merge, the reader's):
	 * no recursion either */
	{
		struct st_tree *other = st_tree__new();
		struct st_node *m;
		unsigned int d = 0;

		assert_non_null(other);
		assert_int_equal(st_tree__merge(other, st_tree__root(other), st_tree__root(f->t)), 0);
		assert_int_equal(st_tree__merge(other, st_tree__root(other), st_tree__root(f->t)), 0);
		st_tree__finalize(other);
		assert_int_equal(st_tree__root(other)->cum, 16);
		for (m = st_tree__root(other); m->first_child; m = m->first_child)
			d++;
		assert_int_equal(d, depth);
		assert_int_equal(m->base, 14);
		st_tree__free(other);
	}
}

static void test_adopt(void **state)
{
	struct fx *f = *state;
	struct st_frame tr = { .kind = ST_FRAME_SPECIAL,
			       .function = st_strtab__intern(f->strs, "[truncated]") };
	struct st_frame a[] = { site("helper", 1, f), site("g", 2, f), leaf("w", f) };
	struct st_frame b[] = { tr, site("other", 3, f), leaf("w", f) };
	struct st_frame c[] = { site("other", 3, f), leaf("x", f) };
	struct st_node *root = st_tree__root(f->t), *h, *t, *o, *o2, *g;

	st_tree__add_sample(f->t, a, 3, 5, ST_CALLS_FRAME);
	st_tree__add_sample(f->t, b, 3, 2, ST_CALLS_FRAME);
	st_tree__add_sample(f->t, c, 2, 4, ST_CALLS_FRAME);
	h = st_tree__child(f->t, root, &a[0], false);
	t = st_tree__child(f->t, root, &tr, false);
	o = st_tree__child(f->t, root, &c[0], false);
	g = st_tree__child(f->t, h, &a[1], false);
	assert_true(st_frame__is_truncated(&tr));
	assert_false(st_frame__is_truncated(&a[0]));
	assert_int_equal(st_tree__adopt(f->t, g, h), -EINVAL);	/* under itself */
	assert_int_equal(st_tree__adopt(f->t, h, h), -EINVAL);

	assert_int_equal(st_tree__adopt(f->t, t, h), 0);
	assert_null(st_tree__child(f->t, root, &a[0], false));
	assert_ptr_equal(st_tree__child(f->t, t, &a[0], false), h);
	assert_ptr_equal(h->parent, t);
	assert_int_equal(h->depth, 2);
	assert_int_equal(g->depth, 3);
	assert_int_equal(st_tree__child(f->t, g, &a[2], false)->depth, 4);
	assert_int_equal(root->nchildren, 2);

	/* onto [truncated]'s own "other": one node */
	o2 = st_tree__child(f->t, t, &b[1], false);
	assert_int_equal(st_tree__adopt(f->t, t, o), 0);
	assert_null(st_tree__child(f->t, root, &c[0], false));
	assert_int_equal(root->nchildren, 1);
	assert_int_equal(t->nchildren, 2);
	assert_int_equal(st_tree__adopt(f->t, root, o), -EINVAL);	/* merged away */
	g->f.offset += 99;	/* a node its key does not find */
	assert_int_equal(st_tree__adopt(f->t, root, g), -EINVAL);
	g->f.offset -= 99;
	st_tree__finalize(f->t);
	assert_int_equal(root->cum, 11);
	assert_int_equal(t->cum, 11);
	assert_int_equal(o2->cum, 6);
	assert_int_equal(st_tree__child(f->t, o2, &c[1], false)->base, 4);
	assert_int_equal(st_tree__child(f->t, o2, &b[2], false)->base, 2);
}

/* st_node__next_in(): every subtree's pre-order sums its BASE to its CUM,
 * and the walk from the root meets every node once. */
static void test_next_in(void **state)
{
	struct fx *f = *state;
	const struct st_node *root = st_tree__root(f->t);
	size_t nodes = 0;

	for (size_t i = 0; i < sizeof(seed) / sizeof(seed[0]); i++)
		fold_names(f, f->t, seed[i], 1);
	st_tree__finalize(f->t);
	for (const struct st_node *n = root; n; n = st_node__next_in(root, n)) {
		__u64 base = 0;

		for (const struct st_node *s = n; s; s = st_node__next_in(n, s))
			base += s->base;
		assert_int_equal(base, n->cum);
		nodes++;
	}
	assert_int_equal(nodes, 1 + 9);	/* the root and the seed's 9 paths */
	assert_null(st_node__next_in(find(f, f->t, "C;A;B;B"), find(f, f->t, "C;A;B;B")));
}

/* ST_CALLS_FRAME: a frame that moves to another position is the same call. */
static void test_frame_rule(void **state)
{
	struct fx *f = *state;
	struct st_frame p1[] = { site("main", 1, f), leaf("f", f) };
	struct st_frame p2[] = { site("main", 1, f), site("f", 5, f), leaf("g", f) };
	struct st_frame p3[] = { site("main", 2, f), leaf("h", f) };
	struct st_node *fl, *f5, *g, *m1, *m2, *h;

	assert_non_null(st_tree__add_sample(f->t, p1, 2, 1, ST_CALLS_FRAME));
	assert_non_null(st_tree__add_sample(f->t, p2, 3, 1, ST_CALLS_FRAME));
	assert_non_null(st_tree__add_sample(f->t, p1, 2, 1, ST_CALLS_FRAME));
	assert_non_null(st_tree__add_sample(f->t, p2, 3, 1, ST_CALLS_FRAME));
	assert_non_null(st_tree__add_sample(f->t, p3, 2, 1, ST_CALLS_FRAME));
	m1 = st_tree__child(f->t, st_tree__root(f->t), &p1[0], false);
	fl = st_tree__child(f->t, m1, &p1[1], false);
	f5 = st_tree__child(f->t, m1, &p2[1], false);
	g = st_tree__child(f->t, f5, &p2[2], false);
	m2 = st_tree__child(f->t, st_tree__root(f->t), &p3[0], false);
	h = st_tree__child(f->t, m2, &p3[1], false);
	assert_int_equal(m1->calls, 1);	/* main's frame: one call */
	assert_int_equal(fl->calls, 1);	/* f: called once, moved between positions */
	assert_int_equal(f5->calls, 0);
	assert_int_equal(g->calls, 2);	/* g returned and was called again */
	assert_int_equal(m2->calls, 0);	/* main moved to another call site */
	assert_int_equal(h->calls, 1);
	assert_int_equal(fl->base, 2);
	assert_int_equal(g->base, 2);
}

/* The same samples under the function rule count every position change. */
static void test_function_rule_differs(void **state)
{
	struct fx *f = *state;
	struct st_frame p1[] = { site("main", 1, f), leaf("f", f) };
	struct st_frame p2[] = { site("main", 1, f), site("f", 5, f), leaf("g", f) };

	st_tree__add_sample(f->t, p1, 2, 1, ST_CALLS_FUNCTION);
	st_tree__add_sample(f->t, p2, 3, 1, ST_CALLS_FUNCTION);
	st_tree__add_sample(f->t, p1, 2, 1, ST_CALLS_FUNCTION);
	assert_int_equal(st_tree__child(f->t, st_tree__child(f->t, st_tree__root(f->t), &p1[0],
							     false), &p1[1], false)->calls, 2);
}

static void test_merge_sums(void **state)
{
	struct fx *f = *state;
	struct st_tree *other = st_tree__new();

	fold_names(f, f->t, "a;b", 2);
	fold_names(f, other, "a;b", 3);
	fold_names(f, other, "a;c", 4);
	assert_int_equal(st_tree__merge(f->t, st_tree__root(f->t), st_tree__root(other)), 0);
	st_tree__finalize(f->t);
	expect_node(f, "a", 2, 0, 9);
	expect_node(f, "a;b", 2, 5, 5);
	expect_node(f, "a;c", 1, 4, 4);
	st_tree__free(other);
}

struct walk_ctx {
	unsigned visited;
	unsigned max_depth;
};

static int count_walk(const struct st_node *n, void *arg)
{
	struct walk_ctx *w = arg;

	w->visited++;
	if (n->depth > w->max_depth)
		w->max_depth = n->depth;
	return 0;
}

/* Random stacks: every node's cum equals the samples whose path passes it,
 * computed independently, and cum = base + sum(children cum). */
static void test_random_invariants(void **state)
{
	struct fx *f = *state;
	const char *names[] = { "a", "b", "c", "d" };
	char stacks[500][64];
	unsigned seedv = 12345;

	for (int i = 0; i < 500; i++) {
		int depth = 1 + (int)(rand_r(&seedv) % 6);

		stacks[i][0] = '\0';
		for (int d = 0; d < depth; d++) {
			strcat(stacks[i], names[rand_r(&seedv) % 4]);
			if (d + 1 < depth)
				strcat(stacks[i], ";");
		}
		fold_names(f, f->t, stacks[i], 1);
	}
	st_tree__finalize(f->t);
	assert_int_equal(st_tree__root(f->t)->cum, 500);
	for (int i = 0; i < 500; i++) {
		/* every prefix of every stack: count samples having that prefix */
		char prefix[64];
		size_t len = strlen(stacks[i]);

		for (size_t j = 1; j <= len; j++) {
			__u64 want = 0;

			if (j < len && stacks[i][j] != ';')
				continue;
			memcpy(prefix, stacks[i], j);
			prefix[j] = '\0';
			for (int k = 0; k < 500; k++)
				if (strncmp(stacks[k], prefix, j) == 0 &&
				    (stacks[k][j] == '\0' || stacks[k][j] == ';'))
					want++;
			assert_int_equal(find(f, f->t, prefix)->cum, want);
		}
	}
	{
		struct walk_ctx w = { 0 };

		st_tree__walk(f->t, count_walk, &w);
		assert_int_equal(w.visited, st_tree__node_count(f->t));
		assert_true(w.max_depth <= 6);
	}
}

static void test_frame_names(void **state)
{
	struct fx *f = *state;
	struct st_frame cs = site("main", 0x1e, f), lf = leaf("work", f);
	struct st_frame unk = { .kind = ST_FRAME_CALLSITE, .addr = 0x55,
				.module = st_strtab__intern(f->strs, "/usr/lib/libx.so"),
				.offset = 0x123 };
	struct st_frame raw = { .kind = ST_FRAME_LEAF, .addr = 0xabc };
	char buf[128];

	assert_string_equal(st_frame__name(&cs, buf, sizeof(buf)), "main+0x1e");
	assert_string_equal(st_frame__name(&lf, buf, sizeof(buf)), "work");
	assert_string_equal(st_frame__name(&unk, buf, sizeof(buf)), "libx.so+0x123");
	assert_string_equal(st_frame__name(&raw, buf, sizeof(buf)), "[unknown] 0xabc");
}

/* The runtime table (names, OpenTelemetry's, pseudo modules) and the
 * runtime as part of a frame's key: two frames alike but for it are two
 * children, a Python call site is named without its offset (its line). */
static void test_runtimes(void **state)
{
	static const char *const names[] = { "native", "kernel", "python", "java" };
	static const char *const otel[] = { "native", "kernel", "cpython", "jvm" };
	struct fx *f = *state;
	struct st_frame a = site("run", 0x10, f), b = a;
	enum st_runtime r;
	char buf[64];

	for (unsigned i = 0; i < ST_RUNTIME_COUNT; i++) {
		assert_string_equal(st_runtime__name(i), names[i]);
		assert_string_equal(st_runtime__otel(i), otel[i]);
		assert_int_equal(st_runtime__parse(names[i], &r), 0);
		assert_int_equal(r, i);
	}
	assert_null(st_runtime__name(ST_RUNTIME_COUNT));
	assert_null(st_runtime__otel(ST_RUNTIME_COUNT));
	assert_int_equal(st_runtime__parse("cpython", &r), -EINVAL);
	assert_null(st_runtime__module(ST_RUNTIME_NATIVE));
	assert_null(st_runtime__module(ST_RUNTIME_KERNEL));
	assert_string_equal(st_runtime__module(ST_RUNTIME_PYTHON), ST_PYTHON_MODULE);
	assert_string_equal(st_runtime__module(ST_RUNTIME_JAVA), "[java]");
	b.runtime = ST_RUNTIME_JAVA;
	assert_ptr_not_equal(st_tree__child(f->t, st_tree__root(f->t), &a, true),
			     st_tree__child(f->t, st_tree__root(f->t), &b, true));
	assert_int_equal(st_tree__node_count(f->t), 3);
	assert_string_equal(st_frame__name(&b, buf, sizeof(buf)), "run+0x10");
	b.runtime = ST_RUNTIME_PYTHON;
	assert_string_equal(st_frame__name(&b, buf, sizeof(buf)), "run");
}

/* ---- by function ------------------------------------------------------ */

struct seen_h {
	const char *h;		/* interned "h" */
	struct st_node *dst[8];
	size_t n;
};

static void seen_h(const struct st_node *src, struct st_node *dst, void *ctx)
{
	struct seen_h *c = ctx;

	if (src->f.function == c->h && c->n < 8)
		c->dst[c->n++] = dst;
}

/* Call sites, leaf and inline frames of one function under one caller are
 * one node; recursion stays nested; unnamed frames keep their address. */
static void test_by_function(void **state)
{
	struct fx *f = *state;
#define CS(fn, off) { .kind = ST_FRAME_CALLSITE, .addr = 0x1000 + (off), .offset = (off), \
		      .function = st_strtab__intern(f->strs, fn) }
#define LF(fn) { .kind = ST_FRAME_LEAF, .addr = 0x2000, .function = st_strtab__intern(f->strs, fn) }
	struct st_frame a[] = { CS("main", 0x10), CS("h", 0x5), LF("parse") };
	struct st_frame b[] = { CS("main", 0x10), CS("h", 0x9), LF("build") };
	struct st_frame c[] = { CS("main", 0x10), LF("h") };
	struct st_frame d[] = { CS("main", 0x10), CS("h", 0x20), CS("walk", 0x4), CS("walk", 0x4),
				LF("walk") };
	struct st_frame e[] = { CS("main", 0x10),
				{ .kind = ST_FRAME_INLINE, .function = st_strtab__intern(f->strs, "g") },
				LF("x") };
	struct st_frame u1[] = { CS("main", 0x10), { .kind = ST_FRAME_LEAF, .addr = 0x401234,
				 .offset = 0x1234, .module = st_strtab__intern(f->strs, "lib") } };
	struct st_frame u2[] = { CS("main", 0x10), { .kind = ST_FRAME_LEAF, .addr = 0x405678,
				 .offset = 0x5678, .module = st_strtab__intern(f->strs, "lib") } };
#undef CS
#undef LF
	struct seen_h sh = { .h = st_strtab__intern(f->strs, "h") };
	struct st_tree *t = f->t, *fn;
	struct st_node *h;
	size_t unnamed = 0;

	st_tree__add_sample(t, a, 3, 10, ST_CALLS_FRAME);
	st_tree__add_sample(t, b, 3, 55, ST_CALLS_FRAME);
	st_tree__add_sample(t, c, 2, 3, ST_CALLS_FRAME);
	st_tree__add_sample(t, d, 5, 20, ST_CALLS_FRAME);
	st_tree__add_sample(t, e, 3, 2, ST_CALLS_FRAME);
	st_tree__add_sample(t, u1, 2, 1, ST_CALLS_FRAME);
	st_tree__add_sample(t, u2, 2, 1, ST_CALLS_FRAME);
	st_tree__finalize(t);
	fn = st_tree__by_function(t, seen_h, &sh);
	assert_non_null(fn);
	f->t = fn;	/* expect_node() reads f->t */
	expect_node(f, "main", find(f, fn, "main")->calls, 0, 92);
	h = find(f, fn, "main;h");
	assert_non_null(h);
	expect_node(f, "main;h", h->calls, 3, 88);
	expect_node(f, "main;h;parse", find(f, fn, "main;h;parse")->calls, 10, 10);
	expect_node(f, "main;h;build", find(f, fn, "main;h;build")->calls, 55, 55);
	expect_node(f, "main;h;walk", find(f, fn, "main;h;walk")->calls, 0, 20);
	expect_node(f, "main;h;walk;walk;walk", find(f, fn, "main;h;walk;walk;walk")->calls, 20, 20);
	expect_node(f, "main;g;x", find(f, fn, "main;g;x")->calls, 2, 2);
	assert_null(find(f, fn, "main;h;walk;walk;walk;walk"));
	assert_int_equal(h->f.kind, ST_FRAME_FUNCTION);
	assert_int_equal(h->f.offset, 0);
	assert_int_equal(h->f.addr, 0);
	/* every frame of h (3 call sites, the leaf) went into the one node */
	assert_int_equal(sh.n, 4);
	for (size_t i = 0; i < sh.n; i++)
		assert_ptr_equal(sh.dst[i], h);
	for (struct st_node *n = find(f, fn, "main")->first_child; n; n = n->next_sibling)
		if (!n->f.function) {
			assert_int_equal(n->f.kind, ST_FRAME_FUNCTION);
			assert_true(n->f.addr == 0x401234 || n->f.addr == 0x405678);
			unnamed++;
		}
	assert_int_equal(unnamed, 2);
	f->t = t;
	st_tree__free(fn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_seed_vector_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_count_is_consecutive_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_function_rule_differs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_sums, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_invariants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runtimes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_by_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adopt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_next_in, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep_tree_no_recursion, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

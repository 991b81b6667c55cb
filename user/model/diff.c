/* diff.c - two profiles compared per function and per path, see diff.h. */
#include "user/model/diff.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/tree.h"
#include "common/u64map.h"
#include "user/model/functab.h"
#include "user/model/profile.h"

struct st_diff {
	struct st_profile *p;		/* the union tree, B's counts; strings of both */
	struct st_tree *a;		/* A merged by function (strings in p) */
	__u64 samples[2];
	struct st_u64map *a_to_u;	/* node of a -> its node in the union tree */
	struct st_u64map *u_to_a;	/* node of the union tree -> node of a */
	struct st_diff_fn *fns;
	size_t nfns, fns_cap;
};

__u64 st_diff__samples(const struct st_diff *d, int side)
{
	return d->samples[side ? 1 : 0];
}

double st_diff__pct(const struct st_diff *d, int side, __u64 count)
{
	__u64 total = st_diff__samples(d, side);

	return total ? 100.0 * (double)count / (double)total : 0.0;
}

const struct st_profile *st_diff__profile(const struct st_diff *d)
{
	return d->p;
}

void st_diff__node(const struct st_diff *d, const struct st_node *n, struct st_diff_counts *c)
{
	const struct st_node *an = st_u64map__get(d->u_to_a, (uintptr_t)n);

	memset(c, 0, sizeof(*c));
	if (!n)
		return;
	c->base[ST_DIFF_B] = n->base;
	c->cum[ST_DIFF_B] = n->cum;
	if (an) {
		c->base[ST_DIFF_A] = an->base;
		c->cum[ST_DIFF_A] = an->cum;
	}
}

double st_diff__dcum(const struct st_diff *d, const struct st_node *n)
{
	struct st_diff_counts c;

	st_diff__node(d, n, &c);
	return st_diff__pct(d, ST_DIFF_B, c.cum[ST_DIFF_B]) -
	       st_diff__pct(d, ST_DIFF_A, c.cum[ST_DIFF_A]);
}

const struct st_diff_fn *st_diff__functions(const struct st_diff *d, size_t *n)
{
	*n = d->nfns;
	return d->fns;
}

/* Every thread of src, by function, merged under the root of t (strings
 * interned in p). */
static int merge_by_function(struct st_profile *p, struct st_tree *t,
			     const struct st_profile *src)
{
	for (size_t i = 0; i < src->nthreads; i++) {
		struct st_tree *fn = st_tree__by_function(src->threads[i]->tree, NULL, NULL);
		int err;

		if (!fn)
			return -ENOMEM;
		err = st_profile__merge_tree(p, t, st_tree__root(t), st_tree__root(fn));
		st_tree__free(fn);
		if (err)
			return err;
	}
	return 0;
}

struct union_ctx {
	struct st_diff *d;
	struct st_tree *u;
	int err;
};

/* A's node n into the union tree (its parent is there already: pre-order). */
static int add_a_node(const struct st_node *n, void *ctx)
{
	struct union_ctx *c = ctx;
	struct st_node *up, *un;

	if (!n->depth) {
		un = st_tree__root(c->u);
	} else {
		up = st_u64map__get(c->d->a_to_u, (uintptr_t)n->parent);
		un = up ? st_tree__child(c->u, up, &n->f, true) : NULL;
		if (!un) {
			c->err = -ENOMEM;
			return 1;
		}
	}
	if (st_u64map__put(c->d->a_to_u, (uintptr_t)n, un) ||
	    st_u64map__put(c->d->u_to_a, (uintptr_t)un, (void *)n)) {
		c->err = -ENOMEM;
		return 1;
	}
	return 0;
}

/* An order in which the rows of one function are adjacent. */
static int cmp_key(const void *pa, const void *pb)
{
	return st_functab__cmp(&((const struct st_diff_fn *)pa)->node->f,
			       &((const struct st_diff_fn *)pb)->node->f);
}

static int cmp_change(const void *pa, const void *pb)
{
	const struct st_diff_fn *x = pa, *y = pb;
	double ax = fabs(x->dself), ay = fabs(y->dself);
	const char *nx = x->node->f.function, *ny = y->node->f.function;

	if (ax != ay)
		return ax > ay ? -1 : 1;
	ax = fabs(x->dtotal);
	ay = fabs(y->dtotal);
	if (ax != ay)
		return ax > ay ? -1 : 1;
	if (!nx != !ny)
		return nx ? -1 : 1;
	return nx ? strcmp(nx, ny) : cmp_key(pa, pb);
}

static int add_row(const struct st_node *n, void *ctx)
{
	struct union_ctx *c = ctx;
	struct st_diff *d = c->d;
	struct st_diff_counts k;
	struct st_diff_fn *r;
	bool outer = true;

	if (!n->depth)
		return 0;
	if (ST_GROW(d->fns, d->fns_cap, d->nfns, 256)) {
		c->err = -ENOMEM;
		return 1;
	}
	/* its total counts once per stack: at the outermost frame of it */
	for (const struct st_node *up = n->parent; up && up->depth && outer; up = up->parent)
		outer = !st_functab__same(&up->f, &n->f);
	st_diff__node(d, n, &k);
	r = &d->fns[d->nfns++];
	*r = (struct st_diff_fn){ .node = n };
	for (int s = 0; s < 2; s++) {
		r->self[s] = k.base[s];
		r->total[s] = outer ? k.cum[s] : 0;
	}
	return 0;
}

/* The rows of one function summed, their deltas, by change. */
static void reduce_rows(struct st_diff *d)
{
	size_t out = 0;

	qsort(d->fns, d->nfns, sizeof(*d->fns), cmp_key);
	for (size_t i = 0; i < d->nfns; i++) {
		struct st_diff_fn *r = &d->fns[i];

		if (out && !cmp_key(&d->fns[out - 1], r)) {
			for (int s = 0; s < 2; s++) {
				d->fns[out - 1].self[s] += r->self[s];
				d->fns[out - 1].total[s] += r->total[s];
			}
			continue;
		}
		d->fns[out++] = *r;
	}
	d->nfns = out;
	for (size_t i = 0; i < d->nfns; i++) {
		struct st_diff_fn *r = &d->fns[i];

		r->dself = st_diff__pct(d, ST_DIFF_B, r->self[ST_DIFF_B]) -
			   st_diff__pct(d, ST_DIFF_A, r->self[ST_DIFF_A]);
		r->dtotal = st_diff__pct(d, ST_DIFF_B, r->total[ST_DIFF_B]) -
			    st_diff__pct(d, ST_DIFF_A, r->total[ST_DIFF_A]);
	}
	qsort(d->fns, d->nfns, sizeof(*d->fns), cmp_change);
}

struct st_diff *st_diff__new(const struct st_profile *a, const struct st_profile *b)
{
	struct st_diff *d = calloc(1, sizeof(*d));
	struct union_ctx uc = { .d = d };
	struct st_thread *t;

	if (!d)
		goto nomem;
	d->p = st_profile__new("diff");
	d->a = st_tree__new();
	d->a_to_u = st_u64map__new();
	d->u_to_a = st_u64map__new();
	if (!d->p || !d->a || !d->a_to_u || !d->u_to_a)
		goto nomem;
	t = st_profile__add_thread(d->p, 0, 0, "diff");
	if (!t || merge_by_function(d->p, t->tree, b) || merge_by_function(d->p, d->a, a))
		goto nomem;
	st_tree__finalize(d->a);
	uc.u = t->tree;
	st_tree__walk(d->a, add_a_node, &uc);
	if (uc.err)
		goto nomem;
	st_profile__finalize(d->p);
	d->samples[ST_DIFF_A] = st_tree__root(d->a)->cum;
	d->samples[ST_DIFF_B] = st_tree__root(t->tree)->cum;
	d->p->samples = d->samples[ST_DIFF_B];
	st_tree__walk(t->tree, add_row, &uc);
	if (uc.err)
		goto nomem;
	reduce_rows(d);
	return d;
nomem:
	st_diff__free(d);
	errno = ENOMEM;
	return NULL;
}

void st_diff__free(struct st_diff *d)
{
	if (!d)
		return;
	st_u64map__free(d->a_to_u);
	st_u64map__free(d->u_to_a);
	st_tree__free(d->a);
	st_profile__free(d->p);
	free(d->fns);
	free(d);
}

/* functab.c - a profile's functions, self and total, see functab.h. */
#include "user/model/functab.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "user/model/profile.h"

bool st_functab__same(const struct st_frame *x, const struct st_frame *y)
{
	return !st_functab__cmp(x, y);
}

static int cmp_ptr(const void *x, const void *y)
{
	return (uintptr_t)x < (uintptr_t)y ? -1 : (uintptr_t)x > (uintptr_t)y;
}

int st_functab__cmp(const struct st_frame *x, const struct st_frame *y)
{
	int c;

	if ((c = cmp_ptr(x->function, y->function)) || (c = cmp_ptr(x->module, y->module)))
		return c;
	if (x->runtime != y->runtime)
		return x->runtime < y->runtime ? -1 : 1;
	if ((x->kind == ST_FRAME_SPECIAL) != (y->kind == ST_FRAME_SPECIAL))
		return x->kind == ST_FRAME_SPECIAL ? -1 : 1;
	if ((x->kind == ST_FRAME_DATA) != (y->kind == ST_FRAME_DATA))
		return x->kind == ST_FRAME_DATA ? -1 : 1;
	if (x->function)
		return 0;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int cmp_row_key(const void *a, const void *b)
{
	return st_functab__cmp(&((const struct st_functab_row *)a)->f,
			       &((const struct st_functab_row *)b)->f);
}

static int cmp_row_rank(const void *a, const void *b)
{
	const struct st_functab_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (!x->f.function != !y->f.function)
		return x->f.function ? -1 : 1;
	return x->f.function ? strcmp(x->f.function, y->f.function) : cmp_row_key(a, b);
}

struct walk_ctx {
	struct st_functab *t;
	int err;
};

static int add_row(const struct st_node *n, void *ctx)
{
	struct walk_ctx *c = ctx;
	struct st_functab *t = c->t;
	bool outer = true;

	if (!n->depth)
		return 0;
	if (ST_GROW(t->rows, t->cap, t->n, 256)) {
		c->err = -ENOMEM;
		return 1;
	}
	/* its total counts once per stack: at its outermost frame */
	for (const struct st_node *up = n->parent; up && up->depth && outer; up = up->parent)
		outer = !st_functab__same(&up->f, &n->f);
	t->rows[t->n++] = (struct st_functab_row){ .f = n->f, .self = n->base,
						   .total = outer ? n->cum : 0 };
	return 0;
}

struct st_functab *st_functab__new(const struct st_profile *p, __u32 tid)
{
	struct st_functab *t = calloc(1, sizeof(*t));
	struct walk_ctx c = { .t = t };
	size_t out = 0;

	if (!t)
		goto nomem;
	for (size_t i = 0; i < p->nthreads && !c.err; i++) {
		struct st_tree *fn;

		if (tid && p->threads[i]->tid != tid)
			continue;
		if (!(fn = st_tree__by_function(p->threads[i]->tree, NULL, NULL)))
			goto nomem;
		t->samples += st_tree__root(fn)->cum;
		st_tree__walk(fn, add_row, &c);
		st_tree__free(fn);	/* the rows' strings are p's */
	}
	if (c.err)
		goto nomem;
	qsort(t->rows, t->n, sizeof(*t->rows), cmp_row_key);
	for (size_t i = 0; i < t->n; i++) {
		if (out && st_functab__same(&t->rows[out - 1].f, &t->rows[i].f)) {
			t->rows[out - 1].self += t->rows[i].self;
			t->rows[out - 1].total += t->rows[i].total;
			continue;
		}
		t->rows[out++] = t->rows[i];
	}
	t->n = out;
	qsort(t->rows, t->n, sizeof(*t->rows), cmp_row_rank);
	return t;
nomem:
	st_functab__free(t);
	errno = ENOMEM;
	return NULL;
}

static int cmp_row_total(const void *a, const void *b)
{
	const struct st_functab_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return cmp_row_rank(a, b);
}

void st_functab__by_total(struct st_functab *t)
{
	qsort(t->rows, t->n, sizeof(*t->rows), cmp_row_total);
}

void st_functab__free(struct st_functab *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

/* symtab.c - sorted symbol array, zero-size symbol sizing, binary search. */
#include "binsym/symtab.h"
#include "common/grow.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* How far back find() looks for an enclosing symbol when the nearest
 * preceding one ends before addr (nested or overlapping symbols). */
#define ENCLOSING_SCAN 8

struct st_symtab {
	struct st_symbol *syms;
	size_t n, cap;
};

struct st_symtab *st_symtab__new(void)
{
	return calloc(1, sizeof(struct st_symtab));
}

void st_symtab__free(struct st_symtab *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t);
}

static int push(struct st_symtab *t, const struct st_symbol *sym)
{
	if (ST_GROW(t->syms, t->cap, t->n, 64))
		return -ENOMEM;
	t->syms[t->n++] = *sym;
	return 0;
}

int st_symtab__add(struct st_symtab *t, __u64 start, __u64 size, const char *name,
		   const char *module, enum st_sym_bind bind)
{
	struct st_symbol sym = {
		.start = start, .size = size, .name = name, .module = module,
		.bind = bind, .sized = size != 0,
	};

	if (!name)
		return -EINVAL;
	return push(t, &sym);
}

int st_symtab__add_bound(struct st_symtab *t, __u64 addr)
{
	struct st_symbol sym = { .start = addr };

	return push(t, &sym);
}

static const char guess_name[] = "";	/* a guess's name until name_guesses() */

int st_symtab__add_guess(struct st_symtab *t, __u64 start, __u64 size)
{
	return st_symtab__add(t, start, size, guess_name, NULL, ST_BIND_GUESS);
}

int st_symtab__name_guesses(struct st_symtab *t, const char *(*name)(void *ctx, __u64 start),
			    void *ctx)
{
	int n = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct st_symbol *s = &t->syms[i];

		if (s->bind != ST_BIND_GUESS || s->name != guess_name)
			continue;
		if (!(s->name = name(ctx, s->start)))
			return -ENOMEM;
		n++;
	}
	return n;
}

static bool guess(const struct st_symbol *s)
{
	return s->name && s->bind == ST_BIND_GUESS;
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* < 0 when a is the better name for the same address. */
static int prefer(const struct st_symbol *a, const struct st_symbol *b)
{
	size_t ua, ub;

	if (!a->name != !b->name)
		return a->name ? -1 : 1;	/* bounds last */
	if (!a->name)
		return 0;
	if (guess(a) != guess(b))
		return guess(a) ? 1 : -1;	/* any symbol of the binary's first */
	if (a->sized != b->sized)
		return a->sized ? -1 : 1;
	if (a->bind != b->bind)
		return a->bind > b->bind ? -1 : 1;
	ua = underscores(a->name);
	ub = underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_sym(const void *pa, const void *pb)
{
	const struct st_symbol *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return prefer(a, b);
}

/* Each sized symbol ends at the first bound (section end) after its start:
 * one running past its section does not cover the next one's code. The
 * bounds, sorted as t is, are searched for each (a pass over them, then a
 * binary search per symbol); without memory for them nothing is cut. */
static void clamp_to_bounds(struct st_symtab *t)
{
	size_t nb = 0, i;
	__u64 *b;

	for (i = 0; i < t->n; i++)
		nb += !t->syms[i].name;
	if (!nb || !(b = malloc(nb * sizeof(*b))))
		return;
	for (i = 0, nb = 0; i < t->n; i++)
		if (!t->syms[i].name)
			b[nb++] = t->syms[i].start;
	for (i = 0; i < t->n; i++) {
		struct st_symbol *s = &t->syms[i];
		size_t lo = 0, hi = nb;

		if (!s->name || !s->size)
			continue;
		while (lo < hi) {	/* first bound above the start */
			size_t mid = lo + (hi - lo) / 2;

			if (b[mid] <= s->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nb && b[lo] - s->start < s->size)
			s->size = b[lo] - s->start;
	}
	free(b);
}

void st_symtab__finish(struct st_symtab *t)
{
	size_t i, j, out = 0;
	__u64 end;

	if (!t->n)
		return;
	qsort(t->syms, t->n, sizeof(*t->syms), cmp_sym);

	/* a sized symbol ends at its section's end (a bound inside it) */
	clamp_to_bounds(t);

	/* a zero-size symbol inside a sized one (a label in a function) is
	 * not a function of its own, nor is an FDE there (a guess) */
	for (i = 0, end = 0; i < t->n; i++) {
		struct st_symbol *s = &t->syms[i];

		if (s->name && (!s->size || guess(s)) && s->start < end)
			s->name = NULL;
		else if (s->name && s->size && !guess(s) && s->start + s->size > end)
			end = s->start + s->size;
	}

	/* zero-size symbols reach to the next greater start (symbol or bound);
	 * the last one, with nothing after it, stays an exact match only */
	for (i = 0, j = 0; i < t->n; i++) {
		struct st_symbol *s = &t->syms[i];

		if (!s->name || s->size)
			continue;
		if (j <= i)
			j = i + 1;
		while (j < t->n && t->syms[j].start == s->start)
			j++;
		s->size = j < t->n ? t->syms[j].start - s->start : 1;
	}

	/* drop bounds and the less preferred names at the same address */
	for (i = 0; i < t->n; i++) {
		struct st_symbol *s = &t->syms[i];

		if (!s->name)
			continue;
		if (out && t->syms[out - 1].start == s->start)
			continue;	/* sorted best first */
		t->syms[out++] = *s;
	}
	t->n = out;
	if (out < t->cap) {
		struct st_symbol *syms = realloc(t->syms, (out ? out : 1) * sizeof(*syms));

		if (syms) {
			t->syms = syms;
			t->cap = out ? out : 1;
		}
	}
}

const struct st_symbol *st_symtab__find(const struct st_symtab *t, __u64 addr)
{
	size_t lo = 0, hi = t->n, i, k;

	/* first symbol with start > addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, k = 0; i > 0 && k < ENCLOSING_SCAN; i--, k++) {
		const struct st_symbol *s = &t->syms[i - 1];

		if (addr - s->start < s->size)
			return s;
		if (!s->sized)
			break;	/* zero-size ones already reach the next symbol */
	}
	return NULL;
}

size_t st_symtab__count(const struct st_symtab *t)
{
	return t->n;
}

size_t st_symtab__memory(const struct st_symtab *t)
{
	return sizeof(*t) + t->cap * sizeof(*t->syms);
}

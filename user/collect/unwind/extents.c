/* extents.c - first-fit range allocator with a reuse quarantine (see
 * extents.h). Free ranges are kept sorted by start in an array; a run of
 * alloc/release pairs keeps it short because neighbours merge. */
#include "user/collect/unwind/extents.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct range {
	__u32 first, n;
	__u64 since;	/* tick of the latest release in it */
};

struct st_extents {
	__u32 cap, top;		/* [top, cap) never handed out */
	__u64 quarantine, used;
	struct range *free;	/* sorted by first, disjoint, not adjacent */
	size_t nfree, freecap;
};

struct st_extents *st_extents__new(__u32 cap, __u64 quarantine)
{
	struct st_extents *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->cap = cap;
	e->quarantine = quarantine;
	return e;
}

void st_extents__free(struct st_extents *e)
{
	if (!e)
		return;
	free(e->free);
	free(e);
}

int st_extents__alloc(struct st_extents *e, __u32 n, __u64 now, __u32 *first)
{
	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < e->nfree; i++) {
		struct range *r = &e->free[i];

		if (r->n < n || now - r->since < e->quarantine || now < r->since)
			continue;
		*first = r->first;
		r->first += n;
		r->n -= n;
		if (!r->n) {
			memmove(r, r + 1, (e->nfree - i - 1) * sizeof(*r));
			e->nfree--;
		}
		e->used += n;
		return 0;
	}
	if (n > e->cap - e->top)
		return -ENOSPC;
	*first = e->top;
	e->top += n;
	e->used += n;
	return 0;
}

int st_extents__release(struct st_extents *e, __u32 first, __u32 n, __u64 now)
{
	size_t i = 0;
	struct range *prev, *next;

	if (!n || first > e->top || n > e->top - first || n > e->used)
		return -EINVAL;
	while (i < e->nfree && e->free[i].first < first)
		i++;
	prev = i ? &e->free[i - 1] : NULL;
	next = i < e->nfree ? &e->free[i] : NULL;
	if ((prev && prev->first + prev->n > first) || (next && first + n > next->first))
		return -EINVAL;	/* overlaps a free range: released twice */
	e->used -= n;
	if (prev && prev->first + prev->n == first) {
		prev->n += n;
		prev->since = now;
		if (next && prev->first + prev->n == next->first) {
			prev->n += next->n;
			memmove(next, next + 1, (e->nfree - i - 1) * sizeof(*next));
			e->nfree--;
		}
		return 0;
	}
	if (next && first + n == next->first) {
		next->first = first;
		next->n += n;
		next->since = now;
		return 0;
	}
	if (e->nfree == e->freecap) {
		size_t cap = e->freecap ? 2 * e->freecap : 16;
		struct range *p = realloc(e->free, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		e->free = p;
		e->freecap = cap;
	}
	memmove(&e->free[i + 1], &e->free[i], (e->nfree - i) * sizeof(e->free[0]));
	e->free[i] = (struct range){ .first = first, .n = n, .since = now };
	e->nfree++;
	return 0;
}

__u64 st_extents__used(const struct st_extents *e)
{
	return e->used;
}

size_t st_extents__free_ranges(const struct st_extents *e)
{
	return e->nfree;
}

/* lru.c - the intrusive least-recently-used list (see lru.h). */
#include "common/lru.h"

void st_lru__push(struct st_lru *l, struct st_lru_link *e)
{
	e->prev = NULL;
	e->next = l->newest;
	if (l->newest)
		l->newest->prev = e;
	else
		l->oldest = e;
	l->newest = e;
	l->count++;
}

void st_lru__unlink(struct st_lru *l, struct st_lru_link *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		l->newest = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->oldest = e->prev;
	e->prev = e->next = NULL;
	l->count--;
}

void st_lru__touch(struct st_lru *l, struct st_lru_link *e)
{
	if (l->newest == e)
		return;
	st_lru__unlink(l, e);
	st_lru__push(l, e);
}

struct st_lru_link *st_lru__oldest(const struct st_lru *l)
{
	return l->oldest;
}

/* lru.h - a least-recently-used order of things that embed a link (an
 * intrusive doubly linked list: no allocation, O(1) push, touch, unlink),
 * for caches that evict their oldest entries under the daemon's memory
 * budget (common/budget.h). The cache keeps its entries in a table of its
 * own (common/u64map.h); the list only orders them. Not thread-safe.
 * Owner: common/lru.c. */
#ifndef STACKTREE_LRU_H
#define STACKTREE_LRU_H

#include <stddef.h>

struct st_lru_link {
	struct st_lru_link *prev, *next;	/* prev: more recent */
};

/* Zero-initialized: empty. */
struct st_lru {
	struct st_lru_link *newest, *oldest;
	size_t count;
};

/* The entry of type whose member link is. */
#define st_lru_entry(link, type, member) \
	((type *)(void *)((char *)(link) - offsetof(type, member)))

/* Add e (not on any list) as the newest. */
void st_lru__push(struct st_lru *l, struct st_lru_link *e);
/* Make e (on l) the newest. */
void st_lru__touch(struct st_lru *l, struct st_lru_link *e);
/* Take e (on l) off l. */
void st_lru__unlink(struct st_lru *l, struct st_lru_link *e);
/* The least recently used, or NULL when l is empty. */
struct st_lru_link *st_lru__oldest(const struct st_lru *l);

#endif

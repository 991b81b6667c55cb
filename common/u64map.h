/* u64map.h - the one hash table: open addressing (linear probing, a
 * power-of-two capacity at most half full) from a 64-bit key to a non-NULL
 * pointer. Used two ways:
 *   a map     the key is the identity, unique and non-zero: get, put;
 *   an index  of values that carry their own key (strings, tree nodes,
 *             rows): the table key is their hash (common/hash.h), and
 *             values under equal hashes are told apart by the caller's eq:
 *             find, add, remove (any hash; 0 is kept as 1).
 * Do not mix the two ways in one table. Slots come from st_hash_u64(key),
 * so that iteration order depends on the keys and the insertion order only.
 * Owner: common/u64map.c. */
#ifndef STACKTREE_U64MAP_H
#define STACKTREE_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct st_u64map;

struct st_u64map *st_u64map__new(void);
void st_u64map__free(struct st_u64map *m);
void *st_u64map__get(const struct st_u64map *m, __u64 key);
/* Insert or replace; key must not be 0. 0 or -ENOMEM. */
int st_u64map__put(struct st_u64map *m, __u64 key, void *value);
size_t st_u64map__count(const struct st_u64map *m);
/* Bytes held by the table (not by the values). */
size_t st_u64map__memory(const struct st_u64map *m);
/* Remove every entry (values are not freed). */
void st_u64map__clear(struct st_u64map *m);
/* Iterate: *pos starts at 0; returns the next value or NULL at the end. */
void *st_u64map__next(const struct st_u64map *m, size_t *pos, __u64 *key);

/* Index use. eq tells whether value is the one key stands for. */
typedef bool (*st_u64map_eq)(const void *value, const void *key);
/* The value under hash for which eq(value, key) holds, or NULL. */
void *st_u64map__find(const struct st_u64map *m, __u64 hash, st_u64map_eq eq, const void *key);
/* Add value (non-NULL) under hash, after any other: no check for an equal
 * one (find first). 0 or -ENOMEM. */
int st_u64map__add(struct st_u64map *m, __u64 hash, void *value);
/* Take out the value find() would return, and return it (NULL: none). */
void *st_u64map__remove(struct st_u64map *m, __u64 hash, st_u64map_eq eq, const void *key);

#endif

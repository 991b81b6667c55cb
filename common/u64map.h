/* u64map.h - a small open-addressing hash map from a non-zero __u64 key to a
 * pointer. Owner: common/u64map.c. */
#ifndef STACKTREE_U64MAP_H
#define STACKTREE_U64MAP_H

#include <stddef.h>
#include <linux/types.h>

struct st_u64map;

struct st_u64map *st_u64map__new(void);
void st_u64map__free(struct st_u64map *m);
void *st_u64map__get(const struct st_u64map *m, __u64 key);
/* Insert or replace; key must not be 0. 0 or -ENOMEM. */
int st_u64map__put(struct st_u64map *m, __u64 key, void *value);
size_t st_u64map__count(const struct st_u64map *m);
/* Remove every entry (values are not freed). */
void st_u64map__clear(struct st_u64map *m);
/* Iterate: *pos starts at 0; returns the next value or NULL at the end. */
void *st_u64map__next(const struct st_u64map *m, size_t *pos, __u64 *key);

#endif

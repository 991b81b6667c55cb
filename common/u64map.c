/* u64map.c - the one hash table: open addressing, linear probing, deletion
 * by backward shift (see u64map.h). */
#include "common/u64map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

struct slot {
	__u64 key;
	void *value;
};

struct st_u64map {
	struct slot *slots;
	size_t cap, count;
};

static size_t slot_of(__u64 k, size_t cap)
{
	return (size_t)st_hash_u64(k) & (cap - 1);
}

struct st_u64map *st_u64map__new(void)
{
	struct st_u64map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->cap = 64;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return NULL;
	}
	return m;
}

void st_u64map__free(struct st_u64map *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}

void *st_u64map__get(const struct st_u64map *m, __u64 key)
{
	for (size_t j = slot_of(key, m->cap); m->slots[j].key; j = (j + 1) & (m->cap - 1))
		if (m->slots[j].key == key)
			return m->slots[j].value;
	return NULL;
}

static int grow(struct st_u64map *m)
{
	size_t ncap = m->cap * 2;
	struct slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->slots[i].key)
			continue;
		for (j = slot_of(m->slots[i].key, ncap); ns[j].key; j = (j + 1) & (ncap - 1))
			;
		ns[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

int st_u64map__put(struct st_u64map *m, __u64 key, void *value)
{
	size_t j;

	if (!key)
		return -EINVAL;
	if ((m->count + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	for (j = slot_of(key, m->cap); m->slots[j].key; j = (j + 1) & (m->cap - 1)) {
		if (m->slots[j].key == key) {
			m->slots[j].value = value;
			return 0;
		}
	}
	m->slots[j].key = key;
	m->slots[j].value = value;
	m->count++;
	return 0;
}

/* The slot of the value under hash that eq matches, or cap. */
static size_t find_slot(const struct st_u64map *m, __u64 hash, st_u64map_eq eq, const void *key)
{
	hash = hash ? hash : 1;
	for (size_t j = slot_of(hash, m->cap); m->slots[j].key; j = (j + 1) & (m->cap - 1))
		if (m->slots[j].key == hash && eq(m->slots[j].value, key))
			return j;
	return m->cap;
}

void *st_u64map__find(const struct st_u64map *m, __u64 hash, st_u64map_eq eq, const void *key)
{
	size_t j = find_slot(m, hash, eq, key);

	return j < m->cap ? m->slots[j].value : NULL;
}

int st_u64map__add(struct st_u64map *m, __u64 hash, void *value)
{
	size_t j;

	hash = hash ? hash : 1;
	if ((m->count + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	for (j = slot_of(hash, m->cap); m->slots[j].key; j = (j + 1) & (m->cap - 1))
		;
	m->slots[j].key = hash;
	m->slots[j].value = value;
	m->count++;
	return 0;
}

void *st_u64map__remove(struct st_u64map *m, __u64 hash, st_u64map_eq eq, const void *key)
{
	size_t mask = m->cap - 1, i = find_slot(m, hash, eq, key), j, home;
	void *value;

	if (i == m->cap)
		return NULL;
	value = m->slots[i].value;
	/* backward shift: move up the entries whose probe path crosses the hole */
	for (j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
		home = slot_of(m->slots[j].key, m->cap);
		if (j > i ? (home <= i || home > j) : (home <= i && home > j)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].key = 0;
	m->slots[i].value = NULL;
	m->count--;
	return value;
}

void st_u64map__clear(struct st_u64map *m)
{
	memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->count = 0;
}

size_t st_u64map__count(const struct st_u64map *m)
{
	return m->count;
}

size_t st_u64map__memory(const struct st_u64map *m)
{
	return m ? sizeof(*m) + m->cap * sizeof(*m->slots) : 0;
}

void *st_u64map__next(const struct st_u64map *m, size_t *pos, __u64 *key)
{
	while (*pos < m->cap) {
		struct slot *s = &m->slots[(*pos)++];

		if (s->key) {
			if (key)
				*key = s->key;
			return s->value;
		}
	}
	return NULL;
}

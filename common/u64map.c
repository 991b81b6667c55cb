/* u64map.c - open-addressing hash map __u64 -> pointer (linear probing). */
#include "common/u64map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	__u64 key;
	void *value;
};

struct st_u64map {
	struct slot *slots;
	size_t cap, count;
};

static size_t hash(__u64 k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
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
	for (size_t j = hash(key, m->cap); m->slots[j].key; j = (j + 1) & (m->cap - 1))
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
		for (j = hash(m->slots[i].key, ncap); ns[j].key; j = (j + 1) & (ncap - 1))
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
	for (j = hash(key, m->cap); m->slots[j].key; j = (j + 1) & (m->cap - 1)) {
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

void st_u64map__clear(struct st_u64map *m)
{
	memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->count = 0;
}

size_t st_u64map__count(const struct st_u64map *m)
{
	return m->count;
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

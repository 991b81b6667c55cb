/* strtab.c - arena-backed string storage, interned through an index
 * (common/u64map.h) of FNV-1a hashes. */
#include "common/strtab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/u64map.h"

#define CHUNK_SIZE (64 * 1024)	/* largest regular chunk */
#define CHUNK_MIN 256		/* first chunk: small tables stay small */

struct chunk {
	struct chunk *next;
	size_t size;
	char data[];
};

struct st_strtab {
	struct chunk *chunks;
	char *cur;		/* free space in chunks (head) */
	size_t left;
	size_t arena_bytes;
	struct st_u64map *index;	/* hash -> interned string; NULL until the first */
};

struct st_strtab *st_strtab__new(void)
{
	return calloc(1, sizeof(struct st_strtab));
}

void st_strtab__free(struct st_strtab *t)
{
	struct chunk *c, *next;

	if (!t)
		return;
	for (c = t->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	st_u64map__free(t->index);
	free(t);
}

/* Regular chunks double with the arena, from CHUNK_MIN up to CHUNK_SIZE. */
static size_t next_chunk_size(const struct st_strtab *t, size_t want)
{
	size_t size = t->arena_bytes < CHUNK_MIN ? CHUNK_MIN : t->arena_bytes;

	if (size > CHUNK_SIZE)
		size = CHUNK_SIZE;
	return size < want ? want : size;
}

const char *st_strtab__add(struct st_strtab *t, const char *s, size_t len)
{
	struct chunk *c;
	char *p;

	if (len + 1 > t->left) {
		bool big = len + 1 > CHUNK_SIZE / 4;
		size_t size = big ? len + 1 : next_chunk_size(t, len + 1);

		c = malloc(sizeof(*c) + size);
		if (!c) {
			errno = ENOMEM;
			return NULL;
		}
		c->size = size;
		t->arena_bytes += sizeof(*c) + size;
		if (!big || !t->chunks) {
			c->next = t->chunks;
			t->chunks = c;
			t->cur = c->data;
			t->left = size;
		} else {
			/* a big string: its own chunk, keep filling the current one */
			c->next = t->chunks->next;
			t->chunks->next = c;
			memcpy(c->data, s, len);
			c->data[len] = '\0';
			return c->data;
		}
	}
	p = t->cur;
	memcpy(p, s, len);
	p[len] = '\0';
	t->cur += len + 1;
	t->left -= len + 1;
	return p;
}

/* A string to intern: s[0..len). */
struct str_key {
	const char *s;
	size_t len;
};

static bool is_str(const void *value, const void *key)
{
	const char *p = value;
	const struct str_key *k = key;

	return strncmp(p, k->s, k->len) == 0 && p[k->len] == '\0';
}

const char *st_strtab__intern_len(struct st_strtab *t, const char *s, size_t len)
{
	struct str_key k = { s, len };
	const char *p;
	__u64 h;

	if (!s)
		return NULL;
	if (!t->index && !(t->index = st_u64map__new())) {
		errno = ENOMEM;
		return NULL;
	}
	h = st_hash_bytes(s, len, ST_HASH_INIT);
	p = st_u64map__find(t->index, h, is_str, &k);
	if (p)
		return p;
	p = st_strtab__add(t, s, len);
	if (!p)
		return NULL;
	if (st_u64map__add(t->index, h, (void *)p)) {	/* p stays in the arena, unused */
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

const char *st_strtab__intern(struct st_strtab *t, const char *s)
{
	return s ? st_strtab__intern_len(t, s, strlen(s)) : NULL;
}

size_t st_strtab__memory(const struct st_strtab *t)
{
	return sizeof(*t) + t->arena_bytes + st_u64map__memory(t->index);
}

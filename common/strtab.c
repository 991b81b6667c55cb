/* strtab.c - arena-backed string storage with an interning hash set. */
#include "common/strtab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE (64 * 1024)	/* largest regular chunk */
#define CHUNK_MIN 256		/* first chunk: small tables stay small */
#define SLOTS_MIN 16

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
	const char **slots;	/* open addressing; NULL = empty */
	size_t nslots, count;
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
	free(t->slots);
	free(t);
}

static uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
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

static int grow(struct st_strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : SLOTS_MIN, i, j;
	const char **slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->nslots; i++) {
		const char *s = t->slots[i];

		if (!s)
			continue;
		j = hash_str(s, strlen(s)) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = s;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

const char *st_strtab__intern_len(struct st_strtab *t, const char *s, size_t len)
{
	const char *p;
	size_t i;

	if (!s)
		return NULL;
	if ((t->count + 1) * 4 > t->nslots * 3 && grow(t)) {
		errno = ENOMEM;
		return NULL;
	}
	i = hash_str(s, len) & (t->nslots - 1);
	for (; (p = t->slots[i]); i = (i + 1) & (t->nslots - 1)) {
		if (strncmp(p, s, len) == 0 && p[len] == '\0')
			return p;
	}
	p = st_strtab__add(t, s, len);
	if (!p)
		return NULL;
	t->slots[i] = p;
	t->count++;
	return p;
}

const char *st_strtab__intern(struct st_strtab *t, const char *s)
{
	return s ? st_strtab__intern_len(t, s, strlen(s)) : NULL;
}

size_t st_strtab__memory(const struct st_strtab *t)
{
	return sizeof(*t) + t->arena_bytes + t->nslots * sizeof(*t->slots);
}

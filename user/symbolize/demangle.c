/* demangle.c - symbol names through libiberty's demangler, remembered (see
 * demangle.h). */
#include "user/symbolize/demangle.h"

#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/u64map.h"

#define MAX_REMEMBERED 200000	/* names; beyond, start over (bounded memory) */

struct entry {
	char *mangled;
	char *readable;		/* NULL: not demangled */
};

struct st_demangler {
	struct st_u64map *seen;	/* hash of the mangled name -> entry */
	size_t n;
};

static bool is_entry(const void *value, const void *key)
{
	return strcmp(((const struct entry *)value)->mangled, key) == 0;
}

struct st_demangler *st_demangler__new(void)
{
	struct st_demangler *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->seen = st_u64map__new();
	if (!d->seen) {
		free(d);
		return NULL;
	}
	return d;
}

static void forget_all(struct st_demangler *d)
{
	struct entry *e;
	size_t pos = 0;

	while ((e = st_u64map__next(d->seen, &pos, NULL))) {
		free(e->mangled);
		free(e->readable);
		free(e);
	}
	st_u64map__clear(d->seen);
	d->n = 0;
}

void st_demangler__free(struct st_demangler *d)
{
	if (!d)
		return;
	forget_all(d);
	st_u64map__free(d->seen);
	free(d);
}

/* Names the demangler is worth asking about: Itanium (_Z), Rust v0 (_R). */
static bool mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/* libiberty's name for name; a PLT stub ("_Znwm@plt", binsym/elf.c)
 * by its target's ("operator new(unsigned long)@plt"). */
static char *readable(const char *name)
{
	static const char plt[] = "@plt";
	size_t len = strlen(name), k = sizeof(plt) - 1;
	char *target, *r, *out = NULL;

	if (len <= k || strcmp(name + len - k, plt))
		return cplus_demangle(name, DMGL_AUTO | DMGL_PARAMS | DMGL_ANSI);
	if (!(target = strndup(name, len - k)))
		return NULL;
	r = cplus_demangle(target, DMGL_AUTO | DMGL_PARAMS | DMGL_ANSI);
	if (r && asprintf(&out, "%s%s", r, plt) < 0)
		out = NULL;
	free(r);
	free(target);
	return out;
}

const char *st_demangler__name(struct st_demangler *d, const char *name)
{
	struct entry *e;
	__u64 h;

	if (!name || !mangled(name))
		return NULL;
	h = st_hash_str(name);
	e = st_u64map__find(d->seen, h, is_entry, name);
	if (e)
		return e->readable;
	if (d->n >= MAX_REMEMBERED)
		forget_all(d);
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->mangled = strdup(name);
	e->readable = readable(name);
	if (!e->mangled || st_u64map__add(d->seen, h, e)) {
		free(e->mangled);
		free(e->readable);
		free(e);
		return NULL;
	}
	d->n++;
	return e->readable;
}

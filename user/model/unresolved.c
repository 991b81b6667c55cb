/* unresolved.c - which samples have frames without a symbol, per module
 * (see profile.h: st_profile__count_unresolved()).
 *
 * A sample is a node's BASE; its frames are the node's path from the root.
 * The trees are walked without recursion (first_child / next_sibling /
 * parent), keeping, for the current path, how many unresolved frames each
 * module has on it and the stack of the distinct modules in order of their
 * first frame: a module leaves that stack when its first frame on the path
 * is left, which is always the newest entry (LIFO). Each sample then adds
 * its BASE once per distinct module on its path.
 */
#include "user/model/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/u64map.h"

static const char UNKNOWN[] = "[unknown]";

struct mod {
	const char *name;
	__u64 on_path;		/* unresolved frames of this module on the current path */
	__u64 samples;
};

struct ctx {
	struct st_u64map *index;	/* name pointer -> mod index + 1 */
	struct mod *mods;
	size_t nmods, mods_cap;
	size_t *path;			/* distinct modules on the path (mod indexes) */
	size_t npath, path_cap;
	__u64 total;
};

/* No function name, or only the one its FDE gives ("[module+0xOFF]",
 * binsym/entry.c): a symbol table or debug file would name it. */
static bool unresolved(const struct st_frame *f)
{
	return (f->kind == ST_FRAME_CALLSITE || f->kind == ST_FRAME_LEAF) &&
	       (!f->function || f->function[0] == '[');
}

static const char *module_of(const struct st_frame *f)
{
	return f->module ? f->module : UNKNOWN;
}

/* Frame f enters the path (enter) or leaves it. */
static int step(struct ctx *x, const struct st_frame *f, bool enter)
{
	const char *name = module_of(f);
	size_t i = (size_t)(uintptr_t)st_u64map__get(x->index, (__u64)(uintptr_t)name);

	if (!i) {	/* a module seen first: only when entering */
		if (ST_GROW(x->mods, x->mods_cap, x->nmods, 16) ||
		    st_u64map__put(x->index, (__u64)(uintptr_t)name,
				   (void *)(uintptr_t)(x->nmods + 1)))
			return -ENOMEM;
		x->mods[x->nmods] = (struct mod){ .name = name };
		i = ++x->nmods;
	}
	i--;
	if (enter) {
		if (x->mods[i].on_path++ == 0) {
			if (ST_GROW(x->path, x->path_cap, x->npath, 16))
				return -ENOMEM;
			x->path[x->npath++] = i;
		}
	} else if (--x->mods[i].on_path == 0) {
		x->npath--;	/* LIFO: path[npath - 1] == i */
	}
	return 0;
}

static void sample(struct ctx *x, __u64 base)
{
	if (!base || !x->npath)
		return;
	x->total += base;
	for (size_t k = 0; k < x->npath; k++)
		x->mods[x->path[k]].samples += base;
}

static int walk(struct ctx *x, const struct st_node *root)
{
	const struct st_node *n = root;
	int err;

	sample(x, root->base);
	n = root->first_child;
	while (n) {
		if (unresolved(&n->f) && (err = step(x, &n->f, true)))
			return err;
		sample(x, n->base);
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		/* leave n, and its parents whose children are done */
		for (;;) {
			if (unresolved(&n->f) && (err = step(x, &n->f, false)))
				return err;
			if (n->next_sibling) {
				n = n->next_sibling;
				break;
			}
			n = n->parent;
			if (!n || n == root) {
				n = NULL;
				break;
			}
		}
	}
	return 0;
}

static int cmp_mod(const void *pa, const void *pb)
{
	const struct mod *a = pa, *b = pb;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return strcmp(a->name, b->name);
}

int st_profile__count_unresolved(struct st_profile *p)
{
	struct ctx x = { .index = st_u64map__new() };
	int err = 0;

	if (!x.index)
		return -ENOMEM;
	for (size_t i = 0; i < p->nthreads && !err; i++)
		err = walk(&x, st_tree__root(p->threads[i]->tree));
	if (err)
		goto cleanup;
	if (x.nmods)
		qsort(x.mods, x.nmods, sizeof(*x.mods), cmp_mod);
	p->unresolved = x.total;
	for (size_t i = 0; i < p->nunresolved_by; i++)
		free(p->unresolved_by[i].name);
	free(p->unresolved_by);
	p->unresolved_by = NULL;
	p->nunresolved_by = 0;
	for (size_t i = 0; i < x.nmods && !err; i++)
		if (x.mods[i].samples)
			err = st_profile__add_unresolved(p, x.mods[i].name, x.mods[i].samples);
cleanup:
	st_u64map__free(x.index);
	free(x.mods);
	free(x.path);
	return err;
}

static double pct(__u64 n, __u64 all)
{
	return all ? 100.0 * (double)n / (double)all : 0;
}

const char *st_profile__unresolved_line(const struct st_profile *p, char *buf, size_t len)
{
	size_t used;

	if (!p->samples || !len || !strcmp(p->event, "folded"))
		return NULL;	/* folded stacks: names only, nothing known */
	snprintf(buf, len, "unresolved frames: %.1f%% of samples", pct(p->unresolved, p->samples));
	for (size_t i = 0; i < p->nunresolved_by && i < ST_UNRESOLVED_TOP; i++) {
		const char *name = p->unresolved_by[i].name, *slash = strrchr(name, '/');

		used = strlen(buf);
		snprintf(buf + used, len - used, "%s%s (%.1f%%)", i ? ", " : "; top modules: ",
			 slash && slash[1] ? slash + 1 : name,
			 pct(p->unresolved_by[i].value, p->samples));
	}
	return buf;
}

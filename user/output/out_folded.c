/* out_folded.c - stacks.folded writer, see out_folded.h. */
#include "user/output/out_folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "user/model/profile.h"
#include "common/textesc.h"
#include "common/tree.h"

struct fold_ctx {
	FILE *out;
	char *buf;	/* the current path, "comm;frame;..." */
	size_t len, cap;
	size_t *ends;	/* ends[d]: length of buf up to the node at depth d */
	size_t nends;
	bool comm;	/* the root is the comm frame (else the path starts empty) */
	const char *root_name;
	int err;
};

static int reserve(struct fold_ctx *c, size_t extra, unsigned depth)
{
	if (c->len + extra + 1 > c->cap) {
		size_t ncap = (c->len + extra + 1) * 2;
		char *nb = realloc(c->buf, ncap);

		if (!nb)
			return -ENOMEM;
		c->buf = nb;
		c->cap = ncap;
	}
	if (depth >= c->nends) {
		size_t n = (depth + 1) * 2;
		size_t *ne = realloc(c->ends, n * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		c->ends = ne;
		c->nends = n;
	}
	return 0;
}

/* Append ";name" (no ';' first when the path is empty), escaped. */
static int append(struct fold_ctx *c, const char *name, unsigned depth)
{
	size_t n = strlen(name);

	if (reserve(c, n + 1, depth))
		return -ENOMEM;
	if (c->len)
		c->buf[c->len++] = ';';
	for (size_t i = 0; i < n;) {
		size_t k = st_textesc__control(name + i, n - i);	/* C0, DEL, C1 */

		c->buf[c->len++] = k ? '?' : name[i] == ';' ? ':' : name[i];
		i += k ? k : 1;
	}
	c->buf[c->len] = '\0';
	c->ends[depth] = c->len;
	return 0;
}

static int visit(const struct st_node *n, void *ctx)
{
	struct fold_ctx *c = ctx;
	char name[512];

	if (n->depth == 0) {
		c->len = 0;
		if (reserve(c, 0, 0))
			goto nomem;
		c->ends[0] = 0;
		if (c->comm && append(c, c->root_name, 0))
			goto nomem;
	} else {
		c->len = c->ends[n->depth - 1];
		if (append(c, st_frame__name(&n->f, name, sizeof(name)), n->depth))
			goto nomem;
	}
	if (n->base && c->len && fprintf(c->out, "%s %" PRIu64 "\n", c->buf, (uint64_t)n->base) < 0) {
		c->err = -EIO;
		return 1;
	}
	return 0;
nomem:
	c->err = -ENOMEM;
	return 1;
}

static const char *comm_of(const struct st_thread *t)
{
	return t->comm && t->comm[0] ? t->comm : "[no comm]";
}

/* Threads i.. with the comm of thread i merged into one tree (strings
 * re-interned in the new profile). NULL on ENOMEM. */
static struct st_profile *merge_comm(const struct st_profile *p, size_t i)
{
	struct st_profile *m = st_profile__new(p->event);
	struct st_thread *d = m ? st_profile__add_thread(m, 0, 0, comm_of(p->threads[i])) : NULL;

	if (!d)
		goto fail;
	for (size_t j = i; j < p->nthreads; j++)
		if (!strcmp(comm_of(p->threads[j]), comm_of(p->threads[i])) &&
		    st_profile__merge_tree(m, d->tree, st_tree__root(d->tree),
					   st_tree__root(p->threads[j]->tree)))
			goto fail;
	st_profile__finalize(m);
	return m;
fail:
	st_profile__free(m);
	return NULL;
}

/* Every thread's stacks; threads sharing a comm are merged first (only
 * those, so that a profile of distinct threads is not copied). */
int st_folded__write(const struct st_profile *p, FILE *out, bool offsets)
{
	struct fold_ctx c = { .out = out, .comm = strcmp(p->event, "folded") != 0 };
	int err = 0;

	for (size_t i = 0; i < p->nthreads && !c.err; i++) {
		const char *comm = comm_of(p->threads[i]);
		struct st_profile *m = NULL;
		const struct st_tree *tree;
		struct st_tree *fn = NULL;
		bool seen = false, dup = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(comm_of(p->threads[j]), comm);
		for (size_t j = i + 1; j < p->nthreads && !seen && !dup; j++)
			dup = !strcmp(comm_of(p->threads[j]), comm);
		if (seen)
			continue;	/* merged with the first thread of its name */
		if (dup && !(m = merge_comm(p, i))) {
			err = -ENOMEM;
			break;
		}
		c.root_name = comm;
		tree = m ? m->threads[0]->tree : p->threads[i]->tree;
		if (!offsets && !(fn = st_tree__by_function(tree, NULL, NULL))) {
			st_profile__free(m);
			err = -ENOMEM;
			break;
		}
		st_tree__walk(fn ? fn : tree, visit, &c);
		st_tree__free(fn);
		st_profile__free(m);
	}
	if (!err)
		err = c.err;
	if (!err && ferror(out))
		err = -EIO;
	free(c.buf);
	free(c.ends);
	return err;
}

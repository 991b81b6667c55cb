/* tree.c - call-stack tree: nodes in an arena, children found through one
 * hash index keyed by (parent, frame). */
#include "common/tree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/calls.h"
#include "common/hash.h"
#include "common/u64map.h"

/* Node chunks double from 16 to 1024 nodes: a system-wide profile has
 * thousands of threads with a few nodes each. */
#define CHUNK_FIRST 16
#define CHUNK_MAX 1024

struct chunk {
	struct chunk *next;
	size_t used, cap;
	struct st_node nodes[];
};

struct st_tree {
	struct st_node root;
	struct chunk *chunks;
	size_t count;		/* nodes, root included */
	struct st_u64map *index;	/* key_hash() -> node */
	struct st_node **prev;	/* previous sample's path (root excluded) */
	size_t prevlen, prevcap;
};

static uint64_t key_hash(const struct st_node *parent, const struct st_frame *f)
{
	uint64_t h = (uintptr_t)parent;

	h = st_hash_mix(h, f->kind);
	h = st_hash_mix(h, f->addr);
	h = st_hash_mix(h, (uintptr_t)f->function);
	h = st_hash_mix(h, (uintptr_t)f->module);
	h = st_hash_mix(h, f->offset);
	h = st_hash_mix(h, f->runtime);
	h = st_hash_mix(h, f->data_class);
	return h;
}

static bool frame_eq(const struct st_frame *a, const struct st_frame *b)
{
	return a->kind == b->kind && a->addr == b->addr && a->function == b->function &&
	       a->module == b->module && a->offset == b->offset && a->runtime == b->runtime &&
	       a->data_class == b->data_class;
}

struct st_tree *st_tree__new(void)
{
	struct st_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->root.f.kind = ST_FRAME_ROOT;
	t->count = 1;
	t->index = st_u64map__new();
	if (!t->index) {
		free(t);
		return NULL;
	}
	return t;
}

void st_tree__free(struct st_tree *t)
{
	struct chunk *c, *next;

	if (!t)
		return;
	for (c = t->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	st_u64map__free(t->index);
	free(t->prev);
	free(t);
}

struct st_node *st_tree__root(const struct st_tree *t)
{
	return (struct st_node *)&t->root;
}

size_t st_tree__node_count(const struct st_tree *t)
{
	return t->count;
}

size_t st_tree__memory(const struct st_tree *t)
{
	size_t chunks = 0;

	for (struct chunk *c = t->chunks; c; c = c->next)
		chunks += sizeof(*c) + c->cap * sizeof(c->nodes[0]);
	return sizeof(*t) + chunks + st_u64map__memory(t->index) +
	       t->prevcap * sizeof(*t->prev);
}

/* A child's key in the index: its parent and its frame. */
struct child_key {
	const struct st_node *parent;
	const struct st_frame *f;
};

static bool is_child(const void *value, const void *key)
{
	const struct st_node *n = value;
	const struct child_key *k = key;

	return n->parent == k->parent && frame_eq(&n->f, k->f);
}

static struct st_node *node_alloc(struct st_tree *t)
{
	if (!t->chunks || t->chunks->used == t->chunks->cap) {
		size_t cap = t->chunks ? t->chunks->cap * 2 : CHUNK_FIRST;
		struct chunk *c;

		if (cap > CHUNK_MAX)
			cap = CHUNK_MAX;
		c = malloc(sizeof(*c) + cap * sizeof(c->nodes[0]));
		if (!c)
			return NULL;
		c->next = t->chunks;
		c->used = 0;
		c->cap = cap;
		t->chunks = c;
	}
	return &t->chunks->nodes[t->chunks->used++];
}

/* Append n to parent's children, so that unsorted children keep
 * first-seen order. */
static void append_child(struct st_node *parent, struct st_node *n)
{
	if (!parent->first_child)
		parent->first_child = n;
	else
		parent->last_child->next_sibling = n;
	parent->last_child = n;
	parent->nchildren++;
}

struct st_node *st_tree__child(struct st_tree *t, struct st_node *parent,
			       const struct st_frame *f, bool create)
{
	struct child_key k = { parent, f };
	__u64 h = key_hash(parent, f);
	struct st_node *n = st_u64map__find(t->index, h, is_child, &k);

	if (n || !create)
		return n;
	n = node_alloc(t);
	if (!n) {
		errno = ENOMEM;
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->f = *f;
	n->parent = parent;
	n->depth = parent->depth + 1;
	if (st_u64map__add(t->index, h, n)) {	/* n stays unused in its chunk */
		errno = ENOMEM;
		return NULL;
	}
	append_child(parent, n);
	t->count++;
	return n;
}

static int prev_reserve(struct st_tree *t, size_t n)
{
	struct st_node **np;
	size_t ncap;

	if (n <= t->prevcap)
		return 0;
	ncap = t->prevcap ? t->prevcap : 64;
	while (ncap < n)
		ncap *= 2;
	np = realloc(t->prev, ncap * sizeof(*np));
	if (!np)
		return -ENOMEM;
	t->prev = np;
	t->prevcap = ncap;
	return 0;
}

struct st_node *st_tree__add_sample(struct st_tree *t, const struct st_frame *path, size_t n,
				    __u64 count, enum st_calls_rule rule)
{
	struct st_node *node = &t->root;
	size_t k = 0;

	if (n > ST_TREE_MAX_DEPTH) {
		errno = E2BIG;
		return NULL;
	}
	if (prev_reserve(t, n)) {
		errno = ENOMEM;
		return NULL;
	}
	/* the shared prefix with the previous path costs no lookup */
	while (k < n && k < t->prevlen && frame_eq(&t->prev[k]->f, &path[k])) {
		node = t->prev[k];
		k++;
	}
	for (size_t i = k; i < n; i++) {
		struct st_node *child = st_tree__child(t, node, &path[i], true);
		bool new_call;

		if (!child) {
			t->prevlen = 0;
			return NULL;
		}
		if (rule == ST_CALLS_FUNCTION)
			new_call = true;
		else
			new_call = st_calls_is_new((__u32)i, (__u32)k, (__u32)t->prevlen);
		if (new_call)
			child->calls++;
		t->prev[i] = child;
		node = child;
	}
	t->prevlen = n;
	node->base += count;
	return node;
}

void st_tree__reset_calls(struct st_tree *t)
{
	t->prevlen = 0;
}

int st_tree__merge_with(struct st_tree *t, struct st_node *dst_parent, const struct st_node *src,
			struct st_node *(*child)(struct st_tree *t, struct st_node *d,
						 const struct st_node *s, void *ctx),
			void *ctx)
{
	const struct st_node *s = src;
	struct st_node *d = dst_parent;

	for (;;) {
		d->base += s->base;
		d->calls += s->calls;
		if (s->first_child) {
			s = s->first_child;
		} else {
			while (s != src && !s->next_sibling) {
				s = s->parent;
				d = d->parent;
			}
			if (s == src)
				return 0;
			s = s->next_sibling;
			d = d->parent;
		}
		d = child(t, d, s, ctx);
		if (!d)
			return -ENOMEM;
	}
}

static struct st_node *same_child(struct st_tree *t, struct st_node *d, const struct st_node *s,
				  void *ctx)
{
	(void)ctx;
	return st_tree__child(t, d, &s->f, true);
}

int st_tree__merge(struct st_tree *t, struct st_node *dst_parent, const struct st_node *src)
{
	return st_tree__merge_with(t, dst_parent, src, same_child, NULL);
}

/* Unlink n from its parent's children (n stays in the index). */
static void unlink_child(struct st_node *n)
{
	struct st_node *old = n->parent, *prev = NULL;

	for (struct st_node *c = old->first_child; c != n; c = c->next_sibling)
		prev = c;
	if (prev)
		prev->next_sibling = n->next_sibling;
	else
		old->first_child = n->next_sibling;
	if (old->last_child == n)
		old->last_child = prev;
	old->nchildren--;
	n->next_sibling = NULL;
}

int st_tree__adopt(struct st_tree *t, struct st_node *new_parent, struct st_node *n)
{
	struct child_key old_key = { n->parent, &n->f };
	struct st_node *have, *x;
	unsigned int delta;

	/* n is a node of t: its key finds it (one lookup; unlink_child()
	 * walks the siblings once) */
	if (!n->parent || n == new_parent || st_tree__child(t, n->parent, &n->f, false) != n)
		return -EINVAL;
	for (x = new_parent; x; x = x->parent)
		if (x == n)
			return -EINVAL;	/* under itself */
	t->prevlen = 0;
	have = st_tree__child(t, new_parent, &n->f, false);
	if (have) {
		int err = st_tree__merge(t, have, n);

		if (err)
			return err;	/* (have holds part of n's counts: ENOMEM only) */
		st_u64map__remove(t->index, key_hash(n->parent, &n->f), is_child, &old_key);
		unlink_child(n);
		n->parent = NULL;
		return 0;
	}
	/* the new key first: on ENOMEM nothing has changed */
	{
		struct st_node *old = n->parent;

		n->parent = new_parent;
		if (st_u64map__add(t->index, key_hash(new_parent, &n->f), n)) {
			n->parent = old;
			return -ENOMEM;
		}
		n->parent = old;
	}
	st_u64map__remove(t->index, key_hash(n->parent, &n->f), is_child, &old_key);
	unlink_child(n);
	n->parent = new_parent;
	append_child(new_parent, n);
	/* depths: pre-order over n's subtree */
	delta = new_parent->depth + 1 - n->depth;
	for (x = n; x; x = st_node__next_in(n, x))
		x->depth += delta;
	return 0;
}

struct st_node *st_node__next_in(const struct st_node *top, const struct st_node *n)
{
	if (n->first_child)
		return n->first_child;
	while (n != top && !n->next_sibling)
		n = n->parent;
	return n == top ? NULL : n->next_sibling;
}

bool st_frame__is_truncated(const struct st_frame *f)
{
	return f->kind == ST_FRAME_SPECIAL && f->function &&
	       !strcmp(f->function, ST_TRUNCATED_NAME);
}

/* The first node in post-order of the subtree at n, every node on the way
 * down starting its CUM at its BASE. */
static struct st_node *cum_descend(struct st_node *n)
{
	n->cum = n->base;
	while (n->first_child) {
		n = n->first_child;
		n->cum = n->base;
	}
	return n;
}

/* CUM of every node, in post-order through the parent links: no
 * recursion, whatever the tree's depth. */
static void compute_cum(struct st_node *root)
{
	struct st_node *n = cum_descend(root);

	while (n != root) {
		n->parent->cum += n->cum;	/* n's subtree is done */
		n = n->next_sibling ? cum_descend(n->next_sibling) : n->parent;
	}
}

static int default_cmp(const struct st_node *a, const struct st_node *b)
{
	int r;

	if (a->cum != b->cum)
		return a->cum > b->cum ? -1 : 1;
	if (a->f.function != b->f.function) {
		if (!a->f.function)
			return 1;
		if (!b->f.function)
			return -1;
		r = strcmp(a->f.function, b->f.function);
		if (r)
			return r;
	}
	if (a->f.offset != b->f.offset)
		return a->f.offset < b->f.offset ? -1 : 1;
	if (a->f.addr != b->f.addr)
		return a->f.addr < b->f.addr ? -1 : 1;
	return (int)a->f.kind - (int)b->f.kind;
}

struct sort_ctx {
	int (*cmp)(const struct st_node *, const struct st_node *);
	struct st_node **buf;
	size_t cap;
};

static int qsort_tramp(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *ctx = arg;

	return ctx->cmp(*(struct st_node *const *)a, *(struct st_node *const *)b);
}

/* Sort n's children (the list only, not below them). */
static int sort_list(struct st_node *n, struct sort_ctx *ctx)
{
	size_t i = 0;

	if (n->nchildren > 1) {
		if (n->nchildren > ctx->cap) {
			struct st_node **nb = realloc(ctx->buf, n->nchildren * sizeof(*nb));

			if (!nb)
				return -ENOMEM;
			ctx->buf = nb;
			ctx->cap = n->nchildren;
		}
		for (struct st_node *c = n->first_child; c; c = c->next_sibling)
			ctx->buf[i++] = c;
		qsort_r(ctx->buf, i, sizeof(*ctx->buf), qsort_tramp, ctx);
		n->first_child = ctx->buf[0];
		for (size_t j = 0; j + 1 < i; j++)
			ctx->buf[j]->next_sibling = ctx->buf[j + 1];
		ctx->buf[i - 1]->next_sibling = NULL;
		n->last_child = ctx->buf[i - 1];
	}
	return 0;
}

/* Every list of children, in pre-order: a node's list is sorted before
 * the walk goes down into it, so the walk follows the sorted order. No
 * recursion, whatever the tree's depth. */
static int sort_children(struct st_node *root, struct sort_ctx *ctx)
{
	struct st_node *n = root;

	while (n) {
		if (sort_list(n, ctx))
			return -ENOMEM;
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		while (n != root && !n->next_sibling)
			n = n->parent;
		n = n == root ? NULL : n->next_sibling;
	}
	return 0;
}

void st_tree__sort(struct st_tree *t, int (*cmp)(const struct st_node *, const struct st_node *))
{
	struct sort_ctx ctx = { .cmp = cmp };

	/* on ENOMEM the order stays partly unsorted, which is still a valid tree */
	sort_children(&t->root, &ctx);
	free(ctx.buf);
}

void st_tree__finalize(struct st_tree *t)
{
	compute_cum(&t->root);
	st_tree__sort(t, default_cmp);
}

int st_tree__walk(const struct st_tree *t, int (*fn)(const struct st_node *n, void *ctx),
		  void *ctx)
{
	const struct st_node *n = &t->root;
	int r;

	while (n) {
		r = fn(n, ctx);
		if (r)
			return r;
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		while (n && !n->next_sibling)
			n = n == &t->root ? NULL : n->parent;
		if (n == &t->root)
			n = NULL;
		if (n)
			n = n->next_sibling;
	}
	return 0;
}

static const char *data_name(const struct st_frame *f, char *buf, size_t len)
{
	const char *mod = f->module ? strrchr(f->module, '/') : NULL;
	__s64 off = (__s64)f->offset;
	/* forced faults (--force-faults): "(m*)", "(s*)", "(h*)" */
	const char *star = (f->data_class & ST_DATA_FORCED) ? "*" : "";

	mod = mod ? mod + 1 : f->module;
	switch (f->data_class & ST_DATA_CLASS_MASK) {
	case ST_DATA_STACK:
		if (f->function)
			snprintf(buf, len, "(s%s) %s+0x%" PRIx64, star, f->function,
				 (uint64_t)f->offset);
		else
			snprintf(buf, len, "(s%s) frame%s0x%" PRIx64, star, off < 0 ? "-" : "+",
				 off < 0 ? -(uint64_t)off : (uint64_t)off);	/* INT64_MIN too */
		break;
	case ST_DATA_HEAP:
		snprintf(buf, len, "(h%s) %s+0x%" PRIx64, star, mod ? mod : "[anon]",
			 (uint64_t)f->offset);
		break;
	default:
		if (f->function)
			snprintf(buf, len, "(m%s) %s+0x%" PRIx64, star, f->function,
				 (uint64_t)f->offset);
		else
			snprintf(buf, len, "(m%s) %s+0x%" PRIx64, star, mod ? mod : "[unknown]",
				 (uint64_t)f->offset);
		break;
	}
	return buf;
}

/* The one table of runtime names: ours (profile.json, reports),
 * OpenTelemetry's profile.frame.type, and an interpreted runtime's pseudo
 * module. */
static const struct {
	const char *name, *otel, *module;
} runtimes[ST_RUNTIME_COUNT] = {
	[ST_RUNTIME_NATIVE] = { "native", "native", NULL },
	[ST_RUNTIME_KERNEL] = { "kernel", "kernel", NULL },
	[ST_RUNTIME_PYTHON] = { "python", "cpython", ST_PYTHON_MODULE },
	[ST_RUNTIME_JAVA] = { "java", "jvm", "[java]" },
};

const char *st_runtime__name(unsigned r)
{
	return r < ST_RUNTIME_COUNT ? runtimes[r].name : NULL;
}

const char *st_runtime__otel(unsigned r)
{
	return r < ST_RUNTIME_COUNT ? runtimes[r].otel : NULL;
}

const char *st_runtime__module(unsigned r)
{
	return r < ST_RUNTIME_COUNT ? runtimes[r].module : NULL;
}

int st_runtime__parse(const char *s, enum st_runtime *out)
{
	for (unsigned r = 0; r < ST_RUNTIME_COUNT; r++) {
		if (!strcmp(s, runtimes[r].name)) {
			*out = (enum st_runtime)r;
			return 0;
		}
	}
	return -EINVAL;
}

const char *st_frame__name(const struct st_frame *f, char *buf, size_t len)
{
	if (f->kind == ST_FRAME_DATA)
		return data_name(f, buf, len);
	if (f->function) {
		/* a Python call site's offset is its line, shown by the module */
		if (f->kind == ST_FRAME_CALLSITE && f->runtime != ST_RUNTIME_PYTHON)
			snprintf(buf, len, "%s+0x%" PRIx64, f->function, (uint64_t)f->offset);
		else
			snprintf(buf, len, "%s", f->function);
	} else if (f->kind == ST_FRAME_ROOT) {
		snprintf(buf, len, "[root]");
	} else if (f->module) {
		const char *base = strrchr(f->module, '/');

		snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : f->module,
			 (uint64_t)f->offset);
	} else if (f->addr) {
		snprintf(buf, len, "[unknown] 0x%" PRIx64, (uint64_t)f->addr);
	} else {
		snprintf(buf, len, "[unknown]");
	}
	return buf;
}

struct copy_ctx {
	struct st_tree *t;
	struct st_node **path;	/* the copy's node for each depth of the walk */
	size_t cap;
	bool by_function;	/* st_tree__by_function(), else st_tree__without_inline() */
	void (*seen)(const struct st_node *src, struct st_node *dst, void *ctx);
	void *seen_ctx;
};

/* The function-level key of a code frame: call sites, leaf, inline frames
 * and functions of one function (and module) become one ST_FRAME_FUNCTION;
 * a frame without a function keeps its address (nothing to merge by). */
static struct st_frame function_key(const struct st_frame *f)
{
	struct st_frame k = *f;

	if (f->kind != ST_FRAME_CALLSITE && f->kind != ST_FRAME_LEAF &&
	    f->kind != ST_FRAME_INLINE && f->kind != ST_FRAME_FUNCTION)
		return k;
	k.kind = ST_FRAME_FUNCTION;
	k.file = NULL;		/* a function's call sites have several lines */
	k.line = 0;
	if (f->function) {
		k.addr = 0;
		k.offset = 0;
	}
	return k;
}

static int copy_visit(const struct st_node *n, void *ctx)
{
	struct copy_ctx *c = ctx;
	struct st_node *d;

	if (n->depth >= c->cap) {
		size_t ncap = (n->depth + 1) * 2;
		struct st_node **np = realloc(c->path, ncap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		c->path = np;
		c->cap = ncap;
	}
	if (n->depth == 0) {
		d = st_tree__root(c->t);
	} else if (!c->by_function && n->f.kind == ST_FRAME_INLINE) {
		d = c->path[n->depth - 1];
		d->base += n->base;
		c->path[n->depth] = d;
		return 0;
	} else {
		struct st_frame k = c->by_function ? function_key(&n->f) : n->f;

		d = st_tree__child(c->t, c->path[n->depth - 1], &k, true);
		if (!d)
			return -ENOMEM;
	}
	d->base += n->base;
	d->calls += n->calls;
	c->path[n->depth] = d;
	if (c->seen)
		c->seen(n, d, c->seen_ctx);
	return 0;
}

static struct st_tree *copy_tree(const struct st_tree *t, struct copy_ctx *c)
{
	c->t = st_tree__new();
	if (!c->t)
		return NULL;
	if (st_tree__walk(t, copy_visit, c)) {
		st_tree__free(c->t);
		c->t = NULL;
	} else {
		st_tree__finalize(c->t);
	}
	free(c->path);
	return c->t;
}

struct st_tree *st_tree__without_inline(const struct st_tree *t)
{
	struct copy_ctx c = { 0 };

	return copy_tree(t, &c);
}

struct st_tree *st_tree__by_function(const struct st_tree *t,
				     void (*seen)(const struct st_node *src, struct st_node *dst,
						  void *ctx),
				     void *ctx)
{
	struct copy_ctx c = { .by_function = true, .seen = seen, .seen_ctx = ctx };

	return copy_tree(t, &c);
}

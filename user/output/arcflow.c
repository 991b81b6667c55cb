/* arcflow.c - per-function PARENT / SELF / CHILD report (seed Figure 10).
 *
 * One DFS over every thread's tree. A node's function is its frame's
 * function name (call sites merge into their function), or the frame's
 * printed name when it has none; each thread root is a pseudo-function
 * "[pid P tid T COMM]". A per-function count of instances on the current
 * path tells whether a node is a recursive instance (rPARENT, rCHILD).
 * Cost: O(nodes) hash look-ups, plus sorting the entries and rows.
 */
#include "user/output/arcflow.h"
#include "common/grow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/model/profile.h"
#include "user/output/report.h"
#include "common/strtab.h"
#include "common/textesc.h"
#include "common/hash.h"
#include "common/tree.h"
#include "common/u64map.h"

enum { DIR_PARENT = 0, DIR_CHILD = 1 };

struct af_row {
	size_t self, other;	/* entry ids: the entry the row belongs to, the row's function */
	__u64 calls, base, cum;
	unsigned char dir;
	bool recursive;
};

struct af_entry {
	const char *name;	/* interned in a->strs */
	__u64 calls, base, cum, cum_all;
	size_t onpath;		/* instances on the current DFS path */
	size_t rank;		/* index in the report */
	size_t mindepth;	/* depth of the outermost node (ties in the order) */
	size_t first[2], count[2];	/* rows of each dir in a->rowlist */
	bool root;
};

struct st_arcflow {
	struct st_strtab *strs;
	struct af_entry *ents;
	size_t nents, entcap;
	struct af_row *rows;
	size_t nrows, rowcap;
	struct st_u64map *names;	/* function name pointers (profile's or ours) -> entry + 1 */
	struct st_u64map *rowidx;	/* hash of a row_key -> row + 1 */
	size_t *order;		/* entry ids by rank */
	size_t *rowlist;	/* row ids grouped by entry and dir, sorted */
	__u64 total;		/* samples in all threads */
};

/* DFS path: entry and recursion flag of every node above the current one. */
struct path_slot {
	size_t ent;
	bool recursive;
};

static ssize_t entry_new(struct st_arcflow *a, const char *name, bool root)
{
	if (ST_GROW(a->ents, a->entcap, a->nents, 64))
		return -ENOMEM;
	memset(&a->ents[a->nents], 0, sizeof(a->ents[0]));
	a->ents[a->nents].name = name;
	a->ents[a->nents].root = root;
	a->ents[a->nents].mindepth = SIZE_MAX;
	return (ssize_t)a->nents++;
}

/* Entry of a function named by key (a pointer interned in the profile's or
 * our table, equal strings of one table share it) with text name. */
static ssize_t entry_get(struct st_arcflow *a, const char *key, const char *name, bool root)
{
	size_t id1 = (uintptr_t)st_u64map__get(a->names, (uintptr_t)key);
	const char *canon;
	ssize_t id;

	if (id1)
		return (ssize_t)id1 - 1;
	/* first time this pointer is seen: find the entry by content */
	canon = st_strtab__intern(a->strs, name);
	if (!canon)
		return -ENOMEM;
	id1 = (uintptr_t)st_u64map__get(a->names, (uintptr_t)canon);
	if (id1) {
		id = (ssize_t)id1 - 1;
	} else {
		id = entry_new(a, canon, root);
		if (id < 0)
			return id;
		if (st_u64map__put(a->names, (uintptr_t)canon, (void *)(uintptr_t)(id + 1)))
			return -ENOMEM;
	}
	if (key != canon &&
	    st_u64map__put(a->names, (uintptr_t)key, (void *)(uintptr_t)(id + 1)))
		return -ENOMEM;
	return id;
}

static ssize_t node_entry(struct st_arcflow *a, const struct st_node *n)
{
	const char *canon;
	char buf[512];

	if (n->f.function)
		return entry_get(a, n->f.function, n->f.function, false);
	/* no function: the frame's printed name is the identity */
	canon = st_strtab__intern(a->strs, st_frame__name(&n->f, buf, sizeof(buf)));
	if (!canon)
		return -ENOMEM;
	return entry_get(a, canon, canon, false);
}

/* A row as a key: its entries, direction and recursion. */
struct row_key {
	const struct st_arcflow *a;
	size_t self, other;
	int dir;
	bool rec;
};

static bool row_eq(const void *value, const void *key)
{
	const struct row_key *k = key;
	const struct af_row *r = &k->a->rows[(uintptr_t)value - 1];

	return r->self == k->self && r->other == k->other && r->dir == k->dir &&
	       r->recursive == k->rec;
}

/* A node's BASE for arcflow: page-fault data leaves below it count as its
 * own (the function touched the data). */
static __u64 node_base(const struct st_node *n)
{
	__u64 base = n->base;

	for (const struct st_node *c = n->first_child; c; c = c->next_sibling)
		if (c->f.kind == ST_FRAME_DATA)
			base += c->cum;
	return base;
}

static int row_add(struct st_arcflow *a, size_t self, size_t other, int dir, bool rec,
		   const struct st_node *n, __u64 base)
{
	struct row_key k = { a, self, other, dir, rec };
	__u64 h = st_hash_mix(st_hash_mix(st_hash_mix(st_hash_mix(0, self), other), (__u64)dir),
			      rec);
	size_t row1 = (uintptr_t)st_u64map__find(a->rowidx, h, row_eq, &k);
	struct af_row *r;

	if (row1) {
		r = &a->rows[row1 - 1];
		r->calls += n->calls;
		r->base += base;
		r->cum += n->cum;
		return 0;
	}
	if (ST_GROW(a->rows, a->rowcap, a->nrows, 256))
		return -ENOMEM;
	r = &a->rows[a->nrows];
	memset(r, 0, sizeof(*r));
	r->self = self;
	r->other = other;
	r->dir = (unsigned char)dir;
	r->recursive = rec;
	if (st_u64map__add(a->rowidx, h, (void *)(uintptr_t)++a->nrows))
		return -ENOMEM;
	r->calls += n->calls;
	r->base += base;
	r->cum += n->cum;
	return 0;
}

/* Account node n (function id f) whose parent node is described by up. */
static int visit(struct st_arcflow *a, const struct st_node *n, size_t f,
		 const struct path_slot *up, bool rec)
{
	struct af_entry *e = &a->ents[f];
	__u64 base = node_base(n);
	int err;

	e->calls += n->calls;
	e->base += base;
	e->cum_all += n->cum;
	if (!rec)
		e->cum += n->cum;
	err = row_add(a, f, up->ent, DIR_PARENT, rec, n, base);
	if (!err)
		err = row_add(a, up->ent, f, DIR_CHILD, up->recursive, n, base);
	return err;
}

static int walk_thread(struct st_arcflow *a, const struct st_thread *t,
		       struct path_slot **path, size_t *pathcap)
{
	const struct st_node *r = st_tree__root(t->tree), *n;
	const char *key;
	char name[512];
	size_t depth = 0;
	ssize_t id;

	snprintf(name, sizeof(name), "[pid %u tid %u %s]", t->pid, t->tid, t->comm ? t->comm : "");
	key = st_strtab__intern(a->strs, name);
	if (!key)
		return -ENOMEM;
	id = entry_get(a, key, key, true);
	if (id < 0)
		return (int)id;
	a->ents[id].calls += 1;
	a->ents[id].mindepth = 0;
	a->ents[id].base += node_base(r);
	a->ents[id].cum += r->cum;
	a->ents[id].cum_all += r->cum;
	a->total += r->cum;
	(*path)[0] = (struct path_slot){ .ent = (size_t)id };
	for (n = r->first_child; n;) {
		bool rec;
		int err;

		depth++;
		if (depth >= *pathcap) {
			struct path_slot *np = realloc(*path, *pathcap * 2 * sizeof(*np));

			if (!np)
				return -ENOMEM;
			*path = np;
			*pathcap *= 2;
		}
		if (n->f.kind == ST_FRAME_DATA) {
			/* counted in its function's BASE (node_base): no entry of
			 * its own; the parent's slot stands in while leaving it */
			(*path)[depth] = (*path)[depth - 1];
			a->ents[(*path)[depth].ent].onpath++;
			goto leave;
		}
		id = node_entry(a, n);
		if (id < 0)
			return (int)id;
		rec = a->ents[id].onpath > 0;
		if (depth < a->ents[id].mindepth)
			a->ents[id].mindepth = depth;
		err = visit(a, n, (size_t)id, &(*path)[depth - 1], rec);
		if (err)
			return err;
		(*path)[depth] = (struct path_slot){ .ent = (size_t)id, .recursive = rec };
		a->ents[id].onpath++;
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
leave:
		/* leave n and every ancestor without a next sibling */
		for (;;) {
			a->ents[(*path)[depth].ent].onpath--;
			depth--;
			if (n->next_sibling) {
				n = n->next_sibling;
				break;
			}
			n = n->parent;
			if (n == r) {
				n = NULL;
				break;
			}
		}
	}
	return 0;
}

/* Entries: CUM descending; on ties thread roots first, then outer functions. */
static int entry_cmp(const void *x, const void *y, void *arg)
{
	const struct st_arcflow *a = arg;
	const struct af_entry *p = &a->ents[*(const size_t *)x], *q = &a->ents[*(const size_t *)y];

	if (p->cum != q->cum)
		return p->cum > q->cum ? -1 : 1;
	if (p->root != q->root)
		return p->root ? -1 : 1;
	if (p->mindepth != q->mindepth)
		return p->mindepth < q->mindepth ? -1 : 1;
	if (p->cum_all != q->cum_all)
		return p->cum_all > q->cum_all ? -1 : 1;
	return strcmp(p->name, q->name);
}

/* Rows of an entry: CUM descending, then the row function's rank, then
 * the direct row before the recursive one. */
static int row_cmp(const void *x, const void *y, void *arg)
{
	const struct st_arcflow *a = arg;
	const struct af_row *p = &a->rows[*(const size_t *)x], *q = &a->rows[*(const size_t *)y];
	size_t rp = a->ents[p->other].rank, rq = a->ents[q->other].rank;

	if (p->cum != q->cum)
		return p->cum > q->cum ? -1 : 1;
	if (rp != rq)
		return rp < rq ? -1 : 1;
	if (p->recursive != q->recursive)
		return p->recursive ? 1 : -1;
	if (p->calls != q->calls)
		return p->calls > q->calls ? -1 : 1;
	return 0;
}

static int arrange(struct st_arcflow *a)
{
	size_t *fill = NULL;
	size_t pos = 0;
	int err = -ENOMEM;

	a->order = malloc((a->nents ? a->nents : 1) * sizeof(*a->order));
	a->rowlist = malloc((a->nrows ? a->nrows : 1) * sizeof(*a->rowlist));
	fill = calloc(a->nents ? a->nents * 2 : 1, sizeof(*fill));
	if (!a->order || !a->rowlist || !fill)
		goto cleanup;
	for (size_t i = 0; i < a->nents; i++)
		a->order[i] = i;
	qsort_r(a->order, a->nents, sizeof(*a->order), entry_cmp, a);
	for (size_t i = 0; i < a->nents; i++)
		a->ents[a->order[i]].rank = i;
	for (size_t i = 0; i < a->nrows; i++)
		a->ents[a->rows[i].self].count[a->rows[i].dir]++;
	for (size_t i = 0; i < a->nents; i++) {
		struct af_entry *e = &a->ents[a->order[i]];

		for (int d = 0; d < 2; d++) {
			e->first[d] = pos;
			pos += e->count[d];
		}
	}
	for (size_t i = 0; i < a->nrows; i++) {
		const struct af_row *r = &a->rows[i];
		struct af_entry *e = &a->ents[r->self];

		a->rowlist[e->first[r->dir] + fill[r->self * 2 + r->dir]++] = i;
	}
	for (size_t i = 0; i < a->nents; i++)
		for (int d = 0; d < 2; d++)
			qsort_r(a->rowlist + a->ents[i].first[d], a->ents[i].count[d],
				sizeof(*a->rowlist), row_cmp, a);
	err = 0;
cleanup:
	free(fill);
	return err;
}

struct st_arcflow *st_arcflow__build(const struct st_profile *p)
{
	struct st_arcflow *a = calloc(1, sizeof(*a));
	struct path_slot *path = NULL;
	size_t pathcap = 64;
	int err = -ENOMEM;

	if (!a)
		goto cleanup;
	a->strs = st_strtab__new();
	a->names = st_u64map__new();
	a->rowidx = st_u64map__new();
	path = malloc(pathcap * sizeof(*path));
	if (!a->strs || !a->names || !a->rowidx || !path)
		goto cleanup;
	for (size_t i = 0; i < p->nthreads; i++) {
		err = walk_thread(a, p->threads[i], &path, &pathcap);
		if (err)
			goto cleanup;
	}
	err = arrange(a);
cleanup:
	free(path);
	if (err) {
		st_arcflow__free(a);
		errno = -err;
		return NULL;
	}
	return a;
}

void st_arcflow__free(struct st_arcflow *a)
{
	if (!a)
		return;
	st_strtab__free(a->strs);
	free(a->ents);
	free(a->rows);
	st_u64map__free(a->names);
	st_u64map__free(a->rowidx);
	free(a->order);
	free(a->rowlist);
	free(a);
}

/* ---- arcflow.txt ---------------------------------------------------------- */

static double pct(const struct st_arcflow *a, __u64 v)
{
	return a->total ? 100.0 * (double)v / (double)a->total : 0.0;
}

/* BASE or CUM in a 10-wide column: the count, or ns as ms (offcpu, wall). */
static void put_val(FILE *out, bool ms, __u64 v)
{
	if (ms)
		fprintf(out, " %10.3f", (double)v / 1e6);
	else
		fprintf(out, " %10" PRIu64, (uint64_t)v);
}

static void print_row(const struct st_arcflow *a, FILE *out, const struct af_row *r, bool ms)
{
	const struct af_entry *o = &a->ents[r->other];
	const char *src = r->dir == DIR_PARENT ? (r->recursive ? "rPARENT" : "PARENT")
					      : (r->recursive ? "rCHILD" : "CHILD");

	/* names are data: escaped (common/textesc.h) */
	fprintf(out, "%-8s %10" PRIu64, src, (uint64_t)r->calls);
	put_val(out, ms, r->base);
	put_val(out, ms, r->cum);
	fprintf(out, " %7.2f  ", pct(a, r->cum));
	st_textesc__put(out, o->name);
	fprintf(out, " [%zu]\n", o->rank);
}

static void print_legend(const struct st_profile *p, FILE *out)
{
	const char *ev = p->event ? p->event : "?";
	char rate[96] = "";

	if (p->frequency_hz)
		snprintf(rate, sizeof(rate), " at %u Hz, one sample ~ %.3f ms", p->frequency_hz,
			 1000.0 / p->frequency_hz);
	if (p->unit == ST_UNIT_NS)	/* BASE and CUM in ms: the words below say samples */
		fprintf(out, "# unit: BASE and CUM are %s (%s); a \"sample\" below is one "
			"such period\n", st_profile__what(p), st_profile__how(p));
	fprintf(out,
		"# arcflow: callers (PARENT) and callees (CHILD) of every function F; call sites\n"
		"#   are merged into their function, each thread root is a pseudo-function.\n"
		"# BASE   samples (%s%s) in which F itself was running (the leaf)\n"
		"# CUM    samples (%s%s) in which F was on the stack, counted once per\n"
		"#        sample however deep it recursed; for a recursive F the line under\n"
		"#        SELF gives CUM_ALL, the sum over all of F's instances\n"
		"# CALLS  calls of F seen between consecutive samples (thread roots: 1)\n"
		"# %%CUM   CUM as a percentage of all samples (CUM_ALL and recursive rows count\n"
		"#        a sample once per instance, so they can exceed 100%%)\n"
		"# rPARENT rows are recursive instances of F (F was already on the stack under\n"
		"#        that caller); rCHILD rows are callees of those instances; [n] = index\n"
		"# Invariants (thread roots have no PARENT rows):\n"
		"#   1) SUM(PARENT CALLS) = SELF CALLS\n"
		"#   2) SUM(PARENT BASE) = SELF BASE\n"
		"#   3) SUM(PARENT CUM), rPARENT excluded = SELF CUM\n"
		"#   4) SUM(PARENT CUM), rPARENT included = CUM_ALL\n"
		"#   5) SUM(CHILD CUM), rCHILD included = CUM_ALL - SELF BASE\n",
		ev, rate, ev, rate);
}

int st_arcflow__write_text(const struct st_arcflow *a, const struct st_profile *p, FILE *out)
{
	st_report__header(p, out, "arcflow");
	print_legend(p, out);
	bool ms = p->unit == ST_UNIT_NS;

	if (ms)
		fprintf(out, "# total: %.3f %s, functions: %zu\n\n", (double)a->total / 1e6,
			st_profile__what(p), a->nents);
	else
		fprintf(out, "# total samples: %" PRIu64 ", functions: %zu\n\n",
			(uint64_t)a->total, a->nents);
	fprintf(out, "%-8s %10s %10s %10s %7s  %s\n", "SOURCE", "CALLS", ms ? "BASE ms" : "BASE",
		ms ? "CUM ms" : "CUM", "%CUM", "FUNCTION");
	for (size_t i = 0; i < a->nents; i++) {
		const struct af_entry *e = &a->ents[a->order[i]];

		fprintf(out, "------------------------------------------------------------\n");
		for (size_t j = 0; j < e->count[DIR_PARENT]; j++)
			print_row(a, out, &a->rows[a->rowlist[e->first[DIR_PARENT] + j]], ms);
		fprintf(out, "%-8s %10" PRIu64, "SELF", (uint64_t)e->calls);
		put_val(out, ms, e->base);
		put_val(out, ms, e->cum);
		fprintf(out, " %7.2f  [%zu] ", pct(a, e->cum), i);
		st_textesc__put(out, e->name);
		fputc('\n', out);
		if (e->cum_all != e->cum) {
			fprintf(out, "%-8s %10s %10s", "", "", "");
			put_val(out, ms, e->cum_all);
			fprintf(out, " %7.2f  (CUM_ALL)\n", pct(a, e->cum_all));
		}
		for (size_t j = 0; j < e->count[DIR_CHILD]; j++)
			print_row(a, out, &a->rows[a->rowlist[e->first[DIR_CHILD] + j]], ms);
	}
	fflush(out);
	return ferror(out) ? -EIO : 0;
}

/* ---- profile.json "arcflow" ---------------------------------------------- */

size_t st_arcflow__count(const struct st_arcflow *a)
{
	return a->nents;
}

const char *st_arcflow__name(const struct st_arcflow *a, size_t i)
{
	return i < a->nents ? a->ents[a->order[i]].name : NULL;
}

/* [entry, calls, base, cum, recursive]: entry the other function's rank,
 * its index in "arcflow" (every row's other function is an entry: rows are
 * made by visit() between entries of entry_get(), data leaves having none
 * and no rows) */
static void put_row(FILE *out, const struct st_arcflow *a, const struct af_row *r)
{
	fprintf(out, "[%zu,%" PRId64 ",%" PRId64 ",%" PRId64 ",%d]", a->ents[r->other].rank,
		(int64_t)r->calls, (int64_t)r->base, (int64_t)r->cum, r->recursive ? 1 : 0);
}

static void put_rows(FILE *out, const struct st_arcflow *a, const struct af_entry *e, int d)
{
	fputs(",[", out);
	for (size_t j = 0; j < e->count[d]; j++) {
		if (j)
			fputc(',', out);
		put_row(out, a, &a->rows[a->rowlist[e->first[d] + j]]);
	}
	fputc(']', out);
}

int st_arcflow__write_json(const struct st_arcflow *a, const int64_t *strid, FILE *out)
{
	fputc('[', out);
	for (size_t i = 0; i < a->nents; i++) {
		const struct af_entry *e = &a->ents[a->order[i]];

		fprintf(out, "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64,
			i ? "," : "", strid[i], (int64_t)e->calls, (int64_t)e->base,
			(int64_t)e->cum, (int64_t)e->cum_all);
		put_rows(out, a, e, DIR_PARENT);
		put_rows(out, a, e, DIR_CHILD);
		fputc(']', out);
	}
	return fputc(']', out) == EOF || ferror(out) ? -EIO : 0;
}

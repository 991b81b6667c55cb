/* json.c - profile.json writer (version 5), streamed (docs/reports.md,
 * "profile.json"): a string table and a frame table shared by the whole
 * file, then each thread's nodes as a flat list of rows (no nesting to the
 * tree's depth), then the arcflow as rows of numbers, its names in the
 * same string table. The reader is user/model/profile_json.c. */
#include "user/output/json.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include "common/grow.h"
#include "common/hash.h"
#include "common/tree.h"
#include "common/u64map.h"
#include "user/model/faultsum.h"
#include "user/model/jsonstr.h"
#include "user/model/profile.h"
#include "user/output/arcflow.h"

/* "key":"s" (and "key_raw" when s is not valid UTF-8), then a comma */
static void put_bytes(FILE *out, const char *key, const char *s)
{
	fprintf(out, "\"%s\":", key);
	st_json__put(out, s);
	if (s && !st_json__valid_utf8(s)) {
		fprintf(out, ",\"%s_raw\":", key);
		st_json__put_raw(out, s);
	}
	fputc(',', out);
}

/* ---- the tables: strings and frames, each written once ------------------ */

/* A frame as version 4 writes it: string fields as indexes into "strings"
 * (-1: null). Frames are told apart by all of it, so a frame's row is the
 * same bytes wherever it is used. */
struct frow {
	int64_t kind, runtime, function, module, file, system_name, cls;
	int64_t offset;
	uint64_t addr;
	uint32_t line;
	bool has_offset, forced;
};

struct tables {
	const char **strs;		/* by index */
	size_t nstrs, capstrs;
	struct st_u64map *stri;		/* string hash -> index + 1 */
	struct frow *frames;
	size_t nframes, capframes;
	struct st_u64map *framei;	/* frame hash -> index + 1 */
	uint32_t *node_frame;		/* every node's frame, in the order written */
	size_t nnodes, capnodes;
};

struct str_key {
	const struct tables *tb;
	const char *s;
};

static bool str_eq(const void *value, const void *key)
{
	const struct str_key *k = key;

	return strcmp(k->tb->strs[(uintptr_t)value - 1], k->s) == 0;
}

/* s's index in the string table, added when new; -1 for NULL, or -ENOMEM. */
static int64_t str_index(struct tables *tb, const char *s)
{
	struct str_key k = { tb, s };
	__u64 h;
	void *v;

	if (!s)
		return -1;
	h = st_hash_str(s);
	if ((v = st_u64map__find(tb->stri, h, str_eq, &k)))
		return (int64_t)((uintptr_t)v - 1);
	if (ST_GROW(tb->strs, tb->capstrs, tb->nstrs, 256) ||
	    st_u64map__add(tb->stri, h, (void *)(uintptr_t)(tb->nstrs + 1)))
		return -ENOMEM;
	tb->strs[tb->nstrs] = s;
	return (int64_t)tb->nstrs++;
}

struct frame_key {
	const struct tables *tb;
	const struct frow *f;
};

static bool frame_eq(const void *value, const void *key)
{
	const struct frame_key *k = key;
	const struct frow *a = &k->tb->frames[(uintptr_t)value - 1], *b = k->f;

	return a->kind == b->kind && a->runtime == b->runtime && a->function == b->function &&
	       a->module == b->module && a->file == b->file && a->system_name == b->system_name &&
	       a->cls == b->cls && a->offset == b->offset && a->addr == b->addr &&
	       a->line == b->line && a->has_offset == b->has_offset && a->forced == b->forced;
}

static __u64 frame_hash(const struct frow *f)
{
	__u64 h = ST_HASH_INIT;
	const int64_t v[] = { f->kind, f->runtime, f->function, f->module, f->file,
			      f->system_name, f->cls, f->offset, (int64_t)f->addr, f->line,
			      f->has_offset, f->forced };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		h = st_hash_mix(h, (__u64)v[i]);
	return h;
}

/* Node n's frame as a row (its strings added to the table). 0 or -ENOMEM. */
static int frame_row(struct tables *tb, const struct st_node *n, struct frow *r)
{
	const struct st_frame *f = &n->f;
	bool data = f->kind == ST_FRAME_DATA;

	*r = (struct frow){ .kind = str_index(tb, st_frame__json_kind(f)),
			    .runtime = str_index(tb, st_runtime__name(f->runtime)),
			    .function = str_index(tb, f->function),
			    .module = str_index(tb, f->module),
			    .file = str_index(tb, f->file),
			    .system_name = data ? -1 : str_index(tb, f->system_name),
			    .cls = data ? str_index(tb, st_frame__class_name(f->data_class)) : -1,
			    .addr = f->addr, .line = f->file ? f->line : 0,
			    .forced = data && (f->data_class & ST_DATA_FORCED) };
	/* a call site's offset, an unnamed frame's, a data leaf's (as version
	 * 3), and a leaf's that has one, but CPython's (whose null offset tells
	 * its leaf from its call sites): it is part of the frame's key, so two
	 * leaves of one method on two lines (Java's) stay two nodes */
	r->has_offset = data || f->kind == ST_FRAME_CALLSITE ||
			(!f->function && f->module && f->kind != ST_FRAME_ROOT) ||
			(f->kind == ST_FRAME_LEAF && f->offset && f->runtime != ST_RUNTIME_PYTHON);
	r->offset = r->has_offset ? (int64_t)f->offset : 0;
	if (r->kind == -ENOMEM || r->runtime == -ENOMEM || r->function == -ENOMEM ||
	    r->module == -ENOMEM || r->file == -ENOMEM || r->system_name == -ENOMEM ||
	    r->cls == -ENOMEM)
		return -ENOMEM;
	return 0;
}

/* Node n's frame: found or added; its index appended to node_frame. */
static int add_node(struct tables *tb, const struct st_node *n)
{
	struct frow r;
	struct frame_key k = { tb, &r };
	__u64 h;
	void *v;
	int err;

	if ((err = frame_row(tb, n, &r)))
		return err;
	if (ST_GROW(tb->node_frame, tb->capnodes, tb->nnodes, 4096))
		return -ENOMEM;
	h = frame_hash(&r);
	if (!(v = st_u64map__find(tb->framei, h, frame_eq, &k))) {
		if (tb->nframes >= UINT32_MAX - 1 ||
		    ST_GROW(tb->frames, tb->capframes, tb->nframes, 1024) ||
		    st_u64map__add(tb->framei, h, (void *)(uintptr_t)(tb->nframes + 1)))
			return -ENOMEM;
		tb->frames[tb->nframes++] = r;
		v = (void *)(uintptr_t)tb->nframes;
	}
	tb->node_frame[tb->nnodes++] = (uint32_t)((uintptr_t)v - 1);
	return 0;
}

/* The node after n in pre-order under root (the order written), or NULL
 * at the end: no recursion, whatever the depth. */
static const struct st_node *preorder_next(const struct st_node *root, const struct st_node *n)
{
	if (n->first_child)
		return n->first_child;
	while (n != root && !n->next_sibling)
		n = n->parent;
	return n == root ? NULL : n->next_sibling;
}

/* Every node of every thread, in the order written (pre-order, without
 * recursion), into the tables. */
static int build_tables(struct tables *tb, const struct st_profile *p)
{
	int err;

	if (!(tb->stri = st_u64map__new()) || !(tb->framei = st_u64map__new()))
		return -ENOMEM;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct st_node *root = st_tree__root(p->threads[i]->tree), *n = root;

		for (; n; n = preorder_next(root, n))
			if ((err = add_node(tb, n)))
				return err;
	}
	return 0;
}

static void tables_free(struct tables *tb)
{
	free(tb->strs);
	free(tb->frames);
	free(tb->node_frame);
	st_u64map__free(tb->stri);
	st_u64map__free(tb->framei);
}

/* ,"strings":[...]: a name as a string, or {"text":..,"raw":..} when its
 * bytes are not valid UTF-8 (text with U+FFFD, raw one code point a byte) */
static void put_strings(FILE *out, const struct tables *tb)
{
	fputs(",\"strings\":[", out);
	for (size_t i = 0; i < tb->nstrs; i++) {
		const char *s = tb->strs[i];

		if (i)
			fputc(',', out);
		if (st_json__valid_utf8(s)) {
			st_json__put(out, s);
			continue;
		}
		fputs("{\"text\":", out);
		st_json__put(out, s);
		fputs(",\"raw\":", out);
		st_json__put_raw(out, s);
		fputc('}', out);
	}
	fputc(']', out);
}

static void put_index(FILE *out, int64_t i)
{
	if (i < 0)
		fputs(",null", out);
	else
		fprintf(out, ",%" PRId64, i);
}

/* ,"frames":[[kind, runtime, function, module, offset, address, file, line,
 * system_name, class, forced],...]: the trailing nulls (and a false forced)
 * left out */
static void put_frames(FILE *out, const struct tables *tb)
{
	fputs(",\"frames\":[", out);
	for (size_t i = 0; i < tb->nframes; i++) {
		const struct frow *f = &tb->frames[i];
		int last = f->forced ? 10 : f->cls >= 0 ? 9 : f->system_name >= 0 ? 8 :
			   f->file >= 0 ? 7 : f->addr ? 5 : f->has_offset ? 4 : 3;

		fprintf(out, "%s[%" PRId64, i ? "," : "", f->kind);
		put_index(out, f->runtime);
		put_index(out, f->function);
		put_index(out, f->module);
		if (last >= 4) {
			if (f->has_offset)
				fprintf(out, ",%" PRId64, f->offset);
			else
				fputs(",null", out);
		}
		if (last >= 5) {
			if (f->addr)
				fprintf(out, ",\"0x%" PRIx64 "\"", (uint64_t)f->addr);
			else
				fputs(",null", out);
		}
		if (last >= 7) {
			put_index(out, f->file);
			if (f->file >= 0)
				fprintf(out, ",%u", (unsigned)f->line);
			else
				fputs(",null", out);
		}
		if (last >= 8)
			put_index(out, f->system_name);
		if (last >= 9)
			put_index(out, f->cls);
		if (last >= 10)
			fputs(",true", out);
		fputc(']', out);
	}
	fputc(']', out);
}

/* "nodes":[[parent, frame, base, cum, calls],...]: a node's id is its
 * index; pre-order, so a parent comes before its children (the root first,
 * its parent null). *next: the thread's first node in tb->node_frame. */
static int put_nodes(FILE *out, const struct st_node *root, const struct tables *tb,
		     size_t *next)
{
	const struct st_node *n = root;
	uint64_t *ids = NULL, id = 0;	/* the ids of the path, by depth */
	size_t cap = 0;

	fputs("\"nodes\":[", out);
	for (;;) {
		unsigned d = n->depth;

		if (ST_GROW(ids, cap, d, 64)) {
			free(ids);
			return -ENOMEM;
		}
		ids[d] = id;
		if (n == root)
			fputs("[null", out);
		else
			fprintf(out, ",[%" PRIu64, ids[d - 1]);
		fprintf(out, ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
			tb->node_frame[(*next)++], (uint64_t)n->base, (uint64_t)n->cum,
			(uint64_t)n->calls);
		id++;
		if (!(n = preorder_next(root, n)))
			break;
	}
	free(ids);
	fputc(']', out);
	return 0;
}

/* ,"key":{"id":{"value":N,"text":"sentence"},...}: stable keys */
static void put_notes(FILE *out, const char *key, const struct st_count *c, size_t n)
{
	char buf[ST_COUNT_ID_MAX];

	fprintf(out, "\"%s\":{", key);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		st_json__put(out, c[i].id ? c[i].id : st_count__id_of(c[i].name, buf, sizeof(buf)));
		fprintf(out, ":{\"value\":%" PRId64 ",\"text\":", (int64_t)c[i].value);
		st_json__put(out, c[i].name);
		fputc('}', out);
	}
	fputs("},", out);
}

/* "key":"2026-11-25T17:31:02.123456Z" (UTC, RFC 3339), or null when unknown */
static void put_time(FILE *out, const char *key, double unix_s)
{
	struct tm tm;
	time_t secs = (time_t)unix_s;
	long us = (long)((unix_s - (double)secs) * 1e6);

	if (!(unix_s > 0 && unix_s < 253402300800.0) || !gmtime_r(&secs, &tm)) {
		fprintf(out, "\"%s\":null,", key);
		return;
	}
	if (us < 0 || us > 999999)
		us = 0;
	fprintf(out, "\"%s\":\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\",", key, tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us);
}

static void put_counts(FILE *out, const char *key, const struct st_count *c, size_t n)
{
	fprintf(out, "\"%s\":{", key);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		st_json__put(out, c[i].name);
		fprintf(out, ":%" PRId64, (int64_t)c[i].value);
	}
	fputs("},", out);
}

/* A small json-c part of the document (the fault summary), taken over. */
static int put_object(FILE *out, const char *key, json_object *o)
{
	int err = 0;

	if (!o)
		return -ENOMEM;
	fprintf(out, ",\"%s\":", key);
	if (fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), out) < 0)
		err = -EIO;
	json_object_put(o);
	return err;
}

/* ,"modules":[{"name":...,"path":...,"build_id":...},...] */
static void put_modules(FILE *out, const struct st_profile *p)
{
	fputs(",\"modules\":[", out);
	for (size_t i = 0; i < p->nmodules; i++) {
		const struct st_prof_module *m = &p->modules[i];

		fputs(i ? ",{" : "{", out);
		put_bytes(out, "name", m->name);
		put_bytes(out, "path", m->path);
		fputs("\"build_id\":", out);	/* hex: plain ASCII */
		st_json__put(out, m->build_id);
		fputc('}', out);
	}
	fputc(']', out);
}

/* The arcflow of p, its function names added to the string table: their
 * indexes into *strid (entry by entry). 0 or -ENOMEM. */
static int build_arcflow(struct tables *tb, const struct st_profile *p,
			 struct st_arcflow **af, int64_t **strid)
{
	size_t n;

	if (!(*af = st_arcflow__build(p)))
		return -ENOMEM;
	n = st_arcflow__count(*af);
	if (!(*strid = malloc((n ? n : 1) * sizeof(**strid))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (((*strid)[i] = str_index(tb, st_arcflow__name(*af, i))) < 0)
			return -ENOMEM;
	return 0;
}

/* Streamed: the tables first (one pass over the trees, then the arcflow's
 * names), then every thread's nodes, row by row, never held as a JSON
 * object tree. */
int st_profile__write_json(const struct st_profile *p, FILE *out, bool with_arcflow)
{
	struct st_arcflow *af = NULL;
	struct tables tb = { 0 };
	int64_t *strid = NULL;
	size_t next = 0;
	int err;

	if ((err = build_tables(&tb, p)))
		goto cleanup;
	if (with_arcflow && (err = build_arcflow(&tb, p, &af, &strid)))
		goto cleanup;
	fprintf(out, "{\"format\":\"%s\",\"version\":%d,", ST_PROFILE_JSON_FORMAT,
		ST_PROFILE_JSON_VERSION);
	put_time(out, "start", p->start_s);
	put_time(out, "end", p->end_s);
	fputs("\"event\":", out);
	st_json__put(out, p->event);
	fprintf(out, ",\"unit\":\"%s\"", st_profile__unit_name(p));
	fprintf(out, ",\"frequency_hz\":%u,\"duration_s\":%.9g,\"samples\":%" PRId64
		",\"lost\":%" PRId64 ",", p->frequency_hz,
		isfinite(p->duration_s) ? p->duration_s : 0, (int64_t)p->samples, (int64_t)p->lost);
	put_notes(out, "lost_by", p->lost_by, p->nlost_by);
	put_notes(out, "notes", p->notes, p->nnotes);
	fprintf(out, "\"unresolved\":%" PRId64 ",", (int64_t)p->unresolved);
	put_counts(out, "unresolved_by", p->unresolved_by, p->nunresolved_by);
	fprintf(out, "\"bpf_ns_per_sample\":%.9g,\"command\":",
		isfinite(p->bpf_ns_per_sample) ? p->bpf_ns_per_sample : 0);
	st_json__put(out, p->command);
	put_modules(out, p);
	put_strings(out, &tb);
	put_frames(out, &tb);
	fputs(",\"threads\":[", out);
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct st_thread *t = p->threads[i];
		char container[72];

		fprintf(out, "%s{\"pid\":%u,\"tid\":%u,\"comm\":", i ? "," : "", t->pid, t->tid);
		st_json__put(out, t->comm);
		fputs(",\"cgroup\":", out);
		st_json__put(out, t->cgroup);
		fputs(",\"container\":", out);
		st_json__put(out, st_cgroup__container(t->cgroup, container, sizeof(container)));
		fprintf(out, ",\"samples\":%" PRId64 ",", (int64_t)st_thread__samples(t));
		if ((err = put_nodes(out, st_tree__root(t->tree), &tb, &next)))
			goto cleanup;
		fputc('}', out);
	}
	fputc(']', out);
	if (st_faultsum__applies(p)) {
		struct st_faultsum *fs = st_faultsum__build(p);

		err = fs ? put_object(out, "fault_summary", st_faultsum__to_json(fs)) : -ENOMEM;
		st_faultsum__free(fs);
		if (err)
			goto cleanup;
	}
	if (af) {
		fputs(",\"arcflow\":", out);
		st_arcflow__write_json(af, strid, out);
	}
	if (fputs("}\n", out) < 0 || ferror(out))
		err = -EIO;
cleanup:
	free(strid);
	st_arcflow__free(af);
	tables_free(&tb);
	return err;
}

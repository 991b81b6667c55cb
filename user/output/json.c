/* json.c - profile.json writer, streamed (docs/reports.md, "profile.json"); the
 * reader is user/model/profile_json.c. */
#include "user/output/json.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "common/tree.h"
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

/* A node's fields and the opening of its "children" array. */
static void put_node_head(FILE *out, const struct st_node *n)
{
	bool has_offset = n->f.kind == ST_FRAME_CALLSITE ||
			  (!n->f.function && n->f.module && n->f.kind != ST_FRAME_ROOT);

	fputc('{', out);
	if (n->f.kind == ST_FRAME_DATA) {
		/* the data touched: symbol + offset, never a function */
		has_offset = true;
		fprintf(out, "\"class\":\"%s\",", st_frame__class_name(n->f.data_class));
		fprintf(out, "\"forced\":%s,", n->f.data_class & ST_DATA_FORCED ? "true" : "false");
		put_bytes(out, "symbol", n->f.function);
		fputs("\"function\":null,", out);
	} else {
		put_bytes(out, "function", n->f.function);
		if (n->f.system_name)	/* the mangled name it was demangled from */
			put_bytes(out, "system_name", n->f.system_name);
	}
	if (has_offset)
		fprintf(out, "\"offset\":%" PRId64 ",", (int64_t)n->f.offset);
	else
		fputs("\"offset\":null,", out);
	put_bytes(out, "module", n->f.module);
	if (n->f.addr)
		fprintf(out, "\"address\":\"0x%" PRIx64 "\",", (uint64_t)n->f.addr);
	else
		fputs("\"address\":null,", out);
	fprintf(out, "\"kind\":\"%s\",\"runtime\":\"%s\",", st_frame__json_kind(&n->f),
		st_runtime__name(n->f.runtime));
	if (n->f.file) {	/* source position (DWARF) */
		put_bytes(out, "file", n->f.file);
		fprintf(out, "\"line\":%u,", (unsigned)n->f.line);
	}
	if (n->f.runtime == ST_RUNTIME_KERNEL)	/* as version 2 wrote it */
		fputs("\"kernel\":true,", out);
	fprintf(out, "\"base\":%" PRId64 ",\"cum\":%" PRId64 ",\"calls\":%" PRId64
		",\"children\":[", (int64_t)n->base, (int64_t)n->cum, (int64_t)n->calls);
}

/* A tree in pre-order without recursion: memory and stack stay flat however
 * large or deep the tree. */
static void put_tree(FILE *out, const struct st_node *root)
{
	const struct st_node *n = root;

	put_node_head(out, n);
	for (;;) {
		if (n->first_child) {
			n = n->first_child;
			put_node_head(out, n);
			continue;
		}
		for (;;) {	/* close n, then its finished ancestors */
			fputs("]}", out);
			if (n == root)
				return;
			if (n->next_sibling) {
				n = n->next_sibling;
				fputc(',', out);
				put_node_head(out, n);
				break;
			}
			n = n->parent;
		}
	}
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

/* A small json-c part of the document (fault summary, arcflow), taken over. */
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

/* Streamed: the trees, which make nearly all of the document, are written
 * node by node, never held as a JSON object tree. */
int st_profile__write_json(const struct st_profile *p, FILE *out, bool with_arcflow)
{
	struct st_arcflow *af = NULL;
	int err = 0;

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
		fprintf(out, ",\"samples\":%" PRId64 ",\"root\":", (int64_t)st_thread__samples(t));
		put_tree(out, st_tree__root(t->tree));
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
	if (with_arcflow) {
		af = st_arcflow__build(p);
		if (!af) {
			err = -ENOMEM;
			goto cleanup;
		}
		fputs(",\"arcflow\":", out);
		st_arcflow__write_json(af, out);
	}
	if (fputs("}\n", out) < 0 || ferror(out))
		err = -EIO;
cleanup:
	st_arcflow__free(af);
	return err;
}


/* test_outputs.c - the outputs for other tools: stacks.folded (exact lines,
 * read back), profile.pb.gz (decoded with protobuf-c, every field checked),
 * flamegraph.svg (box widths, layout, escaping, self-containment), --format
 * parsing and the files st_report__write_dir writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "proto/profile.pb-c.h"
#include "user/output/arcflow.h"
#include "user/output/flamegraph.h"
#include "user/model/folded.h"
#include "user/output/out_folded.h"
#include "user/output/pprof.h"
#include "profile_fx.h"
#include "user/model/profile.h"
#include "user/output/json.h"
#include "json_fx.h"
#include "user/output/report.h"
#include "common/strtab.h"

typedef Perftools__Profiles__Profile PProfile;

/* pid 10: thread 10 "prog" (main+0x10 -> work 90, main+0x20 -> tiny 2,
 * main+0x20 -> "op<;>&" 1) and thread 11 "prog" (start+0x8 [libc] -> work
 * 100, main+0x10 -> work 5); pid 20 "other": schedule [kernel] 7,
 * [truncated] -> no symbol in /bin/prog at 0x1234, 3. 208 samples at 99 Hz. */
static struct st_profile *sample_profile(void)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t;

	p->frequency_hz = 99;
	p->duration_s = 2.5;
	t = st_profile__add_thread(p, 10, 10, "prog");
	{
		struct st_frame a[] = { cs(p, "main", 0x10, "/bin/prog"), lf(p, "work", "/bin/prog") };
		struct st_frame b[] = { cs(p, "main", 0x20, "/bin/prog"), lf(p, "tiny", "/bin/prog") };
		struct st_frame c[] = { cs(p, "main", 0x20, "/bin/prog"),
					lf(p, "op<;>&", "/bin/prog") };

		st_tree__add_sample(t->tree, a, 2, 90, ST_CALLS_FRAME);
		st_tree__add_sample(t->tree, b, 2, 2, ST_CALLS_FRAME);
		st_tree__add_sample(t->tree, c, 2, 1, ST_CALLS_FRAME);
	}
	t = st_profile__add_thread(p, 10, 11, "prog");
	{
		struct st_frame a[] = { cs(p, "start", 0x8, "/lib/libc.so.6"),
					lf(p, "work", "/bin/prog") };
		struct st_frame b[] = { cs(p, "main", 0x10, "/bin/prog"), lf(p, "work", "/bin/prog") };

		st_tree__add_sample(t->tree, a, 2, 100, ST_CALLS_FRAME);
		st_tree__add_sample(t->tree, b, 2, 5, ST_CALLS_FRAME);
	}
	t = st_profile__add_thread(p, 20, 20, "other");
	{
		struct st_frame k = { .kind = ST_FRAME_LEAF, .addr = 0xffffffff81000000ULL,
				      .function = st_strtab__intern(p->strs, "schedule"),
				      .module = st_strtab__intern(p->strs, "[kernel.kallsyms]"),
				      .runtime = ST_RUNTIME_KERNEL };
		struct st_frame u[] = {
			{ .kind = ST_FRAME_SPECIAL,
			  .function = st_strtab__intern(p->strs, "[truncated]") },
			{ .kind = ST_FRAME_LEAF, .addr = 0x401234, .offset = 0x1234,
			  .module = st_strtab__intern(p->strs, "/bin/prog") },
		};

		st_tree__add_sample(t->tree, &k, 1, 7, ST_CALLS_FRAME);
		st_tree__add_sample(t->tree, u, 2, 3, ST_CALLS_FRAME);
	}
	st_profile__finalize(p);
	p->samples = 208;
	return p;
}

/* ---- folded ---------------------------------------------------------------- */

/* What writer w writes for p, as a string. */
static char *written(const struct st_profile *p, int (*w)(const struct st_profile *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(w(p, f), 0);
	fclose(f);
	return buf;
}

static int folded_by_function(const struct st_profile *p, FILE *f)
{
	return st_folded__write(p, f, false);
}

static int folded_offsets(const struct st_profile *p, FILE *f)
{
	return st_folded__write(p, f, true);
}

static char *folded_text(const struct st_profile *p)
{
	return written(p, folded_by_function);
}

static void test_folded_lines(void **state)
{
	struct st_profile *p = sample_profile();
	char *text = folded_text(p);

	(void)state;
	/* by function: main's two call sites are one frame; an unnamed frame
	 * keeps its offset */
	assert_string_equal(text, "prog;start;work 100\n"
				  "prog;main;work 95\n"
				  "prog;main;tiny 2\n"
				  "prog;main;op<:>& 1\n"
				  "other;schedule 7\n"
				  "other;[truncated];prog+0x1234 3\n");
	free(text);
	/* --folded-offsets: the two "prog" threads merge: main+0x10;work is 90 + 5 */
	text = written(p, folded_offsets);
	assert_string_equal(text, "prog;start+0x8;work 100\n"
				  "prog;main+0x10;work 95\n"
				  "prog;main+0x20;tiny 2\n"
				  "prog;main+0x20;op<:>& 1\n"
				  "other;schedule 7\n"
				  "other;[truncated];prog+0x1234 3\n");
	free(text);
	st_profile__free(p);
}

static void test_folded_round_trip(void **state)
{
	struct st_profile *p = sample_profile(), *q = NULL;
	char *text = folded_text(p), *again, err[256] = "";
	FILE *in = fmemopen(text, strlen(text), "r");
	const struct st_node *root, *c;

	(void)state;
	assert_int_equal(st_folded__read(in, "stacks.folded", &q, err, sizeof(err)), 0);
	fclose(in);
	assert_int_equal(q->samples, 208);
	root = st_tree__root(q->threads[0]->tree);
	assert_int_equal(root->cum, 208);
	/* comm frames on top: prog 198, other 10 */
	c = root->first_child;
	assert_string_equal(c->f.function, "prog");
	assert_int_equal(c->cum, 198);
	assert_string_equal(c->next_sibling->f.function, "other");
	assert_int_equal(c->next_sibling->cum, 10);
	/* a profile read from folded stacks is written back unchanged (no comm) */
	again = folded_text(q);
	assert_string_equal(again, text);
	free(again);
	free(text);
	st_profile__free(p);
	st_profile__free(q);
}

/* ---- pprof ----------------------------------------------------------------- */

static unsigned char *gunzip(const unsigned char *in, size_t len, size_t *out_len)
{
	size_t cap = 1 << 16;
	unsigned char *out = malloc(cap);
	z_stream zs = { 0 };
	int ret;

	assert_non_null(out);
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	do {
		if (zs.total_out == cap) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		zs.next_out = out + zs.total_out;
		zs.avail_out = (uInt)(cap - zs.total_out);
		ret = inflate(&zs, Z_NO_FLUSH);
		assert_true(ret == Z_OK || ret == Z_STREAM_END);
	} while (ret != Z_STREAM_END);
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return out;
}

static PProfile *decode_written(const struct st_profile *p)
{
	unsigned char *gz = NULL, *raw;
	size_t gzlen = 0, len;
	FILE *f = open_memstream((char **)&gz, &gzlen);
	PProfile *pb;

	assert_non_null(f);
	assert_int_equal(st_pprof__write(p, f), 0);
	fclose(f);
	assert_true(gzlen > 18);
	assert_int_equal(gz[0], 0x1f);	/* gzip magic */
	assert_int_equal(gz[1], 0x8b);
	raw = gunzip(gz, gzlen, &len);
	pb = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(pb);
	free(raw);
	free(gz);
	return pb;
}

static const char *s_(const PProfile *pb, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < pb->n_string_table);
	return pb->string_table[i];
}

static const Perftools__Profiles__Location *loc(const PProfile *pb, uint64_t id)
{
	assert_true(id >= 1 && id <= pb->n_location);
	assert_int_equal(pb->location[id - 1]->id, id);
	return pb->location[id - 1];
}

static const char *loc_function(const PProfile *pb, uint64_t id)
{
	const Perftools__Profiles__Location *l = loc(pb, id);
	uint64_t fid;

	assert_int_equal(l->n_line, 1);
	fid = l->line[0]->function_id;
	assert_true(fid >= 1 && fid <= pb->n_function);
	assert_int_equal(pb->function[fid - 1]->id, fid);
	assert_int_equal(pb->function[fid - 1]->name, pb->function[fid - 1]->system_name);
	return s_(pb, pb->function[fid - 1]->name);
}

static const char *loc_module(const PProfile *pb, uint64_t id)
{
	const Perftools__Profiles__Location *l = loc(pb, id);

	if (!l->mapping_id)
		return "";
	assert_true(l->mapping_id <= pb->n_mapping);
	assert_int_equal(pb->mapping[l->mapping_id - 1]->id, l->mapping_id);
	return s_(pb, pb->mapping[l->mapping_id - 1]->filename);
}

static const Perftools__Profiles__Label *label(const PProfile *pb,
					       const Perftools__Profiles__Sample *s, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(s_(pb, s->label[i]->key), key))
			return s->label[i];
	fail_msg("no label %s", key);
	return NULL;
}

static void test_pprof_fields(void **state)
{
	struct st_profile *p = sample_profile();
	PProfile *pb = decode_written(p);
	const int64_t period = 10101010;	/* 1e9 / 99 */
	int64_t total = 0, ns = 0;
	bool seen90 = false, seen3 = false, seen7 = false;

	(void)state;
	assert_string_equal(pb->string_table[0], "");
	assert_int_equal(pb->n_sample_type, 2);
	assert_string_equal(s_(pb, pb->sample_type[0]->type), "samples");
	assert_string_equal(s_(pb, pb->sample_type[0]->unit), "count");
	assert_string_equal(s_(pb, pb->sample_type[1]->type), "cpu");
	assert_string_equal(s_(pb, pb->sample_type[1]->unit), "nanoseconds");
	assert_non_null(pb->period_type);
	assert_string_equal(s_(pb, pb->period_type->type), "cpu");
	assert_string_equal(s_(pb, pb->period_type->unit), "nanoseconds");
	assert_int_equal(pb->period, period);
	assert_int_equal(pb->duration_nanos, 2500000000LL);
	assert_true(pb->time_nanos > 1600000000LL * 1000000000LL);
	/* one sample per node with BASE > 0 */
	assert_int_equal(pb->n_sample, 7);
	/* the executable is the first mapping (pprof's "File:"), not libc */
	assert_string_equal(s_(pb, pb->mapping[0]->filename), "/bin/prog");
	for (size_t i = 0; i < pb->n_mapping; i++) {
		assert_true(pb->mapping[i]->has_functions);
		assert_int_equal(pb->mapping[i]->build_id, 0);
		assert_true(pb->mapping[i]->memory_start < pb->mapping[i]->memory_limit);
	}
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		const Perftools__Profiles__Label *l;

		assert_int_equal(s->n_value, 2);
		assert_int_equal(s->value[1], s->value[0] * period);
		total += s->value[0];
		ns += s->value[1];
		assert_int_equal(s->n_label, 4);	/* pid, tid, comm, frame type */
		l = label(pb, s, "comm");
		assert_int_equal(l->num, 0);
		if (s->value[0] == 90) {
			seen90 = true;
			assert_int_equal(s->n_location_id, 2);
			assert_string_equal(loc_function(pb, s->location_id[0]), "work"); /* leaf first */
			assert_string_equal(loc_function(pb, s->location_id[1]), "main");
			assert_string_equal(loc_module(pb, s->location_id[0]), "/bin/prog");
			assert_int_equal(loc(pb, s->location_id[1])->address, 0x400000 + 0x10 * 16);
			assert_int_equal(label(pb, s, "pid")->num, 10);
			assert_int_equal(label(pb, s, "pid")->str, 0);
			assert_int_equal(label(pb, s, "tid")->num, 10);
			assert_string_equal(s_(pb, l->str), "prog");
			assert_string_equal(s_(pb, label(pb, s, "profile.frame.type")->str),
					    "native");
		} else if (s->value[0] == 3) {
			seen3 = true;
			assert_int_equal(s->n_location_id, 2);
			/* no symbol: named as in xtree; [truncated] has no mapping */
			assert_string_equal(loc_function(pb, s->location_id[0]), "prog+0x1234");
			assert_int_equal(loc(pb, s->location_id[0])->address, 0x401234);
			assert_string_equal(loc_function(pb, s->location_id[1]), "[truncated]");
			assert_string_equal(loc_module(pb, s->location_id[1]), "");
			assert_int_equal(label(pb, s, "pid")->num, 20);
			assert_string_equal(s_(pb, l->str), "other");
		} else if (s->value[0] == 7) {
			seen7 = true;
			assert_int_equal(s->n_location_id, 1);
			assert_string_equal(loc_function(pb, s->location_id[0]), "schedule");
			assert_string_equal(loc_module(pb, s->location_id[0]), "[kernel.kallsyms]");
			assert_string_equal(s_(pb, label(pb, s, "profile.frame.type")->str),
					    "kernel");
		} else if (s->value[0] == 100) {
			assert_string_equal(loc_function(pb, s->location_id[1]), "start");
			assert_string_equal(loc_module(pb, s->location_id[1]), "/lib/libc.so.6");
			assert_int_equal(label(pb, s, "tid")->num, 11);
		}
	}
	assert_true(seen90 && seen3 && seen7);
	assert_int_equal(total, 208);
	assert_int_equal(ns, 208 * period);
	/* "work" appears once per module as a function, at one address: one location */
	{
		size_t nwork = 0;

		for (size_t i = 0; i < pb->n_function; i++)
			nwork += !strcmp(s_(pb, pb->function[i]->name), "work");
		assert_int_equal(nwork, 1);
	}
	perftools__profiles__profile__free_unpacked(pb, NULL);
	st_profile__free(p);
}

/* ---- inline frames and source lines --------------------------------------- */

/* pid 30 "cxx": main+0x10 (a.c:5) -> helper (inline, h.h:10) -> inner
 * (inline, h.h:20) -> work (w.c:3) 40; the leaf work with mixer inlined
 * (inline, m.h:7) 30 of it, work's own code 5 (under main+0x20, a.c:6). */
static struct st_frame at(struct st_frame f, struct st_profile *p, const char *file, __u32 line)
{
	f.file = st_strtab__intern(p->strs, file);
	f.line = line;
	return f;
}

static struct st_frame inl(struct st_profile *p, const char *fn, const char *file, __u32 line)
{
	struct st_frame f = { .kind = ST_FRAME_INLINE, .function = st_strtab__intern(p->strs, fn),
			      .module = st_strtab__intern(p->strs, "/bin/cxx") };

	return at(f, p, file, line);
}

static struct st_profile *inline_profile(void)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t = st_profile__add_thread(p, 30, 30, "cxx");
	struct st_frame a[] = { at(cs(p, "main", 0x10, "/bin/cxx"), p, "/src/a.c", 5),
				inl(p, "helper", "/src/h.h", 10), inl(p, "inner", "/src/h.h", 20),
				at(lf(p, "work", "/bin/cxx"), p, "/src/w.c", 3) };
	struct st_frame b[] = { at(cs(p, "main", 0x20, "/bin/cxx"), p, "/src/a.c", 6),
				at(lf(p, "work", "/bin/cxx"), p, "/src/w.c", 4),
				inl(p, "mixer", "/src/m.h", 7) };

	p->frequency_hz = 99;
	st_tree__add_sample(t->tree, a, 4, 40, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, b, 3, 30, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, b, 2, 5, ST_CALLS_FRAME);
	st_profile__finalize(p);
	p->samples = 75;
	return p;
}

static const struct st_node *find_kind(const struct st_node *n, enum st_frame_kind kind,
				       const char *fn)
{
	if (n->f.kind == kind && n->f.function && !strcmp(n->f.function, fn))
		return n;
	for (const struct st_node *c = n->first_child; c; c = c->next_sibling) {
		const struct st_node *hit = find_kind(c, kind, fn);

		if (hit)
			return hit;
	}
	return NULL;
}

static int write_json(const struct st_profile *p, FILE *f)
{
	return st_profile__write_json(p, f, true);
}

static char *json_text(const struct st_profile *p)
{
	return written(p, write_json);
}

/* profile.json: kind "inline", file and line, read back the same. */
static void test_inline_json_round_trip(void **state)
{
	struct st_profile *p = inline_profile(), *q = NULL;
	char path[] = "/tmp/st-inline-XXXXXX", err[256] = "", buf[256];
	char *text = json_text(p), *again;
	const struct st_node *n;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_non_null(strstr(fx_frames_of(text, "inner", buf, sizeof(buf)),
			       "inline native null /src/h.h:20;"));
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), 0);
	n = find_kind(st_tree__root(q->threads[0]->tree), ST_FRAME_INLINE, "inner");
	assert_non_null(n);
	assert_string_equal(n->f.file, "/src/h.h");
	assert_int_equal(n->f.line, 20);
	assert_int_equal(n->cum, 40);
	assert_int_equal(n->parent->f.kind, ST_FRAME_INLINE);
	n = find_kind(st_tree__root(q->threads[0]->tree), ST_FRAME_CALLSITE, "main");
	assert_non_null(n);
	assert_string_equal(n->f.file, "/src/a.c");
	again = json_text(q);
	assert_string_equal(again, text);
	unlink(path);
	free(again);
	free(text);
	st_profile__free(q);
	st_profile__free(p);
}

/* --no-inline: the inline frames folded into their frames, totals equal. */
static void test_inline_drop(void **state)
{
	struct st_profile *p = inline_profile();
	const struct st_node *root = st_tree__root(p->threads[0]->tree), *work, *n;
	__u64 cum = root->cum;

	(void)state;
	assert_int_equal(st_profile__drop_inline(p), 0);
	root = st_tree__root(p->threads[0]->tree);
	assert_int_equal(root->cum, cum);
	assert_null(find_kind(root, ST_FRAME_INLINE, "helper"));
	assert_null(find_kind(root, ST_FRAME_INLINE, "mixer"));
	n = find_kind(root, ST_FRAME_CALLSITE, "main");
	assert_non_null(n);
	/* main+0x10 -> work directly; work under main+0x20 holds mixer's 30 */
	work = n->first_child;
	assert_non_null(work);
	assert_string_equal(work->f.function, "work");
	for (n = root->first_child; n; n = n->next_sibling)
		if (n->f.offset == 0x20)
			break;
	assert_non_null(n);
	assert_int_equal(n->first_child->base, 35);
	assert_null(n->first_child->first_child);
	st_profile__free(p);
}

/* xtree: (inline) marks, file:line with --lines only. */
static void test_inline_xtree(void **state)
{
	struct st_profile *p = inline_profile();
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	for (int lines = 0; lines < 2; lines++) {
		f = open_memstream(&buf, &len);
		assert_non_null(f);
		assert_int_equal(st_xtree__write_lines(p, f, 0, lines), 0);
		fclose(f);
		assert_non_null(strstr(buf, "  inner [cxx] (inline)"));
		assert_non_null(strstr(buf, "  mixer [cxx] (inline)"));
		if (lines) {
			assert_non_null(strstr(buf, "inner [cxx] (inline) h.h:20\n"));
			assert_non_null(strstr(buf, "main+0x10 [cxx] a.c:5\n"));
		} else {
			assert_null(strstr(buf, "h.h:20"));
		}
		free(buf);
		buf = NULL;
	}
	st_profile__free(p);
}

/* arcflow: an inline function is a function (its callers, SELF, callees). */
static void test_inline_arcflow(void **state)
{
	struct st_profile *p = inline_profile();
	struct st_arcflow *af = st_arcflow__build(p);
	char *buf = NULL, *self, *prev;
	unsigned long calls, base, cum;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(af);
	assert_non_null(f);
	assert_int_equal(st_arcflow__write_text(af, p, f), 0);
	fclose(f);
	self = strstr(buf, "] inner\n");
	assert_non_null(self);
	while (self > buf && self[-1] != '\n')
		self--;
	assert_int_equal(sscanf(self, "SELF %lu %lu %lu", &calls, &base, &cum), 3);
	assert_int_equal(cum, 40);
	assert_int_equal(base, 0);
	for (prev = self - 1; prev > buf && prev[-1] != '\n'; prev--)
		;
	assert_int_equal(strncmp(prev, "PARENT", 6), 0);
	assert_non_null(strstr(prev, " helper ["));
	assert_true(strstr(prev, " helper [") < self);
	assert_non_null(strstr(self, "CHILD"));
	st_arcflow__free(af);
	free(buf);
	st_profile__free(p);
}

/* pprof: an inline chain is one location with one Line per function,
 * innermost first, each with its line; functions name their source file. */
static void test_inline_pprof(void **state)
{
	struct st_profile *p = inline_profile();
	PProfile *pb = decode_written(p);
	bool seen40 = false, seen30 = false;

	(void)state;
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];

		if (s->value[0] == 40) {
			const Perftools__Profiles__Location *l;
			const char *want[] = { "inner", "helper", "main" };
			const char *files[] = { "/src/h.h", "/src/h.h", "/src/a.c" };
			int64_t lines[] = { 20, 10, 5 };

			seen40 = true;
			assert_int_equal(s->n_location_id, 2);	/* work, then the chain */
			assert_string_equal(loc_function(pb, s->location_id[0]), "work");
			l = loc(pb, s->location_id[1]);
			assert_int_equal(l->n_line, 3);
			assert_int_equal(l->address, 0x400000 + 0x10 * 16);
			for (size_t j = 0; j < 3; j++) {
				const Perftools__Profiles__Function *fn =
					pb->function[l->line[j]->function_id - 1];

				assert_string_equal(s_(pb, fn->name), want[j]);
				assert_string_equal(s_(pb, fn->filename), files[j]);
				assert_int_equal(l->line[j]->line, lines[j]);
			}
		} else if (s->value[0] == 30) {
			const Perftools__Profiles__Location *l;

			seen30 = true;
			assert_int_equal(s->n_location_id, 2);	/* (mixer, work), main */
			l = loc(pb, s->location_id[0]);
			assert_int_equal(l->n_line, 2);
			assert_int_equal(l->line[0]->line, 7);
			assert_string_equal(loc_function(pb, s->location_id[1]), "main");
		}
	}
	assert_true(seen40 && seen30);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	st_profile__free(p);
}

/* Mappings carry the build id the profile's modules list knows (hex, as
 * pprof prints it), none when it knows none. */
static void test_pprof_build_ids(void **state)
{
	struct st_profile *p = sample_profile();
	PProfile *pb;
	bool prog = false, libc = false;

	(void)state;
	assert_int_equal(st_profile__add_module(p, "/bin/prog", "/bin/prog",
						"3f9a0c77d2e1b4c5a6f708192a3b4c5d6e7f8091"), 0);
	assert_int_equal(st_profile__add_module(p, "/lib/libc.so.6", NULL, NULL), 0);
	pb = decode_written(p);
	for (size_t i = 0; i < pb->n_mapping; i++) {
		const char *file = s_(pb, pb->mapping[i]->filename);

		if (!strcmp(file, "/bin/prog")) {
			prog = true;
			assert_string_equal(s_(pb, pb->mapping[i]->build_id),
					    "3f9a0c77d2e1b4c5a6f708192a3b4c5d6e7f8091");
		} else {
			libc |= !strcmp(file, "/lib/libc.so.6");
			assert_int_equal(pb->mapping[i]->build_id, 0);
		}
	}
	assert_true(prog && libc);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	st_profile__free(p);
}

static void test_pprof_not_timer(void **state)
{
	const char *text = "a;b 4\na;c 2\n";
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	struct st_profile *p = NULL;
	char err[128];
	PProfile *pb;
	int64_t total = 0;

	(void)state;
	assert_int_equal(st_folded__read(in, "x.folded", &p, err, sizeof(err)), 0);
	fclose(in);
	pb = decode_written(p);
	assert_int_equal(pb->n_sample_type, 1);
	assert_string_equal(s_(pb, pb->sample_type[0]->type), "samples");
	assert_string_equal(s_(pb, pb->period_type->type), "samples");
	assert_int_equal(pb->period, 1);
	assert_int_equal(pb->n_sample, 2);
	for (size_t i = 0; i < pb->n_sample; i++) {
		assert_int_equal(pb->sample[i]->n_value, 1);
		assert_int_equal(pb->sample[i]->n_location_id, 2);
		assert_string_equal(loc_function(pb, pb->sample[i]->location_id[1]), "a");
		total += pb->sample[i]->value[0];
	}
	assert_int_equal(total, 6);
	assert_int_equal(pb->n_mapping, 0);	/* folded frames have no module */
	perftools__profiles__profile__free_unpacked(pb, NULL);
	st_profile__free(p);
}

/* ---- svg ------------------------------------------------------------------- */

static char *svg_text_opts(const struct st_profile *p, long pid,
			   const struct st_flamegraph_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(st_flamegraph__write(p, f, pid, o), 0);
	fclose(f);
	return buf;
}

static char *svg_text(const struct st_profile *p, long pid)
{
	return svg_text_opts(p, pid, NULL);
}

/* The number in name="..." inside the element starting at s. */
static double attr(const char *s, const char *name)
{
	char key[64];
	const char *a;

	snprintf(key, sizeof(key), " %s=\"", name);
	a = strstr(s, key);
	assert_non_null(a);
	return strtod(a + strlen(key), NULL);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

struct box {
	double x, w;
	unsigned level;
	unsigned long cum;
	char name[64];
};

static size_t boxes(const char *svg, struct box *out, size_t max)
{
	size_t n = 0;

	for (const char *g = strstr(svg, "<g class=\"f\""); g; g = strstr(g + 1, "<g class=\"f\"")) {
		const char *rect = strstr(g, "<rect"), *nm = strstr(g, "data-n=\"") + 8;

		assert_true(n < max);
		out[n].level = (unsigned)attr(g, "data-l");
		out[n].cum = (unsigned long)attr(g, "data-c");
		out[n].x = attr(rect, "x");
		out[n].w = attr(rect, "width");
		snprintf(out[n].name, sizeof(out[n].name), "%.*s", (int)(strchr(nm, '"') - nm), nm);
		n++;
	}
	return n;
}

static void test_svg_process(void **state)
{
	struct st_profile *p = sample_profile();
	char *svg = svg_text_opts(p, 10, &(struct st_flamegraph_opts){ .offsets = true });
	struct box b[64];
	size_t n = boxes(svg, b, 64);
	double scale = 1180.0 / 198;

	(void)state;
	assert_true(!strncmp(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"", 36));
	assert_non_null(strstr(svg, "data-total=\"198\" data-width=\"1180\""));
	/* process, 2 threads, 4 + 5 frames; nothing of pid 20 */
	assert_int_equal(n, 12);
	assert_null(strstr(svg, "schedule"));
	for (size_t i = 0; i < n; i++)
		assert_true(fabs(b[i].w - (double)b[i].cum * scale) < 0.0006);
	assert_string_equal(b[0].name, "prog (pid 10)");
	assert_int_equal(b[0].level, 0);
	assert_int_equal(b[0].cum, 198);
	assert_string_equal(b[1].name, "prog (tid 11)");	/* 105 samples: first */
	assert_int_equal(b[1].level, 1);
	assert_true(fabs(b[1].x - 10) < 0.001);
	/* icicle: callees one level below, children left to right by CUM */
	assert_string_equal(b[2].name, "start+0x8");
	assert_int_equal(b[2].level, 2);
	assert_string_equal(b[3].name, "work");
	assert_int_equal(b[3].level, 3);
	assert_string_equal(b[4].name, "main+0x10");
	assert_true(fabs(b[4].x - (10 + 100 * scale)) < 0.001);
	assert_true(fabs(attr(strstr(svg, "data-n=\"main+0x10\""), "y") - (52 + 2 * 17)) < 0.01);
	assert_string_equal(b[6].name, "prog (tid 10)");
	assert_true(fabs(b[6].x - (10 + 105 * scale)) < 0.001);
	/* names are escaped; the module colour of libc differs from prog's */
	assert_non_null(strstr(svg, "data-n=\"op&lt;;&gt;&amp;\""));
	assert_non_null(strstr(svg, "BASE 90, CUM 90 (45.45%), CALLS 1"));
	/* self-contained: only the two namespace URIs, nothing fetched */
	assert_int_equal(count(svg, "http"), 2);
	assert_null(strstr(svg, "href"));
	assert_null(strstr(svg, " src="));
	assert_non_null(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA["));
	assert_non_null(strstr(svg, "id=\"search\""));
	free(svg);
	st_profile__free(p);
}

/* By function (the default): main's two call sites are one box listing
 * them; --svg-width sets the document's width. */
static void test_svg_by_function(void **state)
{
	struct st_profile *p = sample_profile();
	char *svg = svg_text_opts(p, 10, &(struct st_flamegraph_opts){ .width = 2020 });
	struct box b[64];
	size_t n = boxes(svg, b, 64);
	double scale = 2000.0 / 198;
	const char *main10, *work, *sites;

	(void)state;
	assert_non_null(strstr(svg, "width=\"2020\""));
	assert_non_null(strstr(svg, "data-total=\"198\" data-width=\"2000\""));
	/* process, 2 threads, 4 + 4 frames */
	assert_int_equal(n, 11);
	for (size_t i = 0; i < n; i++)
		assert_true(fabs(b[i].w - (double)b[i].cum * scale) < 0.0006);
	assert_string_equal(b[2].name, "start");
	assert_string_equal(b[4].name, "main");
	assert_int_equal(b[4].cum, 5);
	assert_string_equal(b[6].name, "prog (tid 10)");
	assert_string_equal(b[7].name, "main");
	assert_int_equal(b[7].cum, 93);
	assert_int_equal(b[7].level, 2);
	assert_string_equal(b[8].name, "work");
	assert_int_equal(b[8].level, 3);
	/* thread 10's main: both call sites in its tooltip, most first; thread
	 * 11's main has one, listed too (its name differs from the box's) */
	main10 = strstr(svg, "data-c=\"93\"");
	assert_non_null(main10);
	assert_non_null(strstr(main10, "call sites (2):\n  main+0x10: CUM 90\n  main+0x20: CUM 3\n"));
	assert_non_null(strstr(svg, "call sites (1):\n  main+0x10: CUM 5\n"));
	/* a box of one frame of its own name lists nothing */
	work = strstr(svg, "data-n=\"work\"");
	sites = strstr(work, "call sites");
	assert_true(!sites || sites > strstr(work, "</g>"));
	free(svg);
	st_profile__free(p);
}

static void test_svg_all(void **state)
{
	struct st_profile *p = sample_profile();
	char *svg = svg_text(p, -1);
	struct box b[64];
	size_t n = boxes(svg, b, 64);

	(void)state;
	assert_non_null(strstr(svg, "data-total=\"208\""));
	assert_string_equal(b[0].name, "all (2 processes)");
	assert_int_equal(b[0].cum, 208);
	assert_string_equal(b[1].name, "prog (pid 10)");
	assert_int_equal(b[1].level, 1);
	/* one thread: the process box is the thread's root, frames right below */
	assert_string_equal(b[n - 4].name, "other (pid 20)");
	assert_int_equal(b[n - 4].level, 1);
	assert_string_equal(b[n - 3].name, "schedule");
	assert_int_equal(b[n - 3].level, 2);
	assert_string_equal(b[n - 1].name, "prog+0x1234");
	for (size_t i = 0; i < n; i++)
		assert_true(fabs(b[i].w - (double)b[i].cum * 1180.0 / 208) < 0.0006);
	free(svg);
	st_profile__free(p);
}

/* ---- fault profiles: data leaves ------------------------------------------- */

/* ---- runtimes ---------------------------------------------------------------- */

/* pid 40 "mixed": main+0x10 -> <module> (python, line 3) -> fib (python) 6;
 * main+0x10 -> run (java, module "libjvm.so" as a reader may name it) 2;
 * main+0x20 -> schedule (kernel) 3; main+0x20 -> work 1. */
static struct st_profile *runtime_profile(void)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t = st_profile__add_thread(p, 40, 40, "mixed");
	struct st_frame m10 = cs(p, "main", 0x10, "/bin/mixed");
	struct st_frame m20 = cs(p, "main", 0x20, "/bin/mixed");
	struct st_frame mod = { .kind = ST_FRAME_CALLSITE, .addr = 0x7f0000, .offset = 3,
				.line = 3, .runtime = ST_RUNTIME_PYTHON,
				.function = st_strtab__intern(p->strs, "<module>"),
				.module = st_strtab__intern(p->strs, ST_PYTHON_MODULE),
				.file = st_strtab__intern(p->strs, "/tmp/m.py") };
	struct st_frame fib = { .kind = ST_FRAME_LEAF, .addr = 0x7f1000, .offset = 1, .line = 1,
				.runtime = ST_RUNTIME_PYTHON,
				.function = st_strtab__intern(p->strs, "fib"),
				.module = st_strtab__intern(p->strs, ST_PYTHON_MODULE),
				.file = st_strtab__intern(p->strs, "/tmp/m.py") };
	struct st_frame run = lf(p, "run", "libjvm.so");
	struct st_frame sched = lf(p, "schedule", "[kernel.kallsyms]");

	run.runtime = ST_RUNTIME_JAVA;
	sched.runtime = ST_RUNTIME_KERNEL;
	st_tree__add_sample(t->tree, (struct st_frame[]){ m10, mod, fib }, 3, 6, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, (struct st_frame[]){ m10, run }, 2, 2, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, (struct st_frame[]){ m20, sched }, 2, 3, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, (struct st_frame[]){ m20, lf(p, "work", "/bin/mixed") }, 2, 1,
			    ST_CALLS_FRAME);
	st_profile__finalize(p);
	p->samples = 12;
	return p;
}

/* pprof: Python and Java frames in one mapping per runtime ("[python]",
 * "[java]"), every sample labelled with its leaf's OpenTelemetry frame type. */
static void test_runtime_pprof(void **state)
{
	struct st_profile *p = runtime_profile();
	PProfile *pb = decode_written(p);
	size_t seen = 0;

	(void)state;
	assert_int_equal(pb->n_sample, 4);
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		const char *type = s_(pb, label(pb, s, "profile.frame.type")->str);

		assert_string_equal(loc_module(pb, s->location_id[s->n_location_id - 1]),
				    "/bin/mixed");
		switch (s->value[0]) {
		case 6:
			assert_string_equal(type, "cpython");
			assert_int_equal(s->n_location_id, 3);
			assert_string_equal(loc_function(pb, s->location_id[0]), "fib");
			assert_string_equal(loc_module(pb, s->location_id[0]), "[python]");
			assert_string_equal(loc_module(pb, s->location_id[1]), "[python]");
			assert_int_equal(loc(pb, s->location_id[0])->mapping_id,
					 loc(pb, s->location_id[1])->mapping_id);
			break;
		case 2:
			assert_string_equal(type, "jvm");
			assert_string_equal(loc_module(pb, s->location_id[0]), "[java]");
			break;
		case 3:
			assert_string_equal(type, "kernel");
			assert_string_equal(loc_module(pb, s->location_id[0]), "[kernel.kallsyms]");
			break;
		default:
			assert_int_equal(s->value[0], 1);
			assert_string_equal(type, "native");
		}
		seen |= 1u << s->value[0];
	}
	assert_int_equal(seen, (1u << 6) | (1u << 2) | (1u << 3) | (1u << 1));
	/* one mapping per runtime for interpreted frames; main is first */
	assert_int_equal(pb->n_mapping, 4);
	assert_string_equal(s_(pb, pb->mapping[0]->filename), "/bin/mixed");
	perftools__profiles__profile__free_unpacked(pb, NULL);
	st_profile__free(p);
}

/* The hue (degrees) of the fill of the box named name. */
static double box_hue(const char *svg, const char *name)
{
	char key[128];
	const char *g, *fill;
	unsigned rgb;
	double r, gr, b, mx, mn, h;

	snprintf(key, sizeof(key), "data-n=\"%s\"", name);
	g = strstr(svg, key);
	assert_non_null(g);
	fill = strstr(g, "fill=\"#");
	assert_non_null(fill);
	assert_int_equal(sscanf(fill + 7, "%6x", &rgb), 1);
	r = (rgb >> 16) / 255.0;
	gr = ((rgb >> 8) & 0xff) / 255.0;
	b = (rgb & 0xff) / 255.0;
	mx = fmax(r, fmax(gr, b));
	mn = fmin(r, fmin(gr, b));
	assert_true(mx - mn > 0.1);	/* a colour, not a grey */
	h = mx == r ? fmod((gr - b) / (mx - mn), 6) : mx == gr ? (b - r) / (mx - mn) + 2 :
							       (r - gr) / (mx - mn) + 4;
	h *= 60;
	return h < 0 ? h + 360 : h;
}

/* svg: each runtime its hue family (native red to orange, kernel cyan-blue,
 * python yellow, java green), the legend names the runtimes drawn. */
static void test_runtime_svg(void **state)
{
	struct st_profile *p = runtime_profile();
	char *svg = svg_text(p, -1);
	double h;

	(void)state;
	h = box_hue(svg, "main");
	assert_true(h <= 40 || h >= 350);
	h = box_hue(svg, "work");
	assert_true(h <= 40 || h >= 350);
	h = box_hue(svg, "fib");
	assert_true(h >= 45 && h <= 65);
	assert_true(fabs(box_hue(svg, "&lt;module&gt;") - h) < 1);
	h = box_hue(svg, "schedule");
	assert_true(h >= 180 && h <= 220);
	h = box_hue(svg, "run");
	assert_true(h >= 95 && h <= 135);
	assert_non_null(strstr(svg, ">Colour by runtime:</text>"));
	assert_int_equal(count(svg, "class=\"legend\""), 4);
	assert_non_null(strstr(svg, "data-runtime=\"python\""));
	free(svg);
	st_profile__free(p);
	/* a profile of native code alone: one legend entry */
	p = sample_profile();
	svg = svg_text(p, 10);
	assert_int_equal(count(svg, "class=\"legend\""), 1);
	assert_non_null(strstr(svg, "data-runtime=\"native\""));
	free(svg);
	st_profile__free(p);
}

/* page-faults (not timer based): main+0x10 -> touch -> a heap data leaf, 4
 * faults; main+0x10 -> touch 1 fault without a data leaf. */
static struct st_profile *fault_profile(struct st_frame *data)
{
	struct st_profile *p = st_profile__new("page-faults");
	struct st_thread *t = st_profile__add_thread(p, 30, 30, "faulty");
	struct st_frame path[] = { cs(p, "main", 0x10, "/bin/prog"), lf(p, "touch", "/bin/prog"),
				   { .kind = ST_FRAME_DATA, .data_class = ST_DATA_HEAP,
				     .addr = 0x5555000040, .offset = 0x40,
				     .module = st_strtab__intern(p->strs, "[heap]") } };

	*data = path[2];
	st_tree__add_sample(t->tree, path, 3, 4, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, path, 2, 1, ST_CALLS_FRAME);
	st_profile__finalize(p);
	p->samples = 5;
	return p;
}

static void test_data_leaves(void **state)
{
	struct st_frame data;
	struct st_profile *p = fault_profile(&data);
	char name[128], line[256], *text = folded_text(p), *svg = svg_text(p, -1);
	PProfile *pb = decode_written(p);
	bool seen = false;

	(void)state;
	st_frame__name(&data, name, sizeof(name));
	snprintf(line, sizeof(line), "faulty;main;touch 1\nfaulty;main;touch;%s 4\n", name);
	assert_string_equal(text, line);
	/* pprof: the data leaf is the sample's first location, its class a label */
	assert_int_equal(pb->n_sample_type, 1);
	assert_int_equal(pb->n_sample, 2);
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];

		if (s->value[0] != 4) {
			assert_int_equal(s->n_label, 4);	/* pid, tid, comm, frame type */
			continue;
		}
		seen = true;
		assert_int_equal(s->n_label, 5);
		assert_string_equal(s_(pb, label(pb, s, "class")->str), "heap");
		/* the code frame that touched the data: native */
		assert_string_equal(s_(pb, label(pb, s, "profile.frame.type")->str), "native");
		assert_int_equal(s->n_location_id, 3);
		assert_string_equal(loc_function(pb, s->location_id[0]), name);
		assert_int_equal(loc(pb, s->location_id[0])->address, 0x5555000040);
		assert_string_equal(loc_function(pb, s->location_id[1]), "touch");
	}
	assert_true(seen);
	/* svg: the data leaf has its class and the heap colour */
	snprintf(line, sizeof(line), "data-class=\"heap\" data-b=\"4\" data-c=\"4\"");
	assert_non_null(strstr(svg, line));
	assert_non_null(strstr(strstr(svg, line), "fill=\"#e07b6a\""));
	perftools__profiles__profile__free_unpacked(pb, NULL);
	free(text);
	free(svg);
	st_profile__free(p);
}

/* --force-faults: a forced and a natural fault on the same data are two
 * leaves; the forced one is marked (h*) in folded/xtree names, fault=forced
 * in pprof, "forced": true in profile.json, and read back as forced. */
static void test_forced_data_leaves(void **state)
{
	struct st_frame data, forced;
	struct st_profile *p = fault_profile(&data), *q = NULL;
	struct st_thread *t = p->threads[0];
	struct st_frame path[3] = { cs(p, "main", 0x10, "/bin/prog"), lf(p, "touch", "/bin/prog") };
	char name[128], path_tmp[] = "/tmp/st-test-forced-XXXXXX", *text;
	const struct st_node *touch, *c;
	PProfile *pb;
	unsigned nforced = 0, nnatural = 0;
	FILE *f;
	int fd;

	(void)state;
	forced = data;
	forced.data_class |= ST_DATA_FORCED;
	path[2] = forced;
	st_tree__add_sample(t->tree, path, 3, 7, ST_CALLS_FRAME);
	st_profile__finalize(p);
	p->samples = 12;
	assert_string_equal(st_frame__name(&forced, name, sizeof(name)), "(h*) [heap]+0x40");
	assert_string_equal(st_frame__name(&data, name, sizeof(name)), "(h) [heap]+0x40");
	text = folded_text(p);
	assert_non_null(strstr(text, "faulty;main;touch;(h*) [heap]+0x40 7\n"));
	assert_non_null(strstr(text, "faulty;main;touch;(h) [heap]+0x40 4\n"));
	pb = decode_written(p);
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];

		if (s->value[0] == 7)
			assert_string_equal(s_(pb, label(pb, s, "fault")->str), "forced");
		if (s->value[0] == 7 || s->value[0] == 4)
			assert_string_equal(s_(pb, label(pb, s, "class")->str), "heap");
	}
	fd = mkstemp(path_tmp);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_int_equal(st_profile__write_json(p, f, true), 0);
	fclose(f);
	assert_int_equal(st_profile__read_json(path_tmp, &q, name, sizeof(name)), 0);
	touch = st_tree__root(q->threads[0]->tree)->first_child->first_child;
	for (c = touch->first_child; c; c = c->next_sibling) {
		assert_int_equal(c->f.data_class & ST_DATA_CLASS_MASK, ST_DATA_HEAP);
		if (c->f.data_class & ST_DATA_FORCED) {
			nforced++;
			assert_int_equal(c->base, 7);
		} else {
			nnatural++;
			assert_int_equal(c->base, 4);
		}
	}
	assert_int_equal(nforced, 1);
	assert_int_equal(nnatural, 1);
	unlink(path_tmp);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	free(text);
	st_profile__free(p);
	st_profile__free(q);
}

/* ---- formats and files ----------------------------------------------------- */

static void test_parse_formats(void **state)
{
	unsigned f = 0;
	char err[256] = "", files[256];

	(void)state;
	assert_int_equal(st_report__parse_formats("xtree,svg,pprof", &f, err, sizeof(err)), 0);
	assert_int_equal(f, ST_FORMAT_XTREE | ST_FORMAT_SVG | ST_FORMAT_PPROF);
	assert_string_equal(st_report__files(f, files, sizeof(files)),
			    "xtree.txt, profile.pb.gz, flamegraph.svg");
	assert_string_equal(st_report__files(0, files, sizeof(files)),
			    "xtree.txt, arcflow.txt, profile.json");
	assert_int_equal(st_report__parse_formats("json,pdf", &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown format 'pdf'"));
	assert_int_equal(st_report__parse_formats("", &f, err, sizeof(err)), -EINVAL);
	assert_int_equal(st_report__parse_formats("xtreex", &f, err, sizeof(err)), -EINVAL);
}

static bool exists(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 && st.st_size > 0;
}

static void test_write_dir_formats(void **state)
{
	struct st_profile *p = sample_profile();
	char dir[] = "/tmp/st-unit-out-XXXXXX", cmd[128];
	struct st_report_opts o = { .prefix = "", .formats = ST_FORMAT_FOLDED | ST_FORMAT_PPROF |
								     ST_FORMAT_SVG };

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(st_report__write_dir(p, dir, &o), 0);
	assert_true(exists(dir, "stacks.folded"));
	assert_true(exists(dir, "profile.pb.gz"));
	assert_true(exists(dir, "flamegraph.svg"));
	assert_true(exists(dir, "flamegraph-10.svg"));
	assert_true(exists(dir, "flamegraph-20.svg"));
	assert_false(exists(dir, "xtree.txt"));
	assert_false(exists(dir, "profile.json"));
	/* the default is unchanged: xtree, arcflow, json only */
	o = (struct st_report_opts){ .prefix = "faults." };
	assert_int_equal(st_report__write_dir(p, dir, &o), 0);
	assert_true(exists(dir, "faults.xtree.txt"));
	assert_true(exists(dir, "faults.arcflow.txt"));
	assert_true(exists(dir, "faults.profile.json"));
	assert_false(exists(dir, "faults.flamegraph.svg"));
	/* merged threads: still one file per process */
	o = (struct st_report_opts){ .prefix = "m.", .formats = ST_FORMAT_SVG,
				     .merge_threads = true };
	assert_int_equal(st_report__write_dir(p, dir, &o), 0);
	assert_true(exists(dir, "m.flamegraph.svg"));
	assert_true(exists(dir, "m.flamegraph-20.svg"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	st_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_lines),
		cmocka_unit_test(test_folded_round_trip),
		cmocka_unit_test(test_pprof_fields),
		cmocka_unit_test(test_pprof_build_ids),
		cmocka_unit_test(test_pprof_not_timer),
		cmocka_unit_test(test_inline_json_round_trip),
		cmocka_unit_test(test_inline_drop),
		cmocka_unit_test(test_inline_xtree),
		cmocka_unit_test(test_inline_arcflow),
		cmocka_unit_test(test_inline_pprof),
		cmocka_unit_test(test_svg_process),
		cmocka_unit_test(test_svg_by_function),
		cmocka_unit_test(test_svg_all),
		cmocka_unit_test(test_runtime_pprof),
		cmocka_unit_test(test_runtime_svg),
		cmocka_unit_test(test_data_leaves),
		cmocka_unit_test(test_forced_data_leaves),
		cmocka_unit_test(test_parse_formats),
		cmocka_unit_test(test_write_dir_formats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

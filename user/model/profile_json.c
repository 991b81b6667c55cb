/* profile_json.c - profile.json reader (json-c); the writer is
 * user/output/json.c. */
#include "user/model/profile.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/model/jsonstr.h"
#include "common/strtab.h"

static const char *const kind_names[] = {
	[ST_FRAME_ROOT] = "root",	  [ST_FRAME_CALLSITE] = "callsite",
	[ST_FRAME_LEAF] = "leaf",	  [ST_FRAME_FUNCTION] = "function",
	[ST_FRAME_SPECIAL] = "special",  [ST_FRAME_DATA] = "data",
	[ST_FRAME_INLINE] = "inline",
};

static const char *const class_names[] = {
	[ST_DATA_NONE] = "none", [ST_DATA_MODULE] = "module",
	[ST_DATA_STACK] = "stack", [ST_DATA_HEAP] = "heap",
};

const char *st_frame__kind_name(enum st_frame_kind k)
{
	return (unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : NULL;
}

const char *st_frame__class_name(unsigned data_class)
{
	data_class &= ST_DATA_CLASS_MASK;
	return data_class < sizeof(class_names) / sizeof(class_names[0]) ? class_names[data_class] :
									   NULL;
}

struct reader {
	struct st_profile *p;
	char *err;
	size_t errlen;
	const char *file;
	bool has_unresolved;	/* the document has "unresolved" */
};

static int fail(struct reader *r, const char *where, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "%s: %s: %s", r->file, where, msg);
	return -EINVAL;
}

static int get_u64(struct reader *r, json_object *o, const char *key, const char *where,
		   bool required, __u64 *out)
{
	json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(o, key, &v) || !v) {
		if (!required)
			return 0;
		return fail(r, where, "missing \"%s\"", key);
	}
	if (!json_object_is_type(v, json_type_int))
		return fail(r, where, "\"%s\" must be an integer", key);
	x = json_object_get_int64(v);
	if (x < 0)
		return fail(r, where, "\"%s\" must not be negative", key);
	*out = (__u64)x;
	return 0;
}

/* A finite, non-negative number (a duration, a cost), 0 when absent. */
static int get_seconds(struct reader *r, json_object *o, const char *key, double *out)
{
	json_object *v;

	*out = 0;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return fail(r, "top level", "\"%s\" must be a number", key);
	*out = json_object_get_double(v);
	if (!isfinite(*out) || *out < 0)
		return fail(r, "top level", "\"%s\" must be a finite number >= 0", key);
	return 0;
}

static int get_str(struct reader *r, json_object *o, const char *key, const char *where,
		   const char **out)
{
	json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return fail(r, where, "\"%s\" must be a string or null", key);
	*out = json_object_get_string(v);
	return 0;
}

/* A string of bytes: key_raw (see jsonstr.h) when present, else key. The
 * result is interned in the profile's string table (NULL for null). */
static int get_bytes(struct reader *r, json_object *o, const char *key, const char *where,
		     const char **out)
{
	char rawkey[32], *bytes;
	const char *s;
	int err;

	snprintf(rawkey, sizeof(rawkey), "%s_raw", key);
	if ((err = get_str(r, o, rawkey, where, &s)))
		return err;
	if (!s) {
		if ((err = get_str(r, o, key, where, &s)))
			return err;
		*out = s ? st_strtab__intern(r->p->strs, s) : NULL;
		return s && !*out ? -ENOMEM : 0;
	}
	bytes = st_json__unraw(s);
	if (!bytes)
		return errno == ENOMEM ? -ENOMEM :
		       fail(r, where, "\"%s\" holds a code point above U+00FF", rawkey);
	*out = st_strtab__intern(r->p->strs, bytes);
	free(bytes);
	return *out ? 0 : -ENOMEM;
}

static int parse_kind(const char *s, enum st_frame_kind *k)
{
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		if (strcmp(s, kind_names[i]) == 0) {
			*k = (enum st_frame_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* A data leaf: "class", "symbol", and a signed "offset" (stack). */
static int read_data_leaf(struct reader *r, json_object *c, const char *where,
			  struct st_frame *f)
{
	const char *cls = NULL, *sym = NULL;
	json_object *v;
	int err;

	if ((err = get_str(r, c, "class", where, &cls)) ||
	    (err = get_bytes(r, c, "symbol", where, &sym)))
		return err;
	f->data_class = ST_DATA_NONE;
	for (size_t i = 1; cls && i < sizeof(class_names) / sizeof(class_names[0]); i++)
		if (strcmp(cls, class_names[i]) == 0)
			f->data_class = (__u8)i;
	if (f->data_class == ST_DATA_NONE)
		return fail(r, where, "data leaf needs \"class\": module, stack or heap");
	if (json_object_object_get_ex(c, "forced", &v) && v) {
		if (!json_object_is_type(v, json_type_boolean))
			return fail(r, where, "\"forced\" must be true or false");
		if (json_object_get_boolean(v))
			f->data_class |= ST_DATA_FORCED;
	}
	f->function = sym;
	if (json_object_object_get_ex(c, "offset", &v) && v) {
		if (!json_object_is_type(v, json_type_int))
			return fail(r, where, "\"offset\" must be an integer");
		f->offset = (__u64)json_object_get_int64(v);
	}
	return 0;
}

/* "file" and "line" (both optional; a line needs a file). */
static int read_source(struct reader *r, json_object *c, const char *where, struct st_frame *f)
{
	__u64 line = 0;
	int err;

	if ((err = get_bytes(r, c, "file", where, &f->file)) ||
	    (err = get_u64(r, c, "line", where, false, &line)))
		return err;
	if (line > UINT32_MAX)
		return fail(r, where, "\"line\" %" PRIu64 " is past 2^32 - 1", (uint64_t)line);
	if (line && !f->file)
		return fail(r, where, "\"line\" without \"file\"");
	f->line = (__u32)line;
	return 0;
}

static int read_node(struct reader *r, struct st_tree *t, struct st_node *n, json_object *o,
		     char *where, size_t wlen)
{
	__u64 cum = 0, sum = 0;
	json_object *kids;
	size_t len = strlen(where);
	int err;

	if (!json_object_is_type(o, json_type_object))
		return fail(r, where, "node must be an object");
	if ((err = get_u64(r, o, "base", where, true, &n->base)) ||
	    (err = get_u64(r, o, "cum", where, true, &cum)) ||
	    (err = get_u64(r, o, "calls", where, false, &n->calls)))
		return err;
	if (!json_object_object_get_ex(o, "children", &kids) || !kids)
		kids = NULL;
	else if (!json_object_is_type(kids, json_type_array))
		return fail(r, where, "\"children\" must be an array");
	for (size_t i = 0; kids && i < json_object_array_length(kids); i++) {
		json_object *c = json_object_array_get_idx(kids, i);
		struct st_frame f = { .kind = ST_FRAME_CALLSITE };
		const char *kind = NULL, *addr = NULL;
		json_object *v;
		struct st_node *child;

		snprintf(where + len, wlen - len, ".children[%zu]", i);
		if (!json_object_is_type(c, json_type_object))
			return fail(r, where, "node must be an object");
		if ((err = get_bytes(r, c, "function", where, &f.function)) ||
		    (err = get_bytes(r, c, "system_name", where, &f.system_name)) ||
		    (err = get_bytes(r, c, "module", where, &f.module)))
			return err;
		if ((err = get_str(r, c, "address", where, &addr)))
			return err;
		if (addr) {
			char *end;

			errno = 0;
			f.addr = strtoull(addr, &end, 0);
			if (errno || *end || end == addr)
				return fail(r, where, "\"address\" is not a number: \"%s\"", addr);
		}
		if ((err = get_str(r, c, "kind", where, &kind)))
			return err;
		if (kind && (parse_kind(kind, &f.kind) || f.kind == ST_FRAME_ROOT))
			return fail(r, where, "unknown \"kind\": \"%s\"", kind);
		if (!kind)
			f.kind = f.function && !json_object_object_get_ex(c, "offset", &v) ?
					 ST_FRAME_FUNCTION : ST_FRAME_CALLSITE;
		if (f.kind == ST_FRAME_DATA) {
			if ((err = read_data_leaf(r, c, where, &f)))
				return err;
		} else if ((err = get_u64(r, c, "offset", where, false, &f.offset))) {
			return err;
		}
		if (json_object_object_get_ex(c, "kernel", &v) && v)
			f.kernel = json_object_get_boolean(v);
		if ((err = read_source(r, c, where, &f)))
			return err;
		if (n->depth >= ST_TREE_MAX_DEPTH) {
			char *children = strstr(where, ".children");	/* the thread's root */

			if (children)
				*children = '\0';
			return fail(r, where, "a tree deeper than %d frames (deeper trees are refused)",
				    ST_TREE_MAX_DEPTH);
		}
		child = st_tree__child(t, n, &f, true);
		if (!child)
			return -ENOMEM;
		if (child->base || child->first_child)
			return fail(r, where, "duplicate node (same frame twice under one parent)");
		if ((err = read_node(r, t, child, c, where, wlen)))
			return err;
		if (__builtin_add_overflow(sum, child->cum, &sum))
			return fail(r, where, "the children's cum add up past 2^64");
		where[len] = '\0';
	}
	if (__builtin_add_overflow(n->base, sum, &n->cum) || n->cum != cum)
		return fail(r, where, "cum %" PRIu64 " != base + children's cum %" PRIu64,
			    (uint64_t)cum, (uint64_t)n->cum);
	return 0;
}

static int read_counts(struct reader *r, json_object *doc, const char *key,
		       int (*add)(struct st_profile *p, const char *name, __u64 n))
{
	json_object *o;
	int err = 0;

	if (!json_object_object_get_ex(doc, key, &o) || !o)
		return 0;
	if (!json_object_is_type(o, json_type_object))
		return fail(r, key, "must be an object");
	json_object_object_foreach(o, name, v)
	{
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
			return fail(r, key, "\"%s\" must be a non-negative integer", name);
		err = add(r->p, name, (__u64)json_object_get_int64(v));
		if (err)
			return err;
	}
	return 0;
}

/* Lower-case hex of 1 to 64 bytes (what a build id note holds). */
static bool is_build_id(const char *s)
{
	size_t n = strlen(s);

	return n >= 2 && n <= 128 && !(n % 2) && strspn(s, "0123456789abcdef") == n;
}

/* "modules" (optional): name, path and build_id of each module. */
static int read_modules(struct reader *r, json_object *doc)
{
	json_object *mods;
	char where[64];
	int err;

	if (!json_object_object_get_ex(doc, "modules", &mods) || !mods)
		return 0;
	if (!json_object_is_type(mods, json_type_array))
		return fail(r, "top level", "\"modules\" must be an array");
	for (size_t i = 0; i < json_object_array_length(mods); i++) {
		json_object *mj = json_object_array_get_idx(mods, i);
		const char *name, *path, *bid;

		snprintf(where, sizeof(where), "modules[%zu]", i);
		if (!json_object_is_type(mj, json_type_object))
			return fail(r, where, "must be an object");
		if ((err = get_bytes(r, mj, "name", where, &name)) ||
		    (err = get_bytes(r, mj, "path", where, &path)) ||
		    (err = get_str(r, mj, "build_id", where, &bid)))
			return err;
		if (!name)
			return fail(r, where, "missing \"name\"");
		if (bid && !is_build_id(bid))
			return fail(r, where, "\"build_id\" must be lower-case hex of 1 to 64 bytes");
		if ((err = st_profile__add_module(r->p, name, path, bid)))
			return err;
	}
	return 0;
}

static int read_doc(struct reader *r, json_object *doc)
{
	json_object *threads, *v;
	const char *event = NULL;
	__u64 x = 0, lost = 0;
	char where[4096];
	int err;

	if (!json_object_is_type(doc, json_type_object))
		return fail(r, "top level", "must be an object");
	if ((err = get_str(r, doc, "event", "top level", &event)))
		return err;
	if (!event)
		return fail(r, "top level", "missing \"event\"");
	r->p = st_profile__new(event);
	if (!r->p)
		return -ENOMEM;
	if ((err = get_u64(r, doc, "frequency_hz", "top level", false, &x)))
		return err;
	r->p->frequency_hz = (__u32)x;
	if ((err = get_u64(r, doc, "samples", "top level", true, &r->p->samples)) ||
	    (err = get_u64(r, doc, "lost", "top level", false, &lost)))
		return err;
	if (r->p->samples > INT64_MAX)
		return fail(r, "top level", "\"samples\" past %" PRId64, INT64_MAX);
	if ((err = get_seconds(r, doc, "duration_s", &r->p->duration_s)) ||
	    (err = get_seconds(r, doc, "bpf_ns_per_sample", &r->p->bpf_ns_per_sample)))
		return err;
	if (json_object_object_get_ex(doc, "command", &v) && v &&
	    !(r->p->command = strdup(json_object_get_string(v))))
		return -ENOMEM;
	if ((err = read_counts(r, doc, "lost_by", st_profile__add_lost)) ||
	    (err = read_counts(r, doc, "notes", st_profile__add_note)) ||
	    (err = read_counts(r, doc, "unresolved_by", st_profile__add_unresolved)) ||
	    (err = get_u64(r, doc, "unresolved", "top level", false, &r->p->unresolved)) ||
	    (err = read_modules(r, doc)))
		return err;
	r->has_unresolved = json_object_object_get_ex(doc, "unresolved", &v);
	if (r->p->unresolved > r->p->samples)
		return fail(r, "top level", "\"unresolved\" past \"samples\"");
	for (size_t i = 0; i < r->p->nunresolved_by; i++)
		if (r->p->unresolved_by[i].value > r->p->unresolved)
			return fail(r, "unresolved_by", "\"%s\" past \"unresolved\"",
				    r->p->unresolved_by[i].name);
	if (r->p->nlost_by == 0 && lost && (err = st_profile__add_lost(r->p, "unspecified", lost)))
		return err;
	if (!json_object_object_get_ex(doc, "threads", &threads) ||
	    !json_object_is_type(threads, json_type_array))
		return fail(r, "top level", "\"threads\" must be an array");
	for (size_t i = 0; i < json_object_array_length(threads); i++) {
		json_object *tj = json_object_array_get_idx(threads, i), *root;
		__u64 pid = 0, tid = 0;
		const char *comm = NULL;
		struct st_thread *t;

		snprintf(where, sizeof(where), "threads[%zu]", i);
		if (!json_object_is_type(tj, json_type_object))
			return fail(r, where, "must be an object");
		if ((err = get_u64(r, tj, "pid", where, true, &pid)) ||
		    (err = get_u64(r, tj, "tid", where, true, &tid)) ||
		    (err = get_str(r, tj, "comm", where, &comm)))
			return err;
		if (!json_object_object_get_ex(tj, "root", &root) || !root)
			return fail(r, where, "missing \"root\"");
		t = st_profile__add_thread(r->p, (__u32)pid, (__u32)tid, comm);
		if (!t)
			return -ENOMEM;
		if ((err = get_str(r, tj, "cgroup", where, &comm)) ||
		    (err = st_thread__set_cgroup(t, comm)))
			return err;
		snprintf(where, sizeof(where), "threads[%zu].root", i);
		if ((err = read_node(r, t->tree, st_tree__root(t->tree), root, where,
				     sizeof(where))))
			return err;
	}
	return 0;
}

int st_profile__read_json(const char *path, struct st_profile **out, char *err, size_t errlen)
{
	struct reader r = { .err = err, .errlen = errlen, .file = path };
	json_tokener *tok = NULL;
	json_object *doc = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = NULL;
	int ret;

	*out = NULL;
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		goto cleanup;
	}
	{
		FILE *m = open_memstream(&buf, &len);
		char chunk[65536];
		size_t got;

		if (!m) {
			ret = -ENOMEM;
			goto cleanup;
		}
		while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
			fwrite(chunk, 1, got, m);
		fclose(m);
	}
	/* two JSON levels per tree level, and the document's own */
	tok = json_tokener_new_ex(2 * ST_TREE_MAX_DEPTH + 16);
	if (!tok) {
		ret = -ENOMEM;
		goto cleanup;
	}
	doc = json_tokener_parse_ex(tok, buf, (int)len);
	if (!doc || json_tokener_get_error(tok) != json_tokener_success) {
		size_t off = json_tokener_get_parse_end(tok), line = 1;

		for (size_t i = 0; i < off && i < len; i++)
			line += buf[i] == '\n';
		snprintf(err, errlen, "%s: line %zu: not valid JSON: %s", path, line,
			 json_tokener_error_desc(json_tokener_get_error(tok)));
		ret = -EINVAL;
		goto cleanup;
	}
	ret = read_doc(&r, doc);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	if (ret)
		goto cleanup;
	st_profile__finalize(r.p);
	/* a file from before "unresolved": counted from its trees */
	if (!r.has_unresolved && (ret = st_profile__count_unresolved(r.p))) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto cleanup;
	}
	*out = r.p;
	r.p = NULL;
cleanup:
	st_profile__free(r.p);
	json_object_put(doc);
	if (tok)
		json_tokener_free(tok);
	free(buf);
	if (f)
		fclose(f);
	return ret;
}

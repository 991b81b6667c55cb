/* profile_json.c - profile.json reader (versions 5, 4, 3, 2 and files
 * without a version; "arcflow", derived from the trees, is skipped, so 5
 * reads as 4); the writer is user/output/json.c.
 *
 * One pass over the file with the pull tokenizer (user/model/jsonpull.h):
 * trees are built node by node as the file is read, with no document in
 * memory, so memory is the profile itself plus a fixed amount, whatever the
 * file's size (64-bit offsets throughout). The tree is walked with an
 * explicit stack of at most ST_TREE_MAX_DEPTH levels, no recursion.
 * Version 4: "strings" then "frames" (tables held while reading), then each
 * thread's "nodes", flat rows in pre-order, the path to the current node
 * held as the same stack. Version 3 and older: nested nodes, whose keys may
 * come in any order, but "children" after the node's own frame keys. A
 * thread's "nodes" (or "root") after its "pid", "tid", "comm" and "cgroup"
 * (the writer's order); the other top-level keys in any order. */
#include "user/model/profile.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "user/model/jsonpull.h"
#include "user/model/jsonstr.h"
#include "common/grow.h"
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

#define KIND_PYTHON "python"

static bool is_python(const struct st_frame *f)
{
	return (f->kind == ST_FRAME_CALLSITE || f->kind == ST_FRAME_LEAF) &&
	       f->runtime == ST_RUNTIME_PYTHON;
}

const char *st_frame__json_kind(const struct st_frame *f)
{
	return is_python(f) ? KIND_PYTHON : st_frame__kind_name(f->kind);
}

const char *st_frame__class_name(unsigned data_class)
{
	data_class &= ST_DATA_CLASS_MASK;
	return data_class < sizeof(class_names) / sizeof(class_names[0]) ? class_names[data_class] :
									   NULL;
}

#define MAX_STRING (16u << 20)	/* bytes of one JSON string */

/* A node being read: its frame's keys until it is created (at "children"
 * or at its end), then the sum of its children's cum. */
struct nstate {
	struct st_node *node;		/* NULL until created */
	const char *fn, *fn_raw, *sys, *sys_raw, *mod, *mod_raw, *file, *file_raw;
	const char *sym, *sym_raw;
	bool fn_r, sys_r, mod_r, file_r, sym_r;	/* the _raw key was there */
	bool has_kind, has_base, has_cum, offset_key, has_offset, forced, kernel;
	bool python;	/* "kind": "python" (a call site or the leaf, by "offset") */
	bool has_runtime;	/* "runtime" (version 3); else derived from the above */
	enum st_runtime runtime;
	bool in_children, children_done;
	enum st_frame_kind kind;
	__u8 cls;
	__u64 addr, base, cum, calls, line, sum, nchild;
	struct st_jval offset;
};

struct reader {
	struct st_profile *p;
	char *err;
	size_t errlen;
	const char *file;
	struct st_jpull *j;
	struct st_jval v;
	char *key;		/* the current key, copied */
	size_t keycap;
	bool has_unresolved;	/* the document has "unresolved" */
	size_t thread;		/* index of the thread being read */
	struct nstate *ns;	/* ST_TREE_MAX_DEPTH + 1 */
	char where[4096];
	/* version 4's tables */
	const char **strs;	/* "strings": interned in the profile */
	size_t nstrs, capstrs;
	struct st_frame *frames;	/* "frames" */
	size_t nframes, capframes;
	bool has_strings, has_frames;
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

/* A tokenizer error (bad JSON, a failed read) written out; err. */
static int tok_err(struct reader *r, int err)
{
	if (err == -EINVAL)
		snprintf(r->err, r->errlen, "%s: %s", r->file, st_jpull__error(r->j));
	else if (err && err != -ENOMEM)
		snprintf(r->err, r->errlen, "%s: cannot read: %s", r->file, strerror(-err));
	return err;
}

/* The next token into r->v. */
static int next(struct reader *r)
{
	return tok_err(r, st_jpull__next(r->j, &r->v));
}

/* Past the value r->v starts. */
static int skip(struct reader *r)
{
	return tok_err(r, st_jpull__skip(r->j, &r->v));
}

/* The next token: a key (copied into r->key, 1) or the object's end (0). */
static int next_key(struct reader *r)
{
	int err = next(r);

	if (err)
		return err;
	if (r->v.tok == ST_J_OBJ_END)
		return 0;
	if (r->v.len + 1 > r->keycap) {
		char *k = realloc(r->key, r->v.len + 1);

		if (!k)
			return -ENOMEM;
		r->key = k;
		r->keycap = r->v.len + 1;
	}
	memcpy(r->key, r->v.s, r->v.len + 1);
	return (err = next(r)) ? err : 1;	/* and the value's first token */
}

static bool key_is(const struct reader *r, const char *k)
{
	return strcmp(r->key, k) == 0;
}

/* The current value as a non-negative integer: 0, 1 (null: absent) or an
 * error. */
static int val_u64(struct reader *r, const char *where, __u64 *out)
{
	if (r->v.tok == ST_J_NULL)
		return 1;
	if (r->v.tok != ST_J_INT)
		return fail(r, where, "\"%s\" must be an integer", r->key);
	if (r->v.neg)
		return fail(r, where, "\"%s\" must not be negative", r->key);
	*out = r->v.u;
	return 0;
}

/* A finite, non-negative number (a duration, a cost). */
static int val_seconds(struct reader *r, double *out)
{
	if (r->v.tok == ST_J_NULL)
		return 0;
	if (r->v.tok == ST_J_INT)
		*out = r->v.neg ? (double)r->v.i : (double)r->v.u;
	else if (r->v.tok == ST_J_DBL)
		*out = r->v.d;
	else
		return fail(r, "top level", "\"%s\" must be a number", r->key);
	if (!isfinite(*out) || *out < 0)
		return fail(r, "top level", "\"%s\" must be a finite number >= 0", r->key);
	return 0;
}

/* The current value as a string (valid until the next token) or NULL. */
static int val_str(struct reader *r, const char *where, const char **out)
{
	*out = NULL;
	if (r->v.tok == ST_J_NULL)
		return 0;
	if (r->v.tok != ST_J_STR)
		return fail(r, where, "\"%s\" must be a string or null", r->key);
	*out = r->v.s;
	return 0;
}

/* A string of bytes interned in the profile (NULL for null); raw: a
 * key_raw string (jsonstr.h) to turn back into its bytes. */
static int val_bytes(struct reader *r, const char *where, bool raw, const char **out)
{
	const char *s;
	char *bytes;
	int err;

	if ((err = val_str(r, where, &s)) || !s)
		return err;
	if (!raw) {
		*out = st_strtab__intern(r->p->strs, s);
		return *out ? 0 : -ENOMEM;
	}
	bytes = st_json__unraw(s);
	if (!bytes)
		return errno == ENOMEM ? -ENOMEM :
		       fail(r, where, "\"%s\" holds a code point above U+00FF", r->key);
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

/* "threads[i].root.children[a].children[b]..." down to level d. */
static const char *where_at(struct reader *r, size_t d)
{
	size_t n = (size_t)snprintf(r->where, sizeof(r->where), "threads[%zu].root", r->thread);

	for (size_t k = 1; k <= d && n < sizeof(r->where); k++)
		n += (size_t)snprintf(r->where + n, sizeof(r->where) - n, ".children[%" PRIu64 "]",
				      (uint64_t)(r->ns[k - 1].nchild - 1));
	return r->where;
}

/* One key of a node below the root (the root's frame keys are not read). */
static int node_key(struct reader *r, struct nstate *n, size_t d)
{
	const char *s;
	int err = 0;

	/* the bytes keys, each plain or _raw (the raw one wins) */
	static const struct {
		const char *key;
		size_t plain, raw, flag;
	} bytes[] = {
#define B(k, f) { k, offsetof(struct nstate, f), offsetof(struct nstate, f##_raw), \
		  offsetof(struct nstate, f##_r) }
		B("function", fn), B("system_name", sys), B("module", mod), B("file", file),
		B("symbol", sym),
#undef B
	};
	for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
		size_t kl = strlen(bytes[i].key);

		if (strncmp(r->key, bytes[i].key, kl))
			continue;
		if (!r->key[kl])
			return val_bytes(r, where_at(r, d), false,
					 (const char **)((char *)n + bytes[i].plain));
		if (!strcmp(r->key + kl, "_raw")) {
			err = val_bytes(r, where_at(r, d), true,
					(const char **)((char *)n + bytes[i].raw));
			*(bool *)((char *)n + bytes[i].flag) =
				*(const char **)((char *)n + bytes[i].raw) != NULL;
			return err;
		}
	}
	if (key_is(r, "address")) {
		char *end;

		if ((err = val_str(r, where_at(r, d), &s)) || !s)
			return err;
		errno = 0;
		n->addr = strtoull(s, &end, 0);
		if (errno || *end || end == s)
			return fail(r, where_at(r, d), "\"address\" is not a number: \"%s\"", s);
		return 0;
	}
	if (key_is(r, "kind")) {
		if ((err = val_str(r, where_at(r, d), &s)) || !s)
			return err;
		n->python = strcmp(s, KIND_PYTHON) == 0;
		if (n->python)
			n->kind = ST_FRAME_CALLSITE;	/* or the leaf: node_create() */
		else if (parse_kind(s, &n->kind) || n->kind == ST_FRAME_ROOT)
			return fail(r, where_at(r, d), "unknown \"kind\": \"%s\"", s);
		n->has_kind = true;
		return 0;
	}
	if (key_is(r, "class")) {
		if ((err = val_str(r, where_at(r, d), &s)) || !s)
			return err;
		n->cls = ST_DATA_NONE;
		for (size_t i = 1; i < sizeof(class_names) / sizeof(class_names[0]); i++)
			if (strcmp(s, class_names[i]) == 0)
				n->cls = (__u8)i;
		return 0;
	}
	if (key_is(r, "forced")) {
		if (r->v.tok != ST_J_TRUE && r->v.tok != ST_J_FALSE && r->v.tok != ST_J_NULL)
			return fail(r, where_at(r, d), "\"forced\" must be true or false");
		n->forced = r->v.tok == ST_J_TRUE;
		return 0;
	}
	if (key_is(r, "offset")) {
		n->offset_key = true;
		if (r->v.tok == ST_J_NULL)
			return 0;
		if (r->v.tok != ST_J_INT)
			return fail(r, where_at(r, d), "\"offset\" must be an integer");
		n->has_offset = true;
		n->offset = r->v;
		return 0;
	}
	if (key_is(r, "runtime")) {
		if ((err = val_str(r, where_at(r, d), &s)) || !s)
			return err;
		if (st_runtime__parse(s, &n->runtime))
			return fail(r, where_at(r, d), "unknown \"runtime\": \"%.40s\" (known: "
				    "native, kernel, python, java)", s);
		n->has_runtime = true;
		return 0;
	}
	if (key_is(r, "kernel")) {
		n->kernel = r->v.tok == ST_J_TRUE || (r->v.tok == ST_J_INT && r->v.u);
		return skip(r);
	}
	if (key_is(r, "line")) {
		err = val_u64(r, where_at(r, d), &n->line);
		return err < 0 ? err : 0;
	}
	return skip(r);
}

/* The frame a node's keys (version 3 and older) or a frame row (version 4)
 * gave n, checked; where names it in an error. */
static int frame_of(struct reader *r, struct nstate *n, const char *where, struct st_frame *out)
{
	struct st_frame f = { .kind = ST_FRAME_CALLSITE };

	f.function = n->fn_r ? n->fn_raw : n->fn;
	f.system_name = n->sys_r ? n->sys_raw : n->sys;
	f.module = n->mod_r ? n->mod_raw : n->mod;
	f.addr = n->addr;
	if (n->has_kind)
		f.kind = n->kind;
	else
		f.kind = f.function && !n->offset_key ? ST_FRAME_FUNCTION : ST_FRAME_CALLSITE;
	if (f.kind == ST_FRAME_DATA) {
		if (n->cls == ST_DATA_NONE)
			return fail(r, where, "data leaf needs \"class\": module, stack or heap");
		f.data_class = (__u8)(n->cls | (n->forced ? ST_DATA_FORCED : 0));
		f.function = n->sym_r ? n->sym_raw : n->sym;
		if (n->has_offset)
			f.offset = n->offset.neg ? (__u64)n->offset.i : n->offset.u;
	} else if (n->has_offset) {
		if (n->offset.neg)
			return fail(r, where, "\"offset\" must not be negative");
		f.offset = n->offset.u;
	}
	/* version 2 and older: "kind": "python" or module [python] is a
	 * CPython frame, "kernel": true a kernel one, the rest native */
	if (!n->has_runtime)
		n->runtime = n->python || (f.module && !strcmp(f.module, ST_PYTHON_MODULE) &&
					   (f.kind == ST_FRAME_CALLSITE || f.kind == ST_FRAME_LEAF)) ?
				     ST_RUNTIME_PYTHON : n->kernel ? ST_RUNTIME_KERNEL : ST_RUNTIME_NATIVE;
	else if (n->python && n->runtime != ST_RUNTIME_PYTHON)
		return fail(r, where, "\"kind\": \"python\" with \"runtime\": \"%s\"",
			    st_runtime__name(n->runtime));
	else if (n->kernel && n->runtime != ST_RUNTIME_KERNEL)
		return fail(r, where, "\"kernel\": true with \"runtime\": \"%s\"",
			    st_runtime__name(n->runtime));
	f.runtime = (__u8)n->runtime;
	f.file = n->file_r ? n->file_raw : n->file;
	if (n->line > UINT32_MAX)
		return fail(r, where, "\"line\" %" PRIu64 " is past 2^32 - 1", (uint64_t)n->line);
	if (n->line && !f.file)
		return fail(r, where, "\"line\" without \"file\"");
	f.line = (__u32)n->line;
	if (n->python) {
		/* the writer's is_python(): a call site has its line as offset,
		 * the leaf a null one (its line is the node's) */
		if (!f.module || strcmp(f.module, ST_PYTHON_MODULE) != 0)
			return fail(r, where, "\"kind\": \"python\" needs \"module\": \"%s\"",
				    ST_PYTHON_MODULE);
		f.kind = n->has_offset ? ST_FRAME_CALLSITE : ST_FRAME_LEAF;
	}
	if (f.kind == ST_FRAME_LEAF && is_python(&f))
		f.offset = f.line;	/* as user/collect/runtimes/python/python.c names it (older files too) */
	*out = f;
	return 0;
}

/* Under parent, a new child of frame f with base and calls (version 4's
 * rows and version 3's nodes). */
static int child_of(struct reader *r, struct st_tree *t, struct st_node *parent,
		    const struct st_frame *f, __u64 base, __u64 calls, const char *where,
		    struct st_node **out)
{
	struct st_node *child = st_tree__child(t, parent, f, true);

	if (!child)
		return -ENOMEM;
	if (child->base || child->first_child)
		return fail(r, where, "duplicate node (same frame twice under one parent)");
	child->base = base;
	child->calls = calls;
	*out = child;
	return 0;
}

/* Create node d (below the root) from its keys, under node d - 1. */
static int node_create(struct reader *r, struct st_tree *t, size_t d)
{
	struct nstate *n = &r->ns[d];
	struct st_frame f;
	int err;

	if (!n->has_base)
		return fail(r, where_at(r, d), "missing \"base\"");
	if (!n->has_cum)
		return fail(r, where_at(r, d), "missing \"cum\"");
	if ((err = frame_of(r, n, where_at(r, d), &f)))
		return err;
	return child_of(r, t, r->ns[d - 1].node, &f, n->base, n->calls, where_at(r, d), &n->node);
}

/* A thread's tree; r->v is the root's first token. Iterative: r->ns is
 * the path from the root to the node being read. */
static int read_tree(struct reader *r, struct st_tree *t)
{
	size_t d = 0;
	int err;

	if (r->v.tok != ST_J_OBJ)
		return fail(r, where_at(r, 0), "node must be an object");
	r->ns[0] = (struct nstate){ .node = st_tree__root(t) };
	for (;;) {
		struct nstate *n = &r->ns[d];

		if (n->in_children) {
			if ((err = next(r)))
				return err;
			if (r->v.tok == ST_J_ARR_END) {
				n->in_children = false;
				n->children_done = true;
				continue;
			}
			n->nchild++;
			if (r->v.tok != ST_J_OBJ)
				return fail(r, where_at(r, d + 1), "node must be an object");
			if (d >= ST_TREE_MAX_DEPTH)
				return fail(r, where_at(r, 0), "a tree deeper than %d frames (deeper "
					    "trees are refused)", ST_TREE_MAX_DEPTH);
			r->ns[++d] = (struct nstate){ 0 };
			continue;
		}
		if ((err = next_key(r)) < 0)
			return err;
		if (err == 0) {	/* the node's end */
			__u64 cum;

			if (!n->node && (err = node_create(r, t, d)))
				return err;
			if (d == 0 && !n->has_base)
				return fail(r, where_at(r, d), "missing \"base\"");
			if (d == 0 && !n->has_cum)
				return fail(r, where_at(r, d), "missing \"cum\"");
			n->node->base = n->base;
			n->node->calls = n->calls;
			if (__builtin_add_overflow(n->base, n->sum, &cum) || cum != n->cum)
				return fail(r, where_at(r, d), "cum %" PRIu64 " != base + children's "
					    "cum %" PRIu64, (uint64_t)n->cum, (uint64_t)cum);
			n->node->cum = cum;
			if (d == 0)
				return 0;
			if (__builtin_add_overflow(r->ns[d - 1].sum, cum, &r->ns[d - 1].sum))
				return fail(r, where_at(r, d), "the children's cum add up past 2^64");
			d--;
			continue;
		}
		if (n->children_done && !key_is(r, "children"))
			return fail(r, where_at(r, d), "\"%s\" after \"children\" (write a node's "
				    "\"children\" last)", r->key);
		if (key_is(r, "children")) {
			if (r->v.tok == ST_J_NULL)
				continue;
			if (r->v.tok != ST_J_ARR)
				return fail(r, where_at(r, d), "\"children\" must be an array");
			if (n->children_done)
				return fail(r, where_at(r, d), "\"children\" twice");
			if (!n->node && (err = node_create(r, t, d)))
				return err;
			n->in_children = true;
			continue;
		}
		if (key_is(r, "base") || key_is(r, "cum") || key_is(r, "calls")) {
			__u64 *dst = key_is(r, "base") ? &n->base : key_is(r, "cum") ? &n->cum :
				     &n->calls;

			if ((err = val_u64(r, where_at(r, d), dst)) < 0)
				return err;
			if (err == 0 && key_is(r, "base"))
				n->has_base = true;
			if (err == 0 && key_is(r, "cum"))
				n->has_cum = true;
			continue;
		}
		if (d == 0) {	/* the root's frame keys are not read */
			if ((err = skip(r)))
				return err;
			continue;
		}
		if ((err = node_key(r, n, d)))
			return err;
	}
}

/* ---- version 4: the tables and the flat node list ---------------------- */

/* "strings": each a string, or {"text": ..., "raw": ...} (the raw bytes
 * win). Interned in the profile as they come. */
static int read_strings(struct reader *r)
{
	char where[48];
	int err;

	if (r->v.tok != ST_J_ARR || r->has_strings)
		return fail(r, "top level", "\"strings\" must be an array, given once");
	r->has_strings = true;
	for (;;) {
		const char *text = NULL, *raw = NULL;

		if ((err = next(r)))
			return err;
		if (r->v.tok == ST_J_ARR_END)
			return 0;
		snprintf(where, sizeof(where), "strings[%zu]", r->nstrs);
		if (ST_GROW(r->strs, r->capstrs, r->nstrs, 256))
			return -ENOMEM;
		if (r->v.tok == ST_J_STR) {
			if ((err = val_bytes(r, where, false, &text)))
				return err;
		} else if (r->v.tok == ST_J_OBJ) {
			while ((err = next_key(r)) == 1) {
				if (key_is(r, "text"))
					err = val_bytes(r, where, false, &text);
				else if (key_is(r, "raw"))
					err = val_bytes(r, where, true, &raw);
				else
					err = skip(r);
				if (err)
					return err;
			}
			if (err)
				return err;
		}
		if (!(r->strs[r->nstrs] = raw ? raw : text))
			return fail(r, where, "must be a string or {\"text\", \"raw\"}");
		r->nstrs++;
	}
}

/* The current value as a string of the table (NULL for null). */
static int val_sref(struct reader *r, const char *where, const char *what, const char **out)
{
	*out = NULL;
	if (r->v.tok == ST_J_NULL)
		return 0;
	if (r->v.tok != ST_J_INT || r->v.neg || r->v.u >= r->nstrs)
		return fail(r, where, "%s must be an index into \"strings\" (%zu of them) or null",
			    what, r->nstrs);
	*out = r->strs[r->v.u];
	return 0;
}

/* One frame row: [kind, runtime, function, module, offset, address, file,
 * line, system_name, class, forced], strings by index, trailing values
 * optional (null). r->v is its '['. */
static int read_frame(struct reader *r, const char *where, struct st_frame *f)
{
	static const char *const what[] = { "kind", "runtime", "function", "module", "offset",
					     "address", "file", "line", "system_name", "class",
					     "forced" };
	struct nstate n = { .has_runtime = true };
	const char *s;
	size_t i;
	int err;

	if (r->v.tok != ST_J_ARR)
		return fail(r, where, "a frame must be an array");
	for (i = 0;; i++) {
		if ((err = next(r)))
			return err;
		if (r->v.tok == ST_J_ARR_END)
			break;
		if (i >= sizeof(what) / sizeof(what[0]))
			return fail(r, where, "more than %zu values", sizeof(what) / sizeof(what[0]));
		switch (i) {
		case 0:	/* kind */
		case 1:	/* runtime */
		case 9:	/* class */
			if ((err = val_sref(r, where, what[i], &s)))
				return err;
			if (!s && i < 2)
				return fail(r, where, "%s must not be null", what[i]);
			if (!s)
				break;
			if (i == 0) {
				n.python = strcmp(s, KIND_PYTHON) == 0;
				if (n.python)
					n.kind = ST_FRAME_CALLSITE;
				else if (parse_kind(s, &n.kind))
					return fail(r, where, "unknown kind \"%.40s\"", s);
				n.has_kind = true;
			} else if (i == 1) {
				if (st_runtime__parse(s, &n.runtime))
					return fail(r, where, "unknown runtime \"%.40s\" (known: "
						    "native, kernel, python, java)", s);
			} else {
				for (size_t c = 1; c < sizeof(class_names) / sizeof(class_names[0]); c++)
					if (strcmp(s, class_names[c]) == 0)
						n.cls = (__u8)c;
			}
			break;
		case 2:
			err = val_sref(r, where, what[i], &n.fn);
			break;
		case 3:
			err = val_sref(r, where, what[i], &n.mod);
			break;
		case 6:
			err = val_sref(r, where, what[i], &n.file);
			break;
		case 8:
			err = val_sref(r, where, what[i], &n.sys);
			break;
		case 4:	/* offset */
			if (r->v.tok != ST_J_NULL && r->v.tok != ST_J_INT)
				return fail(r, where, "offset must be an integer or null");
			n.offset_key = true;
			n.has_offset = r->v.tok == ST_J_INT;
			n.offset = r->v;
			break;
		case 5:	/* address */
			if (r->v.tok != ST_J_NULL) {
				char *end;

				if (r->v.tok != ST_J_STR)
					return fail(r, where, "address must be a string or null");
				errno = 0;
				n.addr = strtoull(r->v.s, &end, 0);
				if (errno || *end || end == r->v.s)
					return fail(r, where, "address is not a number: \"%.40s\"",
						    r->v.s);
			}
			break;
		case 7:	/* line */
			if (r->v.tok != ST_J_NULL && (r->v.tok != ST_J_INT || r->v.neg))
				return fail(r, where, "line must be an integer >= 0 or null");
			n.line = r->v.tok == ST_J_INT ? r->v.u : 0;
			break;
		default:	/* forced */
			if (r->v.tok != ST_J_TRUE && r->v.tok != ST_J_FALSE && r->v.tok != ST_J_NULL)
				return fail(r, where, "forced must be true, false or null");
			n.forced = r->v.tok == ST_J_TRUE;
			break;
		}
		if (err)
			return err;
	}
	if (i < 2)
		return fail(r, where, "a frame needs at least its kind and runtime");
	if (n.kind == ST_FRAME_DATA) {	/* a data leaf's function slot is its symbol */
		n.sym = n.fn;
		n.fn = NULL;
	}
	return frame_of(r, &n, where, f);
}

/* "frames": after "strings". */
static int read_frames(struct reader *r)
{
	char where[48];
	int err;

	if (r->v.tok != ST_J_ARR || r->has_frames)
		return fail(r, "top level", "\"frames\" must be an array, given once");
	if (!r->has_strings)
		return fail(r, "top level", "\"frames\" before \"strings\" (write the tables "
			    "first: strings, frames, then threads)");
	r->has_frames = true;
	for (;;) {
		if ((err = next(r)))
			return err;
		if (r->v.tok == ST_J_ARR_END)
			return 0;
		snprintf(where, sizeof(where), "frames[%zu]", r->nframes);
		if (ST_GROW(r->frames, r->capframes, r->nframes, 1024))
			return -ENOMEM;
		if ((err = read_frame(r, where, &r->frames[r->nframes])))
			return err;
		r->nframes++;
	}
}

/* The next integer of a node row into *out (null: *is_null). */
static int row_u64(struct reader *r, const char *where, const char *what, bool null_ok,
		   __u64 *out, bool *is_null)
{
	int err;

	if ((err = next(r)))
		return err;
	if (is_null)
		*is_null = r->v.tok == ST_J_NULL;
	if (r->v.tok == ST_J_NULL && null_ok)
		return 0;
	if (r->v.tok != ST_J_INT || r->v.neg)
		return fail(r, where, "%s must be an integer >= 0", what);
	*out = r->v.u;
	return 0;
}

/* Node d of the path is complete: its cum checked and added to its
 * parent's. */
static int node_done(struct reader *r, size_t d, const char *where)
{
	struct nstate *n = &r->ns[d];
	__u64 cum;

	if (__builtin_add_overflow(n->base, n->sum, &cum) || cum != n->cum)
		return fail(r, where, "node %" PRIu64 ": cum %" PRIu64 " != base + children's cum %"
			    PRIu64, (uint64_t)n->nchild, (uint64_t)n->cum, (uint64_t)cum);
	n->node->cum = cum;
	if (d && __builtin_add_overflow(r->ns[d - 1].sum, cum, &r->ns[d - 1].sum))
		return fail(r, where, "the children's cum add up past 2^64");
	return 0;
}

/* A thread's "nodes": rows [parent, frame, base, cum, calls], a node's id
 * its index, in pre-order: the root first (parent null), then each node
 * after its parent, whose subtree it belongs to. r->ns is the path from
 * the root (an id in nchild), so no more than ST_TREE_MAX_DEPTH levels are
 * held, whatever the file. */
static int read_nodes(struct reader *r, struct st_tree *t)
{
	char where[64];
	size_t d = 0;
	__u64 id;
	int err;

	snprintf(where, sizeof(where), "threads[%zu].nodes", r->thread);
	if (r->v.tok != ST_J_ARR)
		return fail(r, where, "must be an array");
	if (!r->has_frames)
		return fail(r, where, "\"nodes\" before \"frames\" (write the tables first)");
	for (id = 0;; id++) {
		__u64 parent = 0, frame = 0;
		bool root;
		struct nstate *n;

		if ((err = next(r)))
			return err;
		if (r->v.tok == ST_J_ARR_END)
			break;
		snprintf(where, sizeof(where), "threads[%zu].nodes[%" PRIu64 "]", r->thread,
			 (uint64_t)id);
		if (r->v.tok != ST_J_ARR)
			return fail(r, where, "a node must be an array [parent, frame, base, cum, calls]");
		if ((err = row_u64(r, where, "parent", true, &parent, &root)))
			return err;
		if (root != (id == 0))
			return fail(r, where, id ? "only the first node (the root) has no parent" :
					       "the first node is the root: its parent null");
		if (!root) {
			/* back up the path to the parent: the nodes left are complete */
			while (r->ns[d].nchild != parent) {
				if (d == 0)
					return fail(r, where, "parent %" PRIu64 " is not on the path to "
						    "the node before (nodes in pre-order)", (uint64_t)parent);
				if ((err = node_done(r, d, where)))
					return err;
				d--;
			}
			if (d >= ST_TREE_MAX_DEPTH)
				return fail(r, where, "a tree deeper than %d frames (deeper trees are "
					    "refused)", ST_TREE_MAX_DEPTH);
			d++;
		}
		n = &r->ns[d];
		*n = (struct nstate){ .nchild = id };
		if ((err = row_u64(r, where, "frame", false, &frame, NULL)) ||
		    (err = row_u64(r, where, "base", false, &n->base, NULL)) ||
		    (err = row_u64(r, where, "cum", false, &n->cum, NULL)) ||
		    (err = row_u64(r, where, "calls", false, &n->calls, NULL)))
			return err;
		if (frame >= r->nframes)
			return fail(r, where, "frame %" PRIu64 " past \"frames\" (%zu of them)",
				    (uint64_t)frame, r->nframes);
		if ((err = next(r)))
			return err;
		if (r->v.tok != ST_J_ARR_END)
			return fail(r, where, "a node has 5 values: [parent, frame, base, cum, calls]");
		if (root) {
			n->node = st_tree__root(t);
			n->node->base = n->base;
			n->node->calls = n->calls;
		} else if ((err = child_of(r, t, r->ns[d - 1].node, &r->frames[frame], n->base,
					   n->calls, where, &n->node))) {
			return err;
		}
	}
	if (id == 0)
		return fail(r, where, "no root node");
	for (;; d--) {	/* the path's nodes are complete */
		if ((err = node_done(r, d, where)))
			return err;
		if (d == 0)
			return 0;
	}
}

static int add_unresolved(struct st_profile *p, const char *id, const char *module, __u64 n)
{
	(void)id;
	return st_profile__add_unresolved(p, module, n);
}

/* "notes" or "lost_by" (by_id): {"id": {"value": N, "text": "sentence"}}
 * (version 2), or {"sentence": N} (files without a version: the id is
 * derived); "unresolved_by": {module: N}, added with a NULL id. */
static int read_counts(struct reader *r, bool by_id,
		       int (*add)(struct st_profile *p, const char *id, const char *text, __u64 n))
{
	char where[32], *id = NULL, *text = NULL;
	int err;

	snprintf(where, sizeof(where), "%s", r->key);
	if (r->v.tok == ST_J_NULL)
		return 0;
	if (r->v.tok != ST_J_OBJ)
		return fail(r, where, "must be an object");
	while ((err = next_key(r)) == 1) {
		__u64 value = 0;
		bool has_value = false;

		if (r->v.tok == ST_J_INT && !r->v.neg) {	/* version 1 */
			if ((err = add(r->p, NULL, r->key, r->v.u)))
				break;
			continue;
		}
		if (r->v.tok != ST_J_OBJ || !by_id) {
			err = fail(r, where, by_id ? "\"%s\" must be an object or a non-negative "
						     "integer" : "\"%s\" must be a non-negative integer",
				   r->key);
			break;
		}
		free(id);
		free(text);
		text = NULL;
		if (!(id = strdup(r->key))) {
			err = -ENOMEM;
			break;
		}
		while ((err = next_key(r)) == 1) {
			if (key_is(r, "value")) {
				if (r->v.tok != ST_J_INT || r->v.neg) {
					err = fail(r, where, "\"%s\": \"value\" must be a "
						   "non-negative integer", id);
					break;
				}
				value = r->v.u;
				has_value = true;
			} else if (key_is(r, "text") && r->v.tok == ST_J_STR) {
				free(text);
				if (!(text = strdup(r->v.s))) {
					err = -ENOMEM;
					break;
				}
			} else if ((err = skip(r))) {
				break;
			}
		}
		if (err)
			break;
		if (!has_value) {
			err = fail(r, where, "\"%s\" has no \"value\"", id);
			break;
		}
		if ((err = add(r->p, id, text ? text : id, value)))
			break;
	}
	free(id);
	free(text);
	return err;
}

/* "start"/"end": "YYYY-MM-DDTHH:MM:SS[.frac]Z" (UTC) into Unix seconds;
 * null leaves 0. */
static int read_time(struct reader *r, double *out)
{
	struct tm tm = { 0 };
	int n = 0;
	double frac = 0;
	const char *s;

	if (r->v.tok == ST_J_NULL)
		return 0;
	if (r->v.tok != ST_J_STR)
		return fail(r, "top level", "\"%s\" must be a UTC time string or null", r->key);
	s = r->v.s;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 || n != 19)
		return fail(r, "top level", "\"%s\": '%.40s' is not YYYY-MM-DDTHH:MM:SSZ", r->key, s);
	s += n;
	if (*s == '.') {
		double scale = 0.1;

		for (s++; *s >= '0' && *s <= '9'; s++, scale /= 10)
			frac += (*s - '0') * scale;
	}
	if (strcmp(s, "Z") || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return fail(r, "top level", "\"%s\": '%.40s' is not a UTC time", r->key, r->v.s);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*out = (double)timegm(&tm) + frac;
	return 0;
}

/* Lower-case hex of 1 to 64 bytes (what a build id note holds). */
static bool is_build_id(const char *s)
{
	size_t n = strlen(s);

	return n >= 2 && n <= 128 && !(n % 2) && strspn(s, "0123456789abcdef") == n;
}

/* "modules" (optional): name, path and build_id of each module. */
static int read_modules(struct reader *r)
{
	char where[64], bid[132];
	int err;

	if (r->v.tok == ST_J_NULL)
		return 0;
	if (r->v.tok != ST_J_ARR)
		return fail(r, "top level", "\"modules\" must be an array");
	for (size_t i = 0;; i++) {
		const char *name = NULL, *name_raw = NULL, *path = NULL, *path_raw = NULL, *s;
		bool has_bid = false;

		if ((err = next(r)))
			return err;
		if (r->v.tok == ST_J_ARR_END)
			return 0;
		snprintf(where, sizeof(where), "modules[%zu]", i);
		if (r->v.tok != ST_J_OBJ)
			return fail(r, where, "must be an object");
		while ((err = next_key(r)) == 1) {
			if (key_is(r, "name"))
				err = val_bytes(r, where, false, &name);
			else if (key_is(r, "name_raw"))
				err = val_bytes(r, where, true, &name_raw);
			else if (key_is(r, "path"))
				err = val_bytes(r, where, false, &path);
			else if (key_is(r, "path_raw"))
				err = val_bytes(r, where, true, &path_raw);
			else if (key_is(r, "build_id")) {
				if (!(err = val_str(r, where, &s)) && s) {
					if (!is_build_id(s))
						return fail(r, where, "\"build_id\" must be lower-case "
							    "hex of 1 to 64 bytes");
					snprintf(bid, sizeof(bid), "%s", s);
					has_bid = true;
				}
			} else
				err = skip(r);
			if (err)
				return err;
		}
		if (err)
			return err;
		name = name_raw ? name_raw : name;
		path = path_raw ? path_raw : path;
		if (!name)
			return fail(r, where, "missing \"name\"");
		if ((err = st_profile__add_module(r->p, name, path, has_bid ? bid : NULL)))
			return err;
	}
}

/* One element of "threads". */
static int read_thread(struct reader *r)
{
	char where[64], *comm = NULL, *cgroup = NULL;
	__u64 pid = 0, tid = 0;
	bool has_pid = false, has_tid = false, has_root = false;
	struct st_thread *t = NULL;
	const char *s;
	int err;

	snprintf(where, sizeof(where), "threads[%zu]", r->thread);
	if (r->v.tok != ST_J_OBJ)
		return fail(r, where, "must be an object");
	while ((err = next_key(r)) == 1) {
		bool mine = key_is(r, "pid") || key_is(r, "tid") || key_is(r, "comm") ||
			    key_is(r, "cgroup") || key_is(r, "root") || key_is(r, "nodes");

		if (mine && has_root) {
			err = fail(r, where, "\"%s\" after \"root\" or \"nodes\" (write a thread's "
				   "tree last)", r->key);
		} else if (key_is(r, "pid") || key_is(r, "tid")) {
			err = val_u64(r, where, key_is(r, "pid") ? &pid : &tid);
			if (err == 0)
				*(key_is(r, "pid") ? &has_pid : &has_tid) = true;
			err = err < 0 ? err : 0;
		} else if (key_is(r, "comm") || key_is(r, "cgroup")) {
			char **dst = key_is(r, "comm") ? &comm : &cgroup;

			if (!(err = val_str(r, where, &s)) && s) {
				free(*dst);
				if (!(*dst = strdup(s)))
					err = -ENOMEM;
			}
		} else if (key_is(r, "root") || key_is(r, "nodes")) {
			bool flat = key_is(r, "nodes");

			has_root = true;
			if (!has_pid)
				err = fail(r, where, "missing \"pid\"");
			else if (!has_tid)
				err = fail(r, where, "missing \"tid\"");
			else if (!(t = st_profile__add_thread(r->p, (__u32)pid, (__u32)tid, comm)))
				err = -ENOMEM;
			else if (!(err = st_thread__set_cgroup(t, cgroup)))
				err = flat ? read_nodes(r, t->tree) : read_tree(r, t->tree);
		} else {
			err = skip(r);
		}
		if (err)
			break;
	}
	free(comm);
	free(cgroup);
	if (err)
		return err;
	if (!has_pid)
		return fail(r, where, "missing \"pid\"");
	if (!has_tid)
		return fail(r, where, "missing \"tid\"");
	if (!has_root)
		return fail(r, where, "missing \"nodes\" (or version 3's \"root\")");
	return 0;
}

static int read_doc(struct reader *r)
{
	bool has_event = false, has_unit = false, has_samples = false, has_threads = false;
	__u64 x = 0, lost = 0;
	const char *s;
	int err;

	if ((err = next(r)))
		return err;
	if (r->v.tok != ST_J_OBJ)
		return fail(r, "top level", "must be an object");
	r->p = st_profile__new("");
	if (!r->p)
		return -ENOMEM;
	while ((err = next_key(r)) == 1) {
		if (key_is(r, "event")) {
			if ((err = val_str(r, "top level", &s)))
				return err;
			if (s) {
				free(r->p->event);
				if (!(r->p->event = strdup(s)))
					return -ENOMEM;
				has_event = true;
				if (!has_unit)
					r->p->unit = st_unit__of(s);
			}
		} else if (key_is(r, "unit")) {
			if ((err = val_str(r, "top level", &s)))
				return err;
			if (s) {	/* version 3 files without it count samples */
				r->p->unit = !strcmp(s, "nanoseconds") ? ST_UNIT_NS : ST_UNIT_COUNT;
				has_unit = true;
			}
		} else if (key_is(r, "frequency_hz")) {
			if ((err = val_u64(r, "top level", &x)) < 0)
				return err;
			r->p->frequency_hz = err ? 0 : (__u32)x;
		} else if (key_is(r, "samples")) {
			if ((err = val_u64(r, "top level", &r->p->samples)) < 0)
				return err;
			has_samples = err == 0;
		} else if (key_is(r, "lost") || key_is(r, "unresolved")) {
			if (key_is(r, "unresolved"))
				r->has_unresolved = true;
			if ((err = val_u64(r, "top level", key_is(r, "lost") ? &lost :
						       &r->p->unresolved)) < 0)
				return err;
		} else if (key_is(r, "duration_s")) {
			if ((err = val_seconds(r, &r->p->duration_s)))
				return err;
		} else if (key_is(r, "bpf_ns_per_sample")) {
			if ((err = val_seconds(r, &r->p->bpf_ns_per_sample)))
				return err;
		} else if (key_is(r, "command") && r->v.tok == ST_J_STR) {
			free(r->p->command);
			if (!(r->p->command = strdup(r->v.s)))
				return -ENOMEM;
		} else if (key_is(r, "lost_by")) {
			if ((err = read_counts(r, true, st_profile__add_lost_id)))
				return err;
		} else if (key_is(r, "notes")) {
			if ((err = read_counts(r, true, st_profile__add_note_id)))
				return err;
		} else if (key_is(r, "start") || key_is(r, "end")) {
			if ((err = read_time(r, key_is(r, "start") ? &r->p->start_s : &r->p->end_s)))
				return err;
		} else if (key_is(r, "unresolved_by")) {
			if ((err = read_counts(r, false, add_unresolved)))
				return err;
		} else if (key_is(r, "strings")) {
			if ((err = read_strings(r)))
				return err;
		} else if (key_is(r, "frames")) {
			if ((err = read_frames(r)))
				return err;
		} else if (key_is(r, "modules")) {
			if ((err = read_modules(r)))
				return err;
		} else if (key_is(r, "threads")) {
			if (r->v.tok != ST_J_ARR || has_threads)
				return fail(r, "top level", "\"threads\" must be an array");
			has_threads = true;
			for (r->thread = 0;; r->thread++) {
				if ((err = next(r)))
					return err;
				if (r->v.tok == ST_J_ARR_END)
					break;
				if ((err = read_thread(r)))
					return err;
			}
		} else if ((err = skip(r))) {
			return err;
		}
	}
	if (err)
		return err;
	if ((err = next(r)))	/* the end of the file, nothing but white space before it */
		return err;
	if (!has_event)
		return fail(r, "top level", "missing \"event\"");
	if (!has_samples)
		return fail(r, "top level", "missing \"samples\"");
	if (r->p->samples > INT64_MAX)
		return fail(r, "top level", "\"samples\" past %" PRId64, INT64_MAX);
	if (r->p->unresolved > r->p->samples)
		return fail(r, "top level", "\"unresolved\" past \"samples\"");
	for (size_t i = 0; i < r->p->nunresolved_by; i++)
		if (r->p->unresolved_by[i].value > r->p->unresolved)
			return fail(r, "unresolved_by", "\"%s\" past \"unresolved\"",
				    r->p->unresolved_by[i].name);
	if (r->p->nlost_by == 0 && lost && (err = st_profile__add_lost(r->p, "unspecified", lost)))
		return err;
	if (!has_threads)
		return fail(r, "top level", "\"threads\" must be an array");
	return 0;
}

int st_profile__read_json(const char *path, struct st_profile **out, char *err, size_t errlen)
{
	struct reader r = { .err = err, .errlen = errlen, .file = path };
	int fd, ret;

	*out = NULL;
	err[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return ret;
	}
	/* two JSON levels per tree level, and the document's own */
	r.j = st_jpull__new(fd, 2 * ST_TREE_MAX_DEPTH + 16, MAX_STRING);
	r.ns = calloc(ST_TREE_MAX_DEPTH + 1, sizeof(*r.ns));
	if (!r.j || !r.ns) {
		ret = -ENOMEM;
		goto cleanup;
	}
	ret = read_doc(&r);
	if (ret)
		goto cleanup;
	st_profile__finalize(r.p);
	/* a file from before "unresolved": counted from its trees */
	if (!r.has_unresolved && (ret = st_profile__count_unresolved(r.p)))
		goto cleanup;
	*out = r.p;
	r.p = NULL;
cleanup:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	st_profile__free(r.p);
	st_jpull__free(r.j);
	free(r.ns);
	free(r.key);
	free(r.strs);
	free(r.frames);
	close(fd);
	return ret;
}

/* namer.c - names a raw tree's frames: symbols, source lines (voted by
 * samples), inline chains, data symbols, JIT code (see namer.h). */
#include "user/symbolize/namer.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/strtab.h"
#include "common/tree.h"
#include "common/u64map.h"
#include "binsym/perfmap.h"
#include "binsym/symbolizer.h"
#include "user/collect/collector.h"
#include "user/collect/procmaps.h"
#include "user/collect/runtimes/java/java.h"
#include "user/collect/runtimes/python/python.h"
#include "user/symbolize/demangle.h"

struct st_namer {
	struct st_symbolizer *sym;
	struct st_demangler *dm;	/* NULL: names as the symbol tables have them */
	struct st_python *py;	/* CPython frames' names, or NULL */
	struct st_java *java;	/* HotSpot frames' names, or NULL */
	bool no_inline;			/* no inline frames (source lines still) */
};

struct st_namer *st_namer__new(struct st_symbolizer *sym)
{
	struct st_namer *n = calloc(1, sizeof(*n));

	if (n)
		n->sym = sym;
	return n;
}

void st_namer__free(struct st_namer *n)
{
	free(n);
}

void st_namer__demangle(struct st_namer *n, struct st_demangler *d)
{
	n->dm = d;
}

void st_namer__inline(struct st_namer *n, bool on)
{
	n->no_inline = !on;
}

void st_namer__python(struct st_namer *n, struct st_python *py)
{
	n->py = py;
}

void st_namer__java(struct st_namer *n, struct st_java *j)
{
	n->java = j;
}

struct symctx {
	const struct st_namer *n;
	const struct st_raw_thread *t;
	struct st_strtab *strs;
	st_module_fn module_fn;
	void *module_ctx;
	struct st_tree *dst;
	struct st_u64map *votes;	/* leaf node -> struct linevotes */
	__u64 invented;			/* samples under an invented outermost frame */
	int err;
};

/* The source lines seen at a leaf node, weighted by their samples. */
struct linevote {
	const char *file;
	__u32 line;
	__u64 n;
};

struct linevotes {
	struct linevote *v;
	size_t n, cap;
	__u64 best;
};

/* Node d was seen at file:line in `weight` samples: a node takes its first
 * line, then the one with the most samples (a call site has one line; a
 * leaf the line running most often). 0 or -ENOMEM. */
static int vote_line(struct symctx *x, struct st_node *d, const char *file, __u32 line,
		     __u64 weight)
{
	struct linevotes *lv;
	size_t i;

	if (!file)
		return 0;
	if (!d->f.file) {
		d->f.file = file;
		d->f.line = line;
	}
	if (!weight)
		return 0;
	lv = st_u64map__get(x->votes, (__u64)(uintptr_t)d);
	if (!lv) {
		lv = calloc(1, sizeof(*lv));
		if (!lv || st_u64map__put(x->votes, (__u64)(uintptr_t)d, lv)) {
			free(lv);
			return -ENOMEM;
		}
	}
	for (i = 0; i < lv->n && (lv->v[i].file != file || lv->v[i].line != line); i++)
		;
	if (i == lv->n) {
		if (ST_GROW(lv->v, lv->cap, lv->n, 4))
			return -ENOMEM;
		lv->v[lv->n++] = (struct linevote){ .file = file, .line = line };
	}
	lv->v[i].n += weight;
	if (lv->v[i].n > lv->best) {
		lv->best = lv->v[i].n;
		d->f.file = file;
		d->f.line = line;
	}
	return 0;
}

static void free_votes(struct st_u64map *votes)
{
	struct linevotes *lv;
	size_t pos = 0;

	if (!votes)
		return;
	while ((lv = st_u64map__next(votes, &pos, NULL))) {
		free(lv->v);
		free(lv);
	}
	st_u64map__free(votes);
}

/* f->function = name, demangled (the mangled one kept in system_name). */
static void set_name(struct symctx *x, struct st_frame *f, const char *name)
{
	const char *readable = x->n->dm ? st_demangler__name(x->n->dm, name) : NULL;

	f->function = st_strtab__intern(x->strs, readable ? readable : name);
	f->system_name = readable ? st_strtab__intern(x->strs, name) : NULL;
}

/* The profile's modules list: the module a frame names, with its file's
 * path and build id (JSON "modules", pprof mappings). */
static void note_module(struct symctx *x, const char *name, const struct st_mapping *m,
			const struct st_sym *s)
{
	const char *path = m && m->module ? st_module__path(m->module) : NULL;

	if (name && x->module_fn(x->module_ctx, name, path, s->build_id))
		x->err = -ENOMEM;
}

/* A module data address: the module whose loaded extent covers it. False
 * when no module does. */
static bool module_data(struct symctx *x, __u64 addr, struct st_frame *f)
{
	const struct st_mapping *m;
	struct st_sym s = {};

	for (size_t i = 0; (m = st_procmaps__at(x->t->maps, i)); i++) {
		if (!m->module || st_symbolizer__resolve_data(x->n->sym, m->module, m->path, m->start,
							      m->pgoff, addr, &s))
			continue;
		f->data_class = ST_DATA_MODULE | (f->data_class & ST_DATA_FORCED);
		set_name(x, f, s.function);
		f->module = st_strtab__intern(x->strs, s.module);
		note_module(x, f->module, m, &s);
		f->offset = s.function ? s.offset : s.module_offset;
		f->addr = s.function ? addr - s.offset : 0; /* one leaf per symbol */
		return true;
	}
	return false;
}

/* A stack offset from the faulting frame: the local or parameter there. */
static struct st_frame symbolize_stack_data(struct symctx *x, const struct st_frame *raw,
					    __u64 pc)
{
	const struct st_mapping *m = st_procmaps__find(x->t->maps, pc);
	struct st_frame f = *raw;
	const char *name = NULL;
	__u64 off = 0;

	f.addr = 0;
	if (m && m->module && pc &&
	    st_symbolizer__stack_var(x->n->sym, m->module, m->path, m->start, m->pgoff, pc,
				     (__s64)raw->offset, &name, &off) == 0) {
		f.function = st_strtab__intern(x->strs, name);
		f.offset = off;
	}
	return f;
}

/* The source frames of a user frame (st_symbolizer__source()). */
struct srcchain {
	const struct st_src_frame *f;
	size_t n;
};

/* An address in no file-backed mapping: JIT code named by the process's
 * perf map (module ST_PERFMAP_MODULE), else [unknown] with its address. */
static struct st_frame symbolize_jit(struct symctx *x, const struct st_frame *raw)
{
	struct st_frame f = *raw;
	__u64 start = 0;
	/* a return address: the call is just before it */
	const char *name = st_perfmap__find(x->t->jit, raw->addr -
					    (raw->kind == ST_FRAME_CALLSITE ? 1 : 0), &start);

	if (!name)
		return f;
	set_name(x, &f, name);
	f.module = st_strtab__intern(x->strs, ST_PERFMAP_MODULE);
	if (raw->kind == ST_FRAME_CALLSITE)
		f.offset = raw->addr - start;
	else
		f.addr = start;	/* the leaf is the function: its IPs merge */
	return f;
}

/* An address in no file-backed mapping that a JVM's code cache holds (a
 * stub, an adapter: named while the process lived, java.h): runtime java,
 * module "[java]"; function NULL when none. */
static struct st_frame java_code(struct symctx *x, const struct st_frame *raw)
{
	const char *name = st_java__code_name(x->n->java, x->t->pid, x->t->image, raw->addr);
	struct st_frame f = *raw;

	if (!name)
		return f;
	f.function = st_strtab__intern(x->strs, name);
	f.module = st_strtab__intern(x->strs, st_runtime__module(ST_RUNTIME_JAVA));
	f.runtime = ST_RUNTIME_JAVA;
	f.offset = 0;
	return f;
}

/* A native user frame in mapping m: its symbol into *s (resolve()'s
 * result returned) and, when it names a function, its source frames into
 * sc (-ENOMEM into *err). */
static int resolve_user(const struct st_namer *n, const struct st_mapping *m,
			const struct st_frame *raw, struct st_sym *s, struct srcchain *sc, int *err)
{
	bool is_return = raw->kind == ST_FRAME_CALLSITE;
	int r = st_symbolizer__resolve(n->sym, m->module, m->path, m->start, m->pgoff, raw->addr,
				       is_return, s);

	if (m->module && !r && s->function &&
	    st_symbolizer__source(n->sym, m->module, m->path, m->start, m->pgoff, raw->addr,
				  is_return, &sc->f, &sc->n) == -ENOMEM)
		*err = -ENOMEM;
	return r;
}

static struct st_frame symbolize(struct symctx *x, const struct st_frame *raw, __u64 parent_pc,
				 struct srcchain *sc)
{
	const struct st_mapping *m = NULL;
	struct st_frame f = *raw;
	bool is_return = raw->kind == ST_FRAME_CALLSITE;
	struct st_sym s = {};
	int r = -ENOENT;

	if (raw->kind == ST_FRAME_DATA) {
		__u8 cls = raw->data_class & ST_DATA_CLASS_MASK;

		if (cls == ST_DATA_STACK)
			return symbolize_stack_data(x, raw, parent_pc);
		/* module data, and anonymous memory that is a library's .bss */
		if (cls == ST_DATA_MODULE || (cls == ST_DATA_HEAP && raw->module && !strcmp(raw->module, ST_RAW_NAME_ANON))) {
			if (module_data(x, raw->addr, &f))
				return f;
			f.offset = raw->addr;	/* no module covers it: the address */
			f.addr = 0;
		}
		f.module = st_strtab__intern(x->strs, raw->module);
		return f;
	}
	if (raw->kind == ST_FRAME_SPECIAL) {
		f.function = st_strtab__intern(x->strs, raw->function);
		return f;
	}
	if (raw->runtime == ST_RUNTIME_PYTHON)	/* ST_NODE_PYTHON */
		return st_python__symbolize(x->n->py, x->t->pid, x->t->image, raw, x->strs);
	if (raw->runtime == ST_RUNTIME_JAVA)	/* ST_NODE_JAVA */
		return st_java__symbolize(x->n->java, x->t->pid, x->t->image, raw, x->strs, &sc->f,
					  &sc->n);
	if (raw->runtime == ST_RUNTIME_KERNEL) {
		r = st_symbolizer__resolve_kernel(x->n->sym, raw->addr, is_return, &s);
	} else {
		m = st_procmaps__find(x->t->maps, raw->addr);
		if (m)
			r = resolve_user(x->n, m, raw, &s, sc, &x->err);
		else if (!(f = java_code(x, raw)).function)
			return symbolize_jit(x, raw);
		else
			return f;
	}
	if (r)
		return f; /* shown as [unknown] with its address */
	set_name(x, &f, s.function);
	f.module = st_strtab__intern(x->strs, s.module);
	if (raw->runtime != ST_RUNTIME_KERNEL)
		note_module(x, f.module, m, &s);
	if (!s.function)
		f.offset = s.module_offset;
	else if (raw->kind == ST_FRAME_CALLSITE)
		f.offset = s.offset;
	else
		f.addr = s.func_addr; /* the leaf is the function: its IPs merge */
	return f;
}

/* Node d of the symbolized tree stands for raw node s at source frame sf
 * (NULL: none): its file:line, by the samples of a leaf. */
static void place(struct symctx *x, struct st_node *d, const struct st_node *s,
		  const struct st_src_frame *sf)
{
	const char *file;

	if (!sf || !sf->file || x->err)
		return;
	file = st_strtab__intern(x->strs, sf->file);
	if (!file || vote_line(x, d, file, sf->line,
			       s->f.kind == ST_FRAME_LEAF ? s->base : 0))
		x->err = -ENOMEM;
}

/* The frames inlined at raw node s under d (outermost first), each a node
 * with s's calls; the innermost is returned, to take s's base and callees. */
static struct st_node *inline_chain(struct symctx *x, struct st_node *d, const struct st_node *s,
				    const struct srcchain *sc)
{
	for (size_t i = 1; i < sc->n && !x->err; i++) {
		struct st_frame in = { .kind = ST_FRAME_INLINE, .module = d->f.module,
					.runtime = d->f.runtime };

		set_name(x, &in, sc->f[i].function ? sc->f[i].function : "[inlined]");
		d->calls += s->calls;	/* the outer ones: each call of s is one of theirs */
		d = in.function ? st_tree__child(x->dst, d, &in, true) : NULL;
		if (!d) {
			x->err = -ENOMEM;
			return NULL;
		}
		place(x, d, s, &sc->f[i]);
	}
	return d;
}

/* Raw node s named under dst (its inline frames between): the node that
 * takes s's counts and callees, or NULL (x->err set). */
static struct st_node *convert_one(struct symctx *x, struct st_node *dst, const struct st_node *s,
				   const struct st_node *src_parent)
{
	struct srcchain sc = { 0 };
	struct st_frame f = symbolize(x, &s->f, src_parent->f.addr, &sc);
	struct st_node *d = st_tree__child(x->dst, dst, &f, true);

	if (!d) {
		x->err = -ENOMEM;
		return NULL;
	}
	place(x, d, s, sc.n ? &sc.f[0] : NULL);
	if (!x->n->no_inline)
		d = inline_chain(x, d, s, &sc);
	if (x->err)
		return NULL;
	d->base += s->base;
	d->calls += s->calls;
	return d;
}

/* Whether raw node s is a return address no walk can have found: the
 * outermost frame of a stack (its named parent up is the root or
 * [truncated]: a walk's garbage can be several frames deep) in no mapping
 * of a process whose mappings are known (all of them: not a kept list BPF
 * may have cut, st_procmaps__complete()), nor in code a perf map or a
 * runtime names. Such a value is what a frame-pointer walk reads through
 * code that keeps no frame pointer (a new process's samples when the
 * deferred ring is full: bpf/defer.bpf.h), and was shown as [unknown]
 * (16.4% of a process churn's samples, issue 35): it is left out, its
 * callees moved up, and counted; the stack stays marked cut. */
static bool invented(struct symctx *x, const struct st_node *s, const struct st_node *up)
{
	struct st_frame f;

	if (s->f.kind != ST_FRAME_CALLSITE || s->f.runtime != ST_RUNTIME_NATIVE ||
	    !st_procmaps__complete(x->t->maps) ||
	    (up->parent && !(st_frame__is_truncated(&up->f) && !up->parent->parent)))
		return false;
	if (st_procmaps__find(x->t->maps, s->f.addr))
		return false;
	f = java_code(x, &s->f);
	if (f.function)
		return false;
	return !symbolize_jit(x, &s->f).function;
}

/* The samples of s and the nodes under it. */
static __u64 subtree_base(const struct st_node *top)
{
	__u64 n = 0;

	for (const struct st_node *s = top; s; s = st_node__next_in(top, s))
		n += s->base;
	return n;
}

/* The raw tree under src into dst, in pre-order by src's links, at[k]
 * the named node of the raw node k levels below src on the way: no
 * recursion, whatever the tree's depth. */
static void convert(struct symctx *x, struct st_node *dst, const struct st_node *src)
{
	const struct st_node *s = src;
	struct st_node **at = NULL, *d;
	size_t cap = 0, k = 0;

	dst->base += src->base;
	dst->calls += src->calls;
	if (ST_GROW(at, cap, 0, 64)) {
		x->err = -ENOMEM;
		return;
	}
	at[0] = dst;
	while (!x->err) {
		if (s->first_child) {
			s = s->first_child;
			k++;
		} else {
			while (s != src && !s->next_sibling) {
				s = s->parent;
				k--;
			}
			if (s == src)
				break;
			s = s->next_sibling;
		}
		if (invented(x, s, at[k - 1])) {	/* its callees go where it would have */
			d = at[k - 1];
			d->base += s->base;
			/* its CALLS not: they count the garbage value changing, not
			 * calls of d (the root or [truncated]), whose own CALLS then
			 * went past its samples (a forking perl under -a --unwind fp:
			 * a child's root CALLS 8 for 5 samples) */
			if (!s->parent->parent || s->parent->f.kind == ST_FRAME_SPECIAL)
				x->invented += subtree_base(s);	/* (once per chain) */
		} else if (!(d = convert_one(x, at[k - 1], s, s->parent))) {
			break;
		}
		if (ST_GROW(at, cap, k, 64)) {
			x->err = -ENOMEM;
			break;
		}
		at[k] = d;
	}
	free(at);
}

/* Whether symbolize() names raw frame f from a mapping's module. */
static bool user_native(const struct st_frame *f)
{
	return f->kind != ST_FRAME_DATA && f->kind != ST_FRAME_SPECIAL &&
	       f->runtime != ST_RUNTIME_PYTHON && f->runtime != ST_RUNTIME_JAVA &&
	       f->runtime != ST_RUNTIME_KERNEL;
}

int st_namer__settle_sources(const struct st_namer *n, struct st_collector *c)
{
	struct st_raw_thread t;
	size_t pos = 0;
	int err = 0;

	st_symbolizer__source_release(n->sym);	/* what an endpoint's windows opened */
	st_symbolizer__source_gather(n->sym, true);
	while (!err && st_collector__next_thread(c, &pos, &t)) {
		const struct st_node *top = st_tree__root(t.tree), *s = top;

		while (!err && (s = st_node__next_in(top, s))) {
			const struct st_mapping *m = user_native(&s->f) ?
				st_procmaps__find(t.maps, s->f.addr) : NULL;
			struct srcchain sc;
			struct st_sym sym;

			if (m)
				resolve_user(n, m, &s->f, &sym, &sc, &err);
		}
	}
	st_symbolizer__source_gather(n->sym, false);
	if (!err)
		st_symbolizer__source_settle(n->sym);
	return err;
}

int st_namer__tree(const struct st_namer *n, const struct st_raw_thread *t, struct st_tree *dst,
		   struct st_strtab *strs, st_module_fn module_fn, void *module_ctx,
		   __u64 *invented)
{
	struct symctx x = {
		.n = n, .t = t, .strs = strs, .module_fn = module_fn, .module_ctx = module_ctx,
		.dst = dst, .votes = st_u64map__new(),
	};

	if (!x.votes)
		return -ENOMEM;
	convert(&x, st_tree__root(dst), st_tree__root(t->tree));
	free_votes(x.votes);
	if (invented)
		*invented += x.invented;
	return x.err;
}

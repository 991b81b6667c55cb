/* profile.c - the profile model: header counters and one tree per thread. */
#include "user/model/profile.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/strtab.h"
#include "common/u64map.h"

struct st_profile *st_profile__new(const char *event)
{
	struct st_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->event = strdup(event ? event : "cpu-clock");
	p->unit = st_unit__of(p->event);
	p->strs = st_strtab__new();
	if (!p->event || !p->strs) {
		st_profile__free(p);
		return NULL;
	}
	return p;
}

enum st_unit st_unit__of(const char *event)
{
	return event && (!strcmp(event, "offcpu") || !strcmp(event, "wall")) ? ST_UNIT_NS :
									   ST_UNIT_COUNT;
}

const char *st_profile__unit_name(const struct st_profile *p)
{
	if (p->unit == ST_UNIT_NS)
		return "nanoseconds";
	return p->event && !strcmp(p->event, "page-faults") ? "faults" : "samples";
}

const char *st_profile__value(const struct st_profile *p, __u64 v, char *buf, size_t len)
{
	if (p->unit == ST_UNIT_NS)
		snprintf(buf, len, "%.3f", (double)v / 1e6);
	else
		snprintf(buf, len, "%" PRIu64, (uint64_t)v);
	return buf;
}

const char *st_profile__what(const struct st_profile *p)
{
	if (p->unit == ST_UNIT_NS)
		return p->event && !strcmp(p->event, "wall") ? "ms of wall time" : "ms off the CPU";
	return p->event && !strcmp(p->event, "page-faults") ? "page faults" : "samples";
}

const char *st_profile__how(const struct st_profile *p)
{
	if (p->unit != ST_UNIT_NS)
		return "";
	return p->event && !strcmp(p->event, "wall") ?
		       "on-CPU samples weigh their period, off-CPU periods their length" :
		       "each period off the CPU its length";
}

static void thread_free(struct st_thread *t)
{
	if (!t)
		return;
	st_tree__free(t->tree);
	free(t->comm);
	free(t->cgroup);
	free(t);
}

static void counts_free(struct st_count *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].name);
		free(c[i].id);
	}
	free(c);
}

void st_profile__free(struct st_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nthreads; i++)
		thread_free(p->threads[i]);
	free(p->threads);
	counts_free(p->lost_by, p->nlost_by);
	counts_free(p->notes, p->nnotes);
	counts_free(p->unresolved_by, p->nunresolved_by);
	st_strtab__free(p->strs);
	free(p->modules);
	st_u64map__free(p->module_index);
	free(p->command);
	free(p->event);
	free(p);
}

struct st_thread *st_profile__add_thread(struct st_profile *p, __u32 pid, __u32 tid,
					 const char *comm)
{
	struct st_thread *t = calloc(1, sizeof(*t));
	struct st_thread **nt;

	if (!t)
		goto cleanup;
	t->pid = pid;
	t->tid = tid;
	t->comm = strdup(comm ? comm : "");
	t->tree = st_tree__new();
	if (!t->comm || !t->tree)
		goto cleanup;
	nt = realloc(p->threads, (p->nthreads + 1) * sizeof(*nt));
	if (!nt)
		goto cleanup;
	p->threads = nt;
	p->threads[p->nthreads++] = t;
	return t;
cleanup:
	thread_free(t);
	errno = ENOMEM;
	return NULL;
}

struct st_thread *st_profile__find_thread(const struct st_profile *p, __u32 pid, __u32 tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i]->pid == pid && p->threads[i]->tid == tid)
			return p->threads[i];
	return NULL;
}

const char *st_count__id_of(const char *text, char *buf, size_t len)
{
	size_t n = 0;
	bool sep = false;

	for (const unsigned char *s = (const unsigned char *)text; *s && n + 2 < len; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		    (*s >= 'A' && *s <= 'Z')) {
			if (sep && n)
				buf[n++] = '_';
			buf[n++] = (char)(*s | 0x20);
			sep = false;
		} else {
			sep = true;
		}
	}
	if (!n)
		buf[n++] = '_';
	buf[n] = '\0';
	return buf;
}

/* id NULL: none kept (unresolved_by, keyed by module); else counts of one
 * id are one entry, whose text is the first one given. */
static int count_add(struct st_count **arr, size_t *n, const char *id, const char *name, __u64 v)
{
	struct st_count *na;

	for (size_t i = 0; i < *n; i++) {
		if (id ? !strcmp((*arr)[i].id, id) : !strcmp((*arr)[i].name, name)) {
			(*arr)[i].value += v;
			return 0;
		}
	}
	na = realloc(*arr, (*n + 1) * sizeof(*na));
	if (!na)
		return -ENOMEM;
	*arr = na;
	na[*n] = (struct st_count){ .name = strdup(name), .id = id ? strdup(id) : NULL, .value = v };
	if (!na[*n].name || (id && !na[*n].id)) {
		free(na[*n].name);
		free(na[*n].id);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

int st_profile__add_lost_id(struct st_profile *p, const char *id, const char *reason, __u64 n)
{
	char buf[ST_COUNT_ID_MAX];
	int err = count_add(&p->lost_by, &p->nlost_by,
			    id ? id : st_count__id_of(reason, buf, sizeof(buf)), reason, n);

	if (!err)
		p->lost += n;
	return err;
}

int st_profile__add_lost(struct st_profile *p, const char *reason, __u64 n)
{
	return st_profile__add_lost_id(p, NULL, reason, n);
}

int st_profile__add_note_id(struct st_profile *p, const char *id, const char *text, __u64 n)
{
	char buf[ST_COUNT_ID_MAX];

	return count_add(&p->notes, &p->nnotes, id ? id : st_count__id_of(text, buf, sizeof(buf)),
			 text, n);
}

int st_profile__add_note(struct st_profile *p, const char *name, __u64 n)
{
	return st_profile__add_note_id(p, NULL, name, n);
}

int st_profile__add_unresolved(struct st_profile *p, const char *module, __u64 n)
{
	return count_add(&p->unresolved_by, &p->nunresolved_by, NULL, module, n);
}

int st_thread__set_cgroup(struct st_thread *t, const char *cgroup)
{
	char *c = cgroup ? strdup(cgroup) : NULL;

	if (cgroup && !c)
		return -ENOMEM;
	free(t->cgroup);
	t->cgroup = c;
	return 0;
}

const char *st_cgroup__container(const char *cgroup, char *buf, size_t len)
{
	size_t run = 0;

	for (const char *p = cgroup; p && *p; p++) {
		bool hex = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f');

		run = hex ? run + 1 : 0;
		if (run == 64 && !isxdigit((unsigned char)p[1])) {
			snprintf(buf, len, "%.64s", p - 63);
			return buf;
		}
	}
	return NULL;
}

__u64 st_thread__samples(const struct st_thread *t)
{
	return st_tree__root(t->tree)->cum;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct st_thread *x = *(struct st_thread *const *)a;
	const struct st_thread *y = *(struct st_thread *const *)b;
	__u64 sx = st_thread__samples(x), sy = st_thread__samples(y);

	if (sx != sy)
		return sx > sy ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : (x->tid > y->tid);
}

void st_profile__finalize(struct st_profile *p)
{
	for (size_t i = 0; i < p->nthreads; i++)
		st_tree__finalize(p->threads[i]->tree);
	if (p->nthreads)	/* qsort(NULL, 0) is undefined: an empty profile */
		qsort(p->threads, p->nthreads, sizeof(*p->threads), thread_cmp);
}

int st_profile__add_module(struct st_profile *p, const char *name, const char *path,
			   const char *build_id)
{
	struct st_prof_module *m;
	const char *n;
	size_t idx;

	if (!name)
		return -EINVAL;
	if (!p->module_index && !(p->module_index = st_u64map__new()))
		return -ENOMEM;
	n = st_strtab__intern(p->strs, name);
	if (!n)
		return -ENOMEM;
	idx = (size_t)(uintptr_t)st_u64map__get(p->module_index, (__u64)(uintptr_t)n);
	if (idx) {
		m = &p->modules[idx - 1];
		if (!m->build_id && build_id && !(m->build_id = st_strtab__intern(p->strs, build_id)))
			return -ENOMEM;
		return 0;
	}
	if (ST_GROW(p->modules, p->modules_cap, p->nmodules, 16))
		return -ENOMEM;
	m = &p->modules[p->nmodules];
	m->name = n;
	m->path = st_strtab__intern(p->strs, path ? path : name);
	m->build_id = st_strtab__intern(p->strs, build_id);
	if (!m->path || (build_id && !m->build_id) ||
	    st_u64map__put(p->module_index, (__u64)(uintptr_t)n,
			   (void *)(uintptr_t)(p->nmodules + 1)))
		return -ENOMEM;
	p->nmodules++;
	return 0;
}

const struct st_prof_module *st_profile__module(const struct st_profile *p, const char *name)
{
	size_t idx;

	if (!p || !name || !p->module_index)
		return NULL;
	idx = (size_t)(uintptr_t)st_u64map__get(p->module_index, (__u64)(uintptr_t)name);
	if (idx)
		return &p->modules[idx - 1];
	for (size_t i = 0; i < p->nmodules; i++)	/* a name not interned in p */
		if (!strcmp(p->modules[i].name, name))
			return &p->modules[i];
	return NULL;
}

/* Copy counters and header fields; trees are handled by the caller. */
static int copy_header(struct st_profile *dst, const struct st_profile *src)
{
	for (size_t i = 0; i < src->nmodules; i++)
		if (st_profile__add_module(dst, src->modules[i].name, src->modules[i].path,
					   src->modules[i].build_id))
			return -ENOMEM;
	dst->frequency_hz = src->frequency_hz;
	dst->duration_s = src->duration_s;
	dst->samples = src->samples;
	dst->bpf_ns_per_sample = src->bpf_ns_per_sample;
	if (src->command && !(dst->command = strdup(src->command)))
		return -ENOMEM;
	for (size_t i = 0; i < src->nlost_by; i++)
		if (st_profile__add_lost_id(dst, src->lost_by[i].id, src->lost_by[i].name,
					    src->lost_by[i].value))
			return -ENOMEM;
	for (size_t i = 0; i < src->nnotes; i++)
		if (st_profile__add_note_id(dst, src->notes[i].id, src->notes[i].name,
					    src->notes[i].value))
			return -ENOMEM;
	dst->unresolved = src->unresolved;
	dst->start_s = src->start_s;
	dst->end_s = src->end_s;
	for (size_t i = 0; i < src->nunresolved_by; i++)
		if (st_profile__add_unresolved(dst, src->unresolved_by[i].name,
					       src->unresolved_by[i].value))
			return -ENOMEM;
	return 0;
}

struct st_profile *st_profile__merge_threads(const struct st_profile *p)
{
	struct st_profile *m = st_profile__new(p->event);

	if (!m || copy_header(m, p))
		goto cleanup;
	/* node strings must be interned in m's table: share by re-interning */
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct st_thread *t = p->threads[i];
		struct st_thread *d = st_profile__find_thread(m, t->pid, t->pid);

		if (!d && (!(d = st_profile__add_thread(m, t->pid, t->pid, t->comm)) ||
			   st_thread__set_cgroup(d, t->cgroup)))
			goto cleanup;
		if (t->tid == t->pid && strcmp(d->comm, t->comm)) {
			char *c = strdup(t->comm);

			if (!c)
				goto cleanup;
			free(d->comm);
			d->comm = c;
		}
		if (st_profile__merge_tree(m, d->tree, st_tree__root(d->tree),
					   st_tree__root(t->tree)))
			goto cleanup;
	}
	st_profile__finalize(m);
	return m;
cleanup:
	st_profile__free(m);
	errno = ENOMEM;
	return NULL;
}

/* dst's child for src's node c, its strings interned in the profile's
 * strtab (ctx): NULL on ENOMEM. */
static struct st_node *merge_child(struct st_tree *t, struct st_node *dst,
				   const struct st_node *c, void *ctx)
{
	struct st_profile *p = ctx;
	struct st_frame f = c->f;

	f.function = st_strtab__intern(p->strs, c->f.function);
	f.module = st_strtab__intern(p->strs, c->f.module);
	f.system_name = st_strtab__intern(p->strs, c->f.system_name);
	f.file = st_strtab__intern(p->strs, c->f.file);
	if ((c->f.function && !f.function) || (c->f.module && !f.module) ||
	    (c->f.system_name && !f.system_name) || (c->f.file && !f.file))
		return NULL;
	return st_tree__child(t, dst, &f, true);
}

/* Merge src (interned in another profile's strtab) under dst_parent,
 * re-interning strings into p's strtab (no recursion: st_tree__merge_with()). */
int st_profile__merge_tree(struct st_profile *p, struct st_tree *t, struct st_node *dst_parent,
			   const struct st_node *src)
{
	return st_tree__merge_with(t, dst_parent, src, merge_child, p);
}

int st_profile__drop_inline(struct st_profile *p)
{
	for (size_t i = 0; i < p->nthreads; i++) {
		struct st_tree *t = st_tree__without_inline(p->threads[i]->tree);

		if (!t)
			return -ENOMEM;
		st_tree__free(p->threads[i]->tree);
		p->threads[i]->tree = t;
	}
	return 0;
}

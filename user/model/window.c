/* window.c - a profile of the samples of a time window, without taking
 * them from the snapshots: marks of the raw counts, and the named
 * difference since (see window.h). */
#include "user/model/window.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/tree.h"
#include "common/u64map.h"
#include "user/collect/collector.h"
#include "user/model/build.h"
#include "user/model/profile.h"
#include "user/symbolize/namer.h"

struct mark {
	__u64 base, calls;
};

struct st_window {
	struct st_collector *coll;
	const struct st_namer *names;
	__u32 ev;
	char *comm, *container, *cgroup;
	__u32 pid;
	bool own_only, hide_kernel;
	__u32 uid;
	struct st_profile *p;		/* what the folds named so far */
	struct st_u64map *marked;	/* raw node address -> index into marks + 1 */
	struct mark *marks;
	size_t nmarks, capmarks;
	/* the walks' path: the node made at each depth of the raw tree */
	struct st_node *path[ST_TREE_MAX_DEPTH + 1];
	struct st_tree *delta;		/* the walk's output */
	int err;
};

static bool keeps(const struct st_window *w, const struct st_raw_thread *t)
{
	char id[80];

	if (t->ev != w->ev || (w->pid && t->pid != w->pid))
		return false;
	if (w->own_only && (t->uid == ST_UID_UNKNOWN || t->uid != w->uid))
		return false;
	if (w->comm && (!t->comm || strcmp(t->comm, w->comm)))
		return false;
	if (w->cgroup && (!t->cgroup || strcmp(t->cgroup, w->cgroup)))
		return false;
	if (w->container && (!t->cgroup || !st_cgroup__container(t->cgroup, id, sizeof(id)) ||
			     strcmp(id, w->container)))
		return false;
	return true;
}

static int mark_node(const struct st_node *n, void *ctx)
{
	struct st_window *w = ctx;

	if (ST_GROW(w->marks, w->capmarks, w->nmarks, 1024) ||
	    st_u64map__put(w->marked, (__u64)(uintptr_t)n, (void *)(uintptr_t)(w->nmarks + 1)))
		return w->err = -ENOMEM;
	w->marks[w->nmarks++] = (struct mark){ n->base, n->calls };
	return 0;
}

/* Mark every kept thread's raw counts as they are now. */
static int mark(struct st_window *w)
{
	struct st_raw_thread t;
	size_t pos = 0;

	st_u64map__clear(w->marked);
	w->nmarks = 0;
	w->err = 0;
	while (st_collector__next_thread(w->coll, &pos, &t))
		if (keeps(w, &t) && st_tree__walk(t.tree, mark_node, w))
			return w->err ? w->err : -ENOMEM;
	return 0;
}

/* The frame hide_kernel puts for a run of kernel frames. */
static const struct st_frame kernel_frame = {
	.kind = ST_FRAME_SPECIAL, .function = ST_WINDOW_KERNEL, .runtime = ST_RUNTIME_KERNEL,
};

/* n's copy in w->delta, under its parent's copy (the walks are pre-order:
 * w->path holds the copies of n's ancestors); NULL with w->err set. With
 * hide_kernel, a kernel frame under a kernel frame is its parent's copy
 * (one [kernel] frame for the run: *merged set), the first of a run the
 * [kernel] frame. */
static struct st_node *place(struct st_window *w, const struct st_node *n, bool *merged)
{
	struct st_node *d;

	*merged = false;
	if (n->depth > ST_TREE_MAX_DEPTH) {
		w->err = -E2BIG;
		return NULL;
	}
	if (n->depth == 0) {
		d = st_tree__root(w->delta);
	} else if (w->hide_kernel && n->f.runtime == ST_RUNTIME_KERNEL && n->parent &&
		   n->parent->depth && n->parent->f.runtime == ST_RUNTIME_KERNEL) {
		d = w->path[n->depth - 1];
		*merged = true;
	} else if (!(d = st_tree__child(w->delta, w->path[n->depth - 1],
					w->hide_kernel && n->f.runtime == ST_RUNTIME_KERNEL ?
						&kernel_frame : &n->f,
					true))) {
		w->err = -ENOMEM;
	}
	w->path[n->depth] = d;
	return d;
}

/* Walk of a raw tree: the node's counts since its mark, into w->delta. */
static int diff_node(const struct st_node *n, void *ctx)
{
	struct st_window *w = ctx;
	uintptr_t i = (uintptr_t)st_u64map__get(w->marked, (__u64)(uintptr_t)n);
	struct mark m = i ? w->marks[i - 1] : (struct mark){ 0, 0 };
	bool merged;
	struct st_node *d = place(w, n, &merged);

	if (!d)
		return w->err;
	/* counts only grow between resets; a smaller one is taken as new */
	d->base += n->base >= m.base ? n->base - m.base : n->base;
	if (!merged)	/* a hidden run's calls are its first frame's */
		d->calls += n->calls >= m.calls ? n->calls - m.calls : n->calls;
	return 0;
}

/* Walk of the finalized difference: its nodes with samples, into
 * w->delta (a node without samples has none below it either). */
static int copy_grown(const struct st_node *n, void *ctx)
{
	struct st_window *w = ctx;
	struct st_node *d;
	bool merged;

	if (!n->cum)
		return 0;
	if (!(d = place(w, n, &merged)))
		return w->err;
	d->base = n->base;
	d->calls = n->calls;
	return 0;
}

/* Name the growth of one raw thread into the window's profile. */
static int fold_thread(struct st_window *w, const struct st_raw_thread *t)
{
	struct st_tree *all = st_tree__new(), *grown = NULL;
	struct st_raw_thread rt = *t;
	struct st_thread *pt;
	__u64 invented = 0;
	int err = -ENOMEM;

	if (!all)
		return -ENOMEM;
	w->delta = all;
	w->err = 0;
	if (st_tree__walk(t->tree, diff_node, w)) {
		err = w->err ? w->err : -ENOMEM;
		goto cleanup;
	}
	st_tree__finalize(all);
	if (!st_tree__root(all)->cum) {
		err = 0;	/* nothing new in this thread */
		goto cleanup;
	}
	if (!(grown = st_tree__new()))
		goto cleanup;
	w->delta = grown;
	if (st_tree__walk(all, copy_grown, w)) {
		err = w->err ? w->err : -ENOMEM;
		goto cleanup;
	}
	pt = st_profile__find_thread(w->p, t->pid, t->tid);
	if (!pt && (!(pt = st_profile__add_thread(w->p, t->pid, t->tid, t->comm)) ||
		    st_thread__set_cgroup(pt, t->cgroup)))
		goto cleanup;
	rt.tree = grown;
	err = st_namer__tree(w->names, &rt, pt->tree, w->p->strs, st_build__add_module, w->p,
			     &invented);
	if (!err)
		err = st_build__note_invented(w->p, invented);
cleanup:
	w->delta = NULL;
	st_tree__free(all);
	st_tree__free(grown);
	return err;
}

int st_window__fold(struct st_window *w, bool reset)
{
	struct st_raw_thread t;
	size_t pos = 0;
	int err;

	st_collector__read_perfmaps(w->coll);	/* JIT names, as a snapshot reads them */
	while (st_collector__next_thread(w->coll, &pos, &t))
		if (keeps(w, &t) && (err = fold_thread(w, &t)))
			return err;
	if (reset) {
		st_u64map__clear(w->marked);
		w->nmarks = 0;
		return 0;
	}
	return mark(w);
}

struct st_window *st_window__new(struct st_collector *c, const struct st_namer *n,
				 const char *event, __u32 ev, const struct st_window_filter *f)
{
	struct st_window *w = calloc(1, sizeof(*w));

	if (!w)
		goto fail;
	w->coll = c;
	w->names = n;
	w->ev = ev;
	w->pid = f ? f->pid : 0;
	w->own_only = f && f->own_only;
	w->uid = f ? f->uid : 0;
	w->hide_kernel = f && f->hide_kernel;
	if ((f && f->comm && !(w->comm = strdup(f->comm))) ||
	    (f && f->container && !(w->container = strdup(f->container))) ||
	    (f && f->cgroup && !(w->cgroup = strdup(f->cgroup))) ||
	    !(w->p = st_profile__new(event)) || !(w->marked = st_u64map__new()) || mark(w))
		goto fail;
	return w;
fail:
	st_window__free(w);
	errno = ENOMEM;
	return NULL;
}

struct st_profile *st_window__take(struct st_window *w)
{
	struct st_profile *p, *empty;

	if (st_window__fold(w, false) || !(empty = st_profile__new(w->p->event))) {
		errno = ENOMEM;
		return NULL;
	}
	p = w->p;
	w->p = empty;
	if (st_build__finish(p)) {
		st_profile__free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void st_window__free(struct st_window *w)
{
	if (!w)
		return;
	st_profile__free(w->p);
	st_u64map__free(w->marked);
	free(w->marks);
	free(w->comm);
	free(w->container);
	free(w->cgroup);
	free(w);
}

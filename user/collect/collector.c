/* collector.c - merge drained kernel trees; symbolize them into a profile. */
#include "user/collect/collector.h"
#include "user/collect/python.h"
#include "user/model/demangle.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "user/collect/procmaps.h"
#include "user/model/profile.h"
#include "user/model/strtab.h"
#include "symbolizer/perfmap.h"
#include "symbolizer/symbolizer.h"
#include "user/model/tree.h"
#include "user/model/u64map.h"
#include "common/grow.h"

#define NAME_KERNEL "[kernel]"
/* compared by pointer: raw frames carry these very arrays */
static const char NAME_BRK[] = "[heap]";
static const char NAME_ANON[] = "[anon]";
static const char NAME_PYTHON[] = ST_PYTHON_MODULE;	/* raw frames: ST_NODE_PYTHON */

/* Processes are kept per image (pid, the program it runs: self_exec_id,
 * bpf/stacktree.h): an exec starts a new one, and the old one keeps the
 * maps it had, frozen, to symbolize the samples taken before the exec. */
#define PROC_KEY(pid, image) ((__u64)(image) << 32 | (pid))

struct proc {
	__u32 pid, image;
	bool superseded;	/* the process exec'd another image since: frozen */
	struct st_procmaps *maps;
	struct st_perfmap *jit;	/* its /tmp/perf-PID.map, once one was found (or NULL) */
	char *cgroup;	/* cgroup v2 path, read at first sight */
	bool missing;	/* an address no mapping covers: refresh */
	bool gone;	/* /proc/PID is gone: no refresh possible */
	bool exited;	/* the kernel said its main thread exited */
	unsigned followups;	/* reads of its maps still to come (a young process) */
	double next_followup;	/* when, CLOCK_MONOTONIC seconds */
};

/* A process first seen in its dynamic loader maps its libraries a few
 * milliseconds later: its maps are read again after these delays, so that a
 * short-lived process is fully symbolized (no kernel hook for mmap is used). */
static const double followup_delays[] = { 0.005, 0.02, 0.1, 0.5 };
#define FOLLOWUPS (sizeof(followup_delays) / sizeof(followup_delays[0]))

struct rthread {
	__u32 pid, tid, image;
	bool faults;		/* the page-fault tree */
	char comm[ST_COMM_LEN];
	struct st_tree *tree;	/* raw: nodes keyed by (kind, address) */
	struct proc *proc;
	struct st_frame *late;	/* the previous sample the daemon unwound: */
	size_t nlate;		/* its path, root first (CALLS of the next) */
};

struct idref {
	struct rthread *t;
	struct st_node *n;
};

struct st_collector {
	struct st_symbolizer *sym;
	st_comm_fn comm_fn;
	void *comm_ctx;
	struct st_u64map *threads;	/* thread_key() -> rthread */
	struct st_u64map *procs;	/* PROC_KEY(pid, image) -> proc */
	struct st_u64map *images;	/* pid -> the newest image seen + 1 */
	struct idref *ids;		/* per drained record */
	size_t ids_cap;
	__u64 bad;
	__u64 other_image;	/* /proc reads dropped: the process ran another image */
	__u64 inherited;	/* images symbolized with their parent's maps only */
	st_image_fn image_fn;
	void *image_ctx;
	st_refresh_fn refresh_fn;	/* after a process's maps were read (unwinding tables) */
	struct st_demangler *dm;	/* NULL: names as the symbol tables have them */
	const struct st_python *py;	/* CPython frames' names, or NULL */
	bool no_inline;			/* no inline frames (source lines still) */
	void *refresh_ctx;
	struct st_perfmap_stats jit_stats;	/* perf map files read and refused */
};

static void proc_free(struct proc *p)
{
	if (!p)
		return;
	st_procmaps__free(p->maps);
	st_perfmap__free(p->jit);
	free(p->cgroup);
	free(p);
}

/* The cgroup v2 path from /proc/PID/cgroup ("0::/path"), or NULL. */
static char *read_cgroup(__u32 pid)
{
	char path[64], line[4096];
	char *cg = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	while (!cg && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			cg = strdup(line + 3);
		}
	}
	fclose(f);
	return cg;
}

struct st_collector *st_collector__new(struct st_symbolizer *sym, st_comm_fn comm_fn,
				       void *comm_ctx)
{
	struct st_collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->sym = sym;
	c->comm_fn = comm_fn;
	c->comm_ctx = comm_ctx;
	c->threads = st_u64map__new();
	c->procs = st_u64map__new();
	c->images = st_u64map__new();
	if (!c->threads || !c->procs) {
		st_collector__free(c);
		return NULL;
	}
	return c;
}

void st_collector__free(struct st_collector *c)
{
	struct rthread *t;
	struct proc *p;
	size_t pos = 0;

	if (!c)
		return;
	while (c->threads && (t = st_u64map__next(c->threads, &pos, NULL))) {
		st_tree__free(t->tree);
		free(t->late);
		free(t);
	}
	pos = 0;
	while (c->procs && (p = st_u64map__next(c->procs, &pos, NULL)))
		proc_free(p);
	st_u64map__free(c->threads);
	st_u64map__free(c->procs);
	st_u64map__free(c->images);
	free(c->ids);
	free(c);
}

/* The newest image of pid seen so far; an older one's proc is frozen. */
static void note_image(struct st_collector *c, __u32 pid, __u32 image)
{
	__u64 cur = (__u64)(uintptr_t)st_u64map__get(c->images, pid);
	struct proc *old;

	if (cur && (__u32)(cur - 1) == image)
		return;
	if (cur && (old = st_u64map__get(c->procs, PROC_KEY(pid, (__u32)(cur - 1)))) &&
	    (__s32)(image - (__u32)(cur - 1)) > 0)
		old->superseded = true;
	if (!cur || (__s32)(image - (__u32)(cur - 1)) > 0)
		st_u64map__put(c->images, pid, (void *)(uintptr_t)((__u64)image + 1));
}

static struct proc *proc_get(struct st_collector *c, __u32 pid, __u32 image, bool *created)
{
	struct proc *p = st_u64map__get(c->procs, PROC_KEY(pid, image));
	__u64 cur;

	*created = false;
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->image = image;
	p->maps = st_procmaps__new((int)pid);
	p->cgroup = read_cgroup(pid);
	if (!p->maps || st_u64map__put(c->procs, PROC_KEY(pid, image), p)) {
		proc_free(p);
		return NULL;
	}
	note_image(c, pid, image);
	/* an image older than one already seen: /proc/PID is another program now */
	cur = (__u64)(uintptr_t)st_u64map__get(c->images, pid);
	if (cur && (__u32)(cur - 1) != image)
		p->superseded = true;
	*created = true;
	return p;
}

/* Whether /proc/PID shows p's image now (true when the kernel cannot tell):
 * a newer image supersedes p; inside an exec it is either, so neither. */
static bool proc_current(struct st_collector *c, struct proc *p)
{
	__u32 cur;
	int r;

	if (!c->image_fn || (r = c->image_fn(c->image_ctx, p->pid, &cur)) == -ENOENT)
		return true;
	if (r == 0 && cur == p->image)
		return true;
	if (r == 0 && (__s32)(cur - p->image) > 0)
		p->superseded = true;
	c->other_image++;
	return false;
}

/* (Re-)read the process's perf map (JIT code names) while it lives; the
 * entries read stay when the file goes away. A failure other than a
 * refusal (counted in jit_stats) only leaves the names unknown. */
static void jit_refresh(struct st_collector *c, struct proc *p)
{
	if (p->gone || p->superseded)
		return;
	if (!p->jit && !(p->jit = st_perfmap__new()))
		return;
	(void)st_perfmap__read(p->jit, p->pid, &c->jit_stats);
	if (!st_perfmap__count(p->jit)) {	/* none (yet): keep nothing */
		st_perfmap__free(p->jit);
		p->jit = NULL;
	}
}

/* An address some mapping or the perf map names. */
static bool covered(const struct proc *p, __u64 addr)
{
	return st_procmaps__find(p->maps, addr) || st_perfmap__find(p->jit, addr, NULL);
}

static void proc_refresh(struct st_collector *c, struct proc *p)
{
	int r;

	if (p->gone || p->superseded || !proc_current(c, p))
		return;
	if (c->refresh_fn)	/* first: samples are waiting for unwinding tables */
		c->refresh_fn(c->refresh_ctx, p->pid);
	r = st_procmaps__refresh(p->maps, c->sym);
	if (r == -ENOENT || r == -ESRCH)
		p->gone = true;
	else if (!proc_current(c, p))	/* an exec while we read: not p's maps */
		st_procmaps__drop_added(p->maps);
	jit_refresh(c, p);
	p->missing = false;
}

void st_collector__on_image(struct st_collector *c, st_image_fn fn, void *ctx)
{
	c->image_fn = fn;
	c->image_ctx = ctx;
}

void st_collector__on_refresh(struct st_collector *c, st_refresh_fn fn, void *ctx)
{
	c->refresh_fn = fn;
	c->refresh_ctx = ctx;
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int st_collector__capture(struct st_collector *c, __u32 pid, __u32 image, __u32 parent, bool exec)
{
	struct proc *p, *from;
	bool created;

	note_image(c, pid, image);
	p = proc_get(c, pid, image, &created);
	if (!p)
		return -ENOMEM;
	/* a child runs its parent's mappings until it execs: lent first, kept
	 * when its own read comes too late (counted then) */
	from = created && parent && parent != pid ?
	       st_u64map__get(c->procs, PROC_KEY(parent, image)) : NULL;
	if (from && st_procmaps__inherit(p->maps, from->maps) == -ENOMEM)
		return -ENOMEM;
	if (created || exec || p->missing)
		proc_refresh(c, p);
	if (from && st_procmaps__count(p->maps) && p->superseded)
		c->inherited++;
	if (created || exec) {
		p->followups = FOLLOWUPS;
		p->next_followup = mono_now() + followup_delays[0];
	}
	return 0;
}

double st_collector__followups(struct st_collector *c)
{
	double now = mono_now(), next = 1e9;
	struct proc *p;
	size_t pos = 0;

	while ((p = st_u64map__next(c->procs, &pos, NULL))) {
		if (!p->followups || p->gone)
			continue;
		if (p->next_followup <= now) {
			proc_refresh(c, p);
			p->followups--;
			if (p->followups)
				p->next_followup = now + followup_delays[FOLLOWUPS - p->followups];
		}
		if (p->followups && !p->gone && p->next_followup - now < next)
			next = p->next_followup - now;
	}
	return next < 0 ? 0 : next;
}

void st_collector__exited(struct st_collector *c, __u32 pid)
{
	struct proc *p;
	size_t pos = 0;

	while ((p = st_u64map__next(c->procs, &pos, NULL))) {	/* every image of it */
		if (p->pid == pid) {
			jit_refresh(c, p);	/* the last entries, if still readable */
			p->exited = true;
		}
	}
	st_u64map__put(c->images, pid, NULL);	/* the pid may come back, another process */
}

void st_collector__reset(struct st_collector *c)
{
	struct st_u64map *keep;
	struct rthread *t;
	struct proc *p;
	size_t pos = 0;
	__u64 key;

	while ((t = st_u64map__next(c->threads, &pos, NULL))) {
		st_tree__free(t->tree);
		free(t->late);
		free(t);
	}
	st_u64map__clear(c->threads);
	/* processes that ended were written out with this snapshot: evict them
	 * (on ENOMEM, keep everything until the next reset) */
	keep = st_u64map__new();
	if (!keep)
		return;
	pos = 0;
	while ((p = st_u64map__next(c->procs, &pos, &key))) {
		if (!(p->exited || p->gone || p->superseded) && st_u64map__put(keep, key, p)) {
			st_u64map__free(keep);
			return;
		}
	}
	pos = 0;
	while ((p = st_u64map__next(c->procs, &pos, NULL)))
		if (p->exited || p->gone || p->superseded)
			proc_free(p);
	st_u64map__free(c->procs);
	c->procs = keep;
}

void st_collector__refresh_missing(struct st_collector *c)
{
	struct proc *p;
	size_t pos = 0;

	while ((p = st_u64map__next(c->procs, &pos, NULL)))
		if (p->missing)
			proc_refresh(c, p);
}

static void read_comm(__u32 pid, __u32 tid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(comm, (int)len, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

/* A thread's tree: one per (pid, tid, image) and per event. Keys are
 * hashes, probed onwards past another thread's (never 0). */
static __u64 thread_key(__u32 pid, __u32 tid, __u32 image, bool faults)
{
	__u64 k = (((__u64)pid << 32) | tid) * 0x9E3779B97F4A7C15ull;

	k ^= ((__u64)image + 1) * 0xC2B2AE3D27D4EB4Full + (faults ? 0x165667B19E3779F9ull : 0);
	return k ? k : 1;
}

/* The thread's tree, or NULL; *key: where it is or would go. */
static struct rthread *thread_find(struct st_collector *c, __u32 pid, __u32 tid, __u32 image,
				   bool faults, __u64 *key)
{
	struct rthread *t;

	*key = thread_key(pid, tid, image, faults);
	while ((t = st_u64map__get(c->threads, *key))) {
		if (t->pid == pid && t->tid == tid && t->image == image && t->faults == faults)
			return t;
		*key = *key + 1 ? *key + 1 : 1;
	}
	return NULL;
}

/* comm: the name the kernel recorded with the sample (deferred samples), or
 * NULL; it is the image's own, where /proc may show a later exec's. */
static struct rthread *thread_get(struct st_collector *c, __u32 pid, __u32 tid, __u32 image,
				  bool faults, const char *comm)
{
	__u64 key;
	struct rthread *t = thread_find(c, pid, tid, image, faults, &key);
	bool created;

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->tid = tid;
	t->image = image;
	t->faults = faults;
	t->tree = st_tree__new();
	t->proc = proc_get(c, pid, image, &created);
	if (!t->tree || !t->proc || st_u64map__put(c->threads, key, t)) {
		st_tree__free(t->tree);
		free(t);
		return NULL;
	}
	if (created)
		proc_refresh(c, t->proc);
	if (comm && comm[0])
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
	else if (c->comm_fn)
		c->comm_fn(c->comm_ctx, pid, tid, image, t->comm, sizeof(t->comm));
	if (!t->comm[0] && !t->proc->superseded && proc_current(c, t->proc))
		read_comm(pid, tid, t->comm, sizeof(t->comm));	/* /proc has the newest image's */
	return t;
}

static struct st_frame raw_frame(const struct st_node_rec *r)
{
	struct st_frame f = {
		.kind = (r->flags & ST_NODE_LEAF) ? ST_FRAME_LEAF : ST_FRAME_CALLSITE,
		.addr = r->addr,
		.kernel = (r->flags & ST_NODE_KERNEL) != 0,
	};

	if (r->flags & ST_NODE_DATA) {
		f.kind = ST_FRAME_DATA;
		f.data_class = (r->flags & ST_NODE_DATA_MODULE) ? ST_DATA_MODULE :
			       (r->flags & ST_NODE_DATA_STACK)	? ST_DATA_STACK :
								  ST_DATA_HEAP;
		if (r->flags & ST_NODE_FORCED)
			f.data_class |= ST_DATA_FORCED;
		if ((f.data_class & ST_DATA_CLASS_MASK) == ST_DATA_HEAP)
			f.module = (r->flags & ST_NODE_HEAP_BRK) ? NAME_BRK : NAME_ANON;
		if ((f.data_class & ST_DATA_CLASS_MASK) == ST_DATA_STACK || f.module == NAME_BRK) {
			f.offset = r->addr; /* from the CFA; from the brk heap's start */
			f.addr = 0;
		}
	} else if (r->flags & ST_NODE_PYTHON) {
		f.module = NAME_PYTHON;
	} else if (r->flags & ST_NODE_TRUNCATED) {
		f.kind = ST_FRAME_SPECIAL;
		f.function = ST_TRUNCATED_NAME;
	} else if (f.kernel && r->addr == 0) {
		f.kind = ST_FRAME_SPECIAL;
		f.function = NAME_KERNEL;
	}
	return f;
}

int st_collector__merge(struct st_collector *c, const struct st_node_rec *recs, __u32 first_id,
			__u32 count)
{
	if (count > c->ids_cap) {
		struct idref *n = realloc(c->ids, count * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->ids = n;
		c->ids_cap = count;
	}
	for (__u32 i = 0; i < count; i++) {
		const struct st_node_rec *r = &recs[i];
		struct idref *ref = &c->ids[i];
		struct st_frame f;

		ref->t = NULL;
		if (r->flags & ST_NODE_DEAD)
			continue;
		if (r->flags & ST_NODE_ROOT) {
			bool faults = (r->flags & ST_NODE_FAULTS) != 0;
			__u32 pid = (__u32)(r->addr >> 32), tid = (__u32)r->addr;
			__u64 key;
			/* the root's image stands where a parent would */
			bool known = thread_find(c, pid, tid, r->parent, faults, &key) != NULL;

			ref->t = thread_get(c, pid, tid, r->parent, faults, NULL);
			if (!ref->t)
				return -ENOMEM;
			/* a root per generation: threads rename themselves after start */
			if (known && c->comm_fn)
				c->comm_fn(c->comm_ctx, pid, tid, r->parent, ref->t->comm,
					   sizeof(ref->t->comm));
			ref->n = st_tree__root(ref->t->tree);
			ref->n->base += r->base;
			ref->n->calls += r->calls;
			continue;
		}
		if (r->parent < first_id || r->parent - first_id >= i ||
		    !c->ids[r->parent - first_id].t) {
			c->bad++;
			continue;
		}
		ref->t = c->ids[r->parent - first_id].t;
		f = raw_frame(r);
		ref->n = st_tree__child(ref->t->tree, c->ids[r->parent - first_id].n, &f, true);
		if (!ref->n)
			return -ENOMEM;
		ref->n->base += r->base;
		ref->n->calls += r->calls;
		if (f.kind != ST_FRAME_SPECIAL && f.kind != ST_FRAME_DATA && !f.kernel &&
		    !ref->t->proc->gone && !covered(ref->t->proc, f.addr))
			ref->t->proc->missing = true;
	}
	return 0;
}

static bool same_raw(const struct st_frame *a, const struct st_frame *b)
{
	return a->kind == b->kind && a->addr == b->addr && a->kernel == b->kernel &&
	       a->function == b->function;
}

int st_collector__add_sample(struct st_collector *c, __u32 pid, __u32 tid, __u32 image,
			     const char *comm, const __u64 *user, size_t un, bool truncated,
			     const __u64 *kstack, size_t kn)
{
	size_t n = (truncated ? 1 : 0) + un + kn, prefix = 0;
	struct rthread *t = thread_get(c, pid, tid, image, false, comm);
	struct st_frame *path;
	struct st_node *node;

	if (!t || !(path = calloc(n ? n : 1, sizeof(*path))))
		return -ENOMEM;
	n = 0;
	if (truncated) {
		path[n].kind = ST_FRAME_SPECIAL;
		path[n++].function = ST_TRUNCATED_NAME;
	}
	for (size_t i = un; i-- > 0;) {
		path[n].kind = (i == 0 && kn == 0) ? ST_FRAME_LEAF : ST_FRAME_CALLSITE;
		path[n++].addr = user[i];
		if (!t->proc->gone && !covered(t->proc, user[i]))
			t->proc->missing = true;
	}
	for (size_t i = kn; i-- > 0;) {
		path[n].kind = i == 0 ? ST_FRAME_LEAF : ST_FRAME_CALLSITE;
		path[n].kernel = true;
		path[n++].addr = kstack[i];
	}
	while (prefix < n && prefix < t->nlate && same_raw(&path[prefix], &t->late[prefix]))
		prefix++;
	node = st_tree__root(t->tree);
	for (size_t i = 0; i < n; i++) {
		node = st_tree__child(t->tree, node, &path[i], true);
		if (!node) {
			free(path);
			return -ENOMEM;
		}
		/* bpf/sample.bpf.c's rule (kernel-notes/README.md, CALLS): past
		 * the prefix a frame is a new call; the frame at the prefix is the
		 * same call moved on when the previous path had a frame there */
		if (i > prefix || (i == prefix && t->nlate <= prefix))
			node->calls++;
	}
	node->base++;
	free(t->late);
	t->late = path;
	t->nlate = n;
	return 0;
}

int st_collector__late_path(struct st_collector *c, __u32 pid, __u32 tid, __u32 image,
			    struct st_handoff *out)
{
	__u64 key;
	struct rthread *t = thread_find(c, pid, tid, image, false, &key);

	if (!t || !t->late || !t->nlate || t->nlate >= ST_PATH_SLOTS)
		return -ENOENT;
	for (size_t i = 0; i < t->nlate; i++) {
		const struct st_frame *f = &t->late[i];

		/* bpf/sample.bpf.c's path_at(): [truncated], user frames, kernel frames */
		out->addrs[i] = f->kind == ST_FRAME_SPECIAL ? 0 : f->addr;
		out->flags[i] = (__u16)(f->kind == ST_FRAME_SPECIAL ? ST_NODE_TRUNCATED :
					(f->kernel ? ST_NODE_KERNEL : 0) |
					(f->kind == ST_FRAME_LEAF ? ST_NODE_LEAF : 0));
	}
	out->n = (__u32)t->nlate;
	return 0;
}

/* ---- symbolization ------------------------------------------------------ */

struct symctx {
	struct st_collector *c;
	struct st_profile *p;
	struct st_tree *dst;
	struct proc *proc;
	struct st_u64map *votes;	/* leaf node -> struct linevotes */
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

void st_collector__demangle(struct st_collector *c, struct st_demangler *d)
{
	c->dm = d;
}

void st_collector__inline(struct st_collector *c, bool on)
{
	c->no_inline = !on;
}

void st_collector__python(struct st_collector *c, const struct st_python *py)
{
	c->py = py;
}

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
	const char *readable = x->c->dm ? st_demangler__name(x->c->dm, name) : NULL;

	f->function = st_strtab__intern(x->p->strs, readable ? readable : name);
	f->system_name = readable ? st_strtab__intern(x->p->strs, name) : NULL;
}

/* The profile's modules list: the module a frame names, with its file's
 * path and build id (JSON "modules", pprof mappings). */
static void note_module(struct symctx *x, const char *name, const struct st_mapping *m,
			const struct st_sym *s)
{
	const char *path = m && m->module ? st_module__path(m->module) : NULL;

	if (name && st_profile__add_module(x->p, name, path, s->build_id))
		x->err = -ENOMEM;
}

/* A module data address: the module whose loaded extent covers it. False
 * when no module does. */
static bool module_data(struct symctx *x, __u64 addr, struct st_frame *f)
{
	const struct st_mapping *m;
	struct st_sym s = {};

	for (size_t i = 0; (m = st_procmaps__at(x->proc->maps, i)); i++) {
		if (!m->module || st_symbolizer__resolve_data(x->c->sym, m->module, m->path, m->start,
							      m->pgoff, addr, &s))
			continue;
		f->data_class = ST_DATA_MODULE | (f->data_class & ST_DATA_FORCED);
		set_name(x, f, s.function);
		f->module = st_strtab__intern(x->p->strs, s.module);
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
	const struct st_mapping *m = st_procmaps__find(x->proc->maps, pc);
	struct st_frame f = *raw;
	const char *name = NULL;
	__u64 off = 0;

	f.addr = 0;
	if (m && m->module && pc &&
	    st_symbolizer__stack_var(x->c->sym, m->module, m->path, m->start, m->pgoff, pc,
				     (__s64)raw->offset, &name, &off) == 0) {
		f.function = st_strtab__intern(x->p->strs, name);
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
	const char *name = st_perfmap__find(x->proc->jit, raw->addr -
					    (raw->kind == ST_FRAME_CALLSITE ? 1 : 0), &start);

	if (!name)
		return f;
	set_name(x, &f, name);
	f.module = st_strtab__intern(x->p->strs, ST_PERFMAP_MODULE);
	if (raw->kind == ST_FRAME_CALLSITE)
		f.offset = raw->addr - start;
	else
		f.addr = start;	/* the leaf is the function: its IPs merge */
	return f;
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
		if (cls == ST_DATA_MODULE || (cls == ST_DATA_HEAP && raw->module == NAME_ANON)) {
			if (module_data(x, raw->addr, &f))
				return f;
			f.offset = raw->addr;	/* no module covers it: the address */
			f.addr = 0;
		}
		f.module = st_strtab__intern(x->p->strs, raw->module);
		return f;
	}
	if (raw->kind == ST_FRAME_SPECIAL) {
		f.function = st_strtab__intern(x->p->strs, raw->function);
		return f;
	}
	if (raw->module == NAME_PYTHON)
		return st_python__symbolize(x->c->py, x->proc->pid, x->proc->image, raw,
					    x->p->strs);
	if (raw->kernel) {
		r = st_symbolizer__resolve_kernel(x->c->sym, raw->addr, is_return, &s);
	} else {
		m = st_procmaps__find(x->proc->maps, raw->addr);
		if (m)
			r = st_symbolizer__resolve(x->c->sym, m->module, m->path, m->start, m->pgoff,
						   raw->addr, is_return, &s);
		else
			return symbolize_jit(x, raw);
		if (m->module && !r && s.function &&
		    st_symbolizer__source(x->c->sym, m->module, m->path, m->start, m->pgoff,
					  raw->addr, is_return, &sc->f, &sc->n) == -ENOMEM)
			x->err = -ENOMEM;
	}
	if (r)
		return f; /* shown as [unknown] with its address */
	set_name(x, &f, s.function);
	f.module = st_strtab__intern(x->p->strs, s.module);
	if (!raw->kernel)
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
	file = st_strtab__intern(x->p->strs, sf->file);
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
		struct st_frame in = { .kind = ST_FRAME_INLINE, .module = d->f.module };

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

static void convert(struct symctx *x, struct st_node *dst, const struct st_node *src)
{
	dst->base += src->base;
	dst->calls += src->calls;
	for (const struct st_node *s = src->first_child; s && !x->err; s = s->next_sibling) {
		struct srcchain sc = { 0 };
		struct st_frame f = symbolize(x, &s->f, src->f.addr, &sc);
		struct st_node *d = st_tree__child(x->dst, dst, &f, true);

		if (!d) {
			x->err = -ENOMEM;
			return;
		}
		place(x, d, s, sc.n ? &sc.f[0] : NULL);
		if (!x->c->no_inline)
			d = inline_chain(x, d, s, &sc);
		if (x->err)
			return;
		convert(x, d, s);
	}
}

struct st_profile *st_collector__profile(struct st_collector *c, const char *event, bool faults)
{
	struct st_profile *p = st_profile__new(event);
	struct st_u64map *votes = NULL;
	struct rthread *t;
	struct proc *q;
	size_t pos = 0;

	if (!p)
		return NULL;
	while ((q = st_u64map__next(c->procs, &pos, NULL)))	/* the drain's reading */
		jit_refresh(c, q);
	pos = 0;
	votes = st_u64map__new();
	if (!votes)
		goto cleanup;
	while ((t = st_u64map__next(c->threads, &pos, NULL))) {
		struct symctx x = { .c = c, .p = p, .proc = t->proc, .votes = votes };
		struct st_thread *pt;

		if (t->faults != faults)
			continue;
		pt = st_profile__add_thread(p, t->pid, t->tid, t->comm);
		if (!pt || st_thread__set_cgroup(pt, t->proc->cgroup))
			goto cleanup;
		x.dst = pt->tree;
		convert(&x, st_tree__root(pt->tree), st_tree__root(t->tree));
		if (x.err)
			goto cleanup;
	}
	free_votes(votes);
	st_profile__finalize(p);
	for (size_t i = 0; i < p->nthreads; i++)
		p->samples += st_thread__samples(p->threads[i]);
	if (st_profile__count_unresolved(p))
		goto cleanup;
	return p;
cleanup:
	free_votes(votes);
	st_profile__free(p);
	errno = ENOMEM;
	return NULL;
}

size_t st_collector__threads(const struct st_collector *c)
{
	return st_u64map__count(c->threads);
}

size_t st_collector__processes(const struct st_collector *c)
{
	return st_u64map__count(c->procs);
}

size_t st_collector__memory(const struct st_collector *c)
{
	size_t pos = 0, bytes = c->ids_cap * sizeof(struct idref);
	struct rthread *t;
	struct proc *p;

	while ((t = st_u64map__next(c->threads, &pos, NULL)))
		bytes += sizeof(*t) + st_tree__memory(t->tree);
	pos = 0;
	while ((p = st_u64map__next(c->procs, &pos, NULL)))
		bytes += st_perfmap__memory(p->jit);
	return bytes;
}

__u64 st_collector__bad_records(const struct st_collector *c)
{
	return c->bad;
}

__u64 st_collector__other_image_reads(const struct st_collector *c)
{
	return c->other_image;
}

__u64 st_collector__inherited(const struct st_collector *c)
{
	return c->inherited;
}

void st_collector__perfmap_stats(const struct st_collector *c, struct st_perfmap_stats *out)
{
	*out = c->jit_stats;
}

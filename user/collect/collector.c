/* collector.c - merge drained kernel trees and late samples into raw trees;
 * keep each process's maps (see collector.h). */
#include "user/collect/collector.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "bpf/calls.h"
#include "stacktree.h"
#include "user/collect/procmaps.h"
#include "binsym/perfmap.h"
#include "binsym/symbolizer.h"
#include "common/budget.h"
#include "common/hash.h"
#include "common/tree.h"
#include "common/u64map.h"

#define NAME_KERNEL "[kernel]"
/* compared by pointer: raw frames carry these very arrays */
static const char NAME_BRK[] = ST_RAW_NAME_BRK;
static const char NAME_ANON[] = ST_RAW_NAME_ANON;
static const char NAME_PYTHON[] = ST_PYTHON_MODULE;	/* raw frames: ST_NODE_PYTHON */
static const char NAME_JAVA[] = "[java]";	/* raw frames: ST_NODE_JAVA */

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
	__u32 owner;	/* uid, read at first sight (ST_UID_UNKNOWN: not known) */
	bool missing;	/* an address no mapping covers: refresh */
	bool gone;	/* /proc/PID is gone: no refresh possible */
	bool exited;	/* the kernel said its main thread exited */
	unsigned followups;	/* reads of its maps still to come (a young process) */
	double next_followup;	/* when, CLOCK_MONOTONIC seconds */
	__u64 seq;		/* the order processes were first seen in */
	size_t tree_bytes;	/* st_collector__drop_ended(): its threads' trees */
	bool drop;		/* ... and whether they go */
};

/* A process first seen in its dynamic loader maps its libraries a few
 * milliseconds later: its maps are read again after these delays, so that a
 * short-lived process is fully symbolized. One found gone instead takes
 * the mappings BPF kept at its end (place_exec_maps()). */
static const double followup_delays[] = { 0.005, 0.02, 0.1, 0.5 };
#define FOLLOWUPS (sizeof(followup_delays) / sizeof(followup_delays[0]))

struct rthread {
	__u32 pid, tid, image;
	__u32 ev;		/* its event's tree (ST_EVENT_*) */
	char comm[ST_COMM_LEN];
	struct st_tree *tree;	/* raw: nodes keyed by (kind, address) */
	struct proc *proc;
	struct st_frame *late;	/* the previous sample the daemon unwound: */
	size_t nlate;		/* its path, root first (CALLS of the next) */
};

struct idref {
	struct rthread *t;
	struct st_node *n;
	__u64 calls;	/* the record's CALLS delta summed over its subtree */
};

struct st_collector {
	struct st_symbolizer *sym;
	st_comm_fn comm_fn;
	void *comm_ctx;
	struct st_u64map *threads;	/* thread_key() -> rthread (an index) */
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
	void *refresh_ctx;
	st_code_fn code_fn;		/* a runtime's generated code, named by it */
	void *code_ctx;
	struct st_perfmap_stats jit_stats;	/* perf map files read and refused */
	struct st_budget *budget;	/* the daemon's, or NULL */
	size_t maps_bytes;		/* procs: their part ST_BUDGET_MAPS */
	__u64 refused;			/* processes not kept: the budget was full */
	__u64 proc_seq;			/* the last proc's seq */
	struct st_exec_source exec_src;	/* the mappings BPF kept (bpf/endmaps.bpf.h) */
	struct st_exec_place_stats placed;
};

/* What a process costs at least before its maps are read (its struct, a
 * maps table of a few mappings): charged before one is created. */
#define PROC_MIN_BYTES 1024

static size_t proc_bytes(const struct proc *p)
{
	return sizeof(*p) + st_procmaps__memory(p->maps) + st_perfmap__memory(p->jit) +
	       (p->cgroup ? strlen(p->cgroup) + 1 : 0);
}

/* p held before bytes and holds proc_bytes(p) now (0: it is freed). */
static void maps_account(struct st_collector *c, size_t before, size_t now)
{
	c->maps_bytes = c->maps_bytes - before + now;
	st_budget__set(c->budget, ST_BUDGET_MAPS, c->maps_bytes);
}

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

/* The owner of pid as /proc shows it (st_raw_thread.uid), or
 * ST_UID_UNKNOWN. */
static __u32 read_owner(__u32 pid)
{
	char path[64], line[256];
	unsigned long r, e, s, f;
	__u32 owner = ST_UID_UNKNOWN;
	struct stat st;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (stat(path, &st))
		return ST_UID_UNKNOWN;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (!(fp = fopen(path, "re")))
		return ST_UID_UNKNOWN;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "Uid: %lu %lu %lu %lu", &r, &e, &s, &f) == 4) {
			if (r == e && r == s && r == f && r == st.st_uid && r < ST_UID_UNKNOWN)
				owner = (__u32)r;
			break;
		}
	fclose(fp);
	return owner;
}

static bool proc_current(struct st_collector *c, struct proc *p);

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
	if (!c->threads || !c->procs || !c->images) {
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
	st_budget__set(c->budget, ST_BUDGET_MAPS, 0);
	st_u64map__free(c->threads);
	st_u64map__free(c->procs);
	st_u64map__free(c->images);
	free(c->ids);
	free(c);
}

/* The newest image of pid seen so far; an older one's proc is frozen. */
/* p is gone before its maps could be read (or read in full): its
 * executable mappings as BPF kept them at its end, each file taken by its
 * path only if that is the inode mapped (procmaps.h). */
static void place_exec_maps(struct st_collector *c, struct proc *p)
{
	const struct st_exec_source *src = &c->exec_src;
	struct st_exec_maps em;
	struct st_file_path fp;
	__u32 n;
	bool any = false;

	if (!src->maps || src->maps(src->ctx, p->pid, p->image, &em))
		return;
	if (em.image != p->image) {
		c->placed.other_image++;
		return;
	}
	n = em.n < ST_EXEC_MAPS ? em.n : ST_EXEC_MAPS;
	if (n == ST_EXEC_MAPS)	/* the list may be cut: BPF counts the rest, not where */
		st_procmaps__set_partial(p->maps);
	for (__u32 i = 0; i < n; i++) {
		struct st_maps_line l;
		int r = st_procmaps__kept_line(src, &em.m[i], &fp, &l);

		if (r == -ENAMETOOLONG)
			c->placed.no_path++;
		if (r)
			continue;
		r = st_procmaps__place(p->maps, &l, c->sym);
		if (r > 0) {
			c->placed.mappings++;
			any |= strcmp(l.path, "[vdso]") != 0;	/* (the vDSO alone: not counted) */
		}
	}
	if (any)
		c->placed.procs++;
}

static void note_image(struct st_collector *c, __u32 pid, __u32 image)
{
	__u64 cur = (__u64)(uintptr_t)st_u64map__get(c->images, pid);
	struct proc *old;

	if (cur && (__u32)(cur - 1) == image)
		return;
	if (cur && (old = st_u64map__get(c->procs, PROC_KEY(pid, (__u32)(cur - 1)))) &&
	    (__s32)(image - (__u32)(cur - 1)) > 0) {
		old->superseded = true;
		/* exec'd before its maps were read: as BPF kept them then */
		if (!st_procmaps__count(old->maps) || old->followups) {
			size_t before = proc_bytes(old);

			place_exec_maps(c, old);
			maps_account(c, before, proc_bytes(old));
		}
	}
	if (!cur || (__s32)(image - (__u32)(cur - 1)) > 0)
		st_u64map__put(c->images, pid, (void *)(uintptr_t)((__u64)image + 1));
}

/* pid's proc for image, made if new: gated, only when the budget has room
 * for it (else NULL, errno ENOSPC, counted); not gated for a thread with
 * samples (they are kept whatever the budget: the trees are its own part). */
static struct proc *proc_get(struct st_collector *c, __u32 pid, __u32 image, bool gated,
			     bool *created)
{
	struct proc *p = st_u64map__get(c->procs, PROC_KEY(pid, image));
	__u64 cur;

	*created = false;
	if (p)
		return p;
	if (gated && st_budget__charge(c->budget, ST_BUDGET_MAPS, PROC_MIN_BYTES)) {
		c->refused++;	/* its samples stay unsymbolized (module+offset) */
		errno = ENOSPC;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		maps_account(c, 0, 0);
		return NULL;
	}
	p->pid = pid;
	p->image = image;
	p->seq = ++c->proc_seq;
	p->owner = ST_UID_UNKNOWN;
	p->maps = st_procmaps__new((int)pid);
	p->cgroup = read_cgroup(pid);
	if (!p->maps || st_u64map__put(c->procs, PROC_KEY(pid, image), p)) {
		proc_free(p);
		maps_account(c, 0, 0);
		return NULL;
	}
	maps_account(c, 0, proc_bytes(p));
	note_image(c, pid, image);
	/* an image older than one already seen: /proc/PID is another program now */
	cur = (__u64)(uintptr_t)st_u64map__get(c->images, pid);
	if (cur && (__u32)(cur - 1) != image)
		p->superseded = true;
	/* the owner of this image only: /proc shows the newest one */
	if (!p->superseded && proc_current(c, p)) {
		p->owner = read_owner(pid);
		if (!proc_current(c, p))	/* an exec while we read */
			p->owner = ST_UID_UNKNOWN;
	}
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
	size_t before = proc_bytes(p);

	if (p->gone || p->superseded)
		return;
	if (!p->jit && !(p->jit = st_perfmap__new()))
		return;
	(void)st_perfmap__read(p->jit, p->pid, &c->jit_stats);
	if (!st_perfmap__count(p->jit)) {	/* none (yet): keep nothing */
		st_perfmap__free(p->jit);
		p->jit = NULL;
	}
	maps_account(c, before, proc_bytes(p));
}

/* An address some mapping, the perf map or a runtime names. */
static bool covered(const struct st_collector *c, const struct proc *p, __u64 addr)
{
	return st_procmaps__find(p->maps, addr) || st_perfmap__find(p->jit, addr, NULL) ||
	       (c->code_fn && c->code_fn(c->code_ctx, p->pid, p->image, addr));
}

static void proc_refresh(struct st_collector *c, struct proc *p)
{
	size_t before;
	int r;

	if (p->gone || p->superseded || !proc_current(c, p))
		return;
	if (c->refresh_fn)	/* first: samples are waiting for unwinding tables */
		c->refresh_fn(c->refresh_ctx, p->pid);
	before = proc_bytes(p);
	r = st_procmaps__refresh(p->maps, c->sym);
	if (r == -ENOENT || r == -ESRCH)
		p->gone = true;
	else if (!proc_current(c, p))	/* an exec while we read: not p's maps */
		st_procmaps__drop_added(p->maps);
	if (p->gone || (r >= 0 && !st_procmaps__count(p->maps)))	/* (a zombie's are empty) */
		place_exec_maps(c, p);
	maps_account(c, before, proc_bytes(p));
	jit_refresh(c, p);
	p->missing = false;
}

void st_collector__on_exec_maps(struct st_collector *c, const struct st_exec_source *src)
{
	c->exec_src = *src;
}

void st_collector__placed(const struct st_collector *c, struct st_exec_place_stats *out)
{
	*out = c->placed;
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

void st_collector__on_code(struct st_collector *c, st_code_fn fn, void *ctx)
{
	c->code_fn = fn;
	c->code_ctx = ctx;
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The maps of a parent no sample of which came (so never read), read now
 * for its child to borrow: into a table of its own, freed at once, not
 * kept (a parent never sampled costs nothing once its child has them).
 * Only while the parent still runs the image the child was forked in.
 * NULL when it cannot be had. */
static struct st_procmaps *parent_maps(struct st_collector *c, __u32 parent, __u32 image)
{
	struct st_procmaps *pm;
	__u32 cur;

	if (!c->image_fn || c->image_fn(c->image_ctx, parent, &cur) || cur != image)
		return NULL;
	if (!(pm = st_procmaps__new((int)parent)))
		return NULL;
	if (st_procmaps__refresh(pm, c->sym) ||
	    c->image_fn(c->image_ctx, parent, &cur) || cur != image) {	/* exec'd meanwhile */
		st_procmaps__free(pm);
		return NULL;
	}
	return pm;
}

int st_collector__capture(struct st_collector *c, __u32 pid, __u32 image, __u32 parent, bool exec)
{
	struct st_procmaps *unseen = NULL;
	struct proc *p, *from;
	bool created, lent;
	int err;

	note_image(c, pid, image);
	errno = 0;
	p = proc_get(c, pid, image, true, &created);
	if (!p)
		return errno == ENOSPC ? -ENOSPC : -ENOMEM;
	/* a new process under the pid of one that exited, not evicted yet,
	 * with the same image number: their samples share p, so its owner is
	 * no longer known */
	if (!created && p->exited)
		p->owner = ST_UID_UNKNOWN;
	/* a child runs its parent's mappings until it execs: lent first, kept
	 * when its own read comes too late (counted then); a parent never
	 * sampled lends them all the same (a shell's subshell before its exec) */
	from = created && parent && parent != pid ?
	       st_u64map__get(c->procs, PROC_KEY(parent, image)) : NULL;
	if (created && parent && parent != pid && !from)
		unseen = parent_maps(c, parent, image);
	lent = from || unseen;
	err = 0;
	if (lent) {
		size_t before = proc_bytes(p);

		err = st_procmaps__inherit(p->maps, from ? from->maps : unseen);
		maps_account(c, before, proc_bytes(p));
	}
	st_procmaps__free(unseen);
	if (err == -ENOMEM)
		return -ENOMEM;
	if (created || exec || p->missing)
		proc_refresh(c, p);
	if (lent && st_procmaps__count(p->maps) && p->superseded)
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

/* A process that ended (exited, gone from /proc, or exec'd another
 * image): kept only to symbolize the samples it left in the trees. */
static bool proc_ended(const struct proc *p)
{
	return p->exited || p->gone || p->superseded;
}

void st_collector__exited(struct st_collector *c, __u32 pid)
{
	struct proc *p;
	size_t pos = 0;

	while ((p = st_u64map__next(c->procs, &pos, NULL))) {	/* every image of it */
		if (p->pid == pid) {
			jit_refresh(c, p);	/* the last entries, if still readable */
			p->exited = true;
			/* never read, young (libraries mapped since), or read
			 * as it went (a file not opened): its maps as BPF kept
			 * them at its end */
			if (!st_procmaps__count(p->maps) || p->followups ||
			    st_procmaps__unopened(p->maps)) {
				size_t before = proc_bytes(p);

				place_exec_maps(c, p);
				maps_account(c, before, proc_bytes(p));
			}
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
		if (!proc_ended(p) && st_u64map__put(keep, key, p)) {
			st_u64map__free(keep);
			return;
		}
	}
	pos = 0;
	while ((p = st_u64map__next(c->procs, &pos, NULL)))
		if (proc_ended(p)) {
			c->maps_bytes -= proc_bytes(p);
			proc_free(p);
		}
	maps_account(c, 0, 0);
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

/* A thread's tree: one per (pid, tid, image) and per event. */
static __u64 thread_key(__u32 pid, __u32 tid, __u32 image, __u32 ev)
{
	return st_hash_mix(st_hash_mix((__u64)pid << 32 | tid, image), ev);
}

struct thread_id {
	__u32 pid, tid, image;
	__u32 ev;
};

static bool is_thread(const void *value, const void *key)
{
	const struct rthread *t = value;
	const struct thread_id *k = key;

	return t->pid == k->pid && t->tid == k->tid && t->image == k->image &&
	       t->ev == k->ev;
}

/* The thread's tree, or NULL; *key: its key in c->threads. */
static struct rthread *thread_find(struct st_collector *c, __u32 pid, __u32 tid, __u32 image,
				   __u32 ev, __u64 *key)
{
	struct thread_id id = { pid, tid, image, ev };

	*key = thread_key(pid, tid, image, ev);
	return st_u64map__find(c->threads, *key, is_thread, &id);
}

/* comm: the name the kernel recorded with the sample (deferred samples), or
 * NULL; it is the image's own, where /proc may show a later exec's. The
 * newest wins: a thread named by prctl(PR_SET_NAME) after its first
 * samples (deferred from its start: the early program defers them all)
 * is shown by the name it took. */
static struct rthread *thread_get(struct st_collector *c, __u32 pid, __u32 tid, __u32 image,
				  __u32 ev, const char *comm)
{
	__u64 key;
	struct rthread *t = thread_find(c, pid, tid, image, ev, &key);
	bool created;

	if (t) {
		if (comm && comm[0] && strncmp(t->comm, comm, sizeof(t->comm)))
			snprintf(t->comm, sizeof(t->comm), "%s", comm);
		return t;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->tid = tid;
	t->image = image;
	t->ev = ev;
	t->tree = st_tree__new();
	t->proc = proc_get(c, pid, image, false, &created);
	if (!t->tree || !t->proc || st_u64map__add(c->threads, key, t)) {
		st_tree__free(t->tree);
		free(t);
		return NULL;
	}
	/* its maps are read only when the budget has room (else its frames
	 * stay unsymbolized, counted) */
	if (created && st_budget__charge(c->budget, ST_BUDGET_MAPS, PROC_MIN_BYTES)) {
		c->refused++;
	} else if (created) {
		proc_refresh(c, t->proc);
		maps_account(c, 0, 0);	/* the charge: what it holds is counted now */
	}
	if (comm && comm[0])
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
	else if (c->comm_fn)
		c->comm_fn(c->comm_ctx, pid, tid, image, t->comm, sizeof(t->comm));
	if (!t->comm[0] && !t->proc->superseded && proc_current(c, t->proc))
		read_comm(pid, tid, t->comm, sizeof(t->comm));	/* /proc has the newest image's */
	return t;
}

/* An off-CPU leaf's name (ST_NODE_STATE): how its thread left the CPU. */
static const char *st_offcpu_state_name(__u64 state)
{
	static const char *const names[ST_OFFCPU_STATES] = {
		[ST_OFFCPU_PREEMPTED] = "[preempted]",
		[ST_OFFCPU_SLEEPING] = "[sleeping]", [ST_OFFCPU_DISK] = "[uninterruptible]",
		[ST_OFFCPU_IDLE] = "[idle]", [ST_OFFCPU_STOPPED] = "[stopped]",
		[ST_OFFCPU_OTHER] = "[off-cpu]",
	};

	return state < ST_OFFCPU_STATES ? names[state] : names[ST_OFFCPU_OTHER];
}

static struct st_frame raw_frame(const struct st_node_rec *r)
{
	struct st_frame f = {
		.kind = (r->flags & ST_NODE_LEAF) ? ST_FRAME_LEAF : ST_FRAME_CALLSITE,
		.addr = r->addr,
		.runtime = (r->flags & ST_NODE_KERNEL) ? ST_RUNTIME_KERNEL :
			   (r->flags & ST_NODE_PYTHON) ? ST_RUNTIME_PYTHON :
			   (r->flags & ST_NODE_JAVA) ? ST_RUNTIME_JAVA : ST_RUNTIME_NATIVE,
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
	} else if (r->flags & ST_NODE_JAVA) {
		f.module = NAME_JAVA;
	} else if (r->flags & ST_NODE_TRUNCATED) {
		f.kind = ST_FRAME_SPECIAL;
		f.function = ST_TRUNCATED_NAME;
	} else if (r->flags & ST_NODE_STATE) {
		f.kind = ST_FRAME_SPECIAL;
		f.function = st_offcpu_state_name(r->addr);
		f.runtime = ST_RUNTIME_NATIVE;
	} else if (f.runtime == ST_RUNTIME_KERNEL && r->addr == 0) {
		f.kind = ST_FRAME_SPECIAL;
		f.function = NAME_KERNEL;
	}
	return f;
}

/* A record's index in its generation's array, when its parent is a record
 * before it (a root's parent is its image); else count. */
static __u32 parent_index(const struct st_node_rec *r, __u32 i, __u32 first_id, __u32 count)
{
	if (r->flags & (ST_NODE_ROOT | ST_NODE_DEAD) || r->parent < first_id ||
	    r->parent - first_id >= i)
		return count;
	return r->parent - first_id;
}

/* The BPF fold writes a sample's CALLS as deltas (bpf/calls.h: +1 on the
 * leaf, -1 above its first new frame), a node's CALLS the sum of the deltas
 * in its subtree: summed here, children first (a record's parent is an
 * earlier record), in unsigned arithmetic (a record's own delta may be
 * below zero; its subtree's sum is not). */
static void sum_calls(struct idref *ids, const struct st_node_rec *recs, __u32 first_id,
		      __u32 count)
{
	for (__u32 i = 0; i < count; i++)
		ids[i].calls = (recs[i].flags & ST_NODE_DEAD) ? 0 : recs[i].calls;
	for (__u32 i = count; i-- > 0;) {
		__u32 p = parent_index(&recs[i], i, first_id, count);

		if (p < count)
			ids[p].calls += ids[i].calls;
	}
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
	sum_calls(c->ids, recs, first_id, count);
	for (__u32 i = 0; i < count; i++) {
		const struct st_node_rec *r = &recs[i];
		struct idref *ref = &c->ids[i];
		struct st_frame f;
		__u32 p;

		ref->t = NULL;
		if (r->flags & ST_NODE_DEAD)
			continue;
		if (r->flags & ST_NODE_ROOT) {
			__u32 ev = (r->flags & ST_NODE_FAULTS) ? ST_EVENT_FAULTS :
				   (r->flags & ST_NODE_OFFCPU) ? ST_EVENT_OFFCPU : ST_EVENT_CPU;
			__u32 pid = (__u32)(r->addr >> 32), tid = (__u32)r->addr;
			__u64 key;
			/* the root's image stands where a parent would */
			bool known = thread_find(c, pid, tid, r->parent, ev, &key) != NULL;

			ref->t = thread_get(c, pid, tid, r->parent, ev, NULL);
			if (!ref->t)
				return -ENOMEM;
			/* a root per generation: threads rename themselves after start */
			if (known && c->comm_fn)
				c->comm_fn(c->comm_ctx, pid, tid, r->parent, ref->t->comm,
					   sizeof(ref->t->comm));
			ref->n = st_tree__root(ref->t->tree);
			ref->n->base += r->base;
			ref->n->calls += ref->calls;
			continue;
		}
		p = parent_index(r, i, first_id, count);
		if (p == count || !c->ids[p].t) {
			c->bad++;
			continue;
		}
		ref->t = c->ids[p].t;
		f = raw_frame(r);
		ref->n = st_tree__child(ref->t->tree, c->ids[p].n, &f, true);
		if (!ref->n)
			return -ENOMEM;
		ref->n->base += r->base;
		ref->n->calls += ref->calls;
		if (f.kind != ST_FRAME_SPECIAL && f.kind != ST_FRAME_DATA &&
		    f.runtime == ST_RUNTIME_NATIVE && !ref->t->proc->gone &&
		    !covered(c, ref->t->proc, f.addr))
			ref->t->proc->missing = true;
	}
	return 0;
}

static bool same_raw(const struct st_frame *a, const struct st_frame *b)
{
	return a->kind == b->kind && a->addr == b->addr && a->runtime == b->runtime &&
	       a->function == b->function && a->module == b->module;
}

int st_collector__add_sample(struct st_collector *c, __u32 pid, __u32 tid, __u32 image,
			     const char *comm, const __u64 *user, size_t un, bool truncated,
			     const __u64 *kstack, size_t kn)
{
	size_t n = (truncated ? 1 : 0) + un + kn, prefix = 0;
	struct rthread *t = thread_get(c, pid, tid, image, ST_EVENT_CPU, comm);
	struct st_frame *path;
	struct st_node *node;
	bool cut;

	if (!t || !(path = calloc(n ? n : 1, sizeof(*path))))
		return -ENOMEM;
	n = 0;
	if (truncated) {
		path[n].kind = ST_FRAME_SPECIAL;
		path[n++].function = ST_TRUNCATED_NAME;
	}
	for (size_t i = un; i-- > 0;) {
		path[n].kind = (i == 0 && kn == 0) ? ST_FRAME_LEAF : ST_FRAME_CALLSITE;
		if (user[i] & ST_PY_TAG) {	/* merged in (user/collect/runtimes/python/pymerge.h) */
			path[n].module = NAME_PYTHON;
			path[n].runtime = ST_RUNTIME_PYTHON;
			path[n++].addr = user[i] & ~ST_PY_TAG;
			continue;
		}
		if (st_java_entry_is(user[i])) {	/* bpf/hotspot_step.h's */
			path[n].module = NAME_JAVA;
			path[n].runtime = ST_RUNTIME_JAVA;
			path[n++].addr = user[i] & ~ST_JAVA_TAG;
			continue;
		}
		path[n++].addr = user[i];
		if (!t->proc->gone && !covered(c, t->proc, user[i]))
			t->proc->missing = true;
	}
	for (size_t i = kn; i-- > 0;) {
		path[n].kind = i == 0 ? ST_FRAME_LEAF : ST_FRAME_CALLSITE;
		path[n].runtime = ST_RUNTIME_KERNEL;
		path[n++].addr = kstack[i];
	}
	/* a cut sample of a thread that has a path: not the path the next
	 * sample is compared with, and no CALLS (bpf/fold.bpf.h, fold_sample()) */
	cut = truncated && t->nlate;
	while (!cut && prefix < n && prefix < t->nlate && same_raw(&path[prefix], &t->late[prefix]))
		prefix++;
	node = st_tree__root(t->tree);
	for (size_t i = 0; i < n; i++) {
		node = st_tree__child(t->tree, node, &path[i], true);
		if (!node) {
			free(path);
			return -ENOMEM;
		}
		/* BPF's rule (bpf/calls.h) */
		if (!cut && st_calls_is_new((__u32)i, (__u32)prefix, (__u32)t->nlate))
			node->calls++;
	}
	node->base++;
	if (cut) {
		free(path);
		return 0;
	}
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
					(f->runtime == ST_RUNTIME_KERNEL ? ST_NODE_KERNEL : 0) |
					(f->runtime == ST_RUNTIME_PYTHON ? ST_NODE_PYTHON : 0) |
					(f->runtime == ST_RUNTIME_JAVA ? ST_NODE_JAVA : 0) |
					(f->kind == ST_FRAME_LEAF ? ST_NODE_LEAF : 0));
	}
	out->n = (__u32)t->nlate;
	return 0;
}

void st_collector__read_perfmaps(struct st_collector *c)
{
	struct proc *q;
	size_t pos = 0;

	while ((q = st_u64map__next(c->procs, &pos, NULL)))
		jit_refresh(c, q);
}

bool st_collector__next_thread(const struct st_collector *c, size_t *pos,
			       struct st_raw_thread *out)
{
	struct rthread *t = st_u64map__next(c->threads, pos, NULL);

	if (!t)
		return false;
	*out = (struct st_raw_thread){
		.pid = t->pid, .tid = t->tid, .uid = t->proc->owner, .image = t->image,
		.ev = t->ev, .comm = t->comm,
		.cgroup = t->proc->cgroup, .tree = t->tree, .maps = t->proc->maps,
		.jit = t->proc->jit,
	};
	return true;
}

size_t st_collector__threads(const struct st_collector *c)
{
	return st_u64map__count(c->threads);
}

size_t st_collector__processes(const struct st_collector *c)
{
	return st_u64map__count(c->procs);
}

static size_t thread_bytes(const struct rthread *t)
{
	return sizeof(*t) + st_tree__memory(t->tree) + t->nlate * sizeof(*t->late);
}

size_t st_collector__memory(const struct st_collector *c)
{
	size_t pos = 0, bytes = c->ids_cap * sizeof(struct idref);
	struct rthread *t;

	while ((t = st_u64map__next(c->threads, &pos, NULL)))
		bytes += thread_bytes(t);
	return bytes;
}

size_t st_collector__ended_memory(const struct st_collector *c)
{
	size_t pos = 0, bytes = 0;
	struct proc *p;

	while ((p = st_u64map__next(c->procs, &pos, NULL)))
		if (proc_ended(p))
			bytes += proc_bytes(p);
	return bytes;
}

static int by_seq(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool same_value(const void *value, const void *key)
{
	return value == key;
}

static int add_base(const struct st_node *n, void *ctx)
{
	*(__u64 *)ctx += n->base;
	return 0;
}

/* The processes that ended, oldest first, whose trees and maps go until
 * target bytes are left of held: marked (p->drop); how many. */
static size_t mark_ended(struct st_collector *c, struct proc **ended, size_t held, size_t target)
{
	size_t pos = 0, n = 0, freed = 0, marked = 0;
	struct rthread *t;
	struct proc *p;

	while ((p = st_u64map__next(c->procs, &pos, NULL))) {
		p->tree_bytes = 0;
		p->drop = false;
		if (proc_ended(p))
			ended[n++] = p;
	}
	pos = 0;
	while ((t = st_u64map__next(c->threads, &pos, NULL)))
		t->proc->tree_bytes += thread_bytes(t);
	qsort(ended, n, sizeof(*ended), by_seq);
	for (size_t i = 0; i < n && held - freed > target; i++, marked++) {
		ended[i]->drop = true;
		freed += ended[i]->tree_bytes + proc_bytes(ended[i]);
	}
	return marked;
}

size_t st_collector__drop_ended(struct st_collector *c, size_t target, __u64 dropped[ST_EVENTS])
{
	size_t held = st_collector__memory(c) + st_collector__ended_memory(c);
	size_t pos = 0, n = 0, procs = 0;
	struct rthread **gone = NULL, *t;
	struct proc **ended = NULL;

	if (held <= target || !(procs = st_u64map__count(c->procs)))
		return 0;
	/* every allocation first: on ENOMEM nothing is dropped (the caller
	 * drops everything instead) */
	ended = malloc(procs * sizeof(*ended));
	gone = malloc((st_u64map__count(c->threads) + 1) * sizeof(*gone));
	if (!ended || !gone)
		goto cleanup;
	procs = mark_ended(c, ended, held, target);
	while ((t = st_u64map__next(c->threads, &pos, NULL)))
		if (t->proc->drop)
			gone[n++] = t;
	for (size_t i = 0; i < n; i++) {
		t = gone[i];
		if (t->ev < ST_EVENTS)
			st_tree__walk(t->tree, add_base, &dropped[t->ev]);
		st_u64map__remove(c->threads, thread_key(t->pid, t->tid, t->image, t->ev),
				  same_value, t);
		st_tree__free(t->tree);
		free(t->late);
		free(t);
	}
	for (size_t i = 0; i < procs; i++) {
		st_u64map__remove(c->procs, PROC_KEY(ended[i]->pid, ended[i]->image), same_value,
				  ended[i]);
		c->maps_bytes -= proc_bytes(ended[i]);
		proc_free(ended[i]);
	}
	maps_account(c, 0, 0);
cleanup:
	free(ended);
	free(gone);
	return held - st_collector__memory(c) - st_collector__ended_memory(c);
}

size_t st_collector__maps_memory(const struct st_collector *c)
{
	return c->maps_bytes;
}

__u64 st_collector__samples(const struct st_collector *c, __u32 ev)
{
	size_t pos = 0;
	struct rthread *t;
	__u64 n = 0;

	while ((t = st_u64map__next(c->threads, &pos, NULL)))
		if (t->ev == ev)
			st_tree__walk(t->tree, add_base, &n);
	return n;
}

void st_collector__budget(struct st_collector *c, struct st_budget *b)
{
	c->budget = b;
	st_budget__set(b, ST_BUDGET_MAPS, c->maps_bytes);
}

__u64 st_collector__refused(const struct st_collector *c)
{
	return c->refused;
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

/* java.c - the JVMs a session meets: found, pushed to the unwinder's
 * HotSpot rule, their methods named (see java.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "binsym/symbolizer.h"
#include "common/strtab.h"
#include "common/tree.h"
#include "common/u64map.h"
#include "user/collect/runtimes/java/java.h"
#include "user/collect/runtimes/java/jcode.h"
#include "user/collect/runtimes/java/jevents.h"
#include "user/collect/runtimes/java/jkeep.h"
#include "user/collect/runtimes/java/jmethod.h"
#include "user/collect/runtimes/java/jscopes.h"
#include "user/collect/runtimes/java/jvmproc.h"
#include "user/collect/session.h"
#include "user/collect/unwind/unwind_native.h"
#include "user/collect/unwind/unwinder.h"

/* What is known of a pid (the state map's values; none: look again):
 * found, failed, or TRIES times the probes that found a libjvm but could
 * not read its tables yet. While a JVM loads libjvm its tables are still
 * zero, or cannot be read, and its interpreter is not generated, for a
 * while: some 100 ms idle, seconds on a saturated machine (the JVM's
 * start-up gets a slice of a CPU; at a load of 20 on 2 CPUs 64 probes 50
 * ms apart, 3.2 s, were not always enough): they are read again at each
 * read of its maps and at st_java__tick(), up to MAX_TRIES probes in all. */
enum { FOUND = 1, FAILED = 2, TRIES = 4 };
#define MAX_TRIES 1200	/* (st_java__tick(): 50 ms apart, a minute at least) */
#define TICK_S 0.05
/* A process none was found in, with samples the daemon unwinds (its
 * libraries just mapped: st_java__sampled()): probed again at most so
 * often. */
#define RECHECK_MS 200

#define KEY(pid, image) ((__u64)(image) << 32 | (pid))

/* A method read: its name, source file and line table, in one block. */
struct jm {
	const char *source;	/* "" when none */
	const __u8 *lines;
	__u32 nlines;
	__u8 x;			/* the table's UNSIGNED5 X */
	char name[];		/* "pkg.Class.method", then source, then lines */
};

/* A JVM of one image of a process. */
struct jproc {
	__u32 pid, image;
	bool retired;		/* exited or exec'd: freed at the next reset */
	bool exited;		/* ... exited (its image did not change) */
	struct st_java_proc bp;	/* java_procs' entry */
	struct st_jvm_layout l;
	int major;
	struct st_u64map *methods;	/* Method* -> struct jm */
	struct st_u64map *jits;		/* compiled frame entry -> struct jjit */
	struct st_u64map *nms;		/* JIT_NMETHOD(entry) -> its own Method* (jit_get()) */
	struct st_u64map *blobs;	/* code blob -> struct jcode (malloc'd), or CODE_NONE */
	struct st_u64map *pcs;		/* code cache pc -> the same name, or CODE_NONE */
	struct st_jkeep *mem;		/* what its deferred walks read (unw_mem) */
};

/* A code cache pc or blob whose name could not be read (counted once). */
static const char CODE_NONE[] = "";

/* A compiled frame's methods (jscopes.c), innermost first; n 0: none
 * read (its nmethod gone: the entry named as such). */
struct jjit {
	__u32 n;
	struct st_jscope s[];
};

/* Two threads: the daemon's main thread calls every st_java__*() and
 * the unwinder's callbacks below; the java_events reader (jevents.h)
 * reads the methods reported into the JVMs' tables as they come
 * (on_method()). mu guards all of struct st_java and its JVMs: each
 * entry point and callback holds it throughout (not recursive: none
 * calls another), the reader for each record. Only the main thread adds
 * or frees a JVM (push(), st_java__reset()), so a struct jproc it found
 * (cur) stays valid between its calls; the reader only adds methods,
 * compiled frames and counts to the JVMs it finds. Names handed out
 * (st_java__symbolize(), st_java__code_name()) stay valid until
 * st_java__reset(), on the main thread. */
struct st_java {
	pthread_mutex_t mu;
	struct st_jevents *events;	/* java_events' reader, or NULL */
	struct st_session *sess;
	int procs_fd, stats_fd;	/* -1: no session */
	struct st_jvm_cache *cache;
	struct st_u64map *state;	/* pid + 1 -> FOUND, FAILED, tries */
	struct st_u64map *recheck;	/* pid + 1 -> ms + 1 of its last st_java__sampled() probe */
	struct st_u64map *procs;	/* KEY(pid, image) -> struct jproc */
	struct st_u64map *live;		/* pid + 1 -> its current struct jproc */
	struct st_java_counts late;	/* the daemon's walks' counts */
	struct st_java_stats st;
	struct st_jmethod scratch;	/* one method being read (4 KiB: off the stack) */
	struct st_jscopes scopes;	/* one compiled frame being read */
	struct st_src_frame chain[ST_JSCOPES_MAX];	/* st_java__symbolize()'s inlined */
	struct jproc *cur;		/* the JVM of the deferred walk in progress */
	struct st_unwinder *unw;	/* the JVMs' process tables (NULL: none) */
	__u32 found[16];		/* JVMs found off a read of their maps (push_tables()) */
	size_t nfound;
	__u64 frames[ST_MAX_USER];	/* st_java__deferred()'s walk */
	double next_tick;
	/* STACKTREED_TEST_JAVA_STALL=PID (tests only): the main loop held
	 * in st_java__tick() from when the JVM of PID is found until its
	 * process is gone (a main loop behind, deterministic): 0 none
	 * (yet), -1 done (the main thread's alone) */
	int stall;
};

static void proc_free(struct jproc *p)
{
	size_t pos = 0;
	struct jm *m;

	if (!p)
		return;
	while (p->methods && (m = st_u64map__next(p->methods, &pos, NULL)))
		free(m);
	st_u64map__free(p->methods);
	pos = 0;
	while (p->jits && (m = st_u64map__next(p->jits, &pos, NULL)))
		free(m);
	st_u64map__free(p->jits);
	st_u64map__free(p->nms);
	pos = 0;
	while (p->blobs && (m = st_u64map__next(p->blobs, &pos, NULL)))
		if ((void *)m != (void *)CODE_NONE)
			free(m);
	st_u64map__free(p->blobs);
	st_u64map__free(p->pcs);
	st_jkeep__free(p->mem);
	free(p);
}

/* Read method of p now (its process must live): kept, or NULL. */
static struct jm *method_read(struct st_java *j, struct jproc *p, __u64 method)
{
	struct st_jmethod *r = &j->scratch;
	size_t nl, ns, nn;
	int pid = (int)p->pid;
	struct jm *m;

	if (st_jmethod__read(&p->l, p->major, st_jvm_read_process, &pid, method, r)) {
		j->st.method_failed++;
		return NULL;
	}
	if (j->st.held >= ST_JAVA_MAX_HELD) {
		j->st.method_dropped++;
		return NULL;
	}
	nn = strnlen(r->klass, ST_JNAME_MAX) + 1 + strnlen(r->name, ST_JNAME_MAX) + 1;
	ns = strnlen(r->source, ST_JNAME_MAX) + 1;
	nl = r->nlines <= ST_JLINES_MAX ? r->nlines : 0;
	m = malloc(sizeof(*m) + nn + ns + nl);
	if (!m) {
		j->st.method_dropped++;
		return NULL;
	}
	snprintf(m->name, nn, "%s.%s", r->klass, r->name);
	m->source = m->name + nn;
	memcpy((char *)m->source, r->source, ns - 1);
	((char *)m->source)[ns - 1] = '\0';
	m->lines = (const __u8 *)m->source + ns;
	memcpy((__u8 *)m->lines, r->lines, nl);
	m->nlines = (__u32)nl;
	m->x = r->lines_x;
	if (st_u64map__put(p->methods, method, m)) {
		free(m);
		j->st.method_dropped++;
		return NULL;
	}
	j->st.methods++;
	j->st.held++;
	return m;
}

/* The JVM of (pid, image): its own, or one found before the kernel
 * knew the process's image; NULL: none. */
static struct jproc *proc_of(struct st_java *j, __u32 pid, __u32 image)
{
	struct jproc *p = st_u64map__get(j->procs, KEY(pid, image));

	return p ? p : st_u64map__get(j->procs, KEY(pid, ST_UNWIND_ANY_IMAGE));
}

/* Method m of (pid, image), read now when new. */
static struct jm *method_get(struct st_java *j, __u32 pid, __u32 image, __u64 method)
{
	struct jproc *p = proc_of(j, pid, image);
	struct jm *m;

	if (!p || !method)
		return NULL;
	m = st_u64map__get(p->methods, method);
	return m ? m : method_read(j, p, method);
}

/* A compiled frame entry's nmethod: its segment and compile id, without
 * its pc and leaf bit (ST_JAVA_JIT_ADDR). */
#define JIT_NMETHOD(e) ((e) & ~(__u64)(2 * ST_JAVA_JIT_PC_MAX - 1))

/* Compiled frame entry of (pid, image): its methods (and theirs, read
 * now when new), read now when new; NULL: not readable. A pc whose scopes
 * cannot be read (first met after the JVM's exit: a late walk's frame
 * above one its walk as it came did not reach; or its nmethod freed
 * since) in an nmethod read before at another pc is that nmethod's own
 * method, the outermost of every pc's scopes, without its inlined ones
 * or line (counted: jit_own). Before, such a frame was "[java compiled]":
 * in one loaded CI run, the outermost Java frame of 166 of the 1,433
 * samples of test_java_accuracy_behind_late's main thread (walked after
 * the JVM's exit), which so did not reach main(). */
static struct jjit *jit_get(struct st_java *j, __u32 pid, __u32 image, __u64 entry)
{
	struct jproc *p = proc_of(j, pid, image);
	struct st_jscopes *s = &j->scopes;
	int ipid = (int)pid;
	struct jjit *t;
	__u64 own;

	if (!p)
		return NULL;
	if ((t = st_u64map__get(p->jits, entry)))
		return t;
	st_jscopes__read(&p->l, p->major, st_jvm_read_process, &ipid,
			 st_jscopes__nmethod(&p->bp.blobs, entry), ST_JAVA_JIT_PC(entry),
			 ST_JAVA_JIT_LEAF(entry), (int)ST_JAVA_JIT_CID(entry), s);
	if (s->stop == ST_JSCOPES_GONE)
		j->st.jit_gone++;
	if (!s->n) {
		j->st.jit_failed++;
		own = (__u64)(uintptr_t)st_u64map__get(p->nms, JIT_NMETHOD(entry));
		if (!own)
			return NULL;
		s->s[0] = (struct st_jscope){ .method = own, .bci = -1 };
		s->n = 1;
		j->st.jit_own++;
	} else if (s->method && j->st.held < ST_JAVA_MAX_HELD &&
		   !st_u64map__get(p->nms, JIT_NMETHOD(entry)) &&
		   !st_u64map__put(p->nms, JIT_NMETHOD(entry), (void *)(uintptr_t)s->method)) {
		j->st.held++;
	}
	if (j->st.held >= ST_JAVA_MAX_HELD || !(t = malloc(sizeof(*t) + s->n * sizeof(s->s[0])))) {
		j->st.method_dropped++;
		return NULL;
	}
	t->n = s->n;
	memcpy(t->s, s->s, s->n * sizeof(s->s[0]));
	if (st_u64map__put(p->jits, entry, t)) {
		free(t);
		j->st.method_dropped++;
		return NULL;
	}
	j->st.jits++;
	j->st.held++;
	for (__u32 i = 0; i < t->n; i++)
		(void)method_get(j, pid, image, t->s[i].method);
	return t;
}

/* An entry of a sample (Method* or a compiled frame's) read now. */
static void entry_seen(struct st_java *j, __u32 pid, __u32 image, __u64 e)
{
	if (st_java_entry_jit(e))
		(void)jit_get(j, pid, image, e);
	else
		(void)method_get(j, pid, image, st_java_entry_is(e) ? ST_JAVA_METHOD(e) : e);
}

/* java_events: a method (or compiled frame) first seen by a sample, read
 * while it lives (on the reader's thread, mu held). */
static void on_method(void *ctx, const void *data, size_t size)
{
	const struct st_java_event *e = data;

	if (size >= sizeof(*e))
		entry_seen(ctx, e->pid, e->image, e->method);
}

struct st_java *st_java__new(struct st_session *s)
{
	struct st_java *j = calloc(1, sizeof(*j));
	int events_fd, err = -ENOMEM;

	if (!j)
		return NULL;
	pthread_mutex_init(&j->mu, NULL);
	j->sess = s;
	j->procs_fd = j->stats_fd = -1;
	j->cache = st_jvm_cache__new();
	j->state = st_u64map__new();
	j->procs = st_u64map__new();
	j->live = st_u64map__new();
	j->recheck = st_u64map__new();
	if (!j->cache || !j->state || !j->procs || !j->live || !j->recheck)
		goto fail;
	if (s) {
		j->procs_fd = st_session__map_fd(s, "java_procs");
		j->stats_fd = st_session__map_fd(s, "java_stats");
		events_fd = st_session__map_fd(s, "java_events");
		err = j->procs_fd < 0 ? j->procs_fd : j->stats_fd < 0 ? j->stats_fd : events_fd;
		if (err >= 0 && !(j->events = st_jevents__new(events_fd, &j->mu, on_method, j)))
			err = -errno;
		if (err < 0)
			goto fail;
	}
	return j;
fail:
	st_java__free(j);
	errno = -err;
	return NULL;
}

void st_java__free(struct st_java *j)
{
	struct jproc *p;
	size_t pos = 0;

	if (!j)
		return;
	st_jevents__free(j->events);	/* first: nothing is read any more */
	while (j->procs && (p = st_u64map__next(j->procs, &pos, NULL)))
		proc_free(p);
	st_u64map__free(j->procs);
	st_u64map__free(j->live);
	st_jvm_cache__free(j->cache);
	st_u64map__free(j->state);
	st_u64map__free(j->recheck);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

/* JVM entry bp of pid to java_procs (the HotSpot rule walks it). */
static void bpf_push(struct st_java *j, __u32 pid, const struct st_java_proc *bp)
{
	if (j->procs_fd >= 0 && bpf_map_update_elem(j->procs_fd, &pid, bp, BPF_ANY))
		fprintf(stderr, "stacktreed: cannot follow java in pid %u: %s (java_procs)\n", pid,
			strerror(errno));
	st_session__java_procs_changed(j->sess);	/* after the update (BPF's memo) */
}

/* The JVM probed in pid (image): kept, and pushed to java_procs unless
 * later (bpf false: push_tables() does, once its process's unwinding
 * table is in). 0, -EAGAIN (its interpreter not generated yet), or
 * another negative errno (told). */
static int push(struct st_java *j, __u32 pid, __u32 image, const struct st_jvm_proc *jp,
		bool bpf)
{
	struct st_java_proc bp;
	struct jproc *p, *old;
	int ipid = (int)pid, r;
	__u64 lo = 0, hi = 0;

	r = st_jvm_layout__java_proc(&jp->l, st_jvm_read_process, &ipid, &bp);
	if (r == -EFAULT)
		return -EAGAIN;
	if (r) {
		j->st.unsupported++;
		fprintf(stderr, "stacktreed: java %s in pid %u: %s, native frames only\n",
			jp->version.release[0] ? jp->version.release : "(version unknown)", pid,
			r == -ENOTSUP ? "frame layout not supported" : strerror(-r));
		return r;
	}
	/* the code cache: every blob's pc, the interpreter's included */
	if (jp->l.codecache_low_bound && jp->l.codecache_high_bound &&
	    !st_jvm_read_process(&ipid, &lo, sizeof(lo), jp->l.codecache_low_bound) &&
	    !st_jvm_read_process(&ipid, &hi, sizeof(hi), jp->l.codecache_high_bound) &&
	    lo && lo < hi && hi <= ST_USER_END) {
		bp.code_start = lo;
		bp.code_end = hi;
	}
	/* compiled frames and stubs (bpf/hotspot_blob.h): none walked without */
	r = st_jvm_layout__java_blobs(&jp->l, st_jvm_read_process, &ipid, &bp.blobs);
	if (r) {
		memset(&bp.blobs, 0, sizeof(bp.blobs));
		fprintf(stderr, "stacktreed: java %s in pid %u: code cache not read (%s): compiled "
			"frames stay native addresses\n",
			jp->version.release[0] ? jp->version.release : "(version unknown)", pid,
			r == -ENOTSUP ? "layout not supported" : strerror(-r));
	}
	bp.image = image;
	p = st_u64map__get(j->procs, KEY(pid, image));
	if (!p) {
		if (!(p = calloc(1, sizeof(*p))) || !(p->methods = st_u64map__new()) ||
		    !(p->jits = st_u64map__new()) || !(p->nms = st_u64map__new()) ||
		    !(p->blobs = st_u64map__new()) ||
		    !(p->pcs = st_u64map__new()) || !(p->mem = st_jkeep__new()) ||
		    st_u64map__put(j->procs, KEY(pid, image), p)) {
			proc_free(p);
			return -ENOMEM;
		}
		p->pid = pid;
		p->image = image;
	}
	p->bp = bp;
	p->l = jp->l;
	p->major = jp->version.major;
	p->retired = false;
	p->exited = false;
	if ((old = st_u64map__get(j->live, (__u64)pid + 1)) && old != p)
		old->retired = true;
	(void)st_u64map__put(j->live, (__u64)pid + 1, p);
	if (!j->stall && getenv("STACKTREED_TEST_JAVA_STALL") &&
	    strtoul(getenv("STACKTREED_TEST_JAVA_STALL"), NULL, 10) == pid)
		j->stall = (int)pid;
	if (bpf)
		bpf_push(j, pid, &bp);
	return 0;
}

/* pid probed: off_read, no read of its maps came with the probe (its
 * unwinding table is pushed before its JVM: push_tables()). Whether its
 * JVM was found now. */
static bool probe(struct st_java *j, __u32 pid, bool off_read)
{
	__u32 image = ST_UNWIND_ANY_IMAGE;
	struct st_jvm_proc *p;
	uintptr_t state;
	int r;

	state = (uintptr_t)st_u64map__get(j->state, (__u64)pid + 1);
	if (state == FOUND || state == FAILED)
		return false;
	if (j->sess) {
		r = st_session__proc_image(j->sess, pid, &image);
		if (r == -EBUSY)	/* inside an exec: its own refresh probes again */
			return false;
		if (r)
			image = ST_UNWIND_ANY_IMAGE;
	}
	p = malloc(sizeof(*p));	/* 1.5 KiB: off the stack of the drain */
	if (!p)
		return false;
	r = st_jvm_proc__probe(j->cache, (int)pid, p);
	off_read = off_read && j->unw && j->nfound < sizeof(j->found) / sizeof(j->found[0]);
	if (r == ST_JVM_PROBE_OK && push(j, pid, image, p, !off_read) == -EAGAIN)
		r = ST_JVM_PROBE_STARTING;
	free(p);
	if (r == ST_JVM_PROBE_NONE || r == -ENOENT || r == -ESRCH)
		return false;	/* none (yet), or the process is gone */
	if (r == ST_JVM_PROBE_OK) {
		state = FOUND;
		j->st.jvms++;
	} else if (state / TRIES + 1 < MAX_TRIES) {
		state += TRIES;	/* starting, or unreadable for now */
	} else {
		state = FAILED;
		j->st.failed++;
	}
	/* untracked (no memory): probed again at the next read (and a JVM
	 * found counted again: better than one not counted) */
	(void)st_u64map__put(j->state, (__u64)pid + 1, (void *)state);
	if (state == FOUND && off_read)
		j->found[j->nfound++] = pid;
	return state == FOUND;
}

/* The JVMs found by a probe that no read of their maps came with (their
 * deferred samples', st_java__tick()'s): each process's unwinding table
 * pushed (libjvm's rows compiled now, as for a deferred sample), then
 * its JVM to java_procs, at once, not when the main loop reads its maps.
 * Under -a on a busy machine that read came 3 s after the JVM was found:
 * its samples were walked by the HotSpot rule but their C frames by frame
 * pointers, cut short at start_thread, and deferred whole, the deferred
 * ring full. The table first: a sample walked between the two would be
 * the same. mu not held while the unwinder reads (the unwinder's reads may
 * call back into st_java); the JVM found stays (only this thread frees
 * one). */
static void push_tables(struct st_java *j)
{
	__u32 pids[sizeof(j->found) / sizeof(j->found[0])];
	struct jproc *p;
	size_t n;

	pthread_mutex_lock(&j->mu);
	n = j->nfound;
	memcpy(pids, j->found, n * sizeof(pids[0]));
	j->nfound = 0;
	pthread_mutex_unlock(&j->mu);
	for (size_t i = 0; i < n; i++) {
		bool in = !st_unwinder__update(j->unw, pids[i]);

		if (in && st_unwinder__finish_proc(j->unw, pids[i]))
			(void)st_unwinder__update(j->unw, pids[i]);
		pthread_mutex_lock(&j->mu);
		j->st.tables_pushed += in;
		if ((p = st_u64map__get(j->live, (__u64)pids[i] + 1)) && !p->retired)
			bpf_push(j, pids[i], &p->bp);
		pthread_mutex_unlock(&j->mu);
	}
}

void st_java__probe(struct st_java *j, __u32 pid)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	(void)probe(j, pid, false);	/* (its table was read with its maps) */
	pthread_mutex_unlock(&j->mu);
}

static void sampled(struct st_java *j, __u32 pid, double t)
{
	uintptr_t state, last, now = (uintptr_t)(t * 1000.0) + 1;

	state = (uintptr_t)st_u64map__get(j->state, (__u64)pid + 1);
	if (state == FOUND || state == FAILED)
		return;
	last = (uintptr_t)st_u64map__get(j->recheck, (__u64)pid + 1);
	if (last && now - last < RECHECK_MS)
		return;
	/* untracked (no memory): probed at each call, as at each read */
	(void)st_u64map__put(j->recheck, (__u64)pid + 1, (void *)now);
	(void)probe(j, pid, true);
}

void st_java__sampled(struct st_java *j, __u32 pid, double t)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	sampled(j, pid, t);
	pthread_mutex_unlock(&j->mu);
	push_tables(j);
}

static void tick(struct st_java *j, double t)
{
	__u64 key, pids[16];
	size_t pos = 0, n = 0;
	uintptr_t state;

	if (t < j->next_tick)
		return;
	j->next_tick = t + TICK_S;
	while (n < 16 && (state = (uintptr_t)st_u64map__next(j->state, &pos, &key)))
		if (state != FOUND && state != FAILED)
			pids[n++] = key;
	for (size_t i = 0; i < n; i++)
		(void)probe(j, (__u32)(pids[i] - 1), true);
}

/* The test hook's stall, at most a minute (mu not held: the reader reads
 * on; stall is the main thread's alone). */
static void test_stall(struct st_java *j)
{
	struct timespec ms10 = { .tv_nsec = 10 * 1000 * 1000 };
	int pid = j->stall;

	if (pid <= 0)
		return;
	j->stall = -1;
	fprintf(stderr, "stacktreed: test hook: main loop held until pid %d exits\n", pid);
	for (int i = 0; i < 6000 && !(kill(pid, 0) && errno == ESRCH); i++)
		nanosleep(&ms10, NULL);
}

void st_java__tick(struct st_java *j, double t)
{
	if (!j)
		return;
	test_stall(j);
	pthread_mutex_lock(&j->mu);
	tick(j, t);
	pthread_mutex_unlock(&j->mu);
	push_tables(j);
}

static void exited(struct st_java *j, __u32 pid, const __u32 *image)
{
	struct jproc *p = st_u64map__get(j->live, (__u64)pid + 1);

	/* the exec that started this JVM, read after the JVM was found (the
	 * main loop behind; the image numbers are the kernel's, one per
	 * exec): the JVM stays, and its unwinding table, which the daemon
	 * dropped for the exec, is pushed again (push_tables()). Before, its
	 * java_procs entry went, and the JVM was found again at the next read
	 * of its maps (counted twice). */
	if (p && image && p->image == *image && p->image != ST_UNWIND_ANY_IMAGE) {
		if (j->unw && j->nfound < sizeof(j->found) / sizeof(j->found[0]))
			j->found[j->nfound++] = pid;
		return;
	}
	if (j->procs_fd >= 0 && !bpf_map_delete_elem(j->procs_fd, &pid))
		st_session__java_procs_changed(j->sess);
	if (p && (!image || p->image != *image)) {
		p->retired = true;	/* (an exec's new image may be probed already) */
		p->exited = !image;
		st_u64map__put(j->live, (__u64)pid + 1, NULL);
	}
	if ((p = st_u64map__get(j->procs, KEY(pid, ST_UNWIND_ANY_IMAGE)))) {
		p->exited = !image && (p->exited || !p->retired);
		p->retired = true;
	}
	/* only a pid known: the slot stays (a pid reused finds it), so
	 * slots are bounded by the JVM processes seen, not all exits */
	if (st_u64map__get(j->state, (__u64)pid + 1))
		st_u64map__put(j->state, (__u64)pid + 1, NULL);
	if (st_u64map__get(j->recheck, (__u64)pid + 1))
		st_u64map__put(j->recheck, (__u64)pid + 1, NULL);
}

void st_java__exited(struct st_java *j, __u32 pid, const __u32 *image)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	exited(j, pid, image);
	pthread_mutex_unlock(&j->mu);
	push_tables(j);
}

static void reset(struct st_java *j)
{
	struct st_u64map *keep;
	struct jproc *p;
	size_t pos = 0;
	__u64 key;

	if (!(keep = st_u64map__new()))
		return;	/* on ENOMEM: freed at a later reset */
	while ((p = st_u64map__next(j->procs, &pos, &key)))
		if (!p->retired && st_u64map__put(keep, key, p)) {
			st_u64map__free(keep);
			return;
		}
	pos = 0;
	while ((p = st_u64map__next(j->procs, &pos, NULL)))
		if (p->retired) {
			j->st.held -= st_u64map__count(p->methods) + st_u64map__count(p->jits) +
				      st_u64map__count(p->nms) +
				      st_u64map__count(p->blobs) + st_u64map__count(p->pcs) +
				      st_jkeep__count(p->mem);
			proc_free(p);
			j->st.procs_freed++;
		}
	st_u64map__free(j->procs);
	j->procs = keep;
	st_u64map__clear(j->recheck);	/* (a rate only: the slots of exits lost go) */
	j->cur = NULL;	/* (it may be freed) */
}

void st_java__reset(struct st_java *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	reset(j);
	pthread_mutex_unlock(&j->mu);
}

/* ---- the daemon's walks of deferred samples --------------------------- */

/* The memory the rule read in a walk of a JVM's deferred sample while the
 * process lived is kept (jkeep.h) so that the same walk done after it
 * exited (the daemon behind: its samples walked when its exit flushes
 * them) reads the same bytes. */

static const struct st_java_proc *unw_proc(void *ctx, __u32 pid, __u32 image)
{
	struct st_java *j = ctx;
	struct jproc *p;

	pthread_mutex_lock(&j->mu);
	p = st_u64map__get(j->procs, KEY(pid, image));
	/* an exited JVM's too, of its own image: its reads come from what
	 * was kept; one found before its image was known (--pid) while it
	 * runs and once it exited, not after an exec (the image may be
	 * another program's). Before, --pid's samples walked after the JVM's
	 * exit (a daemon behind) had no Java frame at all. */
	if (!p && (p = st_u64map__get(j->procs, KEY(pid, ST_UNWIND_ANY_IMAGE))) && p->retired &&
	    !p->exited)
		p = NULL;
	j->cur = p;
	pthread_mutex_unlock(&j->mu);
	/* (p->bp is set by push(), on this thread) */
	return p ? &p->bp : NULL;
}

/* A read of the walk of a deferred sample of j->cur (mu held). */
static long mem_kept(void *arg, void *dst, __u32 n, __u64 addr)
{
	struct st_unw_java_arg *a = arg;
	struct st_java *j = a->ctx;
	struct jproc *p = j ? j->cur : NULL;
	enum st_jkeep_how how;
	long r;

	if (!p || p->pid != (__u32)a->pid)
		return st_jvm_read_process(&a->pid, dst, n, addr);
	r = st_jkeep__read(p->mem, j->st.held < ST_JAVA_MAX_HELD, st_jvm_read_process, &a->pid,
			   dst, n, addr, &how);
	if (how == ST_JKEEP_REPLAYED)
		j->st.mem_replayed++;
	else if (how == ST_JKEEP_KEPT)
		j->st.held++;
	return r;
}

static long unw_mem(void *arg, void *dst, __u32 n, __u64 addr)
{
	struct st_unw_java_arg *a = arg;
	struct st_java *j = a->ctx;
	long r;

	if (!j)
		return mem_kept(arg, dst, n, addr);
	pthread_mutex_lock(&j->mu);
	r = mem_kept(arg, dst, n, addr);
	pthread_mutex_unlock(&j->mu);
	return r;
}

static const struct st_unwind_row *no_rows(void *ctx, __u32 shard, size_t *n)
{
	(void)ctx;
	(void)shard;
	*n = 0;
	return NULL;
}

/* A deferred sample's walk from (ip, sp), the copy of its stack cut to
 * start at sp, into j->frames: how many. */
static size_t prewalk(struct st_java *j, struct jproc *p, const struct st_deferred *d, __u64 ip,
		      __u64 sp, struct st_unw_java_arg *arg)
{
	struct st_unw_native_in in = {
		.ip = ip, .sp = sp, .bp = d->bp, .r10 = d->r10, .rbx = d->rbx, .r13 = d->r13,
		.stack = d->stack + (sp - d->sp), .stack_len = d->stack_len - (sp - d->sp),
		.holes = d->holes, .rows = no_rows, .mem = mem_kept, .mem_arg = arg,
		.java = &p->bp,
	};
	struct st_unw_native_out res;

	return st_unw_walk_native(&in, j->frames, ST_MAX_USER, &res);
}

static bool any_java(const __u64 *frames, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (st_java_entry_is(frames[i]))
			return true;
	return false;
}

/* How many words above a native leaf's sp are looked at for the return
 * address into the code cache that its Java callers are above, and how
 * many such words walked from. */
#define NATIVE_SCAN_WORDS 4096
#define NATIVE_SCAN_TRIES 4

static void deferred(struct st_java *j, const struct st_deferred *d)
{
	struct jproc *p = st_u64map__get(j->live, (__u64)d->pid + 1), *cur = j->cur;
	struct st_unw_java_arg arg = { .pid = (int)d->pid, .ctx = j };
	size_t n;

	if (!p || p->retired || (p->image != d->image && p->image != ST_UNWIND_ANY_IMAGE) ||
	    d->stack_len > sizeof(d->stack))
		return;
	/* (j->cur is the main thread's late walk's, between its reads:
	 * this may run on the deferred ring's consumer thread) */
	j->cur = p;
	/* the Java frames from the leaf (no table: the walk ends at the
	 * first native frame), their reads kept, their methods read */
	n = prewalk(j, p, d, d->ip, d->sp, &arg);
	j->st.prewalks++;
	/* a native leaf (zlib under a JNI call: no table here) ends that walk
	 * before its Java callers: from the first word above it that is a
	 * code cache address (the native method's wrapper's return address,
	 * what the late walk's CFI will reach), so that their reads are kept
	 * too; a word that is none walks nothing, or keeps reads no walk uses */
	if (!any_java(j->frames, n) && !d->holes &&
	    !st_hs_in(d->ip, p->bp.code_start, p->bp.code_end)) {
		__u32 tries = 0;

		for (__u64 off = 0; off + 16 <= d->stack_len && off < 8 * NATIVE_SCAN_WORDS &&
				    tries < NATIVE_SCAN_TRIES; off += 8) {
			__u64 w;

			memcpy(&w, d->stack + off, sizeof(w));
			if (!st_hs_in(w, p->bp.code_start, p->bp.code_end))
				continue;
			tries++;
			n = prewalk(j, p, d, w, d->sp + off + 8, &arg);
			if (any_java(j->frames, n)) {
				j->st.prewalks_native++;
				break;
			}
		}
	}
	j->cur = cur;
	for (size_t i = 0; i < n; i++)
		if (st_java_entry_is(j->frames[i]))
			entry_seen(j, p->pid, p->image, j->frames[i]);
}

void st_java__deferred(struct st_java *j, const struct st_deferred *d)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	deferred(j, d);
	pthread_mutex_unlock(&j->mu);
}

static void unw_seen(void *ctx, __u32 pid, __u32 image, const __u64 *frames, size_t n)
{
	struct st_java *j = ctx;

	pthread_mutex_lock(&j->mu);
	for (size_t i = 0; i < n; i++)
		if (st_java_entry_is(frames[i]))
			entry_seen(j, pid, image, frames[i]);
	pthread_mutex_unlock(&j->mu);
}

bool st_java__ops(struct st_java *j, struct st_unw_java_ops *ops)
{
	if (!j)
		return false;
	*ops = (struct st_unw_java_ops){ .proc = unw_proc, .mem = unw_mem, .seen = unw_seen,
					 .counts = &j->late, .ctx = j };
	return true;
}

void st_java__unwinder(struct st_java *j, struct st_unwinder *u)
{
	struct st_unw_java_ops ops;

	if (!u || !st_java__ops(j, &ops))
		return;
	j->unw = u;
	st_unwinder__java(u, &ops);
}

/* ---- code cache frames kept as addresses ------------------------------ */

/* A code blob read: its bounds and its name. */
struct jcode {
	__u64 start, end;
	char name[];
};

/* Code blob blob (read now): a compiled method's (or a native method
 * wrapper's) Java method's name, else the JVM's name of the blob
 * ("StubRoutines (1)", "I2C/C2I adapters", "_new_array_Java", ...), and
 * its bounds; malloc'd, or NULL. */
static struct jcode *blob_read(struct st_java *j, struct jproc *p, __u64 blob)
{
	struct st_jcode r;
	int ipid = (int)p->pid;
	const char *name;
	struct jcode *c;
	struct jm *m;
	size_t n;

	if (st_jcode__read(&p->bp.blobs, st_jvm_read_process, &ipid, blob, &r))
		return NULL;
	name = r.method && (m = method_get(j, p->pid, p->image, r.method)) ? m->name : r.name;
	n = strnlen(name, ST_JCODE_NAME_MAX);
	if (!n || !(c = malloc(sizeof(*c) + n + 1)))
		return NULL;
	c->start = r.start;
	c->end = r.end;
	memcpy(c->name, name, n);
	c->name[n] = '\0';
	return c;
}

/* pc's name in JVM p (read now when new): kept; NULL when pc is not in
 * p's code cache, CODE_NONE when it cannot be named. */
static const char *code_get(struct st_java *j, struct jproc *p, __u64 pc)
{
	int ipid = (int)p->pid;
	const char *name;
	struct jcode *c;
	__u64 blob = 0;

	if (!p->bp.code_end || pc < p->bp.code_start || pc >= p->bp.code_end)
		return NULL;
	if ((name = st_u64map__get(p->pcs, pc)))
		return name;
	if (j->st.held >= ST_JAVA_MAX_HELD) {
		j->st.method_dropped++;
		return CODE_NONE;
	}
	if (!(name = st_jcode__fixed(&p->bp, pc))) {
		if (st_jcode__find(&p->bp, st_jvm_read_process, &ipid, pc, &blob) != 1) {
			name = CODE_NONE;	/* between heaps, a free block */
		} else if ((c = st_u64map__get(p->blobs, blob))) {
			name = (void *)c == (void *)CODE_NONE ? CODE_NONE : c->name;
		} else {
			c = blob_read(j, p, blob);
			name = c ? c->name : CODE_NONE;
			if (st_u64map__put(p->blobs, blob, c ? (void *)c : (void *)CODE_NONE)) {
				free(c);
				return CODE_NONE;
			}
			j->st.held++;
		}
	}
	if (name == CODE_NONE)
		j->st.code_failed++;
	else
		j->st.code_named++;
	if (!st_u64map__put(p->pcs, pc, (void *)name))
		j->st.held++;
	return name;
}

bool st_java__code_seen(struct st_java *j, __u32 pid, __u32 image, __u64 addr)
{
	struct jproc *p;
	bool seen;

	if (!j)
		return false;
	pthread_mutex_lock(&j->mu);
	p = proc_of(j, pid, image);
	seen = p && !p->retired && code_get(j, p, addr);
	pthread_mutex_unlock(&j->mu);
	return seen;
}

/* At most this many blobs searched for a pc not seen while its process
 * lived (its samples unwound after it exited). */
#define CODE_SCAN_MAX 4096

static const char *code_name(struct st_java *j, __u32 pid, __u32 image, __u64 addr)
{
	struct jproc *p = proc_of(j, pid, image);
	const char *name;
	struct jcode *c;
	size_t pos = 0;

	if (!p)
		return NULL;
	if ((name = st_u64map__get(p->pcs, addr)))
		return name != CODE_NONE ? name : NULL;
	if ((name = st_jcode__fixed(&p->bp, addr)))
		return name;
	/* not seen as it was merged (before the JVM was found): read now
	 * while the process lives */
	if (!p->retired && (name = code_get(j, p, addr)))
		return name != CODE_NONE ? name : NULL;
	/* not seen alive: a blob read for another of its pcs */
	if (st_u64map__count(p->blobs) > CODE_SCAN_MAX)
		return NULL;
	while ((c = st_u64map__next(p->blobs, &pos, NULL)))
		if ((void *)c != (void *)CODE_NONE && addr >= c->start && addr < c->end)
			return c->name;
	return NULL;
}

const char *st_java__code_name(struct st_java *j, __u32 pid, __u32 image, __u64 addr)
{
	const char *name;

	if (!j)
		return NULL;
	pthread_mutex_lock(&j->mu);
	name = code_name(j, pid, image, addr);
	pthread_mutex_unlock(&j->mu);
	return name;
}

/* ---- names ---------------------------------------------------------- */

/* Method m at bci (-1: none) as frame f (its name, file, line). */
static void name_method(struct jm *m, __s32 bci, struct st_frame *f, struct st_strtab *strs)
{
	f->function = st_strtab__intern(strs, m->name);
	f->file = m->source[0] ? st_strtab__intern(strs, m->source) : NULL;
	f->line = bci >= 0 ? st_jlines__find(m->lines, m->nlines, m->x, (__u32)bci) : 0;
	f->offset = f->line;
}

static struct st_frame symbolize(struct st_java *j, __u32 pid, __u32 image,
				  const struct st_frame *raw, struct st_strtab *strs,
				  const struct st_src_frame **chain, size_t *nchain)
{
	struct st_frame f = *raw;
	__u64 e = raw->addr | ST_JAVA_TAG;	/* (the frame array's tag is dropped there) */
	__u64 method = ST_JAVA_METHOD(raw->addr);
	__s32 bci = ST_JAVA_BCI(raw->addr) == ST_JAVA_BCI_NONE ? -1 : (__s32)ST_JAVA_BCI(raw->addr);
	struct jjit *t = NULL;
	struct jm *m;

	*chain = NULL;
	*nchain = 0;
	f.module = st_strtab__intern(strs, st_runtime__module(ST_RUNTIME_JAVA));
	f.offset = 0;
	if (j && st_java_entry_jit(e)) {
		/* compiled: the outermost method the frame, the inlined ones
		 * (innermost last) its chain, as native inline frames */
		t = jit_get(j, pid, image, e);
		if (!t) {
			f.function = st_strtab__intern(strs, "[java compiled]");
			return f;
		}
		method = t->s[t->n - 1].method;
		bci = t->s[t->n - 1].bci;
		*chain = j->chain;
		for (__u32 i = t->n - 1; i-- > 0;) {
			struct st_src_frame *c = &j->chain[t->n - 1 - i];
			struct jm *im = method_get(j, pid, image, t->s[i].method);

			c->function = im ? im->name : "[java method]";
			c->file = im && im->source[0] ? im->source : NULL;
			c->line = im && t->s[i].bci >= 0 ?
				st_jlines__find(im->lines, im->nlines, im->x, (__u32)t->s[i].bci) : 0;
		}
		*nchain = t->n > 1 ? t->n : 0;	/* [0]: the frame's own (unused) */
		j->chain[0] = (struct st_src_frame){ 0 };
	}
	m = j ? method_get(j, pid, image, method) : NULL;
	f.addr = method;
	if (!m) {
		f.function = st_strtab__intern(strs, "[java method]");
		return f;
	}
	name_method(m, bci, &f, strs);
	return f;
}

struct st_frame st_java__symbolize(struct st_java *j, __u32 pid, __u32 image,
				   const struct st_frame *raw, struct st_strtab *strs,
				   const struct st_src_frame **chain, size_t *nchain)
{
	struct st_frame f;

	if (j)
		pthread_mutex_lock(&j->mu);
	f = symbolize(j, pid, image, raw, strs, chain, nchain);
	if (j)
		pthread_mutex_unlock(&j->mu);
	return f;
}

void st_java__stats(const struct st_java *j, struct st_java_stats *out)
{
	int ncpus = libbpf_num_possible_cpus();
	struct st_java_counts *v;
	size_t hits = 0, reads = 0;
	__u32 zero = 0;

	/* (the reader counts too) */
	pthread_mutex_lock((pthread_mutex_t *)&j->mu);
	*out = j->st;
	st_jvm_cache__stats(j->cache, &reads, &hits);
	out->table_reads = reads;
	for (__u32 k = 0; k < ST_JAVA_STAT__MAX; k++)
		out->bpf[k] = j->late.n[k];
	pthread_mutex_unlock((pthread_mutex_t *)&j->mu);
	if (j->stats_fd < 0 || ncpus <= 0 || !(v = calloc((size_t)ncpus, sizeof(*v))))
		return;
	if (!bpf_map_lookup_elem(j->stats_fd, &zero, v))
		for (int c = 0; c < ncpus; c++)
			for (__u32 k = 0; k < ST_JAVA_STAT__MAX; k++)
				out->bpf[k] += v[c].n[k];
	free(v);
}

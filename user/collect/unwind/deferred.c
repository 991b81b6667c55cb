/* deferred.c - the daemon's queue of samples whose stacks wait for their
 * tables (see deferred.h). */
#include "user/collect/unwind/deferred.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "user/collect/collector.h"
#include "user/collect/unwind/defer_ring.h"
#include "user/collect/unwind/fpcopy.h"
#include "user/collect/runtimes/python/pymerge.h"
#include "common/u64map.h"
#include "user/collect/unwind/unwind_native.h"
#include "user/collect/unwind/unwinder.h"

/* How long st_defer__flush() waits for the consumer's read of the ring. */
#define FLUSH_SYNC_MS 200

struct st_defer {
	struct st_unwinder *u;		/* NULL: --unwind fp (fpcopy.h) */
	struct st_unw_java_ops java;	/* fp: the HotSpot rule's hooks (.proc NULL: none) */
	struct st_collector *c;
	struct st_defer_ring *ring;	/* the consumer thread and its inbox */
	struct st_defer_rec *head, **tail;	/* taken from the inbox, oldest first */
	size_t freed;			/* bytes freed, not yet released to the ring */
	struct st_u64map *refresh;	/* pids whose maps to read again: 1 */
	struct st_u64map *gone;		/* of those, the ones that exited: 1 */
	struct st_u64map *exited;	/* exit events since the last pass: 1 */
	struct st_u64map *closing;	/* exited, samples left in the ring: struct closing */
	double last_pass;		/* of st_defer__process(), CLOCK_MONOTONIC s */
	struct st_u64map *walked;	/* tid -> struct walked: threads to hand back */
	st_handoff_fn handoff;
	void *handoff_ctx;
	st_defer_pid_fn refreshed;
	void *refreshed_ctx;
	st_defer_sample_fn sampled;
	void *sampled_ctx;
	__u64 stats[ST_STAT__MAX];
	__u64 py[ST_PY_STAT__MAX];	/* the merges of Python frames done here */
	bool hold;	/* tests only: walked at their process's exit, not before */
};

/* An exited process some of whose samples were still in the ring when its
 * exit's flush ran (the inbox's bound stopped the read: a JVM's early
 * samples held while libjvm's tables compile fill it): its table is kept
 * until the consumer has read past them. */
struct closing {
	__u64 mark;	/* st_defer_ring__mark() at that flush */
	double t;	/* its time: dropped ST_DEFER_WAIT_S after it regardless */
};

/* A thread's last deferred sample walked (its seq: all before it are). */
struct walked {
	__u32 pid, image, seq;
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct st_defer *st_defer__new(struct st_unwinder *u, struct st_collector *c, int ring_fd,
			       size_t ring_max)
{
	struct st_defer *d = calloc(1, sizeof(*d));
	const char *test_memory;
	int err = -ENOMEM;

	if (!d)
		return NULL;
	d->u = u;
	d->c = c;
	d->tail = &d->head;
	d->refresh = st_u64map__new();
	d->gone = st_u64map__new();
	d->walked = st_u64map__new();
	d->exited = st_u64map__new();
	d->closing = st_u64map__new();
	if (!d->refresh || !d->gone || !d->walked || !d->exited || !d->closing)
		goto cleanup;
	/* tests only (tests/integration/test_dwarf.py): every sample walked
	 * after its process exited, as its last ones always are (issue 37) */
	d->hold = getenv("STACKTREED_TEST_DEFER_HOLD") != NULL;
	/* tests only: a smaller bound on the samples read, so that the ring
	 * holds some of a process's at its exit (test_dwarf.py) */
	test_memory = getenv("STACKTREED_TEST_DEFER_MEMORY");
	d->ring = st_defer_ring__new(ring_fd, ring_max,
				     test_memory && strtoul(test_memory, NULL, 10) ?
					     strtoul(test_memory, NULL, 10) : ST_DEFER_MEMORY);
	if (!d->ring) {
		err = -errno;
		goto cleanup;
	}
	return d;
cleanup:
	st_defer__free(d);
	errno = -err;
	return NULL;
}

static void clear_walked(struct st_defer *d)
{
	size_t pos = 0;
	__u64 tid;
	void *w;

	if (!d->walked)
		return;
	while ((w = st_u64map__next(d->walked, &pos, &tid)))
		free(w);
	st_u64map__clear(d->walked);
}

/* The end of a pass: hand back the threads none of whose samples wait. */
static void hand_back(struct st_defer *d)
{
	struct st_u64map *queued, *keep;
	struct st_handoff h;
	size_t pos = 0;
	__u64 tid;
	struct walked *w;

	if (!d->handoff || !st_u64map__count(d->walked))
		return;
	queued = st_u64map__new();
	keep = st_u64map__new();
	if (!queued || !keep)
		goto cleanup;	/* next pass */
	for (struct st_defer_rec *s = d->head; s; s = s->next)
		if (s->d.tid && st_u64map__put(queued, s->d.tid, (void *)1))
			goto cleanup;
	while ((w = st_u64map__next(d->walked, &pos, &tid))) {
		if (st_u64map__get(queued, tid)) {
			if (st_u64map__put(keep, tid, w))
				free(w);	/* not handed back: BPF takes it back later */
			continue;
		}
		if (!st_collector__late_path(d->c, w->pid, (__u32)tid, w->image, &h)) {
			h.seq = w->seq;
			d->handoff(d->handoff_ctx, (__u32)tid, &h);
		}
		free(w);
	}
	st_u64map__free(d->walked);
	d->walked = keep;
	keep = NULL;
cleanup:
	st_u64map__free(queued);
	st_u64map__free(keep);
}

void st_defer__free(struct st_defer *d)
{
	if (!d)
		return;
	st_defer_ring__free(d->ring);	/* joins the consumer */
	while (d->head) {
		struct st_defer_rec *s = d->head;

		d->head = s->next;
		free(s);
	}
	st_u64map__free(d->refresh);
	st_u64map__free(d->gone);
	st_u64map__free(d->exited);
	if (d->closing) {
		size_t pos = 0;
		void *c;

		while ((c = st_u64map__next(d->closing, &pos, NULL)))
			free(c);
		st_u64map__free(d->closing);
	}
	clear_walked(d);
	st_u64map__free(d->walked);
	free(d);
}

void st_defer__on_handoff(struct st_defer *d, st_handoff_fn fn, void *ctx)
{
	d->handoff = fn;
	d->handoff_ctx = ctx;
}

void st_defer__on_refresh(struct st_defer *d, st_defer_pid_fn fn, void *ctx)
{
	d->refreshed = fn;
	d->refreshed_ctx = ctx;
}

void st_defer__on_sample(struct st_defer *d, st_defer_sample_fn fn, void *ctx)
{
	d->sampled = fn;
	d->sampled_ctx = ctx;
}

void st_defer__on_arrival(struct st_defer *d, st_defer_sample_fn fn, void *ctx)
{
	st_defer_ring__on_record(d->ring, fn, ctx);
}

void st_defer__java(struct st_defer *d, const struct st_unw_java_ops *ops)
{
	if (ops && ops->proc && ops->mem && ops->seen && ops->counts)
		d->java = *ops;
}

/* The inbox onto the end of the queue (main thread). */
static void take_inbox(struct st_defer *d)
{
	struct st_defer_rec *s = st_defer_ring__take(d->ring);

	if (!s)
		return;
	*d->tail = s;
	for (; s; s = s->next) {
		/* its table may lack a mapping (a library just mapped): read again */
		st_u64map__put(d->refresh, s->d.pid ? s->d.pid : 1, (void *)1);
		if (d->sampled)
			d->sampled(d->sampled_ctx, &s->d);
		d->tail = &s->next;
	}
}

static void note_walked(struct st_defer *d, const struct st_deferred *s)
{
	struct walked *w = st_u64map__get(d->walked, s->tid);

	if (!w) {
		if (!(w = calloc(1, sizeof(*w))))
			return;	/* not handed back: BPF takes the thread back later */
		if (st_u64map__put(d->walked, s->tid, w)) {
			free(w);
			return;
		}
	}
	w->pid = s->pid;
	w->image = s->image;
	w->seq = s->seq;
}

/* Walk s and fold it: 0, -EAGAIN (its tables are not in yet), -ENOMEM. */
static int fold(struct st_defer *d, struct st_defer_rec *s, bool force)
{
	__u64 frames[ST_MAX_USER];
	size_t fp = 0;
	unsigned stop = 0;
	__u32 stat;
	/* (a 32-bit process's: by frame pointers in any mode, as the kernel
	 * walks it; the CFI walk is 64-bit only) */
	int n = d->u && !s->d.compat ?
			st_unwinder__walk(d->u, &s->d, force, frames, ST_MAX_USER, &stop, &fp) :
		       (int)st_fpcopy_walk(&s->d, d->java.proc ? &d->java : NULL, frames,
					   ST_MAX_USER, &stop);
	bool complete, cut = false, unmatched = false;

	if (n == -EAGAIN)
		return n;
	if (n < 0)
		n = 0;
	if (n > 0 && s->d.py.n) {	/* as BPF merges the samples it folds */
		n = (int)st_py_merge_deferred(&s->d.py, frames, (__u32)n, ST_MAX_USER, &cut,
					      &unmatched);
		d->py[ST_PY_STAT_MERGE_CUT] += cut;
		d->py[ST_PY_STAT_UNMATCHED] += unmatched;
	}
	complete = stop == ST_UNW_STOP_END;
	stat = complete ? ST_STAT__MAX : st_unwind_stop_stat(stop);
	if (stat < ST_STAT__MAX)
		d->stats[stat]++;
	d->stats[ST_STAT_UNW_FP_FRAMES] += fp;
	d->stats[ST_STAT_LATE_UNWOUND]++;
	if (s->d.seq && s->d.tid)
		note_walked(d, &s->d);
	return st_collector__add_sample(d->c, s->d.pid, s->d.tid, s->d.image, s->d.comm, frames,
					(size_t)n,
					!complete || cut, s->d.kstack,
					s->d.kn <= ST_MAX_KERNEL ? s->d.kn : 0);
}

int st_defer__notify_fd(const struct st_defer *d)
{
	return st_defer_ring__notify_fd(d->ring);
}

/* Take the sample at *pp off the queue (its bytes are given back to the
 * bound by release()). */
static void unlink_sample(struct st_defer *d, struct st_defer_rec **pp)
{
	struct st_defer_rec *s = *pp;

	*pp = s->next;
	d->freed += s->bytes;
	free(s);
}

/* Room under the bound again for what a pass freed: one lock a pass. */
static void release(struct st_defer *d)
{
	st_defer_ring__release(d->ring, d->freed);
	d->freed = 0;
}

/* The table of s's process read a last time before its samples are
 * walked: from /proc while it can be read, else from the mappings BPF
 * kept at its end (a library mapped since the last read is in them:
 * nofp's dlopen just before its exit, its samples read from the ring
 * with the exit's, lost their leaf "no CFI" in 2 runs of 3 under ASan);
 * then its modules' tables made whole (its modules, not all). */
static void ready_last(struct st_defer *d, const struct st_defer_rec *s)
{
	if (!d->u)
		return;
	if (st_unwinder__update(d->u, s->d.pid) == -ENOENT)
		st_unwinder__update_ended(d->u, s->d.pid, s->d.image);
	st_unwinder__finish_proc(d->u, s->d.pid);
}

/* Walk pid's samples in the queue (the inbox taken first). */
static int flush_pid(struct st_defer *d, __u32 pid)
{
	struct st_defer_rec **pp = &d->head;
	bool finished = false;
	int err = 0;

	while (*pp) {
		struct st_defer_rec *s = *pp;
		int r;

		if (s->d.pid != pid) {
			pp = &s->next;
			continue;
		}
		if (!finished) {	/* once, and only when there is something to walk */
			ready_last(d, s);
			finished = true;
		}
		r = fold(d, s, true);
		if (r && !err)
			err = r;
		unlink_sample(d, pp);
	}
	d->tail = pp;
	return err;
}

/* Walk the queued samples of the pids in set (value 1) in one pass: each
 * pid's tables made whole once, before its first sample (its value then
 * 2). */
static int flush_set(struct st_defer *d, struct st_u64map *set)
{
	struct st_defer_rec **pp = &d->head;
	int err = 0;

	while (*pp) {
		struct st_defer_rec *s = *pp;
		void *v = st_u64map__get(set, s->d.pid);
		int r;

		if (!v) {
			pp = &s->next;
			continue;
		}
		if (v == (void *)1) {	/* once, and only when there is something to walk */
			ready_last(d, s);
			st_u64map__put(set, s->d.pid, (void *)2);
		}
		r = fold(d, s, true);
		if (r && !err)
			err = r;
		unlink_sample(d, pp);
	}
	d->tail = pp;
	return err;
}

int st_defer__exited(struct st_defer *d, __u32 pid)
{
	int err;

	if (pid && !st_u64map__put(d->exited, pid, (void *)1))
		return 0;
	err = st_defer__flush(d, pid);	/* no memory to wait: at once */
	if (d->u)
		st_unwinder__forget(d->u, pid);
	return err;
}

/* pid exited and its queued samples were walked: its table dropped now if
 * the ring holds none of its samples any more, else once the consumer has
 * read past them (flush_closed()). Before, the table went at once: the
 * samples the read left in the ring (the inbox full) were walked without
 * it, cut at the first frame without frame pointers ("no tables for the
 * process yet"; a launched JVM's early samples, 84 of 863 at start_thread
 * in 1 run of 5-10 of test_startup_java_launched_on_early_object). */
static void close_later(struct st_defer *d, __u32 pid)
{
	struct closing *c, *old;
	__u64 mark;

	if (!d->u)
		return;		/* fp: no table */
	mark = st_defer_ring__mark(d->ring);
	if (!st_defer_ring__passed(d->ring, mark) && (c = malloc(sizeof(*c)))) {
		*c = (struct closing){ .mark = mark, .t = now_s() };
		old = st_u64map__get(d->closing, pid);	/* (a pid used again) */
		/* (put may fail for a key it has: it grows first) */
		if (!st_u64map__put(d->closing, pid, c)) {
			free(old);
			return;
		}
		free(c);
	}
	st_unwinder__forget(d->u, pid);
}

/* The closing processes the consumer has read past (or that waited
 * ST_DEFER_WAIT_S): their samples taken in and walked with their tables
 * (made whole once more: the exit's flush may have had none to walk),
 * then the tables dropped. */
static int flush_closed(struct st_defer *d)
{
	struct st_u64map *done, *keep;
	struct closing *c;
	size_t pos = 0, n = 0;
	double t = now_s();
	__u64 pid;
	int err;

	if (!st_u64map__count(d->closing))
		return 0;
	done = st_u64map__new();
	keep = st_u64map__new();
	if (!done || !keep) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* (read past: its records are in the inbox, pushed before the
	 * consumer's position moved) */
	while ((c = st_u64map__next(d->closing, &pos, &pid))) {
		bool over = st_defer_ring__passed(d->ring, c->mark) || t - c->t >= ST_DEFER_WAIT_S;

		if ((err = st_u64map__put(over ? done : keep, pid, over ? (void *)1 : c)))
			goto cleanup;
		n += over;
	}
	if (!n) {
		err = 0;
		goto cleanup;
	}
	take_inbox(d);
	err = flush_set(d, done);
	release(d);
	pos = 0;
	while (st_u64map__next(done, &pos, &pid)) {
		free(st_u64map__get(d->closing, pid));
		st_unwinder__forget(d->u, (__u32)pid);
	}
	st_u64map__free(d->closing);
	d->closing = keep;
	keep = NULL;
cleanup:
	st_u64map__free(done);
	st_u64map__free(keep);
	return err;
}

/* The exits since the last pass, as st_defer__flush() for each, with one
 * read of the ring and one pass over the queue for all (300 exits a
 * second made a read and a pass each: the main loop fell seconds behind),
 * then their tables dropped, or kept until their samples still in the
 * ring are read (close_later()). */
static int flush_exited(struct st_defer *d)
{
	size_t pos = 0;
	__u64 pid;
	int err = 0, e;

	if (st_u64map__count(d->exited)) {
		st_defer_ring__sync(d->ring, FLUSH_SYNC_MS);
		take_inbox(d);
		err = flush_set(d, d->exited);
		release(d);
		while (st_u64map__next(d->exited, &pos, &pid))
			close_later(d, (__u32)pid);
		st_u64map__clear(d->exited);
	}
	e = flush_closed(d);
	return err ? err : e;
}

int st_defer__flush(struct st_defer *d, __u32 pid)
{
	int err;

	/* pid's samples still in the kernel ring come first: they were
	 * committed before its exit event was, so one read of the ring that
	 * starts now has them all. The ring is the consumer thread's alone
	 * (libbpf's ring_buffer is not for two threads at once): it is asked
	 * to read it now and this waits, FLUSH_SYNC_MS at most (the consumer
	 * only copies: it is late only when it gets no CPU). One still
	 * unread then is walked in a later pass without pid's table (its
	 * frames stop where BPF's did: counted as "no tables for the process
	 * yet"), as would one that came after the exit. */
	st_defer_ring__sync(d->ring, FLUSH_SYNC_MS);
	take_inbox(d);
	err = flush_pid(d, pid);
	release(d);
	return err;
}

int st_defer__catch_up(struct st_defer *d)
{
	st_defer_ring__sync(d->ring, FLUSH_SYNC_MS);
	d->last_pass = 0;	/* a pass now */
	return st_defer__process(d, false);
}

int st_defer__process(struct st_defer *d, bool force)
{
	struct st_defer_rec **pp = &d->head;
	double t = now_s();
	size_t pos = 0;
	__u64 pid;
	int err = 0;

	/* the end: the consumer reads the ring a last time and stops, so
	 * that no sample is left in it */
	if (force)
		st_defer_ring__stop(d->ring);
	/* at every turn of the loop: it resets the notification that woke it */
	take_inbox(d);
	if ((err = flush_exited(d)))
		return err;
	/* the daemon's loop turns at every event: a pass over the queue (and
	 * the maps of the processes that sent samples) every ST_DEFER_PASS_S */
	if (!force && t - d->last_pass < ST_DEFER_PASS_S)
		return 0;
	d->last_pass = t;
	/* samples wait for these processes' modules: compiled now, whatever
	 * the budget (which is for modules no sample waits for) */
	while (st_u64map__next(d->refresh, &pos, &pid)) {
		/* (fp: no table, none waited for) */
		if (d->u && st_unwinder__update(d->u, (__u32)pid) == -ENOENT) {
			/* gone before we read it: walked with what there is */
			st_u64map__put(d->gone, pid, (void *)1);
			continue;
		}
		if (d->u && st_unwinder__finish_proc(d->u, (__u32)pid))	/* its table again */
			st_unwinder__update(d->u, (__u32)pid);
		if (d->refreshed)
			d->refreshed(d->refreshed_ctx, (__u32)pid);
	}
	st_u64map__clear(d->refresh);
	err = flush_set(d, d->gone);
	st_u64map__clear(d->gone);
	if (err || (d->hold && !force)) {
		release(d);
		return err;
	}
	while (*pp) {
		struct st_defer_rec *s = *pp;
		bool aged = t - s->t >= ST_DEFER_WAIT_S;
		int r = fold(d, s, force || aged);

		if (!force && aged && r != -EAGAIN)
			d->stats[ST_STAT_LATE_AGED]++;
		if (r == -EAGAIN) {
			pp = &s->next;
			continue;
		}
		if (r && !err)
			err = r;
		unlink_sample(d, pp);
		/* the rest at the next pass: the loop drains the kernel's trees
		 * meanwhile (43,000 samples walked in one go let them fill) */
		if (!force && now_s() - t >= ST_DEFER_PASS_BUDGET_S && *pp)
			break;
	}
	if (!*pp)
		d->tail = pp;
	release(d);
	hand_back(d);
	return err;
}

void st_defer__stats(const struct st_defer *d, __u64 stats[ST_STAT__MAX])
{
	for (int i = 0; i < ST_STAT__MAX; i++)
		stats[i] += d->stats[i];
	/* the consumer's drops (read under the inbox's lock) */
	stats[ST_STAT_LATE_DROPPED] += st_defer_ring__dropped(d->ring);
	if (d->u)
		st_unwinder__scan_stats(d->u, &stats[ST_STAT_UNW_SCANNED],
					&stats[ST_STAT_UNW_SCAN_FAILED]);
}

void st_defer__py_stats(const struct st_defer *d, __u64 py[ST_PY_STAT__MAX])
{
	for (int i = 0; i < ST_PY_STAT__MAX; i++)
		py[i] += d->py[i];
}

size_t st_defer__queued_bytes(const struct st_defer *d)
{
	return st_defer_ring__bytes(d->ring);
}

size_t st_defer__ring_bytes(const struct st_defer *d, unsigned *grows)
{
	size_t bytes;

	st_defer_ring__ring(d->ring, &bytes, grows);
	return bytes;
}

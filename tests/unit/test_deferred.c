/* test_deferred.c - the bookkeeping of the deferred-sample queue
 * (user/collect/unwind/deferred.c), without a kernel: which samples wait and
 * which are walked, forced walks (aged, flushed at exit, the exits of a
 * turn together, gone before their maps were read), the counters of each stop reason, and which threads are
 * handed back to BPF with which seq and path.
 *
 * Link seams: this file defines the functions deferred.c calls in the ring
 * consumer (user/collect/unwind/defer_ring.h) and the unwinder
 * (user/collect/unwind/unwinder.h), so the linker takes these and not the real
 * ones: the test puts records in the inbox and decides what each walk
 * returns. The collector is the real one (user/collect/collector.h), with
 * pids that cannot exist (above PID_MAX_LIMIT). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "common/tree.h"
#include "user/collect/collector.h"
#include "user/collect/unwind/defer_ring.h"
#include "user/collect/unwind/deferred.h"
#include "user/collect/unwind/unwind_native.h"
#include "user/collect/unwind/unwinder.h"

#define PID_A 5000001u	/* > PID_MAX_LIMIT (4194304): never a process */
#define PID_B 5000002u

/* ---- the seams ----------------------------------------------------------- */

static struct fake {
	struct st_defer_rec *inbox, **tail;
	bool ready[2];		/* PID_A's, PID_B's tables are in */
	bool gone[2];		/* /proc/PID is gone (update: -ENOENT) */
	unsigned stop;		/* what the next walks end with */
	size_t fp;		/* frame-pointer frames per walk */
	unsigned walks, forced, updates[2], finishes[2], forgets[2];
	unsigned ended[2];	/* tables asked of the mappings kept at the end, */
	__u32 ended_image;	/* ... the last for this image */
	size_t released;
	__u64 dropped;
	__u64 prod, cons;	/* the ring's positions (st_defer_ring__mark()) */
	bool stopped;
} fk;

static int idx(__u32 pid)
{
	return pid == PID_B;
}

struct st_defer_ring *st_defer_ring__new(int map_fd, size_t ring_max, size_t max_bytes)
{
	(void)map_fd;
	(void)ring_max;
	(void)max_bytes;
	return (struct st_defer_ring *)&fk;
}

void st_defer_ring__ring(struct st_defer_ring *r, size_t *bytes, unsigned *grows)
{
	(void)r;
	*bytes = 0;
	*grows = 0;
}

void st_defer_ring__free(struct st_defer_ring *r)
{
	(void)r;
	while (fk.inbox) {
		struct st_defer_rec *s = fk.inbox;

		fk.inbox = s->next;
		free(s);
	}
}

struct st_defer_rec *st_defer_ring__take(struct st_defer_ring *r)
{
	struct st_defer_rec *s = fk.inbox;

	(void)r;
	fk.inbox = NULL;
	fk.tail = &fk.inbox;
	return s;
}

void st_defer_ring__release(struct st_defer_ring *r, size_t bytes)
{
	(void)r;
	fk.released += bytes;
}

int st_defer_ring__sync(struct st_defer_ring *r, int timeout_ms)
{
	(void)r;
	(void)timeout_ms;
	return 0;
}

void st_defer_ring__stop(struct st_defer_ring *r)
{
	(void)r;
	fk.stopped = true;
}

__u64 st_defer_ring__mark(struct st_defer_ring *r)
{
	(void)r;
	return fk.prod;
}

bool st_defer_ring__passed(struct st_defer_ring *r, __u64 mark)
{
	(void)r;
	return fk.stopped || fk.cons >= mark;
}

void st_defer_ring__on_record(struct st_defer_ring *r, st_defer_ring_fn fn, void *ctx)
{
	(void)r;
	(void)fn;
	(void)ctx;
}

__u64 st_defer_ring__dropped(struct st_defer_ring *r)
{
	(void)r;
	return fk.dropped;
}

int st_defer_ring__notify_fd(const struct st_defer_ring *r)
{
	(void)r;
	return -1;
}

size_t st_defer_ring__bytes(struct st_defer_ring *r)
{
	(void)r;
	return 0;
}

int st_unwinder__update(struct st_unwinder *u, __u32 pid)
{
	(void)u;
	fk.updates[idx(pid)]++;
	return fk.gone[idx(pid)] ? -ENOENT : 0;
}

int st_unwinder__update_ended(struct st_unwinder *u, __u32 pid, __u32 image)
{
	(void)u;
	fk.ended[idx(pid)]++;
	fk.ended_image = image;
	return -ENOENT;
}

size_t st_unwinder__finish_proc(struct st_unwinder *u, __u32 pid)
{
	(void)u;
	fk.finishes[idx(pid)]++;
	return 0;
}

void st_unwinder__forget(struct st_unwinder *u, __u32 pid)
{
	(void)u;
	fk.forgets[idx(pid)]++;
}

/* Two frames: the sample's ip, called from 0x1000. */
int st_unwinder__walk(struct st_unwinder *u, const struct st_deferred *d, bool force, __u64 *out,
		      size_t max, unsigned *stop, size_t *fp_frames)
{
	(void)u;
	if (!force && !fk.ready[idx(d->pid)])
		return -EAGAIN;
	assert_true(max >= 2);
	fk.walks++;
	fk.forced += force;
	out[0] = d->ip;
	out[1] = 0x1000;
	*stop = fk.stop;
	*fp_frames = fk.fp;
	return 2;
}

void st_unwinder__scan_stats(const struct st_unwinder *u, __u64 *scanned, __u64 *failed)
{
	(void)u;
	(void)scanned;
	(void)failed;
}

/* ---- helpers ------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A record in the inbox, read `age` seconds ago. */
static void push(__u32 pid, __u32 tid, __u32 seq, __u64 ip, double age)
{
	struct st_defer_rec *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->t = now_s() - age;
	s->bytes = 1000;
	s->d.pid = pid;
	s->d.tid = tid;
	s->d.seq = seq;
	s->d.image = 1;
	s->d.ip = ip;
	*fk.tail = s;
	fk.tail = &s->next;
}

static struct {
	unsigned n;
	__u32 tid[8], seq[8], len[8];
	__u64 leaf[8];
} handed;

static void on_handoff(void *ctx, __u32 tid, const struct st_handoff *h)
{
	(void)ctx;
	assert_true(handed.n < 8);
	handed.tid[handed.n] = tid;
	handed.seq[handed.n] = h->seq;
	handed.len[handed.n] = h->n;
	handed.leaf[handed.n++] = h->n ? h->addrs[h->n - 1] : 0;
}

/* Samples folded into thread (pid, tid): its root's cum, the tree's base. */
static __u64 folded(struct st_collector *c, __u32 pid, __u32 tid)
{
	struct st_raw_thread t;
	size_t pos = 0;
	__u64 n = 0;

	while (st_collector__next_thread(c, &pos, &t)) {
		struct st_tree *copy;

		if (t.pid != pid || t.tid != tid)
			continue;
		copy = st_tree__without_inline(t.tree);	/* finalized: cum */
		assert_non_null(copy);
		n += st_tree__root(copy)->cum;
		st_tree__free(copy);
	}
	return n;
}

static int setup(void **state)
{
	memset(&fk, 0, sizeof(fk));
	memset(&handed, 0, sizeof(handed));
	fk.tail = &fk.inbox;
	fk.stop = ST_UNW_STOP_END;
	*state = st_collector__new(NULL, NULL, NULL);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	st_collector__free(*state);
	return 0;
}

/* ---- tests --------------------------------------------------------------- */

/* A process whose tables are not in waits; the other is walked, folded and
 * handed back (its last seq, the path of its last sample); the waiting
 * thread is handed back once its samples are walked too. */
static void test_waits_for_tables_then_hands_back(void **state)
{
	struct st_collector *c = *state;
	struct st_defer *d = st_defer__new((struct st_unwinder *)&fk, c, -1, 1 << 20);
	__u64 stats[ST_STAT__MAX] = { 0 };

	assert_non_null(d);
	st_defer__on_handoff(d, on_handoff, NULL);
	fk.ready[idx(PID_B)] = true;
	push(PID_A, 11, 1, 0x2000, 0);
	push(PID_B, 21, 1, 0x3000, 0);
	push(PID_B, 21, 2, 0x3010, 0);
	push(PID_A, 11, 2, 0x2010, 0);
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(fk.walks, 2);
	assert_int_equal(folded(c, PID_B, 21), 2);
	assert_int_equal(folded(c, PID_A, 11), 0);
	/* both processes sent samples: their maps were read again */
	assert_int_equal(fk.updates[idx(PID_A)], 1);
	assert_int_equal(fk.updates[idx(PID_B)], 1);
	assert_int_equal(handed.n, 1);
	assert_int_equal(handed.tid[0], 21);
	assert_int_equal(handed.seq[0], 2);
	assert_int_equal(handed.len[0], 2);		/* 0x1000, then the leaf */
	assert_int_equal(handed.leaf[0], 0x3010);
	assert_int_equal(fk.released, 2000);		/* the bytes of the two walked */

	fk.ready[idx(PID_A)] = true;
	assert_int_equal(st_defer__process(d, true), 0);
	assert_int_equal(fk.walks, 4);
	assert_int_equal(folded(c, PID_A, 11), 2);
	assert_int_equal(handed.n, 2);
	assert_int_equal(handed.tid[1], 11);
	assert_int_equal(handed.seq[1], 2);
	assert_int_equal(fk.released, 4000);
	st_defer__stats(d, stats);
	assert_int_equal(stats[ST_STAT_LATE_UNWOUND], 4);
	assert_int_equal(stats[ST_STAT_LATE_AGED], 0);
	st_defer__free(d);
}

/* A sample older than ST_DEFER_WAIT_S is walked with what there is, and
 * counted; the stop reason of each walk is counted, and an incomplete walk
 * folds under [truncated]. A thread with a sample walked and one still
 * waiting is not handed back until the last is walked. */
static void test_aged_and_stop_reasons(void **state)
{
	struct st_collector *c = *state;
	struct st_defer *d = st_defer__new((struct st_unwinder *)&fk, c, -1, 1 << 20);
	__u64 stats[ST_STAT__MAX] = { 0 };
	struct st_raw_thread t;
	size_t pos = 0;

	assert_non_null(d);
	st_defer__on_handoff(d, on_handoff, NULL);
	fk.stop = ST_UNW_STOP_READ_FAULT;
	fk.fp = 3;
	fk.dropped = 5;
	push(PID_A, 11, 1, 0x2000, ST_DEFER_WAIT_S + 1);
	push(PID_A, 11, 2, 0x2010, 0);
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(fk.walks, 1);
	assert_int_equal(fk.forced, 1);
	assert_int_equal(handed.n, 0);	/* seq 2 still waits */
	st_defer__stats(d, stats);
	assert_int_equal(stats[ST_STAT_LATE_AGED], 1);
	assert_int_equal(stats[ST_STAT_UNW_READ_FAULT], 1);
	assert_int_equal(stats[ST_STAT_UNW_FP_FRAMES], 3);
	assert_int_equal(stats[ST_STAT_LATE_UNWOUND], 1);
	assert_int_equal(stats[ST_STAT_LATE_DROPPED], 5);
	assert_true(st_collector__next_thread(c, &pos, &t));
	assert_int_equal(st_tree__root(t.tree)->first_child->f.kind, ST_FRAME_SPECIAL);
	assert_string_equal(st_tree__root(t.tree)->first_child->f.function, ST_TRUNCATED_NAME);

	fk.stop = ST_UNW_STOP_DEPTH;	/* the end: forced, counted as truncated */
	assert_int_equal(st_defer__process(d, true), 0);
	memset(stats, 0, sizeof(stats));
	st_defer__stats(d, stats);
	assert_int_equal(stats[ST_STAT_TRUNCATED], 1);
	assert_int_equal(stats[ST_STAT_LATE_AGED], 1);	/* a forced pass ages nothing */
	assert_int_equal(stats[ST_STAT_LATE_UNWOUND], 2);
	assert_int_equal(handed.n, 1);
	assert_int_equal(handed.seq[0], 2);
	st_defer__free(d);
}

/* An exit flushes that process's samples (forced, its modules finished
 * once) and leaves the others queued. */
static void test_flush_takes_one_process(void **state)
{
	struct st_collector *c = *state;
	struct st_defer *d = st_defer__new((struct st_unwinder *)&fk, c, -1, 1 << 20);

	assert_non_null(d);
	push(PID_A, 11, 1, 0x2000, 0);
	push(PID_B, 21, 1, 0x3000, 0);
	push(PID_A, 12, 1, 0x2100, 0);
	assert_int_equal(st_defer__flush(d, PID_A), 0);
	assert_int_equal(fk.walks, 2);
	assert_int_equal(fk.forced, 2);
	assert_int_equal(fk.finishes[idx(PID_A)], 1);
	assert_int_equal(fk.updates[idx(PID_A)], 1);
	assert_int_equal(fk.finishes[idx(PID_B)], 0);
	assert_int_equal(folded(c, PID_A, 11) + folded(c, PID_A, 12), 2);
	assert_int_equal(folded(c, PID_B, 21), 0);
	assert_int_equal(st_defer__flush(d, PID_A), 0);	/* nothing left: nothing done */
	assert_int_equal(fk.finishes[idx(PID_A)], 1);
	/* a sample that came after the flush still goes in the queue */
	push(PID_A, 11, 2, 0x2010, 0);
	fk.ready[idx(PID_B)] = true;
	fk.ready[idx(PID_A)] = true;
	assert_int_equal(st_defer__process(d, true), 0);
	assert_int_equal(fk.walks, 4);
	assert_int_equal(folded(c, PID_B, 21), 1);
	st_defer__free(d);
}

/* Exits noted during a turn are flushed together at the next pass, each
 * process's modules finished once and its samples walked with its table,
 * which is dropped after; the others stay queued. */
static void test_exits_of_a_turn_together(void **state)
{
	struct st_collector *c = *state;
	struct st_defer *d = st_defer__new((struct st_unwinder *)&fk, c, -1, 1 << 20);

	assert_non_null(d);
	push(PID_A, 11, 1, 0x2000, 0);
	push(PID_B, 21, 1, 0x3000, 0);
	push(PID_A, 12, 1, 0x2100, 0);
	assert_int_equal(st_defer__exited(d, PID_A), 0);
	assert_int_equal(fk.walks, 0);		/* nothing before the pass */
	assert_int_equal(fk.forgets[idx(PID_A)], 0);
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(fk.forced, 2);
	assert_true(fk.finishes[idx(PID_A)] >= 1);	/* before its walks (and its maps read again) */
	assert_int_equal(fk.forgets[idx(PID_A)], 1);
	assert_int_equal(folded(c, PID_A, 11) + folded(c, PID_A, 12), 2);
	assert_int_equal(folded(c, PID_B, 21), 0);	/* its tables are not in */
	assert_int_equal(fk.forgets[idx(PID_B)], 0);
	/* noted once: a later pass forgets nothing more */
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(fk.forgets[idx(PID_A)], 1);
	assert_int_equal(st_defer__exited(d, PID_B), 0);
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(folded(c, PID_B, 21), 1);
	assert_int_equal(fk.forgets[idx(PID_B)], 1);
	st_defer__free(d);
}

/* A process whose samples were not all read from the ring at its exit's
 * flush (the inbox full): the ones queued are walked then, its table kept
 * until the consumer has read past what the ring held, and its samples
 * read since walked with it (forced, its modules finished again) before
 * it is dropped. Before, the table went at once and those samples were
 * walked without it. At the end (the ring stopped), whatever is left. */
static void test_exit_keeps_the_table_for_samples_left_in_the_ring(void **state)
{
	struct st_collector *c = *state;
	struct st_defer *d = st_defer__new((struct st_unwinder *)&fk, c, -1, 1 << 20);

	assert_non_null(d);
	push(PID_A, 11, 1, 0x2000, 0);
	fk.prod = 5000;		/* 3000 bytes unread: PID_A's later samples */
	fk.cons = 2000;
	assert_int_equal(st_defer__exited(d, PID_A), 0);
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(fk.walks, 1);
	assert_int_equal(fk.forgets[idx(PID_A)], 0);	/* kept */
	fk.prod = 9000;		/* written since: not waited for */
	fk.cons = 4000;
	push(PID_A, 11, 2, 0x2010, 0);
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(fk.forgets[idx(PID_A)], 0);
	unsigned finished = fk.finishes[idx(PID_A)];

	fk.cons = 5000;		/* read past them */
	push(PID_A, 11, 3, 0x2020, 0);
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(fk.forgets[idx(PID_A)], 1);
	assert_int_equal(fk.walks, 3);
	assert_int_equal(fk.forced, 3);
	assert_true(fk.finishes[idx(PID_A)] > finished);	/* whole again before them */
	assert_int_equal(folded(c, PID_A, 11), 3);
	assert_int_equal(st_defer__process(d, false), 0);	/* once */
	assert_int_equal(fk.forgets[idx(PID_A)], 1);

	/* PID_B exits with samples left; the session ends before they are read */
	push(PID_B, 21, 1, 0x3000, 0);
	fk.prod = 20000;
	assert_int_equal(st_defer__exited(d, PID_B), 0);
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(fk.forgets[idx(PID_B)], 0);
	push(PID_B, 21, 2, 0x3010, 0);
	assert_int_equal(st_defer__process(d, true), 0);
	assert_int_equal(fk.forgets[idx(PID_B)], 1);
	assert_int_equal(folded(c, PID_B, 21), 2);
	st_defer__free(d);
}

/* A process gone before its maps could be read again: its samples are
 * walked at once with what there is (the mappings BPF kept at its end,
 * for the samples' image, asked for once). Samples without seq or tid are walked
 * but not handed back. */
static void test_gone_and_not_handed_back(void **state)
{
	struct st_collector *c = *state;
	struct st_defer *d = st_defer__new((struct st_unwinder *)&fk, c, -1, 1 << 20);

	assert_non_null(d);
	st_defer__on_handoff(d, on_handoff, NULL);
	fk.gone[idx(PID_A)] = true;
	push(PID_A, 11, 0, 0x2000, 0);	/* seq 0: BPF keeps no count for it */
	push(PID_A, 11, 0, 0x2010, 0);
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(fk.walks, 2);
	assert_int_equal(fk.forced, 2);
	assert_int_equal(fk.finishes[idx(PID_A)], 1);
	assert_int_equal(fk.ended[idx(PID_A)], 1);
	assert_int_equal(fk.ended_image, 1);
	assert_int_equal(folded(c, PID_A, 11), 2);
	assert_int_equal(handed.n, 0);
	st_defer__free(d);
}

/* --unwind fp (no unwinder: the early object's samples): each sample is
 * walked at once by its frame pointers through its copy (fpcopy.h), its
 * process's tables neither read nor waited for, and its thread handed back
 * with the path of its last one. */
static void test_fp_mode_walks_copies_without_tables(void **state)
{
	struct st_collector *c = *state;
	struct st_defer *d = st_defer__new(NULL, c, -1, 1 << 20);
	__u64 pair[2] = { 0, 0x1000 };	/* main's frame: called from 0x1000, the last */
	__u64 stats[ST_STAT__MAX] = { 0 };

	assert_non_null(d);
	st_defer__on_handoff(d, on_handoff, NULL);
	for (__u32 seq = 1; seq <= 2; seq++) {
		struct st_defer_rec *s;

		push(PID_A, 11, seq, 0x2000 + 0x10 * seq, 0);
		for (s = fk.inbox; s->next; s = s->next)
			;
		s->d.sp = 0x7ffc00001000ull;
		s->d.bp = s->d.sp + 0x20;
		s->d.stack_len = 0x100;
		memcpy(s->d.stack + 0x20, pair, sizeof(pair));
	}
	assert_int_equal(st_defer__process(d, false), 0);
	assert_int_equal(fk.walks, 0);			/* not the CFI unwinder's */
	assert_int_equal(fk.updates[idx(PID_A)], 0);	/* no table read */
	assert_int_equal(fk.finishes[idx(PID_A)], 0);
	assert_int_equal(folded(c, PID_A, 11), 2);
	assert_int_equal(handed.n, 1);
	assert_int_equal(handed.tid[0], 11);
	assert_int_equal(handed.seq[0], 2);
	assert_int_equal(handed.len[0], 2);		/* 0x1000, then the leaf */
	assert_int_equal(handed.leaf[0], 0x2020);
	st_defer__stats(d, stats);
	assert_int_equal(stats[ST_STAT_LATE_UNWOUND], 2);
	assert_int_equal(stats[ST_STAT_TRUNCATED], 0);
	st_defer__free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_waits_for_tables_then_hands_back, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_aged_and_stop_reasons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exits_of_a_turn_together, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_takes_one_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_keeps_the_table_for_samples_left_in_the_ring,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_and_not_handed_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fp_mode_walks_copies_without_tables, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

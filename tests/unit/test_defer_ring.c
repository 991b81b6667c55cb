/* test_defer_ring.c - the inbox of the deferred ring's consumer
 * (user/collect/unwind/defer_ring.c), without a ring: records pushed as the
 * ring's callback would, taken whole in order, the byte bound shared with
 * the taken records until they are released, a read stopped (-ENOSPC)
 * while less than one record's room is left, drops of a caller that did
 * not stop counted, malformed records ignored; and pushes from threads
 * while the main thread takes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "user/collect/unwind/defer_ring.h"

#define HEAD offsetof(struct st_deferred, stack)
#define REC_BYTES(len) (offsetof(struct st_defer_rec, d) + HEAD + (len))

/* A record as BPF sends it: the header, then len bytes of stack (*size:
 * what the ring's callback is given; the struct is whole here). */
static void *make(__u32 pid, __u32 len, size_t *size)
{
	struct st_deferred *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	d->pid = d->tid = pid;
	d->stack_len = len;
	for (__u32 i = 0; i < len; i++)
		d->stack[i] = (__u8)(pid + i);
	*size = HEAD + len;
	return d;
}

/* The largest record (a whole stack copy) in the inbox. */
#define REC_MAX REC_BYTES(ST_DEFER_STACK)

/* The callback's answer: 0, or -ENOSPC (the ring's read stops). */
static int push(struct st_defer_ring *r, __u32 pid, __u32 len)
{
	size_t size;
	void *d = make(pid, len, &size);
	int ret = st_defer_ring__push(r, d, size);

	free(d);
	return ret;
}

/* Free a taken list; its bytes. */
static size_t free_list(struct st_defer_rec *s, size_t *n)
{
	size_t bytes = 0;

	*n = 0;
	while (s) {
		struct st_defer_rec *next = s->next;

		bytes += s->bytes;
		(*n)++;
		free(s);
		s = next;
	}
	return bytes;
}

static void test_take_in_order(void **state)
{
	struct st_defer_ring *r = st_defer_ring__new(-1, 1 << 20, 1 << 20);
	struct st_defer_rec *s, *h;
	size_t n;

	(void)state;
	assert_non_null(r);
	assert_null(st_defer_ring__take(r));
	push(r, 10, 64);
	push(r, 11, 0);
	push(r, 12, 300);
	h = st_defer_ring__take(r);
	assert_non_null(h);
	assert_int_equal(h->d.pid, 10);
	assert_int_equal(h->d.stack_len, 64);
	assert_int_equal(h->d.stack[63], (__u8)(10 + 63));
	assert_int_equal(h->bytes, REC_BYTES(64));
	assert_true(h->t > 0);
	s = h->next;
	assert_int_equal(s->d.pid, 11);
	assert_int_equal(s->d.stack_len, 0);
	s = s->next;
	assert_int_equal(s->d.pid, 12);
	assert_int_equal(s->d.stack[299], (__u8)(12 + 299));
	assert_null(s->next);
	/* taken whole: empty now; new pushes start a new list */
	assert_null(st_defer_ring__take(r));
	push(r, 13, 8);
	s = st_defer_ring__take(r);
	assert_non_null(s);
	assert_int_equal(s->d.pid, 13);
	assert_null(s->next);
	assert_int_equal(st_defer_ring__bytes(r), REC_BYTES(64) + REC_BYTES(0) + REC_BYTES(300) +
			 REC_BYTES(8));
	st_defer_ring__release(r, free_list(h, &n) + free_list(s, &n));
	assert_int_equal(st_defer_ring__bytes(r), 0);
	assert_int_equal(st_defer_ring__dropped(r), 0);
	/* without a thread: sync and stop do nothing */
	assert_int_equal(st_defer_ring__sync(r, 10), 0);
	st_defer_ring__stop(r);
	st_defer_ring__free(r);
	st_defer_ring__free(NULL);
}

/* The bound counts the inbox and the taken records until released: a
 * record over it (a caller that went on after -ENOSPC) is dropped
 * (counted), and fits again once room is given back. */
static void test_bound_and_drops(void **state)
{
	struct st_defer_ring *r = st_defer_ring__new(-1, 1 << 20, 3 * REC_BYTES(1000));
	struct st_defer_rec *h, *h2;
	size_t n, bytes;

	(void)state;
	for (int i = 0; i < 5; i++)
		push(r, 100 + i, 1000);
	assert_int_equal(st_defer_ring__dropped(r), 2);
	assert_int_equal(st_defer_ring__bytes(r), 3 * REC_BYTES(1000));
	h = st_defer_ring__take(r);
	/* taken, not released: still counted */
	push(r, 200, 1000);
	assert_int_equal(st_defer_ring__dropped(r), 3);
	/* a smaller one that fits in nothing either */
	push(r, 201, 0);
	assert_int_equal(st_defer_ring__dropped(r), 4);
	/* one freed and released: room for exactly one */
	h2 = h->next;
	bytes = h->bytes;
	free(h);
	st_defer_ring__release(r, bytes);
	push(r, 202, 1000);
	push(r, 203, 1000);
	assert_int_equal(st_defer_ring__dropped(r), 5);
	h = st_defer_ring__take(r);
	assert_int_equal(h->d.pid, 202);
	assert_null(h->next);
	bytes = free_list(h2, &n);
	assert_int_equal(n, 2);
	bytes += free_list(h, &n);
	st_defer_ring__release(r, bytes);
	assert_int_equal(st_defer_ring__bytes(r), 0);
	/* what the inbox still holds is freed with it (no leak under ASan) */
	push(r, 204, 10);
	st_defer_ring__free(r);
}

/* The read of the ring stops (-ENOSPC) as soon as less than the largest
 * record's room is left under the bound, so that a reader that stops there
 * never drops one: the record that said so is kept, and the next, even
 * the largest, still fits; room released, reads go on. */
static void test_full_stops_the_read(void **state)
{
	struct st_defer_ring *r = st_defer_ring__new(-1, 1 << 20, 2 * REC_MAX);
	struct st_defer_rec *h;
	size_t n;

	(void)state;
	/* room left for the largest: the read goes on, and it fits */
	assert_int_equal(push(r, 1, 1000), 0);
	assert_int_equal(push(r, 2, ST_DEFER_STACK), -ENOSPC);	/* kept, and the stop */
	assert_int_equal(st_defer_ring__dropped(r), 0);
	h = st_defer_ring__take(r);
	assert_int_equal(h->next->d.pid, 2);
	assert_int_equal(h->next->d.stack_len, ST_DEFER_STACK);
	st_defer_ring__release(r, free_list(h, &n));
	assert_int_equal(n, 2);
	assert_int_equal(push(r, 4, 10), 0);	/* room again */
	st_defer_ring__free(r);
}

/* What is not a sample is ignored, not counted as a drop. */
static void test_malformed(void **state)
{
	struct st_defer_ring *r = st_defer_ring__new(-1, 1 << 20, 1 << 20);
	size_t size;
	struct st_deferred *d = make(7, 100, &size);

	(void)state;
	st_defer_ring__push(r, d, HEAD - 1);	/* shorter than the header */
	st_defer_ring__push(r, d, size - 1);	/* stack_len past the record */
	d->stack_len = ST_DEFER_STACK + 1;
	st_defer_ring__push(r, d, size);
	assert_null(st_defer_ring__take(r));
	assert_int_equal(st_defer_ring__dropped(r), 0);
	assert_int_equal(st_defer_ring__bytes(r), 0);
	free(d);
	st_defer_ring__free(r);
}

#define PUSHERS 2
#define PER_PUSHER 5000

struct pusher {
	struct st_defer_ring *r;
	__u32 pid;
	int *finished;	/* pushers done (atomic) */
};

static void *pusher_main(void *arg)
{
	struct pusher *p = arg;
	size_t size;
	struct st_deferred *d = make(p->pid, 200, &size);

	for (__u32 i = 0; i < PER_PUSHER; i++) {
		d->tid = i;	/* its order within this pusher */
		st_defer_ring__push(p->r, d, size);
	}
	free(d);
	__atomic_add_fetch(p->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Pushes from other threads while this one takes and releases: every
 * record is either taken (in its pusher's order) or counted as dropped,
 * and the bytes come back to 0. */
static void test_concurrent(void **state)
{
	struct st_defer_ring *r = st_defer_ring__new(-1, 1 << 20, 20 * REC_BYTES(200));
	struct pusher ps[PUSHERS];
	pthread_t th[PUSHERS];
	__u32 next_tid[PUSHERS] = { 0 };
	size_t taken = 0, n;
	int finished = 0;

	(void)state;
	for (int i = 0; i < PUSHERS; i++) {
		ps[i] = (struct pusher){ .r = r, .pid = 1000 + (__u32)i, .finished = &finished };
		assert_int_equal(pthread_create(&th[i], NULL, pusher_main, &ps[i]), 0);
	}
	for (;;) {
		/* read before the take: a take after the last push gets all */
		bool all_done = __atomic_load_n(&finished, __ATOMIC_ACQUIRE) == PUSHERS;
		struct st_defer_rec *h = st_defer_ring__take(r);

		for (struct st_defer_rec *s = h; s; s = s->next) {
			__u32 k = s->d.pid - 1000;

			assert_true(k < PUSHERS);
			assert_true(s->d.tid >= next_tid[k]);	/* in order */
			assert_int_equal(s->d.stack[199], (__u8)(s->d.pid + 199));
			next_tid[k] = s->d.tid + 1;
			taken++;
		}
		st_defer_ring__release(r, free_list(h, &n));
		if (all_done && !h)
			break;
	}
	for (int i = 0; i < PUSHERS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(taken + st_defer_ring__dropped(r), PUSHERS * PER_PUSHER);
	assert_true(taken > 0);
	assert_int_equal(st_defer_ring__bytes(r), 0);
	st_defer_ring__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_in_order),
		cmocka_unit_test(test_bound_and_drops),
		cmocka_unit_test(test_full_stops_the_read),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

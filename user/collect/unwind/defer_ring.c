/* defer_ring.c - the `deferred` ring buffer's consumer thread and its inbox,
 * and the ring itself: created small, grown by swapping in one twice as big
 * (see defer_ring.h). */
#include "user/collect/unwind/defer_ring.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/quiet_thread.h"

/* The consumer sleeps at most this long between reads of the ring while
 * none come (BPF wakes it when an eighth of the ring waits, the main
 * thread for a request); ST_DEFER_READ_MS (bpf/stacktree.h) while they do. */
#define RING_WAIT_MS 100
/* ... and this long between looks at the inbox while it is full (the
 * ring's fd is readable all that time: records wait in it) */
#define FULL_WAIT_MS 10
/* the most one record takes: a read of the ring stops when less than this
 * is left under the bound, so that every record it copies fits */
#define REC_MAX (offsetof(struct st_defer_rec, d) + sizeof(struct st_deferred))
/* A ring is replaced by one twice as big, up to the session's size, when
 * the consumer finds it a quarter full, or when the bytes that came since
 * it last read it would fill half of it in GROW_LATE_S: early, since the
 * consumer may not run for tens of milliseconds on a loaded machine while
 * BPF writes tens of MB/s there (compiles starting at -F 999). At a
 * quarter alone a 2 MiB ring was full before it had grown: under -a with
 * compiles starting and both CPUs busy, 2,673 of ~10,000 cc1 samples were
 * not deferred (a 32 MiB ring lost none). By the rate, a spinning command's
 * early samples (a few KiB each, ~5 MB/s) keep 2 MiB, where "any record
 * found" grew it to 32 MiB once reads were batched (ST_DEFER_READ_MS). */
#define GROW_AT 4
#define GROW_LATE_S 0.1
/* a ring swapped out is read until empty and freed this long after the
 * swap at the earliest: a program that took it before the swap (in
 * interrupt context, microseconds) has written by then */
#define RETIRE_S 0.05
/* rings swapped out and not freed yet: while the inbox is full none is
 * read, so that a ring may grow again before the last one is freed, as
 * long as they all fit in the session's size (16, 8, 4, 2 of 32 MiB) */
#define MAX_OLD 8

/* One ring buffer map and its reader. */
struct ring {
	int fd;				/* -1: none */
	size_t size;			/* data bytes */
	struct ring_buffer *rb;
	/* the ring's positions, mapped read-only (the kernel's ring buffer
	 * ABI: the consumer page, then the producer page): equal, every
	 * record committed has been through push() */
	const unsigned long *cons_pos, *prod_pos;
};

struct st_defer_ring {
	pthread_mutex_t lock;
	pthread_cond_t synced;		/* sync_done moved */
	/* under lock */
	struct st_defer_rec *head, **tail;
	size_t bytes, max_bytes;
	__u64 dropped;
	__u64 sync_req, sync_done;	/* requests made, and the last served */
	bool stop;
	st_defer_ring_fn on_record;	/* and its ctx (st_defer_ring__on_record()) */
	void *on_record_ctx;
	/* the consumer's alone once started (the main thread's before, and
	 * after the join) */
	/* the rings: written by the consumer under lock once it runs (the
	 * main thread reads their positions under lock) */
	struct ring cur;
	struct ring old[MAX_OLD];	/* swapped out, oldest first: read until empty */
	double old_t[MAX_OLD];		/* when each was swapped out */
	unsigned nold;
	__u64 retired;			/* bytes the rings freed had held (read, all) */
	int map_fd;			/* `deferred`: slot 0 holds cur */
	size_t ring_max;		/* cur grows up to this */
	unsigned grows;			/* swaps made */
	int epfd;			/* the rings' epoll fds and wakefd */
	int wakefd;			/* eventfd: sync and stop requests */
	int notifyfd;			/* eventfd: the inbox is no longer empty */
	size_t page;
	pthread_t thread;
	bool running;			/* the main thread's: started, not joined */
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Less than one record's room left under the bound (lock held); at the
 * last read (stop) the ring's own size is the bound: nothing stays in it. */
static bool full(const struct st_defer_ring *r)
{
	return !r->stop && r->max_bytes - (r->bytes < r->max_bytes ? r->bytes : r->max_bytes) <
			   REC_MAX;
}

/* One more on an eventfd (a full counter: a wakeup is pending anyway). */
static void post(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN */
	}
}

/* g's producer (prod) or consumer position: bytes written, read since
 * it was made (0 without a ring). */
static __u64 ring_pos(const struct ring *g, bool prod)
{
	const unsigned long *p = prod ? g->prod_pos : g->cons_pos;

	return p ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : 0;
}

/* Bytes committed or reserved in g and not read yet (0 without a ring). */
static size_t ring_used(const struct ring *g)
{
	if (!g->cons_pos || !g->prod_pos)
		return 0;
	return __atomic_load_n(g->prod_pos, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(g->cons_pos, __ATOMIC_ACQUIRE);
}

static void ring_close(struct st_defer_ring *r, struct ring *g)
{
	if (g->rb && r->epfd >= 0)
		epoll_ctl(r->epfd, EPOLL_CTL_DEL, ring_buffer__epoll_fd(g->rb), NULL);
	ring_buffer__free(g->rb);
	if (g->cons_pos)
		munmap((void *)g->cons_pos, r->page);
	if (g->prod_pos)
		munmap((void *)g->prod_pos, r->page);
	if (g->fd >= 0)
		close(g->fd);
	*g = (struct ring){ .fd = -1 };
}

/* A new ring buffer map of size bytes (a power of two, at least a page),
 * its records read by push(), polled in epfd. 0 or a negative errno. */
static int ring_open(struct st_defer_ring *r, size_t size, struct ring *g)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	*g = (struct ring){ .fd = -1, .size = size };
	g->fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "deferred", 0, 0, (__u32)size, NULL);
	if (g->fd < 0) {
		err = -errno;
		g->fd = -1;
		return err;
	}
	g->rb = ring_buffer__new(g->fd, st_defer_ring__push, r, NULL);
	if (!g->rb)
		goto fail;
	g->cons_pos = mmap(NULL, r->page, PROT_READ, MAP_SHARED, g->fd, 0);
	if (g->cons_pos == MAP_FAILED) {
		g->cons_pos = NULL;
		goto fail;
	}
	g->prod_pos = mmap(NULL, r->page, PROT_READ, MAP_SHARED, g->fd, (off_t)r->page);
	if (g->prod_pos == MAP_FAILED) {
		g->prod_pos = NULL;
		goto fail;
	}
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(g->rb), &ev))
		goto fail;
	return 0;
fail:
	err = -errno;
	ring_close(r, g);
	return err ? err : -ENOMEM;
}

/* The consumer saw used bytes in the current ring, come at bytes_per_s
 * since it last read it: at 1/GROW_AT of it or more, or at a rate that
 * fills half of it in GROW_LATE_S, a ring twice as big takes its place in
 * `deferred`, while it and
 * the rings swapped out and not freed yet fit in ring_max together; the
 * old one is read until empty, then freed (retire()). Without memory for
 * it, the ring stays as it is: BPF counts the samples it cannot defer. */
static void grow(struct st_defer_ring *r, size_t used, double bytes_per_s)
{
	size_t held = 0;
	struct ring g;
	__u32 zero = 0;

	for (unsigned i = 0; i < r->nold; i++)
		held += r->old[i].size;
	if (r->nold >= MAX_OLD || r->cur.size * 2 + held > r->ring_max ||
	    (used * GROW_AT < r->cur.size && bytes_per_s * GROW_LATE_S * 2 < (double)r->cur.size))
		return;
	if (ring_open(r, r->cur.size * 2, &g))
		return;
	if (bpf_map_update_elem(r->map_fd, &zero, &g.fd, BPF_ANY)) {
		ring_close(r, &g);
		return;
	}
	pthread_mutex_lock(&r->lock);
	r->old[r->nold] = r->cur;
	r->old_t[r->nold++] = now_s();
	r->cur = g;
	r->grows++;
	pthread_mutex_unlock(&r->lock);
}

/* Free the oldest swapped-out rings that are read to the end. */
static void retire(struct st_defer_ring *r)
{
	while (r->nold && now_s() - r->old_t[0] >= RETIRE_S && !ring_used(&r->old[0])) {
		pthread_mutex_lock(&r->lock);
		r->retired += ring_pos(&r->old[0], false);
		ring_close(r, &r->old[0]);
		r->nold--;
		memmove(r->old, r->old + 1, r->nold * sizeof(r->old[0]));
		memmove(r->old_t, r->old_t + 1, r->nold * sizeof(r->old_t[0]));
		pthread_mutex_unlock(&r->lock);
	}
}

/* Bytes every ring of the session has had written (produced: prod) or read
 * (consumed) since the start, lock held: the rings alive and those
 * retired. Each ring's positions start at 0 and only grow, and the set of
 * rings changes only under the lock (grow(), retire()), so a later call
 * never sees less (st_defer_ring__mark()). */
static __u64 ring_bytes(const struct st_defer_ring *r, bool prod)
{
	__u64 n = r->retired + ring_pos(&r->cur, prod);

	for (unsigned i = 0; i < r->nold; i++)
		n += ring_pos(&r->old[i], prod);
	return n;
}

/* Bytes unread in any ring (lock held, or the consumer's own). */
static size_t unread(const struct st_defer_ring *r)
{
	size_t n = ring_used(&r->cur);

	for (unsigned i = 0; i < r->nold; i++)
		n += ring_used(&r->old[i]);
	return n;
}

int st_defer_ring__push(void *ctx, void *data, size_t size)
{
	struct st_defer_ring *r = ctx;
	const struct st_deferred *d = data;
	size_t head = offsetof(struct st_deferred, stack), bytes;
	struct st_defer_rec *s;
	st_defer_ring_fn fn;
	void *fn_ctx;
	bool first = false, stop;

	if (size < head || d->stack_len > size - head || d->stack_len > ST_DEFER_STACK)
		return 0;	/* malformed: not a sample */
	bytes = offsetof(struct st_defer_rec, d) + head + d->stack_len;
	/* its room is taken under the lock, the copy (up to 128 KiB) made
	 * outside it: the main thread's take() never waits for a copy */
	pthread_mutex_lock(&r->lock);
	if (r->bytes + bytes > r->max_bytes && !r->stop) {
		r->dropped++;	/* a caller that did not stop at -ENOSPC */
		pthread_mutex_unlock(&r->lock);
		return 0;
	}
	r->bytes += bytes;
	pthread_mutex_unlock(&r->lock);
	s = malloc(bytes);
	if (s) {
		s->next = NULL;
		s->t = now_s();
		s->bytes = bytes;
		memcpy(&s->d, d, head + d->stack_len);
	}
	pthread_mutex_lock(&r->lock);
	if (!s) {
		r->bytes -= bytes;
		r->dropped++;
	} else {
		first = !r->head;
		*r->tail = s;
		r->tail = &s->next;
	}
	stop = full(r);
	fn = r->on_record;
	fn_ctx = r->on_record_ctx;
	pthread_mutex_unlock(&r->lock);
	if (fn)		/* the data, not s: the main thread may have freed s now */
		fn(fn_ctx, d);
	if (first && r->notifyfd >= 0)	/* the main loop's poll returns */
		post(r->notifyfd);
	return stop ? -ENOSPC : 0;
}

/* The consumer: read the ring whenever the kernel or the main thread wakes
 * it (or every RING_WAIT_MS), until told to stop; a last read then. While
 * the inbox is full it does not read: the records wait in the kernel's
 * ring, and when that is full too BPF folds its samples as walked, counted
 * (ST_STAT_DEFER_LOST; the early object's are lost, ST_STAT_EARLY_LOST),
 * rather than the inbox dropping them. */
static void *consume(void *arg)
{
	struct st_defer_ring *r = arg;
	struct epoll_event ev[2];
	bool stop = false, paused = false;
	int wait_ms = RING_WAIT_MS;
	double emptied = now_s();	/* the ring last read to its end */

	while (!stop) {
		struct timespec pause = { .tv_nsec = FULL_WAIT_MS * 1000 * 1000 };
		uint64_t v;
		size_t used;
		__u64 req;
		double t;

		if (paused || (epoll_wait(r->epfd, ev, 2, wait_ms) < 0 && errno != EINTR))
			nanosleep(&pause, NULL);	/* room comes back, or cannot wait */
		if (read(r->wakefd, &v, sizeof(v)) < 0) {
			/* EAGAIN: no request */
		}
		/* the requests made before this read are served by it (or
		 * answered without it while the inbox is full) */
		pthread_mutex_lock(&r->lock);
		req = r->sync_req;
		stop = r->stop;
		paused = full(r);
		pthread_mutex_unlock(&r->lock);
		used = ring_used(&r->cur);
		wait_ms = used ? ST_DEFER_READ_MS : RING_WAIT_MS;	/* records come */
		t = now_s();
		if (!paused) {	/* the older records first */
			for (unsigned i = 0; i < r->nold; i++)
				ring_buffer__consume(r->old[i].rb);
			ring_buffer__consume(r->cur.rb);
		}
		grow(r, used, (double)used / (t - emptied > 0.001 ? t - emptied : 0.001));
		if (!paused)
			emptied = t;
		retire(r);
		pthread_mutex_lock(&r->lock);
		if (r->sync_done != req) {
			r->sync_done = req;
			pthread_cond_broadcast(&r->synced);
		}
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

static void wake(struct st_defer_ring *r)
{
	post(r->wakefd);
}

struct st_defer_ring *st_defer_ring__new(int map_fd, size_t ring_max, size_t max_bytes)
{
	struct st_defer_ring *r = calloc(1, sizeof(*r));
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_condattr_t ca;
	size_t start, first;
	const char *test_start;
	__u32 zero;
	int err;

	if (!r)
		return NULL;
	r->max_bytes = max_bytes;
	r->tail = &r->head;
	r->epfd = r->wakefd = r->notifyfd = -1;
	r->cur.fd = -1;
	r->map_fd = map_fd;
	r->ring_max = ring_max;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->synced, &ca);
	pthread_condattr_destroy(&ca);
	if (map_fd < 0)
		return r;
	r->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	r->notifyfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->wakefd < 0 || r->notifyfd < 0 || r->epfd < 0 ||
	    epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->wakefd, &ev)) {
		err = -errno;
		goto cleanup;
	}
	/* tests only: a smaller first ring, to see it grow */
	test_start = getenv("STACKTREED_TEST_DEFER_RING_START");
	first = test_start && strtoul(test_start, NULL, 10) ? strtoul(test_start, NULL, 10) :
							       ST_DEFER_RING_START;
	for (start = r->page; start < first && start < ring_max; start <<= 1)
		;
	zero = 0;
	if ((err = ring_open(r, start, &r->cur)))
		goto cleanup;
	if (bpf_map_update_elem(map_fd, &zero, &r->cur.fd, BPF_ANY)) {
		err = -errno;
		goto cleanup;
	}
	/* the daemon's signals stay with its main thread (its loop's poll is
	 * what they interrupt): the consumer is born with them all blocked */
	err = st_quiet_thread_start(&r->thread, consume, r);
	if (err)
		goto cleanup;
	r->running = true;
	return r;
cleanup:
	st_defer_ring__free(r);
	errno = -err;
	return NULL;
}

void st_defer_ring__on_record(struct st_defer_ring *r, st_defer_ring_fn fn, void *ctx)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->on_record = fn;
	r->on_record_ctx = ctx;
	pthread_mutex_unlock(&r->lock);
}

void st_defer_ring__stop(struct st_defer_ring *r)
{
	if (!r || !r->running)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_mutex_unlock(&r->lock);
	wake(r);
	pthread_join(r->thread, NULL);
	r->running = false;
}

void st_defer_ring__free(struct st_defer_ring *r)
{
	if (!r)
		return;
	st_defer_ring__stop(r);
	while (r->head) {
		struct st_defer_rec *s = r->head;

		r->head = s->next;
		free(s);
	}
	while (r->nold)
		ring_close(r, &r->old[--r->nold]);
	ring_close(r, &r->cur);
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->wakefd >= 0)
		close(r->wakefd);
	if (r->notifyfd >= 0)
		close(r->notifyfd);
	pthread_cond_destroy(&r->synced);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int st_defer_ring__notify_fd(const struct st_defer_ring *r)
{
	return r->notifyfd;
}

struct st_defer_rec *st_defer_ring__take(struct st_defer_ring *r)
{
	struct st_defer_rec *h;
	uint64_t v;

	/* reset before the take: a push after it posts again (the inbox is
	 * empty then), one between them is taken now */
	if (r->notifyfd >= 0 && read(r->notifyfd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing posted */
	}
	pthread_mutex_lock(&r->lock);
	h = r->head;
	r->head = NULL;
	r->tail = &r->head;
	pthread_mutex_unlock(&r->lock);
	return h;
}

void st_defer_ring__release(struct st_defer_ring *r, size_t bytes)
{
	if (!bytes)
		return;
	pthread_mutex_lock(&r->lock);
	r->bytes -= bytes <= r->bytes ? bytes : r->bytes;
	pthread_mutex_unlock(&r->lock);
}

int st_defer_ring__sync(struct st_defer_ring *r, int timeout_ms)
{
	struct timespec until;
	bool left;
	__u64 mine;
	int err = 0;

	if (!r->running)
		return 0;
	/* nothing unread (the common case once the consumer keeps up): no
	 * round trip. libbpf moves the consumer position past a record after
	 * its callback returned; the producer's moves at reserve time, so a
	 * record reserved and not yet committed makes them differ too. */
	pthread_mutex_lock(&r->lock);
	left = unread(r) > 0;
	pthread_mutex_unlock(&r->lock);
	if (!left)
		return 0;
	/* nor while the inbox is full: nothing is read before room is
	 * released (a wait here, at every exit, kept the main thread from
	 * ever releasing it) */
	pthread_mutex_lock(&r->lock);
	if (full(r)) {
		pthread_mutex_unlock(&r->lock);
		return -ENOSPC;
	}
	pthread_mutex_unlock(&r->lock);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->lock);
	mine = ++r->sync_req;
	pthread_mutex_unlock(&r->lock);
	wake(r);
	pthread_mutex_lock(&r->lock);
	while (r->sync_done < mine && !err)
		err = pthread_cond_timedwait(&r->synced, &r->lock, &until);
	if (r->sync_done >= mine)
		err = 0;
	/* the read stopped at the bound: records committed before the call
	 * are still in the ring */
	left = !err && full(r) && unread(r) > 0;
	pthread_mutex_unlock(&r->lock);
	return err ? -ETIMEDOUT : left ? -ENOSPC : 0;
}

__u64 st_defer_ring__mark(struct st_defer_ring *r)
{
	__u64 m;

	if (!r->running)
		return 0;
	pthread_mutex_lock(&r->lock);
	m = ring_bytes(r, true);
	pthread_mutex_unlock(&r->lock);
	return m;
}

bool st_defer_ring__passed(struct st_defer_ring *r, __u64 mark)
{
	bool passed;

	if (!r->running)	/* stopped: its last read took everything */
		return true;
	pthread_mutex_lock(&r->lock);
	passed = ring_bytes(r, false) >= mark;
	pthread_mutex_unlock(&r->lock);
	return passed;
}

__u64 st_defer_ring__dropped(struct st_defer_ring *r)
{
	__u64 n;

	pthread_mutex_lock(&r->lock);
	n = r->dropped;
	pthread_mutex_unlock(&r->lock);
	return n;
}

size_t st_defer_ring__bytes(struct st_defer_ring *r)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->bytes;
	pthread_mutex_unlock(&r->lock);
	return n;
}

void st_defer_ring__ring(struct st_defer_ring *r, size_t *bytes, unsigned *grows)
{
	pthread_mutex_lock(&r->lock);
	*bytes = r->cur.size;
	for (unsigned i = 0; i < r->nold; i++)
		*bytes += r->old[i].size;
	*grows = r->grows;
	pthread_mutex_unlock(&r->lock);
}

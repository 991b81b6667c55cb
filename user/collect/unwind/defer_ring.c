/* defer_ring.c - the `deferred` ring buffer's consumer thread and its inbox
 * (see defer_ring.h). */
#include "user/collect/unwind/defer_ring.h"

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

/* The consumer sleeps at most this long between reads of the ring (the
 * kernel wakes it sooner: the first record after it caught up, a request). */
#define RING_WAIT_MS 100
/* ... and this long between looks at the inbox while it is full (the
 * ring's fd is readable all that time: records wait in it) */
#define FULL_WAIT_MS 10
/* the most one record takes: a read of the ring stops when less than this
 * is left under the bound, so that every record it copies fits */
#define REC_MAX (offsetof(struct st_defer_rec, d) + sizeof(struct st_deferred))

struct st_defer_ring {
	pthread_mutex_t lock;
	pthread_cond_t synced;		/* sync_done moved */
	/* under lock */
	struct st_defer_rec *head, **tail;
	size_t bytes, max_bytes;
	__u64 dropped;
	__u64 sync_req, sync_done;	/* requests made, and the last served */
	bool stop;
	/* the consumer's alone once started (the main thread's before, and
	 * after the join) */
	struct ring_buffer *rb;
	int epfd;			/* the ring's epoll fd and wakefd */
	int wakefd;			/* eventfd: sync and stop requests */
	int notifyfd;			/* eventfd: the inbox is no longer empty */
	/* the ring's positions, mapped read-only (the kernel's ring buffer
	 * ABI: the consumer page, then the producer page): equal, every
	 * record committed has been through push() */
	const unsigned long *cons_pos, *prod_pos;
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

int st_defer_ring__push(void *ctx, void *data, size_t size)
{
	struct st_defer_ring *r = ctx;
	const struct st_deferred *d = data;
	size_t head = offsetof(struct st_deferred, stack), bytes;
	struct st_defer_rec *s;
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
	pthread_mutex_unlock(&r->lock);
	if (first && r->notifyfd >= 0)	/* the main loop's poll returns */
		post(r->notifyfd);
	return stop ? -ENOSPC : 0;
}

/* The consumer: read the ring whenever the kernel or the main thread wakes
 * it (or every RING_WAIT_MS), until told to stop; a last read then. While
 * the inbox is full it does not read: the records wait in the kernel's
 * ring, and when that is full too BPF folds its samples as walked, counted
 * (ST_STAT_DEFER_LOST), rather than the inbox dropping them. */
static void *consume(void *arg)
{
	struct st_defer_ring *r = arg;
	struct epoll_event ev[2];
	bool stop = false, paused = false;

	while (!stop) {
		struct timespec pause = { .tv_nsec = FULL_WAIT_MS * 1000 * 1000 };
		uint64_t v;
		__u64 req;

		if (paused || (epoll_wait(r->epfd, ev, 2, RING_WAIT_MS) < 0 && errno != EINTR))
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
		if (!paused)
			ring_buffer__consume(r->rb);
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

struct st_defer_ring *st_defer_ring__new(int map_fd, size_t max_bytes)
{
	struct st_defer_ring *r = calloc(1, sizeof(*r));
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!r)
		return NULL;
	r->max_bytes = max_bytes;
	r->tail = &r->head;
	r->epfd = r->wakefd = r->notifyfd = -1;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->synced, &ca);
	pthread_condattr_destroy(&ca);
	if (map_fd < 0)
		return r;
	r->rb = ring_buffer__new(map_fd, st_defer_ring__push, r, NULL);
	if (!r->rb) {
		err = -errno;
		goto cleanup;
	}
	r->cons_pos = mmap(NULL, r->page, PROT_READ, MAP_SHARED, map_fd, 0);
	if (r->cons_pos == MAP_FAILED)
		r->cons_pos = NULL;
	r->prod_pos = mmap(NULL, r->page, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (r->prod_pos == MAP_FAILED)
		r->prod_pos = NULL;
	r->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	r->notifyfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->wakefd < 0 || r->notifyfd < 0 || r->epfd < 0 ||
	    epoll_ctl(r->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(r->rb), &ev) ||
	    epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->wakefd, &ev)) {
		err = -errno;
		goto cleanup;
	}
	/* the daemon's signals stay with its main thread (its loop's poll is
	 * what they interrupt): the consumer is born with them all blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&r->thread, NULL, consume, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto cleanup;
	r->running = true;
	return r;
cleanup:
	st_defer_ring__free(r);
	errno = -err;
	return NULL;
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
	ring_buffer__free(r->rb);
	if (r->cons_pos)
		munmap((void *)r->cons_pos, r->page);
	if (r->prod_pos)
		munmap((void *)r->prod_pos, r->page);
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
	__u64 mine;
	int err = 0;

	if (!r->running)
		return 0;
	/* nothing unread (the common case once the consumer keeps up): no
	 * round trip. libbpf moves the consumer position past a record after
	 * its callback returned; the producer's moves at reserve time, so a
	 * record reserved and not yet committed makes them differ too. */
	if (r->cons_pos && r->prod_pos &&
	    __atomic_load_n(r->prod_pos, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n(r->cons_pos, __ATOMIC_ACQUIRE))
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
	pthread_mutex_unlock(&r->lock);
	return err ? -ETIMEDOUT : 0;
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

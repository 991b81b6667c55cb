/* jevents.c - the java_events ring's reader thread (see jevents.h). */
#include "user/collect/runtimes/java/jevents.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/quiet_thread.h"

/* The reader waits at most this long between reads while no record comes
 * (BPF wakes it when one does; the owner when it stops) */
#define WAIT_MS 1000

struct st_jevents {
	struct ring_buffer *rb;
	int epfd, stopfd;	/* the ring's epoll fd and stopfd; an eventfd */
	pthread_mutex_t *mu;
	st_jevent_fn fn;
	void *ctx;
	pthread_t thread;
	bool running;
	bool stop;		/* (atomic) */
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct st_jevents *r = ctx;

	pthread_mutex_lock(r->mu);
	r->fn(r->ctx, data, size);
	pthread_mutex_unlock(r->mu);
	return 0;
}

static void *reader(void *arg)
{
	struct st_jevents *r = arg;
	struct epoll_event ev[2];

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (epoll_wait(r->epfd, ev, 2, WAIT_MS) < 0 && errno != EINTR)
			break;	/* (cannot happen on a valid epoll fd) */
		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			break;
		(void)ring_buffer__consume(r->rb);
	}
	return NULL;
}

struct st_jevents *st_jevents__new(int ring_fd, pthread_mutex_t *mu, st_jevent_fn fn, void *ctx)
{
	struct st_jevents *r = calloc(1, sizeof(*r));
	struct epoll_event ev = { .events = EPOLLIN };
	int err = -ENOMEM;

	if (!r)
		goto cleanup;
	r->epfd = r->stopfd = -1;
	r->mu = mu;
	r->fn = fn;
	r->ctx = ctx;
	if (!(r->rb = ring_buffer__new(ring_fd, on_record, r, NULL))) {
		err = -errno;
		goto cleanup;
	}
	if ((r->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (r->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    epoll_ctl(r->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(r->rb), &ev) ||
	    epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->stopfd, &ev)) {
		err = -errno;
		goto cleanup;
	}
	err = st_quiet_thread_start(&r->thread, reader, r);
	if (err)
		goto cleanup;
	r->running = true;
	return r;
cleanup:
	st_jevents__free(r);
	errno = -err;
	return NULL;
}

void st_jevents__free(struct st_jevents *r)
{
	uint64_t one = 1;

	if (!r)
		return;
	if (r->running) {
		__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
		if (write(r->stopfd, &one, sizeof(one)) < 0) {
			/* cannot fail on an eventfd below its maximum: woken
			 * by WAIT_MS at the latest */
		}
		pthread_join(r->thread, NULL);
	}
	if (r->stopfd >= 0)
		close(r->stopfd);
	if (r->epfd >= 0)
		close(r->epfd);
	ring_buffer__free(r->rb);
	free(r);
}

/* quiet_thread.h - starting a helper thread of the daemon with every
 * signal blocked: SIGINT, SIGTERM, SIGUSR1 and SIGCHLD stay with the main
 * thread, whose loop's poll they interrupt (a helper that took one would
 * leave the loop waiting). The deferred samples' consumer
 * (user/collect/unwind/defer_ring.c) and the Java events' reader
 * (user/collect/runtimes/java/jevents.c) start so. */
#ifndef STACKTREE_COMMON_QUIET_THREAD_H
#define STACKTREE_COMMON_QUIET_THREAD_H

#include <pthread.h>
#include <signal.h>

/* pthread_create(t, NULL, fn, arg) with the signals blocked in the new
 * thread (the caller's mask unchanged): 0 or a negative errno. */
static inline int st_quiet_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

#endif

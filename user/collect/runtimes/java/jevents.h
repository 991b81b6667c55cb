/* jevents.h - the java_events ring read on a thread of its own.
 *
 * Owner: user/collect/runtimes/java/jevents.c. Each method a sample shows
 * for the first time in its process is reported once on java_events
 * (bpf/java.bpf.h) and must be read from the process while it lives.
 * Read by the daemon's main loop, a report waited for the whole turn
 * (the exits, maps reads and deferred walks of every process under -a):
 * with both CPUs busy one read of the events ring took 10.3 s, and a
 * 6 s JVM's 924 reports were all taken in during its last 0.4 s, 851 of
 * them unreadable by then. Here a thread sleeps on the ring (BPF wakes
 * it) and hands each record to the owner's callback holding the owner's
 * mutex, the one its other entry points hold: what the callback touches
 * is the owner's to guard (java.c says what).
 */
#ifndef STACKTREE_JEVENTS_H
#define STACKTREE_JEVENTS_H

#include <pthread.h>
#include <stddef.h>

struct st_jevents;

/* One record of the ring (size bytes), called on the reader's thread
 * with the owner's mutex held. */
typedef void (*st_jevent_fn)(void *ctx, const void *data, size_t size);

/* Read the BPF ring buffer ring_fd on a new thread (all signals blocked:
 * they stay the main thread's) until st_jevents__free(). NULL and errno
 * on error. */
struct st_jevents *st_jevents__new(int ring_fd, pthread_mutex_t *mu, st_jevent_fn fn, void *ctx);

/* Stop the thread (woken at once; a record it is handling is finished)
 * and free. NULL: nothing. */
void st_jevents__free(struct st_jevents *r);

#endif

/* defer_ring.h - the consumer of the `deferred` ring buffer (dwarf/auto):
 * a thread of its own reads the samples BPF could not walk (struct
 * st_deferred, up to 128 KiB each) into an inbox as they come, so that the
 * ring does not fill while the daemon's main thread compiles unwind tables,
 * reads maps, drains or symbolizes (seconds, for libLLVM). The main thread
 * takes the inbox whole (st_defer_ring__take) into its own queue
 * (user/collect/unwind/deferred.c). The inbox and that queue share one byte bound:
 * a read of the ring stops when less than one record's room is left under
 * it, and the consumer reads again once room is released; meanwhile the
 * records wait in the kernel's ring, and when that is full BPF folds its
 * samples as walked, counted (ST_STAT_DEFER_LOST): none is dropped for
 * want of room (issue 37 item 5), but for the early object's, which walks
 * nothing (lost, counted: ST_STAT_EARLY_LOST).
 *
 * Threads: the consumer only runs the ring's callback; every function below
 * is for the main thread (one thread), and takes the inbox's lock where it
 * shares something with the consumer. Owner: user/collect/unwind/defer_ring.c. */
#ifndef STACKTREE_DEFER_RING_H
#define STACKTREE_DEFER_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

/* One sample, as the main thread gets it: a list, oldest first. */
struct st_defer_rec {
	struct st_defer_rec *next;
	double t;		/* when it was read from the ring, CLOCK_MONOTONIC s */
	size_t bytes;		/* allocated (what the bound counts) */
	struct st_deferred d;	/* cut after stack_len bytes of stack */
};

struct st_defer_ring;

/* The ring buffer's size at the start (or ring_max if smaller): a quiet
 * session's deferred samples fit (the consumer reads them as they come), and
 * it is mapped twice in the daemon's RSS (the kernel's ring buffer ABI). */
#define ST_DEFER_RING_START (2u << 20)

/* map_fd: the `deferred` map (an array of one ring buffer map,
 * st_session__deferred_fd()): a new ring buffer of ST_DEFER_RING_START goes
 * in its slot, read by a new thread, which replaces it by one twice as big
 * whenever it finds it a quarter full or more, up to ring_max bytes (a power of
 * two), and frees the old one once read. -1: no thread (records come only
 * through st_defer_ring__push: the unit tests). max_bytes: the bound on the
 * records alive (inbox, and taken but not released). NULL and errno on
 * failure. */
struct st_defer_ring *st_defer_ring__new(int map_fd, size_t ring_max, size_t max_bytes);
/* Stops and joins the thread (after a last read of the ring), frees what
 * the inbox holds. NULL is fine. */
void st_defer_ring__free(struct st_defer_ring *r);

/* The ring's callback (a ring_buffer_sample_fn): copies one record into the
 * inbox; a malformed one is ignored, one without memory (or over the bound:
 * a caller that did not stop at -ENOSPC) dropped and counted. Thread-safe.
 * Returns 0, or -ENOSPC when less than one record's room is left under the
 * bound (the ring's read stops there), except at the last read (stop),
 * which takes everything the ring holds. */
int st_defer_ring__push(void *ctx, void *data, size_t size);

/* fn(ctx, sample) for each record as the consumer copies it, on its
 * thread, outside the inbox's lock (its own locking is fn's): what must
 * read the sample's process while it lives, before the main thread takes
 * the record, which may be seconds later (a daemon behind). Set at most
 * once, before records come or while they do (a record copied before
 * misses it). fn must be quick: the ring waits meanwhile. */
typedef void (*st_defer_ring_fn)(void *ctx, const struct st_deferred *d);
void st_defer_ring__on_record(struct st_defer_ring *r, st_defer_ring_fn fn, void *ctx);

/* An eventfd readable once a record came into an empty inbox, until the
 * next take (for the main loop's poll); -1 without a thread. */
int st_defer_ring__notify_fd(const struct st_defer_ring *r);
/* Everything in the inbox, oldest first (NULL: nothing); the records are
 * the caller's, to free() and then to st_defer_ring__release(). */
struct st_defer_rec *st_defer_ring__take(struct st_defer_ring *r);
/* bytes of taken records were freed: room under the bound again. */
void st_defer_ring__release(struct st_defer_ring *r, size_t bytes);

/* Make the consumer read the ring now, and wait until it has (or
 * timeout_ms): on 0 every record committed before this call is then in the
 * inbox. 0 at once when the ring holds nothing unread (or without a
 * thread); -ENOSPC at once while the inbox is full (nothing is read
 * before room is released), or when its read stopped there (records left
 * in the ring until room is released); else 0 or -ETIMEDOUT. */
int st_defer_ring__sync(struct st_defer_ring *r, int timeout_ms);
/* The rings' position now: st_defer_ring__passed(r, mark) is true once
 * the consumer has read every record written (or reserved) before this
 * call, whatever the inbox's bound held back meanwhile and however the
 * ring grew (a process's samples, all in the ring when its exit is seen:
 * its table is kept until they are read, user/collect/unwind/deferred.c).
 * Without a thread, or once stopped: 0, and passed. */
__u64 st_defer_ring__mark(struct st_defer_ring *r);
bool st_defer_ring__passed(struct st_defer_ring *r, __u64 mark);
/* The end of the session: the consumer reads the ring a last time and
 * ends (joined). Later calls do nothing; take still works. */
void st_defer_ring__stop(struct st_defer_ring *r);

/* Records dropped since the start (over the bound, or no memory). */
__u64 st_defer_ring__dropped(struct st_defer_ring *r);
/* Bytes alive (in the inbox, and taken but not released). */
size_t st_defer_ring__bytes(struct st_defer_ring *r);
/* The ring buffers' bytes now (the one written, and one swapped out not yet
 * freed), and the times it grew. */
void st_defer_ring__ring(struct st_defer_ring *r, size_t *bytes, unsigned *grows);

#endif

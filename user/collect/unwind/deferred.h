/* deferred.h - samples whose stacks wait for their tables (dwarf/auto; in
 * fp mode, the early object's, walked by frame pointers at once): the
 * BPF walk stopped because the process, or a module its stack went
 * through, had no rows yet (a young process, a library just mapped), and
 * BPF sent its registers and a copy of its stack instead of folding it
 * (bpf/stacktree.h, struct st_deferred). They are kept (memory-bounded)
 * until the process's tables are all in, then walked by the daemon with the
 * same rows and rules (bpf/unwind_step.h) and folded into the thread's tree. When
 * the process exits first (a short-lived one: gcc's as), its pending
 * modules are compiled at once and its samples walked before its table is
 * dropped (kept, when some are still in the kernel's ring, until they are
 * read). A process whose tables do not come within ST_DEFER_WAIT_S, or a
 * final report, walks them with what there is. They are read from the
 * kernel's ring by a thread of their own (user/collect/unwind/defer_ring.c), whose
 * inbox the functions below take first; everything else here is the main
 * thread's. Owner: user/collect/unwind/deferred.c. */
#ifndef STACKTREE_DEFERRED_H
#define STACKTREE_DEFERRED_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"
#include "stacktree.h"

#define ST_DEFER_WAIT_S 10.0
#define ST_DEFER_PASS_S 0.01	/* the queue is walked at most this often */
#define ST_DEFER_PASS_BUDGET_S 0.05	/* ... and for this long (a forced pass: all) */
#define ST_DEFER_MEMORY (128u << 20)	/* bytes of queued samples at most */

struct st_defer;
struct st_unwinder;
struct st_collector;

/* ring_fd: the `deferred` map (st_session__deferred_fd()), its ring buffer
 * made, grown up to ring_max bytes and read by a thread started here (-1:
 * none, samples never come; user/collect/unwind/defer_ring.h). u NULL:
 * --unwind fp (a launched command's early samples, bpf/early.bpf.c), each
 * sample walked by its frame pointers through its copy at once
 * (user/collect/unwind/fpcopy.h), no table read or waited for. NULL and
 * errno on failure. */
struct st_defer *st_defer__new(struct st_unwinder *u, struct st_collector *c, int ring_fd,
			       size_t ring_max);
/* Called after a pass for each thread whose deferred samples are all
 * walked: the daemon hands the thread's last path back to BPF (h: seq and
 * the path, from st_collector__late_path()), so that the thread's next
 * sample folded in BPF counts its calls from there. */
typedef void (*st_handoff_fn)(void *ctx, __u32 tid, const struct st_handoff *h);
void st_defer__on_handoff(struct st_defer *d, st_handoff_fn fn, void *ctx);
/* Called in a pass for each process whose new samples made it read its
 * maps again (after its table): a library mapped since the last read (a
 * JVM's libjvm) is there, whatever the process's other reads missed. */
typedef void (*st_defer_pid_fn)(void *ctx, __u32 pid);
void st_defer__on_refresh(struct st_defer *d, st_defer_pid_fn fn, void *ctx);
/* Called for each sample as it is taken in, before it waits for its
 * tables (the process likely alive: a JVM's methods read then, for a walk
 * that may come after it exited). */
struct st_deferred;
typedef void (*st_defer_sample_fn)(void *ctx, const struct st_deferred *s);
void st_defer__on_sample(struct st_defer *d, st_defer_sample_fn fn, void *ctx);
/* Called for each sample as the ring's consumer copies it, on its thread
 * (defer_ring.h's st_defer_ring__on_record(): fn locks what it shares):
 * the process alive then, even when the main thread takes the sample in
 * only after it exited (a daemon behind). */
void st_defer__on_arrival(struct st_defer *d, st_defer_sample_fn fn, void *ctx);
/* --unwind fp (no unwinder): the HotSpot rule for the JVMs' samples
 * walked by frame pointers (fpcopy.h; the dwarf path's is the unwinder's,
 * st_unwinder__java()). ops as st_unwinder__java()'s, copied. */
struct st_unw_java_ops;
void st_defer__java(struct st_defer *d, const struct st_unw_java_ops *ops);

/* Stops and joins the thread. NULL is fine. */
void st_defer__free(struct st_defer *d);

/* Readable when samples came from the thread (st_session__wake_on()):
 * st_defer__process() takes them and resets it. -1 without a thread. */
int st_defer__notify_fd(const struct st_defer *d);

/* Walk and fold the samples whose tables are in. force: the end of the
 * session: the thread reads the ring a last time and stops, then all the
 * samples are walked, with what there is. 0 or -ENOMEM. */
int st_defer__process(struct st_defer *d, bool force);

/* A time's edge (an endpoint window opens or ends): the ring read now
 * (FLUSH_SYNC_MS at most: the reader reads it every ST_DEFER_READ_MS
 * otherwise) and a pass made whenever the last was, so that the samples
 * taken before the edge whose tables are in are folded before it. Those
 * still waiting for their tables are not. 0 or -ENOMEM. */
int st_defer__catch_up(struct st_defer *d);

/* pid exits: its samples still in the ring are read first, then what they
 * wait for is compiled, they are walked and folded (before its table is
 * dropped). 0 or -ENOMEM. */
int st_defer__flush(struct st_defer *d, __u32 pid);
/* pid exited: as st_defer__flush(), then its table dropped
 * (st_unwinder__forget), at the next st_defer__process(), with the other
 * exits since the last one (one read of the ring, one pass over the queue
 * for all of them); at once without memory for the note. When that read
 * stopped at the bound (records written before the pass still in the
 * ring), the table is dropped only once the ring's reader has passed them
 * (or after ST_DEFER_WAIT_S), and the samples read meanwhile are walked
 * with it. 0 or -ENOMEM. */
int st_defer__exited(struct st_defer *d, __u32 pid);

/* Adds the daemon's counters to stats (ST_STAT_LATE_*, and the stop
 * reasons of the daemon's own walks: ST_STAT_UNW_*, ST_STAT_TRUNCATED). */
void st_defer__stats(const struct st_defer *d, __u64 stats[ST_STAT__MAX]);
/* Adds the counters of the Python merges done here (a deferred sample's
 * Python frames, walked by BPF at the sample, merged after the daemon's
 * unwind: ST_PY_STAT_MERGE_CUT, ST_PY_STAT_UNMATCHED) to py. */
void st_defer__py_stats(const struct st_defer *d, __u64 py[ST_PY_STAT__MAX]);
/* Bytes of deferred samples waiting now (read from the ring, not walked
 * yet), at most ST_DEFER_MEMORY. */
size_t st_defer__queued_bytes(const struct st_defer *d);
/* The ring buffer's bytes now (BPF map memory, not counted in the session's
 * maps), and the times it grew. */
size_t st_defer__ring_bytes(const struct st_defer *d, unsigned *grows);

#endif

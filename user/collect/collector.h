/* collector.h - the daemon's own call-stack trees: merges the node records
 * drained from the kernel, folds the samples the daemon unwound itself, and
 * keeps each process's maps. It gives raw trees (nodes keyed by kind and
 * address) to the symbolize stage (user/symbolize/namer.h); the model stage
 * builds a profile from them (user/model/build.h).
 * Owner: user/collect/collector.c. */
#ifndef STACKTREE_COLLECTOR_H
#define STACKTREE_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

struct st_symbolizer;
struct st_collector;
struct st_tree;
struct st_procmaps;
struct st_perfmap;

/* The names of a raw data leaf's module when it is heap (ST_DATA_HEAP). */
#define ST_RAW_NAME_BRK "[heap]"	/* the brk heap */
#define ST_RAW_NAME_ANON "[anon]"	/* anonymous private memory */

/* A process whose owner is not known (st_raw_thread.uid). */
#define ST_UID_UNKNOWN ((__u32)-1)

/* One thread's raw tree (per event) and what names its frames: valid until
 * the collector's next merge, sample, reset or free. */
struct st_raw_thread {
	__u32 pid, tid;
	/* the process's owner when first met, as /proc/PID shows it: its uid
	 * when its real, effective, saved and file-system uids are that one
	 * and /proc/PID is owned by it (a process that changed credentials is
	 * not dumpable: /proc gives it to root); else ST_UID_UNKNOWN. Read
	 * for the image /proc shows, never for an older one; unknown again
	 * when a new process is announced under the pid of one that exited
	 * and was not evicted yet (the two share the process's entry). */
	__u32 uid;
	__u32 image;			/* the program the process ran (self_exec_id) */
	__u32 ev;			/* its event's tree: ST_EVENT_CPU (the timer's,
					 * --event wall's too), _FAULTS, _OFFCPU */
	const char *comm;
	const char *cgroup;		/* the process's cgroup v2 path, or NULL */
	const struct st_tree *tree;	/* raw: frames keyed by (kind, address) */
	const struct st_procmaps *maps;	/* the process image's mappings */
	const struct st_perfmap *jit;	/* its /tmp/perf-PID.map, or NULL */
};

/* The comm of thread tid of pid while it ran image (bpf/stacktree.h). */
typedef void (*st_comm_fn)(void *ctx, __u32 pid, __u32 tid, __u32 image, char *comm,
			   size_t len);

struct st_collector *st_collector__new(struct st_symbolizer *sym, st_comm_fn comm_fn,
				       void *comm_ctx);
void st_collector__free(struct st_collector *c);

/* Merge one drained generation (see st_drain_fn). Returns 0 or -ENOMEM;
 * malformed records are counted, not fatal. */
int st_collector__merge(struct st_collector *c, const struct st_node_rec *recs, __u32 first_id,
			__u32 count);

/* A process was seen running image (or exec'd into it): read its maps
 * now, while it lives. An older image of pid keeps the maps it had.
 * parent: the process that forked pid, whose image pid still runs (0:
 * none known): its maps for that image are lent to pid's first, so that a
 * child that exec'd before its own /proc/PID/maps could be read is still
 * symbolized (counted, st_collector__inherited()). 0, -ENOMEM, or -ENOSPC:
 * the memory budget had no room for a new process (st_collector__budget()). */
int st_collector__capture(struct st_collector *c, __u32 pid, __u32 image, __u32 parent, bool exec);
/* Processes whose image was symbolized with maps lent by their parent
 * (their own maps were not read: they exec'd first). */
__u64 st_collector__inherited(const struct st_collector *c);

/* Where the mappings BPF kept at a process's end are read (procmaps.h). */
struct st_exec_source;
void st_collector__on_exec_maps(struct st_collector *c, const struct st_exec_source *src);
struct st_exec_place_stats {
	__u64 procs;		/* processes symbolized with such mappings */
	__u64 mappings;		/* mappings placed */
	__u64 no_path;		/* not placed: no path kept for the file (too long, evicted) */
	__u64 other_image;	/* not placed: they were another image's (an exec since) */
};
void st_collector__placed(const struct st_collector *c, struct st_exec_place_stats *out);

/* Called whenever a process's maps are (re-)read (just before), e.g. to
 * push its DWARF unwinding tables (user/collect/unwind/unwinder.h). */
typedef void (*st_refresh_fn)(void *ctx, __u32 pid);
void st_collector__on_refresh(struct st_collector *c, st_refresh_fn fn, void *ctx);

/* Called for a sample's native address of pid (image) that no mapping or
 * perf map covers, as it is merged (the process likely alive): true when
 * a runtime's generated code holds it and the runtime named it (a JVM's
 * code cache: user/collect/runtimes/java/java.h); else the process's maps
 * are read again for it, as before. */
typedef bool (*st_code_fn)(void *ctx, __u32 pid, __u32 image, __u64 addr);
void st_collector__on_code(struct st_collector *c, st_code_fn fn, void *ctx);

/* The image the kernel says pid runs now: 0, -ENOENT (it does not know),
 * -EBUSY (inside an exec). /proc/PID is read for an image only while it is
 * the current one, so that a quick exec does not lend its maps and name to
 * the image before it (those reads are counted). */
typedef int (*st_image_fn)(void *ctx, __u32 pid, __u32 *image);
void st_collector__on_image(struct st_collector *c, st_image_fn fn, void *ctx);
/* /proc reads not taken or dropped because the process ran another image. */
__u64 st_collector__other_image_reads(const struct st_collector *c);

/* Read the maps of young processes again when their follow-up is due (their
 * libraries are mapped after the first sample). Returns the seconds until
 * the next follow-up (1e9 when none). */
double st_collector__followups(struct st_collector *c);

/* The kernel reported that pid's main thread exited: evict it at the next
 * st_collector__reset(). */
void st_collector__exited(struct st_collector *c, __u32 pid);

/* Start a new interval: drop every thread's tree, and evict the processes
 * that exited (they were symbolized in the profile just written). A failed
 * allocation here only loses the cached maps of live processes. */
void st_collector__reset(struct st_collector *c);

/* Re-read the maps of processes whose samples hit addresses no known mapping
 * covers (a dlopen since the last capture). Cheap when nothing is missing. */
void st_collector__refresh_missing(struct st_collector *c);

/* Read again the perf map of every live process (JIT code names: the
 * drain's reading, before its trees are named). */
void st_collector__read_perfmaps(struct st_collector *c);

/* The raw threads one by one: *pos starts at 0; fills *out and returns true,
 * or false past the last. The order is the same while no thread is added. */
bool st_collector__next_thread(const struct st_collector *c, size_t *pos,
			       struct st_raw_thread *out);

/* Name CPython frames (ST_NODE_PYTHON) with py (user/collect/runtimes/python/python.h). */
struct st_python;
void st_collector__python(struct st_collector *c, const struct st_python *py);

/* Fold a sample the daemon unwound itself (user/collect/unwind/deferred.c) into thread
 * (pid, tid)'s tree: user frames leaf first (un of them; truncated: the
 * walk stopped early, under a [truncated] root), then kernel frames leaf
 * first (kn). A new call is counted for each frame past the common prefix
 * with the thread's previous such sample. comm names a thread seen first
 * this way. 0 or -ENOMEM. */
int st_collector__add_sample(struct st_collector *c, __u32 pid, __u32 tid, __u32 image,
			     const char *comm, const __u64 *user, size_t un, bool truncated,
			     const __u64 *kstack, size_t kn);

/* The path of the last sample st_collector__add_sample() folded for (pid,
 * tid, image), as the BPF fold keeps a thread's path (root first, addresses
 * and ST_NODE_* flags): out->n frames; out->seq is left alone. -ENOENT when
 * there is none. */
int st_collector__late_path(struct st_collector *c, __u32 pid, __u32 tid, __u32 image,
			    struct st_handoff *out);

size_t st_collector__threads(const struct st_collector *c);
size_t st_collector__processes(const struct st_collector *c);
/* Bytes held by the trees (the summary's "trees"). */
size_t st_collector__memory(const struct st_collector *c);
/* Bytes held by the processes: maps tables, perf maps, cgroup paths. */
size_t st_collector__maps_memory(const struct st_collector *c);
/* Of those, the processes that ended (exited, gone, exec'd another image),
 * kept only for their samples in the trees until the next reset. */
size_t st_collector__ended_memory(const struct st_collector *c);
/* Unwritten intervals over their bound (a full disk): drop the trees of
 * the processes that ended, and the processes, the oldest first, until the
 * trees and the ended processes hold at most target bytes (or none that
 * ended is left); BASE of what was dropped added to dropped[ev]. Returns
 * the bytes freed (0 also on ENOMEM: nothing dropped). The running
 * processes' trees stay. */
size_t st_collector__drop_ended(struct st_collector *c, size_t target, __u64 dropped[ST_EVENTS]);
/* BASE in the trees of event ev (ST_EVENT_*) now (the interval's, or every
 * unwritten one's): samples, faults, or ns off the CPU. */
__u64 st_collector__samples(const struct st_collector *c, __u32 ev);

/* The daemon's memory budget (common/budget.h; NULL: none): the processes'
 * bytes are its ST_BUDGET_MAPS part, and a process is not kept (its samples
 * stay unsymbolized, counted: st_collector__refused()) when the budget has
 * no room for it after the evictors ran. The trees are measured by the
 * daemon (st_collector__memory()), as its ST_BUDGET_TREES part. */
struct st_budget;
void st_collector__budget(struct st_collector *c, struct st_budget *b);
__u64 st_collector__refused(const struct st_collector *c);
/* Records dropped because their parent was unknown (should stay 0). */
__u64 st_collector__bad_records(const struct st_collector *c);

/* JIT code: addresses in no file-backed mapping are named through the
 * process's /tmp/perf-PID.map (binsym/perfmap.h), read whenever its
 * maps are (first sight, follow-ups, an address nothing names yet), at
 * every profile built (drain) and when it exits, so that the names survive
 * it. Files read and refused, lines skipped, since st_collector__new(). */
struct st_perfmap_stats;
void st_collector__perfmap_stats(const struct st_collector *c, struct st_perfmap_stats *out);

#endif

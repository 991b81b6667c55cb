/* session.h - the BPF side of a profiling session: open, size the maps,
 * load, attach cpu-clock events on every online CPU, drain the kernel trees
 * by generation swap. Owner: user/collect/session.c. */
#ifndef STACKTREE_SESSION_H
#define STACKTREE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

struct st_session_opts {
	__u32 freq;		/* samples per second per CPU */
	bool kernel;		/* kernel frames too */
	bool all;		/* whole system (no target filter) */
	__u32 max_nodes;	/* node ids per generation */
	__u32 max_targets;
	bool verbose;		/* libbpf messages */
	bool bare;		/* benchmark baseline: walk stacks, fold nothing */
	const char *comm;	/* only processes with this name (NULL: any) */
	const char *cgroup;	/* only tasks in this cgroup (v2 directory), or NULL */
	bool include_self;	/* sample the daemon too */
	unsigned events;	/* 1 << ST_EVENT_CPU | 1 << ST_EVENT_FAULTS |
				 * 1 << ST_EVENT_OFFCPU; 0 = cpu */
	bool wall;		/* --event wall (with ST_EVENT_CPU): off-CPU time folded
				 * into the timer's trees, samples weighing their period */
	__u64 offcpu_min_ns;	/* off-CPU periods shorter are not folded (counted) */
	__u32 offcpu_max_rate;	/* off-CPU walks per CPU a second (0: no bound) */
	__u32 unwind_mode;	/* ST_UNWIND_FP, _DWARF or _AUTO (bpf/stacktree.h) */
	__u32 unwind_procs;	/* dwarf/auto: processes with unwinding tables */
	__u32 forced_pages;	/* --force-faults: entries of forced_pages (0: 1) */
	__u32 defer_ring_mb;	/* dwarf/auto: ring buffer of deferred samples (MiB, a
				 * power of two); 0: no deferred unwinding */
	const int *tids;	/* -t: only these threads (NULL: any) */
	size_t ntids;
	bool filter_uid;	/* -u: only tasks whose real uid is uid */
	__u32 uid;
	const __u64 *cpus;	/* -C: ST_MAX_CPUS bits; timers on these CPUs only and
				 * page faults taken there (NULL: every CPU) */
	unsigned interpreters;	/* ST_INTERP_* whose stacks BPF walks (bpf/stacktree.h) */
	unsigned late_interp;	/* ... walked from the first full timer program (the
				 * launched command is one; all with --pid and -a); the
				 * others once a process of theirs is seen */
	bool late_background;	/* nobody waits for the full timer program (a launched
				 * command runs): its verification at a lower priority */
};

struct st_session;

/* -F above this warns: a sample costs ~2.5 us of BPF time (measured on a
 * 2-CPU VM, system-wide), 2.5% of a CPU at 10 kHz; near 100 kHz the machine
 * starves and the node array overflows between drains. */
#define ST_FREQ_WARN 10000u

/* Check -F before anything is loaded: above the kernel's
 * perf_event_max_sample_rate, one line and -EINVAL; above ST_FREQ_WARN, a
 * one-line warning and 0. */
int st_session__check_freq(__u32 freq);
/* Before anything is made or loaded: without CAP_BPF and CAP_PERFMON
 * (effective; CAP_SYS_ADMIN holds both) one line naming what is missing
 * and the setcap command for this binary, and -EPERM; else 0. */
int st_session__check_privileges(void);
/* Open, size and load the programs. On failure prints one line on stderr. */
int st_session__open(const struct st_session_opts *opts, struct st_session **out);
void st_session__free(struct st_session *s);

/* Sample process pid (and its future children); at_exec: only once it execs. */
int st_session__add_target(struct st_session *s, __u32 pid, bool at_exec);
/* Attach the timer on every online CPU and the fork/exec tracepoints. */
int st_session__attach(struct st_session *s);
/* Stop sampling (detach the timer programs). */
void st_session__stop(struct st_session *s);

typedef void (*st_event_fn)(void *ctx, const struct st_event *e);
/* Wait up to timeout_ms for ring buffer events and hand them to fn; the
 * wait also ends when an fd given to st_session__wake_on() is readable. */
int st_session__poll(struct st_session *s, int timeout_ms, st_event_fn fn, void *ctx);
/* fd ends st_session__poll()'s wait too while it is readable: an eventfd
 * the caller resets (the deferred samples' thread says that some came), a
 * launched command's pidfd (it has exited), or the live endpoint's epoll
 * set (user/output/http.h). Before st_session__attach();
 * at most ST_SESSION_WAKE_FDS of them (-ENOSPC); fd stays the caller's,
 * open while it polls. -EBADF for fd < 0. */
#define ST_SESSION_WAKE_FDS 3
int st_session__wake_on(struct st_session *s, int fd);
/* The `deferred` map (an array of one ring buffer map) for the ring of
 * samples BPF could not walk (struct st_deferred, its stack cut at
 * stack_len): not read by st_session__poll(), but by a thread of its own
 * (user/collect/unwind/defer_ring.c), which creates the ring, puts it in
 * slot 0 and grows it up to defer_ring_mb. -ENOENT when the session defers
 * nothing (fp mode without the early object, or no ring asked). */
int st_session__deferred_fd(struct st_session *s);

/* Node records of one drained generation, in id order: ids are
 * first_id .. first_id + count - 1; a record's parent (if not 0) has a
 * smaller id in the same range. */
typedef int (*st_drain_fn)(void *ctx, const struct st_node_rec *recs, __u32 first_id,
			   __u32 count);
/* Swap generations, hand the old one to fn, then clear it. */
int st_session__drain(struct st_session *s, st_drain_fn fn, void *ctx);
/* Fraction of the current generation's node ids in use (0..1). */
double st_session__fill(const struct st_session *s);

/* The comm recorded when the thread's root was last created (once per
 * generation); comm is left as it is when the kernel has none. */
/* The image (self_exec_id) the kernel last saw pid run: 0, -ENOENT when it
 * does not know the process, -EBUSY while it is inside an exec (then *image
 * is the image it leaves). */
int st_session__proc_image(struct st_session *s, __u32 pid, __u32 *image);
/* Hand thread tid's path back to the BPF fold (user/collect/unwind/deferred.c): its
 * next sample folded in the kernel counts calls from there. Best effort. */
void st_session__handoff(struct st_session *s, __u32 tid, const struct st_handoff *h);

void st_session__thread_comm(struct st_session *s, __u32 pid, __u32 tid, __u32 image, char *comm,
			     size_t len);

/* Counters of one event (ST_EVENT_*), summed over CPUs. */
void st_session__stats(const struct st_session *s, unsigned ev, __u64 out[ST_STAT__MAX]);
/* Kernel BPF run-time statistics of event ev's program (ST_EVENT_OFFCPU:
 * the sched_switch one); -ENOTSUP if off. */
int st_session__runtime(const struct st_session *s, unsigned ev, __u64 *run_ns, __u64 *runs);
/* DWARF unwinding tables (user/collect/unwind/unwinder.c): the fd of `unwind_shards`,
 * the map of rows shards (-EINVAL in fp mode; *slots: its size), the pids
 * that have a mapping table in the kernel (at most cap; the kernel copies a
 * parent's table at fork), and each process's mapping table; the chunks
 * of the tables with more than ST_UNWIND_MAX_MAPS mappings are set and
 * deleted as tables too, at their keys (ST_UNWIND_CHUNK_KEY). */
__u32 st_session__unwind_mode(const struct st_session *s);
int st_session__unwind_shards_fd(struct st_session *s, __u32 *slots);
int st_session__unwind_proc_pids(struct st_session *s, __u32 *pids, size_t cap, size_t *n);
int st_session__unwind_set_proc(struct st_session *s, __u32 pid, const struct st_unwind_proc *p);
int st_session__unwind_del_proc(struct st_session *s, __u32 pid);

/* A map of the programs by name (the Python walker's py_* maps,
 * user/collect/runtimes/python/python.c): its fd or a negative errno. */
int st_session__map_fd(struct st_session *s, const char *name);

/* Note a change to the py_procs map (an update or a delete): the BPF
 * programs read their per-CPU copies of its entries again
 * (bpf/python.bpf.h, py_procs_epoch). */
void st_session__py_procs_changed(struct st_session *s);

/* Note a change to the java_procs map (a JVM pushed or its entry
 * deleted): the CPUs' memos of which process has one are looked up again
 * (bpf/java.bpf.h, java_procs_epoch). Any thread. */
void st_session__java_procs_changed(struct st_session *s);
/* The executable file mappings process pid had while it ran image, as BPF
 * kept them at its end (bpf/endmaps.bpf.h), and a file's path: 0, or
 * -ENOENT (none kept). Test hook: STACKTREED_TEST_NO_EXEC_MAPS set, none. */
int st_session__exec_maps(struct st_session *s, __u32 pid, __u32 image, struct st_exec_maps *out);
int st_session__file_path(struct st_session *s, const struct st_file_key *key,
			  struct st_file_path *out);

/* Read ring buffer map fd in st_session__poll() too, handing each record to
 * fn: 0 or a negative errno. Before st_session__attach(); four at most. */
typedef int (*st_ring_fn)(void *ctx, void *data, size_t size);
int st_session__add_ring(struct st_session *s, int fd, st_ring_fn fn, void *ctx);
/* --force-faults: the fd of forced_pages (struct st_forced_key -> __u8). */
int st_session__forced_pages_fd(struct st_session *s);
/* Bytes of BPF map memory, as the kernel accounts it (memlock). */
size_t st_session__map_memory(const struct st_session *s);

#endif

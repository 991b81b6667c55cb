/* window.h - a profile of the samples of a time window, taken without
 * taking them away: the live endpoint's "the next N seconds"
 * (user/output/http.h) while the snapshots go on seeing every sample.
 *
 * Owner: user/model/window.c. The collector's raw trees only grow between
 * two resets (user/collect/collector.h), so a window marks each raw node's
 * counts (BASE, CALLS) when it opens; a fold names the difference since the
 * mark (a raw tree of the nodes that grew, through the namer, as
 * user/model/build.c names whole trees) into the window's own profile and
 * marks again. Before the collector resets (a service snapshot) every open
 * window folds and forgets its marks: after the reset all counts are new.
 * A window costs its marks (16 bytes per raw node and a map slot) and its
 * named profile; the caller bounds how many are open.
 */
#ifndef STACKTREE_WINDOW_H
#define STACKTREE_WINDOW_H

#include <stdbool.h>
#include <linux/types.h>

struct st_collector;
struct st_namer;
struct st_profile;
struct st_window;

/* Which threads a window keeps: 0 / NULL fields match any. container is
 * the id st_cgroup__container() finds in the cgroup path; cgroup matches
 * the path exactly. own_only: only the threads of processes whose owner is
 * uid (st_raw_thread.uid; an unknown owner is no one's), for a client that
 * may see its own processes only. hide_kernel: each run of kernel frames
 * is one frame "[kernel]" (ST_WINDOW_KERNEL) without address, its samples
 * kept: a user sees that its thread was in the kernel, not where (as
 * /proc/PID/stack and perf_event_paranoid hide it). */
struct st_window_filter {
	__u32 pid;
	const char *comm;
	const char *container;
	const char *cgroup;
	bool own_only;
	__u32 uid;
	bool hide_kernel;
};
#define ST_WINDOW_KERNEL "[kernel]"

/* Open a window on c's trees of event ev (ST_EVENT_*), named
 * by n, its profile's event named event; the filter's strings are copied.
 * NULL with errno ENOMEM. */
struct st_window *st_window__new(struct st_collector *c, const struct st_namer *n,
				 const char *event, __u32 ev, const struct st_window_filter *f);
void st_window__free(struct st_window *w);

/* Name what the collector counted since the mark into the window's profile.
 * reset: the collector is about to drop its trees (the marks are dropped:
 * every count after the reset is new); else mark again. 0 or -ENOMEM. */
int st_window__fold(struct st_window *w, bool reset);

/* Fold, then hand over the window's profile (finalized, samples and
 * unresolved counted; the caller frees it; the window is left empty).
 * NULL with errno ENOMEM. */
struct st_profile *st_window__take(struct st_window *w);

#endif

/* summary.h - what a session counted, told: the profile header's lost
 * samples and notes (from the kernel's and the daemon's counters), and the
 * summary text at the end of a session or with each service snapshot.
 * Owner: user/summary.c (composition root: it reads every stage's counters).
 */
#ifndef STACKTREE_SUMMARY_H
#define STACKTREE_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "user/output/http.h"

struct st_profile;
struct st_session;
struct st_collector;
struct st_symbolizer;
struct st_unwinder;
struct st_forcefault;
struct st_python;
struct st_java;
struct st_defer;
struct st_budget;

/* The parts of a session whose counters are told; unw and ff are NULL when
 * not used. faults: the profile told is the page-fault one. */
struct st_summary_src {
	struct st_session *sess;
	const struct st_collector *coll;
	struct st_symbolizer *sym;
	struct st_unwinder *unw;
	struct st_forcefault *ff;
	const struct st_python *py;	/* NULL: --no-python */
	const struct st_java *java;	/* the JVMs met, or NULL */
	size_t memory_mb;		/* --memory-mb, told with the daemon's memory */
	struct st_defer *defer;		/* deferred unwinding, or NULL */
	const struct st_budget *budget;	/* --memory-mb's, told with the daemon's memory */
	__u64 pending_dropped;		/* samples of unwritten snapshots dropped (budget) */
	bool faults;
};

/* Add to p's header, for event ev (enum st_event), the counters st of the
 * interval (ST_STAT__MAX of them, enum st_stat): the lost samples and the
 * notes, then the collector's own counters (since the start). */
void st_summary__notes(struct st_profile *p, const struct st_summary_src *s, unsigned ev,
		       const __u64 *st);

/* The summary of profile p (samples, losses, notes, the daemon's CPU and
 * memory, symbol and unwind-table statistics), one "stacktreed: " line
 * each, ending with where the reports are. */
void st_summary__write(FILE *out, const struct st_profile *p, const struct st_summary_src *s,
		       const char *where);
/* The same, brief (stacktreed on a terminal without -v): the samples, the
 * lost samples, the stacks cut short, where the reports are, and only the
 * other lines whose counters are not zero and tell about the profile (not
 * the daemon's CPU, memory, caches or BPF run time). */
void st_summary__write_brief(FILE *out, const struct st_profile *p,
			     const struct st_summary_src *s, const char *where);

/* BPF run time per walked sample: run_ns over the runs that were not on
 * an idle CPU (those return at once; their few nanoseconds stay in the
 * total, so this errs on the high side). 0 when none. */
double st_summary__ns_per_sample(__u64 run_ns, __u64 runs, __u64 idle);

/* What the session root counts itself, for st_summary__metrics(). */
struct st_summary_run {
	unsigned events;		/* 1 << ST_EVENT_* sampled */
	__u64 snapshots_written, snapshots_failed;
};

/* The daemon's health in Prometheus text format 0.0.4 (the live
 * endpoint's /metrics): every counter of the table the notes use (lost
 * samples by reason, the others by name) since the start, per event;
 * samples, BPF run time, memory (RSS, BPF maps, symbol caches, trees,
 * unwind tables), snapshots. docs/service.md, "Live endpoint", lists the
 * names. The endpoint's own lines are its (user/output/http.c), the
 * process_* ones apart: */
void st_summary__metrics(FILE *out, const struct st_summary_src *s,
			 const struct st_summary_run *run);

/* The standard process_* metrics (CPU, memory, descriptors, start time),
 * from /proc/self alone: any thread may write them (the endpoint's, at
 * each answer). */
void st_summary__process_metrics(FILE *out);

/* The daemon's resident set now, MiB (/proc/self/status). */
long st_summary__rss_mib(void);

#endif

/* daemon.c - run one profiling session: load, sample, drain, symbolize,
 * write the reports, print the summary. */
#include "user/daemon.h"
#include "user/dump.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "user/collect/collector.h"
#include "user/collect/unwind/deferred.h"
#include "user/collect/faults/forcefault.h"
#include "user/symbolize/demangle.h"
#include "user/symbolize/namer.h"
#include "user/model/build.h"
#include "user/collect/launch.h"
#include "user/collect/procmaps.h"
#include "user/collect/runtimes/java/java.h"
#include "user/collect/runtimes/python/python.h"
#include "user/output/http.h"
#include "user/output/outdir.h"
#include "user/model/profile.h"
#include "user/output/report.h"
#include "user/collect/session.h"
#include "user/output/snapshot.h"
#include "user/output/top.h"
#include "common/budget.h"
#include "binsym/elflayout.h"
#include "binsym/symbolizer.h"
#include "user/collect/unwind/unwinder.h"
#include "user/perfflags.h"
#include "user/summary.h"

/* The one global: what the signals asked for. */
#define SIG_STOP 1	/* SIGINT, SIGTERM: final snapshot, then exit */
#define SIG_SNAPSHOT 2	/* SIGUSR1: a snapshot now */
#define SIG_ABORT 4	/* a second SIGINT/SIGTERM while reports are written */
#define SIG_WRITING 8	/* set by the daemon while temporary files may exist */
static volatile sig_atomic_t signal_flags;

/* A second SIGINT/SIGTERM leaves at once: with _exit when no temporary file
 * can exist, else by failing the writes (SIG_ABORT), which remove theirs. */
static void on_signal(int sig)
{
	if (sig == SIGUSR1) {
		signal_flags |= SIG_SNAPSHOT;
		return;
	}
	if (signal_flags & SIG_STOP) {
		if (!(signal_flags & SIG_WRITING))
			_exit(130);
		signal_flags |= SIG_ABORT;
		return;
	}
	signal_flags |= SIG_STOP;
}

/* Change signal_flags from the main flow, the signals held meanwhile. */
static void set_flags(int bits, bool on)
{
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	if (on)
		signal_flags |= bits;
	else
		signal_flags &= ~bits;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The symbolizer's stop request: long work (a debug file's CRC, a huge
 * symbol table) is cut short by a second SIGINT/SIGTERM while the reports
 * are written. Not by the first: it is how -a and --pid sessions end, and
 * the final reports need every module's symbols (each module's work is
 * bounded in time anyway); a second one before writing exits at once. */
static bool stopping(void *ctx)
{
	(void)ctx;
	return signal_flags & SIG_ABORT;
}

/* Why the kernel's trees were drained (drain(), told in the summary). */
enum drain_why {
	DRAIN_NEEDED,		/* a snapshot, the final reports, a window's edge, a top view */
	DRAIN_HALF_FULL,	/* the generation's table passed DRAIN_FILL */
	DRAIN_EXITED,		/* DRAIN_EXITS sampled processes exited */
	DRAIN_CEILING,		/* --drain-interval passed */
	DRAIN__N
};

struct run {
	const struct st_options *o;
	struct st_symbolizer *sym;
	struct st_session *sess;
	struct st_collector *coll;
	struct st_unwinder *unw;	/* dwarf/auto: CFI tables in the BPF maps */
	struct st_defer *defer;		/* dwarf/auto: samples waiting for their tables */
	struct st_demangler *dm;	/* NULL: --no-demangle */
	struct st_namer *names;		/* names the raw trees' frames */
	struct st_python *py;		/* CPython frames (NULL: --no-python) */
	struct st_java *java;		/* HotSpot JVMs (NULL: --interpreters without java) */
	struct st_launch *child;
	struct st_forcefault *ff;	/* --force-faults, or NULL */
	struct st_outdir *out;		/* -o, opened before sampling (a file's: its directory) */
	char *out_name;			/* -o FILE: its name in out */
	FILE *report_out;		/* -o -: the standard output (fd 1 is then stderr) */
	struct st_http *http;		/* --listen, or NULL */
	struct st_top *top;		/* stacktreed top, or NULL */
	char *token;			/* --listen-token-file's, or NULL */
	size_t token_len;
	struct st_budget *budget;	/* --memory-mb: every cache answers to it */
	bool pending;			/* the trees hold intervals not written (disk full) */
	__u64 dropped[ST_EVENTS];	/* their samples dropped over the budget, not told yet */
	__u64 dropped_total, drops;	/* since the start: samples, times */
	bool dropped_said;		/* told since the last snapshot written */
	bool reopen;			/* service: a snapshot failed, open -o again */
	unsigned fail_streak;		/* snapshots failed since the last written */
	double fail_since, fail_said;	/* the streak's first failure; its last line */
	int merge_err;
	unsigned exits;			/* sampled processes exited since the last drain */
	unsigned long drains[DRAIN__N];	/* the kernel's trees drained, by why */
	double last_drain;		/* its time (now_s()) */
	struct st_report_opts ro;
	__u64 prev_stats[ST_EVENTS][ST_STAT__MAX]; /* counters at the previous snapshot */
	__u64 prev_run_ns[ST_EVENTS], prev_runs[ST_EVENTS];
	__u64 prev_py_walked;	/* the Python walker's samples at the previous snapshot */
	double interval_start, next_snapshot;
	double sampling_end;	/* when the final snapshot's sampling stopped, or 0 */
	unsigned snapshots, snapshots_failed;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_event(void *ctx, const struct st_event *e)
{
	struct run *r = ctx;

	if (e->type == ST_EV_EXIT) {
		r->exits++;
		st_collector__exited(r->coll, e->pid);
		/* its deferred samples first: they need its table (walked, and
		 * the table dropped, with the other exits of this turn) */
		if (r->defer) {
			if (st_defer__exited(r->defer, e->pid))
				r->merge_err = -ENOMEM;
		} else if (r->unw) {
			st_unwinder__forget(r->unw, e->pid);
		}
		st_python__exited(r->py, e->pid, NULL);
		st_java__exited(r->java, e->pid, NULL);
	} else {
		/* ST_EV_UNWIND: an address without tables, maybe a new library;
		 * ST_EV_TABLES, _STARTED: the launched command exec'd, then left
		 * the dynamic loader (sampled from now on) */
		if (r->unw && e->type == ST_EV_EXEC)	/* the kernel dropped its table */
			st_unwinder__forget(r->unw, e->pid);
		if (e->type == ST_EV_EXEC) {	/* no interpreter state of the old
						 * program walked in the new one */
			st_python__exited(r->py, e->pid, &e->image);
			st_java__exited(r->java, e->pid, &e->image);
		}
		st_collector__capture(r->coll, e->pid, e->image,
				      e->type == ST_EV_NEW_PROC ? e->ppid : 0,
				      e->type != ST_EV_NEW_PROC);
		if (e->type == ST_EV_STARTED)
			st_session__add_target(r->sess, e->pid, false);
	}
}

/* A process's maps were read: push its unwinding tables; look for CPython
 * and for a JVM. */
static void on_refresh(void *ctx, __u32 pid)
{
	struct run *r = ctx;

	if (r->unw)
		st_unwinder__update(r->unw, pid);
	st_python__probe(r->py, pid);
	st_java__probe(r->java, pid);
}

/* The deferred walks read pid's maps again (samples came): a JVM that
 * mapped libjvm since the collector's reads is found now. */
static void on_defer_refresh(void *ctx, __u32 pid)
{
	struct run *r = ctx;

	st_java__sampled(r->java, pid, now_s());
}

/* A native address no mapping covers: a JVM's stub or compiled code? */
static bool code_of(void *ctx, __u32 pid, __u32 image, __u64 addr)
{
	struct run *r = ctx;

	return st_java__code_seen(r->java, pid, image, addr);
}

/* A deferred sample taken in: its process probed for a JVM (rate-limited). */
static void on_defer_sample(void *ctx, const struct st_deferred *s)
{
	struct run *r = ctx;

	st_java__sampled(r->java, s->pid, now_s());
}

/* A deferred sample read from the ring (the consumer's thread): a known
 * JVM's Java frames read while it lives. On the main thread, when it took
 * the sample in, a daemon behind (-a on a loaded machine) came after the
 * JVM's exit: its walk then read no code cache and stopped at the first
 * Java frame. */
static void on_defer_arrival(void *ctx, const struct st_deferred *s)
{
	struct run *r = ctx;

	st_java__deferred(r->java, s);
}

static int exec_maps_of(void *ctx, __u32 pid, __u32 image, struct st_exec_maps *out)
{
	return st_session__exec_maps(ctx, pid, image, out);
}

static int file_path_of(void *ctx, const struct st_file_key *key, struct st_file_path *out)
{
	return st_session__file_path(ctx, key, out);
}

static int image_of(void *ctx, __u32 pid, __u32 *image)
{
	return st_session__proc_image(ctx, pid, image);
}

static void comm_of(void *ctx, __u32 pid, __u32 tid, __u32 image, char *comm, size_t len)
{
	st_session__thread_comm(ctx, pid, tid, image, comm, len);
}

static void handoff(void *ctx, __u32 tid, const struct st_handoff *h)
{
	st_session__handoff(ctx, tid, h);
}

static int on_drain(void *ctx, const struct st_node_rec *recs, __u32 first, __u32 count)
{
	struct run *r = ctx;
	int err = st_collector__merge(r->coll, recs, first, count);

	if (err)
		r->merge_err = err;
	return err;
}

static bool targets_alive(const struct run *r)
{
	for (size_t i = 0; i < r->o->npids; i++)
		if (kill(r->o->pids[i], 0) == 0 || errno != ESRCH)
			return true;
	return false;
}

static char *describe_target(const struct st_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (o->all)
		fprintf(f, "system-wide");
	for (size_t i = 0; i < o->npids; i++)
		fprintf(f, "%spid %d", i ? ", " : "", o->pids[i]);
	for (size_t i = 0; o->cmd && o->cmd[i]; i++)
		fprintf(f, "%s%s", i ? " " : "", o->cmd[i]);
	for (size_t i = 0; i < o->ntids; i++)
		fprintf(f, "%s%d", i ? "," : ", only thread ", o->tids[i]);
	if (o->filter_uid)
		fprintf(f, ", only uid %u", o->uid);
	for (int c = 0, n = 0; o->filter_cpus && c < ST_MAX_CPUS; c++)
		if (o->cpus[c / 64] & (1ull << (c % 64)))
			fprintf(f, "%s%d", n++ ? "," : ", only on CPU ", c);
	fclose(f);
	return buf;
}

static const char *const event_names[ST_EVENTS] = {
	[ST_EVENT_CPU] = "cpu-clock", [ST_EVENT_FAULTS] = "page-faults",
	[ST_EVENT_OFFCPU] = "offcpu",
};

/* File name prefixes when one session records two events. */
static const char *const event_prefixes[ST_EVENTS] = {
	[ST_EVENT_CPU] = "cpu.", [ST_EVENT_FAULTS] = "faults.", [ST_EVENT_OFFCPU] = "offcpu.",
};

/* The profile's event: --event wall's trees are the timer's. */
static const char *event_name(const struct st_options *o, unsigned ev)
{
	return ev == ST_EVENT_CPU && (o->events & ST_EVENTS_WALL) ? "wall" : event_names[ev];
}

/* The parts whose counters the notes and the summary tell. */
static struct st_summary_src parts(const struct run *r)
{
	return (struct st_summary_src){
		.sess = r->sess, .coll = r->coll, .sym = r->sym, .unw = r->unw, .ff = r->ff,
		.py = r->py, .java = r->java, .memory_mb = r->o->memory_mb,
		.defer = r->defer, .budget = r->budget, .pending_dropped = r->dropped_total,
	};
}

/* A raw tree's samples: its nodes' BASE (CUM is the built profile's), by
 * the tree's links (its depth is the sampled stacks'). */
static __u64 tree_samples(const struct st_node *top)
{
	__u64 sum = 0;

	for (const struct st_node *n = top; n; n = st_node__next_in(top, n))
		sum += n->base;
	return sum;
}

/* The samples of CPython processes in p that no Python walker saw (their
 * Python frames missing): taken by the early object or a full program
 * walking no Python, before the walker was in (a runtime found after the
 * launch: user/collect/session.c), or before the daemon found the process's
 * interpreter. The interval's samples of process images where CPython was
 * found (not the shell or launcher the pid ran before its exec), less the
 * walker's count of the interval (BPF's: samples it found the process in
 * py_procs for). --event cpu alone: the page-fault and off-CPU programs'
 * walks count there too. */
static void python_unwalked(struct st_profile *p, struct run *r)
{
	struct st_python_stats ps;
	struct st_raw_thread t;
	__u64 mine = 0, walked;
	size_t pos = 0;

	if (!r->py || st_python__stats(r->py, &ps))
		return;
	walked = ps.bpf[ST_PY_STAT_SAMPLES] - r->prev_py_walked;
	r->prev_py_walked = ps.bpf[ST_PY_STAT_SAMPLES];
	if ((r->o->events & ST_EVENTS_MASK) != (1u << ST_EVENT_CPU) ||
	    (r->o->events & ST_EVENTS_WALL))
		return;
	while (st_collector__next_thread(r->coll, &pos, &t))
		if (t.ev == ST_EVENT_CPU && st_python__followed(r->py, t.pid, t.image))
			mine += tree_samples(st_tree__root(t.tree));
	if (mine > walked)
		st_profile__add_note_id(p, "python_unwalked", "python: samples of python processes "
					"not walked (native frames only; before the python walker "
					"was in, or before the process was found)", mine - walked);
}

static void fill_header(struct st_profile *p, struct run *r, unsigned ev, double secs)
{
	const struct st_summary_src src = parts(r);
	__u64 st[ST_STAT__MAX], now_st[ST_STAT__MAX], run_ns = 0, runs = 0;

	/* counters of this interval: the difference since the last snapshot */
	st_session__stats(r->sess, ev, now_st);
	if (ev == ST_EVENT_CPU && r->defer)	/* the daemon's own walks */
		st_defer__stats(r->defer, now_st);
	for (int i = 0; i < ST_STAT__MAX; i++) {
		st[i] = now_st[i] - r->prev_stats[ev][i];
		r->prev_stats[ev][i] = now_st[i];
	}
	if (ev == ST_EVENT_CPU && (r->o->events & ST_EVENTS_WALL)) {
		/* wall: the off-CPU program's own counters (its folds are the timer's) */
		st_session__stats(r->sess, ST_EVENT_OFFCPU, now_st);
		for (int i = ST_STAT_OFFCPU_NS; i <= ST_STAT_OFFCPU_RATE_NS; i++) {
			st[i] = now_st[i] - r->prev_stats[ST_EVENT_OFFCPU][i];
			r->prev_stats[ST_EVENT_OFFCPU][i] = now_st[i];
		}
	}
	p->frequency_hz = ev == ST_EVENT_CPU ? r->o->freq : 0;
	p->duration_s = secs;
	{	/* wall clock: the interval ended when its snapshot began (now_s() is monotonic) */
		struct timespec rt;

		clock_gettime(CLOCK_REALTIME, &rt);
		p->end_s = (double)rt.tv_sec + (double)rt.tv_nsec / 1e9 -
			   (now_s() - (r->sampling_end > 0 ? r->sampling_end : r->interval_start + secs));
		p->start_s = p->end_s - secs;
	}
	p->command = describe_target(r->o);
	st_summary__notes(p, &src, ev, st);
	if (ev == ST_EVENT_CPU)
		python_unwalked(p, r);
	if (!st_session__runtime(r->sess, ev, &run_ns, &runs)) {
		__u64 dns = run_ns - r->prev_run_ns[ev], druns = runs - r->prev_runs[ev];

		p->bpf_ns_per_sample = st_summary__ns_per_sample(dns, druns, st[ST_STAT_IDLE]);
		st_profile__add_note_id(p, "bpf_runs", "BPF program runs", druns);
		r->prev_run_ns[ev] = run_ns;
		r->prev_runs[ev] = runs;
	}
}

/* The parts the daemon measures, told to the budget after each drain: the
 * trees, the deferred queue, the CFI rows. Unwritten intervals (a full
 * disk) are bounded by the budget: their trees and the processes that
 * ended, kept only for those, may hold a quarter of it, or a sixteenth
 * while it is over its limit (after every evictor ran). Over that, the
 * processes that ended go with their trees, the oldest first, down to 7/8
 * of the share (memory levels off there, the running processes and the
 * newest ended ones kept); when the running ones' trees alone are over,
 * every tree goes. Their samples are counted as lost in the next snapshot
 * written ("unwritten snapshots over the memory budget"); said once until
 * a snapshot is written. */
static void budget_sync(struct run *r)
{
	struct st_budget_stats bs;
	__u64 lost[ST_EVENTS] = { 0 };
	size_t pending, share;
	bool over, all;

	if (!r->budget)
		return;
	if (r->unw) {
		struct st_unwinder_stats us;

		st_unwinder__stats(r->unw, &us);
		st_budget__set(r->budget, ST_BUDGET_UNWIND, us.bytes);
	}
	if (r->defer)
		st_budget__set(r->budget, ST_BUDGET_DEFER, st_defer__queued_bytes(r->defer));
	over = st_budget__set(r->budget, ST_BUDGET_TREES, st_collector__memory(r->coll));
	st_budget__stats(r->budget, &bs);
	if (!r->pending)
		return;
	pending = bs.part[ST_BUDGET_TREES] + st_collector__ended_memory(r->coll);
	share = over ? bs.limit / 16 : bs.limit / 4;
	if (pending <= share)
		return;
	st_http__before_reset(r->http);	/* open windows fold what they have */
	st_collector__drop_ended(r->coll, share - share / 8, lost);
	all = st_collector__memory(r->coll) + st_collector__ended_memory(r->coll) > share;
	for (unsigned ev = 0; ev < ST_EVENTS; ev++) {
		__u64 n = lost[ev] + (all ? st_collector__samples(r->coll, ev) : 0);

		r->dropped[ev] += n;
		r->dropped_total += n;
	}
	r->drops++;
	st_budget__refused(r->budget, ST_BUDGET_TREES);
	if (all) {
		st_collector__reset(r->coll);
		st_python__reset(r->py);
		st_java__reset(r->java);
		malloc_trim(0);	/* the trees dropped: back to the system */
	}	/* (else what the oldest held is taken again by the new trees) */
	st_budget__set(r->budget, ST_BUDGET_TREES, st_collector__memory(r->coll));
	if (!r->dropped_said)
		fprintf(stderr, "stacktreed: unwritten snapshots hold %zu MiB, over their share of "
			"the memory budget (%zu MiB for the caches, --memory-mb): samples are "
			"dropped, the oldest ended processes' first (all when the running ones' "
			"alone are over), from now on until a snapshot is written (counted in "
			"it)\n", pending >> 20, bs.limit >> 20);
	r->dropped_said = true;
}

/* What the loop does every TIDY_S whether or not it drained: the maps of
 * processes whose drained samples hit addresses no mapping covered read
 * again, the unwinding tables of processes gone dropped, the parts'
 * memory told to the budget (the deferred queue's and the CFI rows' grow
 * between drains). */
#define TIDY_S 1.0

static void tidy(struct run *r)
{
	st_collector__refresh_missing(r->coll);
	if (r->unw)
		st_unwinder__sweep(r->unw);
	budget_sync(r);
}

/* The kernel's trees into the collector's. A generation lasts until one of
 * these: its table passes DRAIN_FILL (the other half of the ids is the
 * headroom of a burst while the loop is busy), DRAIN_EXITS sampled
 * processes exited (their comms and end-of-life mappings are in LRU maps
 * of 4,096 and 16,384 entries, read when their samples are merged), a
 * consumer needs the samples up to now (a snapshot, the final reports, an
 * endpoint window's edge, a `top` view: they call drain()), or
 * --drain-interval passed. Each drain starts a new generation, in which
 * every thread looks its nodes up (and creates them) again with a cold
 * node cache (bpf/fold.bpf.h): with 100 busy processes on 2 CPUs, ~20
 * samples each a second, drained every second most frames were lookups
 * (17 a sample, against 3 in a generation of 30 s: bench/run.sh walk). */
#define DRAIN_FILL 0.5
#define DRAIN_EXITS 1024

static int drain(struct run *r, enum drain_why why)
{
	int err = st_session__drain(r->sess, on_drain, r);

	r->drains[why]++;
	r->exits = 0;
	r->last_drain = now_s();
	tidy(r);
	if (err || r->merge_err) {
		fprintf(stderr, "stacktreed: cannot merge the kernel trees: %s\n",
			strerror(-(err ? err : r->merge_err)));
		return err ? err : r->merge_err;
	}
	return 0;
}

/* -o -: the report on standard output. */
static int write_stdout(struct run *r, const struct st_profile *p)
{
	int err = st_report__write_stream(p, r->report_out, r->o->formats, &r->ro);

	if (fflush(r->report_out) || ferror(r->report_out)) {
		err = err ? err : -(errno ? errno : EIO);
		fprintf(stderr, "stacktreed: cannot write the report to standard output: %s\n",
			strerror(-err));
	}
	return err;
}

/* A snapshot failed: -o opened again (its writability checked), or the
 * error (a full disk). 0 when none failed. */
static int reopen_out(struct run *r)
{
	int err;

	if (!r->reopen)
		return 0;
	st_outdir__free(r->out);
	r->out = NULL;
	/* quiet: the failure that set reopen said why; snapshot() tells the rest */
	if ((err = st_outdir__retry(r->o->output, r->o->output_mode, &r->out)))
		return err;
	st_outdir__set_abort(r->out, &signal_flags, SIG_ABORT);
	r->reopen = false;
	return 0;
}

/* Write the profiles into -o (service: a new snapshot directory there). */
static int write_reports(struct run *r, const struct st_profile *const *ps,
			 const char *const *prefixes, size_t n, const char *summary)
{
	const struct st_options *o = r->o;
	char where[4096];
	int err = 0;

	if ((err = reopen_out(r)))
		return err;
	set_flags(SIG_WRITING, true);
	if (o->interval <= 0) {
		for (size_t i = 0; i < n && !err; i++) {
			struct st_report_opts ro = r->ro;

			ro.prefix = prefixes[i];
			if (r->report_out)	/* one event: checked with -o */
				err = write_stdout(r, ps[i]);
			else if (r->out_name)
				err = st_report__write_file(ps[i], r->out, r->out_name, o->formats,
							    &ro);
			else
				err = st_report__write(ps[i], r->out, &ro);
		}
	} else {
		err = st_snapshot__write(ps, prefixes, n, r->out, &r->ro, summary, o->keep, where,
					 sizeof(where));
	}
	set_flags(SIG_WRITING, false);
	if (err || o->interval <= 0)
		return err;
	r->snapshots++;
	{
		char v[64];

		fprintf(stderr, "stacktreed: snapshot %s: %s %s, %zu threads, lost %" PRIu64
			", RSS %ld MiB\n", where, st_profile__value(ps[0], ps[0]->samples, v,
								  sizeof(v)),
			st_profile__what(ps[0]), ps[0]->nthreads, (uint64_t)ps[0]->lost,
			st_summary__rss_mib());
	}
	return 0;
}

/* service: a failing -o (a full disk) said again at most this often */
#define FAIL_SAY_S 600

/* Service mode: source lookups (inline frames, lines) take at most this
 * long per snapshot, the rest waits for the next one; modules' DWARF is
 * opened between snapshots, not within this long of the next, and closed
 * after each snapshot. */
#define SOURCE_BUDGET_S 0.2
#define SOURCE_WARM_MIN_S 0.5

/* Drain, symbolize and write what was sampled since the last snapshot, one
 * profile per event. Service mode (--interval): a new snapshot directory,
 * then a new interval; a snapshot that cannot be written (disk full...) is
 * reported and its samples go into the next one. Otherwise the reports go
 * into the output directory. */
static int snapshot(struct run *r)
{
	const struct st_options *o = r->o;
	const struct st_profile *ps[ST_EVENTS];
	struct st_profile *p[ST_EVENTS] = {};
	const char *prefixes[ST_EVENTS];
	__u64 prev_stats[ST_EVENTS][ST_STAT__MAX], prev_run_ns[ST_EVENTS], prev_runs[ST_EVENTS];
	__u64 prev_py_walked = r->prev_py_walked;
	char *text = NULL;
	size_t len = 0, n = 0;
	FILE *mem = NULL;
	double t = now_s(), symbolized = 0;
	char where[4096];	/* the summary's "reports in WHERE" */
	bool trim = false;
	int err;

	snprintf(where, sizeof(where), "%s%s", r->report_out ? "standard output" : o->output,
		 r->report_out || r->out_name ? "" : "/");
	r->next_snapshot = t + o->interval;
	if ((err = drain(r, DRAIN_NEEDED)))
		return err;
	/* the interval's counters, restored when its snapshot fails */
	memcpy(prev_stats, r->prev_stats, sizeof(prev_stats));
	memcpy(prev_run_ns, r->prev_run_ns, sizeof(prev_run_ns));
	memcpy(prev_runs, r->prev_runs, sizeof(prev_runs));
	/* the last snapshot failed (a full disk): -o first, so that no profile
	 * is built of the trees that wait while it cannot be written (one
	 * every interval, of up to a quarter of the budget, thrown away; the
	 * deferred queue backed up to 16 MiB meanwhile) */
	if ((err = reopen_out(r)))
		goto written;
	/* service: on schedule; DWARF is opened between snapshots (warm());
	 * the final reports: module by module before naming (out of memory,
	 * what is left is looked up while naming, as it was) */
	if (o->interval > 0)
		st_symbolizer__source_budget(r->sym, true, now_s() + SOURCE_BUDGET_S);
	else
		(void)st_namer__settle_sources(r->names, r->coll);
	for (unsigned ev = 0; ev < ST_EVENTS; ev++) {
		if (!(o->events & (1u << ev)))
			continue;
		p[n] = st_profile__build(r->coll, r->names, event_name(o, ev), ev);
		if (!p[n]) {
			fprintf(stderr, "stacktreed: cannot build the profile: out of memory\n");
			err = -ENOMEM;
			goto cleanup;
		}
		fill_header(p[n], r, ev, t - r->interval_start);
		if (r->dropped[ev] && st_profile__add_lost(p[n], "unwritten snapshots over the "
							   "memory budget", r->dropped[ev])) {
			err = -ENOMEM;
			goto cleanup;
		}
		ps[n] = p[n];
		prefixes[n] = (o->events & ST_EVENTS_MASK) == (1u << ev) ? "" : event_prefixes[ev];
		n++;
	}
	/* the DWARF files are not held between snapshots, nor while the
	 * reports are written (memory) */
	st_symbolizer__source_release(r->sym);
	mem = open_memstream(&text, &len);
	if (!mem) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		struct st_summary_src src = parts(r);

		src.faults = !strcmp(ps[i]->event, event_names[ST_EVENT_FAULTS]);
		st_summary__write(mem, ps[i], &src, o->interval > 0 ? "(this directory)" : where);
	}
	fprintf(mem, "stacktreed: kernel tree generations drained: %lu (%lu for reports, windows "
		"and views, %lu half full, %lu after %d exits, %lu at --drain-interval %g s)\n",
		r->drains[DRAIN_NEEDED] + r->drains[DRAIN_HALF_FULL] + r->drains[DRAIN_EXITED] +
		r->drains[DRAIN_CEILING], r->drains[DRAIN_NEEDED], r->drains[DRAIN_HALF_FULL],
		r->drains[DRAIN_EXITED], DRAIN_EXITS, r->drains[DRAIN_CEILING], o->drain_interval);
	fclose(mem);
	err = write_reports(r, ps, prefixes, n, text);
written:
	if (!err)	/* from the end of sampling (or the snapshot's start) */
		symbolized = now_s() - (r->sampling_end > 0 ? r->sampling_end : t);
	if (o->interval <= 0) {
		/* on a terminal, without -v: the brief summary; logs and pipes get all */
		if (!err && !o->verbose && isatty(STDERR_FILENO) == 1) {
			for (size_t i = 0; i < n; i++) {
				struct st_summary_src src = parts(r);

				src.faults = !strcmp(ps[i]->event, event_names[ST_EVENT_FAULTS]);
				st_summary__write_brief(stderr, ps[i], &src, where);
			}
		} else if (!err) {
			fputs(text, stderr);
			fprintf(stderr, "stacktreed: symbolized in %.2f s (end of sampling to "
				"reports written)\n", symbolized);
		}
		goto cleanup;
	}
	if (!err)
		fprintf(stderr, "stacktreed: symbolized in %.2f s (snapshot start to written)\n",
			symbolized);
	if (!err) {
		st_http__before_reset(r->http);	/* open live profiles keep their samples */
		st_collector__reset(r->coll);
		st_python__reset(r->py);	/* the codes of processes gone */
		st_java__reset(r->java);	/* ... and methods */
		if (r->fail_streak)
			fprintf(stderr, "stacktreed: snapshots written again in %s, after %u failed "
				"over %.0f s\n", o->output, r->fail_streak, t - r->fail_since);
		r->fail_streak = 0;
		r->interval_start = t;
		r->pending = false;
		r->dropped_said = false;
		memset(r->dropped, 0, sizeof(r->dropped));
	} else if (r->sampling_end > 0 && err != -ECANCELED) {
		/* the final snapshot: no next one to take its samples */
		fprintf(stderr, "stacktreed: the final snapshot was not written (%s): the samples "
			"since the last snapshot written are lost; free space in %s\n",
			strerror(-err), o->output);
		r->snapshots_failed++;
	} else if (err != -ECANCELED) {
		memcpy(r->prev_stats, prev_stats, sizeof(prev_stats));
		r->prev_py_walked = prev_py_walked;
		memcpy(r->prev_run_ns, prev_run_ns, sizeof(prev_run_ns));
		memcpy(r->prev_runs, prev_runs, sizeof(prev_runs));
		r->reopen = true;
		r->pending = true;
		r->snapshots_failed++;
		if (!r->fail_streak++) {
			r->fail_since = r->fail_said = t;
			fprintf(stderr, "stacktreed: snapshot not written; its samples go into the "
				"next one, in %g s (tried every interval, said again every %d "
				"minutes while it fails)\n", o->interval, FAIL_SAY_S / 60);
		} else if (t - r->fail_said >= FAIL_SAY_S) {
			r->fail_said = t;
			fprintf(stderr, "stacktreed: still no snapshot written in %s (%s): %u failed "
				"over %.0f s; the samples wait, up to a quarter of the memory budget "
				"(then dropped, counted)\n", o->output, strerror(-err),
				r->fail_streak, t - r->fail_since);
		}
		err = 0;
	}
cleanup:
	free(text);
	for (size_t i = 0; i < ST_EVENTS; i++) {
		trim |= p[i] != NULL;
		st_profile__free(p[i]);
	}
	/* what the interval's trees, the profiles built of them and the freed
	 * caches held goes back to the system, not kept by malloc for a flood
	 * that has stopped (measured: RSS held at its peak without it), and
	 * so does a snapshot's that could not be written (a full disk: one
	 * built every interval of the trees that wait, freed after) */
	if (trim)
		malloc_trim(0);
	return err;
}

static int sample_loop(struct run *r, double t0)
{
	const struct st_options *o = r->o;
	double last_tidy = t0, wait = 0.1; /* wait: until the next maps follow-up */
	int status, err;

	while (!(signal_flags & SIG_STOP)) {
		enum drain_why why;
		double t;

		st_session__poll(r->sess, wait < 0.1 ? (int)(wait * 1000) + 1 : 100, on_event, r);
		/* first: a /metrics body the endpoint's thread waits for */
		st_http__work(r->http, now_s());
		/* one pass: the follow-ups now due, and when the next one is */
		wait = st_collector__followups(r->coll);
		if (r->unw)	/* modules left over by the compile budget */
			st_unwinder__work(r->unw);
		if (r->defer && (err = st_defer__process(r->defer, false)))
			return err;
		t = now_s();
		if (r->top && (err = st_top__work(r->top, t)))
			return err < 0 ? err : 0;	/* 1: 'q' or its last view */
		st_forcefault__tick(r->ff, t);
		st_java__tick(r->java, t);
		if (o->duration > 0 && t - t0 >= o->duration)
			break;
		if (r->child && st_launch__exited(r->child, &status))
			break;
		if (o->npids && !targets_alive(r))
			break;
		if (o->interval > 0 && ((signal_flags & SIG_SNAPSHOT) || t >= r->next_snapshot)) {
			set_flags(SIG_SNAPSHOT, false);
			if ((err = snapshot(r)))
				return err;
			last_tidy = now_s();
			continue;
		}
		why = st_session__fill(r->sess) > DRAIN_FILL ? DRAIN_HALF_FULL :
		      r->exits >= DRAIN_EXITS ? DRAIN_EXITED :
		      t - r->last_drain >= o->drain_interval ? DRAIN_CEILING : DRAIN__N;
		if (why != DRAIN__N) {
			if ((err = drain(r, why)))
				return err;
			last_tidy = t;
		} else if (t - last_tidy >= TIDY_S) {
			tidy(r);
			last_tidy = t;
		}
		/* service: the source lookups the last snapshot left, one
		 * module's DWARF opened for them all and closed, while the next
		 * one is not due soon */
		if (o->interval > 0 && r->next_snapshot - now_s() > SOURCE_WARM_MIN_S)
			st_symbolizer__source_warm(r->sym);
	}
	return 0;
}

/* -o: the directory, a file's directory (and its name), or standard
 * output, kept as r->report_out while fd 1 becomes stderr: the command's
 * output and ours stay out of the report. */
static int open_output(struct run *r)
{
	const struct st_options *o = r->o;
	int fd = -1, err;

	if (o->output_kind == ST_OUTPUT_STDOUT) {
		fflush(stdout);
		if ((fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) < 0 ||
		    !(r->report_out = fdopen(fd, "w")) || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			err = -errno;
			if (fd >= 0 && !r->report_out)
				close(fd);
			fprintf(stderr, "stacktreed: cannot use standard output for -o -: %s\n",
				strerror(-err));
			return err;
		}
		return 0;
	}
	if (o->output_kind == ST_OUTPUT_FILE)
		err = st_report__open_file_dir(o->output, o->output_mode, &r->out, &r->out_name);
	else
		err = st_outdir__open_mode(o->output, o->output_mode, &r->out);
	if (err)
		return err;
	st_outdir__set_abort(r->out, &signal_flags, SIG_ABORT);
	return 0;
}

/* Before anything is loaded or sampled: signals, a bad -F or -o fails at
 * once, and what a crashed --force-faults session left is undone. */
static int prepare(struct run *r)
{
	const struct st_options *o = r->o;
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	r->ro = (struct st_report_opts){ .min_pct = o->min_pct, .merge_threads = o->merge_threads,
					 .formats = o->formats, .lines = o->lines,
					 .folded_offsets = o->folded_offsets, .svg_width = o->svg_width };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	if ((err = st_session__check_privileges()))
		return err;
	if (st_session__check_freq(o->freq))
		return -EINVAL;
	for (size_t i = 0; i < o->nlisten; i++)
		if (st_http__check_listen(o->listen[i]))
			return -EINVAL;
	if (o->listen_token_file) {
		char why[256];

		if ((err = st_http_policy__read_token(o->listen_token_file, &r->token,
						      &r->token_len, why, sizeof(why)))) {
			fprintf(stderr, "stacktreed: --listen-token-file %s: %s\n",
				o->listen_token_file, why);
			return err;
		}
	}
	if (!o->top && !o->dump && (err = open_output(r)))	/* they write no reports */
		return err;
	if ((err = st_forcefault__recover(NULL)) && o->force_faults) {
		if (err == -EBUSY)
			fprintf(stderr, "stacktreed: --force-faults: another stacktreed is forcing "
				"page faults (%s): one session at a time\n", ST_FF_STATE_PATH);
		return err;
	}
	return 0;
}

/* The runtimes walked from the first full timer program on, not from the
 * first process of theirs seen (user/collect/session.c): those the
 * launched command is (python*, java by its name); with --pid and -a, all
 * (processes of them run already, as a rule). */
static unsigned cmd_runtimes(const struct st_options *o)
{
	const char *base;

	if (!o->cmd || !o->cmd[0])
		return o->interpreters;
	base = strrchr(o->cmd[0], '/') ? strrchr(o->cmd[0], '/') + 1 : o->cmd[0];
	return !strncmp(base, "python", 6) ? ST_INTERP_PYTHON :
	       !strcmp(base, "java") ? ST_INTERP_JAVA : 0;
}

/* The pipeline's parts: the symbolizer, the BPF session, the collector and
 * the namer (with its demangler). */
static int open_parts(struct run *r)
{
	const struct st_options *o = r->o;
	struct st_session_opts so = {
		.freq = o->freq, .kernel = o->kernel, .all = o->all, .max_nodes = o->max_nodes,
		.max_targets = 4096, .verbose = o->verbose, .bare = o->bench_bare,
		.comm = o->comm, .cgroup = o->cgroup, .include_self = o->include_self,
		.events = o->events & ST_EVENTS_MASK, .wall = (o->events & ST_EVENTS_WALL) != 0,
		.offcpu_min_ns = o->offcpu_min_ns, .offcpu_max_rate = o->offcpu_max_rate,
		.unwind_mode = o->unwind, .unwind_procs = 4096, .defer_ring_mb = o->defer_mb,
		.forced_pages = o->force_faults ? ST_FF_MAP_ENTRIES : 0,
		.tids = o->tids, .ntids = o->ntids, .filter_uid = o->filter_uid, .uid = o->uid,
		.cpus = o->filter_cpus ? o->cpus : NULL,
		.interpreters = o->interpreters, .late_interp = cmd_runtimes(o),
		.late_background = o->cmd != NULL,
	};
	int err;
	struct st_symbolizer_opts syo = {
		.verbose = o->verbose, .cache_mb = o->symbol_cache_mb,
		.max_file_mb = o->max_file_mb, .cancel = stopping,
		.debuginfod = o->debuginfod > 0 ||
			      (!o->debuginfod && getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS")),
		.debuginfod_required = o->debuginfod > 0,
		.debuginfod_timeout_s = o->debuginfod_timeout,
	};

	r->budget = st_budget__new(st_daemon__budget_bytes(o));
	if (!r->budget)
		return -ENOMEM;
	syo.budget = r->budget;
	r->sym = st_symbolizer__new(&syo);
	if (!r->sym) {
		err = errno ? errno : ENOMEM;
		/* debuginfod's ENOSYS and EPERM were told already */
		if (err != ENOSYS && err != EPERM)
			fprintf(stderr, "stacktreed: cannot create the symbolizer: %s\n",
				strerror(err));
		return -err;
	}
	if ((err = st_session__open(&so, &r->sess)))
		return err;
	r->coll = st_collector__new(r->sym, comm_of, r->sess);
	if (!r->coll)
		return -ENOMEM;
	st_collector__budget(r->coll, r->budget);
	st_collector__on_image(r->coll, image_of, r->sess);
	st_collector__on_exec_maps(r->coll, &(struct st_exec_source){ .maps = exec_maps_of,
								      .path = file_path_of,
								      .ctx = r->sess });
	r->names = st_namer__new(r->sym);
	if (!r->names)
		return -ENOMEM;
	if (!o->no_demangle) {
		r->dm = st_demangler__new();
		if (!r->dm)
			return -ENOMEM;
		st_namer__demangle(r->names, r->dm);
	}
	st_namer__inline(r->names, !o->no_inline);
	if (o->interpreters & ST_INTERP_PYTHON) {
		r->py = st_python__new(r->sess);
		if (!r->py) {
			err = errno ? errno : ENOMEM;
			fprintf(stderr, "stacktreed: cannot set up Python frames: %s "
				"(--interpreters none profiles without them)\n", strerror(err));
			return -err;
		}
		st_python__budget(r->py, r->budget);
		st_namer__python(r->names, r->py);
	}
	if (o->interpreters & ST_INTERP_JAVA) {
		r->java = st_java__new(r->sess);
		if (!r->java) {
			err = errno ? errno : ENOMEM;
			fprintf(stderr, "stacktreed: cannot set up Java frames: %s "
				"(--interpreters none profiles without them)\n", strerror(err));
			return -err;
		}
		st_namer__java(r->names, r->java);
	}
	st_collector__on_refresh(r->coll, on_refresh, r);
	st_collector__on_code(r->coll, code_of, r);
	return 0;
}

/* The queue of deferred samples, on r->unw (NULL in fp mode: walked by
 * frame pointers through their copies), if the session has the ring. */
static int open_deferred(struct run *r)
{
	int fd = st_session__deferred_fd(r->sess), err;
	struct st_unw_java_ops jops;

	/* its thread reads the deferred ring from now on */
	r->defer = fd >= 0 ? st_defer__new(r->unw, r->coll, fd, (size_t)r->o->defer_mb << 20) :
			     NULL;
	if (fd >= 0 && !r->defer) {
		err = errno ? errno : ENOMEM;
		fprintf(stderr, "stacktreed: cannot set up deferred unwinding: %s\n",
			strerror(err));
		return -err;
	}
	if (r->defer) {
		st_defer__on_handoff(r->defer, handoff, r->sess);
		st_defer__on_refresh(r->defer, on_defer_refresh, r);
		st_defer__on_sample(r->defer, on_defer_sample, r);
		st_defer__on_arrival(r->defer, on_defer_arrival, r);
		if (!r->unw && st_java__ops(r->java, &jops))	/* fp: the HotSpot rule too */
			st_defer__java(r->defer, &jops);
		/* the loop wakes when samples come, as when it read them itself */
		st_session__wake_on(r->sess, st_defer__notify_fd(r->defer));
	}
	return 0;
}

/* --unwind dwarf/auto: the CFI tables in the BPF maps, and the thread that
 * unwinds deferred samples; fp: that thread only when the early object
 * defers a launched command's first samples (st_session__deferred_fd()). */
static int open_unwinding(struct run *r)
{
	const struct st_options *o = r->o;
	int err;
	struct st_unwinder_opts uo = {
		.budget_bytes = o->unwind_memory_mb << 20, .cache = !o->no_unwind_cache,
		.cache_dir = o->unwind_cache, .cache_bytes = o->unwind_cache_mb << 20,
		.verbose = o->verbose,
	};

	if (o->unwind == ST_UNWIND_FP)
		return open_deferred(r);
	r->unw = st_unwinder__new(r->sess, &uo);
	if (!r->unw) {
		err = errno ? errno : ENOMEM;
		fprintf(stderr, "stacktreed: cannot set up DWARF unwinding: %s\n", strerror(err));
		return -err;
	}
	if (o->cmd)
		st_unwinder__preload(r->unw, o->cmd[0]);
	/* a process's last samples, walked after its exit: its mappings then */
	st_unwinder__on_exec_maps(r->unw, &(struct st_exec_source){ .maps = exec_maps_of,
								     .path = file_path_of,
								     .ctx = r->sess });
	st_java__unwinder(r->java, r->unw);	/* deferred samples: its rule too */
	return open_deferred(r);
}

_Static_assert(ST_MAX_LISTEN == ST_HTTP_MAX_LISTEN, "--listen's bound is the endpoint's");

/* The live endpoint's hooks (user/output/http.h). A window's edge: the
 * deferred samples whose tables are in walked (the ring read at once),
 * then the kernel's trees drained, so that what was sampled before the
 * edge is on its side. */
static int http_drain(void *ctx)
{
	struct run *r = ctx;
	int err = r->defer ? st_defer__catch_up(r->defer) : 0;

	return err ? err : drain(r, DRAIN_NEEDED);
}

static void http_header(void *ctx, struct st_profile *p)
{
	struct run *r = ctx;

	p->frequency_hz = strcmp(p->event, event_name(r->o, ST_EVENT_CPU)) ? 0 : r->o->freq;
	p->command = describe_target(r->o);
}

static int http_metrics(void *ctx, FILE *out)
{
	struct run *r = ctx;
	const struct st_summary_src src = parts(r);
	struct st_summary_run run = {
		.events = r->o->events, .snapshots_written = r->snapshots,
		.snapshots_failed = r->snapshots_failed,
	};

	st_summary__metrics(out, &src, &run);
	return ferror(out) ? -EIO : 0;
}

/* The /metrics lines written at each answer, on the endpoint's thread:
 * they read /proc/self only, nothing of the run. */
static int http_metrics_now(void *ctx, FILE *out)
{
	(void)ctx;
	st_summary__process_metrics(out);
	return ferror(out) ? -EIO : 0;
}

/* --listen: the endpoint, served by its own thread; the sampling loop
 * (which wakes on its eventfd) opens and names the windows and writes the
 * /metrics body (user/output/http.h); profiles of the timer's trees (wall's too), else the
 * off-CPU ones, else the faults'. */
static int open_endpoint(struct run *r)
{
	const struct st_options *o = r->o;
	unsigned ev = (o->events & (1u << ST_EVENT_CPU)) ? ST_EVENT_CPU :
		      (o->events & (1u << ST_EVENT_OFFCPU)) ? ST_EVENT_OFFCPU : ST_EVENT_FAULTS;
	/* a second event's trees for ?event=NAME: off-CPU, else page faults */
	unsigned alt = ev != ST_EVENT_OFFCPU && (o->events & (1u << ST_EVENT_OFFCPU)) ?
			       ST_EVENT_OFFCPU :
		       ev != ST_EVENT_FAULTS && (o->events & (1u << ST_EVENT_FAULTS)) ?
			       ST_EVENT_FAULTS : ST_EVENTS;
	struct st_http_opts ho = {
		.listen = o->listen, .nlisten = o->nlisten,
		.allow = o->listen_allow, .nallow = o->nlisten_allow,
		.token = r->token, .token_len = r->token_len, .max_seconds = o->listen_max_seconds,
		.tls_cert = o->listen_tls_cert, .tls_key = o->listen_tls_key,
		.coll = r->coll, .names = r->names,
		.event = event_name(o, ev), .ev = ev,
		.alt_event = alt < ST_EVENTS ? event_name(o, alt) : NULL, .alt_ev = alt,
		.drain = http_drain, .header = http_header, .metrics = http_metrics,
		.metrics_now = http_metrics_now, .ctx = r,
		.verbose = o->verbose,
	};
	int err;

	if (!o->nlisten)
		return 0;
	if ((err = st_http__new(&ho, &r->http)))
		return err;
	if ((err = st_session__wake_on(r->sess, st_http__fd(r->http))))
		fprintf(stderr, "stacktreed: --listen: cannot watch the endpoint's sockets: %s\n",
			strerror(-err));
	return err;
}

/* stacktreed top's hooks: the trees drained before a view, emptied after. */
static void top_reset(void *ctx)
{
	struct run *r = ctx;

	st_http__before_reset(r->http);
	st_collector__reset(r->coll);
	st_python__reset(r->py);
}

/* stacktreed top: views of the timer's trees (the faults' when only they
 * are sampled) from the sampling loop. */
static int open_top(struct run *r)
{
	const struct st_options *o = r->o;
	bool faults = !(o->events & (1u << ST_EVENT_CPU));
	struct st_top_opts to = {
		.refresh = o->top_refresh, .iterations = o->top_iterations,
		.freq = faults ? 0 : o->freq,
		.event = event_names[faults ? ST_EVENT_FAULTS : ST_EVENT_CPU], .faults = faults,
		.drain = http_drain, .reset = top_reset, .ctx = r,
	};
	int err;

	if (!o->top)
		return 0;
	to.target = describe_target(o);	/* (not before: it is freed here) */
	err = st_top__new(r->coll, r->names, &to, now_s(), &r->top);
	free((char *)to.target);	/* st_top__new() copied it */
	return err;
}

/* --pid targets, the launched command (started, held before its exec) and
 * --force-faults on them. */
static int add_targets(struct run *r)
{
	const struct st_options *o = r->o;
	int err;

	for (size_t i = 0; i < o->npids; i++) {
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "stacktreed: no process %d: check the pid (ps -p %d)\n",
				o->pids[i], o->pids[i]);
			return -ESRCH;
		}
		if ((err = st_session__add_target(r->sess, (__u32)o->pids[i], false))) {
			fprintf(stderr, "stacktreed: cannot add target %d: %s\n", o->pids[i],
				strerror(-err));
			return err;
		}
		/* its image is not known before its first sample: 0, older than any
		 * (its maps are read again for the real one then) */
		st_collector__capture(r->coll, (__u32)o->pids[i], 0, 0, false);
	}
	if (o->cmd) {
		char exe[4096];

		/* a CPython executable: walked from its exec on (py_exes) */
		if (!st_launch__which(o->cmd[0], exe, sizeof(exe)))
			st_python__launching(r->py, exe);
		if ((err = st_launch__start(o->cmd, &r->child))) {
			fprintf(stderr, "stacktreed: cannot start %s: %s\n", o->cmd[0],
				strerror(-err));
			return err;
		}
		if ((err = st_session__add_target(r->sess, (__u32)st_launch__pid(r->child), true)))
			return err;
		/* its exit ends the loop's wait at once, not up to 0.1 s later */
		st_session__wake_on(r->sess, st_launch__exit_fd(r->child));
	}
	if (o->force_faults) {
		struct st_forcefault_opts fo = {
			.rate = o->force_faults, .map_fd = st_session__forced_pages_fd(r->sess),
		};

		if ((err = st_forcefault__new(&fo, &r->ff)))
			return err;
		for (size_t i = 0; i < o->npids; i++)
			if ((err = st_forcefault__add_target(r->ff, o->pids[i])))
				return err;
		if (r->child && (err = st_forcefault__add_target(r->ff, st_launch__pid(r->child))))
			return err;
	}
	return 0;
}

/* Attach the BPF programs; --pid: the targets' unwind tables are in before
 * sampling is announced (their samples meanwhile are counted as unwound
 * without tables); --pid and -a: say when sampling has started (a launched
 * command's output is left alone). */
static int start_sampling(struct run *r)
{
	const struct st_options *o = r->o;
	int err;

	if ((err = st_session__attach(r->sess)))
		return err;
	for (double end = now_s() + 30; r->unw && o->npids && st_unwinder__pending(r->unw) &&
	     now_s() < end && !(signal_flags & SIG_STOP);)
		st_unwinder__work(r->unw);
	if (o->verbose || !r->child) {
		char rate[64];

		if (o->events & (1u << ST_EVENT_CPU))
			snprintf(rate, sizeof(rate), "%u Hz per CPU", o->freq);
		else	/* page faults, off-CPU time: every event */
			snprintf(rate, sizeof(rate), "every %s",
				 (o->events & (1u << ST_EVENT_FAULTS)) ? "page fault" :
									 "switch off the CPU");
		if (o->duration > 0)
			fprintf(stderr, "stacktreed: sampling at %s for %g s\n", rate, o->duration);
		else
			fprintf(stderr, "stacktreed: sampling at %s; Ctrl-C to stop\n", rate);
	}
	return 0;
}

/* Sampling has stopped: the system as it was before the reports (their
 * summary says so), the events still queued (processes seen in the last
 * moments), the samples still waiting for tables (compiled now, walked),
 * then the last snapshot: the reports. */
static int finish(struct run *r)
{
	int err;

	r->sampling_end = now_s();
	st_session__stop(r->sess);
	st_forcefault__restore(r->ff);
	st_session__poll(r->sess, 0, on_event, r);
	if (r->defer) {
		if (r->unw)
			st_unwinder__finish(r->unw);
		if ((err = st_defer__process(r->defer, true)))
			return err;
	}
	return r->top ? 0 : snapshot(r);	/* top: no reports */
}

/* -- CMD: exit with its status, as perf record does (128 + N when signal N
 * killed it), so that stacktreed can wrap a test or a build; else 0. */
static int exit_status(const struct run *r)
{
	int status = 0, ret = 0;

	if (r->child && st_launch__exited(r->child, &status)) {
		if (WIFEXITED(status))
			ret = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			ret = 128 + WTERMSIG(status);
		if (ret && r->o->verbose)
			fprintf(stderr, "stacktreed: %s exited with status %d\n", r->o->cmd[0], ret);
	}
	return ret;
}

static void close_parts(struct run *r)
{
	st_http__free(r->http);
	st_top__free(r->top);
	if (r->token)
		explicit_bzero(r->token, r->token_len);
	free(r->token);
	st_forcefault__free(r->ff);	/* restores, if not done yet */
	st_outdir__free(r->out);
	free(r->out_name);
	if (r->report_out)
		fclose(r->report_out);
	st_launch__free(r->child);
	st_collector__free(r->coll);
	st_defer__free(r->defer);
	st_namer__free(r->names);
	st_demangler__free(r->dm);
	st_unwinder__free(r->unw);
	st_python__free(r->py);
	st_java__free(r->java);
	st_session__free(r->sess);
	st_symbolizer__free(r->sym);
	st_budget__free(r->budget);
}

size_t st_daemon__budget_bytes(const struct st_options *o)
{
	size_t mb = o->memory_mb ? o->memory_mb : ST_MEMORY_MB;
	size_t reserve = (size_t)o->defer_mb + ST_ELF_LAYOUT_BUDGET_MB + ST_MEMORY_RESERVE_MB;

	return (reserve < mb - mb / 4 ? mb - reserve : mb / 4) << 20;
}

int st_daemon__run(const struct st_options *o)
{
	struct run r = { .o = o };
	int ret = 1;
	double t0;

	if (prepare(&r) || open_parts(&r) || open_unwinding(&r) || open_endpoint(&r) ||
	    open_top(&r) || add_targets(&r))
		goto cleanup;
	if (o->dump) {	/* no sampling: each thread's stack once, by ptrace */
		ret = st_dump__run(r.unw, r.coll, r.names, (__u32)o->pids[0], stdout) ? 1 : 0;
		goto cleanup;
	}
	if (start_sampling(&r))
		goto cleanup;
	/* the endpoint's first /metrics body, before the loop's first pass
	 * (the events queued since the attach can take it seconds) */
	st_http__work(r.http, now_s());
	t0 = r.interval_start = r.last_drain = now_s();
	r.next_snapshot = t0 + o->interval;
	if (r.child && st_launch__go(r.child)) {
		ret = 127;
		goto cleanup;
	}
	if (sample_loop(&r, t0) || finish(&r))
		goto cleanup;
	ret = exit_status(&r);
cleanup:
	if (signal_flags & SIG_ABORT) {
		fprintf(stderr, "stacktreed: interrupted while writing the reports: not all "
			"written, no temporary file left in %s\n", o->output);
		ret = 130;
	}
	close_parts(&r);
	return ret;
}

/* daemon.c - run one profiling session: load, sample, drain, symbolize,
 * write the reports, print the summary. */
#include "daemon.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "launch.h"
#include "profile.h"
#include "report.h"
#include "session.h"
#include "snapshot.h"
#include "symbolizer/symbolizer.h"

/* The one global: what the signals asked for. */
#define SIG_STOP 1	/* SIGINT, SIGTERM: final snapshot, then exit */
#define SIG_SNAPSHOT 2	/* SIGUSR1: a snapshot now */
static volatile sig_atomic_t signal_flags;

static void on_signal(int sig)
{
	if (sig == SIGUSR1) {
		signal_flags |= SIG_SNAPSHOT;
		return;
	}
	if (signal_flags & SIG_STOP)
		_exit(130); /* second Ctrl-C: leave at once */
	signal_flags |= SIG_STOP;
}

struct run {
	const struct st_options *o;
	struct st_symbolizer *sym;
	struct st_session *sess;
	struct st_collector *coll;
	struct st_launch *child;
	int merge_err;
	struct st_report_opts ro;
	__u64 prev_stats[ST_STAT__MAX];	/* counters at the previous snapshot */
	__u64 prev_run_ns, prev_runs;
	double interval_start;
	unsigned snapshots;
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

	if (e->type == ST_EV_EXIT)
		st_collector__exited(r->coll, e->pid);
	else
		st_collector__capture(r->coll, e->pid, e->type == ST_EV_EXEC);
}

static void comm_of(void *ctx, __u32 pid, __u32 tid, char *comm, size_t len)
{
	st_session__thread_comm(ctx, pid, tid, comm, len);
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
	fclose(f);
	return buf;
}

static void fill_header(struct st_profile *p, struct run *r, double secs)
{
	static const struct {
		enum st_stat stat;
		const char *name;
		bool lost;
	} names[] = {
		{ ST_STAT_LOST_NODES_FULL, "node array full", true },
		{ ST_STAT_LOST_HASH_FULL, "node hash full", true },
		{ ST_STAT_LOST_THREAD, "no thread state", true },
		{ ST_STAT_LOST_STACK, "stack walk failed", true },
		{ ST_STAT_LOST_EPOCH, "generation swap race", true },
		{ ST_STAT_TRUNCATED, "stacks truncated at 127 frames", false },
		{ ST_STAT_EMPTY_STACK, "samples without user frames ([kernel])", false },
		{ ST_STAT_IDLE, "idle-CPU samples (not profiled)", false },
		{ ST_STAT_NEW_PROC_LOST, "new-process events lost", false },
	};
	__u64 st[ST_STAT__MAX], now_st[ST_STAT__MAX], run_ns = 0, runs = 0, bad;

	/* counters of this interval: the difference since the last snapshot */
	st_session__stats(r->sess, now_st);
	for (int i = 0; i < ST_STAT__MAX; i++) {
		st[i] = now_st[i] - r->prev_stats[i];
		r->prev_stats[i] = now_st[i];
	}
	p->frequency_hz = r->o->freq;
	p->duration_s = secs;
	p->command = describe_target(r->o);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!st[names[i].stat] && names[i].lost)
			continue;
		if (names[i].lost)
			st_profile__add_lost(p, names[i].name, st[names[i].stat]);
		else if (st[names[i].stat] || names[i].stat == ST_STAT_TRUNCATED)
			st_profile__add_note(p, names[i].name, st[names[i].stat]);
	}
	bad = st_collector__bad_records(r->coll);
	if (bad)
		st_profile__add_note(p, "node records dropped by the daemon", bad);
	if (!st_session__runtime(r->sess, &run_ns, &runs)) {
		__u64 dns = run_ns - r->prev_run_ns, druns = runs - r->prev_runs;

		if (druns)
			p->bpf_ns_per_sample = (double)dns / (double)druns;
		st_profile__add_note(p, "BPF program runs", druns);
		r->prev_run_ns = run_ns;
		r->prev_runs = runs;
	}
}

/* Resident set size now, from /proc/self/statm (the soak test watches it). */
static long rss_mib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

static void summary(FILE *out, const struct st_profile *p, const struct run *r,
		    const char *where)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	fprintf(out, "stacktreed: %" PRIu64 " samples in %zu threads of %zu processes, "
		"%.2f s at %u Hz per CPU\n", (uint64_t)p->samples, p->nthreads,
		st_collector__processes(r->coll), p->duration_s, p->frequency_hz);
	fprintf(out, "stacktreed: lost %" PRIu64 " samples", (uint64_t)p->lost);
	for (size_t i = 0; i < p->nlost_by; i++)
		fprintf(out, "%s%s: %" PRIu64, i ? ", " : " (", p->lost_by[i].name,
			(uint64_t)p->lost_by[i].value);
	fprintf(out, "%s\n", p->nlost_by ? ")" : "");
	for (size_t i = 0; i < p->nnotes; i++)
		fprintf(out, "stacktreed: %s: %" PRIu64 "\n", p->notes[i].name,
			(uint64_t)p->notes[i].value);
	if (p->bpf_ns_per_sample > 0)
		fprintf(out, "stacktreed: BPF run time %.0f ns per sample (kernel BPF stats)\n",
			p->bpf_ns_per_sample);
	else
		fprintf(out, "stacktreed: BPF run time unavailable (kernel BPF stats off)\n");
	fprintf(out, "stacktreed: daemon CPU %.2f s, max RSS %ld MiB, RSS %ld MiB, "
		"BPF maps ~%zu MiB\n",
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
		ru.ru_maxrss / 1024, rss_mib(), st_session__map_memory(r->sess) >> 20);
	fprintf(out, "stacktreed: symbol caches %zu KiB, trees %zu KiB\n",
		st_symbolizer__memory(r->sym) >> 10, st_collector__memory(r->coll) >> 10);
	fprintf(out, "stacktreed: reports in %s/\n", where);
}

static int drain(struct run *r)
{
	int err = st_session__drain(r->sess, on_drain, r);

	st_collector__refresh_missing(r->coll);
	if (err || r->merge_err) {
		fprintf(stderr, "stacktreed: cannot merge the kernel trees: %s\n",
			strerror(-(err ? err : r->merge_err)));
		return err ? err : r->merge_err;
	}
	return 0;
}

/* Drain, symbolize and write what was sampled since the last snapshot.
 * Service mode (--interval): a new snapshot directory, then a new interval;
 * otherwise the reports go into the output directory. */
static int snapshot(struct run *r)
{
	const struct st_options *o = r->o;
	struct st_profile *p = NULL;
	char where[4096], *text = NULL;
	size_t len = 0;
	FILE *mem = NULL;
	double t = now_s();
	int err;

	if ((err = drain(r)))
		return err;
	p = st_collector__profile(r->coll, "cpu-clock");
	if (!p) {
		fprintf(stderr, "stacktreed: cannot build the profile: out of memory\n");
		return -ENOMEM;
	}
	fill_header(p, r, t - r->interval_start);
	if (o->interval <= 0) {
		err = st_report__write_dir(p, o->output, &r->ro);
		if (!err)
			summary(stderr, p, r, o->output);
		goto cleanup;
	}
	snprintf(where, sizeof(where), "%s", o->output);
	mem = open_memstream(&text, &len);
	if (!mem) {
		err = -ENOMEM;
		goto cleanup;
	}
	summary(mem, p, r, "(this directory)");
	fclose(mem);
	err = st_snapshot__write(p, o->output, &r->ro, text, o->keep, where, sizeof(where));
	if (!err) {
		r->snapshots++;
		fprintf(stderr, "stacktreed: snapshot %s: %" PRIu64 " samples, %zu threads, lost %"
			PRIu64 ", RSS %ld MiB\n", where, (uint64_t)p->samples, p->nthreads,
			(uint64_t)p->lost, rss_mib());
		st_collector__reset(r->coll);
	}
cleanup:
	r->interval_start = t;
	free(text);
	st_profile__free(p);
	return err;
}

static int sample_loop(struct run *r, double t0)
{
	const struct st_options *o = r->o;
	double last_drain = t0;
	int status, err;

	while (!(signal_flags & SIG_STOP)) {
		double t;

		st_session__poll(r->sess, 100, on_event, r);
		t = now_s();
		if (o->duration > 0 && t - t0 >= o->duration)
			break;
		if (r->child && st_launch__exited(r->child, &status))
			break;
		if (o->npids && !targets_alive(r))
			break;
		if (o->interval > 0 && ((signal_flags & SIG_SNAPSHOT) ||
					t - r->interval_start >= o->interval)) {
			signal_flags &= ~SIG_SNAPSHOT;
			if ((err = snapshot(r)))
				return err;
			last_drain = now_s();
			continue;
		}
		if (t - last_drain >= o->drain_interval || st_session__fill(r->sess) > 0.5) {
			if ((err = drain(r)))
				return err;
			last_drain = t;
		}
	}
	return 0;
}

int st_daemon__run(const struct st_options *o)
{
	struct st_session_opts so = {
		.freq = o->freq, .kernel = o->kernel, .all = o->all, .max_nodes = o->max_nodes,
		.max_targets = 4096, .verbose = o->verbose, .bare = o->bench_bare,
		.comm = o->comm, .cgroup = o->cgroup, .include_self = o->include_self,
	};
	struct st_symbolizer_opts syo = { .verbose = o->verbose };
	struct sigaction sa = { .sa_handler = on_signal };
	struct run r = { .o = o };
	int ret = 1, err, status = 0;
	double t0;

	r.ro = (struct st_report_opts){ .min_pct = o->min_pct, .merge_threads = o->merge_threads,
					.formats = o->formats };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	r.sym = st_symbolizer__new(&syo);
	if (!r.sym) {
		fprintf(stderr, "stacktreed: cannot create the symbolizer: %s\n", strerror(errno));
		goto cleanup;
	}
	if (st_session__open(&so, &r.sess))
		goto cleanup;
	r.coll = st_collector__new(r.sym, comm_of, r.sess);
	if (!r.coll)
		goto cleanup;
	for (size_t i = 0; i < o->npids; i++) {
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "stacktreed: no process %d: check the pid (ps -p %d)\n",
				o->pids[i], o->pids[i]);
			goto cleanup;
		}
		if ((err = st_session__add_target(r.sess, (__u32)o->pids[i], false))) {
			fprintf(stderr, "stacktreed: cannot add target %d: %s\n", o->pids[i],
				strerror(-err));
			goto cleanup;
		}
		st_collector__capture(r.coll, (__u32)o->pids[i], false);
	}
	if (o->cmd) {
		if ((err = st_launch__start(o->cmd, &r.child))) {
			fprintf(stderr, "stacktreed: cannot start %s: %s\n", o->cmd[0],
				strerror(-err));
			goto cleanup;
		}
		if ((err = st_session__add_target(r.sess, (__u32)st_launch__pid(r.child), true)))
			goto cleanup;
	}
	if (st_session__attach(r.sess))
		goto cleanup;
	if (o->verbose)
		fprintf(stderr, "stacktreed: sampling at %u Hz per CPU\n", o->freq);
	t0 = r.interval_start = now_s();
	if (r.child && st_launch__go(r.child)) {
		ret = 127;
		goto cleanup;
	}
	if (sample_loop(&r, t0))
		goto cleanup;
	st_session__stop(r.sess);
	/* events still queued (processes seen in the last moments) */
	st_session__poll(r.sess, 0, on_event, &r);
	if (snapshot(&r))
		goto cleanup;
	ret = 0;
	if (r.child && st_launch__exited(r.child, &status) && WIFEXITED(status) &&
	    WEXITSTATUS(status) && o->verbose)
		fprintf(stderr, "stacktreed: %s exited with status %d\n", o->cmd[0],
			WEXITSTATUS(status));
cleanup:
	st_launch__free(r.child);
	st_collector__free(r.coll);
	st_session__free(r.sess);
	st_symbolizer__free(r.sym);
	return ret;
}

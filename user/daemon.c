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
#include "symbolizer/symbolizer.h"

/* The one global: set by SIGINT/SIGTERM. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	if (stop_requested)
		_exit(130); /* second Ctrl-C: leave at once */
	stop_requested = 1;
}

struct run {
	const struct st_options *o;
	struct st_symbolizer *sym;
	struct st_session *sess;
	struct st_collector *coll;
	struct st_launch *child;
	int merge_err;
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

static void fill_header(struct st_profile *p, const struct run *r, double secs)
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
		{ ST_STAT_TRUNCATED, "stacks truncated at 127 frames", false },
		{ ST_STAT_EMPTY_STACK, "samples without user frames ([kernel])", false },
		{ ST_STAT_IDLE, "idle-CPU samples (not profiled)", false },
		{ ST_STAT_NEW_PROC_LOST, "new-process events lost", false },
	};
	__u64 st[ST_STAT__MAX], run_ns = 0, runs = 0, bad;

	st_session__stats(r->sess, st);
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
	if (!st_session__runtime(r->sess, &run_ns, &runs) && runs)
		p->bpf_ns_per_sample = (double)run_ns / (double)runs;
	st_profile__add_note(p, "BPF program runs", runs);
}

static void summary(const struct st_profile *p, const struct run *r)
{
	struct rusage ru;
	__u64 threads = p->nthreads;

	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "stacktreed: %" PRIu64 " samples in %" PRIu64 " threads of %zu processes, "
		"%.2f s at %u Hz per CPU\n", (uint64_t)p->samples, (uint64_t)threads,
		st_collector__processes(r->coll), p->duration_s, p->frequency_hz);
	fprintf(stderr, "stacktreed: lost %" PRIu64 " samples", (uint64_t)p->lost);
	for (size_t i = 0; i < p->nlost_by; i++)
		fprintf(stderr, "%s%s: %" PRIu64, i ? ", " : " (", p->lost_by[i].name,
			(uint64_t)p->lost_by[i].value);
	fprintf(stderr, "%s\n", p->nlost_by ? ")" : "");
	for (size_t i = 0; i < p->nnotes; i++)
		fprintf(stderr, "stacktreed: %s: %" PRIu64 "\n", p->notes[i].name,
			(uint64_t)p->notes[i].value);
	if (p->bpf_ns_per_sample > 0)
		fprintf(stderr, "stacktreed: BPF run time %.0f ns per sample (kernel BPF stats)\n",
			p->bpf_ns_per_sample);
	else
		fprintf(stderr, "stacktreed: BPF run time unavailable (kernel BPF stats off)\n");
	fprintf(stderr, "stacktreed: daemon CPU %.2f s, max RSS %ld MiB, BPF maps ~%zu MiB\n",
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
		ru.ru_maxrss / 1024, st_session__map_memory(r->sess) >> 20);
	fprintf(stderr, "stacktreed: reports in %s/ (xtree.txt, arcflow.txt, profile.json)\n",
		r->o->output);
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

static int sample_loop(struct run *r, double t0)
{
	const struct st_options *o = r->o;
	double last_drain = t0;
	int status, err;

	while (!stop_requested) {
		double t;

		st_session__poll(r->sess, 100, on_event, r);
		t = now_s();
		if (o->duration > 0 && t - t0 >= o->duration)
			break;
		if (r->child && st_launch__exited(r->child, &status))
			break;
		if (o->npids && !targets_alive(r))
			break;
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
	};
	struct st_symbolizer_opts syo = { .verbose = o->verbose };
	struct st_report_opts ro = { .min_pct = o->min_pct, .merge_threads = o->merge_threads };
	struct sigaction sa = { .sa_handler = on_signal };
	struct st_profile *p = NULL;
	struct run r = { .o = o };
	int ret = 1, err, status = 0;
	double t0;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
	t0 = now_s();
	if (r.child && st_launch__go(r.child)) {
		ret = 127;
		goto cleanup;
	}
	if (sample_loop(&r, t0))
		goto cleanup;
	st_session__stop(r.sess);
	/* events still queued (processes seen in the last moments) */
	st_session__poll(r.sess, 0, on_event, &r);
	if (drain(&r))
		goto cleanup;
	p = st_collector__profile(r.coll, "cpu-clock");
	if (!p) {
		fprintf(stderr, "stacktreed: cannot build the profile: out of memory\n");
		goto cleanup;
	}
	fill_header(p, &r, now_s() - t0);
	if (st_report__write_dir(p, o->output, &ro))
		goto cleanup;
	summary(p, &r);
	ret = 0;
	if (r.child && st_launch__exited(r.child, &status) && WIFEXITED(status) &&
	    WEXITSTATUS(status) && o->verbose)
		fprintf(stderr, "stacktreed: %s exited with status %d\n", o->cmd[0],
			WEXITSTATUS(status));
cleanup:
	st_profile__free(p);
	st_launch__free(r.child);
	st_collector__free(r.coll);
	st_session__free(r.sess);
	st_symbolizer__free(r.sym);
	return ret;
}

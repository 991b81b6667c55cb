/* daemon.h - one profiling session from start to reports.
 * Owner: user/daemon.c. */
#ifndef STACKTREE_DAEMON_H
#define STACKTREE_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

/* Default --memory-mb: under the shipped unit's MemoryMax=512M
 * (dist/stacktreed.service), 64 MiB left for the allocator's slack. */
#define ST_MEMORY_MB 448
/* Of --memory-mb, what the budget's parts (common/budget.h) cannot count:
 * the BPF maps other than the CFI rows and the deferred ring (~50 MiB), the
 * program, libraries and allocator (~14); with --unwind-defer-mb and the
 * ELF headers of the file being read (ST_ELF_LAYOUT_BUDGET_MB) it is left
 * out of the limit the parts answer to (st_daemon__budget_bytes()). */
#define ST_MEMORY_RESERVE_MB 64

/* --listen given at most this many times (ST_HTTP_MAX_LISTEN) */
#define ST_MAX_LISTEN 4

struct st_options {
	__u32 freq;		/* -F */
	double duration;	/* -d, seconds; 0 = until the target ends or Ctrl-C */
	const char *output;	/* -o */
	int output_kind;	/* enum st_output_kind of -o (a file: formats is its one) */
	unsigned output_mode;	/* --output-mode: of report files; 0 = ST_OUTDIR_MODE */
	bool kernel;		/* --kernel */
	bool all;		/* -a */
	int *pids;		/* --pid, repeatable */
	size_t npids;
	char **cmd;		/* -- CMD ARGS */
	double min_pct;		/* --min-pct */
	bool merge_threads;	/* --merge-threads */
	unsigned formats;	/* --format: enum st_format bits, 0 = default */
	__u32 max_nodes;	/* --max-nodes (per generation) */
	double drain_interval;	/* seconds between drains */
	bool verbose;		/* -v */
	bool bench_bare;	/* --bench-bare: stack walks only, for benchmarks */
	double interval;	/* --interval: a snapshot every SEC seconds (service) */
	unsigned keep;		/* --keep: snapshots kept */
	const char *comm;	/* --comm filter */
	const char *cgroup;	/* --cgroup filter */
	bool include_self;	/* --no-exclude-self */
	unsigned events;	/* --event: 1 << ST_EVENT_CPU, 1 << ST_EVENT_FAULTS,
				 * 1 << ST_EVENT_OFFCPU, ST_EVENTS_WALL (perfflags.h) */
	__u64 offcpu_min_ns;	/* --offcpu-min-us, in ns */
	__u32 offcpu_max_rate;	/* --offcpu-max-rate: walks per CPU a second, 0: no bound */
	__u32 unwind;		/* --unwind: ST_UNWIND_FP, _DWARF or _AUTO (bpf/stacktree.h) */
	size_t memory_mb;	/* --memory-mb: the daemon's budget, MiB; 0 = ST_MEMORY_MB */
	size_t unwind_memory_mb; /* --unwind-memory: budget of the CFI rows maps, MiB */
	const char *unwind_cache;	/* --unwind-cache DIR (NULL: the default) */
	bool no_unwind_cache;		/* --no-unwind-cache */
	size_t unwind_cache_mb;		/* --unwind-cache-mb */
	size_t symbol_cache_mb;	/* --symbol-cache-mb: 0 = the symbolizer's default */
	bool no_demangle;	/* --no-demangle: C++/Rust names as mangled */
	bool no_inline;		/* --no-inline: no inline frames */
	unsigned interpreters;	/* --interpreters: ST_INTERP_* walked (--no-python: without
				 * ST_INTERP_PYTHON) */
	bool lines;		/* --lines: file:line in the xtree */
	bool folded_offsets;	/* --folded-offsets: call sites in stacks.folded and the SVG */
	unsigned svg_width;	/* --svg-width: px, 0 = the default */
	__u32 defer_mb;		/* --unwind-defer-mb: deferred samples' ring buffer, 0: off */
	size_t max_file_mb;	/* --max-file-mb: 0 = the symbolizer's default */
	int debuginfod;		/* --debuginfod 1, --no-debuginfod -1, 0: on when
				 * DEBUGINFOD_URLS is set */
	double debuginfod_timeout; /* --debuginfod-timeout: seconds per fetch, 0: default */
	__u32 force_faults;	/* --force-faults: pages per second, 0: off */
	/* --listen [ADDR:]PORT or unix:/PATH, repeatable: the live endpoint */
	const char *listen[ST_MAX_LISTEN];
	size_t nlisten;
	__u32 *listen_allow;	/* --listen-allow: uids that see everything */
	size_t nlisten_allow;
	const char *listen_token_file;	/* --listen-token-file, or NULL */
	unsigned listen_max_seconds;	/* --listen-max-seconds; 0: the default */
	const char *listen_tls_cert;	/* --listen-tls-cert, or NULL */
	const char *listen_tls_key;	/* --listen-tls-key, or NULL */
	int *tids;		/* -t: only these threads (their processes are in pids) */
	size_t ntids;
	bool filter_uid;	/* -u: only tasks whose real uid is uid */
	__u32 uid;
	bool top;		/* stacktreed top: live views, no reports */
	bool dump;		/* stacktreed dump: each thread's stack once (pids[0]) */
	double top_refresh;	/* --refresh: seconds between its views */
	unsigned top_iterations; /* --iterations: views, then stop; 0: until q */
	bool filter_cpus;	/* -C: only on the CPUs set in cpus */
	__u64 cpus[ST_MAX_CPUS / 64];
};

/* The limit of the daemon's memory budget's parts, in bytes: --memory-mb
 * less the reserve, the deferred ring and the ELF headers' budget, and at
 * least a quarter of --memory-mb. */
size_t st_daemon__budget_bytes(const struct st_options *o);

/* Runs the session; returns the process exit code. */
int st_daemon__run(const struct st_options *o);

#endif

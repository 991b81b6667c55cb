/* stacktreed.c - command line of the profiler daemon (argp). */
#include <argp.h>
#include <errno.h>
#include <malloc.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binsym/elflayout.h"
#include "user/daemon.h"
#include "user/hints.h"
#include "user/perfflags.h"
#include "user/collect/faults/forcefault.h"
#include "user/output/flamegraph.h"
#include "user/output/http.h"
#include "user/collect/interp.h"
#include "user/output/report.h"
#include "stacktree.h"

const char *argp_program_version = "stacktreed " ST_VERSION;
const char *argp_program_bug_address = "the stacktreed issue tracker";

enum {
	OPT_KERNEL = 1000,
	OPT_UNWIND,
	OPT_MIN_PCT,
	OPT_MERGE_THREADS,
	OPT_MAX_NODES,
	OPT_DRAIN,
	OPT_BENCH_BARE,
	OPT_INTERVAL,
	OPT_KEEP,
	OPT_COMM,
	OPT_CGROUP,
	OPT_EXCLUDE_SELF,
	OPT_NO_EXCLUDE_SELF,
	OPT_FORMAT,
	OPT_UNWIND_MEMORY,
	OPT_SYMBOL_CACHE_MB,
	OPT_MAX_FILE_MB,
	OPT_DEFER_MB,
	OPT_NO_DEMANGLE,
	OPT_NO_INLINE,
	OPT_NO_PYTHON,
	OPT_INTERPRETERS,
	OPT_LINES,
	OPT_UNWIND_CACHE,
	OPT_NO_UNWIND_CACHE,
	OPT_UNWIND_CACHE_MB,
	OPT_DEBUGINFOD,
	OPT_NO_DEBUGINFOD,
	OPT_DEBUGINFOD_TIMEOUT,
	OPT_FORCE_FAULTS,
	OPT_OFFCPU_MIN_US,
	OPT_OFFCPU_MAX_RATE,
	OPT_OUTPUT_MODE,
	OPT_MEMORY_MB,
	OPT_LISTEN,
	OPT_LISTEN_ALLOW,
	OPT_LISTEN_TOKEN_FILE,
	OPT_LISTEN_MAX_SECONDS,
	OPT_LISTEN_TLS_CERT,
	OPT_LISTEN_TLS_KEY,
	OPT_FOLDED_OFFSETS,
	OPT_SVG_WIDTH,
	OPT_CALL_GRAPH,
	OPT_REFRESH,
	OPT_ITERATIONS,
};

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Profile this process and its threads (repeatable, or a comma list)", 0 },
	{ "all", 'a', NULL, 0, "Profile the whole system", 0 },
	{ "freq", 'F', "HZ", 0, "Samples per second per CPU (default 99)", 0 },
	{ "duration", 'd', "SEC", 0, "Stop after SEC seconds (default: when the target ends, or Ctrl-C)", 0 },
	{ "output", 'o', "DIR|FILE|-", 0, "Report directory (default ./stacktree.out); a FILE by its extension: .svg flame graph, .pb.gz or .pprof pprof, .folded or .txt folded stacks, .json profile.json, .xtree, .arcflow; - standard output (one --format, default xtree)", 0 },
	{ "output-mode", OPT_OUTPUT_MODE, "MODE", 0, "Mode of the report files, octal (default 0600: only their owner, the sudo user under sudo, reads them; directories made get x where r: 0700); 0644 shares them", 0 },
	{ "kernel", OPT_KERNEL, NULL, 0, "Also record kernel frames", 0 },
	{ "unwind", OPT_UNWIND, "MODE", 0, "Stack unwinding: auto (DWARF CFI, frame pointers where a module has none; default), dwarf (CFI only) or fp (frame pointers)", 0 },
	{ "call-graph", OPT_CALL_GRAPH, "fp|dwarf[,SIZE]", 0, "perf's name for --unwind fp or dwarf (perf's SIZE, the stack bytes it copies, is checked and unused: stacks are walked in the kernel)", 0 },
	{ NULL, 'g', NULL, 0, "perf's -g: accepted; call graphs are always recorded (unwinding as --unwind says, auto by default; kernel frames with --kernel)", 0 },
	{ "tid", 't', "TID", 0, "Profile only these threads (repeatable, or a comma list; perf's -t): samples of their processes' other threads are left out", 0 },
	{ "uid", 'u', "USER", 0, "Only tasks whose real user is USER, a name or a number (perf's -u); alone: system-wide for that user", 0 },
	{ "cpu", 'C', "LIST", 0, "Only on these CPUs, e.g. 0,2-3 (perf's -C): the timers run there only, and page faults taken elsewhere are left out; alone: system-wide on them", 0 },
	{ "count", 'c', "N", 0, "Sample period in events (perf's -c): cpu-clock every N ns, N a divisor of 1 s (-c 1000000 is -F 1000); page-faults only 1 (each one is recorded)", 0 },
	{ "memory-mb", OPT_MEMORY_MB, "MB", 0, "The daemon's memory budget, in MiB (default 448: under the shipped unit's MemoryMax=512M); --symbol-cache-mb and --unwind-memory not given take 2/7 of it each (128 MiB by default)", 2 },
	{ "unwind-memory", OPT_UNWIND_MEMORY, "MB", 0, "dwarf/auto: kernel memory for the modules' CFI rows, in MiB (default 2/7 of --memory-mb: 128; clang needs ~20); modules no process maps any more are released", 2 },
	{ "symbol-cache-mb", OPT_SYMBOL_CACHE_MB, "MB", 0, "Symbols of modules no process maps any more are freed (least recently used first) beyond MB MiB of symbol caches (default 2/7 of --memory-mb: 128)", 2 },
	{ "no-demangle", OPT_NO_DEMANGLE, NULL, 0, "Keep C++ and Rust function names mangled (profile.json and pprof keep the mangled name as system_name anyway)", 1 },
	{ "interpreters", OPT_INTERPRETERS, "LIST", 0, "Interpreted runtimes whose own stacks are walked and merged with the native one: python (CPython 3.10, 3.11, 3.12, 3.13), java (HotSpot interpreted and compiled frames; not with --unwind fp, whose kernel walk has no Java rule), all (the default) or none; comma-separated", 1 },
	{ "no-python", OPT_NO_PYTHON, NULL, 0, "No Python frames (--interpreters without python): CPython processes are profiled natively only (the interpreter's evaluation loop, not the Python functions)", 1 },
	{ "no-inline", OPT_NO_INLINE, NULL, 0, "No inline frames: a function the compiler inlined is not a frame of its own (DWARF source lines are still given)", 1 },
	{ "lines", OPT_LINES, NULL, 0, "xtree: file:line of each frame (from DWARF) after its name", 1 },
	{ "unwind-cache", OPT_UNWIND_CACHE, "DIR", 0, "dwarf/auto: keep compiled unwind tables in DIR (default /var/cache/stacktreed as root, else ~/.cache/stacktreed); it must be ours and not writable by others", 2 },
	{ "no-unwind-cache", OPT_NO_UNWIND_CACHE, NULL, 0, "dwarf/auto: compile every module's unwind table, keep nothing on disk", 2 },
	{ "unwind-cache-mb", OPT_UNWIND_CACHE_MB, "MB", 0, "dwarf/auto: size bound of the unwind table cache, oldest files out first (default 512)", 2 },
	{ "unwind-defer-mb", OPT_DEFER_MB, "MB", 0, "dwarf/auto: ring buffer for samples taken before their unwind tables were in, unwound later by the daemon (default 32; a power of two; 0: fold them as walked); it starts at 2 MiB and grows up to MB as it fills", 2 },
	{ "debuginfod", OPT_DEBUGINFOD, NULL, 0, "Fetch debug files not found locally by build id from the servers in DEBUGINFOD_URLS (the default when it is set; without it, an error); cache: DEBUGINFOD_CACHE_PATH, as root /var/cache/stacktreed/debuginfod", 1 },
	{ "no-debuginfod", OPT_NO_DEBUGINFOD, NULL, 0, "Never fetch debug files, even with DEBUGINFOD_URLS set", 1 },
	{ "debuginfod-timeout", OPT_DEBUGINFOD_TIMEOUT, "SEC", 0, "Give up one debug file's fetch after SEC seconds (default DEBUGINFOD_TIMEOUT if set, else 5)", 2 },
	{ "max-file-mb", OPT_MAX_FILE_MB, "MB", 0, "Largest binary or debug file read for symbols, in MiB (default 2048)", 2 },
	{ "event", 'e', "LIST", 0, "What a sample is (perf's -e): cpu-clock (or cpu: the timer, the default), page-faults (or faults: user page faults), offcpu (time off the CPU, in ns, at the blocking point), wall (on-CPU samples and off-CPU time in one tree, in ns), or a comma list (cpu,offcpu: two trees); perf's :u suffix is accepted", 0 },
	{ "offcpu-min-us", OPT_OFFCPU_MIN_US, "US", 0, "offcpu and wall: periods off the CPU shorter than US microseconds are not folded, only counted (default 1, as bcc's offcputime; 0: all)", 1 },
	{ "offcpu-max-rate", OPT_OFFCPU_MAX_RATE, "N", 0, "offcpu and wall: walk at most N switch-outs per CPU a second (default 20000; 0: no bound); the time of those over it is counted, not folded", 1 },
	{ "force-faults", OPT_FORCE_FAULTS, "RATE", OPTION_ARG_OPTIONAL, "With --event faults and --pid or -- CMD: page out RATE random resident pages per second of the targets (default 1000, at most 20000) so that warmed-up memory keeps faulting; adds a zram swap device for the session (see stacktreed(8), docs/page-faults.md)", 0 },
	{ "min-pct", OPT_MIN_PCT, "P", 0, "xtree: fold nodes under P% of the thread's samples into [other]", 1 },
	{ "merge-threads", OPT_MERGE_THREADS, NULL, 0, "One tree per process instead of per thread", 1 },
	{ "format", OPT_FORMAT, "LIST", 0, "Report files: a comma list of xtree, arcflow, json, folded, pprof, svg (default xtree,arcflow,json)", 1 },
	{ "folded-offsets", OPT_FOLDED_OFFSETS, NULL, 0, "stacks.folded and flamegraph.svg: a frame per call site (function+0xOFF) instead of per function", 1 },
	{ "svg-width", OPT_SVG_WIDTH, "PX", 0, "flamegraph.svg: width in pixels (default 1200, 400..100000)", 1 },
	{ "max-nodes", OPT_MAX_NODES, "N", 0, "Kernel tree nodes per generation (default 65536)", 2 },
	{ "drain-interval", OPT_DRAIN, "SEC", 0, "Seconds a generation of the kernel trees lasts at most before it is drained (default 30; also drained when half full, for a snapshot, an endpoint window or a top view)", 2 },
	{ "interval", OPT_INTERVAL, "SEC", 0, "Service: write a snapshot directory every SEC seconds into DIR (SIGUSR1: now)", 1 },
	{ "listen", OPT_LISTEN, "[ADDR:]PORT|unix:/PATH", 0, "Serve GET /debug/pprof/profile?seconds=N (gzipped pprof of the next N seconds) and /metrics (Prometheus) on ADDR:PORT; PORT alone: loopback (127.0.0.1) only; unix:/PATH: a Unix socket the daemon creates (mode 0666: its directory decides who connects); repeatable (4 at most). Root and --listen-allow users get every process, any other local user its own processes only (kernel frames hidden), a client not on loopback 403 without --listen-token-file's token", 1 },
	{ "listen-allow", OPT_LISTEN_ALLOW, "LIST", 0, "Users that get every process from --listen as root does: a comma list of USER, UID and @GROUP (its members when stacktreed starts); repeatable", 1 },
	{ "listen-token-file", OPT_LISTEN_TOKEN_FILE, "FILE", 0, "A client that sends 'Authorization: Bearer TOKEN' with the token in FILE (ours, mode 0600 or 0400) gets every process, from any address; a wrong token gets 403", 1 },
	{ "listen-tls-cert", OPT_LISTEN_TLS_CERT, "FILE", 0, "Serve --listen's TCP addresses over TLS (1.2, 1.3) with the certificate chain in FILE (PEM); with --listen-tls-key", 1 },
	{ "listen-tls-key", OPT_LISTEN_TLS_KEY, "FILE", 0, "The private key of --listen-tls-cert (PEM, no passphrase; ours, mode 0600 or 0400)", 1 },
	{ "listen-max-seconds", OPT_LISTEN_MAX_SECONDS, "N", 0, "Longest profile --listen takes (seconds=N over it: 400; default 60, 1..3600)", 1 },
	{ "keep", OPT_KEEP, "N", 0, "Service: keep the newest N snapshots (default 24)", 1 },
	{ "comm", OPT_COMM, "NAME", 0, "Only processes named NAME (their main thread's comm)", 1 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Only tasks in this cgroup v2 directory (and below)", 1 },
	{ "exclude-self", OPT_EXCLUDE_SELF, NULL, 0, "Never profile stacktreed itself (the default)", 1 },
	{ "no-exclude-self", OPT_NO_EXCLUDE_SELF, NULL, 0, "Profile stacktreed itself too", 1 },
	{ "refresh", OPT_REFRESH, "SEC", 0, "top: seconds between two views, each of the functions sampled since the last (default 2)", 1 },
	{ "iterations", OPT_ITERATIONS, "N", 0, "top: stop after N views (default: at q, Ctrl-C, -d or the target's end)", 1 },
	{ "verbose", 'v', NULL, 0, "libbpf and progress messages", 2 },
	/* make bench's baseline, not for users: hidden from --help (stacktreed(8) has it) */
	{ "bench-bare", OPT_BENCH_BARE, NULL, OPTION_HIDDEN, "Benchmark baseline: walk the stacks, fold nothing (empty reports)", 3 },
	{ 0 }
};

/* perf's and py-spy's options that stacktreed does not have, and what
 * does their work here. */
static const struct st_hint hints[] = {
	{ "stdio", "perf report's: stacktreed writes xtree.txt (-o DIR); -o - --format xtree "
		   "prints it on stdout, `stacktree report --input DIR --stdio' a saved one" },
	{ "sort", "perf report's: `stacktree report --input DIR --sort sym' lists a saved "
		  "profile's functions; `stacktreed top' shows them live" },
	{ "children", "perf report's: `stacktree report --input DIR --sort sym --children'" },
	{ "no-children", "perf report's: `stacktree report --input DIR --sort sym'" },
	{ "rate", "py-spy's --rate is -F HZ here (samples per second per CPU, default 99)" },
	{ "native", "py-spy's --native: native frames are always recorded, Python frames "
		    "merged into them" },
	{ "subprocesses", "py-spy's --subprocesses: --pid and -- CMD follow the children "
			  "already" },
	{ "nonblocking", "py-spy's --nonblocking: stacktreed never stops the process (it "
			 "samples in the kernel)" },
	{ "idle", "py-spy's --idle: only threads on a CPU are sampled (cpu-clock); "
		  "`stacktreed dump --pid PID' shows the sleeping ones' stacks" },
	{ "gil", "py-spy's --gil: not available; every thread on a CPU is sampled" },
	{ NULL, NULL },
};

static const char doc[] =
	"stacktreed -- call-stack tree sampling profiler\v"
	"Run as root, or with CAP_BPF and CAP_PERFMON (stacktreed(8)). Examples:\n"
	"  stacktreed -- ./prog args        profile a command until it exits\n"
	"  stacktreed --pid 1234 -d 10      profile a running process for 10 s\n"
	"  stacktreed -a -d 10              profile the whole system\n"
	"  stacktreed -C 0 -e page-faults -d 5   perf's flags: faults on CPU 0\n"
	"  stacktreed -a --interval 60 -o /var/lib/stacktreed   run as a service\n"
	"  stacktreed -o flame.svg -- ./prog   one file, its format by its extension\n"
	"  stacktreed top --pid 1234       live: the hottest functions, refreshed (q quits)\n"
	"  stacktreed dump --pid 1234      each thread's stack now (a hung process)\n"
	"Reports: DIR/xtree.txt, DIR/arcflow.txt, DIR/profile.json; --format adds\n"
	"stacks.folded, profile.pb.gz (pprof), flamegraph.svg. See stacktreed(8).";

struct parse_state {
	struct st_options *o;
	int *pids;
	size_t npids;
	int *tids;	/* -t */
	size_t ntids;
	bool freq_given;	/* -F */
	bool output_given;	/* -o */
	double count;	/* -c, 0: not given */
};

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || *end || end == s || *out < lo || *out > hi ? -EINVAL : 0;
}

/* A comma list of process or thread ids appended to *ids. */
static int add_ids(int **ids, size_t *n, char *arg)
{
	for (char *save = NULL, *tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		double v;
		int *np;

		if (parse_double(tok, 1, 4194304, &v) || v != (int)v)
			return -EINVAL;
		np = realloc(*ids, (*n + 1) * sizeof(*np));
		if (!np)
			return -ENOMEM;
		*ids = np;
		(*ids)[(*n)++] = (int)v;
	}
	return 0;
}

/* -t: each thread's process joins the --pid targets (once): the targets'
 * lifecycle (maps, exit) is per process; tid_filter keeps the threads. */
static void add_tid_processes(struct parse_state *ps, struct argp_state *state)
{
	for (size_t i = 0; i < ps->ntids; i++) {
		char path[64], line[128], buf[16];
		int tgid = -1;
		bool known = false;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", ps->tids[i]);
		f = fopen(path, "r");
		while (f && tgid < 0 && fgets(line, sizeof(line), f))
			if (sscanf(line, "Tgid: %d", &tgid) != 1)
				tgid = -1;
		if (f)
			fclose(f);
		if (tgid <= 0)
			argp_failure(state, 64, 0, "-t %d: no such thread (ps -eLf lists them)",
				     ps->tids[i]);
		for (size_t j = 0; j < ps->npids; j++)
			known |= ps->pids[j] == tgid;
		snprintf(buf, sizeof(buf), "%d", tgid);
		if (!known && add_ids(&ps->pids, &ps->npids, buf))
			argp_failure(state, 64, ENOMEM, "-t");
	}
}

/* -c N, once the events are known (not with -F). */
static void apply_count(struct parse_state *ps, struct argp_state *state)
{
	char err[256];

	if (ps->freq_given)
		argp_error(state, "give -F or -c, not both");
	if (st_perfflags__count(ps->count, ps->o->events, &ps->o->freq, err, sizeof(err)))
		argp_failure(state, 64, 0, "%s", err);
}

/* -o: a directory, a FILE of the format its extension says, or "-"
 * (standard output, one --format): one profile, not the service's. */
static void check_output(struct st_options *o, struct argp_state *state)
{
	char err[512];
	unsigned ext;

	o->output_kind = st_report__output_kind(o->output, &ext);
	if (o->output_kind == ST_OUTPUT_DIR)
		return;
	if (o->interval > 0)
		argp_error(state, "--interval writes a snapshot directory every interval: give -o "
			   "a directory, not %s", o->output);
	if ((o->events & ST_EVENTS_MASK) & ((o->events & ST_EVENTS_MASK) - 1))
		argp_error(state, "-o %s holds one profile: with two events (-e cpu,faults) give "
			   "-o a directory", o->output);
	if (st_report__output_formats(o->output, o->output_kind, ext, &o->formats, err,
				      sizeof(err)))
		argp_error(state, "%s", err);
}

/* stacktreed top shows and writes nothing; --refresh and --iterations
 * are its own. */
static void check_top(struct st_options *o, const struct parse_state *ps,
		      struct argp_state *state)
{
	if (o->dump && (o->all || o->cmd || ps->npids != 1 || ps->ntids))
		argp_error(state, "dump takes one process: give --pid PID");
	if (o->dump && o->unwind == ST_UNWIND_FP)
		argp_error(state, "dump walks the stacks with the CFI tables (frame pointers where "
			   "a module has none): not with --unwind fp");
	if (o->dump && (ps->output_given || o->interval > 0))
		argp_error(state, "dump prints the stacks and writes no reports: no -o");
	if (!o->top) {
		if (o->top_refresh > 0 || o->top_iterations)
			argp_error(state, "--refresh and --iterations go with `stacktreed top'");
		return;
	}
	if (ps->output_given || o->interval > 0)
		argp_error(state, "top shows the functions live and writes no reports: record "
			   "with `stacktreed -o DIR' (without top) for them");
	if (o->top_refresh <= 0)
		o->top_refresh = 2;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct parse_state *ps = state->input;
	struct st_options *o = ps->o;
	double v;

	switch (key) {
	case 'p':
		if (add_ids(&ps->pids, &ps->npids, arg))
			argp_error(state, "invalid --pid '%s': give a process id", arg);
		break;
	case 'a':
		o->all = true;
		break;
	case 'F':
		if (parse_double(arg, 1, 1000000, &v) || v != (__u32)v)
			argp_error(state, "invalid -F '%s': give a rate in Hz, e.g. 99", arg);
		o->freq = (__u32)v;
		ps->freq_given = true;
		break;
	case 't':
		if (add_ids(&ps->tids, &ps->ntids, arg))
			argp_error(state, "invalid -t '%s': give thread ids", arg);
		break;
	case 'u': {
		struct passwd *pw = getpwnam(arg);

		if (pw)
			o->uid = pw->pw_uid;
		else if (!parse_double(arg, 0, 4294967294.0, &v) && v == (__u32)v)
			o->uid = (__u32)v;
		else
			argp_error(state, "invalid -u '%s': no such user (a name or a uid)", arg);
		o->filter_uid = true;
		break;
	}
	case 'C': {
		char err[256];

		if (st_perfflags__cpus(arg, o->cpus, err, sizeof(err)))
			argp_failure(state, 64, 0, "%s", err);
		o->filter_cpus = true;
		break;
	}
	case 'c':
		if (parse_double(arg, 1, 1e12, &ps->count) || ps->count != (__u64)ps->count)
			argp_error(state, "invalid -c '%s': give a period in events", arg);
		break;
	case 'g':
		break;
	case OPT_CALL_GRAPH: {
		char *size = strchr(arg, ',');

		if (size)
			*size++ = 0;
		if (!strcmp(arg, "fp"))
			o->unwind = ST_UNWIND_FP;
		else if (!strcmp(arg, "dwarf"))
			o->unwind = ST_UNWIND_DWARF;
		else
			argp_error(state, "--call-graph %s: give fp or dwarf (perf's lbr needs "
				   "last-branch records, which stacktreed does not read)", arg);
		if (size && (strcmp(arg, "dwarf") || parse_double(size, 8, 65528, &v) ||
			     v != (int)v))
			argp_error(state, "--call-graph %s,%s: SIZE goes with dwarf only, 8..65528 "
				   "bytes as in perf", arg, size);
		break;
	}
	case 'd':
		if (parse_double(arg, 0.001, 1e9, &o->duration))
			argp_error(state, "invalid -d '%s': give seconds, e.g. 10", arg);
		break;
	case 'o':
		o->output = arg;
		ps->output_given = true;
		break;
	case OPT_KERNEL:
		o->kernel = true;
		break;
	case OPT_UNWIND:
		if (!strcmp(arg, "fp"))
			o->unwind = ST_UNWIND_FP;
		else if (!strcmp(arg, "dwarf"))
			o->unwind = ST_UNWIND_DWARF;
		else if (!strcmp(arg, "auto"))
			o->unwind = ST_UNWIND_AUTO;
		else
			argp_error(state, "invalid --unwind '%s': give fp, dwarf or auto", arg);
		break;
	case OPT_MEMORY_MB:
		if (parse_double(arg, 64, 1 << 20, &v) || v != (size_t)v)
			argp_error(state, "invalid --memory-mb '%s': give 64..1048576 (MiB)", arg);
		o->memory_mb = (size_t)v;
		break;
	case OPT_UNWIND_MEMORY:
		if (parse_double(arg, 1, 1 << 20, &v) || v != (size_t)v)
			argp_error(state, "invalid --unwind-memory '%s': give 1..1048576 (MiB)", arg);
		o->unwind_memory_mb = (size_t)v;
		break;
	case OPT_SYMBOL_CACHE_MB:
		if (parse_double(arg, 1, 1 << 20, &v) || v != (size_t)v)
			argp_error(state, "invalid --symbol-cache-mb '%s': give 1..1048576", arg);
		o->symbol_cache_mb = (size_t)v;
		break;
	case OPT_UNWIND_CACHE:
		o->unwind_cache = arg;
		break;
	case OPT_NO_UNWIND_CACHE:
		o->no_unwind_cache = true;
		break;
	case OPT_UNWIND_CACHE_MB:
		if (parse_double(arg, 1, 1 << 20, &v) || v != (size_t)v)
			argp_error(state, "invalid --unwind-cache-mb '%s': give 1..1048576", arg);
		o->unwind_cache_mb = (size_t)v;
		break;
	case OPT_NO_DEMANGLE:
		o->no_demangle = true;
		break;
	case OPT_NO_PYTHON:
		o->interpreters &= ~ST_INTERP_PYTHON;
		break;
	case OPT_INTERPRETERS: {
		char bad[32], names[64];

		if (st_interp__parse(arg, &o->interpreters, bad, sizeof(bad)))
			argp_error(state, "--interpreters: unknown runtime '%s': give %s, all or none",
				   bad, st_interp__names(names, sizeof(names)));
		break;
	}
	case OPT_NO_INLINE:
		o->no_inline = true;
		break;
	case OPT_LINES:
		o->lines = true;
		break;
	case OPT_FOLDED_OFFSETS:
		o->folded_offsets = true;
		break;
	case OPT_SVG_WIDTH:
		if (parse_double(arg, ST_FLAMEGRAPH_MIN_WIDTH, ST_FLAMEGRAPH_MAX_WIDTH, &v) ||
		    v != (unsigned)v)
			argp_error(state, "invalid --svg-width '%s': give pixels (400..100000)", arg);
		o->svg_width = (unsigned)v;
		break;
	case OPT_DEFER_MB:
		if (parse_double(arg, 0, 1024, &v) || v != (__u32)v || ((__u32)v & ((__u32)v - 1)))
			argp_error(state, "invalid --unwind-defer-mb '%s': give 0 or a power of two "
				   "up to 1024", arg);
		o->defer_mb = (__u32)v;
		break;
	case OPT_DEBUGINFOD:
		o->debuginfod = 1;
		break;
	case OPT_NO_DEBUGINFOD:
		o->debuginfod = -1;
		break;
	case OPT_DEBUGINFOD_TIMEOUT:
		if (parse_double(arg, 0.1, 3600, &v))
			argp_error(state, "invalid --debuginfod-timeout '%s': give 0.1..3600 (s)", arg);
		o->debuginfod_timeout = v;
		break;
	case OPT_OUTPUT_MODE: {
		char *end;
		unsigned long m;

		errno = 0;
		m = strtoul(arg, &end, 8);
		if (errno || end == arg || *end || m > 0777 || !(m & 0400) || !(m & 0200))
			argp_error(state, "invalid --output-mode '%s': give an octal mode like 0600 or "
				   "0644 (at most 0777, readable and writable by the owner)", arg);
		o->output_mode = (unsigned)m;
		break;
	}
	case OPT_MAX_FILE_MB:
		if (parse_double(arg, 1, 1 << 20, &v) || v != (size_t)v)
			argp_error(state, "invalid --max-file-mb '%s': give 1..1048576", arg);
		o->max_file_mb = (size_t)v;
		break;
	case 'e': {
		char err[256];

		if (st_perfflags__events(arg, !access("/sys/bus/event_source/devices/cpu", F_OK),
					 &o->events, err, sizeof(err)))
			argp_failure(state, 64, 0, "%s", err);
		break;
	}
	case OPT_OFFCPU_MIN_US:
		if (parse_double(arg, 0, 60e6, &v))
			argp_error(state, "invalid --offcpu-min-us '%s': give microseconds, "
				   "0..60000000", arg);
		o->offcpu_min_ns = (__u64)(v * 1000);
		break;
	case OPT_OFFCPU_MAX_RATE:
		if (parse_double(arg, 0, 10e6, &v) || v != (__u32)v)
			argp_error(state, "invalid --offcpu-max-rate '%s': give switch-outs per CPU "
				   "a second, 0 (no bound)..10000000", arg);
		o->offcpu_max_rate = (__u32)v;
		break;
	case OPT_FORCE_FAULTS:
		o->force_faults = ST_FF_DEFAULT_RATE;
		if (arg && (parse_double(arg, 1, ST_FF_MAX_RATE, &v) || v != (__u32)v))
			argp_error(state, "invalid --force-faults=%s: give pages per second, "
				   "1..%u", arg, ST_FF_MAX_RATE);
		if (arg)
			o->force_faults = (__u32)v;
		break;
	case OPT_MIN_PCT:
		if (parse_double(arg, 0, 100, &o->min_pct))
			argp_error(state, "invalid --min-pct '%s': give a percentage 0-100", arg);
		break;
	case OPT_MERGE_THREADS:
		o->merge_threads = true;
		break;
	case OPT_MAX_NODES:
		if (parse_double(arg, 1024, 1 << 26, &v) || v != (__u32)v)
			argp_error(state, "invalid --max-nodes '%s': give 1024..67108864", arg);
		o->max_nodes = (__u32)v;
		break;
	case OPT_DRAIN:
		if (parse_double(arg, 0.05, 3600, &o->drain_interval))
			argp_error(state, "invalid --drain-interval '%s': give seconds", arg);
		break;
	case 'v':
		o->verbose = true;
		break;
	case OPT_REFRESH:
		if (parse_double(arg, 0.1, 3600, &o->top_refresh))
			argp_error(state, "invalid --refresh '%s': give seconds (0.1..3600)", arg);
		break;
	case OPT_ITERATIONS:
		if (parse_double(arg, 1, 1e9, &v) || v != (unsigned)v)
			argp_error(state, "invalid --iterations '%s': give a count >= 1", arg);
		o->top_iterations = (unsigned)v;
		break;
	case OPT_BENCH_BARE:
		o->bench_bare = true;
		break;
	case OPT_FORMAT: {
		char err[256];

		if (st_report__parse_formats(arg, &o->formats, err, sizeof(err)))
			argp_failure(state, 64, 0, "%s", err);
		break;
	}
	case OPT_LISTEN:
		if (o->nlisten >= ST_MAX_LISTEN)
			argp_error(state, "--listen: at most %d addresses", ST_MAX_LISTEN);
		o->listen[o->nlisten++] = arg;
		break;
	case OPT_LISTEN_ALLOW: {
		char err[256];
		int r = st_http_policy__allow(arg, &o->listen_allow, &o->nlisten_allow, err,
					      sizeof(err));

		if (r == -ENOMEM)
			argp_failure(state, 64, ENOMEM, "--listen-allow");
		if (r)
			argp_error(state, "invalid --listen-allow '%s': %s", arg, err);
		break;
	}
	case OPT_LISTEN_TOKEN_FILE:
		o->listen_token_file = arg;
		break;
	case OPT_LISTEN_TLS_CERT:
		o->listen_tls_cert = arg;
		break;
	case OPT_LISTEN_TLS_KEY:
		o->listen_tls_key = arg;
		break;
	case OPT_LISTEN_MAX_SECONDS:
		if (parse_double(arg, 1, ST_HTTP_MAX_SECONDS, &v) || v != (unsigned)v)
			argp_error(state, "invalid --listen-max-seconds '%s': give 1..%d (s)", arg,
				   ST_HTTP_MAX_SECONDS);
		o->listen_max_seconds = (unsigned)v;
		break;
	case OPT_INTERVAL:
		if (parse_double(arg, 0.5, 86400, &o->interval))
			argp_error(state, "invalid --interval '%s': give seconds (0.5..86400)", arg);
		break;
	case OPT_KEEP:
		if (parse_double(arg, 1, 100000, &v) || v != (unsigned)v)
			argp_error(state, "invalid --keep '%s': give a count >= 1", arg);
		o->keep = (unsigned)v;
		break;
	case OPT_COMM:
		if (!*arg || strlen(arg) > 15)
			argp_error(state, "invalid --comm '%s': process names have 1 to 15 characters",
				   arg);
		o->comm = arg;
		break;
	case OPT_CGROUP:
		o->cgroup = arg;
		break;
	case OPT_EXCLUDE_SELF:
		o->include_self = false;
		break;
	case OPT_NO_EXCLUDE_SELF:
		o->include_self = true;
		break;
	case ARGP_KEY_ARGS:
		o->cmd = state->argv + state->next;
		break;
	case ARGP_KEY_END:
		if (ps->ntids && (o->all || ps->npids || o->cmd))
			argp_error(state, "-t names the threads to profile: give it without --pid, "
				   "-a or -- CMD");
		/* perf: -u or -C with no target is system-wide */
		if ((o->filter_uid || o->filter_cpus) && !ps->npids && !o->cmd && !ps->ntids)
			o->all = true;
		add_tid_processes(ps, state);
		if (ps->count)
			apply_count(ps, state);
		if (!o->all && !ps->npids && !o->cmd)
			argp_error(state, "nothing to profile: give -- CMD, --pid PID or -a");
		if (!!o->all + !!ps->npids + !!o->cmd > 1)
			argp_error(state, "give only one of -- CMD, --pid PID and -a");
		if (o->force_faults && (o->all || !(ps->npids || o->cmd)))
			argp_error(state, "--force-faults pages out a target's memory: name it with "
				   "--pid PID or -- CMD (never with -a)");
		if (o->force_faults && !(o->events & (1u << ST_EVENT_FAULTS)))
			argp_error(state, "--force-faults needs --event faults (or cpu,faults)");
		check_top(o, ps, state);
		check_output(o, state);
		if (!o->nlisten && (o->nlisten_allow || o->listen_token_file ||
				    o->listen_max_seconds || o->listen_tls_cert || o->listen_tls_key))
			argp_error(state, "--listen-allow, --listen-token-file, --listen-tls-cert, "
				   "--listen-tls-key and --listen-max-seconds go with --listen");
		if (!o->listen_tls_cert != !o->listen_tls_key)
			argp_error(state, "--listen-tls-cert and --listen-tls-key go together");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* --memory-mb: the caches' shares of the daemon's budget where they were
 * not given themselves. Of the default 448 MiB (the shipped unit's
 * MemoryMax=512M less 64 for the allocator's slack and the kernel's
 * per-process memory): 32 for the deferred samples' ring, 64 for the ELF
 * headers of the file being read (elflayout.h), 64 reserved
 * (ST_MEMORY_RESERVE_MB: the other BPF maps, ~50, the program), and 288
 * that the caches answer to together (common/budget.h, enforced by the
 * daemon): of them 128 for the symbol cache, 128 for the CFI rows (BPF
 * maps, charged to the daemon's cgroup), the rest for the trees, the
 * processes' maps and Python code. Parts given explicitly that add up
 * beyond the budget are said once. */
static void split_memory(struct st_options *o)
{
	size_t fixed = o->defer_mb + ST_ELF_LAYOUT_BUDGET_MB + ST_MEMORY_RESERVE_MB, share;

	if (!o->memory_mb)
		o->memory_mb = ST_MEMORY_MB;
	share = o->memory_mb * 2 / 7;
	if (!o->symbol_cache_mb)
		o->symbol_cache_mb = share ? share : 1;
	if (!o->unwind_memory_mb)
		o->unwind_memory_mb = share ? share : 1;
	if (o->symbol_cache_mb + o->unwind_memory_mb + fixed > o->memory_mb)
		fprintf(stderr, "stacktreed: --symbol-cache-mb %zu + --unwind-memory %zu + "
			"--unwind-defer-mb %u + %zu MiB for file headers and the rest exceed "
			"--memory-mb %zu: the daemon may use more (lower them or raise it)\n",
			o->symbol_cache_mb, o->unwind_memory_mb, o->defer_mb,
			(size_t)ST_ELF_LAYOUT_BUDGET_MB + ST_MEMORY_RESERVE_MB, o->memory_mb);
}

int main(int argc, char **argv)
{
	struct st_options o = {
		.freq = 99, .output = "./stacktree.out", .max_nodes = 65536,
		.drain_interval = 30.0, .keep = 24, .unwind = ST_UNWIND_AUTO, .defer_mb = 32, .unwind_cache_mb = 512,
		.events = 1u << ST_EVENT_CPU, .interpreters = ST_INTERP_ALL,
		.offcpu_min_ns = 1000, .offcpu_max_rate = 20000,
	};
	struct parse_state ps = { .o = &o };
	const struct argp argp = { options, parse_opt,
				   "[-- CMD [ARGS...]]\ntop (--pid PID | -a | -- CMD) [--refresh SEC] [--iterations N]"
				   "\ndump --pid PID",
				   doc, NULL, NULL, NULL };
	int ret;

	/* one malloc arena: the daemon's other threads (the endpoint's, the
	 * full timer program's load) allocate little, and the load on an
	 * arena of its own took 22 MiB more than the first (its parse of the
	 * object and of the kernel's BTF) where it reuses what that one freed:
	 * a quiet -a session peaks at 40 MiB with one arena, 50 without */
	mallopt(M_ARENA_MAX, 1);
	/* commands: `stacktreed top|dump ...' (`stacktreed -- top' profiles top(1)) */
	if (argc > 1 && (!strcmp(argv[1], "top") || !strcmp(argv[1], "dump"))) {
		static char top_name[] = "stacktreed top", dump_name[] = "stacktreed dump";

		o.top = !strcmp(argv[1], "top");
		o.dump = !o.top;
		argv[1] = o.top ? top_name : dump_name;
		argv++;
		argc--;
	}
	if (st_hints__check(o.top ? "stacktreed top" : o.dump ? "stacktreed dump" : "stacktreed",
			    options, hints, argc, argv))
		return 64;
	if (argp_parse(&argp, argc, argv, 0, NULL, &ps))
		return 64;
	o.pids = ps.pids;
	o.npids = ps.npids;
	o.tids = ps.tids;
	o.ntids = ps.ntids;
	split_memory(&o);
	ret = st_daemon__run(&o);
	free(ps.pids);
	free(ps.tids);
	free(o.listen_allow);
	return ret;
}

/* stacktreed.c - command line of the profiler daemon (argp). */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/elflayout.h"
#include "user/daemon.h"
#include "user/collect/forcefault.h"
#include "user/collect/interp.h"
#include "user/output/report.h"
#include "stacktree.h"

const char *argp_program_version = "stacktreed " ST_VERSION;
const char *argp_program_bug_address = "the stacktreed issue tracker";

enum {
	OPT_KERNEL = 1000,
	OPT_UNWIND,
	OPT_EVENT,
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
	OPT_OUTPUT_MODE,
	OPT_MEMORY_MB,
	OPT_LISTEN,
};

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Profile this process and its threads (repeatable, or a comma list)", 0 },
	{ "all", 'a', NULL, 0, "Profile the whole system", 0 },
	{ "freq", 'F', "HZ", 0, "Samples per second per CPU (default 99)", 0 },
	{ "duration", 'd', "SEC", 0, "Stop after SEC seconds (default: when the target ends, or Ctrl-C)", 0 },
	{ "output", 'o', "DIR", 0, "Report directory (default ./stacktree.out)", 0 },
	{ "output-mode", OPT_OUTPUT_MODE, "MODE", 0, "Mode of the report files, octal (default 0600: only their owner, the sudo user under sudo, reads them; directories made get x where r: 0700); 0644 shares them", 0 },
	{ "kernel", OPT_KERNEL, NULL, 0, "Also record kernel frames", 0 },
	{ "unwind", OPT_UNWIND, "MODE", 0, "Stack unwinding: auto (DWARF CFI, frame pointers where a module has none; default), dwarf (CFI only) or fp (frame pointers)", 0 },
	{ "memory-mb", OPT_MEMORY_MB, "MB", 0, "The daemon's memory budget, in MiB (default 448: under the shipped unit's MemoryMax=512M); --symbol-cache-mb and --unwind-memory not given take 2/7 of it each (128 MiB by default)", 2 },
	{ "unwind-memory", OPT_UNWIND_MEMORY, "MB", 0, "dwarf/auto: kernel memory for the modules' CFI rows, in MiB (default 256; clang needs ~20); modules no process maps any more are released", 2 },
	{ "symbol-cache-mb", OPT_SYMBOL_CACHE_MB, "MB", 0, "Symbols of modules no process maps any more are freed (least recently used first) beyond MB MiB of symbol caches (default 256)", 2 },
	{ "no-demangle", OPT_NO_DEMANGLE, NULL, 0, "Keep C++ and Rust function names mangled (profile.json and pprof keep the mangled name as system_name anyway)", 1 },
	{ "interpreters", OPT_INTERPRETERS, "LIST", 0, "Interpreted runtimes whose own stacks are walked and merged with the native one: python (CPython 3.11), all (the default) or none; comma-separated", 1 },
	{ "no-python", OPT_NO_PYTHON, NULL, 0, "No Python frames (--interpreters without python): CPython processes are profiled natively only (the interpreter's evaluation loop, not the Python functions)", 1 },
	{ "no-inline", OPT_NO_INLINE, NULL, 0, "No inline frames: a function the compiler inlined is not a frame of its own (DWARF source lines are still given)", 1 },
	{ "lines", OPT_LINES, NULL, 0, "xtree: file:line of each frame (from DWARF) after its name", 1 },
	{ "unwind-cache", OPT_UNWIND_CACHE, "DIR", 0, "dwarf/auto: keep compiled unwind tables in DIR (default /var/cache/stacktreed as root, else ~/.cache/stacktreed); it must be ours and not writable by others", 2 },
	{ "no-unwind-cache", OPT_NO_UNWIND_CACHE, NULL, 0, "dwarf/auto: compile every module's unwind table, keep nothing on disk", 2 },
	{ "unwind-cache-mb", OPT_UNWIND_CACHE_MB, "MB", 0, "dwarf/auto: size bound of the unwind table cache, oldest files out first (default 512)", 2 },
	{ "unwind-defer-mb", OPT_DEFER_MB, "MB", 0, "dwarf/auto: ring buffer for samples taken before their unwind tables were in, unwound later by the daemon (default 32; a power of two; 0: fold them as walked)", 2 },
	{ "debuginfod", OPT_DEBUGINFOD, NULL, 0, "Fetch debug files not found locally by build id from the servers in DEBUGINFOD_URLS (the default when it is set; without it, an error); cache: DEBUGINFOD_CACHE_PATH, as root /var/cache/stacktreed/debuginfod", 1 },
	{ "no-debuginfod", OPT_NO_DEBUGINFOD, NULL, 0, "Never fetch debug files, even with DEBUGINFOD_URLS set", 1 },
	{ "debuginfod-timeout", OPT_DEBUGINFOD_TIMEOUT, "SEC", 0, "Give up one debug file's fetch after SEC seconds (default DEBUGINFOD_TIMEOUT if set, else 5)", 2 },
	{ "max-file-mb", OPT_MAX_FILE_MB, "MB", 0, "Largest binary or debug file read for symbols, in MiB (default 2048)", 2 },
	{ "event", OPT_EVENT, "LIST", 0, "What a sample is: cpu (cpu-clock timer, the default), faults (user page faults), or cpu,faults", 0 },
	{ "force-faults", OPT_FORCE_FAULTS, "RATE", OPTION_ARG_OPTIONAL, "With --event faults and --pid or -- CMD: page out RATE random resident pages per second of the targets (default 1000, at most 20000) so that warmed-up memory keeps faulting; adds a zram swap device for the session (see README)", 0 },
	{ "min-pct", OPT_MIN_PCT, "P", 0, "xtree: fold nodes under P% of the thread's samples into [other]", 1 },
	{ "merge-threads", OPT_MERGE_THREADS, NULL, 0, "One tree per process instead of per thread", 1 },
	{ "format", OPT_FORMAT, "LIST", 0, "Report files: a comma list of xtree, arcflow, json, folded, pprof, svg (default xtree,arcflow,json)", 1 },
	{ "max-nodes", OPT_MAX_NODES, "N", 0, "Kernel tree nodes per generation (default 65536)", 2 },
	{ "drain-interval", OPT_DRAIN, "SEC", 0, "Seconds between drains of the kernel trees (default 1)", 2 },
	{ "interval", OPT_INTERVAL, "SEC", 0, "Service: write a snapshot directory every SEC seconds into DIR (SIGUSR1: now)", 1 },
	{ "listen", OPT_LISTEN, "[ADDR:]PORT", 0, "Serve GET /debug/pprof/profile?seconds=N (gzipped pprof of the next N seconds) and /metrics (Prometheus) on ADDR:PORT; PORT alone: loopback (127.0.0.1) only", 1 },
	{ "keep", OPT_KEEP, "N", 0, "Service: keep the newest N snapshots (default 24)", 1 },
	{ "comm", OPT_COMM, "NAME", 0, "Only processes named NAME (their main thread's comm)", 1 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Only tasks in this cgroup v2 directory (and below)", 1 },
	{ "exclude-self", OPT_EXCLUDE_SELF, NULL, 0, "Never profile stacktreed itself (the default)", 1 },
	{ "no-exclude-self", OPT_NO_EXCLUDE_SELF, NULL, 0, "Profile stacktreed itself too", 1 },
	{ "verbose", 'v', NULL, 0, "libbpf and progress messages", 2 },
	{ "bench-bare", OPT_BENCH_BARE, NULL, 0, "Benchmark baseline: walk the stacks, fold nothing (empty reports)", 3 },
	{ 0 }
};

static const char doc[] =
	"stacktreed -- call-stack tree sampling profiler\v"
	"Run as root. Examples:\n"
	"  stacktreed -- ./prog args        profile a command until it exits\n"
	"  stacktreed --pid 1234 -d 10      profile a running process for 10 s\n"
	"  stacktreed -a -d 10              profile the whole system\n"
	"  stacktreed -a --interval 60 -o /var/lib/stacktreed   run as a service\n"
	"Reports: DIR/xtree.txt, DIR/arcflow.txt, DIR/profile.json; --format adds\n"
	"stacks.folded, profile.pb.gz (pprof), flamegraph.svg. See stacktreed(8).";

struct parse_state {
	struct st_options *o;
	int *pids;
	size_t npids;
};

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || *end || end == s || *out < lo || *out > hi ? -EINVAL : 0;
}

static int add_pids(struct parse_state *ps, char *arg)
{
	for (char *save = NULL, *tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		double v;
		int *np;

		if (parse_double(tok, 1, 4194304, &v) || v != (int)v)
			return -EINVAL;
		np = realloc(ps->pids, (ps->npids + 1) * sizeof(*np));
		if (!np)
			return -ENOMEM;
		ps->pids = np;
		ps->pids[ps->npids++] = (int)v;
	}
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct parse_state *ps = state->input;
	struct st_options *o = ps->o;
	double v;

	switch (key) {
	case 'p':
		if (add_pids(ps, arg))
			argp_error(state, "invalid --pid '%s': give a process id", arg);
		break;
	case 'a':
		o->all = true;
		break;
	case 'F':
		if (parse_double(arg, 1, 1000000, &v) || v != (__u32)v)
			argp_error(state, "invalid -F '%s': give a rate in Hz, e.g. 99", arg);
		o->freq = (__u32)v;
		break;
	case 'd':
		if (parse_double(arg, 0.001, 1e9, &o->duration))
			argp_error(state, "invalid -d '%s': give seconds, e.g. 10", arg);
		break;
	case 'o':
		o->output = arg;
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
	case OPT_EVENT:
		o->events = 0;
		for (char *save = NULL, *tok = strtok_r(arg, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "cpu"))
				o->events |= 1u << ST_EVENT_CPU;
			else if (!strcmp(tok, "faults"))
				o->events |= 1u << ST_EVENT_FAULTS;
			else
				argp_error(state, "--event %s: give cpu, faults or cpu,faults", tok);
		}
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
		o->listen = arg;
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
		if (!o->all && !ps->npids && !o->cmd)
			argp_error(state, "nothing to profile: give -- CMD, --pid PID or -a");
		if (!!o->all + !!ps->npids + !!o->cmd > 1)
			argp_error(state, "give only one of -- CMD, --pid PID and -a");
		if (o->force_faults && (o->all || !(ps->npids || o->cmd)))
			argp_error(state, "--force-faults pages out a target's memory: name it with "
				   "--pid PID or -- CMD (never with -a)");
		if (o->force_faults && !(o->events & (1u << ST_EVENT_FAULTS)))
			argp_error(state, "--force-faults needs --event faults (or cpu,faults)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* --memory-mb: the caches' shares of the daemon's budget where they were
 * not given themselves. Of the default 448 MiB (the shipped unit's
 * MemoryMax=512M less 64 for the allocator's slack and the kernel's
 * per-process memory): 128 for the symbol cache, 128 for the CFI rows (BPF
 * maps, charged to the daemon's cgroup), 32 for the deferred samples' ring,
 * 64 for the ELF headers of the file being read (elflayout.h), and ~96 for
 * the rest (the other BPF maps, ~50, the trees, the processes). Parts given
 * explicitly that add up beyond the budget are said once. */
static void split_memory(struct st_options *o)
{
	size_t fixed = o->defer_mb + ST_ELF_LAYOUT_BUDGET_MB + 96, share;

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
			(size_t)ST_ELF_LAYOUT_BUDGET_MB + 96, o->memory_mb);
}

int main(int argc, char **argv)
{
	struct st_options o = {
		.freq = 99, .output = "./stacktree.out", .max_nodes = 65536,
		.drain_interval = 1.0, .keep = 24, .unwind = ST_UNWIND_AUTO, .defer_mb = 32, .unwind_cache_mb = 512,
		.events = 1u << ST_EVENT_CPU, .interpreters = ST_INTERP_ALL,
	};
	struct parse_state ps = { .o = &o };
	const struct argp argp = { options, parse_opt, "[-- CMD [ARGS...]]", doc, NULL, NULL, NULL };
	int ret;

	if (argp_parse(&argp, argc, argv, 0, NULL, &ps))
		return 64;
	o.pids = ps.pids;
	o.npids = ps.npids;
	split_memory(&o);
	ret = st_daemon__run(&o);
	free(ps.pids);
	return ret;
}

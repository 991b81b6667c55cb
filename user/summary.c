/* summary.c - what a session counted, told: the profile header's lost
 * samples and notes, and the summary printed at the end of a session (or
 * kept with each service snapshot). See summary.h. */
#include "user/summary.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/budget.h"
#include "common/textesc.h"
#include "common/tree.h"
#include "binsym/perfmap.h"
#include "binsym/symbolizer.h"
#include "user/collect/collector.h"
#include "user/collect/unwind/deferred.h"
#include "user/collect/faults/forcefault.h"
#include "user/collect/runtimes/java/java.h"
#include "user/collect/runtimes/python/python.h"
#include "user/collect/session.h"
#include "user/collect/unwind/unwinder.h"
#include "user/model/profile.h"

/* room for one escaped path, sentence or list of module names */
#define ST_SUMMARY_PATH (ST_TEXTESC_GROWTH * 1024)

/* The kernel's and the daemon's counters (bpf/stacktree.h, enum st_stat) as
 * the profile header shows them: lost samples, or notes. */
static const struct {
	enum st_stat stat;
	const char *id;		/* profile.json's stable key */
	const char *name;
	bool lost;
} counters[] = {
	{ ST_STAT_LOST_NODES_FULL, "lost_nodes_full", "node array full", true },
	{ ST_STAT_LOST_TABLE_FULL, "lost_table_full", "node table full", true },
	{ ST_STAT_LOST_THREAD, "lost_thread", "no thread state", true },
	{ ST_STAT_SPARE_THREAD, "spare_thread",
	  "samples folded without their thread's state (task storage busy; their calls not counted)",
	  false },
	{ ST_STAT_LOST_STACK, "lost_stack", "stack walk failed", true },
	{ ST_STAT_LOST_EPOCH, "lost_epoch", "generation swap race", true },
	{ ST_STAT_TRUNCATED, "truncated", "stacks truncated at 768 frames", false },
	{ ST_STAT_EMPTY_STACK, "empty_stack", "samples without user frames ([kernel])", false },
	{ ST_STAT_IDLE, "idle", "idle-CPU samples (not profiled)", false },
	{ ST_STAT_IN_EXECVE, "in_execve", "samples inside execve (not profiled)", false },
	{ ST_STAT_NEW_PROC_LOST, "new_proc_lost", "new-process events lost", false },
	{ ST_STAT_MAP_EVENTS, "exec_maps", "processes whose mappings were kept at their end",
	  false },
	{ ST_STAT_MAP_LOST, "exec_maps_lost",
	  "executable mappings not kept at a process's end (over 32)", false },
	{ ST_STAT_UNW_NO_PROC, "unw_no_proc", "unwind: no tables for the process yet", false },
	{ ST_STAT_UNW_NO_TABLE, "unw_no_table", "unwind stopped: no CFI", false },
	{ ST_STAT_UNW_READ_FAULT, "unw_read_fault", "unwind stopped: stack read fault", false },
	{ ST_STAT_UNW_UNSUPPORTED, "unw_unsupported", "unwind stopped: unsupported CFI", false },
	{ ST_STAT_UNW_BAD_FRAME, "unw_bad_frame", "unwind stopped: bad frame", false },
	{ ST_STAT_UNW_TOO_MANY_MAPS, "unw_too_many_maps",
	  "unwind stopped: a mapping beyond the table's bound (16384 per process)", false },
	{ ST_STAT_UNW_FP_FRAMES, "unw_fp_frames", "unwind: frames walked by frame pointers", false },
	{ ST_STAT_UNW_SCANNED, "unw_scanned",
	  "unwind: frames without CFI whose caller a checked stack scan found", false },
	{ ST_STAT_UNW_SCAN_FAILED, "unw_scan_failed",
	  "unwind: stack scans through code without CFI that found no checked caller", false },
	{ ST_STAT_UNW_OVER_BUDGET, "unw_over_budget", "unwind: samples through modules over --unwind-memory",
	  false },
	{ ST_STAT_UNW_PENDING, "unw_pending", "unwind: samples through modules not compiled yet", false },
	{ ST_STAT_LATE_UNWOUND, "late_unwound", "unwind: samples unwound late in the daemon", false },
	{ ST_STAT_LATE_DROPPED, "late_dropped", "deferred samples dropped (daemon queue full)", true },
	{ ST_STAT_HANDOFF, "handoff", "threads folded in the kernel again after late unwinding", false },
	{ ST_STAT_HANDOFF_MISSED, "handoff_missed",
	  "threads folded in the kernel again without the daemon's last path (CALLS may count one more)",
	  false },
	{ ST_STAT_LATE_AGED, "late_aged", "unwind: samples walked late before their tables were in (10 s)",
	  false },
	{ ST_STAT_DEFER_LOST, "defer_lost", "unwind: samples not deferred (ring buffer full)", false },
	{ ST_STAT_EARLY_LOST, "early_lost",
	  "early samples not deferred (ring buffer full: taken before the full timer program was "
	  "in)", true },
	{ ST_STAT_FAULT_INSTR, "fault_instr", "instruction faults", false },
	{ ST_STAT_FAULT_MODULE, "fault_module", "data faults in modules (m)", false },
	{ ST_STAT_FAULT_STACK, "fault_stack", "data faults on stacks (s)", false },
	{ ST_STAT_FAULT_HEAP, "fault_heap", "data faults in the heap (h)", false },
	{ ST_STAT_FAULT_UNKNOWN, "fault_unknown", "data faults not classified (no mapping found)", false },
	{ ST_STAT_FAULT_FORCED, "fault_forced", "data faults on pages --force-faults paged out (*)", false },
	{ ST_STAT_OFFCPU_NS, "offcpu_ns", "off-CPU time folded (ns)", false },
	{ ST_STAT_OFFCPU_SHORT, "offcpu_short",
	  "off-CPU periods under --offcpu-min-us (not folded)", false },
	{ ST_STAT_OFFCPU_SHORT_NS, "offcpu_short_ns", "... their time (ns)", false },
	{ ST_STAT_OFFCPU_RATE, "offcpu_rate",
	  "switch-outs over --offcpu-max-rate (not walked, not folded)", false },
	{ ST_STAT_OFFCPU_RATE_NS, "offcpu_rate_ns", "... their time off the CPU (ns)", false },
	{ ST_STAT_EARLY, "early",
	  "samples taken before the full timer program was in (dwarf/auto: unwound late "
	  "by the daemon)", false },
};

/* Samples whose walk stopped short, whatever stopped it: the [truncated]
 * roots of every thread (the reasons follow as separate counters). */
static __u64 truncated_samples(const struct st_profile *p)
{
	__u64 n = 0;

	for (size_t i = 0; i < p->nthreads; i++)
		for (const struct st_node *c = st_tree__root(p->threads[i]->tree)->first_child; c;
		     c = c->next_sibling)
			if (st_frame__is_truncated(&c->f))
				n += c->cum;
	return n;
}

/* JIT perf maps (since the start): read, refused, lines skipped; ELF files
 * refused for their layout (binsym/elflayout.h) or for not being the
 * file mapped. */
static void add_perfmap_notes(struct st_profile *p, const struct st_collector *coll,
			      struct st_symbolizer *sym)
{
	struct st_perfmap_stats js;
	struct st_symbolizer_stats ss;

	st_collector__perfmap_stats(coll, &js);
	st_symbolizer__stats(sym, &ss);
	const struct {
		const char *id;
		const char *name;
		size_t n;
	} notes[] = {
		{ "perfmap_read", "perf maps read (JIT code names)", js.files },
		{ "perfmap_refused_symlink", "perf maps refused: symbolic links", js.symlink },
		{ "perfmap_refused_not_owned", "perf maps refused: not owned by the process's user or root", js.not_owned },
		{ "perfmap_refused_not_regular", "perf maps refused: not regular files", js.not_regular },
		{ "perfmap_refused_too_large", "perf maps refused: over the size bound (64 MiB)", js.too_large },
		{ "perfmap_lines_skipped", "perf map lines skipped (malformed)", js.bad_lines },
		{ "perfmap_entries_dropped", "perf map entries dropped (over 1048576 per file)", js.dropped },
		{ "files_refused_implausible_layout", "files refused: implausible layout", ss.implausible },
		{ "files_refused_not_mapped", "files refused: not the mapped file (mapping gone, path reused)", ss.not_mapped },
		{ "kernel_symbols", "kernel symbols read (/proc/kallsyms)", ss.kernel_symbols },
		{ "kernel_unnamed", "kernel addresses without a symbol (/proc/kallsyms)", ss.kernel_unnamed },
		{ "kernel_symbols_incomplete", "kernel symbols incomplete: /proc/kallsyms read failed 3 times", ss.kernel_read_error != 0 },
	};

	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if (notes[i].n)
			st_profile__add_note_id(p, notes[i].id, notes[i].name, notes[i].n);
}

/* CPython frames' counters (user/collect/runtimes/python/python.h): since the start,
 * the cpu and page-fault programs' together. */
static void add_python_notes(struct st_profile *p, const struct st_python *py,
			     const struct st_defer *defer)
{
	static const char *const names[ST_PY_STAT__MAX] = {
		[ST_PY_STAT_SAMPLES] = "python: samples of python processes",
		[ST_PY_STAT_WALKED] = "python: samples with python frames",
		[ST_PY_STAT_FRAMES] = "python: frames walked",
		[ST_PY_STAT_NO_THREAD] = "python: samples of threads without a thread state",
		[ST_PY_STAT_NO_FRAME] = "python: samples of threads without a python frame",
		[ST_PY_STAT_READ_FAULT] = "python: walks stopped by a failed read",
		[ST_PY_STAT_BAD_VALUE] = "python: walks stopped by an absurd value",
		[ST_PY_STAT_TRUNCATED] = "python: stacks cut at 512 python frames",
		[ST_PY_STAT_UNMATCHED] = "python: evaluation frames and python frames unpaired",
		[ST_PY_STAT_MERGE_CUT] = "python: merged stacks cut at 768 frames",
		[ST_PY_STAT_CODE_EVENTS] = "python: code objects reported",
		[ST_PY_STAT_CODE_LOST] = "python: code object reports lost (ring full)",
		[ST_PY_STAT_DEFERRED] = "python: deferred samples (merged by the daemon)",
		[ST_PY_STAT_READS] = "python: reads of process memory by the walks",
		[ST_PY_STAT_READS_FRAMES] = "python: reads of frames by the walks",
		[ST_PY_STAT_READS_CODES] = "python: reads of code objects by the walks",
		[ST_PY_STAT_EXEC_FOUND] = "python: processes walked from their exec",
		[ST_PY_STAT_EXEC_REFUSED] = "python: execs of a known executable not walked",
	};
	static const char *const ids[ST_PY_STAT__MAX] = {
		[ST_PY_STAT_SAMPLES] = "python_samples",
		[ST_PY_STAT_WALKED] = "python_walked",
		[ST_PY_STAT_FRAMES] = "python_frames",
		[ST_PY_STAT_NO_THREAD] = "python_no_thread",
		[ST_PY_STAT_NO_FRAME] = "python_no_frame",
		[ST_PY_STAT_READ_FAULT] = "python_read_fault",
		[ST_PY_STAT_BAD_VALUE] = "python_bad_value",
		[ST_PY_STAT_TRUNCATED] = "python_truncated",
		[ST_PY_STAT_UNMATCHED] = "python_unmatched",
		[ST_PY_STAT_MERGE_CUT] = "python_merge_cut",
		[ST_PY_STAT_CODE_EVENTS] = "python_code_events",
		[ST_PY_STAT_CODE_LOST] = "python_code_lost",
		[ST_PY_STAT_DEFERRED] = "python_deferred",
		[ST_PY_STAT_READS] = "python_reads",
		[ST_PY_STAT_READS_FRAMES] = "python_reads_frames",
		[ST_PY_STAT_READS_CODES] = "python_reads_codes",
		[ST_PY_STAT_EXEC_FOUND] = "python_exec_found",
		[ST_PY_STAT_EXEC_REFUSED] = "python_exec_refused",
	};
	struct st_python_stats ps;

	if (!py || st_python__stats(py, &ps))
		return;
	if (defer)	/* the merges of deferred samples */
		st_defer__py_stats(defer, ps.bpf);
	/* a run that met no CPython says nothing of it (the summary of a C
	 * program had 20 python lines, all 0) */
	if (!ps.processes && !ps.unsupported && !ps.codes && !ps.bpf[ST_PY_STAT_SAMPLES] &&
	    !ps.bpf[ST_PY_STAT_DEFERRED] && !ps.bpf[ST_PY_STAT_EXEC_FOUND] &&
	    !ps.bpf[ST_PY_STAT_EXEC_REFUSED] && !ps.exes_put)
		return;
	for (size_t k = 0; k < ST_PY_STAT__MAX; k++)
		if (names[k])
			st_profile__add_note_id(p, ids[k], names[k], ps.bpf[k]);
	st_profile__add_note_id(p, "python_processes", "python: processes followed", ps.processes);
	st_profile__add_note_id(p, "python_unsupported", "python: processes of unsupported versions",
				ps.unsupported);
	st_profile__add_note_id(p, "python_codes", "python: code objects read", ps.codes);
	st_profile__add_note_id(p, "python_code_failed", "python: code objects unreadable",
				ps.code_failed);
	st_profile__add_note_id(p, "python_code_dropped", "python: code objects over the bound",
				ps.code_dropped);
	st_profile__add_note_id(p, "python_code_renamed",
				"python: code names replaced (an address reused by 16 objects)",
				ps.code_renamed);
	st_profile__add_note_id(p, "python_lines_lost",
				"python: code objects without their lines (table unreadable)",
				ps.lines_lost);
	st_profile__add_note_id(p, "python_code_evicted", "python: code names evicted (least "
				"recently used, over the memory budget's share)", ps.code_evicted);
	st_profile__add_note_id(p, "python_exes", "python: executables walked from their exec "
				"(py_exes)", ps.exes_put);
	st_profile__add_note_id(p, "python_exes_full", "python: executables left out (py_exes "
				"full)", ps.exes_full);
	st_profile__add_note_id(p, "python_exec_agreed", "python: exec entries the probe confirmed",
				ps.exec_agreed);
	st_profile__add_note_id(p, "python_exec_wrong", "python: exec entries the probe replaced "
				"(template taken back)", ps.exec_wrong);
}

void st_summary__notes(struct st_profile *p, const struct st_summary_src *s, unsigned ev,
		       const __u64 *st)
{
	__u64 bad;

	st_profile__add_note_id(p, "truncated_all", "stacks cut short ([truncated] root), all reasons",
			     truncated_samples(p));
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		if (!st[counters[i].stat] && counters[i].lost)
			continue;
		if (counters[i].lost)
			st_profile__add_lost_id(p, counters[i].id, counters[i].name,
						st[counters[i].stat]);
		else if (st[counters[i].stat] ||
			 (counters[i].stat == ST_STAT_TRUNCATED && ev == ST_EVENT_CPU))
			st_profile__add_note_id(p, counters[i].id, counters[i].name,
						st[counters[i].stat]);
	}
	bad = st_collector__bad_records(s->coll);
	if (bad)
		st_profile__add_note_id(p, "bad_records", "node records dropped by the daemon", bad);
	bad = st_collector__other_image_reads(s->coll);
	if (bad)	/* since the start: not per interval */
		st_profile__add_note_id(p, "other_image_reads",
				"process reads left out: the process ran another image", bad);
	bad = st_collector__inherited(s->coll);
	if (bad)	/* since the start */
		st_profile__add_note_id(p, "inherited_maps",
				"processes symbolized with their parent's maps (exec'd before "
				     "their own were read)", bad);
	{
		struct st_exec_place_stats ps;

		st_collector__placed(s->coll, &ps);
		if (ps.procs)	/* since the start */
			st_profile__add_note_id(p, "exec_maps_placed",
					"processes gone before their maps were read, symbolized "
					"with the mappings kept at their end", ps.procs);
		if (ps.no_path)
			st_profile__add_note_id(p, "exec_maps_no_path",
					"mappings of gone processes not placed: their file's path "
					"was not kept", ps.no_path);
	}
	add_perfmap_notes(p, s->coll, s->sym);
	if (ev == ST_EVENT_CPU)
		add_python_notes(p, s->py, s->defer);
}

/* A "VmRSS:"/"VmHWM:" line of /proc/self/status, in KiB: the resident set
 * now, and its peak (getrusage's would include a launcher's peak before
 * our exec). */
static long status_kib(const char *key)
{
	char line[128];
	long kib = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0 && sscanf(line + strlen(key), "%ld", &kib))
			break;
	fclose(f);
	return kib;
}

static long status_mib(const char *key)
{
	return status_kib(key) / 1024;
}

long st_summary__rss_mib(void)
{
	return status_mib("VmRSS:");
}

double st_summary__ns_per_sample(__u64 run_ns, __u64 runs, __u64 idle)
{
	__u64 walked = runs > idle ? runs - idle : 0;

	return walked ? (double)run_ns / (double)walked : 0;
}

/* Text in a # HELP line: backslash and newline escaped. */
static void prom_help(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void prom_head(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value as a stable key: the name with spaces as '_' ("python
 * code" -> "python_code"). */
static void prom_key(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ' ' ? '_' : *s, out);
}

static const char *const metric_events[ST_EVENTS] = {
	[ST_EVENT_CPU] = "cpu-clock", [ST_EVENT_FAULTS] = "page-faults",
	[ST_EVENT_OFFCPU] = "offcpu",
};

/* The kernel's counters of every event sampled (the daemon's late walks
 * in the timer's), since the start. */
static void event_stats(const struct st_summary_src *s, unsigned ev, __u64 st[ST_STAT__MAX])
{
	st_session__stats(s->sess, ev, st);
	if (ev == ST_EVENT_CPU && s->defer)
		st_defer__stats(s->defer, st);
}

static void metrics_events(FILE *out, const struct st_summary_src *s, unsigned events)
{
	__u64 st[ST_EVENTS][ST_STAT__MAX], run_ns[ST_EVENTS] = {}, runs[ST_EVENTS] = {};
	bool rt[ST_EVENTS] = {};

	for (unsigned ev = 0; ev < ST_EVENTS; ev++)
		if (events & (1u << ev)) {
			event_stats(s, ev, st[ev]);
			rt[ev] = !st_session__runtime(s->sess, ev, &run_ns[ev], &runs[ev]);
		}
	prom_head(out, "stacktreed_samples_total", "counter",
		  "Samples of targeted threads taken by the BPF program, folded or lost.");
	for (unsigned ev = 0; ev < ST_EVENTS; ev++)
		if (events & (1u << ev))
			fprintf(out, "stacktreed_samples_total{event=\"%s\"} %" PRIu64 "\n",
				metric_events[ev], (uint64_t)st[ev][ST_STAT_SAMPLES]);
	prom_head(out, "stacktreed_folded_samples_total", "counter",
		  "Samples folded into the call trees.");
	for (unsigned ev = 0; ev < ST_EVENTS; ev++)
		if (events & (1u << ev))
			fprintf(out, "stacktreed_folded_samples_total{event=\"%s\"} %" PRIu64 "\n",
				metric_events[ev], (uint64_t)st[ev][ST_STAT_FOLDED]);
	for (int lost = 1; lost >= 0; lost--) {
		const char *name = lost ? "stacktreed_lost_samples_total" : "stacktreed_events_total";

		fprintf(out, "# HELP %s %s", name, lost ? "Samples lost, by reason (the reports' "
			"lost samples):" : "Other counted events, by name (the reports' notes):");
		for (size_t i = 0, first = 1; i < sizeof(counters) / sizeof(counters[0]); i++)
			if (counters[i].lost == lost) {
				fprintf(out, "%s %s = ", first ? "" : ";", counters[i].id);
				prom_help(out, counters[i].name);
				first = 0;
			}
		fprintf(out, ".\n# TYPE %s counter\n", name);
		for (unsigned ev = 0; ev < ST_EVENTS; ev++)
			for (size_t i = 0; (events & (1u << ev)) &&
					   i < sizeof(counters) / sizeof(counters[0]); i++) {
				if (counters[i].lost != lost)
					continue;
				fprintf(out, "%s{event=\"%s\",%s=\"%s\"} %" PRIu64 "\n", name,
					metric_events[ev], lost ? "reason" : "name", counters[i].id,
					(uint64_t)st[ev][counters[i].stat]);
			}
	}
	prom_head(out, "stacktreed_bpf_seconds_per_sample", "gauge",
		  "BPF run time per walked sample since the start (kernel BPF stats; "
		  "absent when they are off).");
	for (unsigned ev = 0; ev < ST_EVENTS; ev++)
		if (rt[ev])
			fprintf(out, "stacktreed_bpf_seconds_per_sample{event=\"%s\"} %.3e\n",
				metric_events[ev],
				st_summary__ns_per_sample(run_ns[ev], runs[ev], st[ev][ST_STAT_IDLE]) /
					1e9);
}

/* The budget's limit, its parts' bytes and their refusals. */
static void budget_metrics(FILE *out, const struct st_summary_src *s)
{
	struct st_budget_stats bs;
	struct st_python_stats ps;

	st_budget__stats(s->budget, &bs);
	if (!bs.limit)
		return;
	prom_head(out, "stacktreed_memory_budget_bytes", "gauge",
		  "What the caches answer to together (--memory-mb less the reserve).");
	fprintf(out, "stacktreed_memory_budget_bytes %zu\n", bs.limit);
	prom_head(out, "stacktreed_memory_budget_used_bytes", "gauge",
		  "What each part of the memory budget holds.");
	for (int i = 0; i < ST_BUDGET__N; i++) {
		fputs("stacktreed_memory_budget_used_bytes{part=\"", out);
		prom_key(out, st_budget_part_names[i]);
		fprintf(out, "\"} %zu\n", bs.part[i]);
	}
	prom_head(out, "stacktreed_memory_budget_refused_total", "counter",
		  "Things not kept because the memory budget was full, by part.");
	for (int i = 0; i < ST_BUDGET__N; i++) {
		fputs("stacktreed_memory_budget_refused_total{part=\"", out);
		prom_key(out, st_budget_part_names[i]);
		fprintf(out, "\"} %" PRIu64 "\n", (uint64_t)bs.refused[i]);
	}
	if (s->py && !st_python__stats(s->py, &ps)) {
		prom_head(out, "stacktreed_python_codes_total", "counter", "CPython code objects: "
			  "reports lost (ring full), read, evicted (least recently used), not kept.");
		fprintf(out, "stacktreed_python_codes_total{what=\"lost\"} %" PRIu64 "\n"
			"stacktreed_python_codes_total{what=\"read\"} %" PRIu64 "\n"
			"stacktreed_python_codes_total{what=\"evicted\"} %" PRIu64 "\n"
			"stacktreed_python_codes_total{what=\"dropped\"} %" PRIu64 "\n",
			(uint64_t)ps.bpf[ST_PY_STAT_CODE_LOST], (uint64_t)ps.codes,
			(uint64_t)ps.code_evicted, (uint64_t)ps.code_dropped);
	}
}

/* /proc/self/stat's fields from the state on (field 3: "S 1 ..."), in
 * buf: NULL when unreadable. */
static const char *self_stat(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;
	char *p;

	if (f)
		fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the comm may hold spaces and parentheses */
	return p && p[1] == ' ' ? p + 2 : NULL;
}

/* The boot's time, seconds since the epoch (/proc/stat "btime"), or 0. */
static unsigned long long boot_time(void)
{
	char line[256];
	unsigned long long t = 0;
	FILE *f = fopen("/proc/stat", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &t) == 1)
			break;
	if (f)
		fclose(f);
	return t;
}

/* Descriptors open now (/proc/self/fd less the one reading it), or -1. */
static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = -1;	/* the directory's own */

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* The standard process_* metrics, as the Prometheus client libraries'
 * process collectors define them (client_golang's procfs one). */
void st_summary__process_metrics(FILE *out)
{
	char buf[1024];
	const char *st = self_stat(buf, sizeof(buf));
	unsigned long long utime = 0, stime = 0, start = 0, vsize = 0;
	long long rss = 0, ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	long fds = open_fds();

	/* fields 14, 15 (utime, stime), 22 (starttime), 23 (vsize), 24 (rss) */
	if (!st || ticks <= 0 || page <= 0 ||
	    sscanf(st, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
		   "%*d %*d %llu %llu %lld", &utime, &stime, &start, &vsize, &rss) != 5)
		return;
	prom_head(out, "process_cpu_seconds_total", "counter",
		  "Total user and system CPU time spent in seconds.");
	fprintf(out, "process_cpu_seconds_total %.2f\n", (double)(utime + stime) / (double)ticks);
	prom_head(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
	fprintf(out, "process_resident_memory_bytes %lld\n", rss * page);
	prom_head(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
	fprintf(out, "process_virtual_memory_bytes %llu\n", vsize);
	prom_head(out, "process_start_time_seconds", "gauge",
		  "Start time of the process since unix epoch in seconds.");
	fprintf(out, "process_start_time_seconds %.2f\n",
		(double)boot_time() + (double)start / (double)ticks);
	if (fds >= 0) {
		prom_head(out, "process_open_fds", "gauge", "Number of open file descriptors.");
		fprintf(out, "process_open_fds %ld\n", fds);
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		prom_head(out, "process_max_fds", "gauge",
			  "Maximum number of open file descriptors.");
		fprintf(out, "process_max_fds %.0f\n", rl.rlim_cur == RLIM_INFINITY ? -1.0 :
			(double)rl.rlim_cur);
	}
}

/* The BPF maps' memory: the session's, and the deferred samples' ring
 * buffer, which the daemon creates and grows (defer_ring.h). */
static size_t bpf_map_bytes(const struct st_summary_src *s, unsigned *ring_grows)
{
	unsigned grows = 0;
	size_t ring = s->defer ? st_defer__ring_bytes(s->defer, &grows) : 0;

	if (ring_grows)
		*ring_grows = grows;
	return st_session__map_memory(s->sess) + ring;
}

void st_summary__metrics(FILE *out, const struct st_summary_src *s,
			 const struct st_summary_run *run)
{
	struct rusage ru;
	unsigned grows = 0;
	const struct {
		const char *name, *type, *help;
		double value;
	} gauges[] = {
		{ "stacktreed_resident_bytes", "gauge", "The daemon's resident set.",
		  (double)status_kib("VmRSS:") * 1024 },
		{ "stacktreed_max_resident_bytes", "gauge", "The daemon's peak resident set.",
		  (double)status_kib("VmHWM:") * 1024 },
		{ "stacktreed_bpf_map_bytes", "gauge", "BPF maps, estimated from their sizes.",
		  (double)bpf_map_bytes(s, NULL) },
		{ "stacktreed_symbol_cache_bytes", "gauge", "Symbol caches.",
		  (double)st_symbolizer__memory(s->sym) },
		{ "stacktreed_tree_bytes", "gauge", "The daemon's call trees.",
		  (double)st_collector__memory(s->coll) },
		{ "stacktreed_process_bytes", "gauge",
		  "The processes' maps tables, perf maps and cgroup paths.",
		  (double)st_collector__maps_memory(s->coll) },
		{ "stacktreed_unwritten_samples_dropped_total", "counter",
		  "Samples of unwritten snapshots dropped over the memory budget.",
		  (double)s->pending_dropped },
		{ "stacktreed_processes", "gauge", "Processes with samples in this interval.",
		  (double)st_collector__processes(s->coll) },
		{ "stacktreed_snapshots_written_total", "counter", "Service snapshots written.",
		  (double)run->snapshots_written },
		{ "stacktreed_snapshots_failed_total", "counter",
		  "Service snapshots not written (their samples go into the next).",
		  (double)run->snapshots_failed },
	};

	metrics_events(out, s, run->events);
	getrusage(RUSAGE_SELF, &ru);
	prom_head(out, "stacktreed_cpu_seconds_total", "counter", "The daemon's CPU time.");
	fprintf(out, "stacktreed_cpu_seconds_total %.3f\n",
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++) {
		prom_head(out, gauges[i].name, gauges[i].type, gauges[i].help);
		fprintf(out, "%s %.0f\n", gauges[i].name, gauges[i].value);
	}
	budget_metrics(out, s);
	if (s->unw) {
		struct st_unwinder_stats us;

		st_unwinder__stats(s->unw, &us);
		prom_head(out, "stacktreed_unwind_table_bytes", "gauge",
			  "CFI rows held in the BPF maps (--unwind-memory bounds them).");
		fprintf(out, "stacktreed_unwind_table_bytes %zu\n", us.bytes);
		prom_head(out, "stacktreed_unwind_table_budget_bytes", "gauge", "--unwind-memory.");
		fprintf(out, "stacktreed_unwind_table_budget_bytes %zu\n", us.budget);
		prom_head(out, "stacktreed_unwind_modules_without_room_total", "counter",
			  "Modules walked by frame pointers: --unwind-memory was full.");
		fprintf(out, "stacktreed_unwind_modules_without_room_total %zu\n", us.no_room);
	}
	if (s->defer) {
		prom_head(out, "stacktreed_deferred_queue_bytes", "gauge",
			  "Deferred samples waiting for their unwind tables (the daemon's queue).");
		fprintf(out, "stacktreed_deferred_queue_bytes %zu\n", st_defer__queued_bytes(s->defer));
		prom_head(out, "stacktreed_deferred_queue_limit_bytes", "gauge",
			  "The queue's bound: samples over it are dropped (lost, counted).");
		fprintf(out, "stacktreed_deferred_queue_limit_bytes %u\n", ST_DEFER_MEMORY);
		prom_head(out, "stacktreed_deferred_ring_bytes", "gauge",
			  "The deferred samples' ring buffer (grown from 2 MiB up to "
			  "--unwind-defer-mb as it fills).");
		fprintf(out, "stacktreed_deferred_ring_bytes %zu\n",
			st_defer__ring_bytes(s->defer, &grows));
		prom_head(out, "stacktreed_deferred_ring_grows_total", "counter",
			  "Times the deferred samples' ring buffer was replaced by one twice as big.");
		fprintf(out, "stacktreed_deferred_ring_grows_total %u\n", grows);
	}
	prom_head(out, "stacktreed_build_info", "gauge",
		  "Always 1: the daemon's version in its label.");
	fprintf(out, "stacktreed_build_info{version=\"%s\"} 1\n", ST_VERSION);
}

/* The rest of the memory line: what the budget's parts hold now, then
 * (a line of its own) what was refused or dropped because it was full. */
static void budget_line(FILE *out, const struct st_summary_src *s)
{
	struct st_budget_stats bs;
	struct st_symbolizer_stats ss;
	struct st_python_stats ps = {};
	char path[ST_SUMMARY_PATH];

	st_budget__stats(s->budget, &bs);
	if (!bs.limit) {
		fputc('\n', out);
		return;
	}
	fprintf(out, ", caches %.1f of %zu MiB (peak %.1f:", (double)bs.used / (1 << 20),
		bs.limit >> 20, (double)bs.peak / (1 << 20));
	for (int i = 0; i < ST_BUDGET__N; i++)
		fprintf(out, "%s %s %.1f", i ? "," : "", st_budget_part_names[i],
			(double)bs.part[i] / (1 << 20));
	fprintf(out, ")\n");
	st_symbolizer__stats(s->sym, &ss);
	if (s->py)
		st_python__stats(s->py, &ps);
	if (ss.over_budget || bs.refused[ST_BUDGET_MAPS] || bs.refused[ST_BUDGET_PYCODE] ||
	    s->pending_dropped)
		fprintf(out, "stacktreed: memory budget full: %zu modules left without symbols%s%s%s, "
			"%" PRIu64 " processes not kept (unsymbolized), %" PRIu64 " Python code "
			"objects not read, %" PRIu64 " samples of unwritten snapshots dropped; "
			"raise --memory-mb\n", ss.over_budget, ss.over_budget ? " (last: " : "",
			st_textesc__str(ss.over_budget_path, path, sizeof(path)),
			ss.over_budget ? ")" : "",
			(uint64_t)bs.refused[ST_BUDGET_MAPS], (uint64_t)bs.refused[ST_BUDGET_PYCODE],
			(uint64_t)s->pending_dropped);
}

/* The JVMs met and what their walks met (docs/java.md), when any was. */
static void java_line(FILE *out, const struct st_java *j)
{
	struct st_java_stats js;

	if (!j)
		return;
	st_java__stats(j, &js);
	if (!js.jvms && !js.failed)
		return;
	fprintf(out, "stacktreed: java: JVMs seen %" PRIu64, (uint64_t)js.jvms);
	if (js.failed)
		fprintf(out, ", %" PRIu64 " more whose structure tables could not be read",
			(uint64_t)js.failed);
	if (js.unsupported)
		fprintf(out, ", %" PRIu64 " of a frame layout not supported", (uint64_t)js.unsupported);
	fprintf(out, "; walks %" PRIu64 ", %" PRIu64 " with Java frames, %" PRIu64
		" Java frames interpreted (and %" PRIu64 " leaves in a method entry building its "
		"frame)", (uint64_t)js.bpf[ST_JAVA_STAT_WALKS],
		(uint64_t)js.bpf[ST_JAVA_STAT_WALKED], (uint64_t)js.bpf[ST_JAVA_STAT_FRAMES],
		(uint64_t)js.bpf[ST_JAVA_STAT_HS_ENTRY]);
	if (js.tables_pushed)	/* (java.c's push_tables()) */
		fprintf(out, "; unwinding tables pushed as a JVM was found, or its exec "
			"read, before its maps were read %" PRIu64, (uint64_t)js.tables_pushed);
	fputc('\n', out);
	fprintf(out, "stacktreed: java: frames kept as addresses: %" PRIu64 " without a method, %"
		PRIu64 " with a bcp outside it; walks stopped at an unreadable frame %" PRIu64
		"; code-cache frames not taken by the blob step %" PRIu64 "; samples at no "
		"interpreter pc %" PRIu64 "\n", (uint64_t)js.bpf[ST_JAVA_STAT_BAD_METHOD],
		(uint64_t)js.bpf[ST_JAVA_STAT_BAD_BCP], (uint64_t)js.bpf[ST_JAVA_STAT_END_READ],
		(uint64_t)js.bpf[ST_JAVA_STAT_CODE_CACHE], (uint64_t)js.bpf[ST_JAVA_STAT_LEAF_OUT]);
	fprintf(out, "stacktreed: java: methods reported %" PRIu64 " (lost %" PRIu64 "), read %"
		PRIu64 ", unreadable %" PRIu64 ", dropped %" PRIu64 " (over %u), held %" PRIu64
		"; samples unwound late %" PRIu64 " (%" PRIu64 " with methods unreadable then); "
		"--unwind fp samples without Java frames %" PRIu64 "\n",
		(uint64_t)js.bpf[ST_JAVA_STAT_METHODS], (uint64_t)js.bpf[ST_JAVA_STAT_METHODS_LOST],
		(uint64_t)js.methods, (uint64_t)js.method_failed, (uint64_t)js.method_dropped,
		ST_JAVA_MAX_HELD, (uint64_t)js.held, (uint64_t)js.bpf[ST_JAVA_STAT_DEFERRED],
		(uint64_t)js.bpf[ST_JAVA_STAT_LATE_NO_MEM], (uint64_t)js.bpf[ST_JAVA_STAT_FP_MODE]);
	fprintf(out, "stacktreed: java: code blob frames %" PRIu64 " (deoptimized %" PRIu64
		", in a return sequence %" PRIu64 ", pc too far to name %" PRIu64 "); walks stopped "
		"at: no blob %" PRIu64 ", a bad blob %" PRIu64 ", a prologue %" PRIu64 ", a stub "
		"leaf %" PRIu64 ", a return address out of the code cache %" PRIu64 ", an unreadable "
		"stack %" PRIu64 ", a stub's frame pointer %" PRIu64 "; compiled frames named %"
		PRIu64 " (nmethod gone %" PRIu64 ", unreadable %" PRIu64 ", of them named by their "
		"nmethod's method %" PRIu64 "); code cache addresses "
		"named %" PRIu64 " (unreadable %" PRIu64 "); deferred samples walked as they came %"
		PRIu64 " (%" PRIu64 " from the code cache above a native leaf), reads of late walks from memory kept %" PRIu64 ", blob cache misses %"
		PRIu64 ", stale %" PRIu64 "\n",
		(uint64_t)js.bpf[ST_JAVA_STAT_HS_FRAMES], (uint64_t)js.bpf[ST_JAVA_STAT_HS_DEOPT],
		(uint64_t)js.bpf[ST_JAVA_STAT_HS_EPILOGUE], (uint64_t)js.bpf[ST_JAVA_STAT_HS_FAR_PC],
		(uint64_t)js.bpf[ST_JAVA_STAT_HS_NO_BLOB], (uint64_t)js.bpf[ST_JAVA_STAT_HS_BAD_BLOB],
		(uint64_t)js.bpf[ST_JAVA_STAT_HS_PROLOGUE], (uint64_t)js.bpf[ST_JAVA_STAT_HS_STUB_LEAF],
		(uint64_t)js.bpf[ST_JAVA_STAT_HS_BAD_RA], (uint64_t)js.bpf[ST_JAVA_STAT_HS_READ],
		(uint64_t)js.bpf[ST_JAVA_STAT_END_BAD_FP], (uint64_t)js.jits, (uint64_t)js.jit_gone,
		(uint64_t)js.jit_failed, (uint64_t)js.jit_own, (uint64_t)js.code_named,
		(uint64_t)js.code_failed,
		(uint64_t)js.prewalks, (uint64_t)js.prewalks_native, (uint64_t)js.mem_replayed,
		(uint64_t)js.bpf[ST_JAVA_STAT_HS_CACHE_MISS],
		(uint64_t)js.bpf[ST_JAVA_STAT_HS_CACHE_STALE]);
}

/* Notes that describe how the session ran, not what it found: the full
 * summary's only. */
static bool diagnostic_note(const char *id)
{
	static const char *const ids[] = {
		"bpf_runs", "kernel_symbols", "perfmap_read", "late_unwound", "handoff",
		"unw_fp_frames", "unw_scanned", "idle", "in_execve", "python_codes",
	};

	for (size_t i = 0; id && i < sizeof(ids) / sizeof(ids[0]); i++)
		if (!strcmp(id, ids[i]))
			return true;
	return false;
}

/* brief: what happened (samples, lost, cut short, where the reports are)
 * and only the lines whose counters are not zero and say something about
 * this run's profile; else every line. */
static void write_summary(FILE *out, const struct st_profile *p, const struct st_summary_src *s,
			  const char *where, bool brief)
{
	struct st_symbolizer_stats ss;
	struct rusage ru;
	unsigned grows = 0;
	char line[1024], path[ST_SUMMARY_PATH];	/* names are data: escaped */

	getrusage(RUSAGE_SELF, &ru);
	if (p->unit == ST_UNIT_NS)	/* offcpu, wall: time */
		fprintf(out, "stacktreed: %.3f %s (%s) in %zu threads of %zu processes, %.2f s\n",
			(double)p->samples / 1e6, st_profile__what(p), p->event, p->nthreads,
			st_collector__processes(s->coll), p->duration_s);
	else if (p->frequency_hz)
		fprintf(out, "stacktreed: %" PRIu64 " %s samples in %zu threads of %zu processes, "
			"%.2f s at %u Hz per CPU\n", (uint64_t)p->samples, p->event, p->nthreads,
			st_collector__processes(s->coll), p->duration_s, p->frequency_hz);
	else
		fprintf(out, "stacktreed: %" PRIu64 " %s samples in %zu threads of %zu processes, "
			"%.2f s\n", (uint64_t)p->samples, p->event, p->nthreads,
			st_collector__processes(s->coll), p->duration_s);
	fprintf(out, "stacktreed: lost %" PRIu64 " samples", (uint64_t)p->lost);
	for (size_t i = 0; i < p->nlost_by; i++)
		fprintf(out, "%s%s: %" PRIu64, i ? ", " : " (",
			st_textesc__str(p->lost_by[i].name, path, sizeof(path)),
			(uint64_t)p->lost_by[i].value);
	fprintf(out, "%s\n", p->nlost_by ? ")" : "");
	for (size_t i = 0; i < p->nnotes; i++)
		if (!brief || (p->notes[i].id && !strcmp(p->notes[i].id, "truncated_all")) ||
		    (p->notes[i].value && !diagnostic_note(p->notes[i].id)))
			fprintf(out, "stacktreed: %s: %" PRIu64 "\n",
			st_textesc__str(p->notes[i].name, path, sizeof(path)),
			(uint64_t)p->notes[i].value);
	if ((!brief || p->unresolved) &&	/* the line has module names */
	    st_profile__unresolved_line(p, line, sizeof(line)))
		fprintf(out, "stacktreed: %s\n", st_textesc__str(line, path, sizeof(path)));
	st_symbolizer__stats(s->sym, &ss);
	if (brief)
		goto findings;
	if (p->bpf_ns_per_sample > 0)
		fprintf(out, "stacktreed: BPF run time %.0f ns per sample (kernel BPF stats)\n",
			p->bpf_ns_per_sample);
	else
		fprintf(out, "stacktreed: BPF run time unavailable (kernel BPF stats off)\n");
	fprintf(out, "stacktreed: daemon CPU %.2f s, max RSS %ld MiB, RSS %ld MiB, "
		"BPF maps ~%zu MiB; budget %zu MiB (--memory-mb)",
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
		status_mib("VmHWM:"), st_summary__rss_mib(), bpf_map_bytes(s, &grows) >> 20,
		s->memory_mb);
	budget_line(out, s);
	if (s->defer)
		fprintf(out, "stacktreed: deferred samples' ring buffer %zu KiB (grown %u times, "
			"up to --unwind-defer-mb)\n", st_defer__ring_bytes(s->defer, &grows) >> 10,
			grows);
	fprintf(out, "stacktreed: symbol caches %zu KiB, trees %zu KiB\n",
		st_symbolizer__memory(s->sym) >> 10, st_collector__memory(s->coll) >> 10);
findings:
	if (!brief || ss.evicted || ss.not_regular || ss.too_large || ss.symlink ||
	    ss.implausible || ss.not_mapped || ss.out_of_time || ss.too_many || ss.cancelled ||
	    ss.unshared)
		fprintf(out, "stacktreed: symbol limits: %zu modules evicted (%zu unused over %.0f s; "
			"cache budget %zu MiB), "
			"files refused: %zu not regular, %zu over the size bound, %zu symlinks, "
			"%zu implausible layout%s%s%s, %zu not the mapped file; "
			"modules cut: %zu out of time, %zu too many symbols, %zu at stop; "
			"%zu non-root files not shared by build id\n",
			ss.evicted, ss.expired, ss.idle_s, ss.cache_budget >> 20, ss.not_regular, ss.too_large, ss.symlink,
			ss.implausible, ss.implausible ? " (last: " : "",
			st_textesc__str(ss.implausible_path, path, sizeof(path)),
			ss.implausible ? ")" : "", ss.not_mapped, ss.out_of_time, ss.too_many,
			ss.cancelled, ss.unshared);
	if (ss.debuginfod)
		fprintf(out, "stacktreed: debuginfod: %zu debug files fetched, %zu not found, "
			"%zu failed (timeout, unreachable, too large), %zu rejected (wrong build id "
			"or not ELF), %zu not asked (too many build ids, or failures in a row); "
			"%.2f s fetching\n",
			ss.dbgd_found, ss.dbgd_not_found, ss.dbgd_failed, ss.dbgd_rejected,
			ss.dbgd_skipped, ss.dbgd_seconds);
	if (s->unw) {
		struct st_unwinder_stats us;

		st_unwinder__stats(s->unw, &us);
		if (!brief || us.no_cfi || us.refused || us.unshared || us.other_image ||
		    us.too_many_maps)
			fprintf(out, "stacktreed: unwind tables: %zu modules, %zu rows compiled; %zu "
				"modules, %.1f MiB held now in %zu shards (%.1f MiB of rows; peak %.1f of "
				"%zu MiB, --unwind-memory), "
				"%zu released; %zu processes, %zu modules without CFI, compiled in "
				"%.2f s, %zu files refused, %zu non-root files not shared by build id; "
				"%zu process tables read again (an exec during the read); %zu processes "
				"with mappings left out of their table (over %d); %zu last tables from "
				"the mappings kept at a process's end, %zu without\n",
				us.loaded, us.rows_loaded, us.modules, (double)us.bytes / (1 << 20),
				us.shards, (double)(us.rows * sizeof(struct st_unwind_row)) / (1 << 20),
				(double)us.peak_bytes / (1 << 20), us.budget >> 20, us.released, us.procs,
				us.no_cfi, us.compile_s, us.refused, us.unshared, us.other_image,
				us.too_many_maps, ST_UNWIND_MAX_PROC_MAPS, us.ended, us.ended_none);
		/* the code read by the daemon's walks past code without CFI
		 * (issue 37: from the files, the process maybe gone) */
		if (!brief || us.code_failed)
			fprintf(out, "stacktreed: unwind code reads: %zu from files, %zu from "
				"process memory, %zu failed; %zu files kept open for them (peak "
				"%zu, at most %zu), %zu mappings without\n", us.code_file_reads,
				us.code_mem_reads, us.code_failed, us.code_files,
				us.code_files_peak, us.code_files_max, us.code_not_kept);
		/* how the tables were had: the full summary's */
		if (!brief && us.cache.dir)
			fprintf(out, "stacktreed: unwind table cache: %zu hits, %zu misses, %zu "
				"written, %zu rejected, %zu evicted; %.1f of %zu MiB in %s\n",
				us.cache.hits, us.cache.misses, us.cache.written, us.cache.rejected,
				us.cache.evicted, (double)us.cache.bytes / (1 << 20),
				us.cache.max_bytes >> 20,
				st_textesc__str(us.cache.dir, path, sizeof(path)));
		else if (!brief)
			fprintf(out, "stacktreed: unwind table cache: off\n");
		if (us.no_room)
			fprintf(out, "stacktreed: unwind memory full: %zu modules walked by frame "
				"pointers instead of CFI (%s); raise --unwind-memory\n", us.no_room,
				st_textesc__str(us.no_room_names, path, sizeof(path)));
	}
	if (ss.src_cut || ss.src_deferred)
		fprintf(out, "stacktreed: source lines: %zu modules' lookups cut short (time or "
			"address limit per module), %zu frames left for a later snapshot\n",
			ss.src_cut, ss.src_deferred);
	if (s->ff && s->faults) {
		__u64 st[ST_STAT__MAX];

		st_session__stats(s->sess, ST_EVENT_FAULTS, st);
		st_forcefault__summary(s->ff, st[ST_STAT_FAULT_FORCED], out);
	}
	java_line(out, s->java);
	fprintf(out, "stacktreed: reports in %s%s\n", st_textesc__str(where, path, sizeof(path)),
		brief ? " (-v: every counter)" : "");
}

void st_summary__write(FILE *out, const struct st_profile *p, const struct st_summary_src *s,
		       const char *where)
{
	write_summary(out, p, s, where, false);
}

void st_summary__write_brief(FILE *out, const struct st_profile *p,
			     const struct st_summary_src *s, const char *where)
{
	write_summary(out, p, s, where, true);
}


/* stacktree.c - the offline tool: `stacktree report` re-renders a saved
 * profile.json, or builds one from folded stacks, without root. */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/textesc.h"
#include "user/output/arcflow.h"
#include "user/output/flamegraph.h"
#include "user/model/diff.h"
#include "user/model/folded.h"
#include "user/model/functab.h"
#include "user/hints.h"
#include "user/output/out_diff.h"
#include "user/output/out_functab.h"
#include "user/output/outdir.h"
#include "user/model/pprof_read.h"
#include "user/model/profile.h"
#include "user/output/report.h"
#include "user/output/term.h"

#define EXIT_USAGE 64

/* The one global: SIGINT/SIGTERM while temporary files may exist. */
#define SIG_ABORT 1
#define SIG_WRITING 2
static volatile sig_atomic_t signal_flags;

/* Leave at once; while writing, make the writes fail so that they remove
 * their temporary files. */
static void on_signal(int sig)
{
	(void)sig;
	if (!(signal_flags & SIG_WRITING))
		_exit(130);
	signal_flags |= SIG_ABORT;
}

enum { OPT_MIN_PCT = 300, OPT_MERGE_THREADS, OPT_FORMAT, OPT_NO_INLINE, OPT_LINES,
       OPT_FOLDED_OFFSETS, OPT_SVG_WIDTH, OPT_WIDE, OPT_NO_COLOR, OPT_THRESHOLD, OPT_STDIO,
       OPT_SORT, OPT_CHILDREN, OPT_NO_CHILDREN };

struct top_args {
	bool version;
	char **argv;	/* the command and its arguments */
	int argc;
};

struct report_args {
	const char *folded;
	const char *input;
	const char *output;
	const char *print;	/* "arcflow" or "xtree" */
	double min_pct;
	bool merge_threads;
	unsigned formats;	/* --format, 0 = default */
	bool no_inline;		/* --no-inline: inline frames folded into their callers */
	bool lines;		/* --lines: file:line in the xtree */
	bool folded_offsets;	/* --folded-offsets */
	unsigned svg_width;	/* --svg-width, 0 = default */
	bool wide, no_color;	/* --print: --wide, --no-color */
	bool stdio;		/* --stdio: print (xtree, or --sort's table) */
	bool sort_sym;		/* --sort sym: the function table */
	bool children;		/* --children: the table by total (else by self) */
};

static const char top_doc[] =
	"Offline reports of stacktreed profiles.\v"
	"Commands:\n"
	"  report    write xtree.txt, arcflow.txt and profile.json (or the --format\n"
	"            list) from a saved profile.json (--input) or from folded stacks\n"
	"            (--folded)\n"
	"  diff      compare two profiles (profile.json or folded stacks): functions\n"
	"            and paths whose share moved, differential folded stacks or\n"
	"            flame graph (perf diff, pprof -diff_base)\n\n"
	"Run `stacktree COMMAND --help' for the options of a command. See stacktree(1).";

static const struct argp_option top_options[] = {
	{ "version", 'V', NULL, 0, "Print the version and exit", 0 },
	{ 0 }
};

/* --svg-width's pixels, for report and diff alike. */
static unsigned svg_width(struct argp_state *state, const char *arg)
{
	unsigned long w;
	char *end;

	errno = 0;
	w = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || w < ST_FLAMEGRAPH_MIN_WIDTH ||
	    w > ST_FLAMEGRAPH_MAX_WIDTH)
		argp_failure(state, EXIT_USAGE, 0,
			     "--svg-width: '%s' is not a width in pixels (400..100000)", arg);
	return (unsigned)w;
}

static error_t top_parse(int key, char *arg, struct argp_state *state)
{
	struct top_args *a = state->input;

	switch (key) {
	case 'V':
		a->version = true;
		return 0;
	case ARGP_KEY_ARG:
		/* the command: it and everything after it belong to the command */
		(void)arg;
		a->argv = &state->argv[state->next - 1];
		a->argc = state->argc - state->next + 1;
		state->next = state->argc;
		return 0;
	case ARGP_KEY_END:
		if (!a->argv && !a->version)
			argp_failure(state, EXIT_USAGE, 0,
				     "missing command (try `stacktree --help')");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const char report_doc[] =
	"Write xtree.txt, arcflow.txt and profile.json (or the --format list) into DIR\n"
	"from a saved profile or from folded stacks.\v"
	"Formats: xtree (xtree.txt), arcflow (arcflow.txt), json (profile.json), folded\n"
	"(stacks.folded), pprof (profile.pb.gz, for go tool pprof, Pyroscope, Parca), svg\n"
	"(flamegraph.svg, and flamegraph-PID.svg per process when there are several).\n\n"
	"Folded stacks: one sample per line, frames root first separated by ';', an\n"
	"optional trailing count N for N consecutive identical samples; the lines are\n"
	"consecutive samples of one thread.\n\n"
	"Examples:\n"
	"  stacktree report --folded out.folded -o rep\n"
	"  stacktree report --input out/profile.json -o merged --merge-threads\n"
	"  stacktree report --input out/profile.json --format pprof,svg -o conv\n"
	"  stacktree report --input stacktree.out --print arcflow | less";

static const struct argp_option report_options[] = {
	{ "folded", 'f', "FILE", 0, "Read folded stacks from FILE (- for stdin)", 0 },
	{ "input", 'i', "FILE", 0, "Read a saved profile.json (or the directory holding it)", 0 },
	{ "output", 'o', "DIR|FILE|-", 0, "Write the reports into DIR (default ./stacktree.out); a FILE of the format its extension says (.svg, .pb.gz, .pprof, .folded, .txt, .json, .xtree, .arcflow); - standard output (one --format, default xtree)", 0 },
	{ "min-pct", OPT_MIN_PCT, "P", 0,
	  "xtree: fold nodes under P% of their thread's samples into [other]", 0 },
	{ "merge-threads", OPT_MERGE_THREADS, NULL, 0, "One tree per process (tid = pid)", 0 },
	{ "format", OPT_FORMAT, "LIST", 0,
	  "Files to write: a comma list of xtree, arcflow, json, folded, pprof, svg "
	  "(default xtree,arcflow,json)", 0 },
	{ "no-inline", OPT_NO_INLINE, NULL, 0,
	  "Fold inline frames into the frames they are inlined into (totals unchanged)", 0 },
	{ "lines", OPT_LINES, NULL, 0, "xtree: file:line of each frame after its name", 0 },
	{ "folded-offsets", OPT_FOLDED_OFFSETS, NULL, 0,
	  "stacks.folded and flamegraph.svg: a frame per call site (function+0xOFF) instead of "
	  "per function", 0 },
	{ "svg-width", OPT_SVG_WIDTH, "PX", 0,
	  "flamegraph.svg: width in pixels (default 1200, 400..100000)", 0 },
	{ "print", 'p', "REPORT", 0,
	  "Print REPORT (arcflow or xtree) on stdout; no files unless -o is given. On a "
	  "terminal lines are cut to its width (…) and coloured", 0 },
	{ "stdio", OPT_STDIO, NULL, 0,
	  "perf report's --stdio: print on stdout (--print xtree, or --sort's table)", 0 },
	{ "sort", OPT_SORT, "sym", 0,
	  "perf report's --sort sym: print the functions with their self and total shares, "
	  "all threads together, by self (comm and dso are accepted: the module is shown)", 0 },
	{ "children", OPT_CHILDREN, NULL, 0, "--sort: the functions by total share", 0 },
	{ "no-children", OPT_NO_CHILDREN, NULL, 0, "--sort: the functions by self share (the default)", 0 },
	{ "wide", OPT_WIDE, NULL, 0, "--print: full lines, never cut to the terminal's width", 0 },
	{ "no-color", OPT_NO_COLOR, NULL, 0,
	  "--print: no colour on a terminal (as NO_COLOR=1 in the environment)", 0 },
	{ 0 }
};

/* perf report's and py-spy's options that are not report's. */
static const struct st_hint report_hints[] = {
	{ "pid", "stacktree reads saved profiles: `stacktreed --pid PID' profiles a process" },
	{ "percent-limit", "--min-pct P: xtree nodes under P% of their thread folded into [other]" },
	{ "tui", "--print xtree on a terminal (cut to its width, coloured), or --format svg "
		 "for a browser" },
	{ "gtk", "--format svg: an interactive flame graph for a browser" },
	{ "call-graph", "the xtree is the call graph (--print xtree); callers and callees: "
			"--print arcflow" },
	{ NULL, NULL },
};

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct report_args *a = state->input;
	char *end;

	switch (key) {
	case 'f':
		a->folded = arg;
		return 0;
	case 'i':
		a->input = arg;
		return 0;
	case 'o':
		a->output = arg;
		return 0;
	case 'p':
		if (arg[0] >= '0' && arg[0] <= '9' && strspn(arg, "0123456789") == strlen(arg))
			argp_failure(state, EXIT_USAGE, 0,
				     "-p is --print here (arcflow or xtree), not a process: "
				     "`stacktreed --pid %s' profiles process %s, stacktree reads what "
				     "it saved", arg, arg);
		if (strcmp(arg, "arcflow") && strcmp(arg, "xtree"))
			argp_failure(state, EXIT_USAGE, 0,
				     "--print: '%s' is not a report (arcflow or xtree)", arg);
		a->print = arg;
		return 0;
	case OPT_MIN_PCT:
		errno = 0;
		a->min_pct = strtod(arg, &end);
		if (errno || end == arg || *end || a->min_pct < 0 || a->min_pct > 100)
			argp_failure(state, EXIT_USAGE, 0,
				     "--min-pct: '%s' is not a percentage in 0..100", arg);
		return 0;
	case OPT_MERGE_THREADS:
		a->merge_threads = true;
		return 0;
	case OPT_NO_INLINE:
		a->no_inline = true;
		return 0;
	case OPT_LINES:
		a->lines = true;
		return 0;
	case OPT_FOLDED_OFFSETS:
		a->folded_offsets = true;
		return 0;
	case OPT_WIDE:
		a->wide = true;
		return 0;
	case OPT_STDIO:
		a->stdio = true;
		return 0;
	case OPT_SORT: {
		char list[128], *save = NULL;

		snprintf(list, sizeof(list), "%s", arg);
		for (char *k = strtok_r(list, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
			if (!strcmp(k, "sym") || !strcmp(k, "symbol"))
				a->sort_sym = true;
			else if (strcmp(k, "comm") && strcmp(k, "dso"))
				argp_failure(state, EXIT_USAGE, 0,
					     "--sort: '%s' is not a key here: sym (functions, their "
					     "module shown); by thread: --print xtree", k);
		}
		if (!a->sort_sym)
			argp_failure(state, EXIT_USAGE, 0,
				     "--sort %s: the table is by function: give sym", arg);
		return 0;
	}
	case OPT_CHILDREN:
		a->children = true;
		return 0;
	case OPT_NO_CHILDREN:
		a->children = false;
		return 0;
	case OPT_NO_COLOR:
		a->no_color = true;
		return 0;
	case OPT_SVG_WIDTH:
		a->svg_width = svg_width(state, arg);
		return 0;
	case OPT_FORMAT: {
		char err[256];

		if (st_report__parse_formats(arg, &a->formats, err, sizeof(err)))
			argp_failure(state, EXIT_USAGE, 0, "%s", err);
		return 0;
	}
	case ARGP_KEY_ARG:
		argp_failure(state, EXIT_USAGE, 0, "unexpected argument '%s'", arg);
		return 0;
	case ARGP_KEY_END:
		if (!a->folded == !a->input)
			argp_failure(state, EXIT_USAGE, 0,
				     "give exactly one of --folded FILE or --input FILE");
		if (a->sort_sym && a->print)
			argp_failure(state, EXIT_USAGE, 0,
				     "--sort prints the function table, --print a report: give one");
		if (a->stdio && !a->print && !a->sort_sym)
			a->print = "xtree";	/* perf report --stdio: the report on stdout */
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static int load(const struct report_args *a, struct st_profile **p)
{
	char err[1024] = "", *path = NULL;
	struct stat st;
	int ret;

	if (a->folded) {
		ret = st_folded__read_path(a->folded, p, err, sizeof(err));
	} else {
		/* --input DIR means DIR/profile.json */
		if (stat(a->input, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (asprintf(&path, "%s/profile.json", a->input) < 0) {
				snprintf(err, sizeof(err), "out of memory");
				ret = -ENOMEM;
				goto cleanup;
			}
		}
		ret = st_profile__read_json(path ? path : a->input, p, err, sizeof(err));
	}
cleanup:
	if (ret) {	/* the reason may quote the input: escaped (common/textesc.h) */
		fputs("stacktree: ", stderr);
		st_textesc__put(stderr, err[0] ? err : strerror(-ret));
		fputc('\n', stderr);
	}
	free(path);
	return ret;
}

/* --sort sym: the function table on stdout. */
static int print_functions(const struct report_args *a, const struct st_profile *p)
{
	struct st_functab *ft = st_functab__new(p, 0);
	int err;

	if (!ft) {
		fprintf(stderr, "stacktree: cannot list the functions: out of memory\n");
		return -ENOMEM;
	}
	if (a->children)
		st_functab__by_total(ft);
	printf("# %llu samples, %zu functions, by %s share (self: the leaf; total: on the "
	       "stack)\n", (unsigned long long)ft->samples, ft->n, a->children ? "total" : "self");
	err = st_functab__write(ft, stdout, 0);
	if (!err && fflush(stdout))
		err = -EIO;
	if (err)
		fprintf(stderr, "stacktree: cannot print the functions: %s\n", strerror(-err));
	st_functab__free(ft);
	return err;
}

static int print_report(const struct report_args *a, const struct st_profile *p)
{
	struct st_profile *merged = NULL;
	struct st_arcflow *af = NULL;
	struct st_term_opts to;
	FILE *term = NULL, *out;
	int err;

	/* a terminal: cut to its width, coloured; anything else: the report as is */
	st_term__detect(STDOUT_FILENO, a->wide, a->no_color, &to);
	if ((to.width || to.colour) && !(term = st_term__open(stdout, &to))) {
		err = -ENOMEM;
		goto cleanup;
	}
	out = term ? term : stdout;

	if (a->merge_threads) {
		merged = st_profile__merge_threads(p);
		if (!merged) {
			err = -ENOMEM;
			goto cleanup;
		}
		p = merged;
	}
	if (!strcmp(a->print, "xtree")) {
		err = st_xtree__write_lines(p, out, a->min_pct, a->lines);
	} else {
		af = st_arcflow__build(p);
		err = af ? st_arcflow__write_text(af, p, out) : -errno;
	}
	if (term && fclose(term) && !err)
		err = -EIO;
	term = NULL;
	if (!err && fflush(stdout))
		err = -EIO;
cleanup:
	if (term)
		fclose(term);
	if (err)
		fprintf(stderr, "stacktree: cannot print %s: %s\n", a->print, strerror(-err));
	st_arcflow__free(af);
	st_profile__free(merged);
	return err;
}

static int cmd_report(int argc, char **argv)
{
	static const struct argp argp = { report_options, report_parse, NULL, report_doc,
					  NULL, NULL, NULL };
	struct sigaction sa = { .sa_handler = on_signal };
	struct report_args a = { 0 };
	struct st_profile *p = NULL;
	struct st_outdir *out = NULL;
	struct st_report_opts opts;
	char name[] = "stacktree report", files[256], why[512], *file = NULL;
	enum st_output_kind kind = ST_OUTPUT_DIR;
	unsigned ext = 0;
	int ret = 1, err;

	argv[0] = name;		/* messages and usage say "stacktree report" */
	if (st_hints__check(name, report_options, report_hints, argc, argv))
		return EXIT_USAGE;
	argp_parse(&argp, argc, argv, 0, NULL, &a);
	if (a.output)
		kind = st_report__output_kind(a.output, &ext);
	if (kind == ST_OUTPUT_STDOUT && (a.print || a.sort_sym)) {
		fprintf(stderr, "stacktree report: --print and -o - both write standard output: "
			"give one\n");
		return EXIT_USAGE;
	}
	if (st_report__output_formats(a.output, kind, ext, &a.formats, why, sizeof(why))) {
		fprintf(stderr, "stacktree report: %s\n", why);
		return EXIT_USAGE;
	}
	if ((!(a.print || a.sort_sym) || a.output) && kind != ST_OUTPUT_STDOUT) {
		if (!a.output)
			a.output = "./stacktree.out";
		/* before the input is read: a bad -o fails at once */
		if (kind == ST_OUTPUT_FILE ? st_report__open_file_dir(a.output, 0, &out, &file)
					   : st_outdir__open(a.output, &out))
			goto cleanup;
		st_outdir__set_abort(out, &signal_flags, SIG_ABORT);
	}
	if (load(&a, &p))
		goto cleanup;
	if (a.no_inline && st_profile__drop_inline(p)) {
		fprintf(stderr, "stacktree: cannot fold the inline frames: out of memory\n");
		goto cleanup;
	}
	if (a.print && print_report(&a, p))
		goto cleanup;
	if (a.sort_sym && print_functions(&a, p))
		goto cleanup;
	if (out || kind == ST_OUTPUT_STDOUT) {
		opts = (struct st_report_opts){ .min_pct = a.min_pct,
						.merge_threads = a.merge_threads,
						.prefix = "", .formats = a.formats,
						.lines = a.lines,
						.folded_offsets = a.folded_offsets,
						.svg_width = a.svg_width };
		/* single-threaded, no other writer of signal_flags until here */
		signal_flags = SIG_WRITING;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		if (kind == ST_OUTPUT_STDOUT) {
			err = st_report__write_stream(p, stdout, a.formats, &opts);
			if ((fflush(stdout) || ferror(stdout)) && !err) {
				err = -(errno ? errno : EIO);
				fprintf(stderr, "stacktree report: cannot write standard output: "
					"%s\n", strerror(-err));
			}
			if (err)
				goto cleanup;
			ret = 0;
			goto cleanup;
		}
		err = file ? st_report__write_file(p, out, file, a.formats, &opts)
			   : st_report__write(p, out, &opts);
		if (err == -ECANCELED) {
			fprintf(stderr, "stacktree: interrupted: not all reports written, no "
				"temporary file left in %s\n", a.output);
			ret = 130;
		}
		if (err)
			goto cleanup;
		fprintf(stderr, "stacktree: %s%s%s (%llu samples)\n", a.output, file ? "" : ": ",
			file ? "" : st_report__files(a.formats, files, sizeof(files)),
			(unsigned long long)p->samples);
	}
	ret = 0;
cleanup:
	st_outdir__free(out);
	free(file);
	st_profile__free(p);
	return ret;
}

struct diff_args {
	const char *in[2];	/* A (the baseline) and B */
	const char *output;	/* FILE or "-" (default) */
	const char *format;	/* text, folded or svg; NULL: by -o's extension */
	double threshold;
	unsigned svg_width;
};

static const char diff_doc[] =
	"Compare profile B with profile A (the baseline): the functions and call paths\n"
	"whose share of the samples moved, as perf diff and go tool pprof -diff_base\n"
	"do. A and B: profile.json files (or directories holding one), pprof files\n"
	"(profile.pb.gz, .pprof) or folded stacks.\v"
	"Shares are of each profile's own samples, so runs of different lengths compare;\n"
	"a delta is B's share less A's, in points of %.\n\n"
	"Formats: text (the default: functions by change, then the call tree with\n"
	"deltas), folded (FlameGraph's difffolded.pl lines \"stack A B\", A scaled to B's\n"
	"samples: flamegraph.pl draws them), svg (a differential flame graph sized by B,\n"
	"red where the share grew, blue where it shrank). -o FILE takes the format of\n"
	"its extension (.svg, .folded; anything else text) unless --format is given.\n\n"
	"Examples:\n"
	"  stacktree diff before/profile.json after/profile.json\n"
	"  stacktree diff before after -o diff.svg\n"
	"  stacktree diff --threshold 2 a.folded b.folded --format folded | flamegraph.pl";

static const struct argp_option diff_options[] = {
	{ "output", 'o', "FILE|-", 0, "Write into FILE (default -: standard output)", 0 },
	{ "format", OPT_FORMAT, "FMT", 0, "text, folded or svg (default text, or -o's extension)", 0 },
	{ "threshold", OPT_THRESHOLD, "P", 0,
	  "text: leave out changes under P points of % (default 0.5)", 0 },
	{ "svg-width", OPT_SVG_WIDTH, "PX", 0, "svg: width in pixels (default 1200, 400..100000)", 0 },
	{ 0 }
};

static error_t diff_parse(int key, char *arg, struct argp_state *state)
{
	struct diff_args *a = state->input;
	char *end;

	switch (key) {
	case 'o':
		a->output = arg;
		return 0;
	case OPT_FORMAT:
		if (strcmp(arg, "text") && strcmp(arg, "folded") && strcmp(arg, "svg"))
			argp_failure(state, EXIT_USAGE, 0,
				     "--format: '%s' is not a diff format (text, folded or svg)", arg);
		a->format = arg;
		return 0;
	case OPT_THRESHOLD:
		errno = 0;
		a->threshold = strtod(arg, &end);
		if (errno || end == arg || *end || !(a->threshold >= 0 && a->threshold <= 100))
			argp_failure(state, EXIT_USAGE, 0,
				     "--threshold: '%s' is not points of %% in 0..100", arg);
		return 0;
	case OPT_SVG_WIDTH:
		a->svg_width = svg_width(state, arg);
		return 0;
	case ARGP_KEY_ARG:
		if (state->arg_num >= 2)
			argp_failure(state, EXIT_USAGE, 0,
				     "unexpected argument '%s': give two profiles, A and B", arg);
		a->in[state->arg_num] = arg;
		return 0;
	case ARGP_KEY_END:
		if (state->arg_num != 2)
			argp_failure(state, EXIT_USAGE, 0,
				     "give two profiles, A (the baseline) and B");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* A profile.json (or a directory holding one), a pprof file (gzip's magic,
 * or .pprof/.pb) or folded stacks, told apart by their first bytes: '{'
 * (after blanks) for JSON. */
static int load_any(const char *path, struct st_profile **p)
{
	struct report_args r = { 0 };
	unsigned char head[2] = { 0, 0 };
	struct stat st;
	size_t nhead = 0;
	int c = EOF;
	FILE *f;

	if (strcmp(path, "-") && stat(path, &st) == 0 && !S_ISDIR(st.st_mode) &&
	    (f = fopen(path, "r"))) {
		nhead = fread(head, 1, sizeof(head), f);
		rewind(f);
		do
			c = getc(f);
		while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
		fclose(f);
		if (st_pprof__looks_like(head, nhead, path)) {
			char err[1024] = "";
			int ret = st_pprof__read_path(path, p, err, sizeof(err));

			if (ret) {
				fputs("stacktree: ", stderr);
				st_textesc__put(stderr, err[0] ? err : strerror(-ret));
				fputc('\n', stderr);
			}
			return ret;
		}
	}
	if (!strcmp(path, "-") || (stat(path, &st) == 0 && !S_ISDIR(st.st_mode) && c != '{'))
		r.folded = path;
	else
		r.input = path;
	return load(&r, p);
}

static int write_diff(const struct diff_args *a, const struct st_diff *d, FILE *f)
{
	struct st_diff_out_opts o = { .name_a = a->in[0], .name_b = a->in[1],
				      .threshold = a->threshold, .svg_width = a->svg_width };

	if (!strcmp(a->format, "svg"))
		return st_diff__write_svg(d, f, &o);
	if (!strcmp(a->format, "folded"))
		return st_diff__write_folded(d, f);
	return st_diff__write_text(d, f, &o);
}

static int cmd_diff(int argc, char **argv)
{
	static const struct argp argp = { diff_options, diff_parse, "A B", diff_doc,
					  NULL, NULL, NULL };
	struct diff_args a = { .output = "-", .threshold = 0.5 };
	struct st_profile *p[2] = { NULL, NULL };
	struct st_outdir *dir = NULL;
	struct st_outfile *of = NULL;
	struct st_diff *d = NULL;
	char name[] = "stacktree diff", *file = NULL;
	bool to_stdout;
	int ret = 1, err;
	FILE *f;

	argv[0] = name;
	if (st_hints__check(name, diff_options, NULL, argc, argv))
		return EXIT_USAGE;
	argp_parse(&argp, argc, argv, 0, NULL, &a);
	to_stdout = !strcmp(a.output, "-");
	if (!a.format) {
		size_t n = strlen(a.output);

		a.format = n > 4 && !strcmp(a.output + n - 4, ".svg")	    ? "svg"
			   : n > 7 && !strcmp(a.output + n - 7, ".folded") ? "folded"
									    : "text";
	}
	/* before the inputs are read: a bad -o fails at once */
	if (!to_stdout && st_report__open_file_dir(a.output, 0, &dir, &file))
		goto cleanup;
	if (load_any(a.in[0], &p[0]) || load_any(a.in[1], &p[1]))
		goto cleanup;
	if (!(d = st_diff__new(p[0], p[1]))) {
		fprintf(stderr, "stacktree diff: cannot compare %s and %s: out of memory\n",
			a.in[0], a.in[1]);
		goto cleanup;
	}
	if (to_stdout) {
		err = write_diff(&a, d, stdout);
		if (!err && (fflush(stdout) || ferror(stdout)))
			err = -EIO;
		if (err)
			fprintf(stderr, "stacktree diff: cannot write standard output: %s\n",
				strerror(-err));
	} else {
		err = st_outfile__begin(dir, file, &of, &f);
		if (!err)
			err = st_outfile__end(of, write_diff(&a, d, f));
		if (!err)
			fprintf(stderr, "stacktree diff: %s (%s; A %llu samples, B %llu)\n",
				a.output, a.format,
				(unsigned long long)st_diff__samples(d, ST_DIFF_A),
				(unsigned long long)st_diff__samples(d, ST_DIFF_B));
	}
	if (!err)
		ret = 0;
cleanup:
	st_diff__free(d);
	st_profile__free(p[0]);
	st_profile__free(p[1]);
	st_outdir__free(dir);
	free(file);
	return ret;
}

/* A command stacktree does not have: what perf's and py-spy's names are
 * here, else the nearest command. */
static int unknown_command(const char *cmd)
{
	static const struct { const char *cmd, *hint; } hints[] = {
		{ "script", "perf script's stacks: `stacktree report --input DIR --format folded "
			    "-o -' (one line per stack)" },
		{ "annotate", "per call site: `stacktree report --input DIR --print xtree --lines'" },
		{ "record", "`stacktreed -- CMD' or `stacktreed --pid PID' records" },
		{ "top", "`stacktreed top --pid PID' (live)" },
		{ "dump", "`stacktreed dump --pid PID'" },
	};
	static const char *const commands[] = { "report", "diff" };
	const char *near;

	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (!strcmp(cmd, hints[i].cmd)) {
			fprintf(stderr, "stacktree: no command '%s': %s\n", cmd, hints[i].hint);
			return EXIT_USAGE;
		}
	near = st_hints__nearest(cmd, commands, 2);
	fprintf(stderr, "stacktree: unknown command '%s'%s%s%s (commands: report, diff)\n", cmd,
		near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { top_options, top_parse, "COMMAND [ARG...]", top_doc,
					  NULL, NULL, NULL };
	struct top_args a = { 0 };

	if (argc > 1 && !strcmp(argv[1], "-h")) {
		static char help[] = "--help";

		argv[1] = help;
	}
	argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &a);
	if (a.version) {
		printf("stacktree %s\n", ST_VERSION);
		return 0;
	}
	if (!strcmp(a.argv[0], "report"))
		return cmd_report(a.argc, a.argv);
	if (!strcmp(a.argv[0], "diff"))
		return cmd_diff(a.argc, a.argv);
	return unknown_command(a.argv[0]);
}

/* report.h - write the report files of a profile into a directory.
 * Owner: user/output/report.c. Used by stacktreed and `stacktree report`. */
#ifndef STACKTREE_REPORT_H
#define STACKTREE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct st_outdir;
struct st_profile;

/* Report formats (--format), a bitmask. */
enum st_format {
	ST_FORMAT_XTREE = 1u << 0,	/* xtree.txt */
	ST_FORMAT_ARCFLOW = 1u << 1,	/* arcflow.txt */
	ST_FORMAT_JSON = 1u << 2,	/* profile.json */
	ST_FORMAT_FOLDED = 1u << 3,	/* stacks.folded (user/output/out_folded.c) */
	ST_FORMAT_PPROF = 1u << 4,	/* profile.pb.gz (user/output/pprof.c) */
	ST_FORMAT_SVG = 1u << 5,	/* flamegraph.svg, flamegraph-PID.svg (user/output/flamegraph.c) */
};
#define ST_FORMATS_DEFAULT (ST_FORMAT_XTREE | ST_FORMAT_ARCFLOW | ST_FORMAT_JSON)

struct st_report_opts {
	double min_pct;		/* xtree: prune nodes under this % of the thread's samples */
	bool merge_threads;	/* one tree per process */
	const char *prefix;	/* file name prefix ("" or "faults.") */
	unsigned formats;	/* enum st_format bits; 0 = ST_FORMATS_DEFAULT */
	bool lines;		/* xtree: file:line after each frame that has one (--lines) */
	bool folded_offsets;	/* folded, svg: call sites as frames (--folded-offsets) */
	unsigned svg_width;	/* svg: px (--svg-width); 0: ST_FLAMEGRAPH_WIDTH */
};

/* Parse a --format list ("xtree,pprof,svg"). 0, or -EINVAL with one line
 * naming the bad entry in err. */
int st_report__parse_formats(const char *list, unsigned *formats, char *err, size_t errlen);
/* The file names of formats ("xtree.txt, profile.pb.gz, ...") for messages. */
const char *st_report__files(unsigned formats, char *buf, size_t len);

/* Writes the files of opts->formats (default xtree.txt, arcflow.txt,
 * profile.json) into dir, each atomically (st_outfile__begin/__end: a new
 * temporary file renamed into place). svg: flamegraph.svg (all processes)
 * and, when there are several processes, flamegraph-PID.svg for each.
 * Returns 0 or negative errno, with one line on stderr saying what failed
 * (none for -ECANCELED, an abort). */
int st_report__write(const struct st_profile *p, struct st_outdir *dir,
		     const struct st_report_opts *opts);
/* The same into the path dir, opened (and created) by st_outdir__open. */
int st_report__write_dir(const struct st_profile *p, const char *dir,
			 const struct st_report_opts *opts);

/* What -o PATH names. */
enum st_output_kind {
	ST_OUTPUT_DIR,		/* a directory of report files */
	ST_OUTPUT_FILE,		/* one file, of the format its name's extension says */
	ST_OUTPUT_STDOUT,	/* "-": one format on standard output */
};
/*
 * "-": standard output. A name with a known extension is a file of that
 * format (*format, one ST_FORMAT_* bit): .svg, .pb.gz and .pprof, .folded,
 * .json, .xtree (and .xtree.txt, xtree.txt), .arcflow (.arcflow.txt,
 * arcflow.txt), .txt folded stacks (py-spy's raw format's name). Anything
 * else, a path ending in '/' or an existing directory, is a directory.
 */
enum st_output_kind st_report__output_kind(const char *path, unsigned *format);
/*
 * -o FILE: open its directory (st_outdir__open_mode with mode: created if
 * missing, probed, trusted as root) as *dir, its name in *name (free it).
 * 0 or negative errno, one line on stderr.
 */
int st_report__open_file_dir(const char *path, mode_t mode, struct st_outdir **dir,
			     char **name);
/*
 * Check -o PATH of kind (st_report__output_kind) against --format's
 * formats (0: not given) and settle them: a file's its extension's, "-"
 * the one given (default xtree). 0, or -EINVAL with the reason in err.
 */
int st_report__output_formats(const char *path, enum st_output_kind kind, unsigned ext,
			      unsigned *formats, char *err, size_t errlen);
/* --format's name of one format bit ("svg"). */
const char *st_report__format_name(unsigned format);
/* One format (one ST_FORMAT_* bit) of p into f (svg: all processes in
 * one graph); --merge-threads applied. 0 or negative errno. */
int st_report__write_stream(const struct st_profile *p, FILE *f, unsigned format,
			    const struct st_report_opts *opts);
/* The same as the file name in dir, atomically (st_outfile__begin/__end:
 * a new temporary file of the directory's mode renamed over name, which is
 * replaced, never followed when a link). */
int st_report__write_file(const struct st_profile *p, struct st_outdir *dir, const char *name,
			  unsigned format, const struct st_report_opts *opts);

/* xtree.txt of a finalized profile. */
int st_xtree__write(const struct st_profile *p, FILE *out, double min_pct);
/* The same, with each frame's source position ("file:line", the file's
 * base name) when lines is set. */
int st_xtree__write_lines(const struct st_profile *p, FILE *out, double min_pct, bool lines);

/* The header block shared by text reports ("# key: value" lines). */
void st_report__header(const struct st_profile *p, FILE *out, const char *title);

#endif

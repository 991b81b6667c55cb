/* report.c - write a profile's report files into a directory, atomically. */
#include "user/output/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "user/output/arcflow.h"
#include "user/output/flamegraph.h"
#include "user/output/outdir.h"
#include "user/output/out_folded.h"
#include "user/output/pprof.h"
#include "user/model/profile.h"
#include "user/output/json.h"

static const struct {
	const char *name, *file;
	unsigned bit;
} formats[] = {
	{ "xtree", "xtree.txt", ST_FORMAT_XTREE },
	{ "arcflow", "arcflow.txt", ST_FORMAT_ARCFLOW },
	{ "json", "profile.json", ST_FORMAT_JSON },
	{ "folded", "stacks.folded", ST_FORMAT_FOLDED },
	{ "pprof", "profile.pb.gz", ST_FORMAT_PPROF },
	{ "svg", "flamegraph.svg", ST_FORMAT_SVG },
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

int st_report__parse_formats(const char *list, unsigned *out, char *err, size_t errlen)
{
	const char *s = list;

	*out = 0;
	while (*s) {
		size_t len = strcspn(s, ","), i;

		for (i = 0; i < NFORMATS; i++)
			if (strlen(formats[i].name) == len && !strncmp(s, formats[i].name, len))
				break;
		if (i == NFORMATS) {
			snprintf(err, errlen, "--format: unknown format '%.*s' (give a comma list of "
				 "xtree, arcflow, json, folded, pprof, svg)", (int)len, s);
			return -EINVAL;
		}
		*out |= formats[i].bit;
		s += len + (s[len] == ',');
	}
	if (!*out) {
		snprintf(err, errlen, "--format: empty list (give e.g. xtree,arcflow,json,svg)");
		return -EINVAL;
	}
	return 0;
}

const char *st_report__files(unsigned fm, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NFORMATS && n < len; i++)
		if ((fm ? fm : ST_FORMATS_DEFAULT) & formats[i].bit)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", formats[i].file);
	return buf;
}

/* Write format kind of p into f (af: the arcflow, built for it). pid: svg
 * of one process, or -1. */
static int write_to(const struct st_profile *p, FILE *f, unsigned kind,
		    const struct st_report_opts *o, long pid, const struct st_arcflow *af)
{
	switch (kind) {
	case ST_FORMAT_XTREE:
		return st_xtree__write_lines(p, f, o->min_pct, o->lines);
	case ST_FORMAT_ARCFLOW:
		return st_arcflow__write_text(af, p, f);
	case ST_FORMAT_FOLDED:
		return st_folded__write(p, f, o->folded_offsets);
	case ST_FORMAT_PPROF:
		return st_pprof__write(p, f);
	case ST_FORMAT_SVG:
		return st_flamegraph__write(p, f, pid,
					    &(struct st_flamegraph_opts){ .width = o->svg_width,
									  .offsets = o->folded_offsets });
	default:
		return st_profile__write_json(p, f, true);
	}
}

static struct st_arcflow *arcflow_for(const struct st_profile *p, unsigned kind, int *err)
{
	struct st_arcflow *af = NULL;

	*err = 0;
	if (kind == ST_FORMAT_ARCFLOW && !(af = st_arcflow__build(p))) {
		fprintf(stderr, "%s: cannot build arcflow: out of memory\n",
			program_invocation_short_name);
		*err = -ENOMEM;
	}
	return af;
}

/* kind: one ST_FORMAT_* bit; pid: svg of one process, or -1 */
static int write_one(const struct st_profile *p, struct st_outdir *d, const char *prefix,
		     const char *name, unsigned kind, const struct st_report_opts *o, long pid)
{
	struct st_arcflow *af;
	struct st_outfile *of;
	char file[512];
	FILE *f;
	int err;

	/* built before the temporary file exists: a second Ctrl-C meanwhile exits at once */
	af = arcflow_for(p, kind, &err);
	if (err)
		return err;
	snprintf(file, sizeof(file), "%s%s", prefix, name);
	if ((err = st_outfile__begin(d, file, &of, &f)))
		goto cleanup;
	err = st_outfile__end(of, write_to(p, f, kind, o, pid, af));
cleanup:
	st_arcflow__free(af);
	return err;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* flamegraph.svg of everything, and flamegraph-PID.svg per process when
 * there are several processes. */
static int write_svgs(const struct st_profile *p, struct st_outdir *dir, const char *prefix,
		      const struct st_report_opts *o)
{
	__u32 *pids = calloc(p->nthreads + 1, sizeof(*pids));
	size_t n = 0;
	int err;

	if (!pids) {
		fprintf(stderr, "stacktree: out of memory writing flame graphs\n");
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nthreads; i++)
		pids[i] = p->threads[i]->pid;
	qsort(pids, p->nthreads, sizeof(*pids), cmp_u32);
	for (size_t i = 0; i < p->nthreads; i++)
		if (!i || pids[i] != pids[n - 1])
			pids[n++] = pids[i];
	err = write_one(p, dir, prefix, "flamegraph.svg", ST_FORMAT_SVG, o, -1);
	for (size_t i = 0; !err && n > 1 && i < n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "flamegraph-%u.svg", pids[i]);
		err = write_one(p, dir, prefix, name, ST_FORMAT_SVG, o, pids[i]);
	}
	free(pids);
	return err;
}

/* p, or its threads merged into one tree per process (*merged, to free). */
static const struct st_profile *merged_for(const struct st_profile *p,
					   const struct st_report_opts *o,
					   struct st_profile **merged)
{
	*merged = NULL;
	if (!o->merge_threads)
		return p;
	if (!(*merged = st_profile__merge_threads(p)))
		fprintf(stderr, "stacktree: out of memory merging threads\n");
	return *merged;
}

int st_report__write(const struct st_profile *p, struct st_outdir *dir,
		     const struct st_report_opts *opts)
{
	static const struct st_report_opts defaults = { .prefix = "" };
	const struct st_report_opts *o = opts ? opts : &defaults;
	const char *prefix = o->prefix ? o->prefix : "";
	struct st_profile *merged = NULL;
	int err = 0;

	if (!(p = merged_for(p, o, &merged)))
		return -ENOMEM;
	for (size_t i = 0; !err && i < NFORMATS; i++) {
		if (!((o->formats ? o->formats : ST_FORMATS_DEFAULT) & formats[i].bit))
			continue;
		if (formats[i].bit == ST_FORMAT_SVG)
			err = write_svgs(p, dir, prefix, o);
		else
			err = write_one(p, dir, prefix, formats[i].file, formats[i].bit, o, -1);
	}
	st_profile__free(merged);
	return err;
}

/* Whether name ends with suffix. */
static bool ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n > k && !strcmp(name + n - k, suffix);
}

enum st_output_kind st_report__output_kind(const char *path, unsigned *format)
{
	/* the first suffix that matches: ".xtree.txt" before ".txt" */
	static const struct {
		const char *suffix;
		unsigned bit;
	} exts[] = {
		{ ".pb.gz", ST_FORMAT_PPROF }, { ".pprof", ST_FORMAT_PPROF },
		{ ".svg", ST_FORMAT_SVG }, { ".folded", ST_FORMAT_FOLDED },
		{ ".json", ST_FORMAT_JSON }, { ".xtree", ST_FORMAT_XTREE },
		{ ".arcflow", ST_FORMAT_ARCFLOW }, { ".xtree.txt", ST_FORMAT_XTREE },
		{ ".arcflow.txt", ST_FORMAT_ARCFLOW }, { ".txt", ST_FORMAT_FOLDED },
	};
	const char *base = strrchr(path, '/');
	struct stat st;

	*format = 0;
	if (!strcmp(path, "-"))
		return ST_OUTPUT_STDOUT;
	base = base ? base + 1 : path;
	/* "dir/", an existing directory (a symlink to one: outdir refuses it) */
	if (!*base || (!stat(path, &st) && S_ISDIR(st.st_mode)))
		return ST_OUTPUT_DIR;
	if (!strcmp(base, "xtree.txt") || !strcmp(base, "arcflow.txt")) {
		*format = *base == 'x' ? ST_FORMAT_XTREE : ST_FORMAT_ARCFLOW;
		return ST_OUTPUT_FILE;
	}
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		if (ends(base, exts[i].suffix)) {
			*format = exts[i].bit;
			return ST_OUTPUT_FILE;
		}
	return ST_OUTPUT_DIR;
}

int st_report__open_file_dir(const char *path, mode_t mode, struct st_outdir **dir,
			     char **name)
{
	const char *slash = strrchr(path, '/');
	char *d = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
	int err;

	*dir = NULL;
	*name = strdup(slash ? slash + 1 : path);
	if (!d || !*name) {
		free(d);
		free(*name);
		*name = NULL;
		fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
		return -ENOMEM;
	}
	err = st_outdir__open_mode(d, mode, dir);
	free(d);
	if (err) {
		free(*name);
		*name = NULL;
	}
	return err;
}

int st_report__output_formats(const char *path, enum st_output_kind kind, unsigned ext,
			      unsigned *formats, char *err, size_t errlen)
{
	unsigned fm = *formats;

	if (kind == ST_OUTPUT_DIR)
		return 0;
	if (kind == ST_OUTPUT_STDOUT) {
		fm = fm ? fm : ST_FORMAT_XTREE;
		if (fm & (fm - 1)) {
			snprintf(err, errlen, "-o - writes one format: give --format with one of "
				 "xtree, arcflow, json, folded, pprof, svg");
			return -EINVAL;
		}
	} else if (fm && fm != ext) {
		snprintf(err, errlen, "-o %s is a %s file by its name: drop --format, or give -o "
			 "a directory for several formats", path, st_report__format_name(ext));
		return -EINVAL;
	} else {
		fm = ext;
	}
	*formats = fm;
	return 0;
}

const char *st_report__format_name(unsigned format)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (formats[i].bit == format)
			return formats[i].name;
	return "?";
}

int st_report__write_stream(const struct st_profile *p, FILE *f, unsigned format,
			    const struct st_report_opts *o)
{
	struct st_profile *merged;
	struct st_arcflow *af = NULL;
	int err = 0;

	if (!(p = merged_for(p, o, &merged)))
		return -ENOMEM;
	af = arcflow_for(p, format, &err);
	if (!err)
		err = write_to(p, f, format, o, -1, af);
	st_arcflow__free(af);
	st_profile__free(merged);
	return err;
}

int st_report__write_file(const struct st_profile *p, struct st_outdir *dir, const char *name,
			  unsigned format, const struct st_report_opts *o)
{
	struct st_profile *merged;
	int err;

	if (!(p = merged_for(p, o, &merged)))
		return -ENOMEM;
	err = write_one(p, dir, "", name, format, o, -1);
	st_profile__free(merged);
	return err;
}

int st_report__write_dir(const struct st_profile *p, const char *dir,
			 const struct st_report_opts *opts)
{
	struct st_outdir *d;
	int err = st_outdir__open(dir, &d);

	if (!err)
		err = st_report__write(p, d, opts);
	st_outdir__free(d);
	return err;
}

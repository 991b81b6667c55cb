/* report.h - write the report files of a profile into a directory.
 * Owner: user/report.c. Used by stacktreed and `stacktree report`. */
#ifndef STACKTREE_REPORT_H
#define STACKTREE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

struct st_profile;

struct st_report_opts {
	double min_pct;		/* xtree: prune nodes under this % of the thread's samples */
	bool merge_threads;	/* one tree per process */
	const char *prefix;	/* file name prefix ("" or "faults.") */
};

/* Creates dir if needed; writes xtree.txt, arcflow.txt, profile.json
 * atomically (temp file + rename). Returns 0 or negative errno, with one
 * line on stderr saying what failed. */
int st_report__write_dir(const struct st_profile *p, const char *dir,
			 const struct st_report_opts *opts);

/* xtree.txt of a finalized profile. */
int st_xtree__write(const struct st_profile *p, FILE *out, double min_pct);

/* The header block shared by text reports ("# key: value" lines). */
void st_report__header(const struct st_profile *p, FILE *out, const char *title);

#endif

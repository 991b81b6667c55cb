/* report.c - write a profile's report files into a directory, atomically. */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arcflow.h"
#include "profile.h"

static int mkdir_p(const char *dir)
{
	char *tmp = strdup(dir);
	int err = 0;

	if (!tmp)
		return -ENOMEM;
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST) {
			err = -errno;
			goto cleanup;
		}
		*s = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		err = -errno;
cleanup:
	free(tmp);
	return err;
}

enum report_kind { REPORT_XTREE, REPORT_ARCFLOW, REPORT_JSON };

static int write_one(const struct st_profile *p, const char *dir, const char *prefix,
		     const char *name, enum report_kind kind, const struct st_report_opts *o)
{
	char path[4096], tmp[4200];
	struct st_arcflow *af = NULL;
	FILE *f = NULL;
	int err;

	snprintf(path, sizeof(path), "%s/%s%s", dir, prefix, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s%s.tmp", dir, prefix, name);
	f = fopen(tmp, "w");
	if (!f) {
		err = -errno;
		fprintf(stderr, "stacktree: cannot write %s: %s\n", tmp, strerror(errno));
		return err;
	}
	switch (kind) {
	case REPORT_XTREE:
		err = st_xtree__write(p, f, o->min_pct);
		break;
	case REPORT_ARCFLOW:
		af = st_arcflow__build(p);
		err = af ? st_arcflow__write_text(af, p, f) : -ENOMEM;
		break;
	default:
		err = st_profile__write_json(p, f, true);
		break;
	}
	if (fclose(f) && !err)
		err = -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		fprintf(stderr, "stacktree: cannot write %s: %s\n", path, strerror(-err));
		unlink(tmp);
	}
	st_arcflow__free(af);
	return err;
}

int st_report__write_dir(const struct st_profile *p, const char *dir,
			 const struct st_report_opts *opts)
{
	static const struct st_report_opts defaults = { .prefix = "" };
	const struct st_report_opts *o = opts ? opts : &defaults;
	const char *prefix = o->prefix ? o->prefix : "";
	struct st_profile *merged = NULL;
	int err;

	err = mkdir_p(dir);
	if (err) {
		fprintf(stderr, "stacktree: cannot create output directory %s: %s\n", dir,
			strerror(-err));
		return err;
	}
	if (o->merge_threads) {
		merged = st_profile__merge_threads(p);
		if (!merged) {
			fprintf(stderr, "stacktree: out of memory merging threads\n");
			return -ENOMEM;
		}
		p = merged;
	}
	err = write_one(p, dir, prefix, "xtree.txt", REPORT_XTREE, o);
	if (!err)
		err = write_one(p, dir, prefix, "arcflow.txt", REPORT_ARCFLOW, o);
	if (!err)
		err = write_one(p, dir, prefix, "profile.json", REPORT_JSON, o);
	st_profile__free(merged);
	return err;
}

/* snapshot.c - write, link and prune snapshot directories atomically. */
#include "user/output/snapshot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "user/output/outdir.h"
#include "user/output/report.h"

#define NAME_LEN 24	/* 20261121T234501Z-NNN */

/* 20261121T234501Z or 20261121T234501Z-N */
static bool is_snapshot_name(const char *n)
{
	if (strlen(n) < 16 || n[8] != 'T' || n[15] != 'Z')
		return false;
	for (int i = 0; i < 15; i++)
		if (i != 8 && (n[i] < '0' || n[i] > '9'))
			return false;
	return n[16] == '\0' || n[16] == '-';
}

static int name_cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t lx = strlen(x), ly = strlen(y);

	/* same second: "-10" sorts after "-9" */
	if (strncmp(x, y, 16))
		return strncmp(x, y, 16);
	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

struct names {
	char **v;
	size_t n, cap;
};

static int collect(void *ctx, const char *name)
{
	struct names *ns = ctx;

	if (!is_snapshot_name(name))
		return 0;
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 16;
		char **nv = realloc(ns->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		ns->v = nv;
		ns->cap = cap;
	}
	if (!(ns->v[ns->n] = strdup(name)))
		return -ENOMEM;
	ns->n++;
	return 0;
}

int st_snapshot__prune(struct st_outdir *dir, unsigned keep)
{
	struct names ns = { 0 };
	int removed;

	(void)st_outdir__sweep(dir);	/* what writers killed while writing left */
	removed = st_outdir__list(dir, collect, &ns);

	if (removed)
		goto cleanup;
	qsort(ns.v, ns.n, sizeof(*ns.v), name_cmp);
	for (size_t i = 0; ns.n > keep && i < ns.n - keep; i++)
		if (st_outdir__remove(dir, ns.v[i]) == 0)
			removed++;
cleanup:
	for (size_t i = 0; i < ns.n; i++)
		free(ns.v[i]);
	free(ns.v);
	return removed;
}

int st_snapshot__write(const struct st_profile *const *p, const char *const *prefixes,
		       size_t n, struct st_outdir *dir, const struct st_report_opts *ro,
		       const char *summary, unsigned keep, char *path, size_t len)
{
	char name[NAME_LEN + 8];
	struct st_outdir *tmp = NULL;
	struct timespec now;
	struct tm tm;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(name, sizeof(name), "%Y%m%dT%H%M%SZ", &tm);
	for (int i = 2; st_outdir__exists(dir, name) == 0 && i < 1000; i++) {
		strftime(name, sizeof(name), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "-%d", i);
	}
	snprintf(path, len, "%s/%s", st_outdir__path(dir), name);
	if ((err = st_outdir__mktemp(dir, name, &tmp)))
		return err;
	for (size_t i = 0; i < n; i++) {
		struct st_report_opts o = *ro;

		o.prefix = prefixes[i];
		if ((err = st_report__write(p[i], tmp, &o)))
			goto fail;
	}
	if ((err = st_outdir__write_text(tmp, "summary.txt", summary)))
		goto fail;
	/* frees tmp, removes it on failure */
	if ((err = st_outdir__commit(dir, tmp, name)))
		return err;
	if ((err = st_outdir__symlink(dir, name, "latest")))
		fprintf(stderr, "stacktreed: cannot update %s/latest: %s\n", st_outdir__path(dir),
			strerror(-err));
	st_snapshot__prune(dir, keep);
	return 0;
fail:
	st_outdir__discard(dir, tmp);
	return err;
}

/* snapshot.c - write, link and prune snapshot directories atomically. */
#include "snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

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

static int remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char file[4096];
	int err = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		if (unlink(file) && errno != ENOENT)
			err = -errno;
	}
	closedir(d);
	if (rmdir(path) && !err)
		err = -errno;
	return err;
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

int st_snapshot__prune(const char *dir, unsigned keep)
{
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0;
	struct dirent *e;
	int removed = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!is_snapshot_name(e->d_name))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*nn));

			if (!nn) {
				removed = -ENOMEM;
				goto cleanup;
			}
			names = nn;
		}
		if (!(names[n] = strdup(e->d_name))) {
			removed = -ENOMEM;
			goto cleanup;
		}
		n++;
	}
	qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; n > keep && i < n - keep; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (remove_dir(path) == 0)
			removed++;
	}
cleanup:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return removed;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs(text, f) < 0)
		err = -EIO;
	if (fclose(f) && !err)
		err = -EIO;
	return err;
}

static int point_latest(const char *dir, const char *name)
{
	char tmp[4096], link[4096];

	snprintf(tmp, sizeof(tmp), "%s/.latest.tmp", dir);
	snprintf(link, sizeof(link), "%s/latest", dir);
	unlink(tmp);
	if (symlink(name, tmp) || rename(tmp, link))
		return -errno;
	return 0;
}

int st_snapshot__write(const struct st_profile *const *p, const char *const *prefixes,
		       size_t n, const char *dir, const struct st_report_opts *ro,
		       const char *summary, unsigned keep, char *path, size_t len)
{
	char name[NAME_LEN + 8], tmp[4096], file[4200];
	struct timespec now;
	struct stat st;
	struct tm tm;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(name, sizeof(name), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(path, len, "%s/%s", dir, name);
	for (int i = 2; stat(path, &st) == 0 && i < 1000; i++) {
		strftime(name, sizeof(name), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "-%d", i);
		snprintf(path, len, "%s/%s", dir, name);
	}
	snprintf(tmp, sizeof(tmp), "%s/.tmp-%s", dir, name);
	for (size_t i = 0; i < n; i++) {
		struct st_report_opts o = *ro;

		o.prefix = prefixes[i];
		err = st_report__write_dir(p[i], tmp, &o);
		if (err) {
			remove_dir(tmp);
			return err;
		}
	}
	snprintf(file, sizeof(file), "%s/summary.txt", tmp);
	if ((err = write_text(file, summary))) {
		fprintf(stderr, "stacktreed: cannot write %s: %s\n", file, strerror(-err));
		remove_dir(tmp);
		return err;
	}
	if (rename(tmp, path)) {
		err = -errno;
		fprintf(stderr, "stacktreed: cannot rename %s to %s: %s\n", tmp, path,
			strerror(errno));
		remove_dir(tmp);
		return err;
	}
	if ((err = point_latest(dir, name)))
		fprintf(stderr, "stacktreed: cannot update %s/latest: %s\n", dir, strerror(-err));
	st_snapshot__prune(dir, keep);
	return 0;
}

/* snapshot.h - the service's timestamped snapshot directories.
 * Owner: user/output/snapshot.c. */
#ifndef STACKTREE_SNAPSHOT_H
#define STACKTREE_SNAPSHOT_H

#include <stddef.h>

struct st_outdir;
struct st_profile;
struct st_report_opts;

/*
 * Write the n profiles p (one per event, file names prefixed by prefixes[i])
 * as DIR/<UTC time>/ (e.g. 20261121T234501Z, with -2, -3... when two
 * snapshots fall in the same second): the reports and summary.txt go into a
 * hidden temporary directory (st_outdir__mktemp) renamed into place, then
 * DIR/latest is pointed at it and only the newest `keep` snapshots are
 * kept. The new directory's path goes into path. Returns 0 or negative errno (one line on
 * stderr; none for -ECANCELED, an abort); nothing is left behind on failure.
 */
int st_snapshot__write(const struct st_profile *const *p, const char *const *prefixes,
		       size_t n, struct st_outdir *dir, const struct st_report_opts *ro,
		       const char *summary, unsigned keep, char *path, size_t len);

/* Remove all but the newest `keep` snapshot directories of dir, and the
 * temporaries of writers no longer running (st_outdir__sweep()). Returns how
 * many were removed, or negative errno. */
int st_snapshot__prune(struct st_outdir *dir, unsigned keep);

#endif

/* unwind_cache.h - compiled CFI rows kept on disk, so that the next run of
 * a program (the next cc1 of a build, the second gcc) finds its tables at
 * once. One file per module, named by a hash of the module's key (its build
 * id for root-only files, else its file identity: user/collect/unwind/unwind_modules.c),
 * which the file repeats and is checked against. The directory must be the
 * daemon's own (owner = euid, not group/other-writable, no symlink); a file
 * is taken only if it is regular, ours, of the size its header says, with
 * the right checksum and rows that are sorted and well-formed: anything else
 * is a miss, counted as rejected. Writes go to a random O_EXCL name renamed
 * into place; the oldest files (by modification time, refreshed on every
 * hit) go once the total passes the size bound. Owner: user/collect/unwind/unwind_cache.c. */
#ifndef STACKTREE_UNWIND_CACHE_H
#define STACKTREE_UNWIND_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

struct st_ucache;

struct st_ucache_stats {
	size_t hits, misses, written, rejected, evicted;
	size_t bytes, max_bytes;	/* the directory's cache files, and the bound */
	const char *dir;		/* NULL: disabled */
};

/* dir NULL: the default (/var/cache/stacktreed as root, else
 * $XDG_CACHE_HOME/stacktreed or ~/.cache/stacktreed), created 0700 if it is
 * missing, and so is its parent (~/.cache of a new account). A directory
 * that cannot be used disables the cache with one line on stderr (the
 * profile goes on without it). NULL only on ENOMEM. */
struct st_ucache *st_ucache__new(const char *dir, size_t max_bytes, bool verbose);
void st_ucache__free(struct st_ucache *c);

/* 0 and *rows (malloc'd, *n of them, *unsupported rows the BPF walk cannot
 * evaluate) for key; -ENOENT on a miss (rejected files included). */
int st_ucache__get(struct st_ucache *c, const char *key, struct st_unwind_row **rows, size_t *n,
		   size_t *unsupported);
/* Keep rows for key (best effort: a failed write is only counted out). */
void st_ucache__put(struct st_ucache *c, const char *key, const struct st_unwind_row *rows,
		    size_t n, size_t unsupported);

void st_ucache__stats(const struct st_ucache *c, struct st_ucache_stats *out);

#endif

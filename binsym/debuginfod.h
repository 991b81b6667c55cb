/* debuginfod.h - separate debug files fetched by build id from the
 * debuginfod servers in DEBUGINFOD_URLS (libdebuginfod), when none is found
 * locally (private to binsym/).
 *
 * Bounds: each fetch is cut after timeout_s (libdebuginfod's progress
 * callback aborts it) or when the transfer grows past max_size; each build
 * id is asked once per session: the outcome (the file's path, or nothing)
 * is remembered, separately for root-only modules and other users' (a
 * user's file may claim any build id: what its fetch failed on never stops
 * a root-only module's fetch). At most ST_DBGD_MAX_IDS build ids are
 * remembered; later ones are not fetched (counted as skipped), nor is any
 * after ST_DBGD_MAX_FAILURES fetches in a row failed (timeouts, unreachable
 * servers, too large: a session never waits more than that many timeouts
 * for nothing), counted apart for root-only modules and users' (whose
 * claimed build ids could pick files too large or too slow to fetch).
 *
 * The cache: libdebuginfod keeps what it fetched in DEBUGINFOD_CACHE_PATH.
 * st_dbgd__new() decides that directory (the variable when set, else as
 * root /var/cache/stacktreed/debuginfod, else libdebuginfod's default under
 * $HOME) and, as root, only uses one that is the daemon's own: a directory
 * (not a symbolic link) owned by us and not writable by group or others,
 * whose parents are owned by root (or us) and not writable by others unless
 * sticky. It is created (0700) when missing, and the variable is set to it
 * (setenv: call st_dbgd__new() before any other thread starts). The file a
 * fetch gives is a path in that cache: the caller opens it like any other
 * debug file (st_safe_open rules, size bound) and checks its build id,
 * reporting a mismatch with st_dbgd__reject().
 *
 * Not thread-safe: owned by one symbolizer. */
#ifndef STACKTREE_SYMBOLIZER_DEBUGINFOD_H
#define STACKTREE_SYMBOLIZER_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define ST_DBGD_TIMEOUT_S 5.0	/* default per fetch */
#define ST_DBGD_MAX_IDS 4096
#define ST_DBGD_MAX_FAILURES 3	/* in a row: then no more fetches */

struct st_dbgd;

struct st_dbgd_opts {
	double timeout_s;	/* per fetch; 0: DEBUGINFOD_TIMEOUT if a number, else
				 * ST_DBGD_TIMEOUT_S */
	__u64 max_size;		/* bytes of one file; 0: no bound but the caller's */
	const char *cache_dir;	/* NULL: see above */
	bool verbose;
	bool (*cancel)(void *ctx);	/* true: the daemon is stopping, abort the fetch */
	void *cancel_ctx;
};

struct st_dbgd_stats {
	size_t found;		/* fetched (or found in the disk cache) */
	size_t not_found;	/* no server has it */
	size_t failed;		/* timeouts, unreachable servers, too large, stop, errors */
	size_t rejected;	/* fetched but refused: not ELF, build id mismatch, ... */
	size_t skipped;		/* not asked: over ST_DBGD_MAX_IDS build ids, or after
				 * ST_DBGD_MAX_FAILURES failures in a row */
	double seconds;		/* time spent in fetches */
};

/* 0 with *out, or negative errno with one line on stderr saying why:
 * -ENOSYS DEBUGINFOD_URLS is unset or empty; -EPERM the cache directory is
 * not the daemon's own; -ENOMEM. */
int st_dbgd__new(const struct st_dbgd_opts *o, struct st_dbgd **out);
void st_dbgd__free(struct st_dbgd *d);

/* The debug file of build id (lower-case hex) in the cache: 0 with *path
 * (owned by d, valid until st_dbgd__free()), or -ENOENT (not found, failed
 * or remembered so), -EINVAL (not a build id). trusted: asked for a
 * root-only module (see above). */
int st_dbgd__find(struct st_dbgd *d, const char *build_id, bool trusted, const char **path);

/* The file st_dbgd__find() gave for build_id is not usable: counted, and
 * forgotten (later finds of it say -ENOENT). */
void st_dbgd__reject(struct st_dbgd *d, const char *build_id, bool trusted);

void st_dbgd__stats(const struct st_dbgd *d, struct st_dbgd_stats *out);

/* The cache directory used. */
const char *st_dbgd__cache_dir(const struct st_dbgd *d);

#endif

/* debuginfo.h - finding the separate debug file of a stripped image
 * (private). */
#ifndef STACKTREE_SYMBOLIZER_DEBUGINFO_H
#define STACKTREE_SYMBOLIZER_DEBUGINFO_H

#include <linux/types.h>

struct st_elf;
struct st_safe_open;
struct st_work;

struct st_debug_query {
	const char *debug_dir;	/* e.g. /usr/lib/debug */
	const char *path;	/* the image's path as mapped (for its directory) */
	const char *build_id;	/* hex, or NULL */
	const char *debuglink;	/* .gnu_debuglink name, or NULL */
	__u32 crc;		/* .gnu_debuglink CRC */
	int root_fd;		/* the process's root: DIR is resolved in it; -1: ours;
				 * < -1: none (the process is gone: DIR is not tried) */
	const struct st_safe_open *open;	/* size bound and refusal counts */
	struct st_work *work;	/* bounds the CRC: deadline, stop request (or NULL) */
};

/*
 * Look for the debug file, in order:
 *   DEBUG_DIR/.build-id/xx/rest.debug   (its build id must match)
 *   DIR/DEBUGLINK, DIR/.debug/DEBUGLINK, DEBUG_DIR/DIR/DEBUGLINK
 *                                       (its CRC-32 must match)
 * Every candidate is opened with st_safe_open() (a regular file within the
 * size bound, never a FIFO or a device). DEBUG_DIR is the daemon's own
 * (root's, trusted: its .build-id symlinks are followed); DIR/... are
 * resolved inside the process's root (root_fd) and must not be symlinks
 * themselves (RESOLVE_IN_ROOT: ".." and symlinks stay in that root); a
 * DEBUGLINK with '/' or that is "." or "..", and DEBUG_DIR/DIR with a ".."
 * component in DIR are refused. The CRC stops when q->work says so.
 * Returns 0 with *out opened and verified, or -ENOENT. On success *how
 * points to a static description ("build-id" or "debuglink").
 */
int st_debuginfo__find(const struct st_debug_query *q, struct st_elf **out,
		       const char **how);

/* Open path, in the daemon's own places (symlinks followed: e.g. a
 * debuginfod cache file), as the debug file of q->build_id: st_safe_open()
 * rules and size bound (q->open), ELF, and its build id must be
 * q->build_id. 0 with *out, -EBADMSG when it is ELF with another build id
 * (or none), or st_safe_open()'s and ELF's errors. */
int st_debuginfo__open_by_id(const struct st_debug_query *q, const char *path,
			     struct st_elf **out);

#endif

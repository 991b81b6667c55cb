/* debuginfo.h - finding the separate debug file of a stripped image
 * (private). */
#ifndef STACKTREE_SYMBOLIZER_DEBUGINFO_H
#define STACKTREE_SYMBOLIZER_DEBUGINFO_H

#include <linux/types.h>

struct st_elf;

struct st_debug_query {
	const char *debug_dir;	/* e.g. /usr/lib/debug */
	const char *path;	/* the image's path as mapped (for its directory) */
	const char *build_id;	/* hex, or NULL */
	const char *debuglink;	/* .gnu_debuglink name, or NULL */
	__u32 crc;		/* .gnu_debuglink CRC */
};

/*
 * Look for the debug file, in order:
 *   DEBUG_DIR/.build-id/xx/rest.debug   (its build id must match)
 *   DIR/DEBUGLINK, DIR/.debug/DEBUGLINK, DEBUG_DIR/DIR/DEBUGLINK
 *                                       (its CRC-32 must match)
 * Returns 0 with *out opened and verified, or -ENOENT. On success *how
 * points to a static description ("build-id" or "debuglink").
 */
int st_debuginfo__find(const struct st_debug_query *q, struct st_elf **out,
		       const char **how);

#endif

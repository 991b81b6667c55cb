/* tmpdir_fx.h - a temporary directory for one test, removed afterwards with
 * everything in it (for cmocka setup/teardown functions). */
#ifndef STACKTREE_TEST_TMPDIR_FX_H
#define STACKTREE_TEST_TMPDIR_FX_H

#include <stdio.h>
#include <stdlib.h>

/* dir (len bytes) = a new /tmp/PREFIXxxxxxx, mode 0700: 0 or -1. */
static inline int tmpdir_make(char *dir, size_t len, const char *prefix)
{
	if (snprintf(dir, len, "/tmp/%sXXXXXX", prefix) >= (int)len)
		return -1;
	return mkdtemp(dir) ? 0 : -1;
}

static inline int tmpdir_remove(const char *dir)
{
	char cmd[128];

	if (snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) >= (int)sizeof(cmd))
		return -1;
	return system(cmd) ? -1 : 0;
}

#endif

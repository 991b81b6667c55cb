/* tmpdir_fx.h - a temporary directory for one test, removed afterwards with
 * everything in it: cmocka setup/teardown functions whose state is a
 * struct tmpdir_fx (the directory, and room for a path in it). Define
 * TMPDIR_PREFIX before including it to name the directories. */
#ifndef STACKTREE_TEST_TMPDIR_FX_H
#define STACKTREE_TEST_TMPDIR_FX_H

#include <stdio.h>
#include <stdlib.h>

#ifndef TMPDIR_PREFIX
#define TMPDIR_PREFIX "st-test-"
#endif

struct tmpdir_fx {
	char dir[64];		/* /tmp/TMPDIR_PREFIXxxxxxx, mode 0700 */
	char path[256];		/* for the test's use */
};

static inline int tmpdir_setup(void **state)
{
	struct tmpdir_fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/%sXXXXXX", TMPDIR_PREFIX);
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static inline int tmpdir_teardown(void **state)
{
	struct tmpdir_fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

#endif

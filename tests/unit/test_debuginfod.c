/* test_debuginfod.c - the debuginfod client's own rules (no server): it
 * needs DEBUGINFOD_URLS, only uses a cache directory that is ours, and asks
 * for each build id once per session (apart for root-only and other
 * users' modules). The fetches go to 127.0.0.1:1, where nothing listens. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binsym/debuginfod.h"
#define TMPDIR_PREFIX "st-dbgd-"
#include "tmpdir_fx.h"

#define BID "0123456789abcdef0123456789abcdef01234567"

/* f->path: the cache directory to use, DIR/cache (not made yet) */
static int setup(void **state)
{
	struct tmpdir_fx *f;

	if (tmpdir_setup(state))
		return -1;
	f = *state;
	snprintf(f->path, sizeof(f->path), "%s/cache", f->dir);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	return 0;
}

static int new_client(const char *cache, struct st_dbgd **d)
{
	struct st_dbgd_opts o = { .timeout_s = 2, .cache_dir = cache };

	return st_dbgd__new(&o, d);
}

static void test_needs_urls(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_dbgd *d = NULL;

	unsetenv("DEBUGINFOD_URLS");
	assert_int_equal(new_client(f->path, &d), -ENOSYS);
	assert_null(d);
	setenv("DEBUGINFOD_URLS", "", 1);
	assert_int_equal(new_client(f->path, &d), -ENOSYS);
	assert_null(d);
}

static void expect_refused(const char *cache)
{
	struct st_dbgd *d = NULL;

	assert_int_equal(new_client(cache, &d), -EPERM);
	assert_null(d);
}

static void test_cache_must_be_ours(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_dbgd *d = NULL;
	char link[128];
	struct stat st;

	/* created 0700 when missing, and named to libdebuginfod */
	assert_int_equal(new_client(f->path, &d), 0);
	assert_string_equal(st_dbgd__cache_dir(d), f->path);
	assert_string_equal(getenv("DEBUGINFOD_CACHE_PATH"), f->path);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	st_dbgd__free(d);
	/* writable by others */
	assert_int_equal(chmod(f->path, 0777), 0);
	expect_refused(f->path);
	assert_int_equal(chmod(f->path, 0700), 0);
	/* a symbolic link to it */
	snprintf(link, sizeof(link), "%s/link", f->dir);
	assert_int_equal(symlink(f->path, link), 0);
	expect_refused(link);
	/* a parent others may write: they could swap the directory */
	assert_int_equal(chmod(f->dir, 0777), 0);
	expect_refused(f->path);
	/* ... unless sticky, as /tmp */
	assert_int_equal(chmod(f->dir, 01777), 0);
	assert_int_equal(new_client(f->path, &d), 0);
	st_dbgd__free(d);
	assert_int_equal(chmod(f->dir, 0700), 0);
	/* relative, or with ".." */
	expect_refused("relative/cache");
	snprintf(link, sizeof(link), "%s/../%s", f->dir, strrchr(f->dir, '/') + 1);
	expect_refused(link);
}

static void test_asked_once(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_dbgd_stats s;
	struct st_dbgd *d = NULL;
	const char *path = NULL;

	assert_int_equal(new_client(f->path, &d), 0);
	assert_int_equal(st_dbgd__find(d, "XYZ", true, &path), -EINVAL);
	assert_int_equal(st_dbgd__find(d, "abc", true, &path), -EINVAL);	/* odd length */
	assert_int_equal(st_dbgd__find(d, BID, true, &path), -ENOENT);
	st_dbgd__stats(d, &s);
	assert_int_equal(s.failed, 1);
	assert_int_equal(s.found + s.not_found + s.rejected + s.skipped, 0);
	assert_true(s.seconds < 2.5);
	/* remembered: not asked again */
	assert_int_equal(st_dbgd__find(d, BID, true, &path), -ENOENT);
	st_dbgd__stats(d, &s);
	assert_int_equal(s.failed, 1);
	/* another user's module with that build id is asked for by itself */
	assert_int_equal(st_dbgd__find(d, BID, false, &path), -ENOENT);
	assert_int_equal(st_dbgd__find(d, BID, false, &path), -ENOENT);
	st_dbgd__stats(d, &s);
	assert_int_equal(s.failed, 2);
	/* nothing to reject */
	st_dbgd__reject(d, BID, true);
	st_dbgd__stats(d, &s);
	assert_int_equal(s.rejected, 0);
	st_dbgd__free(d);
	st_dbgd__free(NULL);
}

/* Servers that fail ST_DBGD_MAX_FAILURES times in a row are not asked
 * again this session (the build ids after that are counted as skipped),
 * counted apart for users' modules and root's. */
static void test_gives_up_after_failures(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_dbgd_stats s;
	struct st_dbgd *d = NULL;
	const char *path = NULL;
	char bid[8];

	assert_int_equal(new_client(f->path, &d), 0);
	for (int i = 0; i < ST_DBGD_MAX_FAILURES + 2; i++) {
		snprintf(bid, sizeof(bid), "%06x", i);
		assert_int_equal(st_dbgd__find(d, bid, false, &path), -ENOENT);
	}
	st_dbgd__stats(d, &s);
	assert_int_equal(s.failed, ST_DBGD_MAX_FAILURES);
	assert_int_equal(s.skipped, 2);
	/* root's modules are still asked for */
	assert_int_equal(st_dbgd__find(d, "abcdef", true, &path), -ENOENT);
	st_dbgd__stats(d, &s);
	assert_int_equal(s.failed, ST_DBGD_MAX_FAILURES + 1);
	st_dbgd__free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_needs_urls, setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_cache_must_be_ours, setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_asked_once, setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_gives_up_after_failures, setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

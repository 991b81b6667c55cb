/* test_unwind_cache.c - compiled unwind tables on disk (user/collect/unwind/unwind_cache.c):
 * round trip, and every file that must not be taken (corrupt, truncated,
 * another owner's, a symlink, rows out of order), the size bound, and
 * directories that must not be used. Runs as root (the suite does). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/collect/unwind/unwind_cache.h"

static char dir[64];

static void rows_for(struct st_unwind_row *r, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		r[i] = (struct st_unwind_row){ .pc = (__u32)(i * 16 + seed), .kind = ST_UNW_RSP,
					       .rbp = ST_UNW_RBP_SAME, .off = (__s16)(8 + i % 5) };
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/st-ucache-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The one cache file in dir (there is one in these tests). */
static void cache_file(char *path, size_t len)
{
	char cmd[160];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/*.cfi", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(path, (int)len, p));
	path[strcspn(path, "\n")] = '\0';
	pclose(p);
}

static void test_round_trip(void **state)
{
	struct st_unwind_row in[100], *out = NULL;
	struct st_ucache_stats st;
	struct st_ucache *c = st_ucache__new(dir, 1 << 20, false);
	size_t n = 0, unsup = 0;

	(void)state;
	rows_for(in, 100, 1);
	assert_int_equal(st_ucache__get(c, "b:0123abcd", &out, &n, &unsup), -ENOENT);
	st_ucache__put(c, "b:0123abcd", in, 100, 7);
	assert_int_equal(st_ucache__get(c, "b:0123abcd", &out, &n, &unsup), 0);
	assert_int_equal(n, 100);
	assert_int_equal(unsup, 7);
	assert_memory_equal(out, in, sizeof(in));
	free(out);
	/* another key, even one hashing elsewhere, is a miss */
	assert_int_equal(st_ucache__get(c, "b:0123abce", &out, &n, &unsup), -ENOENT);
	st_ucache__stats(c, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.written, 1);
	assert_int_equal(st.rejected, 0);
	assert_string_equal(st.dir, dir);
	st_ucache__free(c);
	/* found again by the next run */
	c = st_ucache__new(dir, 1 << 20, false);
	assert_int_equal(st_ucache__get(c, "b:0123abcd", &out, &n, &unsup), 0);
	free(out);
	st_ucache__stats(c, &st);
	assert_true(st.bytes > 100 * sizeof(in[0]));
	st_ucache__free(c);
	st_ucache__free(NULL);
}

/* What the cache must refuse: each is a miss, counted as rejected. */
static void test_refused_files(void **state)
{
	struct st_unwind_row in[64], *out = NULL;
	struct st_ucache_stats st;
	struct st_ucache *c = st_ucache__new(dir, 1 << 20, false);
	char path[256], other[300];
	size_t n = 0, unsup = 0;
	int fd;

	(void)state;
	rows_for(in, 64, 3);
	st_ucache__put(c, "f:1:2:3:4.5", in, 64, 0);
	cache_file(path, sizeof(path));
	/* a byte of a row changed */
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\x55", 1, 200), 1);
	close(fd);
	assert_int_equal(st_ucache__get(c, "f:1:2:3:4.5", &out, &n, &unsup), -ENOENT);
	/* truncated */
	st_ucache__put(c, "f:1:2:3:4.5", in, 64, 0);
	assert_int_equal(truncate(path, 100), 0);
	assert_int_equal(st_ucache__get(c, "f:1:2:3:4.5", &out, &n, &unsup), -ENOENT);
	/* another user's file */
	st_ucache__put(c, "f:1:2:3:4.5", in, 64, 0);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(st_ucache__get(c, "f:1:2:3:4.5", &out, &n, &unsup), -ENOENT);
	st_ucache__stats(c, &st);
	assert_int_equal(st.rejected, 3);
	/* a symbolic link to a good file: not followed */
	unlink(path);
	st_ucache__put(c, "f:1:2:3:4.5", in, 64, 0);
	snprintf(other, sizeof(other), "%s.good", path);
	assert_int_equal(rename(path, other), 0);
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(st_ucache__get(c, "f:1:2:3:4.5", &out, &n, &unsup), -ENOENT);
	unlink(path);
	unlink(other);
	/* rows out of order (written as they are, with a right checksum) */
	in[10].pc = 0;
	st_ucache__put(c, "f:1:2:3:4.5", in, 64, 0);
	assert_int_equal(st_ucache__get(c, "f:1:2:3:4.5", &out, &n, &unsup), -ENOENT);
	st_ucache__stats(c, &st);
	assert_int_equal(st.rejected, 4);
	assert_int_equal(st.hits, 0);
	st_ucache__free(c);
}

/* Over the size bound, the least recently used files go. */
static void test_size_bound(void **state)
{
	static struct st_unwind_row in[4096];
	struct st_unwind_row *out = NULL;
	struct st_ucache_stats st;
	struct st_ucache *c = st_ucache__new(dir, 3 * sizeof(in) + 3000, false);
	size_t n, unsup;
	char key[32];

	(void)state;
	rows_for(in, 4096, 5);
	for (int i = 0; i < 6; i++) {
		snprintf(key, sizeof(key), "b:%02d", i);
		st_ucache__put(c, key, in, 4096, 0);
		if (i == 1) {	/* b:00 used again: b:01 is now the oldest */
			sleep(1);
			assert_int_equal(st_ucache__get(c, "b:00", &out, &n, &unsup), 0);
			free(out);
		}
	}
	st_ucache__stats(c, &st);
	assert_int_equal(st.evicted, 3);
	assert_true(st.bytes <= st.max_bytes);
	assert_int_equal(st_ucache__get(c, "b:01", &out, &n, &unsup), -ENOENT);
	assert_int_equal(st_ucache__get(c, "b:05", &out, &n, &unsup), 0);
	free(out);
	st_ucache__free(c);
}

/* A directory that is not ours, writable by others, or a symbolic link is
 * not used (one line on stderr; every lookup a miss). */
static void test_refused_directories(void **state)
{
	struct st_unwind_row in[8], *out = NULL;
	struct st_ucache_stats st;
	struct st_ucache *c;
	char sub[128], link[128];
	size_t n, unsup;

	(void)state;
	rows_for(in, 8, 0);
	snprintf(sub, sizeof(sub), "%s/other", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(chown(sub, 65534, 65534), 0);
	c = st_ucache__new(sub, 1 << 20, false);
	st_ucache__stats(c, &st);
	assert_null(st.dir);
	st_ucache__put(c, "b:aa", in, 8, 0);
	assert_int_equal(st_ucache__get(c, "b:aa", &out, &n, &unsup), -ENOENT);
	st_ucache__free(c);
	assert_int_equal(chown(sub, 0, 0), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	c = st_ucache__new(sub, 1 << 20, false);
	st_ucache__stats(c, &st);
	assert_null(st.dir);
	st_ucache__free(c);
	assert_int_equal(chmod(sub, 0700), 0);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(sub, link), 0);
	c = st_ucache__new(link, 1 << 20, false);
	st_ucache__stats(c, &st);
	assert_null(st.dir);
	st_ucache__free(c);
	/* a missing one is created, private */
	snprintf(sub, sizeof(sub), "%s/new", dir);
	c = st_ucache__new(sub, 1 << 20, false);
	st_ucache__stats(c, &st);
	assert_non_null(st.dir);
	st_ucache__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_directories, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

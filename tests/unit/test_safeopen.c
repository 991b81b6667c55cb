/* test_safeopen.c - st_safe_open(): only bounded regular files, never
 * blocking on a FIFO, symlinks refused with nofollow, paths resolved inside
 * a given root, refusals counted; st_file_trusted(); st_file_is_mapped(). */
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

#include "binsym/safeopen.h"
#define TMPDIR_PREFIX "st-test-safe"
#include "tmpdir_fx.h"

static const char *at(struct tmpdir_fx *f, const char *name)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, name);
	return f->path;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_regular_file(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_safe_stats st = { 0 };
	struct st_safe_open o = { .root_fd = -1, .stats = &st };
	struct stat sb;
	char buf[8] = { 0 };
	int fd, fl;

	write_file(at(f, "a"), "hello");
	fd = st_safe_open(at(f, "a"), &o, &sb);
	assert_true(fd >= 0);
	assert_int_equal(sb.st_size, 5);
	fl = fcntl(fd, F_GETFL);
	assert_false(fl & O_NONBLOCK);	/* cleared: reads block as usual */
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(read(fd, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "hello");
	close(fd);
	assert_int_equal(st.not_regular + st.too_large + st.symlink, 0);
	/* NULL options and stat: the defaults */
	fd = st_safe_open(at(f, "a"), NULL, NULL);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(st_safe_open(at(f, "missing"), &o, NULL), -ENOENT);
}

static void test_fifo_does_not_block(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_safe_stats st = { 0 };
	struct st_safe_open o = { .root_fd = -1, .stats = &st };

	assert_int_equal(mkfifo(at(f, "fifo"), 0644), 0);
	/* no writer: a plain open(O_RDONLY) would block here forever */
	assert_int_equal(st_safe_open(at(f, "fifo"), &o, NULL), ST_SAFE_NOT_REGULAR);
	assert_int_equal(st.not_regular, 1);
}

static void test_devices_and_directories(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_safe_stats st = { 0 };
	struct st_safe_open o = { .root_fd = -1, .stats = &st };

	assert_int_equal(st_safe_open("/dev/zero", &o, NULL), ST_SAFE_NOT_REGULAR);
	assert_int_equal(st_safe_open("/dev/null", &o, NULL), ST_SAFE_NOT_REGULAR);
	assert_int_equal(st_safe_open(f->dir, &o, NULL), ST_SAFE_NOT_REGULAR);
	assert_int_equal(st.not_regular, 3);
}

static void test_size_bound(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_safe_stats st = { 0 };
	struct st_safe_open o = { .root_fd = -1, .max_size = 4, .stats = &st };
	int fd;

	write_file(at(f, "five"), "12345");
	assert_int_equal(st_safe_open(at(f, "five"), &o, NULL), ST_SAFE_TOO_LARGE);
	o.max_size = 5;
	fd = st_safe_open(at(f, "five"), &o, NULL);
	assert_true(fd >= 0);
	close(fd);
	/* a sparse 1 TiB file: refused at once under the default bound */
	fd = open(at(f, "sparse"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1ll << 40), 0);
	close(fd);
	o.max_size = 0;
	assert_int_equal(st_safe_open(at(f, "sparse"), &o, NULL), ST_SAFE_TOO_LARGE);
	assert_int_equal(st.too_large, 2);
}

static void test_symlinks(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_safe_stats st = { 0 };
	struct st_safe_open o = { .root_fd = -1, .stats = &st };
	char target[256];
	int fd;

	write_file(at(f, "t"), "x");
	snprintf(target, sizeof(target), "%s", f->path);
	assert_int_equal(symlink(target, at(f, "link")), 0);
	fd = st_safe_open(at(f, "link"), &o, NULL);	/* followed by default */
	assert_true(fd >= 0);
	close(fd);
	o.nofollow = true;
	assert_int_equal(st_safe_open(at(f, "link"), &o, NULL), ST_SAFE_SYMLINK);
	assert_int_equal(st.symlink, 1);
	/* a symlink to a device is no way around the check */
	assert_int_equal(symlink("/dev/zero", at(f, "zero")), 0);
	o.nofollow = false;
	assert_int_equal(st_safe_open(at(f, "zero"), &o, NULL), ST_SAFE_NOT_REGULAR);
}

static void test_inside_root(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_safe_open o = { .root_fd = -1 };
	char sub[128];
	int fd;

	/* root = DIR/root; DIR/root/etc/f exists, DIR/outside too */
	snprintf(sub, sizeof(sub), "%s/root/etc", f->dir);
	assert_int_equal(mkdir(at(f, "root"), 0755), 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file(at(f, "root/etc/f"), "in");
	write_file(at(f, "outside"), "out");
	assert_int_equal(symlink("/outside", at(f, "root/abs")), 0);
	assert_int_equal(symlink("../../outside", at(f, "root/etc/rel")), 0);
	o.root_fd = open(at(f, "root"), O_PATH | O_DIRECTORY);
	assert_true(o.root_fd >= 0);
	fd = st_safe_open("/etc/f", &o, NULL);
	assert_true(fd >= 0);
	close(fd);
	/* "..", absolute and relative symlinks all stay in the root */
	assert_int_equal(st_safe_open("/../outside", &o, NULL), -ENOENT);
	assert_int_equal(st_safe_open("/abs", &o, NULL), -ENOENT);
	assert_int_equal(st_safe_open("/etc/rel", &o, NULL), -ENOENT);
	close(o.root_fd);
	/* the same names from our root do reach it */
	fd = st_safe_open(at(f, "root/etc/rel"), NULL, NULL);
	assert_true(fd >= 0);
	close(fd);
}

static void test_trusted(void **state)
{
	struct stat sb = { 0 };

	(void)state;
	sb.st_uid = 0;
	sb.st_mode = S_IFREG | 0755;
	assert_true(st_file_trusted(&sb));
	sb.st_mode = S_IFREG | 0775;
	assert_false(st_file_trusted(&sb));	/* the group may rewrite it */
	sb.st_mode = S_IFREG | 0757;
	assert_false(st_file_trusted(&sb));
	sb.st_mode = S_IFREG | 0755;
	sb.st_uid = 1000;
	assert_false(st_file_trusted(&sb));
}

/* The inode of a maps line: equal inode and device; another inode, or the
 * same number on another device (tmpfs vs /proc), is not the mapped file. */
static void test_is_mapped(void **state)
{
	struct tmpdir_fx *f = *state;
	struct stat sb;
	int fd;

	write_file(at(f, "lib.so"), "x");
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_true(st_file_is_mapped(fd, &sb, sb.st_dev, sb.st_ino));
	assert_true(st_file_is_mapped(fd, &sb, 0, 0));	/* not known */
	assert_false(st_file_is_mapped(fd, &sb, sb.st_dev, sb.st_ino + 1));
	assert_false(st_file_is_mapped(fd, &sb, sb.st_dev + 1, sb.st_ino));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_regular_file, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_fifo_does_not_block, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_devices_and_directories, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_size_bound, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_symlinks, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_inside_root, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_trusted),
		cmocka_unit_test_setup_teardown(test_is_mapped, tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

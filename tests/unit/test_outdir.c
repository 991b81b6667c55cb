/* test_outdir.c - the output directory: who may be trusted, links never
 * followed, temporaries never left, aborts, private modes and the sudo
 * user's ownership. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "user/output/outdir.h"

static char base[] = "/tmp/st-unit-outdir-XXXXXX";

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", base, name);
}

static const char *path_of_tmp(const char *name)
{
	static char buf[512];

	path_of(buf, sizeof(buf), name);
	return buf;
}

static char *slurp(const char *name)
{
	static char buf[256];
	char path[512];
	ssize_t n;
	int fd;

	path_of(path, sizeof(path), name);
	fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void put(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	path_of(path, sizeof(path), name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* entries of base/sub whose name starts with ".tmp-" */
static int temporaries(const char *sub)
{
	char cmd[600];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls -A %s/%s | grep -c '^\\.tmp-'", base, sub);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(base) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	return system(cmd);
}

static struct stat dir_stat(uid_t uid, mode_t mode)
{
	struct stat st = { .st_uid = uid, .st_mode = S_IFDIR | mode };

	return st;
}

static void test_trusted(void **state)
{
	struct stat st;
	char why[256];

	(void)state;
	/* not root: the kernel's permissions decide */
	st = dir_stat(0, 0777);
	assert_int_equal(st_outdir__trusted(1000, -1, &st, why, sizeof(why)), 0);
	/* root's own, private or sticky like /tmp */
	st = dir_stat(0, 0755);
	assert_int_equal(st_outdir__trusted(0, -1, &st, why, sizeof(why)), 0);
	st = dir_stat(0, 01777);
	assert_int_equal(st_outdir__trusted(0, -1, &st, why, sizeof(why)), 0);
	/* root's, writable by others without the sticky bit */
	st = dir_stat(0, 0777);
	assert_int_equal(st_outdir__trusted(0, -1, &st, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "without the sticky bit"));
	st = dir_stat(0, 0775);
	assert_int_equal(st_outdir__trusted(0, -1, &st, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "its group"));
	/* another user's */
	st = dir_stat(65534, 0755);
	assert_int_equal(st_outdir__trusted(0, -1, &st, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "uid 65534"));
	st = dir_stat(65534, 01777);
	assert_int_equal(st_outdir__trusted(0, 1000, &st, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "writable by everyone"));
	/* the sudo user's own, unless others can write it */
	st = dir_stat(1000, 0755);
	assert_int_equal(st_outdir__trusted(0, 1000, &st, why, sizeof(why)), 0);
	st = dir_stat(1000, 0775);
	assert_int_equal(st_outdir__trusted(0, 1000, &st, why, sizeof(why)), -EPERM);
}

static void test_open_refuses(void **state)
{
	struct st_outdir *d = NULL;
	char path[512], link[512];

	(void)state;
	put("file", "x");
	path_of(path, sizeof(path), "file");
	assert_int_equal(st_outdir__open(path, &d), -ENOTDIR);
	assert_null(d);
	path_of(path, sizeof(path), "nowhere");
	path_of(link, sizeof(link), "dangling");
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(st_outdir__open(link, &d), -ELOOP);
	assert_int_equal(access(path, F_OK), -1);	/* not created through the link */
	path_of(link, sizeof(link), "dirlink");
	assert_int_equal(symlink(base, link), 0);
	assert_int_equal(st_outdir__open(link, &d), -ELOOP);
	strcat(link, "/");	/* a trailing slash does not follow it either */
	assert_int_equal(st_outdir__open(link, &d), -ELOOP);
	/* missing parents are created */
	path_of(path, sizeof(path), "a/b/c/");
	assert_int_equal(st_outdir__open(path, &d), 0);
	path_of(path, sizeof(path), "a/b/c");
	assert_string_equal(st_outdir__path(d), path);
	st_outdir__free(d);
	assert_int_equal(temporaries("a/b/c"), 0);	/* the probe is gone */
}

static void test_links_replaced_not_followed(void **state)
{
	struct st_outdir *d;
	struct st_outfile *of;
	struct stat st;
	char target[512], path[512];
	FILE *f;

	(void)state;
	put("target", "precious");
	path_of(target, sizeof(target), "target");
	assert_int_equal(st_outdir__open(base, &d), 0);
	path_of(path, sizeof(path), "xtree.txt");
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(st_outfile__begin(d, "xtree.txt", &of, &f), 0);
	fputs("report", f);
	assert_int_equal(st_outfile__end(of, 0), 0);
	assert_string_equal(slurp("xtree.txt"), "report");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0600, 0600);
	assert_string_equal(slurp("target"), "precious");
	/* latest: a planted link is replaced by ours */
	path_of(path, sizeof(path), "latest");
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(st_outdir__symlink(d, "20260101T000000Z", "latest"), 0);
	assert_int_equal(readlink(path, target, sizeof(target)), 16);
	assert_string_equal(slurp("target"), "precious");
	assert_int_equal(st_outdir__write_text(d, "summary.txt", "sum\n"), 0);
	assert_string_equal(slurp("summary.txt"), "sum\n");
	assert_int_equal(temporaries("."), 0);
	st_outdir__free(d);
}

static void test_failures_leave_nothing(void **state)
{
	volatile sig_atomic_t flag = 0;
	struct st_outdir *d, *sub;
	struct st_outfile *of;
	char big[65536];
	FILE *f;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(st_outdir__open(base, &d), 0);
	put("arcflow.txt", "old");
	/* the writer failed: the old file stays, no temporary */
	assert_int_equal(st_outfile__begin(d, "arcflow.txt", &of, &f), 0);
	fputs(big, f);
	assert_int_equal(st_outfile__end(of, -ENOMEM), -ENOMEM);
	assert_string_equal(slurp("arcflow.txt"), "old");
	assert_int_equal(temporaries("."), 0);
	/* aborted in the middle of a write (a second SIGINT) */
	st_outdir__set_abort(d, &flag, 4);
	assert_int_equal(st_outfile__begin(d, "profile.json", &of, &f), 0);
	fputs(big, f);
	flag = 4;
	fputs(big, f);
	assert_int_equal(st_outfile__end(of, ferror(f) ? -EIO : 0), -ECANCELED);
	assert_null(slurp("profile.json"));
	assert_int_equal(temporaries("."), 0);
	/* aborted between the writes and the rename */
	flag = 0;
	assert_int_equal(st_outfile__begin(d, "profile.json", &of, &f), 0);
	fputs("{}", f);
	flag = 4;
	assert_int_equal(st_outfile__end(of, 0), -ECANCELED);
	assert_null(slurp("profile.json"));
	/* a temporary directory: discarded, or committed unless aborted */
	flag = 0;
	assert_int_equal(st_outdir__mktemp(d, "20260101T000000Z", &sub), 0);
	assert_int_equal(st_outdir__write_text(sub, "summary.txt", "s"), 0);
	st_outdir__discard(d, sub);
	assert_int_equal(temporaries("."), 0);
	assert_int_equal(st_outdir__mktemp(d, "20260101T000000Z", &sub), 0);
	assert_int_equal(st_outdir__write_text(sub, "summary.txt", "s"), 0);
	flag = 4;
	assert_int_equal(st_outdir__write_text(sub, "xtree.txt", big), -ECANCELED);
	assert_int_equal(st_outdir__commit(d, sub, "20260101T000000Z"), -ECANCELED);
	assert_int_equal(temporaries("."), 0);
	assert_int_equal(st_outdir__exists(d, "20260101T000000Z"), -ENOENT);
	flag = 0;
	assert_int_equal(st_outdir__mktemp(d, "20260101T000000Z", &sub), 0);
	assert_int_equal(st_outdir__write_text(sub, "summary.txt", "s"), 0);
	assert_int_equal(st_outdir__commit(d, sub, "20260101T000000Z"), 0);
	assert_string_equal(slurp("20260101T000000Z/summary.txt"), "s");
	/* the name exists: not replaced */
	assert_int_equal(st_outdir__mktemp(d, "20260101T000000Z", &sub), 0);
	assert_int_equal(st_outdir__commit(d, sub, "20260101T000000Z"), -EEXIST);
	assert_int_equal(temporaries("."), 0);
	assert_int_equal(st_outdir__remove(d, "20260101T000000Z"), 0);
	assert_int_equal(st_outdir__exists(d, "20260101T000000Z"), -ENOENT);
	st_outdir__free(d);
}

/* The name of the one temporary in base whose name contains part. */
static void tmp_named(const char *part, char *out, size_t len)
{
	char cmd[600];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A %s | grep '^\\.tmp-.*%s'", base, part);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, (int)len, p));
	out[strcspn(out, "\n")] = '\0';
	pclose(p);
}

/* Temporaries carry their writer's identity: those of a live writer (this
 * process) are kept, those of a dead one (no such pid, the pid reused by a
 * process started later, another boot) removed, whether files or snapshot
 * directories; names without an identity are left alone. */
static void test_sweep_dead_writers(void **state)
{
	char live[256], name[300], boot[32], path[600];
	unsigned long long start;
	struct st_outdir *d, *sub;
	struct st_outfile *of;
	long pid;
	FILE *f;
	int n;

	(void)state;
	assert_int_equal(st_outdir__open(base, &d), 0);
	assert_int_equal(st_outfile__begin(d, "xtree.txt", &of, &f), 0);
	tmp_named("xtree.txt", live, sizeof(live));
	assert_int_equal(sscanf(live, ".tmp-P%ld.%llu.%31[0-9a-f]-%n", &pid, &start, boot, &n), 3);
	assert_int_equal(pid, (long)getpid());
	assert_false(st_outdir__tmp_dead(live));
	assert_false(st_outdir__tmp_dead(".tmp-xtree.txt-abcdefgh"));	/* no identity */
	assert_false(st_outdir__tmp_dead("summary.txt"));
	/* leftovers: our pid started at another time, a pid nobody has, another boot */
	snprintf(name, sizeof(name), ".tmp-P%ld.%llu.%s-xtree.txt-AAAAAAAA", pid, start + 1, boot);
	assert_true(st_outdir__tmp_dead(name));
	put(name, "x");
	snprintf(name, sizeof(name), ".tmp-P%d.%llu.%s-folded.txt-BBBBBBBB", 999999999, start,
		 boot);
	assert_true(st_outdir__tmp_dead(name));
	put(name, "x");
	snprintf(name, sizeof(name), ".tmp-P%ld.%llu.%s-20260101T000000Z-CCCCCCCC", pid, start,
		 strcmp(boot, "12345678") ? "12345678" : "87654321");
	assert_true(st_outdir__tmp_dead(name));
	path_of(path, sizeof(path), name);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/summary.txt");
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	put(".tmp-old-format-DDDDDDDD", "x");
	/* a live snapshot directory of ours */
	assert_int_equal(st_outdir__mktemp(d, "20260102T000000Z", &sub), 0);
	assert_int_equal(temporaries("."), 6);
	assert_int_equal(st_outdir__sweep(d), 3);
	assert_int_equal(temporaries("."), 3);
	assert_non_null(slurp(live));
	assert_non_null(slurp(".tmp-old-format-DDDDDDDD"));
	assert_int_equal(st_outfile__end(of, 0), 0);
	st_outdir__discard(d, sub);
	assert_int_equal(unlink(path_of_tmp(".tmp-old-format-DDDDDDDD")), 0);
	assert_int_equal(temporaries("."), 0);
	assert_int_equal(unlink(path_of_tmp("xtree.txt")), 0);
	st_outdir__free(d);
}

static mode_t mode_of(const char *name)
{
	char path[512];
	struct stat st;

	path_of(path, sizeof(path), name);
	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

/* Files 0600 and directories 0700 by default, whatever the umask (0 here);
 * --output-mode 0644 gives 0644 and 0755; the directory and its parents
 * made now get the mode too; an existing directory keeps its own. */
static void test_private_modes(void **state)
{
	struct st_outdir *d, *sub;
	char path[512];
	mode_t old = umask(0);

	(void)state;
	path_of(path, sizeof(path), "priv/a");
	assert_int_equal(st_outdir__open(path, &d), 0);
	assert_int_equal(mode_of("priv"), 0700);
	assert_int_equal(mode_of("priv/a"), 0700);
	assert_int_equal(st_outdir__write_text(d, "xtree.txt", "x"), 0);
	assert_int_equal(mode_of("priv/a/xtree.txt"), 0600);
	assert_int_equal(st_outdir__mktemp(d, "20260101T000000Z", &sub), 0);
	assert_int_equal(st_outdir__write_text(sub, "summary.txt", "s"), 0);
	assert_int_equal(st_outdir__commit(d, sub, "20260101T000000Z"), 0);
	assert_int_equal(mode_of("priv/a/20260101T000000Z"), 0700);
	assert_int_equal(mode_of("priv/a/20260101T000000Z/summary.txt"), 0600);
	st_outdir__free(d);

	path_of(path, sizeof(path), "shared");
	assert_int_equal(st_outdir__open_mode(path, 0644, &d), 0);
	assert_int_equal(mode_of("shared"), 0755);
	assert_int_equal(st_outdir__write_text(d, "xtree.txt", "x"), 0);
	assert_int_equal(mode_of("shared/xtree.txt"), 0644);
	st_outdir__free(d);
	/* existing: its mode stays, the files are private again */
	assert_int_equal(st_outdir__open(path, &d), 0);
	assert_int_equal(mode_of("shared"), 0755);
	assert_int_equal(st_outdir__write_text(d, "xtree.txt", "y"), 0);
	assert_int_equal(mode_of("shared/xtree.txt"), 0600);
	st_outdir__free(d);
	umask(old);
}

/* As root under sudo, what is made belongs to the invoking user. */
static void test_sudo_user_owns(void **state)
{
	struct st_outdir *d, *sub;
	char path[512];
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		skip();
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65533", 1);
	path_of(path, sizeof(path), "sudo");
	assert_int_equal(st_outdir__open(path, &d), 0);
	assert_int_equal(st_outdir__write_text(d, "xtree.txt", "x"), 0);
	assert_int_equal(st_outdir__mktemp(d, "20260101T000000Z", &sub), 0);
	assert_int_equal(st_outdir__commit(d, sub, "20260101T000000Z"), 0);
	st_outdir__free(d);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	for (const char *const *n = (const char *const[]){ "sudo", "sudo/xtree.txt",
							   "sudo/20260101T000000Z", NULL };
	     *n; n++) {
		path_of(path, sizeof(path), *n);
		assert_int_equal(lstat(path, &st), 0);
		assert_int_equal(st.st_uid, 65534);
		assert_int_equal(st.st_gid, 65533);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trusted),
		cmocka_unit_test(test_open_refuses),
		cmocka_unit_test(test_links_replaced_not_followed),
		cmocka_unit_test(test_failures_leave_nothing),
		cmocka_unit_test(test_sweep_dead_writers),
		cmocka_unit_test(test_private_modes),
		cmocka_unit_test(test_sudo_user_owns),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

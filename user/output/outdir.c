/* outdir.c - open the output directory safely once, write files in it
 * without following links. */
#include "user/output/outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define TMP_TRIES 100
#define PROBE_BYTES 4096

struct st_outdir {
	int fd;
	char *path;	/* for messages */
	char *name;	/* a st_outdir__mktemp directory: its name in the parent */
	mode_t mode;	/* of the files made; directories: mode + x where r */
	uid_t uid;	/* owner of what is made (the sudo user), or -1: ours */
	gid_t gid;
	const volatile sig_atomic_t *abort_flag;
	int abort_mask;
};

struct st_outfile {
	struct st_outdir *dir;
	int fd;
	FILE *f;
	int err;	/* the first failed write's errno */
	char name[256], tmp[300];
};

static const char *prog(void)
{
	return program_invocation_short_name;
}

static bool aborted(const struct st_outdir *d)
{
	return d->abort_flag && (*d->abort_flag & d->abort_mask);
}

/* The boot's id, 8 hex digits of /proc/sys/kernel/random/boot_id ("0"
 * when unreadable), in buf[9]. */
static void boot_id(char *buf)
{
	char line[64];
	size_t n = 0;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (f && fgets(line, sizeof(line), f))
		for (char *c = line; *c && n < 8; c++)
			if ((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))
				buf[n++] = *c;
	if (f)
		fclose(f);
	if (!n)
		buf[n++] = '0';
	buf[n] = '\0';
}

/* Process pid's start time (clock ticks after boot, /proc/PID/stat field
 * 22): 0, -ENOENT when there is no such process, or another -errno. */
static int start_time(long pid, unsigned long long *out)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 && errno == ESRCH ? -ENOENT : -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the comm may hold spaces and parentheses */
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", out) != 1)
		return -EIO;
	return 0;
}

/* This writer's identity in temporary names, "P<pid>.<start>.<boot>": a
 * sweep tells a dead writer's leftovers from a live one's by it. */
static const char *writer_id(void)
{
	static char id[64];
	static pid_t of;
	unsigned long long start = 0;
	char boot[9];

	if (of != getpid()) {
		of = getpid();
		(void)start_time(of, &start);
		boot_id(boot);
		snprintf(id, sizeof(id), "P%ld.%llu.%s", (long)of, start, boot);
	}
	return id;
}

/* ".tmp-ID-HINT-XXXXXXXX": ID the writer's (writer_id()), the X random:
 * another user cannot guess it; HINT cut to 160 bytes (NAME_MAX). */
static void tmp_name(char *buf, size_t len, const char *hint)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[8];
	char suffix[sizeof(rnd) + 1];

	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
		struct timespec ts;
		unsigned long x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (unsigned long)ts.tv_nsec * 2654435761u ^ (unsigned long)getpid() << 16 ^
		    (unsigned long)rand();
		for (size_t i = 0; i < sizeof(rnd); i++, x >>= 7)
			rnd[i] = (unsigned char)x;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		suffix[i] = chars[rnd[i] % (sizeof(chars) - 1)];
	suffix[sizeof(rnd)] = '\0';
	snprintf(buf, len, ".tmp-%s-%.160s-%s", writer_id(), hint, suffix);
}

enum tmp_kind { TMP_FILE, TMP_DIR, TMP_LINK };

/* A new temporary entry ".tmp-HINT-XXXXXXXX" in dirfd, its name in name: a
 * file (returns its fd, opened for writing), a directory or a symlink to
 * target (return 0). Never follows or reuses an existing entry. -errno. */
static int make_tmp(int dirfd, const char *hint, enum tmp_kind kind, const char *target,
		    mode_t mode, char *name, size_t len)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		int r;

		tmp_name(name, len, hint);
		if (kind == TMP_FILE)
			r = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				   mode);
		else if (kind == TMP_DIR)
			r = mkdirat(dirfd, name, mode);
		else
			r = symlinkat(target, dirfd, name);
		if (r >= 0)
			return r;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Mode of the directories made for files of mode m: x wherever r. */
static mode_t dir_mode(mode_t m)
{
	return m | ((m & 0444) >> 2);
}

/* Give what was just made (fd) its exact mode (whatever the umask) and
 * owner: 0 or -errno. */
static int settle(const struct st_outdir *d, int fd, mode_t mode)
{
	if (fchmod(fd, mode) || (d->uid != (uid_t)-1 && fchown(fd, d->uid, d->gid)))
		return -errno;
	return 0;
}

static long sudo_uid(void)
{
	const char *s = getenv("SUDO_UID");
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v < 0 ? -1 : v;
}

/* The invoking user's ids when root runs under sudo: what is made is
 * theirs. */
static void owner(uid_t *uid, gid_t *gid)
{
	long u = sudo_uid();
	const char *g = getenv("SUDO_GID");
	char *end;
	long v = -1;

	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (geteuid() != 0 || u < 0)
		return;
	if (g && *g) {
		errno = 0;
		v = strtol(g, &end, 10);
		if (errno || *end || v < 0)
			v = -1;
	}
	*uid = (uid_t)u;
	*gid = (gid_t)v;
}

int st_outdir__trusted(uid_t euid, long sudo, const struct stat *st, char *why, size_t len)
{
	bool shared = (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
	const char *writers = st->st_mode & S_IWOTH ? "everyone" : "its group";
	unsigned mode = (unsigned)(st->st_mode & 07777);
	struct passwd *pw;

	if (euid != 0)
		return 0;
	if (st->st_uid != euid && !(sudo >= 0 && st->st_uid == (uid_t)sudo && !shared)) {
		pw = getpwuid(st->st_uid);
		snprintf(why, len, "it is owned by %s%suid %u%s, not by root%s%s%s%s%04o)",
			 pw ? pw->pw_name : "", pw ? " (" : "", (unsigned)st->st_uid, pw ? ")" : "",
			 sudo >= 0 && !shared ? " or the sudo user" : "",
			 shared ? ", and writable by " : " (mode ", shared ? writers : "",
			 shared ? " (mode " : "", mode);
		return -EPERM;
	}
	if (shared && !(st->st_mode & S_ISVTX)) {
		snprintf(why, len, "it is writable by %s (mode %04o) without the sticky bit, so "
			 "anyone there could replace the reports", writers, mode);
		return -EPERM;
	}
	return 0;
}

/* Make path's missing parents (mode, then given to uid:gid unless -1). */
static int mkdir_parents(char *path, mode_t mode, uid_t uid, gid_t gid)
{
	char *last = strrchr(path, '/');

	if (!last || last == path)
		return 0;
	for (char *s = path + 1; s <= last; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (!mkdir(path, mode)) {
			if (chmod(path, mode) || (uid != (uid_t)-1 && lchown(path, uid, gid))) {
				int err = -errno;

				*s = '/';
				return err;
			}
		} else if (errno != EEXIST) {
			int err = -errno;

			*s = '/';
			return err;
		}
		*s = '/';
	}
	return 0;
}

/* Write and remove a probe file: a read-only or full file system fails now. */
static int probe(struct st_outdir *d)
{
	static const char zeros[PROBE_BYTES];
	char name[128];
	int fd = make_tmp(d->fd, "probe", TMP_FILE, NULL, 0600, name, sizeof(name)), err = 0;

	if (fd < 0)
		return fd;
	for (size_t done = 0; done < sizeof(zeros);) {
		ssize_t n = write(fd, zeros + done, sizeof(zeros) - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	close(fd);
	unlinkat(d->fd, name, 0);
	return err;
}

static struct st_outdir *outdir_new(int fd, const char *path, const char *name, mode_t mode)
{
	struct st_outdir *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->fd = fd;
	d->mode = mode;
	owner(&d->uid, &d->gid);
	d->path = strdup(path);
	d->name = name ? strdup(name) : NULL;
	if (!d->path || (name && !d->name)) {
		free(d->path);
		free(d->name);
		free(d);
		return NULL;
	}
	return d;
}

int st_outdir__open(const char *path, struct st_outdir **out)
{
	return st_outdir__open_mode(path, 0, out);
}

/* The failure's one line, on log (st_outdir__retry: NULL, none). */
__attribute__((format(printf, 2, 3)))
static void say(FILE *log, const char *fmt, ...)
{
	va_list ap;

	if (!log)
		return;
	va_start(ap, fmt);
	vfprintf(log, fmt, ap);
	va_end(ap);
}

static int open_mode(const char *path, mode_t mode, FILE *log, struct st_outdir **out)
{
	char *p = strdup(path), why[256];
	bool made = false;
	size_t len;
	struct stat st;
	uid_t uid;
	gid_t gid;
	int fd = -1, err;

	mode = mode ? mode & 0777 : ST_OUTDIR_MODE;
	owner(&uid, &gid);

	*out = NULL;
	if (!p || !*p) {
		err = p ? -EINVAL : -ENOMEM;
		say(log, "%s: cannot use output directory '%s': %s\n", prog(), path,
			strerror(-err));
		goto cleanup;
	}
	/* "dir/" would follow a symlink named dir */
	for (len = strlen(p); len > 1 && p[len - 1] == '/'; len--)
		p[len - 1] = '\0';
	if (!(err = mkdir_parents(p, dir_mode(mode), uid, gid)) && !mkdir(p, dir_mode(mode)))
		made = true;
	else if (!err && errno != EEXIST)
		err = -errno;
	if (err) {
		say(log, "%s: cannot create output directory %s: %s (give another -o)\n",
			prog(), p, strerror(-err));
		goto cleanup;
	}
	fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode) && (err = -ELOOP))
			say(log, "%s: output directory %s is a symbolic link: refused, a link "
				"can be switched under us (give the directory it points to with -o)\n",
				prog(), p);
		else if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode))
			say(log, "%s: output directory %s is not a directory (remove it or "
				"give another -o)\n", prog(), p);
		else
			say(log, "%s: cannot open output directory %s: %s\n", prog(), p,
				strerror(-err));
		goto cleanup;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		say(log, "%s: cannot stat output directory %s: %s\n", prog(), p,
			strerror(-err));
		goto cleanup;
	}
	if ((err = st_outdir__trusted(geteuid(), sudo_uid(), &st, why, sizeof(why)))) {
		say(log, "%s: refusing output directory %s: %s (running as root: give "
			"another -o, a new directory is created with mode %04o)\n", prog(), p, why,
			(unsigned)dir_mode(mode));
		goto cleanup;
	}
	*out = outdir_new(fd, p, NULL, mode);
	if (*out && made && (err = settle(*out, fd, dir_mode(mode)))) {
		say(log, "%s: cannot set the mode or owner of output directory %s: %s\n",
			prog(), p, strerror(-err));
		st_outdir__free(*out);
		*out = NULL;
		fd = -1;	/* closed with *out */
		goto cleanup;
	}
	if (!*out) {
		err = -ENOMEM;
		say(log, "%s: out of memory\n", prog());
		goto cleanup;
	}
	fd = -1;
	(void)st_outdir__sweep(*out);	/* before the probe: they may be what fills it */
	if ((err = probe(*out))) {
		say(log, "%s: cannot write in output directory %s: %s (give a writable -o)\n",
			prog(), p, strerror(-err));
		st_outdir__free(*out);
		*out = NULL;
	}
cleanup:
	if (fd >= 0)
		close(fd);
	free(p);
	return err;
}

int st_outdir__open_mode(const char *path, mode_t mode, struct st_outdir **out)
{
	return open_mode(path, mode, stderr, out);
}

int st_outdir__retry(const char *path, mode_t mode, struct st_outdir **out)
{
	return open_mode(path, mode, NULL, out);
}

void st_outdir__free(struct st_outdir *d)
{
	if (!d)
		return;
	if (d->fd >= 0)
		close(d->fd);
	free(d->path);
	free(d->name);
	free(d);
}

const char *st_outdir__path(const struct st_outdir *d)
{
	return d->path;
}

void st_outdir__set_abort(struct st_outdir *d, const volatile sig_atomic_t *flag, int mask)
{
	d->abort_flag = flag;
	d->abort_mask = mask;
}

static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
	struct st_outfile *of = cookie;
	size_t done = 0;

	while (!of->err && done < size) {
		ssize_t n;

		if (aborted(of->dir)) {
			of->err = ECANCELED;
			break;
		}
		n = write(of->fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			of->err = n < 0 ? errno : EIO;
		else
			done += (size_t)n;
	}
	if (of->err)
		errno = of->err;
	return (ssize_t)done;
}

int st_outfile__begin(struct st_outdir *d, const char *name, struct st_outfile **out, FILE **f)
{
	static const cookie_io_functions_t io = { .write = cookie_write };
	struct st_outfile *of = calloc(1, sizeof(*of));
	int err;

	*out = NULL;
	*f = NULL;
	if (!of)
		return -ENOMEM;
	of->dir = d;
	snprintf(of->name, sizeof(of->name), "%s", name);
	of->fd = make_tmp(d->fd, name, TMP_FILE, NULL, d->mode, of->tmp, sizeof(of->tmp));
	if ((err = of->fd < 0 ? of->fd : 0))
		goto fail;
	if ((err = settle(d, of->fd, d->mode))) {
		close(of->fd);
		unlinkat(d->fd, of->tmp, 0);
		goto fail;
	}
	of->f = fopencookie(of, "w", io);
	if (!of->f) {
		err = -ENOMEM;
		close(of->fd);
		unlinkat(d->fd, of->tmp, 0);
		goto fail;
	}
	*out = of;
	*f = of->f;
	return 0;
fail:
	fprintf(stderr, "%s: cannot write %s/%s: %s\n", prog(), d->path, name, strerror(-err));
	free(of);
	return err;
}

int st_outfile__end(struct st_outfile *of, int err)
{
	struct st_outdir *d;

	if (!of)
		return err;
	d = of->dir;
	if (fclose(of->f) && !err)
		err = -(of->err ? of->err : EIO);
	/* a failed write explains the writer's -EIO */
	if (of->err && (!err || err == -EIO))
		err = -of->err;
	if (!err && aborted(d))
		err = -ECANCELED;
	if (!err && fsync(of->fd))
		err = -errno;
	close(of->fd);
	if (!err && renameat(d->fd, of->tmp, d->fd, of->name))
		err = -errno;
	if (err) {
		unlinkat(d->fd, of->tmp, 0);
		if (err != -ECANCELED)
			fprintf(stderr, "%s: cannot write %s/%s: %s%s\n", prog(), d->path, of->name,
				strerror(-err), err == -ENOSPC || err == -EDQUOT ?
				" (free some space there or give another -o)" : "");
	}
	free(of);
	return err;
}

int st_outdir__write_text(struct st_outdir *d, const char *name, const char *text)
{
	struct st_outfile *of;
	FILE *f;
	int err = st_outfile__begin(d, name, &of, &f);

	if (err)
		return err;
	return st_outfile__end(of, fputs(text, f) < 0 ? -EIO : 0);
}

int st_outdir__mktemp(struct st_outdir *d, const char *hint, struct st_outdir **out)
{
	char name[256], path[4400];
	int fd, err;

	*out = NULL;
	if ((err = make_tmp(d->fd, hint, TMP_DIR, NULL, dir_mode(d->mode), name, sizeof(name))))
		goto fail;
	fd = openat(d->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || (err = settle(d, fd, dir_mode(d->mode)))) {
		err = fd < 0 ? -errno : err;
		if (fd >= 0)
			close(fd);
		unlinkat(d->fd, name, AT_REMOVEDIR);
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/%s", d->path, name);
	*out = outdir_new(fd, path, name, d->mode);
	if (!*out) {
		close(fd);
		unlinkat(d->fd, name, AT_REMOVEDIR);
		err = -ENOMEM;
		goto fail;
	}
	(*out)->abort_flag = d->abort_flag;
	(*out)->abort_mask = d->abort_mask;
	return 0;
fail:
	fprintf(stderr, "%s: cannot create a directory in %s: %s\n", prog(), d->path,
		strerror(-err));
	return err;
}

/* fn(ctx, name) for each entry of the directory fd, until it returns
 * nonzero; that, or 0, or -errno. */
static int list_fd(int fd, int (*fn)(void *ctx, const char *name), void *ctx)
{
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;
	struct dirent *e;
	DIR *dir;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		err = -errno;
		close(dfd);
		return err;
	}
	while (!err && (e = readdir(dir)))
		err = fn(ctx, e->d_name);
	closedir(dir);
	return err;
}

struct clearing {
	int fd, err;
};

static int unlink_entry(void *ctx, const char *name)
{
	struct clearing *c = ctx;

	if (strcmp(name, ".") && strcmp(name, "..") && unlinkat(c->fd, name, 0) &&
	    errno != ENOENT)
		c->err = -errno;
	return 0;
}

/* Unlink the files of the directory fd (subdirectories are not ours: kept). */
static int clear_dir(int fd)
{
	struct clearing c = { .fd = fd };
	int err = list_fd(fd, unlink_entry, &c);

	return err ? err : c.err;
}

void st_outdir__discard(struct st_outdir *d, struct st_outdir *sub)
{
	if (!sub)
		return;
	clear_dir(sub->fd);
	unlinkat(d->fd, sub->name, AT_REMOVEDIR);
	st_outdir__free(sub);
}

int st_outdir__commit(struct st_outdir *d, struct st_outdir *sub, const char *name)
{
	int err = 0;

	if (aborted(d))
		err = -ECANCELED;
	else if (renameat2(d->fd, sub->name, d->fd, name, RENAME_NOREPLACE))
		err = -errno;
	if (err) {
		if (err != -ECANCELED)
			fprintf(stderr, "%s: cannot rename %s to %s/%s: %s\n", prog(), sub->path,
				d->path, name, strerror(-err));
		st_outdir__discard(d, sub);
		return err;
	}
	st_outdir__free(sub);
	return 0;
}

int st_outdir__remove(struct st_outdir *d, const char *name)
{
	int fd = openat(d->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = clear_dir(fd);
	close(fd);
	if (unlinkat(d->fd, name, AT_REMOVEDIR) && !err)
		err = -errno;
	return err;
}

int st_outdir__symlink(struct st_outdir *d, const char *target, const char *name)
{
	char tmp[300];
	int err = make_tmp(d->fd, name, TMP_LINK, target, 0, tmp, sizeof(tmp));

	if (err)
		return err;
	if (d->uid != (uid_t)-1)	/* a link's mode means nothing; its owner */
		fchownat(d->fd, tmp, d->uid, d->gid, AT_SYMLINK_NOFOLLOW);
	if (renameat(d->fd, tmp, d->fd, name)) {
		err = -errno;
		unlinkat(d->fd, tmp, 0);
	}
	return err;
}

int st_outdir__exists(struct st_outdir *d, const char *name)
{
	struct stat st;

	return fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

int st_outdir__list(struct st_outdir *d, int (*fn)(void *ctx, const char *name), void *ctx)
{
	return list_fd(d->fd, fn, ctx);
}

/* Whether the writer named in temporary name is gone: another boot, no
 * such process, or another process under its pid. Names without an
 * identity (not ours, or older stacktreed's) and unreadable processes
 * count as live: when in doubt, keep. */
bool st_outdir__tmp_dead(const char *name)
{
	unsigned long long start, now;
	char boot[16], here[9];
	long pid;
	int used = 0, r;

	if (sscanf(name, ".tmp-P%ld.%llu.%15[0-9a-f]-%n", &pid, &start, boot, &used) != 3 ||
	    !used || pid <= 0)
		return false;
	boot_id(here);
	if (strcmp(boot, here))
		return true;
	r = start_time(pid, &now);
	return r == -ENOENT || (!r && now != start);
}

struct sweep {
	struct st_outdir *d;
	int removed;
};

static int sweep_entry(void *ctx, const char *name)
{
	struct sweep *sw = ctx;
	struct stat st;

	if (strncmp(name, ".tmp-P", 6) || !st_outdir__tmp_dead(name) ||
	    fstatat(sw->d->fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	if (S_ISDIR(st.st_mode) ? !st_outdir__remove(sw->d, name) : !unlinkat(sw->d->fd, name, 0))
		sw->removed++;
	return 0;
}

int st_outdir__sweep(struct st_outdir *d)
{
	struct sweep sw = { .d = d };
	int err = list_fd(d->fd, sweep_entry, &sw);

	if (sw.removed)
		fprintf(stderr, "%s: removed %d temporar%s left in %s by writers no longer "
			"running (killed while writing)\n", prog(), sw.removed,
			sw.removed == 1 ? "y" : "ies", d->path);
	return err ? err : sw.removed;
}

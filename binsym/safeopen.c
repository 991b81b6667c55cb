/* safeopen.c - open a file for parsing: a bounded regular file, never a
 * FIFO or a device, optionally resolved inside a process's root (see
 * safeopen.h). */
#include "binsym/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "binsym/elflayout.h"

static int open_path_fd(const char *path, const struct st_safe_open *o)
{
	int flags = O_PATH | O_CLOEXEC | (o->nofollow ? O_NOFOLLOW : 0);
	struct open_how how = {
		.flags = (__u64)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (o->root_fd < 0)
		fd = open(path, flags);
	else
		fd = syscall(SYS_openat2, o->root_fd, path, &how, sizeof(how));
	return fd < 0 ? -errno : (int)fd;
}

int st_safe_open(const char *path, const struct st_safe_open *o, struct stat *st)
{
	__u64 max = o && o->max_size ? o->max_size : (__u64)ST_SAFE_OPEN_MAX_MB << 20;
	struct st_safe_open none = { .root_fd = -1 };
	char self[64];
	struct stat sb;
	int pfd, fd = -1, err = 0, fl;

	if (!o)
		o = &none;
	if (!st)
		st = &sb;
	pfd = open_path_fd(path, o);
	if (pfd < 0) {
		err = pfd;
		goto cleanup;
	}
	if (fstat(pfd, st)) {
		err = -errno;
		goto cleanup;
	}
	if (S_ISLNK(st->st_mode)) {	/* O_PATH|O_NOFOLLOW opens the link itself */
		err = ST_SAFE_SYMLINK;
		goto cleanup;
	}
	if (!S_ISREG(st->st_mode)) {
		err = ST_SAFE_NOT_REGULAR;
		goto cleanup;
	}
	if ((__u64)st->st_size > max) {
		err = ST_SAFE_TOO_LARGE;
		goto cleanup;
	}
	/* the inode just checked, opened for reading; O_NONBLOCK: a lease
	 * break or a mandatory lock fails at once instead of waiting */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) || fstat(fd, st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st->st_mode) || (__u64)st->st_size > max) {	/* grew meanwhile */
		err = S_ISREG(st->st_mode) ? ST_SAFE_TOO_LARGE : ST_SAFE_NOT_REGULAR;
		goto cleanup;
	}
	err = st_elf_layout__check_fd(fd, (__u64)st->st_size, (__u64)st->st_blocks * 512,
				      o->layout_budget);
	if (err && err != ST_SAFE_IMPLAUSIBLE)
		err = 0;	/* unreadable header: libelf's error to tell */
cleanup:
	if (pfd >= 0)
		close(pfd);
	if (err && o->stats) {
		if (err == ST_SAFE_NOT_REGULAR)
			o->stats->not_regular++;
		else if (err == ST_SAFE_TOO_LARGE)
			o->stats->too_large++;
		else if (err == ST_SAFE_SYMLINK)
			o->stats->symlink++;
		else if (err == ST_SAFE_IMPLAUSIBLE) {
			o->stats->implausible++;
			snprintf(o->stats->implausible_path, sizeof(o->stats->implausible_path),
				 "%s", path);
		}
	}
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

int st_safe_open_in_proc(unsigned pid, const char *path, const struct st_safe_open *o,
			 struct stat *st)
{
	struct st_safe_open in = { .root_fd = -1 };
	char root[64];
	int fd;

	if (o)
		in = *o;
	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	in.root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (in.root_fd < 0)
		return -errno;
	fd = st_safe_open(path, &in, st);
	close(in.root_fd);
	return fd;
}

bool st_file_trusted(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool st_file_is_mapped(int fd, const struct stat *st, __u64 dev, __u64 ino)
{
	struct statfs fs;

	if (!ino)
		return true;
	if ((__u64)st->st_ino != ino)
		return false;
	if ((__u64)st->st_dev == dev)
		return true;
	return !fstatfs(fd, &fs) &&
	       (fs.f_type == OVERLAYFS_SUPER_MAGIC || fs.f_type == BTRFS_SUPER_MAGIC);
}

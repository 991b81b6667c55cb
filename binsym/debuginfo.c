/* debuginfo.c - separate debug files by build id or .gnu_debuglink. */
#include "binsym/debuginfo.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "binsym/elf.h"
#include "binsym/safeopen.h"
#include "binsym/worklimit.h"

/* The CRC-32 of the whole file (bounded by the size limit of its open),
 * polling the work limit every 1 MiB: -EINTR when it says stop. */
static int crc_of_fd(int fd, struct st_work *w, __u32 *out)
{
	unsigned char buf[64 * 1024];
	uLong crc = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	for (;;) {
		if (!(off & ((1 << 20) - 1)) && st_work__over(w))
			return -EINTR;
		n = pread(fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	*out = (__u32)crc;
	return 0;
}

/* Open path as ELF: inside the process's root (in_proc: the last
 * component no symlink) or in ours (trusted places, symlinks followed). */
static int open_elf(const struct st_debug_query *q, const char *path, bool in_proc,
		    struct st_elf **out)
{
	struct st_safe_open o = { .root_fd = in_proc ? q->root_fd : -1, .nofollow = in_proc };
	int fd;

	if (in_proc && q->root_fd < -1)
		return -ENOENT;	/* the process is gone: its root too */
	if (q->open) {
		o.max_size = q->open->max_size;
		o.stats = q->open->stats;
		o.layout_budget = q->open->layout_budget;
	}
	fd = st_safe_open(path, &o, NULL);
	if (fd < 0)
		return fd;
	return st_elf__open_fd(fd, out);
}

int st_debuginfo__open_by_id(const struct st_debug_query *q, const char *path,
			     struct st_elf **out)
{
	char hex[ST_BUILD_ID_HEX_MAX];
	struct st_elf *e = NULL;
	int err;

	if (!q->build_id)
		return -ENOENT;
	err = open_elf(q, path, false, &e);
	if (err)
		return err;
	if (st_elf__build_id(e, hex) || strcmp(hex, q->build_id) != 0) {
		st_elf__free(e);
		return -EBADMSG;
	}
	*out = e;
	return 0;
}

static int try_build_id(const struct st_debug_query *q, struct st_elf **out)
{
	char path[PATH_MAX];

	if (!q->build_id || strlen(q->build_id) < 3)
		return -ENOENT;
	if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", q->debug_dir,
		     q->build_id, q->build_id + 2) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return st_debuginfo__open_by_id(q, path, out);
}

static int try_debuglink_at(const struct st_debug_query *q, const char *path, bool in_proc,
			    struct st_elf **out)
{
	struct st_elf *e = NULL;
	__u32 crc;
	int err;

	if (q->work && (q->work->cancelled || q->work->out_of_time))
		return -EINTR;
	err = open_elf(q, path, in_proc, &e);
	if (err)
		return err;
	err = crc_of_fd(st_elf__fd(e), q->work, &crc);
	if (!err && crc != q->crc)
		err = -ENOENT;
	if (err) {
		st_elf__free(e);
		return err;
	}
	*out = e;
	return 0;
}

/* A ".." component (the kernel's paths have none; callers' may). */
static bool has_dotdot(const char *path)
{
	const char *p = path;

	while ((p = strstr(p, ".."))) {
		if ((p == path || p[-1] == '/') && (p[2] == '/' || !p[2]))
			return true;
		p += 2;
	}
	return false;
}

static int try_debuglink(const struct st_debug_query *q, struct st_elf **out)
{
	char dir[PATH_MAX], path[PATH_MAX];
	const char *slash;
	size_t len;
	int n;

	if (!q->debuglink || strchr(q->debuglink, '/') || !strcmp(q->debuglink, ".") ||
	    !strcmp(q->debuglink, "..") || !q->path)
		return -ENOENT;
	slash = strrchr(q->path, '/');
	len = slash ? (size_t)(slash - q->path) : 0;
	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, q->path, len);
	dir[len] = '\0';

	n = snprintf(path, sizeof(path), "%s/%s", slash ? dir : ".", q->debuglink);
	if (n < (int)sizeof(path) && !try_debuglink_at(q, path, true, out))
		return 0;
	n = snprintf(path, sizeof(path), "%s/.debug/%s", slash ? dir : ".", q->debuglink);
	if (n < (int)sizeof(path) && !try_debuglink_at(q, path, true, out))
		return 0;
	if (q->path[0] != '/' || has_dotdot(dir))	/* must stay in DEBUG_DIR */
		return -ENOENT;
	n = snprintf(path, sizeof(path), "%s%s/%s", q->debug_dir, dir, q->debuglink);
	if (n < (int)sizeof(path) && !try_debuglink_at(q, path, false, out))
		return 0;
	return -ENOENT;
}

int st_debuginfo__find(const struct st_debug_query *q, struct st_elf **out,
		       const char **how)
{
	if (!try_build_id(q, out)) {
		*how = "build-id";
		return 0;
	}
	if (!try_debuglink(q, out)) {
		*how = "debuglink";
		return 0;
	}
	return -ENOENT;
}

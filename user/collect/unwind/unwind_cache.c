/* unwind_cache.c - compiled CFI rows on disk (see unwind_cache.h). */
#include "user/collect/unwind/unwind_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/hash.h"

#define MAGIC "STCFI\x06\r\n"	/* 8 bytes: version 6 (rbx's rule in the kind's
					 * top bits, ST_UNW_RBX_*; 5: Go code without a stack
					 * depth: ST_UNW_NONE rows; 4: an END row at an entry
					 * point without CFI; 3: pcs from the module's base;
					 * 2: rows of kind ST_UNW_RBX), and a text-mode trap */
#define SUFFIX ".cfi"
#define MAX_KEY 512

struct header {
	char magic[8];
	__u32 row_size;		/* sizeof(struct st_unwind_row) */
	__u32 key_len;
	__u64 nrows;
	__u64 unsupported;
	__u32 crc;		/* zlib crc32 of the key and the rows */
	__u32 pad;
};

struct st_ucache {
	int dirfd;		/* -1: disabled */
	char *dir;
	bool verbose;
	size_t max_bytes, bytes;
	size_t hits, misses, written, rejected, evicted;
};

static char *default_dir(void)
{
	const char *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *d = NULL;

	if (geteuid() == 0)
		return strdup("/var/cache/stacktreed");
	if (base && base[0] == '/') {
		if (asprintf(&d, "%s/stacktreed", base) < 0)
			return NULL;
	} else if (home && home[0] == '/') {
		if (asprintf(&d, "%s/.cache/stacktreed", home) < 0)
			return NULL;
	}
	return d;
}

/* Every cache file (regular, *.cfi, name shorter than 256 bytes) of the
 * directory: fn(ctx, name, its stat). */
static void each_file(struct st_ucache *c, void (*fn)(void *ctx, const char *name,
						      const struct stat *st), void *ctx)
{
	int fd = dup(c->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);	/* a dup shares the offset of the last listing */
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len > strlen(SUFFIX) && len < 256 &&
		    !strcmp(e->d_name + len - strlen(SUFFIX), SUFFIX) &&
		    !fstatat(c->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
			fn(ctx, e->d_name, &st);
	}
	closedir(d);
}

static void add_size(void *ctx, const char *name, const struct stat *st)
{
	(void)name;
	((struct st_ucache *)ctx)->bytes += (size_t)st->st_size;
}

struct st_ucache *st_ucache__new(const char *dir, size_t max_bytes, bool verbose)
{
	struct st_ucache *c = calloc(1, sizeof(*c));
	const char *why = NULL;
	struct stat st;
	int made;

	if (!c)
		return NULL;
	c->dirfd = -1;
	c->verbose = verbose;
	c->max_bytes = max_bytes;
	c->dir = dir ? strdup(dir) : default_dir();
	if (!c->dir) {
		if (dir || errno == ENOMEM) {
			free(c);
			return NULL;
		}
		why = "no HOME to put it under";
		goto disable;
	}
	/* the default's parent (~/.cache on a new account) is made 0700 too,
	 * as the XDG base directory spec asks; a DIR given is made alone */
	made = mkdir(c->dir, 0700);
	if (made && errno == ENOENT && !dir) {
		char *slash = strrchr(c->dir, '/');

		*slash = 0;
		mkdir(c->dir, 0700);	/* its failure is the retry's */
		*slash = '/';
		made = mkdir(c->dir, 0700);
	}
	if (made && errno != EEXIST) {
		why = strerror(errno);
		goto disable;
	}
	c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dirfd < 0) {
		why = errno == ELOOP || errno == ENOTDIR ? "not a directory (or a symbolic link)" :
							   strerror(errno);
		goto disable;
	}
	if (fstat(c->dirfd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		why = "not ours, or writable by others";
		goto disable;
	}
	/* private: a cache made by an older version may be 0755 (its files,
	 * always 0600, name the build ids of what runs here) */
	if (st.st_mode & 077)
		fchmod(c->dirfd, 0700);
	each_file(c, add_size, c);
	return c;
disable:
	fprintf(stderr, "stacktreed: unwind table cache %s not used: %s (tables are compiled "
		"every time; --unwind-cache DIR names another)\n", c->dir ? c->dir : "", why);
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
	return c;
}

void st_ucache__free(struct st_ucache *c)
{
	if (!c)
		return;
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c->dir);
	free(c);
}

/* The file name of key: FNV-1a 64 (st_hash_str) in hex. */
static void name_of(const char *key, char name[32])
{
	snprintf(name, 32, "%016llx" SUFFIX, (unsigned long long)st_hash_str(key));
}

static __u32 checksum(const char *key, size_t klen, const struct st_unwind_row *rows, size_t n)
{
	uLong crc = crc32(0L, Z_NULL, 0);

	crc = crc32(crc, (const Bytef *)key, (uInt)klen);
	for (size_t off = 0, total = n * sizeof(*rows); off < total;) {
		size_t chunk = total - off > (1u << 30) ? (1u << 30) : total - off;

		crc = crc32(crc, (const Bytef *)rows + off, (uInt)chunk);
		off += chunk;
	}
	return (__u32)crc;
}

/* Rows as the compiler makes them: sorted, known kinds and flags. */
static bool rows_ok(const struct st_unwind_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if ((r[i].kind & ST_UNW_KIND_MASK) > ST_UNW_RBX ||
		    (r[i].kind & ~(ST_UNW_KIND_MASK | ST_UNW_F_RBP_AT_RBP | ST_UNW_F_OFF8 |
				   3u << ST_UNW_RBX_SHIFT)) ||
		    ((r[i].kind & ST_UNW_KIND_MASK) == ST_UNW_NONE &&
		     (r[i].kind & 3u << ST_UNW_RBX_SHIFT)))	/* (BPF's flags there) */
			return false;
		if (i && r[i].pc < r[i - 1].pc)
			return false;
	}
	return true;
}

static bool read_all(int fd, void *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t got = read(fd, (char *)buf + off, len - off);

		if (got <= 0)
			return false;
		off += (size_t)got;
	}
	return true;
}

int st_ucache__get(struct st_ucache *c, const char *key, struct st_unwind_row **rows, size_t *n,
		   size_t *unsupported)
{
	size_t klen = strlen(key);
	struct st_unwind_row *r = NULL;
	char name[32], kbuf[MAX_KEY];
	struct header h;
	struct stat st;
	int fd;

	if (c->dirfd < 0 || klen > MAX_KEY)
		return -ENOENT;
	name_of(key, name);
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		c->misses++;
		return -ENOENT;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (size_t)st.st_size < sizeof(h) || !read_all(fd, &h, sizeof(h)) ||
	    memcmp(h.magic, MAGIC, sizeof(h.magic)) || h.row_size != sizeof(*r) ||
	    h.key_len != klen || h.nrows == 0 || h.nrows > ST_UNWIND_MAX_MODULE_ROWS ||
	    (size_t)st.st_size != sizeof(h) + klen + h.nrows * sizeof(*r) ||
	    !read_all(fd, kbuf, klen) || memcmp(kbuf, key, klen))
		goto reject;
	r = malloc(h.nrows * sizeof(*r));
	if (!r || !read_all(fd, r, h.nrows * sizeof(*r)) ||
	    checksum(key, klen, r, h.nrows) != h.crc || !rows_ok(r, h.nrows))
		goto reject;
	futimens(fd, NULL);	/* recently used: evicted last */
	close(fd);
	*rows = r;
	*n = h.nrows;
	*unsupported = h.unsupported;
	c->hits++;
	return 0;
reject:
	if (c->verbose)
		fprintf(stderr, "stacktreed: unwind table cache: %s/%s rejected (not ours, "
			"truncated or corrupt)\n", c->dir, name);
	free(r);
	close(fd);
	c->rejected++;
	c->misses++;
	return -ENOENT;
}

struct oldest {
	char name[256];
	struct timespec t;
	size_t size;
};

static void keep_oldest(void *ctx, const char *name, const struct stat *st)
{
	struct oldest *o = ctx;

	if (!o->name[0] || st->st_mtim.tv_sec < o->t.tv_sec ||
	    (st->st_mtim.tv_sec == o->t.tv_sec && st->st_mtim.tv_nsec < o->t.tv_nsec)) {
		snprintf(o->name, sizeof(o->name), "%s", name);
		o->t = st->st_mtim;
		o->size = (size_t)st->st_size;
	}
}

/* Oldest cache files out until the total is within the bound. */
static void evict(struct st_ucache *c)
{
	while (c->bytes > c->max_bytes) {
		struct oldest o = { .name = "" };

		each_file(c, keep_oldest, &o);
		if (!o.name[0] || unlinkat(c->dirfd, o.name, 0))
			return;
		c->bytes = c->bytes > o.size ? c->bytes - o.size : 0;
		c->evicted++;
	}
}

static bool write_all(int fd, const void *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t put = write(fd, (const char *)buf + off, len - off);

		if (put <= 0)
			return false;
		off += (size_t)put;
	}
	return true;
}

void st_ucache__put(struct st_ucache *c, const char *key, const struct st_unwind_row *rows,
		    size_t n, size_t unsupported)
{
	size_t klen = strlen(key), size = sizeof(struct header) + klen + n * sizeof(*rows);
	struct header h = { .row_size = sizeof(*rows), .key_len = (__u32)klen, .nrows = n,
			    .unsupported = unsupported };
	char name[32], tmp[64];
	unsigned char rnd[8];
	size_t replaced = 0;
	struct stat old;
	bool ok;
	int fd;

	if (c->dirfd < 0 || klen > MAX_KEY || !n || size > c->max_bytes)
		return;
	memcpy(h.magic, MAGIC, sizeof(h.magic));
	h.crc = checksum(key, klen, rows, n);
	name_of(key, name);
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		return;
	snprintf(tmp, sizeof(tmp), ".tmp-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
		 rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ok = write_all(fd, &h, sizeof(h)) && write_all(fd, key, klen) &&
	     write_all(fd, rows, n * sizeof(*rows));
	if (close(fd))
		ok = false;
	if (ok && !fstatat(c->dirfd, name, &old, AT_SYMLINK_NOFOLLOW) && S_ISREG(old.st_mode))
		replaced = (size_t)old.st_size;
	if (!ok || renameat(c->dirfd, tmp, c->dirfd, name)) {
		unlinkat(c->dirfd, tmp, 0);
		return;
	}
	c->written++;
	c->bytes = (c->bytes > replaced ? c->bytes - replaced : 0) + size;
	evict(c);
}

void st_ucache__stats(const struct st_ucache *c, struct st_ucache_stats *out)
{
	out->hits = c->hits;
	out->misses = c->misses;
	out->written = c->written;
	out->rejected = c->rejected;
	out->evicted = c->evicted;
	out->bytes = c->bytes;
	out->max_bytes = c->max_bytes;
	out->dir = c->dirfd >= 0 ? c->dir : NULL;
}

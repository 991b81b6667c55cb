/* debuginfod.c - debug files by build id from debuginfod servers (see
 * debuginfod.h). */
#include "binsym/debuginfod.h"
#include "common/grow.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binsym/worklimit.h"

#define ROOT_CACHE_PARENT "/var/cache/stacktreed"
#define ROOT_CACHE ROOT_CACHE_PARENT "/debuginfod"

struct outcome {
	char *build_id;
	bool trusted;
	char *path;		/* NULL: nothing usable */
};

/* libdebuginfod, loaded only when fetching is on: linked in, it and libcurl
 * (gnutls, krb5, ldap, ~30 libraries, 5 MiB of RSS, curl_global_init at
 * every start) would load into every daemon run. */
struct api {
	void *handle;		/* never closed, see st_dbgd__free() */
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int len,
			      char **path);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
	void (*set_user_data)(debuginfod_client *c, void *data);
};

#define GET_USER_DATA "debuginfod_get_user_data"

struct st_dbgd {
	struct api api;
	debuginfod_client *client;
	char *cache_dir;	/* NULL: libdebuginfod's default */
	double timeout_s;
	__u64 max_size;
	bool verbose, warned;
	unsigned failures[2];	/* in a row, [trusted] */
	bool (*cancel)(void *ctx);
	void *cancel_ctx;
	/* the fetch under way, for the progress callback */
	double deadline;
	bool timed_out, too_large;
	struct outcome *seen;
	size_t nseen, seen_cap;
	struct st_dbgd_stats stats;
};

/* libdebuginfod calls this while a transfer runs (a: bytes so far, b: the
 * expected total or 0): non-zero aborts it (-ECANCELED). */
static int progress(debuginfod_client *c, long a, long b)
{
	void *(*get_user_data)(debuginfod_client *c);
	struct st_dbgd *d;

	/* the library is loaded RTLD_GLOBAL; d is nowhere else to be found */
	*(void **)&get_user_data = dlsym(RTLD_DEFAULT, GET_USER_DATA);
	d = get_user_data ? get_user_data(c) : NULL;
	if (!d)
		return 0;
	if (d->max_size && ((a > 0 && (__u64)a > d->max_size) || (b > 0 && (__u64)b > d->max_size))) {
		d->too_large = true;
		return 1;
	}
	if (st_work__now() > d->deadline || (d->cancel && d->cancel(d->cancel_ctx))) {
		d->timed_out = true;
		return 1;
	}
	return 0;
}

static double default_timeout(void)
{
	const char *v = getenv(DEBUGINFOD_TIMEOUT_ENV_VAR);
	char *end;
	double t;

	if (v && *v) {
		t = strtod(v, &end);
		if (!*end && t > 0 && t <= 3600)
			return t;
	}
	return ST_DBGD_TIMEOUT_S;
}

/* Whether dir (absolute) is ours: every parent a real directory owned by
 * root or us, not writable by others unless sticky; dir itself owned by us
 * and not writable by group or others. NULL, or why not. */
static const char *check_dir(const char *dir)
{
	char comp[NAME_MAX + 1];
	const char *p = dir;
	uid_t me = geteuid();
	struct stat st;
	size_t len;
	int fd, next;

	if (dir[0] != '/')
		return "not an absolute path";
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return strerror(errno);
	for (;;) {
		if (fstat(fd, &st)) {
			close(fd);
			return strerror(errno);
		}
		while (*p == '/')
			p++;
		if (!*p)
			break;
		/* a parent: anyone who may replace dir's entry in it owns the cache */
		if ((st.st_uid != 0 && st.st_uid != me) ||
		    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
			close(fd);
			return "a parent directory is writable by other users";
		}
		len = strcspn(p, "/");
		if (len > NAME_MAX) {
			close(fd);
			return "a name too long";
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		if (!strcmp(comp, "..")) {
			close(fd);
			return "a '..' component";
		}
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return errno == ELOOP || errno == ENOTDIR ?
				"not a directory (or a symbolic link on the way)" : strerror(errno);
		fd = next;
	}
	close(fd);
	if (st.st_uid != me || (st.st_mode & 022))
		return "not ours, or writable by others";
	return NULL;
}

/* The cache directory to use (malloc'd), or NULL with *err = 0: the
 * library's default. */
static char *cache_dir(const struct st_dbgd_opts *o, int *err)
{
	const char *v = o->cache_dir ? o->cache_dir : getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR);
	char *dir;

	*err = 0;
	if (v && *v)
		dir = strdup(v);
	else if (geteuid() == 0) {
		/* not libdebuginfod's default: HOME may be a user's (sudo) */
		if (mkdir(ROOT_CACHE_PARENT, 0700) && errno != EEXIST) {
			*err = -errno;
			return NULL;
		}
		dir = strdup(ROOT_CACHE);
	} else
		return NULL;
	if (!dir)
		*err = -ENOMEM;
	return dir;
}

static int load_api(struct api *a)
{
	a->handle = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_GLOBAL);
	if (!a->handle) {
		fprintf(stderr, "stacktreed: debuginfod: cannot load %s: %s (install "
			"libdebuginfod1, or --no-debuginfod)\n", DEBUGINFOD_SONAME, dlerror());
		return -ENOSYS;
	}
	*(void **)&a->begin = dlsym(a->handle, "debuginfod_begin");
	*(void **)&a->end = dlsym(a->handle, "debuginfod_end");
	*(void **)&a->find_debuginfo = dlsym(a->handle, "debuginfod_find_debuginfo");
	*(void **)&a->set_progressfn = dlsym(a->handle, "debuginfod_set_progressfn");
	*(void **)&a->set_user_data = dlsym(a->handle, "debuginfod_set_user_data");
	if (!a->begin || !a->end || !a->find_debuginfo || !a->set_progressfn ||
	    !a->set_user_data || !dlsym(a->handle, GET_USER_DATA)) {
		fprintf(stderr, "stacktreed: debuginfod: %s lacks the client functions "
			"(elfutils 0.179 or later needed)\n", DEBUGINFOD_SONAME);
		return -ENOSYS;
	}
	return 0;
}

int st_dbgd__new(const struct st_dbgd_opts *o, struct st_dbgd **out)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR), *why;
	struct st_dbgd *d = NULL;
	int err;

	*out = NULL;
	if (!urls || !*urls) {
		fprintf(stderr, "stacktreed: debuginfod: DEBUGINFOD_URLS is not set: no server "
			"to fetch debug files from (set it, e.g. "
			"DEBUGINFOD_URLS=https://debuginfod.debian.net, or drop --debuginfod)\n");
		return -ENOSYS;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->timeout_s = o->timeout_s > 0 ? o->timeout_s : default_timeout();
	d->max_size = o->max_size;
	d->verbose = o->verbose;
	d->cancel = o->cancel;
	d->cancel_ctx = o->cancel_ctx;
	d->cache_dir = cache_dir(o, &err);
	if (err) {
		fprintf(stderr, "stacktreed: debuginfod: cannot create %s: %s (debug files are "
			"not fetched; DEBUGINFOD_CACHE_PATH names another cache)\n",
			ROOT_CACHE_PARENT, strerror(-err));
		goto cleanup;
	}
	if (d->cache_dir) {
		if (d->cache_dir[0] != '/') {
			why = "not an absolute path";
			err = -EPERM;
		} else if (mkdir(d->cache_dir, 0700) && errno != EEXIST) {
			err = -errno;
			why = strerror(errno);
		} else {
			why = check_dir(d->cache_dir);
			err = why ? -EPERM : 0;
		}
		if (err) {
			fprintf(stderr, "stacktreed: debuginfod: cache %s not used: %s (debug files "
				"are not fetched; DEBUGINFOD_CACHE_PATH names another cache)\n",
				d->cache_dir, why);
			err = -EPERM;
			goto cleanup;
		}
		/* private: which build ids were fetched names what runs here;
		 * a cache made by an older version may be 0755 (ours: checked) */
		chmod(d->cache_dir, 0700);
		/* libdebuginfod reads the cache path from the environment only */
		if (setenv(DEBUGINFOD_CACHE_PATH_ENV_VAR, d->cache_dir, 1)) {
			err = -errno;
			goto cleanup;
		}
	}
	err = load_api(&d->api);
	if (err)
		goto cleanup;
	d->client = d->api.begin();
	if (!d->client) {
		err = errno ? -errno : -ENOMEM;
		fprintf(stderr, "stacktreed: debuginfod: cannot start the client: %s\n",
			strerror(-err));
		goto cleanup;
	}
	d->api.set_user_data(d->client, d);
	d->api.set_progressfn(d->client, progress);
	*out = d;
	return 0;
cleanup:
	st_dbgd__free(d);
	return err;
}

void st_dbgd__free(struct st_dbgd *d)
{
	if (!d)
		return;
	if (d->client)
		d->api.end(d->client);
	/* the library stays loaded (no dlclose): libcurl and gnutls keep global
	 * state that unloading would leak, and the next dlopen finds it there */
	for (size_t i = 0; i < d->nseen; i++) {
		free(d->seen[i].build_id);
		free(d->seen[i].path);
	}
	free(d->seen);
	free(d->cache_dir);
	free(d);
}

static bool is_build_id(const char *hex)
{
	size_t n = strlen(hex);

	if (n < 2 || n > 128 || n % 2)
		return false;
	return strspn(hex, "0123456789abcdef") == n;
}

static struct outcome *seen(struct st_dbgd *d, const char *build_id, bool trusted)
{
	for (size_t i = 0; i < d->nseen; i++)
		if (d->seen[i].trusted == trusted && !strcmp(d->seen[i].build_id, build_id))
			return &d->seen[i];
	return NULL;
}

/* Ask the servers: 0 with *path (malloc'd), or negative errno. */
static int fetch(struct st_dbgd *d, const char *build_id, char **path)
{
	double t0 = st_work__now();
	int fd;

	d->deadline = t0 + d->timeout_s;
	d->timed_out = d->too_large = false;
	fd = d->api.find_debuginfo(d->client, (const unsigned char *)build_id, 0, path);
	d->stats.seconds += st_work__now() - t0;
	if (fd >= 0) {
		close(fd);	/* opened again by the caller, under its rules */
		return 0;
	}
	*path = NULL;
	if (d->timed_out)
		return -ETIMEDOUT;
	if (d->too_large)
		return -EFBIG;
	return fd;
}

int st_dbgd__find(struct st_dbgd *d, const char *build_id, bool trusted, const char **path)
{
	struct outcome *o;
	char *p = NULL;
	int err;

	if (!d || !build_id || !is_build_id(build_id))
		return -EINVAL;
	o = seen(d, build_id, trusted);
	if (o) {
		*path = o->path;
		return o->path ? 0 : -ENOENT;
	}
	if (d->nseen >= ST_DBGD_MAX_IDS || d->failures[trusted] >= ST_DBGD_MAX_FAILURES) {
		d->stats.skipped++;
		return -ENOENT;
	}
	if (ST_GROW(d->seen, d->seen_cap, d->nseen, 64))
		return -ENOMEM;
	o = &d->seen[d->nseen];
	o->build_id = strdup(build_id);
	if (!o->build_id)
		return -ENOMEM;
	o->trusted = trusted;
	o->path = NULL;
	d->nseen++;
	err = fetch(d, build_id, &p);
	if (err && err != -ENOENT)
		d->failures[trusted]++;
	else
		d->failures[trusted] = 0;
	if (!err) {
		d->stats.found++;
		o->path = p;
		*path = p;
		if (d->verbose)
			fprintf(stderr, "stacktreed: debuginfod: %s: fetched %s\n", build_id, p);
		return 0;
	}
	if (err == -ENOENT) {
		d->stats.not_found++;
		if (d->verbose)
			fprintf(stderr, "stacktreed: debuginfod: %s: no server has it\n", build_id);
		return -ENOENT;
	}
	d->stats.failed++;
	if (d->verbose || !d->warned)
		fprintf(stderr, "stacktreed: debuginfod: fetching the debug file of %s from %s "
			"failed: %s (timeout %.1f s; %s)\n", build_id,
			getenv(DEBUGINFOD_URLS_ENV_VAR), err == -ETIMEDOUT ? "timed out" :
			err == -EFBIG ? "larger than the size bound" : strerror(-err),
			d->timeout_s, d->verbose ? "counted in the summary" :
			"further failures are only counted in the summary");
	d->warned = true;
	if (d->failures[trusted] == ST_DBGD_MAX_FAILURES)
		fprintf(stderr, "stacktreed: debuginfod: %d fetches for %s failed in a row: "
			"no more of them this session (counted as not asked)\n",
			ST_DBGD_MAX_FAILURES, trusted ? "root's files" : "other users' files");
	return -ENOENT;
}

void st_dbgd__reject(struct st_dbgd *d, const char *build_id, bool trusted)
{
	struct outcome *o = d && build_id ? seen(d, build_id, trusted) : NULL;

	if (!o || !o->path)
		return;
	d->stats.rejected++;
	d->stats.found--;
	fprintf(stderr, "stacktreed: debuginfod: the file served for %s (%s) is not its debug "
		"file (another build id, not ELF, or over the size bound): refused and deleted\n",
		build_id, o->path);
	/* a file of our own cache: not served again from there */
	if (d->cache_dir && !strncmp(o->path, d->cache_dir, strlen(d->cache_dir)))
		unlink(o->path);
	/* the same answer for either kind of module */
	for (size_t i = 0; i < d->nseen; i++) {
		if (!strcmp(d->seen[i].build_id, build_id)) {
			free(d->seen[i].path);
			d->seen[i].path = NULL;
		}
	}
}

void st_dbgd__stats(const struct st_dbgd *d, struct st_dbgd_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (d)
		*out = d->stats;
}

const char *st_dbgd__cache_dir(const struct st_dbgd *d)
{
	return d ? d->cache_dir : NULL;
}

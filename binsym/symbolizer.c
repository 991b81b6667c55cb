/* symbolizer.c - module cache and address resolution (see symbolizer.h).
 *
 * A module is opened once (st_symbolizer__module) and keeps its ELF open
 * until its symbols are first needed; then the symbol table (from .symtab,
 * a separate debug file's .symtab, or .dynsym) is copied into memory and
 * the file is closed (data symbols and stack variables, read later on
 * demand, open it again: datasym.c, reopen.c). Modules are found again by
 * file identity (path, dev, inode, size, mtime) and by build id, through a
 * hash map (open addressing, linear probing, backward-shift deletion) that
 * owns its key strings.
 *
 * Ownership: each module owns its strings (path, build id, other display
 * paths, symbol names, data symbols, stack variable tables, the last
 * open_path) and the list of its keys in the map, so freeing a
 * module gives all of it back. The symbolizer-wide string table only holds
 * the options and the kernel's symbols (loaded once). Every module is on the
 * `modules` list; unreferenced ones are also on the LRU list (head: most
 * recently released). The vDSO module holds a reference of the symbolizer's
 * own, so it is never evicted. The structures are in module.h, shared
 * with the other files of the symbolizer.
 */
#include "binsym/symbolizer.h"
#include "common/grow.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "binsym/debuginfo.h"
#include "binsym/debuginfod.h"
#include "binsym/elf.h"
#include "binsym/entry.h"
#include "binsym/gopclntab.h"
#include "binsym/kallsyms.h"
#include "binsym/module.h"
#include "binsym/srcinfo.h"
#include "binsym/stackvars.h"
#include "common/budget.h"
#include "common/hash.h"
#include "common/strtab.h"
#include "common/textesc.h"
#include "common/u64map.h"
#include "binsym/symtab.h"
#include "binsym/vdso.h"
#include "binsym/worklimit.h"

#define DELETED_SUFFIX " (deleted)"
#define VDSO_PATH "[vdso]"
#define MODULE_TIME_S 2.0		/* default per-module symbol loading time */
#define MAX_SYMBOLS 4000000
#define TRIM_BYTES (4u << 20)		/* evictions that return memory to the system */		/* default per symbol table (~160 MiB with names) */

/* ---- key map ------------------------------------------------------------ */

static bool is_key(const void *value, const void *key)
{
	return strcmp(((const struct st_modkey *)value)->key, key) == 0;
}

static struct st_module *map_get(const struct st_symbolizer *s, const char *key)
{
	struct st_modkey *e = s->keys ? st_u64map__find(s->keys, st_hash_str(key), is_key, key) :
					NULL;

	return e ? e->module : NULL;
}

/* Map key (copied) to m and note it in m's keys; nothing when the key is
 * there already. */
static int map_put(struct st_symbolizer *s, const char *key, struct st_module *m)
{
	size_t len = strlen(key);
	struct st_modkey *e;

	if (map_get(s, key))
		return 0;
	if (!s->keys && !(s->keys = st_u64map__new()))
		return -ENOMEM;
	if (ST_GROW(m->keys, m->keys_cap, m->nkeys, 2))
		return -ENOMEM;
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	e->module = m;
	memcpy(e->key, key, len + 1);
	if (st_u64map__add(s->keys, st_hash_str(key), e)) {
		free(e);
		return -ENOMEM;
	}
	s->key_bytes += sizeof(*e) + len + 1;
	m->keys[m->nkeys++] = e->key;
	if (key[0] == 'f')
		m->nfile_keys++;
	return 0;
}

/* Remove key (and free its entry, whose text `key` may be). */
static void map_del(struct st_symbolizer *s, const char *key)
{
	struct st_modkey *e = s->keys ? st_u64map__remove(s->keys, st_hash_str(key), is_key, key) :
					NULL;

	if (!e)
		return;
	s->key_bytes -= sizeof(*e) + strlen(e->key) + 1;
	free(e);
}

/* ---- modules ------------------------------------------------------------ */

size_t st_mod__display_len(const char *path)
{
	size_t len = strlen(path), slen = strlen(DELETED_SUFFIX);

	if (len > slen && strcmp(path + len - slen, DELETED_SUFFIX) == 0)
		return len - slen;
	return len;
}

/* Close m's file (and the process root that came with it). */
static void module_close(struct st_module *m)
{
	st_elf__free(m->elf);
	m->elf = NULL;
	st_srcinfo__close(m->src);
	if (m->root_fd >= 0)
		close(m->root_fd);
	m->root_fd = -1;
}

static void module_free(struct st_module *m)
{
	if (!m)
		return;
	module_close(m);
	free(m->loads);
	st_symtab__free(m->symtab);
	st_strtab__free(m->names);
	st_symtab__free(m->data);
	st_strtab__free(m->data_names);
	st_stackvars__free(m->vars);
	st_srcinfo__free(m->src);
	st_gopcln__free(m->gopcln);
	st_strtab__free(m->strs);
	free(m->open_path);
	free(m->keys);
	free(m->ids);
	free(m);
}

static size_t module_memory(const struct st_module *m)
{
	size_t bytes = sizeof(*m) + m->nloads * sizeof(*m->loads) +
		       m->keys_cap * sizeof(*m->keys) + m->ids_cap * sizeof(*m->ids) +
		       st_strtab__memory(m->strs);

	if (m->symtab)
		bytes += st_symtab__memory(m->symtab);
	if (m->names)
		bytes += st_strtab__memory(m->names);
	if (m->data)
		bytes += st_symtab__memory(m->data);
	if (m->data_names)
		bytes += st_strtab__memory(m->data_names);
	if (m->vars)
		bytes += st_stackvars__memory(m->vars);
	bytes += st_srcinfo__memory(m->src);
	bytes += st_gopcln__memory(m->gopcln);
	if (m->open_path)
		bytes += strlen(m->open_path) + 1;
	return bytes;
}

/* A new module around e (taken over, freed on error), not yet listed. */
static struct st_module *module_new(struct st_elf *e, const char *path, size_t len)
{
	char hex[ST_BUILD_ID_HEX_MAX];
	struct st_module *m;
	int n;

	m = calloc(1, sizeof(*m));
	if (!m)
		goto cleanup;
	m->root_fd = -1;
	m->elf = e;
	e = NULL;
	m->strs = st_strtab__new();
	if (!m->strs)
		goto cleanup;
	m->path = st_strtab__intern_len(m->strs, path, len);
	if (!m->path)
		goto cleanup;
	if (!st_elf__build_id(m->elf, hex)) {
		m->build_id = st_strtab__intern(m->strs, hex);
		if (!m->build_id)
			goto cleanup;
	}
	n = st_elf__loads(m->elf, &m->loads);
	if (n < 0)
		goto cleanup;
	m->nloads = n;
	return m;
cleanup:
	st_elf__free(e);
	module_free(m);
	errno = ENOMEM;
	return NULL;
}

/* List m (with one reference, the caller's). */
static void module_link(struct st_symbolizer *s, struct st_module *m)
{
	m->refs = 1;
	m->prev = NULL;
	m->next = s->modules;
	if (s->modules)
		s->modules->prev = m;
	s->modules = m;
	s->nmodules++;
}

static void lru_unlink(struct st_symbolizer *s, struct st_module *m)
{
	if (m->lru_prev)
		m->lru_prev->lru_next = m->lru_next;
	else
		s->lru_head = m->lru_next;
	if (m->lru_next)
		m->lru_next->lru_prev = m->lru_prev;
	else
		s->lru_tail = m->lru_prev;
	m->lru_prev = m->lru_next = NULL;
	s->nunused--;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void lru_push(struct st_symbolizer *s, struct st_module *m)
{
	m->unused_since = mono_s();
	m->lru_prev = NULL;
	m->lru_next = s->lru_head;
	if (s->lru_head)
		s->lru_head->lru_prev = m;
	else
		s->lru_tail = m;
	s->lru_head = m;
	s->nunused++;
}

/* Unlist m, drop its keys, free it. */
static void module_destroy(struct st_symbolizer *s, struct st_module *m)
{
	while (m->nkeys)
		map_del(s, m->keys[--m->nkeys]);
	if (!m->refs)
		lru_unlink(s, m);
	if (m->prev)
		m->prev->next = m->next;
	else
		s->modules = m->next;
	if (m->next)
		m->next->prev = m->prev;
	s->nmodules--;
	module_free(m);
}

/* The caches' bytes, told to the daemon's budget: whether the total is
 * over it (after every part's evictors, this cache's unused modules first). */
static bool budget_sync(struct st_symbolizer *s)
{
	return s->budget && st_budget__set(s->budget, ST_BUDGET_SYMBOLS, st_symbolizer__memory(s));
}

/* The budget's evictor: unused modules, least recently used first, until
 * need bytes are freed or none is left. */
static size_t budget_evict(void *ctx, size_t need)
{
	struct st_symbolizer *s = ctx;
	size_t freed = 0;

	while (s->lru_tail && freed < need) {
		freed += module_memory(s->lru_tail);
		module_destroy(s, s->lru_tail);
		s->evicted++;
	}
	if (freed >= TRIM_BYTES)
		malloc_trim(0);
	if (freed)
		budget_sync(s);
	return freed;
}

/* Whether the least recently used unreferenced module has been unused
 * longer than idle_s: a service meets new binaries all the time (builds,
 * tests, deployments), and a cache kept to its count and byte bounds alone
 * fills to them over hours and holds binaries that never run again. */
static bool tail_idle(const struct st_symbolizer *s, double now)
{
	return s->idle_s >= 0 && now - s->lru_tail->unused_since > s->idle_s;
}

/* Free the least recently used unreferenced modules while there are more
 * than max_unused of them, the caches hold more than cache_budget bytes,
 * or the oldest was unused longer than idle_s. */
static void cache_trim(struct st_symbolizer *s)
{
	size_t bytes = s->nunused ? st_symbolizer__memory(s) : 0, freed, big = 0;
	double now = s->lru_tail ? mono_s() : 0;

	while (s->lru_tail && (s->nunused > s->max_unused || bytes > s->cache_budget ||
			       tail_idle(s, now))) {
		if (s->nunused <= s->max_unused && bytes <= s->cache_budget)
			s->expired++;
		freed = module_memory(s->lru_tail);
		module_destroy(s, s->lru_tail);
		bytes = bytes > freed ? bytes - freed : 0;
		big += freed;
		s->evicted++;
	}
	/* symbol names live in 64 KiB chunks on the heap: give the pages of a
	 * big module back to the system (free() alone keeps them) */
	if (big >= TRIM_BYTES)
		malloc_trim(0);
	budget_sync(s);
}

/* One more reference; revives a cached module. */
static struct st_module *module_ref(struct st_symbolizer *s, struct st_module *m)
{
	if (!m->refs++)
		lru_unlink(s, m);
	return m;
}

void st_symbolizer__release(struct st_symbolizer *s, struct st_module *m)
{
	if (!s || !m || !m->refs || (m == s->vdso && m->refs == 1))
		return;	/* not referenced (or only by the symbolizer itself) */
	if (--m->refs)
		return;
	/* cached: no open file while nobody uses it (a revival brings one) */
	module_close(m);
	lru_push(s, m);
	cache_trim(s);
}

struct st_module *st_symbolizer__hold(struct st_symbolizer *s, struct st_module *m)
{
	return s && m ? module_ref(s, m) : m;
}

struct st_symbolizer *st_symbolizer__new(const struct st_symbolizer_opts *opts)
{
	struct st_symbolizer *s = calloc(1, sizeof(*s));
	int err = -ENOMEM;

	if (!s)
		return NULL;
	struct stat root;

	s->verbose = opts && opts->verbose;
	s->cache_budget = (opts && opts->cache_mb ? opts->cache_mb : ST_SYMBOLIZER_CACHE_MB) << 20;
	s->budget = opts ? opts->budget : NULL;
	s->module_time_s = opts && opts->module_time_s > 0 ? opts->module_time_s : MODULE_TIME_S;
	s->max_symbols = opts && opts->max_symbols ? opts->max_symbols : MAX_SYMBOLS;
	s->cancel = opts ? opts->cancel : NULL;
	s->cancel_ctx = opts ? opts->cancel_ctx : NULL;
	s->open.root_fd = -1;
	s->open.max_size = (opts && opts->max_file_mb ? opts->max_file_mb : ST_SAFE_OPEN_MAX_MB)
			   << 20;
	s->open.stats = &s->safe;
	if (!stat("/", &root)) {
		s->root_dev = root.st_dev;
		s->root_ino = root.st_ino;
	}
	s->idle_s = opts && opts->idle_s ? opts->idle_s : ST_SYMBOLIZER_IDLE_S;
	if (!opts || !opts->max_unused_modules)
		s->max_unused = ST_SYMBOLIZER_MAX_UNUSED;
	else
		s->max_unused = opts->max_unused_modules < 0 ? 0 : (size_t)opts->max_unused_modules;
	s->strs = st_strtab__new();
	if (!s->strs)
		goto cleanup;
	s->debug_dir = st_strtab__intern(s->strs, opts && opts->debug_dir ? opts->debug_dir
									  : "/usr/lib/debug");
	s->kallsyms = st_strtab__intern(s->strs, opts && opts->kallsyms ? opts->kallsyms
									: "/proc/kallsyms");
	s->kernel_module = st_strtab__intern(s->strs, ST_KERNEL_MODULE);
	if (!s->debug_dir || !s->kallsyms || !s->kernel_module)
		goto cleanup;
	st_budget__on_evict(s->budget, ST_BUDGET_SYMBOLS, budget_evict, s);
	if (opts && opts->debuginfod) {
		struct st_dbgd_opts dopts = {
			.timeout_s = opts->debuginfod_timeout_s, .max_size = s->open.max_size,
			.cache_dir = opts->debuginfod_cache, .verbose = s->verbose,
			.cancel = s->cancel, .cancel_ctx = s->cancel_ctx,
		};

		err = st_dbgd__new(&dopts, &s->dbgd);
		if (err && (err == -ENOMEM || opts->debuginfod_required))
			goto cleanup;
		err = -ENOMEM;
	}
	return s;
cleanup:
	st_symbolizer__free(s);
	errno = -err;
	return NULL;
}

void st_symbolizer__free(struct st_symbolizer *s)
{
	struct st_module *m, *next;
	struct st_modkey *e;
	size_t i;

	if (!s)
		return;
	st_budget__on_evict(s->budget, ST_BUDGET_SYMBOLS, NULL, NULL);
	st_budget__set(s->budget, ST_BUDGET_SYMBOLS, 0);
	for (m = s->modules; m; m = next) {
		next = m->next;
		module_free(m);
	}
	for (i = 0; s->keys && (e = st_u64map__next(s->keys, &i, NULL));)
		free(e);
	st_u64map__free(s->keys);
	st_symtab__free(s->kernel);
	st_strtab__free(s->strs);
	st_dbgd__free(s->dbgd);
	free(s->scratch);
	free(s);
}

const char *st_module__build_id(const struct st_module *m)
{
	return m ? m->build_id : NULL;
}

const char *st_module__path(const struct st_module *m)
{
	return m ? m->path : NULL;
}

void st_symbolizer__stats(const struct st_symbolizer *s, struct st_symbolizer_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	out->not_regular = s->safe.not_regular;
	out->too_large = s->safe.too_large;
	out->symlink = s->safe.symlink;
	out->implausible = s->safe.implausible;
	out->not_mapped = s->not_mapped;
	memcpy(out->implausible_path, s->safe.implausible_path, sizeof(out->implausible_path));
	out->out_of_time = s->out_of_time;
	out->cancelled = s->cancelled;
	out->too_many = s->too_many;
	out->evicted = s->evicted;
	out->expired = s->expired;
	out->idle_s = s->idle_s;
	out->unshared = s->unshared;
	out->cache_budget = s->cache_budget;
	out->over_budget = s->over_budget;
	memcpy(out->over_budget_path, s->over_budget_path, sizeof(out->over_budget_path));
	out->src_cut = s->src_cut;
	out->src_deferred = s->src_deferred;
	out->kernel_symbols = s->kernel_symbols;
	out->kernel_read_error = s->kernel_read_error;
	out->kernel_unnamed = s->kernel_unnamed;
	if (s->dbgd) {
		struct st_dbgd_stats d;

		st_dbgd__stats(s->dbgd, &d);
		out->debuginfod = true;
		out->dbgd_found = d.found;
		out->dbgd_not_found = d.not_found;
		out->dbgd_failed = d.failed;
		out->dbgd_rejected = d.rejected;
		out->dbgd_skipped = d.skipped;
		out->dbgd_seconds = d.seconds;
	}
}

size_t st_symbolizer__modules(const struct st_symbolizer *s, size_t *unused)
{
	if (unused)
		*unused = s ? s->nunused : 0;
	return s ? s->nmodules : 0;
}

/* ---- finding modules ---------------------------------------------------- */

static char *file_key(const char *path, size_t len, const struct stat *st)
{
	char *key = NULL;

	if (asprintf(&key, "f:%.*s:%llx:%llx:%llx:%lld.%09ld", (int)len, path,
		     (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
		     (unsigned long long)st->st_size, (long long)st->st_mtim.tv_sec,
		     st->st_mtim.tv_nsec) < 0)
		return NULL;
	return key;
}

static struct st_module *vdso_module(struct st_symbolizer *s)
{
	struct st_elf *e = NULL;
	const void *image;
	size_t size;
	int err;

	if (s->vdso)
		return module_ref(s, s->vdso);
	err = st_vdso__image(&image, &size);
	if (!err)
		err = st_elf__open_memory(image, size, &e);
	if (err) {
		if (s->verbose)
			fprintf(stderr, "stacktreed: cannot read this process's vDSO: %s\n",
				strerror(-err));
		errno = -err;
		return NULL;
	}
	s->vdso = module_new(e, VDSO_PATH, strlen(VDSO_PATH));
	if (!s->vdso)
		return NULL;
	module_link(s, s->vdso);	/* the symbolizer's own reference */
	return module_ref(s, s->vdso);
}

/* The mapping's file: open_path (a /proc/PID/map_files/ link) or, when it
 * cannot be opened and the file is not deleted, its path inside the
 * process's root (root_fd; -1: /proc/PID/root of open_path's PID, else
 * ours; -2...: the process is gone: nowhere). Either must be the inode the
 * maps line names (dev, ino; ino 0: not known): the link may name a new
 * mapping by now, the path another file (issue 23: a user unmapped its
 * library and put a root-only file's name in its place); a mismatch is
 * counted and refused (-ESTALE). */
static int open_image(struct st_symbolizer *s, const char *path, size_t len,
		      const char *open_path, int root_fd, __u64 dev, __u64 ino, struct stat *st)
{
	struct st_safe_open o = s->open;
	unsigned pid;
	char *copy;
	int fd = -1, n = 0;

	if (open_path) {
		fd = st_safe_open(open_path, &o, st);
		if (fd == ST_SAFE_IMPLAUSIBLE)	/* named as the maps line names it */
			snprintf(s->safe.implausible_path, sizeof(s->safe.implausible_path), "%.*s",
				 (int)len, path);
		if (fd >= 0 || path[len] || root_fd < -1)	/* a deleted file is nowhere else */
			goto check;
		if (fd == ST_SAFE_NOT_REGULAR || fd == ST_SAFE_TOO_LARGE ||
		    fd == ST_SAFE_IMPLAUSIBLE)
			return fd;	/* the same file by another name */
	}
	copy = strndup(path, len);
	if (!copy)
		return -ENOMEM;
	o.root_fd = root_fd;
	/* our root directory is not our mount namespace: a process with
	 * the same root may see other files at the same names */
	if (root_fd == -1 && open_path &&
	    sscanf(open_path, "/proc/%u/map_files/%n", &pid, &n) == 1 && n)
		fd = st_safe_open_in_proc(pid, copy, &o, st);
	else
		fd = st_safe_open(copy, &o, st);
	free(copy);
check:
	if (fd >= 0 && !st_file_is_mapped(fd, st, dev, ino)) {
		close(fd);
		s->not_mapped++;
		return -ESTALE;
	}
	return fd;
}

/* A module found again that has no file (it was cached) and whose symbols
 * are still to be read adopts this one if it is one of its verified files.
 * Takes fd and root_fd over. */
static void adopt_fd(struct st_module *m, int fd, int root_fd, const struct stat *st)
{
	if (!m->symtab && !m->elf && st_mod__known_file(m, st)) {
		fd = st_elf__open_fd(fd, &m->elf) ? -1 : -2;	/* closed on error */
		if (fd == -2) {
			m->root_fd = root_fd;
			return;
		}
	}
	if (fd >= 0)
		close(fd);
	if (root_fd >= 0)
		close(root_fd);
}

/* Share `found` (a module read from a root-only file with the same build id)
 * for a new root-only file: m (the file's module, not listed) is freed, its
 * file adopted if found has none and its symbols are still to be read. */
static struct st_module *share(struct st_symbolizer *s, struct st_module *found,
			       struct st_module *m, const struct stat *st)
{
	if (!found->symtab && !found->elf) {
		found->elf = m->elf;
		found->root_fd = m->root_fd;
		m->elf = NULL;
		m->root_fd = -1;
	}
	module_free(m);
	st_mod__add_id(found, st);	/* best effort: else matched by build id */
	return module_ref(s, found);
}

struct st_module *st_symbolizer__module(struct st_symbolizer *s, const char *path,
					const char *open_path)
{
	return st_symbolizer__module_mapped(s, path, open_path, 0, 0);
}

struct st_module *st_symbolizer__module_mapped(struct st_symbolizer *s, const char *path,
					       const char *open_path, __u64 dev, __u64 ino)
{
	char bkey[ST_BUILD_ID_HEX_MAX + 2];
	struct st_module *m = NULL, *found;
	struct st_elf *e = NULL;
	char *fkey = NULL;
	struct stat st;
	int fd = -1, root_fd = -1, err = 0;
	bool trusted;
	size_t len;

	if (!s || !path || !*path) {
		errno = EINVAL;
		return NULL;
	}
	if (strcmp(path, VDSO_PATH) == 0)
		return vdso_module(s);

	len = st_mod__display_len(path);
	root_fd = st_mod__proc_root(s, open_path);
	fd = open_image(s, path, len, open_path, root_fd, dev, ino, &st);
	if (fd < 0) {
		err = fd;
		goto cleanup;
	}
	trusted = st_file_trusted(&st);
	fkey = file_key(path, len, &st);
	if (!fkey) {
		err = -ENOMEM;
		goto cleanup;
	}
	found = map_get(s, fkey);
	if (found) {
		adopt_fd(found, fd, root_fd, &st);
		fd = root_fd = -1;
		m = module_ref(s, found);
		st_mod__note_open(m, open_path);
		goto cleanup;
	}
	err = st_elf__open_fd(fd, &e);
	fd = -1;	/* the st_elf's now, closed on error */
	if (err)
		goto cleanup;
	m = module_new(e, path, len);
	if (!m) {
		err = -ENOMEM;
		goto cleanup;
	}
	m->root_fd = root_fd;
	root_fd = -1;
	m->trusted = trusted;
	found = NULL;
	if (m->build_id) {
		/* only root's files are found by build id: a file any user made
		 * may claim any build id, and gets a module of its own */
		snprintf(bkey, sizeof(bkey), "b:%s", m->build_id);
		found = map_get(s, bkey);
		if (found && !trusted) {
			s->unshared++;
			found = NULL;
		}
		/* a user's module with that build id came first: counted too
		 * ("u:" keys only detect it) */
		bkey[0] = 'u';
		if (!found && trusted && map_get(s, bkey))
			s->unshared++;
		bkey[0] = 'b';
	}
	if (found) {	/* the same image under another name */
		m = share(s, found, m, &st);
		st_mod__note_open(m, open_path);
		/* best effort: without it, the build id finds it again */
		if (m->nfile_keys < MAX_FILE_KEYS)
			map_put(s, fkey, m);
		goto cleanup;
	}
	module_link(s, m);
	st_mod__note_open(m, open_path);
	err = st_mod__add_id(m, &st);
	if (!err)
		err = map_put(s, fkey, m);
	if (!err && m->build_id && trusted)
		err = map_put(s, bkey, m);
	bkey[0] = 'u';
	if (!err && m->build_id && !trusted)
		err = map_put(s, bkey, m);
	if (err) {
		module_destroy(s, m);
		m = NULL;
	}
cleanup:
	if (fd >= 0)
		close(fd);
	if (root_fd >= 0)
		close(root_fd);
	free(fkey);
	if (err) {
		if (s->verbose)
			fprintf(stderr, "stacktreed: cannot read %s as ELF: %s\n", ST_TEXTESC(path),
				strerror(-err));
		errno = -err;
		return NULL;
	}
	return m;
}

/* ---- symbols ----------------------------------------------------------- */

void st_mod__work_begin(const struct st_symbolizer *s, struct st_work *w)
{
	memset(w, 0, sizeof(*w));
	w->deadline = st_work__now() + s->module_time_s;
	w->max_symbols = s->max_symbols;
	w->cancel = s->cancel;
	w->cancel_ctx = s->cancel_ctx;
}

void st_mod__work_end(struct st_symbolizer *s, const struct st_module *m,
		      const struct st_work *w)
{
	const char *why = NULL;

	if (w->cancelled) {
		s->cancelled++;
		why = "the daemon is stopping";
	} else if (w->out_of_time) {
		s->out_of_time++;
		why = "out of time";
	}
	if (w->too_many) {
		s->too_many++;
		why = "too many symbols";
	}
	if (why && s->verbose)
		fprintf(stderr, "stacktreed: %s: symbols incomplete: %s\n", ST_TEXTESC(m->path),
			why);
}

/* The debug file from debuginfod (only for modules with a build id), opened
 * and checked like a local one: 0 with *debug, or -ENOENT. The time the
 * fetch took does not count against the module's own work limit. */
static int fetch_debug_file(struct st_symbolizer *s, const struct st_module *m,
			    const struct st_debug_query *q, struct st_work *w, struct st_elf **debug)
{
	double t0 = st_work__now();
	const char *path;
	int err;

	if (!s->dbgd || !m->build_id)
		return -ENOENT;
	err = st_dbgd__find(s->dbgd, m->build_id, m->trusted, &path);
	if (w && w->deadline > 0)
		w->deadline += st_work__now() - t0;
	if (err)
		return -ENOENT;
	err = st_debuginfo__open_by_id(q, path, debug);
	if (err) {
		st_dbgd__reject(s->dbgd, m->build_id, m->trusted);
		return -ENOENT;
	}
	return 0;
}

int st_mod__debug_file(struct st_symbolizer *s, const struct st_module *m, struct st_elf *e,
		       int root_fd, struct st_work *w, struct st_elf **debug)
{
	struct st_debug_query q = {
		.debug_dir = s->debug_dir,
		.path = m->path,
		.build_id = m->build_id,
		.root_fd = root_fd,
		.open = &s->open,
		.work = w,
	};
	const char *how = NULL;

	q.debuglink = st_elf__debuglink(e, &q.crc);
	if (st_debuginfo__find(&q, debug, &how) && fetch_debug_file(s, m, &q, w, debug))
		return -ENOENT;
	if (!how)
		how = "debuginfod";
	if (s->verbose)
		fprintf(stderr, "stacktreed: %s: debug file found (%s)\n", ST_TEXTESC(m->path),
			how);
	return 0;
}

/* "[module+0xOFF]": the name of code only an FDE at OFF shows. */
static const char *guess_name(void *ctx, __u64 start)
{
	struct st_module *m = ctx;
	const char *base = strrchr(m->path, '/');
	char buf[160];
	int len = snprintf(buf, sizeof(buf), "[%.120s+0x%llx]", base ? base + 1 : m->path,
			   (unsigned long long)start);

	return len > 0 ? st_strtab__add(m->names, buf, (size_t)len < sizeof(buf) ? (size_t)len :
					sizeof(buf) - 1) : NULL;
}

/* m's symbols took the daemon's memory over its budget (the unused
 * modules evicted already): m keeps empty tables (not loaded again; its
 * frames are module+offset), counted and named in the summary. */
static void drop_symbols(struct st_symbolizer *s, struct st_module *m)
{
	struct st_symtab *t = st_symtab__new();
	struct st_strtab *names = st_strtab__new();

	if (!t || !names) {
		st_symtab__free(t);
		st_strtab__free(names);
		return;
	}
	st_symtab__finish(t);
	st_symtab__free(m->symtab);
	st_strtab__free(m->names);
	m->symtab = t;
	m->names = names;
	s->over_budget++;
	snprintf(s->over_budget_path, sizeof(s->over_budget_path), "%s", m->path);
	malloc_trim(0);
	budget_sync(s);
}

static int load_module_symbols(struct st_symbolizer *s, struct st_module *m)
{
	struct st_elf *debug = NULL, *src;
	struct st_work w;
	int n = -ENOENT;

	m->symtab = st_symtab__new();
	m->names = st_strtab__new();
	if (!m->symtab || !m->names) {
		st_symtab__free(m->symtab);
		st_strtab__free(m->names);
		m->symtab = NULL;
		m->names = NULL;
		return -ENOMEM;	/* the file stays open: tried again later */
	}

	st_mod__work_begin(s, &w);
	src = m->elf;
	if (!st_elf__has_section_type(m->elf, SHT_SYMTAB) &&
	    !st_mod__debug_file(s, m, m->elf, m->root_fd, &w, &debug) &&
	    st_elf__has_section_type(debug, SHT_SYMTAB))
		src = debug;
	if (st_elf__has_section_type(src, SHT_SYMTAB))
		n = st_elf__load_symbols(src, SHT_SYMTAB, m->symtab, m->names, &w);
	if (n <= 0 && n != -ENOMEM) {	/* stripped Go: its own function table */
		int g = st_gopcln__load_symbols(m->elf, m->symtab, m->names, &m->gopcln);

		if (g > 0 || g == -ENOMEM)
			n = g;
	}
	if (n <= 0 && n != -ENOMEM)
		n = st_elf__load_symbols(m->elf, SHT_DYNSYM, m->symtab, m->names, &w);
	if (n != -ENOMEM)	/* the file's own .plt: a debug file's has no bytes */
		(void)st_elf__load_plt_symbols(m->elf, m->symtab, m->names);
	if (n != -ENOMEM)	/* a stripped program's _start and main */
		(void)st_entry__load_symbols(m->elf, m->symtab, m->names);
	if (n != -ENOMEM)	/* functions only the CFI shows */
		n = st_entry__load_fde_guesses(m->elf, m->symtab) == -ENOMEM ? -ENOMEM : n;
	st_symtab__finish(m->symtab);
	if (n != -ENOMEM && st_symtab__name_guesses(m->symtab, guess_name, m) == -ENOMEM)
		n = -ENOMEM;
	st_mod__work_end(s, m, &w);

	if (s->verbose && n <= 0 && n != -ENOMEM)
		fprintf(stderr, "stacktreed: %s: no function symbols\n", ST_TEXTESC(m->path));

	st_elf__free(debug);
	module_close(m);	/* everything needed is copied now */
	cache_trim(s);
	if (budget_sync(s))
		drop_symbols(s, m);
	return n == -ENOMEM ? n : 0;
}

__u64 st_mod__to_vaddr(const struct st_module *m, __u64 off)
{
	const struct st_load *hit = NULL;
	size_t i;

	for (i = 0; i < m->nloads; i++) {
		const struct st_load *l = &m->loads[i];

		if (off < l->offset || off - l->offset >= l->filesz)
			continue;
		if (!hit || (l->exec && !hit->exec))
			hit = l;
	}
	return hit ? off - hit->offset + hit->vaddr : off;
}

/* The mapping's path without " (deleted)": in m's strings (valid while m
 * is), or without a module in the scratch buffer (until the next call). */
const char *st_mod__name(struct st_symbolizer *s, const struct st_module *m,
			       const char *path)
{
	const char *name;
	size_t len;

	if (!path)
		return m ? m->path : NULL;
	len = st_mod__display_len(path);
	if (m) {
		if (strncmp(m->path, path, len) == 0 && m->path[len] == '\0')
			return m->path;
		name = st_strtab__intern_len(m->strs, path, len);
		return name ? name : m->path;
	}
	if (len + 1 > s->scratch_cap) {
		char *buf = realloc(s->scratch, len + 1);

		if (!buf)
			return NULL;
		s->scratch = buf;
		s->scratch_cap = len + 1;
	}
	memcpy(s->scratch, path, len);
	s->scratch[len] = '\0';
	return s->scratch;
}

int st_symbolizer__resolve(struct st_symbolizer *s, struct st_module *m, const char *path,
			   __u64 map_start, __u64 map_pgoff, __u64 addr, bool is_return,
			   struct st_sym *out)
{
	const struct st_symbol *sym;
	__u64 look, vaddr;

	if (!s || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	look = is_return && addr ? addr - 1 : addr;
	out->module = st_mod__name(s, m, path);
	out->build_id = m ? m->build_id : NULL;
	if (!m) {
		out->module_offset = addr - map_start + map_pgoff;
		return 0;
	}
	vaddr = st_mod__to_vaddr(m, look - map_start + map_pgoff);
	out->module_offset = vaddr + (addr - look);
	if (!m->symtab && (!m->elf || load_module_symbols(s, m)))
		return 0;	/* no file (cached module) or out of memory: module+offset */
	sym = st_symtab__find(m->symtab, vaddr);
	if (!sym)
		return 0;
	out->function = sym->name;
	out->func_addr = look - (vaddr - sym->start);
	out->offset = addr - out->func_addr;
	return 0;
}

/* The kernel's symbols, once. A read of /proc/kallsyms that fails part
 * way would leave every address past the failure unnamed, so a failed
 * read is tried again, twice, into a fresh table; one that still fails
 * keeps what it read and is counted (kernel_read_error). 0 or -ENOMEM. */
static int load_kernel(struct st_symbolizer *s)
{
	int n = 0;

	for (int attempt = 0; attempt < 3; attempt++) {
		st_symtab__free(s->kernel);
		s->kernel = st_symtab__new();
		if (!s->kernel)
			return -ENOMEM;
		n = st_kallsyms__load(s->kallsyms, s->kernel, s->strs);
		if (n >= 0 || n == -ENOMEM || n == -ENOENT || n == -EACCES)
			break;
	}
	st_symtab__finish(s->kernel);
	s->kernel_symbols = st_symtab__count(s->kernel);
	s->kernel_read_error = n < 0 ? -n : 0;
	if (s->verbose && n < 0)
		fprintf(stderr, "stacktreed: cannot read %s: %s\n", s->kallsyms, strerror(-n));
	else if (s->verbose && n == 0)
		fprintf(stderr, "stacktreed: %s shows no addresses (kptr_restrict?)\n",
			s->kallsyms);
	return 0;
}

int st_symbolizer__resolve_kernel(struct st_symbolizer *s, __u64 addr, bool is_return,
				  struct st_sym *out)
{
	const struct st_symbol *sym;
	__u64 look;
	int n;

	if (!s || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!s->kernel && (n = load_kernel(s)) < 0)
		return n;
	look = is_return && addr ? addr - 1 : addr;
	out->module = s->kernel_module;
	out->module_offset = addr;
	sym = st_symtab__find(s->kernel, look);
	if (!sym) {
		s->kernel_unnamed++;
		return 0;
	}
	out->function = sym->name;
	out->module = sym->module ? sym->module : s->kernel_module;
	out->func_addr = sym->start;
	out->offset = addr - sym->start;
	return 0;
}

size_t st_symbolizer__memory(const struct st_symbolizer *s)
{
	const struct st_module *m;
	size_t bytes;

	if (!s)
		return 0;
	bytes = sizeof(*s) + st_strtab__memory(s->strs) + st_u64map__memory(s->keys) +
		s->key_bytes + s->scratch_cap;
	for (m = s->modules; m; m = m->next)
		bytes += module_memory(m);
	if (s->kernel)
		bytes += st_symtab__memory(s->kernel);
	return bytes;
}

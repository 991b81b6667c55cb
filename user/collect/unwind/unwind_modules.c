/* unwind_modules.c - per-module CFI rows shared by build id, compiled
 * within a time budget, each module's in a BPF map of its own within a
 * memory budget (see unwind_modules.h). */
#include "user/collect/unwind/unwind_modules.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binsym/loadmap.h"
#include "binsym/safeopen.h"
#include "user/collect/procmaps.h"
#include "user/collect/unwind/unwind_cache.h"
#include "user/collect/unwind/unwind_index.h"
#include "user/collect/unwind/unwind_store.h"
#include "common/hash.h"
#include "common/textesc.h"
#include "common/u64map.h"
#include "user/collect/unwind/unwind_tables.h"
#include "user/collect/unwind/unwinder.h"

#define MAX_LOADS 16
#define BUDGET_WINDOW_S 0.2	/* compile at most BUDGET_S of every BUDGET_WINDOW_S */
#define BUDGET_S 0.04
#define PAGE 4096ull		/* x86-64 */

struct st_umod {
	char *key;		/* "b:" build id ":" layout (root's files only, see module_key()),
				 * else "f:dev:ino:size:mtime" */
	char *path;		/* for messages */
	int fd;			/* pending: the open file, compiled later */
	bool pending;
	struct st_uextent where;	/* its rows in the shards, then its pc index */
	__u32 nrows;		/* 0: none */
	struct st_unwind_index index;
	unsigned refs;		/* pushed process tables that map it */
	bool used;		/* some pushed table referred to it */
	bool over_budget;	/* compiled, but over the memory budget: no rows */
	bool released;		/* rows released (unmapped): compiled again when mapped */
	bool cacheable;		/* its rows may go to / come from the on-disk cache */
	struct st_load loads[MAX_LOADS];	/* its PT_LOADs */
	__u64 base;		/* what its rows' pcs count from (st_loadmap__base()) */
	int nloads;
};

/* A file (dev, inode) seen in a mapping, its module, and its code for the
 * daemon's walks (unwind_modules.h, st_ufile__read()). */
struct st_ufile {
	__u64 dev, ino;
	struct st_umod *mod;
	int fd;			/* -1: none kept */
	const __u8 *image;	/* the vDSO: the daemon's own, */
	size_t image_len;	/* ... this long (its mapping); */
	unsigned refs;		/* pushed process tables that map it */
};

struct st_umods {
	bool verbose;
	struct st_ustore *store;	/* where rows live in the kernel */
	struct st_ucache *cache;	/* compiled rows on disk, or NULL */
	size_t modules_now, released, loaded, rows_loaded;
	char no_room_names[160];
	struct st_u64map *mods;		/* hash(key) -> st_umod */
	struct st_u64map *files;	/* hash(dev, ino) -> st_ufile */
	struct st_umod **pending;
	size_t npending, pending_cap;
	double window_start, window_used;
	double window_budget;	/* seconds of compiling a window (BUDGET_S) */
	size_t no_cfi, no_room, unsupported, unshared;
	struct st_safe_stats refused;	/* files st_safe_open() refused */
	double compile_s;
	size_t fds, fds_peak, fds_max;	/* st_ufile descriptors kept, at most fds_max */
	size_t not_kept;
	const __u8 *vdso;		/* the daemon's vDSO, */
	size_t vdso_len;		/* ... its mapping's length (0: none) */
};

#define FNV0 ST_HASH_INIT

/* st_hash_bytes(), as a u64map key (non-zero). */
static __u64 fnv(const void *data, size_t len, __u64 h)
{
	h = st_hash_bytes(data, len, h);
	return h ? h : 1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Descriptors kept for the walks' code at most: ST_UFILE_MAX_FDS, and a
 * quarter of the daemon's RLIMIT_NOFILE (its maps, perf events and the
 * symbolizer's files need the rest). */
static size_t fds_bound(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur / 4 >= ST_UFILE_MAX_FDS)
		return ST_UFILE_MAX_FDS;
	return (size_t)rl.rlim_cur / 4;
}

/* The daemon's vDSO and the length of its mapping: its ELF image (section
 * headers last) rounded up to pages, as the kernel maps it. */
static const __u8 *own_vdso(size_t *len)
{
	const GElf_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	size_t size;

	*len = 0;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return NULL;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size > (1 << 20))
		return NULL;
	*len = (size + PAGE - 1) & ~(PAGE - 1);
	return (const __u8 *)eh;
}

struct st_umods *st_umods__new(int shards_fd, __u32 slots, size_t budget, bool verbose)
{
	struct st_umods *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return NULL;
	ms->verbose = verbose;
	ms->window_budget = BUDGET_S;
	ms->store = st_ustore__new(shards_fd, slots, budget);
	ms->mods = st_u64map__new();
	ms->files = st_u64map__new();
	if (!ms->store || !ms->mods || !ms->files) {
		st_umods__free(ms);
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		st_umods__free(ms);
		errno = ENOTSUP;
		return NULL;
	}
	ms->fds_max = fds_bound();
	ms->vdso = own_vdso(&ms->vdso_len);
	return ms;
}

void st_umods__compile_budget(struct st_umods *ms, double seconds)
{
	if (ms && seconds > 0)
		ms->window_budget = seconds;
}

void st_umods__free(struct st_umods *ms)
{
	struct st_umod *m;
	size_t pos = 0;
	void *f;

	if (!ms)
		return;
	while (ms->mods && (m = st_u64map__next(ms->mods, &pos, NULL))) {
		if (m->pending)
			close(m->fd);
		free(m->key);
		free(m->path);
		free(m);
	}
	pos = 0;
	while (ms->files && (f = st_u64map__next(ms->files, &pos, NULL))) {
		if (((struct st_ufile *)f)->fd >= 0)
			close(((struct st_ufile *)f)->fd);
		free(f);
	}
	st_u64map__free(ms->mods);
	st_u64map__free(ms->files);
	free(ms->pending);
	st_ustore__free(ms->store);
	free(ms);
}

/* The rows of a module are shared by build id only between files that
 * only root can have made (st_file_trusted()): a file any user made may
 * claim another's build id, and must not give its CFI to another file's
 * processes; it is known by its identity. st == NULL: the vDSO. */
static char *file_key(const struct stat *st)
{
	char *key;

	if (asprintf(&key, "f:%llx:%llx:%llx:%lld.%09ld", (unsigned long long)st->st_dev,
		     (unsigned long long)st->st_ino, (unsigned long long)st->st_size,
		     (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec) < 0)
		return NULL;
	return key;
}

/* A build id names the code, not where the file puts it: a prelinked copy,
 * or a binary rewritten (BOLT) or relinked with the same id, lays its
 * segments out elsewhere, and rows (ELF addresses) and segments come in
 * pairs. *key gets ":" and a hash of the PT_LOADs; false when out of
 * memory (*key freed). */
static bool with_layout(Elf *elf, char **key)
{
	__u64 h = FNV0;
	size_t n = 0;
	GElf_Phdr ph;
	char *k;

	if (!elf_getphdrnum(elf, &n))
		for (size_t i = 0; i < n; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				__u64 f[4] = { ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_flags };

				h = fnv(f, sizeof(f), h);
			}
	if (asprintf(&k, "%s:%016llx", *key, (unsigned long long)h) < 0)
		k = NULL;
	free(*key);
	*key = k;
	return k != NULL;
}

static char *module_key(struct st_umods *ms, Elf *elf, const struct stat *st)
{
	static const char digits[] = "0123456789abcdef";
	static const struct stat none;
	const unsigned char *id;
	const void *p;
	char *key;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);

	if (n <= 0 || n > 64)
		return file_key(st ? st : &none);
	key = malloc(2 * (size_t)n + 3);
	if (!key)
		return NULL;
	id = p;
	key[0] = 'b';
	key[1] = ':';
	for (ssize_t i = 0; i < n; i++) {
		key[2 + 2 * i] = digits[id[i] >> 4];
		key[3 + 2 * i] = digits[id[i] & 15];
	}
	key[2 + 2 * n] = '\0';
	if (!with_layout(elf, &key))
		return NULL;
	if (st && !st_file_trusted(st)) {	/* not shared, even when it is there */
		if (st_u64map__get(ms->mods, fnv(key, strlen(key), FNV0)))
			ms->unshared++;
		free(key);
		key = file_key(st);
	}
	return key;
}

static void read_loads(Elf *elf, struct st_umod *m)
{
	m->nloads = (int)st_loadmap__read(elf, m->loads, MAX_LOADS);
	m->base = st_loadmap__base(m->loads, (size_t)m->nloads, PAGE);
}

/* n rows of m into the shards, followed by their pc index: 0, -ENOSPC
 * over the memory budget, or the kernel's error. */
static int store_rows(struct st_umods *ms, struct st_umod *m, const struct st_unwind_row *rows,
		      size_t n)
{
	struct st_unwind_row *all = NULL;
	struct st_unwind_index ix;
	int err;

	st_unwind_index__plan(rows, n, &ix);
	if (n + ix.nbuckets > ST_UNWIND_MAX_MODULE_ROWS)
		ix.nbuckets = 0;	/* the rows alone, searched whole */
	if (ix.nbuckets) {
		all = malloc((n + ix.nbuckets) * sizeof(*all));
		if (!all)
			return -ENOMEM;
		memcpy(all, rows, n * sizeof(*rows));
		st_unwind_index__build(rows, n, &ix, all + n);
	}
	err = st_ustore__put(ms->store, all ? all : rows, n + ix.nbuckets, &m->where);
	free(all);
	if (err)
		return err;
	m->nrows = (__u32)n;
	m->index = ix;
	ms->rows_loaded += n;
	ms->loaded++;
	ms->modules_now++;
	return 0;
}

/* m did not fit: counted, named in the summary, said once on stderr. */
static void no_room(struct st_umods *ms, struct st_umod *m, size_t n, int err)
{
	const char *base = strrchr(m->path, '/');
	size_t len = strlen(ms->no_room_names);

	base = base ? base + 1 : m->path;
	m->over_budget = true;
	if (!ms->no_room) {
		struct st_ustore_stats ss;

		st_ustore__stats(ms->store, &ss);
		fprintf(stderr, "stacktreed: %s's %zu unwinding rows do not fit: %s; it is "
			"walked by frame pointers (raise --unwind-memory, now %zu MiB)\n",
			ST_TEXTESC(m->path),
			n, err == -ENOSPC ? "unwind memory full" : strerror(-err), ss.budget >> 20);
	}
	else if (ms->verbose)
		fprintf(stderr, "stacktreed: no room for the %zu unwinding rows of %s: %s\n", n,
			ST_TEXTESC(m->path), strerror(-err));
	ms->no_room++;
	if (len + strlen(base) + 6 < sizeof(ms->no_room_names))
		snprintf(ms->no_room_names + len, sizeof(ms->no_room_names) - len, "%s%s",
			 len ? ", " : "", base);
	else if (len && !strstr(ms->no_room_names, "..."))
		snprintf(ms->no_room_names + len, sizeof(ms->no_room_names) - len, ", ...");
}

static void release(struct st_umods *ms, struct st_umod *m)
{
	if (m->nrows) {
		st_ustore__drop(ms->store, &m->where);
		ms->modules_now--;
	}
	m->nrows = 0;
	m->over_budget = false;
	m->used = false;
	m->released = true;
	ms->released++;
}

/* Compile m's CFI into a rows map of its own. */
static void load_rows(struct st_umods *ms, Elf *elf, struct st_umod *m)
{
	struct st_unwind_table *t = NULL;
	struct st_unwind_table_info info;
	const struct st_unwind_row *rows;
	double t0 = now_s(), dt;
	size_t n = 0;
	int err;

	err = st_unwind_table__from_elf(elf, &t);
	dt = now_s() - t0;
	ms->compile_s += dt;
	ms->window_used += dt;
	if (err) {
		ms->no_cfi++;
		if (ms->verbose)
			fprintf(stderr, "stacktreed: no unwinding table for %s: %s\n",
				ST_TEXTESC(m->path),
				err == -ENOENT ? "no CFI" : strerror(-err));
		return;
	}
	rows = st_unwind_table__rows(t, &n);
	st_unwind_table__info(t, &info);
	if (n && m->cacheable && ms->cache)
		st_ucache__put(ms->cache, m->key, rows, n, info.unsupported);
	err = n ? store_rows(ms, m, rows, n) : -ENOENT;
	if (err == -ENOENT) {
		ms->no_cfi++;
	} else if (err) {
		no_room(ms, m, n, err);
	} else {
		ms->unsupported += info.unsupported;
		if (ms->verbose)
			fprintf(stderr, "stacktreed: %zu unwinding rows for %s (%s, %zu FDEs, "
				"%.1f ms)\n", n, ST_TEXTESC(m->path), info.source, info.fdes,
				dt * 1e3);
	}
	st_unwind_table__free(t);
}

/* m's rows from the on-disk cache, if it has them (no compile budget
 * spent): true when it did. */
static bool load_cached(struct st_umods *ms, struct st_umod *m)
{
	struct st_unwind_row *rows = NULL;
	size_t n = 0, unsupported = 0;
	int err;

	if (!ms->cache || !m->cacheable ||
	    st_ucache__get(ms->cache, m->key, &rows, &n, &unsupported))
		return false;
	err = store_rows(ms, m, rows, n);
	if (err) {
		no_room(ms, m, n, err);
	} else {
		ms->unsupported += unsupported;
		if (ms->verbose)
			fprintf(stderr, "stacktreed: %zu unwinding rows for %s (from the cache)\n",
				n, ST_TEXTESC(m->path));
	}
	free(rows);
	return true;
}

void st_umods__set_cache(struct st_umods *ms, struct st_ucache *cache)
{
	ms->cache = cache;
}

static bool budget_left(struct st_umods *ms)
{
	double t = now_s();

	if (t - ms->window_start >= BUDGET_WINDOW_S) {
		ms->window_start = t;
		ms->window_used = 0;
	}
	return ms->window_used < ms->window_budget;
}

static int defer(struct st_umods *ms, struct st_umod *m, int fd)
{
	if (ms->npending == ms->pending_cap) {
		size_t cap = ms->pending_cap ? 2 * ms->pending_cap : 16;
		struct st_umod **p = realloc(ms->pending, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		ms->pending = p;
		ms->pending_cap = cap;
	}
	m->fd = dup(fd);
	if (m->fd < 0)
		return -errno;
	m->pending = true;
	ms->pending[ms->npending++] = m;
	return 0;
}

/* The module in elf: known by its key, or new (compiled now, or pending
 * when over the budget and fd >= 0). */
static struct st_umod *module_of(struct st_umods *ms, Elf *elf, int fd, const struct stat *st,
				 const char *path, bool now)
{
	char *key = module_key(ms, elf, st);
	struct st_umod *m;
	__u64 h;

	if (!key)
		return NULL;
	h = fnv(key, strlen(key), FNV0);
	m = st_u64map__get(ms->mods, h);
	if (m) {	/* the same module, or (not cached) a hash collision */
		bool same = !strcmp(m->key, key);

		free(key);
		if (!same)
			return NULL;
		if (m->released && !m->pending) {	/* mapped again: rows again */
			m->released = false;
			if (!load_cached(ms, m) &&
			    (now || fd < 0 || budget_left(ms) || defer(ms, m, fd)))
				load_rows(ms, elf, m);
		}
		return m;
	}
	m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path)) || st_u64map__put(ms->mods, h, m)) {
		if (m)
			free(m->path);
		free(m);
		free(key);
		return NULL;
	}
	m->key = key;
	m->cacheable = st != NULL;	/* not the vDSO: the running kernel's */
	read_loads(elf, m);
	if (!load_cached(ms, m) && (now || fd < 0 || budget_left(ms) || defer(ms, m, fd)))
		load_rows(ms, elf, m);
	return m;
}

/* The daemon's vDSO, the same kernel's image as every process's (copied:
 * libelf gets writable memory). */
static Elf *open_vdso(const struct st_umods *ms, char **copy)
{
	if (!ms->vdso || !(*copy = malloc(ms->vdso_len)))
		return NULL;
	memcpy(*copy, ms->vdso, ms->vdso_len);
	return elf_memory(*copy, ms->vdso_len);
}

/* The file l maps in pid, opened read-only (its map_files link, the path
 * in its root, or, the process gone, in ours) and only if it is the inode
 * the line names (issue 23: the link may name a new mapping by now, the
 * path another file): a descriptor, or negative. */
static int open_mapped(struct st_umods *ms, __u32 pid, const struct st_maps_line *l,
		       struct stat *sb)
{
	struct st_safe_open o = { .root_fd = -1, .stats = &ms->refused };
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)l->start, (unsigned long long)l->end);
	st_procmaps__test_stop("STACKTREED_TEST_STOP_BEFORE_CFI_OPEN", l->path);
	fd = st_safe_open(path, &o, sb);
	if (fd < 0 && fd != ST_SAFE_NOT_REGULAR && fd != ST_SAFE_TOO_LARGE)
		fd = st_safe_open_in_proc(pid, l->path, &o, sb);
	/* the process gone (its mappings as BPF kept them at its end):
	 * the path in our root, taken only if it is the inode mapped */
	if (fd < 0 && fd != ST_SAFE_NOT_REGULAR && fd != ST_SAFE_TOO_LARGE && l->path[0] == '/')
		fd = st_safe_open(l->path, &o, sb);
	if (fd >= 0 && !st_file_is_mapped(fd, sb, l->dev, l->ino)) {
		ms->refused.not_mapped++;
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A copy of fd kept as f's (within the bound), when f keeps none. */
static void keep_fd(struct st_umods *ms, struct st_ufile *f, int fd)
{
	if (f->fd >= 0 || f->image || fd < 0 || ms->fds >= ms->fds_max ||
	    (f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		return;
	if (++ms->fds > ms->fds_peak)
		ms->fds_peak = ms->fds;
}

/* f's code, for a mapping l of it, into *file (file non-NULL). */
static void give(struct st_umods *ms, struct st_ufile *f, const struct st_maps_line *l,
		 struct st_ufile **file)
{
	if (!file)
		return;
	/* the daemon's vDSO stands for a process's of the same length only
	 * (a 32-bit or x32 process maps another image) */
	*file = f && (f->fd >= 0 || (f->image && l->end - l->start == f->image_len)) ? f : NULL;
	ms->not_kept += !*file;
}

struct st_umod *st_umods__of_mapping(struct st_umods *ms, __u32 pid,
				     const struct st_maps_line *l, struct st_ufile **file)
{
	bool vdso = !strcmp(l->path, "[vdso]");
	__u64 dev = vdso ? 0 : l->dev, ino = vdso ? 0 : l->ino;
	__u64 h = fnv(&ino, sizeof(ino), fnv(&dev, sizeof(dev), FNV0));
	struct st_ufile *f = st_u64map__get(ms->files, h);
	char *image = NULL;
	struct st_umod *m = NULL;
	struct stat sb;
	Elf *elf = NULL;
	int fd = -1;

	if (f && (f->dev != dev || f->ino != ino))
		f = NULL;	/* a hash collision: neither used nor replaced */
	if (f && !f->mod->released) {
		/* its descriptor closed since no table referred to it: again */
		if (f->fd < 0 && !f->image && !f->refs && ms->fds < ms->fds_max &&
		    (fd = open_mapped(ms, pid, l, &sb)) >= 0) {
			keep_fd(ms, f, fd);
			close(fd);
		}
		give(ms, f, l, file);
		return f->mod;
	}
	if (vdso) {
		elf = open_vdso(ms, &image);
	} else {
		fd = open_mapped(ms, pid, l, &sb);
		if (fd >= 0)
			elf = elf_begin(fd, ELF_C_READ, NULL);
	}
	if (elf && elf_kind(elf) == ELF_K_ELF)
		m = module_of(ms, elf, fd, vdso ? NULL : &sb, l->path, false);
	if (m && !f && !st_u64map__get(ms->files, h) && (f = calloc(1, sizeof(*f)))) {
		f->dev = dev;
		f->ino = ino;
		f->fd = -1;
		if (vdso) {
			f->image = ms->vdso;
			f->image_len = ms->vdso_len;
		}
		if (st_u64map__put(ms->files, h, f)) {
			free(f);
			f = NULL;
		}
	}
	if (m && f) {
		f->mod = m;	/* (a file rewritten in place: its new module) */
		keep_fd(ms, f, fd);
	}
	give(ms, m ? f : NULL, l, file);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(image);
	return m;
}

void st_ufile__ref(struct st_ufile *f)
{
	f->refs++;
}

void st_ufile__unref(struct st_ufile *f)
{
	if (f->refs)
		f->refs--;
}

long st_ufile__read(const struct st_ufile *f, __u64 off, void *dst, __u32 n)
{
	ssize_t got;

	if (f->image) {
		if (off > f->image_len || n > f->image_len - off)
			return -EIO;
		memcpy(dst, f->image + off, n);
		return 0;
	}
	if (f->fd < 0)
		return -EBADF;
	if (off > (__u64)INT64_MAX - n)
		return -EIO;
	got = pread(f->fd, dst, n, (off_t)off);
	return got == (ssize_t)n ? 0 : got < 0 ? -errno : -EIO;
}

struct st_umod *st_umods__of_path(struct st_umods *ms, const char *path)
{
	struct st_safe_open o = { .root_fd = -1, .stats = &ms->refused };
	struct st_umod *m = NULL;
	struct stat sb;
	Elf *elf;
	int fd = st_safe_open(path, &o, &sb);

	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		m = module_of(ms, elf, fd, &sb, path, true);
	if (elf)
		elf_end(elf);
	close(fd);
	return m;
}

int st_umod__rows(const struct st_umod *m, __u64 pgoff, __u64 base, struct st_unwind_map *mp)
{
	size_t n = (size_t)m->nloads;
	__u64 v, hint = base && base <= mp->start ?
		st_loadmap__hint(m->loads, n, PAGE, mp->start - base) : ST_LOADMAP_NO_HINT;

	if (m->pending)
		return -EAGAIN;
	if (m->over_budget)
		return -ENOSPC;
	if (!m->nrows)
		return -ENOENT;
	/* tables are only made for executable mappings */
	if (st_loadmap__vaddr(m->loads, n, pgoff, true, PAGE, hint, &v) || v < m->base ||
	    v - m->base > UINT32_MAX)
		return -ENOENT;
	mp->vaddr = (__u32)(v - m->base);
	mp->shard = m->where.slot;
	mp->first = m->where.first;
	mp->nrows = m->nrows;
	mp->nbuckets = m->index.nbuckets;
	mp->ishift = m->index.shift;
	mp->ibase = m->index.base;
	return 0;
}

void st_umod__ref(struct st_umod *m)
{
	m->refs++;
	m->used = true;
}

void st_umod__unref(struct st_umod *m)
{
	if (m->refs)
		m->refs--;
}

size_t st_umods__release_unused(struct st_umods *ms)
{
	struct st_ufile *f;
	struct st_umod *m;
	size_t pos = 0, n = 0;

	st_ustore__tick(ms->store);
	while ((m = st_u64map__next(ms->mods, &pos, NULL))) {
		if (!m->used || m->refs || m->pending || (!m->nrows && !m->over_budget))
			continue;
		if (ms->verbose)
			fprintf(stderr, "stacktreed: released the %u unwinding rows of %s (no "
				"process maps it)\n", m->nrows, ST_TEXTESC(m->path));
		release(ms, m);
		n++;
	}
	pos = 0;
	while ((f = st_u64map__next(ms->files, &pos, NULL)))
		if (f->fd >= 0 && !f->refs) {
			close(f->fd);
			f->fd = -1;
			ms->fds--;
		}
	return n;
}

const struct st_unwind_row *st_umods__shard_rows(const struct st_umods *ms, __u32 slot,
						 size_t *n)
{
	return st_ustore__rows(ms->store, slot, n);
}

/* Compile the pending module at ms->pending[i] and take it off the list. */
static void compile_pending(struct st_umods *ms, size_t i)
{
	struct st_umod *m = ms->pending[i];
	Elf *elf = elf_begin(m->fd, ELF_C_READ, NULL);

	memmove(&ms->pending[i], &ms->pending[i + 1], (ms->npending - i - 1) * sizeof(*ms->pending));
	ms->npending--;
	if (elf)
		load_rows(ms, elf, m);
	else
		ms->no_cfi++;
	if (elf)
		elf_end(elf);
	close(m->fd);
	m->fd = -1;
	m->pending = false;
}

static size_t pending_index(const struct st_umods *ms, const struct st_umod *m)
{
	size_t i = ms->npending;

	while (i > 0 && ms->pending[i - 1] != m)
		i--;
	return i ? i - 1 : ms->npending;
}

int st_umods__work(struct st_umods *ms, bool all)
{
	int done = 0;

	/* newest first */
	while (ms->npending && (all || budget_left(ms))) {
		compile_pending(ms, ms->npending - 1);
		done++;
	}
	return done;
}

bool st_umods__compile_now(struct st_umods *ms, struct st_umod *m)
{
	size_t i;

	if (!m || !m->pending || (i = pending_index(ms, m)) >= ms->npending)
		return false;
	compile_pending(ms, i);
	return true;
}

void st_umods__stats(const struct st_umods *ms, struct st_unwinder_stats *out)
{
	out->loaded = ms->loaded;
	out->rows_loaded = ms->rows_loaded;
	struct st_ustore_stats ss;

	st_ustore__stats(ms->store, &ss);
	out->modules = ms->modules_now;
	out->no_cfi = ms->no_cfi;
	out->no_room = ms->no_room;
	out->rows = ss.rows;
	out->bytes = ss.bytes;
	out->budget = ss.budget;
	out->peak_bytes = ss.peak_bytes;
	out->shards = ss.shards;
	out->released = ms->released;
	snprintf(out->no_room_names, sizeof(out->no_room_names), "%s", ms->no_room_names);
	out->unsupported = ms->unsupported;
	out->compile_s = ms->compile_s;
	out->refused = ms->refused.not_regular + ms->refused.too_large + ms->refused.symlink +
		       ms->refused.implausible + ms->refused.not_mapped;
	out->unshared = ms->unshared;
	out->code_files = ms->fds;
	out->code_files_peak = ms->fds_peak;
	out->code_files_max = ms->fds_max;
	out->code_not_kept = ms->not_kept;
}

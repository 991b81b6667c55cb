/* unwinder.c - per-process tables of executable mappings pushed into the
 * BPF hash, pointing at module rows (user/collect/unwind/unwind_modules.c); see
 * unwinder.h. */
#include "user/collect/unwind/unwinder.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/uio.h>
#include <unistd.h>

#include "stacktree.h"
#include "user/collect/launch.h"
#include "user/collect/procmaps.h"
#include "user/collect/session.h"
#include "common/hash.h"
#include "common/u64map.h"
#include "user/collect/unwind/unwind_modules.h"
#include "user/collect/unwind/unwind_native.h"

/* What the unwinder remembers of a process. */
struct uproc {
	__u64 hash;	/* of the table last pushed; 0: none (forgotten) */
	bool pending;	/* a module of it is still being compiled: push again */
	struct st_umod **mods;	/* per mapping of its pushed table: its module (referenced)
				 * or NULL, */
	__u64 *pgoffs;		/* and the mapping's file offset, */
	__u64 *bases;		/* and its file's first mapping (st_umod__rows()), */
	struct st_ufile **files;	/* and its code (referenced) or NULL */
	size_t nmods;
	struct st_unwind_proc *tab;	/* the table last pushed (deferred walks), */
	struct st_unwind_proc *chunks;	/* its chunks (more than ST_UNWIND_MAX_MAPS) */
	size_t nchunks;
	bool truncated;		/* counted in too_many_maps */
};

struct st_unwinder {
	struct st_session *sess;
	bool verbose;
	struct st_umods *mods;
	struct st_ucache *cache;
	struct st_u64map *procs;	/* pid -> uproc */
	/* scratch: the table read, as pushed (tab, and chunks when there are
	 * more mappings than a table holds), from every mapping read in
	 * order (all, with its module, file offset and file's first mapping) */
	struct st_unwind_proc *tab;
	struct st_unwind_proc *chunks;
	size_t nchunks;
	struct st_unwind_map *all;
	struct st_umod **all_mods;
	__u64 *all_pgoffs;
	__u64 *all_bases;
	struct st_ufile **all_files;
	size_t nall, cap;
	__u32 gen;			/* versions of the pushed tables */
	bool wrapped;			/* gen went round once */
	struct st_unwinder_stats st;
	struct st_unw_java_ops java;	/* .proc NULL: no JVM's rule */
	struct st_exec_source kept;	/* .maps NULL: no mappings kept at the end */
	__u64 scanned, scan_failed;	/* the daemon's walks' checked scans (st_unw_scan()) */
	size_t code_file_reads, code_mem_reads, code_failed;	/* their code reads (code_of()) */
};

static void preload_common(struct st_unwinder *u);

struct st_unwinder *st_unwinder__new(struct st_session *s, const struct st_unwinder_opts *o)
{
	struct st_unwinder *u = calloc(1, sizeof(*u));
	__u32 slots = 0;
	int fd;

	if (!u)
		return NULL;
	u->sess = s;
	u->verbose = o->verbose;
	fd = st_session__unwind_shards_fd(s, &slots);
	u->mods = fd >= 0 ? st_umods__new(fd, slots, o->budget_bytes, o->verbose) : NULL;
	st_umods__compile_budget(u->mods, o->compile_s);
	if (u->mods && o->cache) {
		u->cache = st_ucache__new(o->cache_dir, o->cache_bytes, o->verbose);
		if (!u->cache) {
			st_unwinder__free(u);
			errno = ENOMEM;
			return NULL;
		}
		st_umods__set_cache(u->mods, u->cache);
	}
	u->procs = st_u64map__new();
	u->tab = calloc(1, sizeof(*u->tab));
	if (!u->mods || !u->procs || !u->tab) {
		st_unwinder__free(u);
		errno = fd >= 0 ? ENOMEM : EINVAL;
		return NULL;
	}
	/* the empty table: processes without one yet walk by frame pointers
	 * (auto) from it, and bpf/unwind.h needs no second path */
	if (st_session__unwind_set_proc(s, 0, u->tab)) {
		st_unwinder__free(u);
		return NULL;
	}
	preload_common(u);
	return u;
}

void st_unwinder__free(struct st_unwinder *u)
{
	size_t pos = 0;
	void *v;

	if (!u)
		return;
	while (u->procs && (v = st_u64map__next(u->procs, &pos, NULL))) {
		free(((struct uproc *)v)->mods);
		free(((struct uproc *)v)->pgoffs);
		free(((struct uproc *)v)->bases);
		free(((struct uproc *)v)->files);
		free(((struct uproc *)v)->tab);
		free(((struct uproc *)v)->chunks);
		free(v);
	}
	st_u64map__free(u->procs);
	st_umods__free(u->mods);
	st_ucache__free(u->cache);
	free(u->tab);
	free(u->chunks);
	free(u->all);
	free(u->all_mods);
	free(u->all_pgoffs);
	free(u->all_bases);
	free(u->all_files);
	free(u);
}

int st_unwinder__preload(struct st_unwinder *u, const char *cmd)
{
	char buf[4096];

	if (st_launch__which(cmd, buf, sizeof(buf)))	/* as execvp() finds it */
		return -ENOENT;
	return st_umods__of_path(u->mods, buf) ? 0 : -ENOENT;
}

/* libc, the dynamic loader and the vDSO, mapped by nearly every process:
 * the daemon's own copies, compiled before the first process is seen. */
static void preload_common(struct st_unwinder *u)
{
	struct st_maps_line l;
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		const char *base;

		if (st_procmaps__parse_line(line, &l) || !l.executable || !l.path)
			continue;
		base = strrchr(l.path, '/');
		base = base ? base + 1 : l.path;
		if (!strncmp(base, "libc.so", 7) || !strncmp(base, "ld-linux", 8))
			st_umods__of_path(u->mods, l.path);
		else if (!strcmp(l.path, "[vdso]"))
			st_umods__of_mapping(u->mods, (__u32)getpid(), &l, NULL);
	}
	free(line);
	fclose(f);
}

/* Where the dynamic loader was mapped (AT_BASE), 0 when none. */
static __u64 interp_base(__u32 pid)
{
	char path[64];
	__u64 av[2], base = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/auxv", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fread(av, sizeof(av), 1, f) == 1 && av[0] != AT_NULL)
		if (av[0] == AT_BASE)
			base = av[1];
	fclose(f);
	return base;
}

/* Anonymous executable mappings (JIT code) in a process's table, at most. */
#define ST_UNWIND_MAX_JIT_MAPS 32

/* Room for one more mapping in u->all: false beyond ST_UNWIND_MAX_PROC_MAPS
 * (or without memory). Doubles: a table of n mappings costs O(n). */
static bool all_room(struct st_unwinder *u)
{
	size_t cap = u->cap ? 2 * u->cap : ST_UNWIND_MAX_MAPS;
	void *a, *m, *g, *b, *f;

	if (u->nall < u->cap)
		return true;
	if (u->cap >= ST_UNWIND_MAX_PROC_MAPS)
		return false;
	if (cap > ST_UNWIND_MAX_PROC_MAPS)
		cap = ST_UNWIND_MAX_PROC_MAPS;
	a = realloc(u->all, cap * sizeof(*u->all));
	if (a)
		u->all = a;
	m = a ? realloc(u->all_mods, cap * sizeof(*u->all_mods)) : NULL;
	if (m)
		u->all_mods = m;
	g = m ? realloc(u->all_pgoffs, cap * sizeof(*u->all_pgoffs)) : NULL;
	if (g)
		u->all_pgoffs = g;
	b = g ? realloc(u->all_bases, cap * sizeof(*u->all_bases)) : NULL;
	if (b)
		u->all_bases = b;
	f = b ? realloc(u->all_files, cap * sizeof(*u->all_files)) : NULL;
	if (!f)
		return false;
	u->all_files = f;
	u->cap = cap;
	return true;
}

/* u->all as pushed: u->tab itself when the mappings fit in it, else u->tab
 * an index of u->chunks. */
static int lay_out(struct st_unwinder *u)
{
	struct st_unwind_proc *tab = u->tab, *c;
	size_t n = u->nall, k;

	u->nchunks = 0;
	if (n <= ST_UNWIND_MAX_MAPS) {
		if (n)	/* u->all is NULL before the first mapping */
			memcpy(tab->maps, u->all, n * sizeof(*u->all));
		tab->nmaps = (__u32)n;
		return 0;
	}
	k = (n + ST_UNWIND_MAX_MAPS - 1) / ST_UNWIND_MAX_MAPS;
	c = realloc(u->chunks, k * sizeof(*u->chunks));
	if (!c)
		return -ENOMEM;
	u->chunks = c;
	u->nchunks = k;
	for (k = 0; k < u->nchunks; k++) {
		size_t first = k * ST_UNWIND_MAX_MAPS;
		size_t cn = n - first < ST_UNWIND_MAX_MAPS ? n - first : ST_UNWIND_MAX_MAPS;

		c = &u->chunks[k];
		memset(c, 0, sizeof(*c));
		c->nmaps = (__u32)cn;
		memcpy(c->maps, &u->all[first], cn * sizeof(*u->all));
		tab->maps[k] = (struct st_unwind_map){ .start = u->all[first].start,
						       .shard = (__u32)k,
						       .flags = ST_UNWIND_MAP_CHUNK };
	}
	tab->nmaps = (__u32)u->nchunks;
	return 0;
}

/* The mappings a table is read from: /proc/PID/maps (f), or the ones BPF
 * kept at the process's end (kept: em.m[i .. n)). */
struct lines {
	FILE *f;
	char *buf;
	size_t cap;
	const struct st_exec_source *kept;
	struct st_exec_maps em;
	struct st_file_path fp;		/* the current kept mapping's path */
	__u32 i, n;
};

/* The next mapping into *l (its path valid until the next call): true,
 * or false at the end. */
static bool next_line(struct lines *src, struct st_maps_line *l)
{
	if (src->f) {
		while (getline(&src->buf, &src->cap, src->f) > 0)
			if (!st_procmaps__parse_line(src->buf, l))
				return true;
		return false;
	}
	while (src->i < src->n)
		if (!st_procmaps__kept_line(src->kept, &src->em.m[src->i++], &src->fp, l))
			return true;
	return false;
}

/* The process's table into u->tab (and u->chunks) from src, base the
 * dynamic loader's (0: not known); *pending: a module is not compiled
 * yet. -ENOENT: /proc/PID/maps read empty (the process exits: its memory
 * is gone). */
static int read_table(struct st_unwinder *u, __u32 pid, struct lines *src, __u64 base,
		      bool *pending)
{
	struct st_unwind_proc *tab = u->tab;
	struct st_maps_line l;
	bool jit, any = false;
	__u64 idev = 0, iino = 0;
	__u64 fdev = 0, fino = 0, fstart = 0;	/* the last file mapped at offset 0 */
	size_t njit = 0;
	int err;

	*pending = false;
	u->nall = 0;
	memset(tab, 0, offsetof(struct st_unwind_proc, maps));
	while (next_line(src, &l)) {
		struct st_unwind_map *mp;
		struct st_ufile *file;
		struct st_umod *m;

		any = true;
		/* a file's first mapping (lld maps its executable segment
		 * from offset 0 too: not that one) */
		if (l.path && !l.pgoff && (l.dev != fdev || l.ino != fino)) {
			fdev = l.dev;
			fino = l.ino;
			fstart = l.start;
		}
		if (base && l.start == base) {	/* the loader's first mapping */
			idev = l.dev;
			iino = l.ino;
		}
		/* anonymous executable memory (JIT code): an entry without
		 * module or rows, so that BPF walks it by frame pointers (auto)
		 * instead of deferring every sample there as a miss; a few only,
		 * file mappings keep the room */
		jit = l.executable && !l.path && njit < ST_UNWIND_MAX_JIT_MAPS;
		if (!jit && (!l.executable || !l.path ||
			     (l.path[0] != '/' && strcmp(l.path, "[vdso]"))))
			continue;
		if (iino && l.dev == idev && l.ino == iino && !tab->interp_len) {
			tab->interp_start = l.start;
			tab->interp_len = l.end - l.start;
		}
		if (!all_room(u)) {
			tab->flags |= ST_UNWIND_PROC_TRUNCATED;
			break;
		}
		file = NULL;
		m = jit ? NULL : st_umods__of_mapping(u->mods, pid, &l, &file);
		njit += jit;
		mp = &u->all[u->nall];
		memset(mp, 0, sizeof(*mp));
		mp->start = l.start;
		mp->len = l.end - l.start > UINT32_MAX ? UINT32_MAX : (__u32)(l.end - l.start);
		u->all_mods[u->nall] = m;
		u->all_pgoffs[u->nall] = l.pgoff;
		u->all_bases[u->nall] = l.dev == fdev && l.ino == fino ? fstart : 0;
		u->all_files[u->nall] = file;
		u->nall++;
		if (!m)
			continue;
		/* no rows (yet): frame pointers there in auto mode */
		err = st_umod__rows(m, l.pgoff, u->all_bases[u->nall - 1], mp);
		if (err == -EAGAIN) {
			*pending = true;
			mp->flags |= ST_UNWIND_MAP_PENDING;
		}
		else if (err == -ENOSPC)
			mp->flags |= ST_UNWIND_MAP_OVER_BUDGET;
	}
	if (!any && src->f)
		return -ENOENT;
	return lay_out(u);
}

/* read_table() for the image the process runs from start to end of the
 * read (kernel's proc_images): -EAGAIN inside an exec or when one happened
 * meanwhile (the maps may be either image's: read again later). */
static int read_table_of_image(struct st_unwinder *u, __u32 pid, bool *pending)
{
	__u32 before = 0, after = 0;
	int rb = st_session__proc_image(u->sess, pid, &before), ra, err;
	struct lines src = { 0 };
	char path[64];

	if (rb == -EBUSY) {
		u->st.other_image++;
		return -EAGAIN;
	}
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	if (!(src.f = fopen(path, "re")))
		return errno == ESRCH ? -ENOENT : -errno;
	err = read_table(u, pid, &src, interp_base(pid), pending);
	free(src.buf);
	fclose(src.f);
	if (err)
		return err;
	ra = st_session__proc_image(u->sess, pid, &after);
	if (ra == -EBUSY || ra != rb || before != after) {
		u->st.other_image++;
		return -EAGAIN;
	}
	u->tab->image = rb == 0 ? before : ST_UNWIND_ANY_IMAGE;
	return 0;
}

/* FNV-1a of the table read: its header and every mapping (never 0). */
static __u64 table_hash(const struct st_unwinder *u)
{
	__u64 h = st_hash_bytes(u->tab, offsetof(struct st_unwind_proc, maps), ST_HASH_INIT);

	h = st_hash_bytes(u->all, u->nall * sizeof(*u->all), h);
	return h ? h : 1;
}

/* p's pushed table maps the modules of u->all now: references follow. */
static void set_mods(struct st_unwinder *u, struct uproc *p, size_t n)
{
	struct st_umod **mods = NULL;
	struct st_ufile **files = NULL;
	__u64 *pgoffs = NULL, *bases = NULL;

	if (n && (!(mods = malloc(n * sizeof(*mods))) ||
		  !(pgoffs = malloc(n * sizeof(*pgoffs))) ||
		  !(bases = malloc(n * sizeof(*bases))) ||
		  !(files = malloc(n * sizeof(*files))))) {
		free(mods);
		free(pgoffs);
		free(bases);
		mods = NULL;
		pgoffs = NULL;
		bases = NULL;
		n = 0;	/* unreferenced: released at worst, never wrong */
	}
	for (size_t i = 0; i < n; i++) {
		mods[i] = u->all_mods[i];
		pgoffs[i] = u->all_pgoffs[i];
		bases[i] = u->all_bases[i];
		files[i] = u->all_files[i];
		if (mods[i])
			st_umod__ref(mods[i]);
		if (files[i])
			st_ufile__ref(files[i]);
	}
	for (size_t i = 0; i < p->nmods; i++) {
		if (p->mods[i])
			st_umod__unref(p->mods[i]);
		if (p->files[i])
			st_ufile__unref(p->files[i]);
	}
	free(p->mods);
	free(p->pgoffs);
	free(p->bases);
	free(p->files);
	p->mods = mods;
	p->pgoffs = pgoffs;
	p->bases = bases;
	p->files = files;
	p->nmods = n;
}

/* A gen for a new version of a table: not 0, below 2^25 (chunk keys),
 * and, once the count has wrapped, none a live chunked table has. */
static __u32 next_gen(struct st_unwinder *u)
{
	for (;;) {
		struct uproc *p;
		size_t pos = 0;
		bool live = false;

		u->gen = (u->gen + 1) & ST_UNWIND_GEN_MASK;
		if (!u->gen) {
			u->wrapped = true;
			continue;
		}
		while (u->wrapped && !live && (p = st_u64map__next(u->procs, &pos, NULL)))
			live = p->hash && p->nchunks && p->tab && p->tab->gen == u->gen;
		if (!live)
			return u->gen;
	}
}

/* Delete the kernel's chunks of p's pushed table. */
static void del_chunks(struct st_unwinder *u, const struct uproc *p)
{
	for (size_t k = 0; p->tab && k < p->nchunks; k++)
		st_session__unwind_del_proc(u->sess, ST_UNWIND_CHUNK_KEY(p->tab->gen, (__u32)k));
}

/* Push u->tab (its chunks first: a walk never sees a table whose chunks
 * are not in) as pid's. Chunks that find no room in the kernel leave the
 * table truncated before them (counted). */
static int push(struct st_unwinder *u, __u32 pid)
{
	size_t k;
	int err = 0;

	/* a new version: BPF's cached rows of the old one die */
	u->tab->gen = next_gen(u);
	for (k = 0; k < u->nchunks; k++)
		if ((err = st_session__unwind_set_proc(u->sess,
						       ST_UNWIND_CHUNK_KEY(u->gen, (__u32)k),
						       &u->chunks[k])))
			break;
	if (err) {
		if (u->verbose)
			fprintf(stderr, "stacktreed: unwinding table of %u: no room for chunk %zu "
				"of %zu (%s): mappings after it left out\n", pid, k, u->nchunks,
				strerror(-err));
		u->nchunks = k;
		u->tab->nmaps = (__u32)k;
		u->tab->flags |= ST_UNWIND_PROC_TRUNCATED;
		u->nall = k * ST_UNWIND_MAX_MAPS;
	}
	err = st_session__unwind_set_proc(u->sess, pid, u->tab);
	if (err)
		for (k = 0; k < u->nchunks; k++)
			st_session__unwind_del_proc(u->sess, ST_UNWIND_CHUNK_KEY(u->gen, (__u32)k));
	return err;
}

/* The table read (u->tab, u->chunks) as pid's: pushed when it changed. */
static int install(struct st_unwinder *u, __u32 pid, bool pending)
{
	struct uproc *p = st_u64map__get(u->procs, pid);
	__u64 h = table_hash(u);
	int err;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || st_u64map__put(u->procs, pid, p)) {
			free(p);
			return -ENOMEM;
		}
	}
	p->pending = pending;
	if (p->hash == h)
		return 0;
	err = push(u, pid);
	if (err) {
		if (u->verbose)
			fprintf(stderr, "stacktreed: cannot push the unwinding table of %u: %s\n",
				pid, strerror(-err));
		return err;
	}
	u->st.pushes++;
	u->st.procs += !p->hash;
	if ((u->tab->flags & ST_UNWIND_PROC_TRUNCATED) && !p->truncated) {
		p->truncated = true;
		u->st.too_many_maps++;
	}
	del_chunks(u, p);	/* the old version's */
	p->hash = h;
	set_mods(u, p, u->nall);
	if (p->tab || (p->tab = malloc(sizeof(*p->tab))))
		memcpy(p->tab, u->tab, sizeof(*p->tab));
	free(p->chunks);
	p->chunks = NULL;
	p->nchunks = 0;
	if (u->nchunks && (p->chunks = malloc(u->nchunks * sizeof(*p->chunks)))) {
		memcpy(p->chunks, u->chunks, u->nchunks * sizeof(*p->chunks));
		p->nchunks = u->nchunks;
	}
	return 0;
}

int st_unwinder__update(struct st_unwinder *u, __u32 pid)
{
	bool pending;
	int err = read_table_of_image(u, pid, &pending);

	return err ? err : install(u, pid, pending);
}

void st_unwinder__on_exec_maps(struct st_unwinder *u, const struct st_exec_source *src)
{
	u->kept = *src;
}

/* Mapping i of p's table as last pushed (in its chunks when it has
 * them), or NULL past its end. */
static struct st_unwind_map *proc_map(const struct uproc *p, size_t i)
{
	if (p->nchunks)
		return i / ST_UNWIND_MAX_MAPS < p->nchunks ?
		       &p->chunks[i / ST_UNWIND_MAX_MAPS].maps[i % ST_UNWIND_MAX_MAPS] : NULL;
	return i < p->tab->nmaps ? &p->tab->maps[i] : NULL;
}

/* Every mapping of p's table (the one read while it ran) is among em's:
 * BPF keeps 32 file mappings of a process at most, and no anonymous
 * (JIT) one, without saying it left some out. */
static bool kept_covers(const struct uproc *p, const struct st_exec_maps *em, __u32 n)
{
	for (size_t i = 0; p->tab && i < p->nmods; i++) {
		const struct st_unwind_map *mp = proc_map(p, i);
		bool found = false;

		for (__u32 k = 0; mp && !found && k < n; k++)
			found = em->m[k].start == mp->start;
		if (mp && !found)
			return false;
	}
	return true;
}

int st_unwinder__update_ended(struct st_unwinder *u, __u32 pid, __u32 image)
{
	const struct uproc *p = st_u64map__get(u->procs, pid);
	struct lines src = { .kept = &u->kept };
	bool pending;
	int err;

	if (!u->kept.maps || u->kept.maps(u->kept.ctx, pid, image, &src.em) ||
	    src.em.image != image) {
		u->st.ended_none++;
		return -ENOENT;
	}
	src.n = src.em.n < ST_EXEC_MAPS ? src.em.n : ST_EXEC_MAPS;
	/* a table read while it ran with a mapping the kept ones lack (cut
	 * at 32, JIT code) is the better one: the kept ones only add a
	 * library mapped since (a python3.11 whose list lacked some left 13
	 * and 27 evaluation frames without their Python callers in 2 of 10
	 * sanitized runs of test_python_deferred_samples_keep_python_frames) */
	if (p && p->tab && (p->tab->image == image || p->tab->image == ST_UNWIND_ANY_IMAGE) &&
	    !kept_covers(p, &src.em, src.n)) {
		u->st.ended_none++;
		return -ENOENT;
	}
	err = read_table(u, pid, &src, 0, &pending);
	if (err)
		return err;
	u->tab->image = image;
	err = install(u, pid, pending);
	u->st.ended += !err;
	return err;
}

void st_unwinder__finish(struct st_unwinder *u)
{
	st_umods__work(u->mods, true);
}

size_t st_unwinder__finish_proc(struct st_unwinder *u, __u32 pid)
{
	struct uproc *p = st_u64map__get(u->procs, pid);
	size_t n = 0;

	for (size_t i = 0; p && i < p->nmods; i++)
		n += st_umods__compile_now(u->mods, p->mods[i]);
	return n;
}

void st_unwinder__work(struct st_unwinder *u)
{
	struct uproc *p;
	size_t pos = 0;
	__u64 pid;

	if (!st_umods__work(u->mods, false))
		return;
	while ((p = st_u64map__next(u->procs, &pos, &pid)))
		if (p->pending && p->hash)
			st_unwinder__update(u, (__u32)pid);
}

bool st_unwinder__pending(const struct st_unwinder *u)
{
	struct uproc *p;
	size_t pos = 0;

	while ((p = st_u64map__next(u->procs, &pos, NULL)))
		if (p->pending)
			return true;
	return false;
}

void st_unwinder__forget(struct st_unwinder *u, __u32 pid)
{
	struct uproc *p = st_u64map__get(u->procs, pid);

	if (!p || !p->hash)
		return;
	st_session__unwind_del_proc(u->sess, pid);
	del_chunks(u, p);	/* the kernel's (the daemon's copies go below) */
	p->hash = 0;	/* kept as a tombstone (u64map has no delete) */
	p->pending = false;
	set_mods(u, p, 0);
	/* its deferred samples were walked before (the daemon's exit path):
	 * a tombstone keeps ~50 bytes, not its 8 KiB table and its chunks
	 * (issue 23: one per pid ever used, 32768 x 8 KiB) */
	free(p->tab);
	p->tab = NULL;
	free(p->chunks);
	p->chunks = NULL;
	p->nchunks = 0;
}

void st_unwinder__sweep(struct st_unwinder *u)
{
	struct uproc *p;
	size_t pos = 0;
	__u64 pid;

	__u32 pids[1024];
	size_t n = 0;

	while ((p = st_u64map__next(u->procs, &pos, &pid)))
		if (p->hash && kill((pid_t)pid, 0) && errno == ESRCH)
			st_unwinder__forget(u, (__u32)pid);
	/* children with a copy of their parent's table (bpf on_fork): their
	 * own table, so that their modules are referenced (or dropped) */
	st_session__unwind_proc_pids(u->sess, pids, sizeof(pids) / sizeof(pids[0]), &n);
	for (size_t i = 0; i < n; i++) {
		if (!pids[i] || ((p = st_u64map__get(u->procs, pids[i])) && p->hash))
			continue;
		if (st_unwinder__update(u, pids[i]) == -ENOENT)
			st_session__unwind_del_proc(u->sess, pids[i]);
	}
	st_umods__release_unused(u->mods);
}

static const struct st_unwind_row *shard_rows(void *ctx, __u32 shard, size_t *n)
{
	return st_umods__shard_rows(ctx, shard, n);
}

/* A walk's code reads (st_unw_scan(), st_unw_fp_checked()), which stay
 * inside m: a mapping of the walk's table, or for code no mapping covers
 * (JIT code) one made of the bytes read alone (unwind_native.h). A file
 * mapping's code is read from its file (unwind_modules.h, st_ufile), the
 * vDSO's from the daemon's own: a deferred sample is often walked after
 * its process exited (its last ones always; under load, when the daemon
 * is behind, many more), when its memory reads nothing, and the frames
 * that need the code were cut (issue 37: wl_report's and clock_gettime's
 * in qsort_nocfi, 5 of 20 at load 7). Only JIT code, and a file whose
 * descriptor was not kept, are read from the process's memory. */
struct code_ctx {
	struct st_unwinder *u;
	__u32 pid;
	const struct uproc *p;	/* whose table the walk reads, or NULL */
};

/* The index in p's table of its mapping m (a pointer into its table or
 * chunks, as the walk found it), or p->nmods when m is not one of them. */
static size_t map_index(const struct uproc *p, const struct st_unwind_map *m)
{
	uintptr_t a = (uintptr_t)m, b;

	if (p->nchunks) {
		b = (uintptr_t)p->chunks;
		if (a >= b && a < (uintptr_t)(p->chunks + p->nchunks)) {
			size_t k = (a - b) / sizeof(*p->chunks);
			const struct st_unwind_proc *c = &p->chunks[k];

			b = (uintptr_t)c->maps;
			if (a >= b && a < (uintptr_t)(c->maps + c->nmaps) && !((a - b) % sizeof(*m)))
				return k * ST_UNWIND_MAX_MAPS + (a - b) / sizeof(*m);
		}
		return p->nmods;
	}
	b = (uintptr_t)p->tab->maps;
	if (a >= b && a < (uintptr_t)(p->tab->maps + p->tab->nmaps) && !((a - b) % sizeof(*m)))
		return (a - b) / sizeof(*m);
	return p->nmods;
}

static long code_of(void *ctx, const struct st_unwind_map *m, __u64 addr, void *dst, __u32 n)
{
	struct code_ctx *c = ctx;
	struct iovec local = { .iov_base = dst, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	size_t i = c->p && c->p->tab ? map_index(c->p, m) : 0;
	long err;

	if (addr < m->start || addr - m->start > m->len || n > m->len - (addr - m->start))
		return -EFAULT;
	if (c->p && c->p->tab && i < c->p->nmods && c->p->files[i]) {
		/* file offset: as the mapping's start is its offset's */
		err = st_ufile__read(c->p->files[i], addr - m->start + c->p->pgoffs[i], dst, n);
		c->u->code_file_reads++;
		c->u->code_failed += err != 0;
		return err;
	}
	c->u->code_mem_reads++;
	err = process_vm_readv((pid_t)c->pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -errno;
	c->u->code_failed += err != 0;
	return err;
}

void st_unwinder__scan_stats(const struct st_unwinder *u, __u64 *scanned, __u64 *failed)
{
	*scanned += u->scanned;
	*failed += u->scan_failed;
}

int st_unwinder__walk(struct st_unwinder *u, const struct st_deferred *d, bool force, __u64 *out,
		      size_t max, unsigned *stop, size_t *fp_frames)
{
	struct uproc *p = st_u64map__get(u->procs, d->pid);
	struct st_unw_java_arg jarg = { .pid = (int)d->pid, .ctx = u->java.ctx };
	struct code_ctx code = { .u = u, .pid = d->pid };
	struct st_unw_native_in in = {
		.ip = d->ip, .sp = d->sp, .bp = d->bp, .r10 = d->r10, .rbx = d->rbx, .r13 = d->r13,
		.stack = d->stack, .stack_len = d->stack_len, .holes = d->holes,
		.rows = shard_rows, .ctx = u->mods,
		.fallback = st_session__unwind_mode(u->sess) == ST_UNWIND_AUTO,
	};
	struct st_unw_native_out res;
	size_t n;

	bool other = p && p->tab && p->tab->image != d->image &&
		     p->tab->image != ST_UNWIND_ANY_IMAGE;

	/* a table of a later image: this sample's will never come; the last
	 * table of a process that exited (or exec'd) will not change */
	if ((other && (__s32)(p->tab->image - d->image) > 0) ||
	    (p && !p->hash && p->tab && !other && p->tab->image != ST_UNWIND_ANY_IMAGE))
		force = true;
	else if (!force && (!p || !p->hash || p->pending || !p->tab || other))
		return -EAGAIN;
	in.proc = p && p->tab && !other ? p->tab : NULL;
	if (in.proc) {
		in.chunks = p->chunks;
		in.nchunks = p->nchunks;
	}
	/* modules compiled since the table was pushed (the process may be
	 * gone: no push any more): into the daemon's copy, which only the
	 * daemon's walks read (a forced walk; the others wait for nothing) */
	for (size_t i = 0; force && in.proc && i < p->nmods; i++) {
		struct st_unwind_map *mp = proc_map(p, i);

		if (mp && (mp->flags & ST_UNWIND_MAP_PENDING) && p->mods[i] &&
		    !st_umod__rows(p->mods[i], p->pgoffs[i], p->bases[i], mp))
			mp->flags &= ~ST_UNWIND_MAP_PENDING;
	}
	if (in.fallback) {	/* auto: the checked scan past code without CFI */
		in.code = code_of;
		in.code_ctx = &code;
		code.p = in.proc ? p : NULL;
	}
	if (u->java.proc && (in.java = u->java.proc(u->java.ctx, d->pid, d->image))) {
		in.jc = u->java.counts;
		in.mem = u->java.mem;
		in.mem_arg = &jarg;
	}
	n = st_unw_walk_native(&in, out, max < ST_MAX_USER ? (__u32)max : ST_MAX_USER, &res);
	u->scanned += res.scanned;
	u->scan_failed += res.scan_failed;
	if (in.java)
		st_unw_java_walked(&u->java, d->pid, d->image, out, n, res.jframes, res.mem_failed);
	*stop = !in.proc && res.stop == ST_UNW_STOP_NO_TABLE ? ST_UNW_STOP_NO_PROC : res.stop;
	*fp_frames = res.fp_frames;
	return (int)n;
}

void st_unwinder__java(struct st_unwinder *u, const struct st_unw_java_ops *ops)
{
	if (u && ops && ops->proc && ops->mem && ops->seen && ops->counts)
		u->java = *ops;
}

void st_unwinder__stats(const struct st_unwinder *u, struct st_unwinder_stats *out)
{
	*out = u->st;
	st_umods__stats(u->mods, out);
	out->code_file_reads = u->code_file_reads;
	out->code_mem_reads = u->code_mem_reads;
	out->code_failed = u->code_failed;
	if (u->cache)
		st_ucache__stats(u->cache, &out->cache);
	else
		memset(&out->cache, 0, sizeof(out->cache));
}

/* unwinder.c - per-module CFI rows shared by build id, per-process mapping
 * tables pushed into the BPF maps (see unwinder.h). */
#include "user/unwinder.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "stacktree.h"
#include "user/procmaps.h"
#include "user/session.h"
#include "user/u64map.h"
#include "user/unwind_tables.h"

#define MAX_LOADS 16

/* A module (ELF image), shared by every process and file that maps it. */
struct umod {
	char *key;		/* "b:" build id, or "f:dev:ino" without one */
	__u32 first, nrows;	/* its rows in the BPF array; nrows 0: none */
	struct { __u64 offset, vaddr, filesz; } loads[MAX_LOADS];
	int nloads;
};

/* A file (dev, inode) seen in a mapping, and its module. */
struct ufile {
	__u64 dev, ino;
	struct umod *mod;
};

struct st_unwinder {
	struct st_session *sess;
	bool verbose;
	struct st_unwind_row *rows;	/* the mmaped BPF array */
	__u32 cap, used;
	struct st_u64map *mods;		/* hash(key) -> umod */
	struct st_u64map *files;	/* hash(dev, ino) -> ufile */
	struct st_u64map *procs;	/* pid -> hash of the pushed table (boxed) */
	struct st_unwind_proc *tab;	/* scratch */
	struct st_unwinder_stats st;
};

static __u64 fnv(const void *data, size_t len, __u64 h)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ? h : 1;	/* u64map keys are non-zero */
}

#define FNV0 0xcbf29ce484222325ull

struct st_unwinder *st_unwinder__new(struct st_session *s, bool verbose)
{
	struct st_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->sess = s;
	u->verbose = verbose;
	u->rows = st_session__unwind_rows(s, &u->cap);
	u->mods = st_u64map__new();
	u->files = st_u64map__new();
	u->procs = st_u64map__new();
	u->tab = calloc(1, sizeof(*u->tab));
	if (!u->rows || !u->mods || !u->files || !u->procs || !u->tab) {
		st_unwinder__free(u);
		errno = u->rows ? ENOMEM : EINVAL;
		return NULL;
	}
	u->st.capacity = u->cap;
	return u;
}

void st_unwinder__free(struct st_unwinder *u)
{
	struct umod *m;
	size_t pos = 0;
	void *v;

	if (!u)
		return;
	while (u->mods && (m = st_u64map__next(u->mods, &pos, NULL))) {
		free(m->key);
		free(m);
	}
	pos = 0;
	while (u->files && (v = st_u64map__next(u->files, &pos, NULL)))
		free(v);
	pos = 0;
	while (u->procs && (v = st_u64map__next(u->procs, &pos, NULL)))
		free(v);
	st_u64map__free(u->mods);
	st_u64map__free(u->files);
	st_u64map__free(u->procs);
	free(u->tab);
	free(u);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- modules --------------------------------------------------------------- */

static char *module_key(Elf *elf, __u64 dev, __u64 ino)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *id;
	const void *p;
	char *key;
	ssize_t n;

	n = dwelf_elf_gnu_build_id(elf, &p);
	if (n <= 0 || n > 64) {
		if (asprintf(&key, "f:%llx:%llx", (unsigned long long)dev,
			     (unsigned long long)ino) < 0)
			return NULL;
		return key;
	}
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
	return key;
}

static void read_loads(Elf *elf, struct umod *m)
{
	size_t n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n && m->nloads < MAX_LOADS; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->loads[m->nloads].offset = ph.p_offset;
		m->loads[m->nloads].vaddr = ph.p_vaddr;
		m->loads[m->nloads].filesz = ph.p_filesz;
		m->nloads++;
	}
}

/* Compile m's CFI into the rows array. */
static void load_rows(struct st_unwinder *u, Elf *elf, struct umod *m, const char *path)
{
	struct st_unwind_table *t = NULL;
	const struct st_unwind_row *rows;
	double t0 = now_s();
	size_t n = 0;
	int err;

	err = st_unwind_table__from_elf(elf, &t);
	u->st.compile_s += now_s() - t0;
	if (err) {
		u->st.no_cfi++;
		if (u->verbose)
			fprintf(stderr, "stacktreed: no unwinding table for %s: %s\n", path,
				err == -ENOENT ? "no CFI" : strerror(-err));
		return;
	}
	rows = st_unwind_table__rows(t, &n);
	if (n > u->cap - u->used) {
		u->st.no_room++;
		if (u->verbose)
			fprintf(stderr, "stacktreed: no room for the %zu unwinding rows of %s\n", n,
				path);
	} else {
		struct st_unwind_table_info info;

		memcpy(u->rows + u->used, rows, n * sizeof(*rows));
		m->first = u->used;
		m->nrows = (__u32)n;
		u->used += (__u32)n;
		u->st.modules++;
		u->st.rows = u->used;
		st_unwind_table__info(t, &info);
		u->st.unsupported += info.unsupported;
		if (u->verbose)
			fprintf(stderr, "stacktreed: %zu unwinding rows for %s (%s, %zu FDEs)\n", n,
				path, info.source, info.fdes);
	}
	st_unwind_table__free(t);
}

/* The module in elf: known by its key, or new (rows compiled now). */
static struct umod *module_of(struct st_unwinder *u, Elf *elf, __u64 dev, __u64 ino,
			      const char *path)
{
	char *key = module_key(elf, dev, ino);
	struct umod *m;
	__u64 h;

	if (!key)
		return NULL;
	h = fnv(key, strlen(key), FNV0);
	m = st_u64map__get(u->mods, h);
	if (m && !strcmp(m->key, key)) {
		free(key);
		return m;
	}
	if (m) {	/* a hash collision: not cached */
		free(key);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m || st_u64map__put(u->mods, h, m)) {
		free(m);
		free(key);
		return NULL;
	}
	m->key = key;
	read_loads(elf, m);
	load_rows(u, elf, m, path);
	return m;
}

/* The daemon's vDSO, the same kernel's image as every process's (copied:
 * libelf gets writable memory). */
static Elf *open_vdso(char **copy)
{
	const GElf_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	size_t size;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return NULL;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size > (1 << 20) || !(*copy = malloc(size)))
		return NULL;
	memcpy(*copy, eh, size);
	return elf_memory(*copy, size);
}

/* The module mapped by a /proc/PID/maps line, opened once per file. */
static struct umod *file_module(struct st_unwinder *u, __u32 pid, const struct st_maps_line *l)
{
	bool vdso = !strcmp(l->path, "[vdso]");
	__u64 dev = vdso ? 0 : l->dev, ino = vdso ? 0 : l->ino;
	__u64 h = fnv(&ino, sizeof(ino), fnv(&dev, sizeof(dev), FNV0));
	struct ufile *f = st_u64map__get(u->files, h);
	char path[96], *image = NULL;
	struct umod *m = NULL;
	Elf *elf = NULL;
	int fd = -1;

	if (f && f->dev == dev && f->ino == ino)
		return f->mod;
	if (vdso) {
		elf = open_vdso(&image);
	} else {
		snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid,
			 (unsigned long long)l->start, (unsigned long long)l->end);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fd = open(l->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			elf = elf_begin(fd, ELF_C_READ, NULL);
	}
	if (elf && elf_kind(elf) == ELF_K_ELF)
		m = module_of(u, elf, dev, ino, l->path);
	if (m && !f && (f = calloc(1, sizeof(*f)))) {
		f->dev = dev;
		f->ino = ino;
		f->mod = m;
		if (st_u64map__put(u->files, h, f))
			free(f);
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(image);
	return m;
}

/* The module-relative address at a mapping's start, from its file offset. */
static int map_vaddr(const struct umod *m, __u64 pgoff, __u64 *vaddr)
{
	for (int i = 0; i < m->nloads; i++) {
		__u64 off = m->loads[i].offset;

		if ((off & ~0xfffull) <= pgoff && pgoff < off + m->loads[i].filesz) {
			*vaddr = m->loads[i].vaddr - off + pgoff;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- processes ------------------------------------------------------------- */

static int read_table(struct st_unwinder *u, __u32 pid)
{
	struct st_unwind_proc *tab = u->tab;
	struct st_maps_line l;
	char path[64], *line = NULL;
	size_t cap = 0;
	bool too_many = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ESRCH ? -ENOENT : -errno;
	memset(tab, 0, sizeof(*tab));
	while (getline(&line, &cap, f) > 0) {
		struct st_unwind_map *mp;
		struct umod *m;
		__u64 vaddr = 0;

		if (st_procmaps__parse_line(line, &l) || !l.executable || !l.path ||
		    (l.path[0] != '/' && strcmp(l.path, "[vdso]")))
			continue;
		if (tab->nmaps == ST_UNWIND_MAX_MAPS) {
			too_many = true;
			break;
		}
		m = file_module(u, pid, &l);
		mp = &tab->maps[tab->nmaps++];
		mp->start = l.start;
		mp->len = l.end - l.start > UINT32_MAX ? UINT32_MAX : (__u32)(l.end - l.start);
		if (m && m->nrows && !map_vaddr(m, l.pgoff, &vaddr) && vaddr <= UINT32_MAX) {
			mp->vaddr = (__u32)vaddr;
			mp->rows = m->first;
			mp->nrows = m->nrows;
		}
	}
	free(line);
	fclose(f);
	u->st.too_many_maps += too_many;
	return 0;
}

int st_unwinder__update(struct st_unwinder *u, __u32 pid)
{
	__u64 *pushed, h;
	int err;

	err = read_table(u, pid);
	if (err)
		return err;
	h = fnv(u->tab, sizeof(u->tab->nmaps) + sizeof(u->tab->pad) +
			u->tab->nmaps * sizeof(u->tab->maps[0]), FNV0);
	pushed = st_u64map__get(u->procs, pid);
	if (pushed && *pushed == h)
		return 0;
	err = st_session__unwind_set_proc(u->sess, pid, u->tab);
	if (err) {
		if (u->verbose)
			fprintf(stderr, "stacktreed: cannot push the unwinding table of %u: %s\n",
				pid, strerror(-err));
		return err;
	}
	u->st.pushes++;
	if (!pushed) {
		pushed = malloc(sizeof(*pushed));
		if (!pushed || st_u64map__put(u->procs, pid, pushed)) {
			free(pushed);
			return 0;	/* pushed again next time */
		}
	}
	*pushed = h;
	return 0;
}

void st_unwinder__forget(struct st_unwinder *u, __u32 pid)
{
	__u64 *pushed = st_u64map__get(u->procs, pid);

	if (!pushed)
		return;
	st_session__unwind_del_proc(u->sess, pid);
	*pushed = 0;	/* kept as a tombstone (u64map has no delete); pushed again if seen */
}

void st_unwinder__sweep(struct st_unwinder *u)
{
	size_t pos = 0;
	__u64 *pushed, pid;

	while ((pushed = st_u64map__next(u->procs, &pos, &pid)))
		if (*pushed && kill((pid_t)pid, 0) && errno == ESRCH)
			st_unwinder__forget(u, (__u32)pid);
}

void st_unwinder__stats(const struct st_unwinder *u, struct st_unwinder_stats *out)
{
	size_t pos = 0, live = 0;
	__u64 *pushed;

	*out = u->st;
	while ((pushed = st_u64map__next(u->procs, &pos, NULL)))
		live += *pushed != 0;
	out->procs = live;
}

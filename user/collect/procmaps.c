/* procmaps.c - a process's executable mappings, merged across snapshots
 * (see procmaps.h).
 *
 * `maps` holds every mapping ever seen, sorted by start; `index` is a flat
 * list of non-overlapping ranges, each pointing at the mapping of the newest
 * snapshot covering it, rebuilt after every refresh, for binary search.
 */
#include "user/collect/procmaps.h"
#include "common/grow.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "binsym/elf.h"
#include "stacktree.h"
#include "binsym/symbolizer.h"

struct range {
	__u64 start, end;
	size_t map;		/* index into maps */
};

struct st_procmaps {
	int pid;
	struct st_symbolizer *sym;	/* of the first refresh with one; not owned */
	__u64 generation;
	struct st_mapping *maps;
	size_t nmaps, maps_cap;
	struct range *index;
	size_t nindex;
	bool partial;		/* some of the process's mappings may be missing */
};

struct st_procmaps *st_procmaps__new(int pid)
{
	struct st_procmaps *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->pid = pid;
	return pm;
}

void st_procmaps__free(struct st_procmaps *pm)
{
	size_t i;

	if (!pm)
		return;
	for (i = 0; i < pm->nmaps; i++) {
		free(pm->maps[i].path);
		st_symbolizer__release(pm->sym, pm->maps[i].module);
	}
	free(pm->maps);
	free(pm->index);
	free(pm);
}

size_t st_procmaps__count(const struct st_procmaps *pm)
{
	return pm ? pm->nmaps : 0;
}

size_t st_procmaps__unopened(const struct st_procmaps *pm)
{
	size_t i, n = 0;

	for (i = 0; pm && pm->sym && i < pm->nmaps; i++)
		n += !pm->maps[i].module;
	return n;
}

void st_procmaps__set_partial(struct st_procmaps *pm)
{
	if (pm)
		pm->partial = true;
}

bool st_procmaps__complete(const struct st_procmaps *pm)
{
	return pm && pm->nmaps && !pm->partial;
}

size_t st_procmaps__memory(const struct st_procmaps *pm)
{
	size_t bytes;

	if (!pm)
		return 0;
	bytes = sizeof(*pm) + pm->maps_cap * sizeof(*pm->maps) + pm->nindex * sizeof(*pm->index);
	for (size_t i = 0; i < pm->nmaps; i++)
		bytes += pm->maps[i].path ? strlen(pm->maps[i].path) + 1 : 0;
	return bytes;
}

const struct st_mapping *st_procmaps__at(const struct st_procmaps *pm, size_t i)
{
	return pm && i < pm->nmaps ? &pm->maps[i] : NULL;
}

int st_procmaps__pid(const struct st_procmaps *pm)
{
	return pm ? pm->pid : -1;
}

/* ---- parsing ----------------------------------------------------------- */

static int parse_hex(char **p, char stop, __u64 *out)
{
	char *end;

	if (!**p || **p == ' ' || **p == '-' || **p == '+')
		return -EINVAL;
	errno = 0;
	*out = strtoull(*p, &end, 16);
	if (errno || end == *p || *end != stop)
		return -EINVAL;
	*p = end + 1;
	return 0;
}

/* "START-END PERMS PGOFF MAJ:MIN INODE   PATH" */
int st_procmaps__parse_line(char *line, struct st_maps_line *out)
{
	__u64 major, minor;
	char *p = line, *perms, *end;
	size_t len;

	if (!line || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	len = strcspn(line, "\n");
	line[len] = '\0';

	if (parse_hex(&p, '-', &out->start) || parse_hex(&p, ' ', &out->end))
		return -EINVAL;
	perms = p;
	if (strcspn(perms, " ") != 4 || perms[4] != ' ')	/* not the line's end */
		return -EINVAL;
	out->executable = perms[2] == 'x';
	p = perms + 5;
	if (parse_hex(&p, ' ', &out->pgoff) || parse_hex(&p, ':', &major) ||
	    parse_hex(&p, ' ', &minor))
		return -EINVAL;
	out->dev = makedev(major, minor);
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	out->ino = strtoull(p, &end, 10);
	if (errno || (*end != ' ' && *end != '\0') || out->end < out->start)
		return -EINVAL;
	p = end + strspn(end, " ");
	out->path = *p ? p : NULL;
	return 0;
}

/* ---- snapshots --------------------------------------------------------- */

static bool wanted(const struct st_maps_line *l)
{
	return l->executable && l->path &&
	       (l->path[0] == '/' || strcmp(l->path, "[vdso]") == 0);
}

static bool same(const struct st_mapping *m, const struct st_maps_line *l)
{
	return m->start == l->start && m->end == l->end && m->pgoff == l->pgoff &&
	       m->dev == l->dev && m->ino == l->ino && strcmp(m->path, l->path) == 0;
}

/* First of maps[0..n) with start >= addr (sorted by start). */
static size_t lower_bound(const struct st_procmaps *pm, size_t n, __u64 addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->maps[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct st_mapping *find_same(struct st_procmaps *pm, const struct st_maps_line *l,
				    size_t old_n)
{
	size_t i;

	for (i = lower_bound(pm, old_n, l->start); i < old_n && pm->maps[i].start == l->start; i++) {
		if (same(&pm->maps[i], l))
			return &pm->maps[i];
	}
	return NULL;
}

void st_procmaps__test_stop(const char *env, const char *path)
{
	const char *want = getenv(env);

	if (want && *want && strstr(path, want))
		raise(SIGSTOP);
}

/* Line l's file in the symbolizer (a reference, or NULL: unreadable).
 * gone: the process may have exited (a mapping told by BPF as it was
 * made): opened by its path in our root when its link is gone, the inode
 * checked all the same. */
static struct st_module *open_module(const struct st_procmaps *pm, const struct st_maps_line *l,
				     struct st_symbolizer *sym, bool gone)
{
	char open_path[64];

	snprintf(open_path, sizeof(open_path), "/proc/%d/map_files/%llx-%llx", pm->pid,
		 (unsigned long long)l->start, (unsigned long long)l->end);
	/* gone: by its path when its link is gone too (not the vDSO's: ours) */
	return st_symbolizer__module_mapped(
		sym, l->path,
		gone && (l->path[0] != '/' || access(open_path, F_OK)) ? NULL : open_path, l->dev,
		l->ino);
}

/* Add line l (gone: open_module()'s). */
static int add_mapping(struct st_procmaps *pm, const struct st_maps_line *l,
		       struct st_symbolizer *sym, bool gone)
{
	struct st_mapping *m;

	if (ST_GROW(pm->maps, pm->maps_cap, pm->nmaps, 32))
		return -ENOMEM;
	m = &pm->maps[pm->nmaps];
	memset(m, 0, sizeof(*m));
	m->path = strdup(l->path);
	if (!m->path)
		return -ENOMEM;
	m->start = l->start;
	m->end = l->end;
	m->pgoff = l->pgoff;
	m->dev = l->dev;
	m->ino = l->ino;
	m->generation = m->first_generation = pm->generation;
	if (sym)
		st_procmaps__test_stop("STACKTREED_TEST_STOP_BEFORE_OPEN", l->path);
	m->module = sym ? open_module(pm, l, sym, gone) : NULL;
	pm->nmaps++;
	return 0;
}

static int cmp_mapping(const void *pa, const void *pb)
{
	const struct st_mapping *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->generation != b->generation)
		return a->generation < b->generation ? -1 : 1;
	return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
	__u64 a = *(const __u64 *)pa, b = *(const __u64 *)pb;

	return a < b ? -1 : a > b;
}

/* Rebuild the flat index: cut the address space at every mapping edge, give
 * each piece to the newest mapping covering it, join neighbours. */
static int rebuild_index(struct st_procmaps *pm)
{
	struct range *index = NULL;
	size_t npts = 0, i, j, n = 0;
	__u64 *pts = NULL;
	int err = 0;

	free(pm->index);
	pm->index = NULL;
	pm->nindex = 0;
	if (!pm->nmaps)
		return 0;
	pts = malloc(2 * pm->nmaps * sizeof(*pts));
	index = malloc(2 * pm->nmaps * sizeof(*index));
	if (!pts || !index) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < pm->nmaps; i++) {
		pts[npts++] = pm->maps[i].start;
		pts[npts++] = pm->maps[i].end;
	}
	qsort(pts, npts, sizeof(*pts), cmp_u64);

	for (i = 0; i + 1 < npts; i++) {
		__u64 lo = pts[i], hi = pts[i + 1];
		size_t best = pm->nmaps;

		if (lo == hi)
			continue;
		/* maps sorted by start: only those starting at or before lo */
		for (j = 0; j < pm->nmaps && pm->maps[j].start <= lo; j++) {
			const struct st_mapping *m = &pm->maps[j];

			if (m->end > lo && (best == pm->nmaps ||
					    m->generation >= pm->maps[best].generation))
				best = j;
		}
		if (best == pm->nmaps)
			continue;
		if (n && index[n - 1].map == best && index[n - 1].end == lo) {
			index[n - 1].end = hi;
			continue;
		}
		index[n].start = lo;
		index[n].end = hi;
		index[n].map = best;
		n++;
	}
	pm->index = index;
	pm->nindex = n;
	index = NULL;
cleanup:
	free(pts);
	free(index);
	return err;
}

int st_procmaps__refresh(struct st_procmaps *pm, struct st_symbolizer *sym)
{
	struct st_maps_line l;
	size_t old_n, cap = 0;
	char path[64], *line = NULL;
	struct st_mapping *m;
	int err = 0, added = 0;
	FILE *f;

	if (!pm || (sym && pm->sym && sym != pm->sym))
		return -EINVAL;
	if (sym)
		pm->sym = sym;
	/* test hook (tests/integration/test_shortlived.py): every process as
	 * one gone before its maps could be read */
	if (getenv("STACKTREED_TEST_NO_PROC_MAPS"))
		return -EAGAIN;
	snprintf(path, sizeof(path), "/proc/%d/maps", pm->pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ESRCH ? -ENOENT : -errno;
	pm->generation++;
	old_n = pm->nmaps;
	while (getline(&line, &cap, f) > 0) {
		if (st_procmaps__parse_line(line, &l) || !wanted(&l))
			continue;
		m = find_same(pm, &l, old_n);
		if (m) {
			m->generation = pm->generation;
			continue;
		}
		err = add_mapping(pm, &l, sym, false);
		if (err)
			goto cleanup;
		added++;
	}
	if (ferror(f)) {
		/* the process went away while we read */
		err = errno == ESRCH || errno == ENOENT ? -ENOENT : -EIO;
	}
cleanup:
	if (pm->nmaps != old_n)
		qsort(pm->maps, pm->nmaps, sizeof(*pm->maps), cmp_mapping);
	if (rebuild_index(pm) && !err)
		err = -ENOMEM;
	free(line);
	fclose(f);
	return err ? err : added;
}

int st_procmaps__place(struct st_procmaps *pm, const struct st_maps_line *l,
		       struct st_symbolizer *sym)
{
	struct st_mapping *m;
	int err;

	if (!pm || !l || !wanted(l) || (sym && pm->sym && sym != pm->sym))
		return -EINVAL;
	if (sym)
		pm->sym = sym;
	m = find_same(pm, l, pm->nmaps);
	if (m) {
		/* read from /proc while its process went (the maps line read,
		 * its file not opened yet: test_shortlived.py): opened now */
		if (m->module || !pm->sym)
			return 0;
		m->module = open_module(pm, l, pm->sym, true);
		return m->module ? 1 : 0;
	}
	pm->generation++;	/* the newest on overlap, as a snapshot of its own */
	err = add_mapping(pm, l, pm->sym, true);
	qsort(pm->maps, pm->nmaps, sizeof(*pm->maps), cmp_mapping);
	if (rebuild_index(pm) && !err)
		err = -ENOMEM;
	return err ? err : 1;
}

int st_procmaps__kept_line(const struct st_exec_source *src, const struct st_exec_map *m,
			   struct st_file_path *fp, struct st_maps_line *l)
{
	struct st_file_key key = { .dev = m->dev, .ino = m->ino };

	if (m->start >= m->end)
		return -ENOENT;
	*l = (struct st_maps_line){ .start = m->start, .end = m->end, .pgoff = m->pgoff,
				    .dev = makedev(m->dev >> 20, m->dev & 0xfffff), .ino = m->ino,
				    .executable = true };
	if (m->dev == ST_MAP_VDSO) {
		l->dev = l->ino = 0;
		l->path = "[vdso]";
		return 0;
	}
	if (!src->path || src->path(src->ctx, &key, fp) || (fp->flags & ST_MAP_CUT) ||
	    fp->off >= ST_MAP_PATH_END)
		return -ENAMETOOLONG;
	fp->path[ST_MAP_PATH_END] = '\0';
	l->path = fp->path + fp->off;
	return 0;
}

int st_procmaps__inherit(struct st_procmaps *pm, const struct st_procmaps *from)
{
	size_t old_n, i;
	int added = 0, err = 0;

	if (!pm || !from)
		return -EINVAL;
	if (pm->sym && from->sym && pm->sym != from->sym)
		return -EINVAL;
	if (!pm->sym)
		pm->sym = from->sym;
	old_n = pm->nmaps;
	for (i = 0; i < from->nmaps; i++) {
		const struct st_mapping *f = &from->maps[i];
		struct st_maps_line l = { .start = f->start, .end = f->end, .pgoff = f->pgoff,
					  .dev = f->dev, .ino = f->ino, .executable = true,
					  .path = f->path };
		struct st_mapping *m;

		if (find_same(pm, &l, old_n))
			continue;
		if (ST_GROW(pm->maps, pm->maps_cap, pm->nmaps, 32)) {
			err = -ENOMEM;
			break;
		}
		m = &pm->maps[pm->nmaps];
		*m = *f;
		if (!(m->path = strdup(f->path))) {
			err = -ENOMEM;
			break;
		}
		m->generation = m->first_generation = 0;	/* older than any read */
		m->module = st_symbolizer__hold(pm->sym, f->module);
		pm->nmaps++;
		added++;
	}
	if (pm->nmaps != old_n)
		qsort(pm->maps, pm->nmaps, sizeof(*pm->maps), cmp_mapping);
	if (rebuild_index(pm) && !err)
		err = -ENOMEM;
	return err ? err : added;
}

int st_procmaps__drop_added(struct st_procmaps *pm)
{
	size_t kept = 0;

	if (!pm)
		return 0;
	for (size_t i = 0; i < pm->nmaps; i++) {
		struct st_mapping *m = &pm->maps[i];

		if (m->first_generation == pm->generation) {
			free(m->path);
			st_symbolizer__release(pm->sym, m->module);
			continue;
		}
		pm->maps[kept++] = *m;
	}
	pm->nmaps = kept;
	return rebuild_index(pm);
}

const struct st_mapping *st_procmaps__find(const struct st_procmaps *pm, __u64 addr)
{
	size_t lo = 0, hi;

	if (!pm)
		return NULL;
	hi = pm->nindex;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->index[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < pm->nindex && pm->index[lo].start <= addr)
		return &pm->maps[pm->index[lo].map];
	return NULL;
}

int st_procmaps__load_bias(const char *file, const struct st_maps_line *m, __u64 *bias)
{
	struct st_load *loads = NULL;
	struct st_elf *e = NULL;
	int n, r = -ENOENT;

	if (st_elf__open(file, &e))
		return -ENOENT;
	n = st_elf__loads(e, &loads);
	for (int i = 0; i < n; i++) {
		__u64 pg = loads[i].offset & ~4095ULL;

		if (m->pgoff >= pg && m->pgoff < loads[i].offset + loads[i].filesz) {
			*bias = m->start - ((loads[i].vaddr & ~4095ULL) + (m->pgoff - pg));
			r = 0;
			break;
		}
	}
	free(loads);
	st_elf__free(e);
	return r;
}

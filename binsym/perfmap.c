/* perfmap.c - /tmp/perf-PID.map: parse, resolve overlaps, look up (see
 * perfmap.h).
 *
 * Parsing collects the lines' entries (start, end, name, line number);
 * overlaps are then resolved by a sweep over the entries' edges in address
 * order with a max-heap of the entries covering the current address, keyed
 * by line number (ended entries leave it lazily): each piece between two
 * edges goes to the heap's top, the latest line. Neighbouring pieces of one
 * entry are joined. The result is sorted, disjoint ranges for a binary
 * search. Lines appended to a file already read are resolved alone and
 * painted over the ranges of the earlier ones (linear), so that a JIT's
 * growing map costs its new lines, not the whole file again.
 */
#include "binsym/perfmap.h"
#include "binsym/safeopen.h"
#include "common/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct entry {
	__u64 start, end;	/* [start, end) */
	size_t name;		/* offset in names */
};

struct range {
	__u64 start, end;
	size_t name;		/* of the entry, which identifies it */
	__u64 entry_start;	/* the entry's own start (a later one may cut it) */
};

struct st_perfmap {
	struct entry *entries;	/* every line kept, in line order */
	size_t nentries, entries_cap;
	struct range *ranges;	/* the entries, overlaps resolved */
	size_t nranges, ranges_cap;
	struct range *spare;	/* the ranges before the last append, reused by the next */
	size_t spare_cap;
	char *names;
	size_t names_len, names_cap;
	/* a last line without newline (maybe still being written): its entry
	 * (0 or 1) and where its name starts, taken back before the next
	 * append */
	size_t tail_entries, tail_names;
	bool have_file;		/* the file last read: */
	__u64 dev, ino, size;
	__s64 mtime_sec, mtime_nsec;
	__u64 parsed;		/* its bytes up to the last newline parsed */
};

struct st_perfmap *st_perfmap__new(void)
{
	return calloc(1, sizeof(struct st_perfmap));
}

static void clear(struct st_perfmap *m)
{
	free(m->entries);
	free(m->ranges);
	free(m->spare);
	free(m->names);
	m->spare = NULL;
	m->spare_cap = 0;
	m->entries = NULL;
	m->ranges = NULL;
	m->names = NULL;
	m->nentries = m->entries_cap = m->nranges = m->ranges_cap = 0;
	m->names_len = m->names_cap = m->tail_entries = m->tail_names = 0;
	m->have_file = false;
	m->parsed = 0;
}

void st_perfmap__free(struct st_perfmap *m)
{
	if (!m)
		return;
	clear(m);
	free(m);
}

size_t st_perfmap__count(const struct st_perfmap *m)
{
	return m ? m->nranges : 0;
}

size_t st_perfmap__memory(const struct st_perfmap *m)
{
	return m ? sizeof(*m) + m->entries_cap * sizeof(*m->entries) +
			   (m->ranges_cap + m->spare_cap) * sizeof(*m->ranges) + m->names_cap :
		   0;
}

/* ---- parsing ------------------------------------------------------------ */

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A hex number (optional 0x) at *p (< end) that fits 64 bits, then at
 * least one blank, skipped. */
static bool parse_hex(const char **p, const char *end, __u64 *out)
{
	const char *s = *p;
	int digits = 0, any = 0;
	__u64 v = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end && !blank(*s); s++, any++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return false;
		if (v || d)	/* leading zeros do not count */
			digits++;
		if (digits > 16)
			return false;
		v = v << 4 | (__u64)d;
	}
	if (!any || s == end)	/* no digits, or nothing after the number */
		return false;
	while (s < end && blank(*s))
		s++;
	*p = s;
	*out = v;
	return true;
}

/* One line [s, end) without its newline: 0 with *e filled (name not yet
 * stored: *name and *nlen), or -EINVAL. */
static int parse_line(const char *s, const char *end, struct entry *e, const char **name,
		      size_t *nlen)
{
	__u64 size;

	if (memchr(s, '\0', (size_t)(end - s)))
		return -EINVAL;
	if (!parse_hex(&s, end, &e->start) || !parse_hex(&s, end, &size))
		return -EINVAL;
	if (end > s && end[-1] == '\r')
		end--;
	if (s >= end || size == 0 || e->start + size < e->start)
		return -EINVAL;
	e->end = e->start + size;
	*name = s;
	*nlen = (size_t)(end - s);
	if (*nlen > ST_PERFMAP_MAX_NAME)
		*nlen = ST_PERFMAP_MAX_NAME;
	return 0;
}

static int add_name(struct st_perfmap *m, const char *name, size_t len, size_t *off)
{
	while (m->names_cap - m->names_len < len + 1) {
		size_t ncap = m->names_cap ? m->names_cap * 2 : 4096;
		char *n = realloc(m->names, ncap);

		if (!n)
			return -ENOMEM;
		m->names = n;
		m->names_cap = ncap;
	}
	memcpy(m->names + m->names_len, name, len);
	m->names[m->names_len + len] = '\0';
	*off = m->names_len;
	m->names_len += len + 1;
	return 0;
}

/* ---- overlaps ------------------------------------------------------------ */

struct edge {
	__u64 at;
	size_t entry;	/* index into the entries */
};

static int cmp_edge(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;

	return a->at < b->at ? -1 : a->at > b->at;
}

/* max-heap of entry indexes: entries are in line order, so the largest
 * index is the latest line */
static void heap_push(size_t *h, size_t *n, size_t v)
{
	size_t i = (*n)++;

	while (i && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(size_t *h, size_t *n)
{
	size_t v = h[--(*n)], i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/* A growable array of ranges. */
struct ranges {
	struct range *r;
	size_t n, cap;
};

static int push_range(struct ranges *out, struct range r)
{
	if (ST_GROW(out->r, out->cap, out->n, 64))
		return -ENOMEM;
	out->r[out->n++] = r;
	return 0;
}

/* The entries [first, nentries) with their overlaps resolved (the later
 * wins) into out: sorted, disjoint ranges. */
static int resolve_overlaps(const struct st_perfmap *m, size_t first, struct ranges *out)
{
	const struct entry *es = m->entries;
	size_t n = m->nentries - first, *heap = NULL, nheap = 0, i = 0;
	struct edge *edges = NULL;
	int err = 0;

	out->n = 0;
	if (!n)
		return 0;
	edges = malloc(n * sizeof(*edges));
	heap = malloc(n * sizeof(*heap));
	if (!edges || !heap) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t k = 0; k < n; k++) {
		edges[k].at = es[first + k].start;
		edges[k].entry = first + k;
	}
	qsort(edges, n, sizeof(*edges), cmp_edge);
	/* points where the winner may change: starts and ends; ends are
	 * found as the heap's tops expire */
	while (i < n || nheap) {
		struct range *last = out->n ? &out->r[out->n - 1] : NULL;
		__u64 at, next;

		at = nheap ? last->end : edges[i].at;	/* where the last piece ended */
		while (i < n && edges[i].at <= at)
			heap_push(heap, &nheap, edges[i++].entry);
		while (nheap && es[heap[0]].end <= at)
			heap_pop(heap, &nheap);
		if (!nheap)
			continue;
		/* the top wins up to its end or the next start, whichever first */
		next = es[heap[0]].end;
		if (i < n && edges[i].at < next)
			next = edges[i].at;
		if (last && last->end == at && last->name == es[heap[0]].name) {
			last->end = next;
			continue;
		}
		err = push_range(out, (struct range){ at, next, es[heap[0]].name,
						      es[heap[0]].start });
		if (err)
			goto cleanup;
	}
cleanup:
	free(edges);
	free(heap);
	return err;
}

/* old's ranges under the newer ones of top (both sorted and disjoint) into
 * out: top wins where they overlap. Linear. */
static int paint(const struct ranges *old, const struct ranges *top, struct ranges *out)
{
	size_t i = 0, j = 0;
	__u64 pos = 0;	/* everything below was written */
	int err = 0;

	out->n = 0;
	while (!err && (i < old->n || j < top->n)) {
		const struct range *r = i < old->n ? &old->r[i] : NULL;
		__u64 from, to;

		if (j < top->n && (!r || top->r[j].start <= (r->start > pos ? r->start : pos))) {
			err = push_range(out, top->r[j]);
			pos = top->r[j++].end;
			continue;
		}
		from = r->start > pos ? r->start : pos;
		to = j < top->n && top->r[j].start < r->end ? top->r[j].start : r->end;
		if (from < to) {
			struct range piece = *r;

			piece.start = from;
			piece.end = to;
			err = push_range(out, piece);
			pos = to;
		}
		if (to == r->end || from >= r->end)
			i++;
	}
	return err;
}

/* m->ranges from its entries: all of them again, or (first > 0) the
 * entries from first on painted over the ranges of those before. */
static int update_ranges(struct st_perfmap *m, size_t first)
{
	struct ranges old = { m->ranges, m->nranges, m->ranges_cap }, top = {};
	/* into the spare array: its pages are there already (a fresh one of a
	 * large map costs more in page faults than the painting itself) */
	struct ranges out = { m->spare, 0, m->spare_cap };
	int err;

	if (!first) {
		err = resolve_overlaps(m, 0, &old);
		m->ranges = old.r;
		m->nranges = old.n;
		m->ranges_cap = old.cap;
		return err;
	}
	err = resolve_overlaps(m, first, &top);
	if (!err && top.n)
		err = paint(&old, &top, &out);
	if (!err && top.n) {
		m->spare = m->ranges;
		m->spare_cap = m->ranges_cap;
		m->ranges = out.r;
		m->nranges = out.n;
		m->ranges_cap = out.cap;
	} else {
		m->spare = out.r;
		m->spare_cap = out.cap;
	}
	free(top.r);
	return err;
}

/* Parse buf's lines into more entries (the tail entry of the previous
 * append taken back first); *consumed: the bytes up to the last newline.
 * final: buf ends the file, a last line without newline is complete;
 * otherwise it may still be being written: its entry is kept until the
 * next append, and counted (bad, dropped) only once complete. */
static int append(struct st_perfmap *m, const char *buf, size_t len, size_t max_entries,
		  bool final, struct st_perfmap_stats *stats, size_t *consumed)
{
	const char *p = buf, *end = buf ? buf + len : buf;	/* NULL + 0 is undefined */
	size_t bad = 0, dropped = 0, first;
	int err = 0;

	/* a tail taken back is painted in the ranges already: all again */
	first = m->tail_entries ? 0 : m->nentries;
	m->nentries -= m->tail_entries;
	if (m->tail_entries)
		m->names_len = m->tail_names;
	m->tail_entries = 0;
	*consumed = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;
		const char *name;
		struct entry e;
		size_t nlen, names_before = m->names_len;

		if (eol == p) {			/* an empty line */
			p = eol + 1;
			*consumed = (size_t)(p - buf);
			continue;
		}
		if (parse_line(p, eol, &e, &name, &nlen)) {
			bad += nl || final;
		} else if (m->nentries >= max_entries) {
			dropped += nl || final;
		} else {
			if (ST_GROW(m->entries, m->entries_cap, m->nentries, 64) ||
			    add_name(m, name, nlen, &e.name)) {
				err = -ENOMEM;
				goto cleanup;
			}
			m->entries[m->nentries++] = e;
			if (!nl && !final) {
				m->tail_entries = 1;
				m->tail_names = names_before;
			}
		}
		if (!nl)
			break;
		p = nl + 1;
		*consumed = (size_t)(p - buf);
	}
	err = update_ranges(m, first);
cleanup:
	if (stats) {
		stats->bad_lines += bad;
		stats->dropped += dropped;
	}
	return err;
}

int st_perfmap__append(struct st_perfmap *m, const char *buf, size_t len, size_t max_entries,
		       struct st_perfmap_stats *stats, size_t *consumed)
{
	size_t used;
	int err;

	if (!m || (!buf && len))
		return -EINVAL;
	err = append(m, buf, len, max_entries ? max_entries : ST_PERFMAP_MAX_ENTRIES, false,
		     stats, consumed ? consumed : &used);
	if (err)
		clear(m);
	return err;
}

int st_perfmap__parse(struct st_perfmap *m, const char *buf, size_t len, size_t max_entries,
		      struct st_perfmap_stats *stats)
{
	size_t consumed;
	int err;

	if (!m || (!buf && len))
		return -EINVAL;
	clear(m);
	err = append(m, buf, len, max_entries ? max_entries : ST_PERFMAP_MAX_ENTRIES, true, stats,
		     &consumed);
	if (err)
		clear(m);
	return err;
}

const char *st_perfmap__find(const struct st_perfmap *m, __u64 addr, __u64 *start)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	hi = m->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->ranges[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->nranges || m->ranges[lo].start > addr)
		return NULL;
	if (start)
		*start = m->ranges[lo].entry_start;
	return m->names + m->ranges[lo].name;
}

/* ---- reading --------------------------------------------------------------- */

int st_perfmap__proc_ids(unsigned pid, __u32 *euid, __u32 *nspid)
{
	char path[64], line[512];
	bool have_uid = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	*nspid = pid;
	while (fgets(line, sizeof(line), f)) {
		unsigned ruid, eu;

		if (sscanf(line, "Uid: %u %u", &ruid, &eu) == 2) {
			*euid = eu;
			have_uid = true;
		} else if (strncmp(line, "NSpid:", 6) == 0) {
			char *last = strrchr(line, '\t');

			if (last && last[1] >= '0' && last[1] <= '9')
				*nspid = (__u32)strtoul(last + 1, NULL, 10);
		}
	}
	fclose(f);
	return have_uid ? 0 : -ESRCH;
}

static int read_all(int fd, __u64 max, char **out, size_t *len)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	ssize_t r;

	for (;;) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb;

			if (cap > max) {	/* grew past the bound while we read */
				free(buf);
				return -EFBIG;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -errno;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

int st_perfmap__read(struct st_perfmap *m, unsigned pid, struct st_perfmap_stats *stats)
{
	struct st_safe_stats safe = {};
	struct st_safe_open o = {
		.max_size = (__u64)ST_PERFMAP_MAX_MB << 20,
		.nofollow = true,
		.stats = &safe,
	};
	__u32 euid = 0, nspid = 0;
	char path[64], *buf = NULL;
	size_t len = 0, consumed;
	bool same, grown;
	struct stat st;
	int fd = -1, err;
	__u64 from;

	err = st_perfmap__proc_ids(pid, &euid, &nspid);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", nspid);
	fd = st_safe_open_in_proc(pid, path, &o, &st);
	if (fd == -ENOENT) {
		fd = -1;
		err = 0;	/* none (yet, or removed): keep what we have */
		goto cleanup;
	}
	if (fd < 0) {
		err = fd;
		fd = -1;
		goto cleanup;
	}
	if (st.st_uid != euid && st.st_uid != 0) {
		err = -EPERM;
		if (stats)
			stats->not_owned++;
		goto cleanup;
	}
	same = m->have_file && m->dev == st.st_dev && m->ino == st.st_ino;
	if (same && m->size == (__u64)st.st_size && m->mtime_sec == st.st_mtim.tv_sec &&
	    m->mtime_nsec == st.st_mtim.tv_nsec)
		goto cleanup;	/* unchanged */
	/* JITs append: a file that grew is read from its last newline on;
	 * one replaced, cut or rewritten in place from the start */
	grown = same && (__u64)st.st_size > m->size;
	from = grown ? m->parsed : 0;
	if (from && lseek(fd, (off_t)from, SEEK_SET) < 0) {
		err = -errno;
		goto cleanup;
	}
	err = read_all(fd, o.max_size - from, &buf, &len);
	if (err == -EFBIG) {
		safe.too_large++;
		goto cleanup;
	}
	if (err)
		goto cleanup;
	if (!grown)
		clear(m);
	if ((err = st_perfmap__append(m, buf, len, 0, stats, &consumed)))
		goto cleanup;
	m->parsed = from + consumed;
	m->have_file = true;
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->size = (__u64)st.st_size;
	m->mtime_sec = st.st_mtim.tv_sec;
	m->mtime_nsec = st.st_mtim.tv_nsec;
	if (stats)
		stats->files++;
	err = 1;
cleanup:
	if (stats) {
		stats->symlink += safe.symlink;
		stats->not_regular += safe.not_regular;
		stats->too_large += safe.too_large;
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

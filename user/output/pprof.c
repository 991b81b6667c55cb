/* pprof.c - profile.pb.gz writer (protobuf-c + zlib), see pprof.h.
 *
 * The encoder interns strings, functions, mappings and locations in hash
 * indexes over growing arrays, collects samples with offsets into pools, and
 * only builds the protobuf-c pointer arrays at the end (after the last
 * realloc), then packs and gzips.
 */
#include "user/output/pprof.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "proto/profile.pb-c.h"
#include "user/model/profile.h"
#include "common/hash.h"
#include "common/tree.h"
#include "common/u64map.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__ValueType PValueType;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;

#define MAX_LABELS 8

/* The tables of strings, functions, mappings and locations are each
 * indexed by a u64map (common/u64map.h): an entry's hash -> its index + 1
 * (as a pointer), told apart by a key that carries the encoder. */

struct sample {
	size_t loc_off, nloc;	/* into pp.locids */
	size_t val_off;		/* into pp.vals, nvals each */
	size_t lab_off, nlab;	/* into pp.labidx */
};

struct pp {
	const struct st_profile *p;
	size_t nvals;		/* values per sample: 1 or 2 */
	int64_t period;
	char **strs;
	size_t nstrs, capstrs;
	struct st_u64map *stri;
	PFunction *funcs;
	size_t nfuncs, capfuncs;
	struct st_u64map *funci;
	PMapping *maps;
	size_t nmaps, capmaps;
	struct st_u64map *mapi;
	PLocation *locs;
	size_t nlocs, caplocs;
	struct st_u64map *loci;
	PLabel *labels;
	size_t nlabels, caplabels;
	size_t *labidx;		/* runs of label indexes, one run per sample label set */
	size_t nlabidx, caplabidx;
	struct sample *samples;
	size_t nsamples, capsamples;
	uint64_t *locids;
	size_t nlocids, caplocids;
	int64_t *vals;
	size_t nvalsused, capvals;
};

static int grow(void *arrp, size_t *cap, size_t need, size_t size)
{
	void **arr = arrp;
	size_t ncap = *cap ? *cap : 16;
	void *na;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	na = realloc(*arr, ncap * size);
	if (!na)
		return -ENOMEM;
	*arr = na;
	*cap = ncap;
	return 0;
}

/* The index + 1 of the entry of ix that eq matches with key, or 0. */
static size_t ix_find(const struct st_u64map *ix, __u64 h, st_u64map_eq eq, const void *key)
{
	return (size_t)(uintptr_t)st_u64map__find(ix, h, eq, key);
}

static int ix_add(struct st_u64map *ix, __u64 h, size_t idx1)
{
	return st_u64map__add(ix, h, (void *)(uintptr_t)idx1);
}

struct str_key {
	const struct pp *b;
	const char *s;
};

static bool str_eq(const void *value, const void *key)
{
	const struct str_key *k = key;

	return !strcmp(k->b->strs[(uintptr_t)value - 1], k->s);
}

/* String table index of s (interned, "" is 0). -ENOMEM as a negative. */
static int64_t str(struct pp *b, const char *s)
{
	struct str_key k = { b, s ? s : "" };
	uint64_t h = st_hash_str(k.s);
	size_t idx1 = ix_find(b->stri, h, str_eq, &k);

	if (idx1)
		return (int64_t)idx1 - 1;
	if (grow(&b->strs, &b->capstrs, b->nstrs + 1, sizeof(*b->strs)) ||
	    !(b->strs[b->nstrs] = strdup(k.s)))
		return -ENOMEM;
	if (ix_add(b->stri, h, ++b->nstrs))
		return -ENOMEM;
	return (int64_t)b->nstrs - 1;
}

struct func_key {
	const struct pp *b;
	int64_t name, file;
};

static bool func_eq(const void *value, const void *key)
{
	const struct func_key *k = key;
	const PFunction *f = &k->b->funcs[(uintptr_t)value - 1];

	return f->name == k->name && f->filename == k->file;
}

static int function_id(struct pp *b, int64_t name, int64_t sysname, int64_t file, uint64_t *id)
{
	struct func_key k = { b, name, file };
	uint64_t h = st_hash_mix(st_hash_mix(1, (uint64_t)name), (uint64_t)file);
	size_t idx1 = ix_find(b->funci, h, func_eq, &k);

	if (!idx1) {
		PFunction f = PERFTOOLS__PROFILES__FUNCTION__INIT;

		if (grow(&b->funcs, &b->capfuncs, b->nfuncs + 1, sizeof(*b->funcs)))
			return -ENOMEM;
		f.id = b->nfuncs + 1;
		f.name = name;
		f.system_name = sysname;	/* the mangled name (name when not demangled) */
		f.filename = file;
		b->funcs[b->nfuncs] = f;
		idx1 = ++b->nfuncs;
		if (ix_add(b->funci, h, idx1))
			return -ENOMEM;
	}
	*id = idx1;
	return 0;
}

struct map_key {
	const struct pp *b;
	int64_t file;
};

static bool map_eq(const void *value, const void *key)
{
	const struct map_key *k = key;

	return k->b->maps[(uintptr_t)value - 1].filename == k->file;
}

/* module: the frame's module name (file is its string index), whose
 * build id the profile's modules list may know. */
static int mapping_id(struct pp *b, const char *module, int64_t file, uint64_t *id)
{
	struct map_key k = { b, file };
	uint64_t h = st_hash_mix(2, (uint64_t)file);
	size_t idx1 = ix_find(b->mapi, h, map_eq, &k);

	if (!idx1) {
		PMapping m = PERFTOOLS__PROFILES__MAPPING__INIT;
		const struct st_prof_module *pm = st_profile__module(b->p, module);

		if (grow(&b->maps, &b->capmaps, b->nmaps + 1, sizeof(*b->maps)))
			return -ENOMEM;
		if (pm && pm->build_id && (m.build_id = str(b, pm->build_id)) < 0)
			return -ENOMEM;
		m.id = b->nmaps + 1;
		m.filename = file;
		m.has_functions = true;	/* every location has a function: never symbolize */
		m.memory_start = UINT64_MAX;
		b->maps[b->nmaps] = m;
		idx1 = ++b->nmaps;
		if (ix_add(b->mapi, h, idx1))
			return -ENOMEM;
	}
	*id = idx1;
	return 0;
}

/* At most this many Line entries in one location (an inline chain; the
 * tree's chains are at most ST_SRC_MAX_FRAMES deep). */
#define MAX_LINES 64

struct loc_key {
	const struct pp *b;
	uint64_t mapping, address;
	size_t nlines;
	uint64_t function[MAX_LINES];	/* innermost first, as pprof wants */
	int64_t line[MAX_LINES];
};

static bool loc_eq(const void *value, const void *key)
{
	const struct loc_key *k = key;
	const PLocation *l = &k->b->locs[(uintptr_t)value - 1];

	if (l->mapping_id != k->mapping || l->address != k->address || l->n_line != k->nlines)
		return false;
	for (size_t i = 0; i < k->nlines; i++)
		if (l->line[i]->function_id != k->function[i] || l->line[i]->line != k->line[i])
			return false;
	return true;
}

/* The function of one frame; its file is the source file when known, else
 * the module. */
static int frame_function(struct pp *b, const struct st_node *n, uint64_t *id)
{
	int64_t name, sysname, file = 0;
	char buf[512];

	/* a data leaf's function is the data symbol: name it as xtree does */
	name = str(b, n->f.function && n->f.kind != ST_FRAME_DATA ?
			      n->f.function : st_frame__name(&n->f, buf, sizeof(buf)));
	sysname = n->f.system_name && n->f.kind != ST_FRAME_DATA ? str(b, n->f.system_name) : name;
	if (n->f.file || n->f.module)
		file = str(b, n->f.file ? n->f.file : n->f.module);
	if (name < 0 || sysname < 0 || file < 0 || function_id(b, name, sysname, file, id))
		return -ENOMEM;
	return 0;
}

/* The location of a frame: (module, runtime address, its lines). An inline
 * frame's location is the frame it is inlined into, with one Line per
 * function of the chain up to it, innermost first. */
static int location_id(struct pp *b, const struct st_node *n, uint64_t *id)
{
	struct loc_key k = { .b = b };
	const struct st_node *c = n;
	const char *module;
	size_t idx1;
	uint64_t h;

	for (;;) {
		if (frame_function(b, c, &k.function[k.nlines]))
			return -ENOMEM;
		k.line[k.nlines++] = c->f.line;
		if (c->f.kind != ST_FRAME_INLINE || !c->parent || c->parent->depth == 0 ||
		    k.nlines == MAX_LINES)
			break;
		c = c->parent;
	}
	k.address = c->f.addr;
	/* an interpreted runtime's frames: one mapping for all ("[python]") */
	module = st_runtime__module(c->f.runtime);
	if (!module)
		module = c->f.module;
	if (module) {
		int64_t mod = str(b, module);

		if (mod < 0 || mapping_id(b, module, mod, &k.mapping))
			return -ENOMEM;
	}
	h = st_hash_mix(st_hash_mix(3, k.mapping), k.address);
	for (size_t i = 0; i < k.nlines; i++)
		h = st_hash_mix(st_hash_mix(h, k.function[i]), (uint64_t)k.line[i]);
	idx1 = ix_find(b->loci, h, loc_eq, &k);
	if (!idx1) {
		PLocation l = PERFTOOLS__PROFILES__LOCATION__INIT;
		PLine **lines = calloc(k.nlines, sizeof(*lines));

		if (!lines || grow(&b->locs, &b->caplocs, b->nlocs + 1, sizeof(*b->locs))) {
			free(lines);
			return -ENOMEM;
		}
		for (size_t i = 0; i < k.nlines; i++) {
			lines[i] = malloc(sizeof(*lines[i]));
			if (!lines[i]) {
				while (i--)
					free(lines[i]);
				free(lines);
				return -ENOMEM;
			}
			perftools__profiles__line__init(lines[i]);
			lines[i]->function_id = k.function[i];
			lines[i]->line = k.line[i];
		}
		l.id = b->nlocs + 1;
		l.mapping_id = k.mapping;
		l.address = k.address;
		l.n_line = k.nlines;
		l.line = lines;
		b->locs[b->nlocs] = l;
		idx1 = ++b->nlocs;
		if (ix_add(b->loci, h, idx1))
			return -ENOMEM;
		if (k.mapping) {
			PMapping *m = &b->maps[k.mapping - 1];

			if (k.address < m->memory_start)
				m->memory_start = k.address;
			if (k.address >= m->memory_limit)
				m->memory_limit = k.address + 1;
		}
	}
	*id = idx1;
	return 0;
}

/* One label (string value when s, else number). */
static int add_label(struct pp *b, const char *key, const char *s, int64_t num)
{
	PLabel l = PERFTOOLS__PROFILES__LABEL__INIT;

	l.key = str(b, key);
	l.str = s ? str(b, s) : 0;
	l.num = s ? 0 : num;
	if (l.key < 0 || l.str < 0 ||
	    grow(&b->labels, &b->caplabels, b->nlabels + 1, sizeof(*b->labels)) ||
	    grow(&b->labidx, &b->caplabidx, b->nlabidx + 1, sizeof(*b->labidx)))
		return -ENOMEM;
	b->labidx[b->nlabidx++] = b->nlabels;
	b->labels[b->nlabels++] = l;
	return 0;
}

/* Per-frame string labels of a sample whose leaf is n, as {key, value}
 * pairs: the data leaves of fault profiles carry their class ("module",
 * "stack", "heap"). */
static size_t frame_labels(const struct st_node *n, const char *kv[][2], size_t max)
{
	static const char *const names[] = { [ST_DATA_MODULE] = "module",
					     [ST_DATA_STACK] = "stack", [ST_DATA_HEAP] = "heap" };
	unsigned cls = n->f.data_class & ST_DATA_CLASS_MASK;
	size_t nkv = 0;

	if (n->f.kind == ST_FRAME_DATA && cls < sizeof(names) / sizeof(names[0]) && names[cls] &&
	    nkv < max) {
		kv[nkv][0] = "class";
		kv[nkv++][1] = names[cls];
	}
	if (n->f.kind == ST_FRAME_DATA && (n->f.data_class & ST_DATA_FORCED) && nkv < max) {
		kv[nkv][0] = "fault";
		kv[nkv++][1] = "forced";
	}
	return nkv;
}

struct walk {
	struct pp *b;
	uint64_t *path;		/* location ids by depth */
	bool *inl;		/* the node at that depth is an inline frame: its
				 * location holds its parent's */
	size_t cap;
	size_t lab_off, nlab;	/* the thread's labels */
	/* per runtime: the run of the thread's labels and the frame type,
	 * made when a sample first needs it (nlab + 1 long) */
	size_t rt_off[ST_RUNTIME_COUNT];
	bool rt_made[ST_RUNTIME_COUNT];
	int err;
};

#define FRAME_TYPE "profile.frame.type"	/* OpenTelemetry's name */

/* The runtime of a sample whose leaf is n: its frame's, or for a fault
 * profile's data leaf the code frame that touched the data. */
static unsigned leaf_runtime(const struct st_node *n)
{
	while (n->f.kind == ST_FRAME_DATA && n->parent)
		n = n->parent;
	return n->f.runtime < ST_RUNTIME_COUNT ? n->f.runtime : ST_RUNTIME_NATIVE;
}

/* Start a run of label indexes with a copy of the thread's. */
static int copy_thread_labels(struct pp *b, const struct walk *w)
{
	for (size_t i = 0; i < w->nlab; i++) {
		if (grow(&b->labidx, &b->caplabidx, b->nlabidx + 1, sizeof(*b->labidx)))
			return -ENOMEM;
		b->labidx[b->nlabidx++] = b->labidx[w->lab_off + i];
	}
	return 0;
}

static int add_sample(struct walk *w, const struct st_node *n)
{
	struct pp *b = w->b;
	const char *kv[MAX_LABELS][2] = { { NULL, NULL } };
	size_t nkv = frame_labels(n, kv, MAX_LABELS);
	unsigned rt = leaf_runtime(n);
	struct sample s = { .loc_off = b->nlocids, .nloc = 0, .val_off = b->nvalsused,
			    .lab_off = w->lab_off, .nlab = w->nlab + 1 };

	if (grow(&b->samples, &b->capsamples, b->nsamples + 1, sizeof(*b->samples)) ||
	    grow(&b->locids, &b->caplocids, b->nlocids + n->depth, sizeof(*b->locids)) ||
	    grow(&b->vals, &b->capvals, b->nvalsused + b->nvals, sizeof(*b->vals)))
		return -ENOMEM;
	for (unsigned d = n->depth; d >= 1; d--) {
		if (d < n->depth && w->inl[d + 1])
			continue;	/* in the location of the inline frame below */
		b->locids[b->nlocids++] = w->path[d];	/* leaf first */
		s.nloc++;
	}
	b->vals[b->nvalsused++] = (int64_t)n->base;
	if (b->nvals > 1) {	/* the counts are at most 2^63 - 1; their time may not be */
		int64_t ns;

		if (__builtin_mul_overflow((int64_t)n->base, b->period, &ns))
			ns = INT64_MAX;
		b->vals[b->nvalsused++] = ns;
	}
	if (nkv) {
		/* a run of its own: the thread's labels, the frame type, then
		 * the frame's */
		s.lab_off = b->nlabidx;
		s.nlab = w->nlab + 1 + nkv;
		if (copy_thread_labels(b, w) || add_label(b, FRAME_TYPE, st_runtime__otel(rt), 0))
			return -ENOMEM;
		for (size_t i = 0; i < nkv; i++)
			if (add_label(b, kv[i][0], kv[i][1], 0))
				return -ENOMEM;
	} else {
		/* the thread's run for the leaf's runtime, shared */
		if (!w->rt_made[rt]) {
			w->rt_off[rt] = b->nlabidx;
			if (copy_thread_labels(b, w) ||
			    add_label(b, FRAME_TYPE, st_runtime__otel(rt), 0))
				return -ENOMEM;
			w->rt_made[rt] = true;
		}
		s.lab_off = w->rt_off[rt];
	}
	b->samples[b->nsamples++] = s;
	return 0;
}

static int visit(const struct st_node *n, void *ctx)
{
	struct walk *w = ctx;

	if (n->depth >= w->cap) {
		size_t ncap = (n->depth + 1) * 2;
		uint64_t *np = realloc(w->path, ncap * sizeof(*np));
		bool *ni;

		if (!np)
			goto nomem;
		w->path = np;
		ni = realloc(w->inl, ncap * sizeof(*ni));
		if (!ni)
			goto nomem;
		w->inl = ni;
		w->cap = ncap;
	}
	w->inl[n->depth] = n->f.kind == ST_FRAME_INLINE;
	if (n->depth && location_id(w->b, n, &w->path[n->depth]))
		goto nomem;
	if (n->base && add_sample(w, n))
		goto nomem;
	return 0;
nomem:
	w->err = -ENOMEM;
	return 1;
}

static int thread_labels(struct pp *b, const struct st_thread *t, struct walk *w)
{
	char buf[80];
	const char *ctr = t->cgroup ? st_cgroup__container(t->cgroup, buf, sizeof(buf)) : NULL;

	w->lab_off = b->nlabidx;
	if (add_label(b, "pid", NULL, t->pid) || add_label(b, "tid", NULL, t->tid) ||
	    add_label(b, "comm", t->comm ? t->comm : "", 0) ||
	    (t->cgroup && add_label(b, "cgroup", t->cgroup, 0)) ||
	    (ctr && add_label(b, "container", ctr, 0)))
		return -ENOMEM;
	w->nlab = b->nlabidx - w->lab_off;
	memset(w->rt_made, 0, sizeof(w->rt_made));
	return 0;
}

static void pp_free(struct pp *b)
{
	for (size_t i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	for (size_t i = 0; i < b->nlocs; i++) {
		for (size_t j = 0; j < b->locs[i].n_line; j++)
			free(b->locs[i].line[j]);
		free(b->locs[i].line);
	}
	free(b->strs);
	st_u64map__free(b->stri);
	free(b->funcs);
	st_u64map__free(b->funci);
	free(b->maps);
	st_u64map__free(b->mapi);
	free(b->locs);
	st_u64map__free(b->loci);
	free(b->labels);
	free(b->labidx);
	free(b->samples);
	free(b->locids);
	free(b->vals);
}

/* pprof names the profile after its first mapping ("File:"): put the first
 * executable (not a *.so*, not [vdso] or [kernel.kallsyms]) there. */
static void main_first(struct pp *b)
{
	for (size_t i = 0; i < b->nmaps; i++) {
		const char *f = b->strs[b->maps[i].filename], *base = strrchr(f, '/');
		PMapping tmp;

		if (f[0] == '[' || strstr(base ? base : f, ".so"))
			continue;
		if (i == 0)
			return;
		tmp = b->maps[0];
		b->maps[0] = b->maps[i];
		b->maps[i] = tmp;
		b->maps[0].id = 1;
		b->maps[i].id = i + 1;
		for (size_t j = 0; j < b->nlocs; j++) {
			if (b->locs[j].mapping_id == 1)
				b->locs[j].mapping_id = i + 1;
			else if (b->locs[j].mapping_id == i + 1)
				b->locs[j].mapping_id = 1;
		}
		return;
	}
}

/* Header fields and the collected tables into prof, then pack. */
static int pack(struct pp *b, PProfile *prof, unsigned char **buf, size_t *len)
{
	const struct st_profile *p = b->p;
	PValueType vt[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
			     PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	PValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	PValueType *vtp[2] = { &vt[0], &vt[1] };
	PSample *samples = calloc(b->nsamples + 1, sizeof(*samples));
	PSample **sp = calloc(b->nsamples + 1, sizeof(*sp));
	PLabel **lp = calloc(b->nlabidx + 1, sizeof(*lp));
	PFunction **fp = calloc(b->nfuncs + 1, sizeof(*fp));
	PMapping **mp = calloc(b->nmaps + 1, sizeof(*mp));
	PLocation **locp = calloc(b->nlocs + 1, sizeof(*locp));
	int64_t comments[4];
	char text[512];
	size_t nc = 0;
	int err = -ENOMEM;

	if (!samples || !sp || !lp || !fp || !mp || !locp)
		goto cleanup;
	main_first(b);
	if (p->unit == ST_UNIT_NS) {
		/* time, one value: "wall" (py-spy --idle's, async-profiler's wall
		 * mode as Pyroscope names it) or "off_cpu" (the OpenTelemetry
		 * profiler's off-CPU samples), in nanoseconds */
		vt[0].type = str(b, strcmp(p->event, "wall") ? "off_cpu" : "wall");
		vt[0].unit = str(b, "nanoseconds");
	} else {
		vt[0].type = str(b, "samples");
		vt[0].unit = str(b, "count");
	}
	vt[1].type = str(b, "cpu");
	vt[1].unit = str(b, "nanoseconds");
	period_type = vt[b->nvals - 1];
	snprintf(text, sizeof(text), "stacktreed %s, event %s", ST_VERSION, p->event);
	comments[nc++] = str(b, text);
	if (p->command) {
		snprintf(text, sizeof(text), "command: %s", p->command);
		comments[nc++] = str(b, text);
	}
	snprintf(text, sizeof(text), "samples: %llu, lost: %llu", (unsigned long long)p->samples,
		 (unsigned long long)p->lost);
	comments[nc++] = str(b, text);
	if (st_profile__unresolved_line(p, text, sizeof(text)))	/* which modules lack symbols */
		comments[nc++] = str(b, text);
	for (size_t i = 0; i < nc; i++)
		if (comments[i] < 0)
			goto cleanup;
	if (vt[0].type < 0 || vt[0].unit < 0 || vt[1].type < 0 || vt[1].unit < 0)
		goto cleanup;
	for (size_t i = 0; i < b->nlabidx; i++)
		lp[i] = &b->labels[b->labidx[i]];
	for (size_t i = 0; i < b->nsamples; i++) {
		const struct sample *s = &b->samples[i];

		perftools__profiles__sample__init(&samples[i]);
		samples[i].n_location_id = s->nloc;
		samples[i].location_id = s->nloc ? &b->locids[s->loc_off] : NULL;
		samples[i].n_value = b->nvals;
		samples[i].value = b->nvals ? &b->vals[s->val_off] : NULL;
		samples[i].n_label = s->nlab;
		samples[i].label = s->nlab ? &lp[s->lab_off] : NULL;
		sp[i] = &samples[i];
	}
	for (size_t i = 0; i < b->nfuncs; i++)
		fp[i] = &b->funcs[i];
	for (size_t i = 0; i < b->nmaps; i++) {
		mp[i] = &b->maps[i];
		if (mp[i]->memory_start == UINT64_MAX)
			mp[i]->memory_start = 0;
	}
	for (size_t i = 0; i < b->nlocs; i++)
		locp[i] = &b->locs[i];
	prof->n_sample_type = b->nvals;
	prof->sample_type = vtp;
	prof->n_sample = b->nsamples;
	prof->sample = sp;
	prof->n_mapping = b->nmaps;
	prof->mapping = mp;
	prof->n_location = b->nlocs;
	prof->location = locp;
	prof->n_function = b->nfuncs;
	prof->function = fp;
	prof->n_string_table = b->nstrs;
	prof->string_table = b->strs;
	prof->period_type = &period_type;
	prof->period = b->period;
	/* readers refuse NaN, infinite and negative durations; clamp the rest */
	prof->duration_nanos = isfinite(p->duration_s) && p->duration_s > 0 ?
				       (p->duration_s < 9.2e9 ? (int64_t)llround(p->duration_s * 1e9) :
								INT64_MAX) :
				       0;
	prof->n_comment = nc;
	prof->comment = comments;
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		prof->time_nanos = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
		if (prof->time_nanos > prof->duration_nanos)
			prof->time_nanos -= prof->duration_nanos;
	}
	*len = perftools__profiles__profile__get_packed_size(prof);
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		goto cleanup;
	perftools__profiles__profile__pack(prof, *buf);
	err = 0;
cleanup:
	free(samples);
	free(sp);
	free(lp);
	free(fp);
	free(mp);
	free(locp);
	return err;
}

int st_pprof__encode(const struct st_profile *p, unsigned char **buf, size_t *len)
{
	/* samples and their CPU time; time profiles (offcpu, wall) are ns already */
	struct pp b = { .p = p, .nvals = p->frequency_hz && p->unit != ST_UNIT_NS ? 2 : 1,
			.period = 1 };
	PProfile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct walk w = { .b = &b };
	int err = -ENOMEM;

	*buf = NULL;
	*len = 0;
	if (b.nvals > 1)
		b.period = (int64_t)llround(1e9 / p->frequency_hz);
	if (!(b.stri = st_u64map__new()) || !(b.funci = st_u64map__new()) ||
	    !(b.mapi = st_u64map__new()) || !(b.loci = st_u64map__new()))
		goto cleanup;
	if (str(&b, "") != 0)	/* string_table[0] = "" */
		goto cleanup;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct st_thread *t = p->threads[i];

		if (thread_labels(&b, t, &w))
			goto cleanup;
		st_tree__walk(t->tree, visit, &w);
		if (w.err)
			goto cleanup;
	}
	err = pack(&b, &prof, buf, len);
cleanup:
	free(w.path);
	free(w.inl);
	pp_free(&b);
	return err;
}

static int gzip_write(const unsigned char *buf, size_t len, FILE *out)
{
	unsigned char chunk[65536];
	z_stream zs = { 0 };
	int ret = Z_OK, err = 0;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)buf;
	while (ret != Z_STREAM_END) {
		size_t piece = len > (1u << 30) ? (1u << 30) : len, have;

		if (zs.avail_in == 0 && len) {
			zs.next_in = (Bytef *)buf;
			zs.avail_in = (uInt)piece;
			buf += piece;
			len -= piece;
		}
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		ret = deflate(&zs, len || zs.avail_in > 0 ? Z_NO_FLUSH : Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		have = sizeof(chunk) - zs.avail_out;
		if (have && fwrite(chunk, 1, have, out) != have) {
			err = -EIO;
			break;
		}
	}
	deflateEnd(&zs);
	return err;
}

int st_pprof__write(const struct st_profile *p, FILE *out)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int err;

	err = st_pprof__encode(p, &buf, &len);
	if (!err)
		err = gzip_write(buf, len, out);
	free(buf);
	return err;
}

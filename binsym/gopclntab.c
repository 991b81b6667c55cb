/* gopclntab.c - reads Go's .gopclntab (see gopclntab.h): the header, the
 * function table, names, and the pcfile/pcln pc-value tables; the module
 * hook that names a Go binary's functions from it, and its source lines.
 *
 * Layout (Go's runtime/symtab.go, cmd/link/internal/ld/pcln.go), offsets
 * from the section's start:
 *   header   magic u32, pad u8 u8, minLC u8, ptrSize u8, then ptrSize-wide:
 *            nfunc, nfiles, [textStart: 1.18+], funcnameOffset, cuOffset,
 *            filetabOffset, pctabOffset, pclnOffset
 *   functab  at pclnOffset: nfunc + 1 pairs (entry, funcoff): u32 entryoff
 *            from textStart in 1.18+, ptrSize-wide absolute pc in 1.16-1.17;
 *            the last pair's entry is the end of the last function
 *   _func    at pclnOffset + funcoff: entry (u32 in 1.18+, a pointer in
 *            1.16-1.17), then u32s nameOff, args, deferreturn, pcsp,
 *            pcfile, pcln, npcdata, cuOffset
 *   names    funcnameOffset + nameOff, NUL-terminated
 *   files    u32 at cuOffset + 4 * (_func.cuOffset + fileno) is an offset in
 *            filetabOffset (~0: none), the name NUL-terminated
 *   pc-value tables at pctabOffset + off: from value -1 at the entry, pairs
 *            of varints (zig-zag value delta, pc delta * minLC) until a value
 *            delta of 0 after the first pair.
 */
#include "binsym/gopclntab.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/strtab.h"
#include "common/u64map.h"
#include "binsym/elf.h"
#include "binsym/symtab.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u
#define MAGIC_12 0xfffffffbu
#define FRAME_BLOCK 1024
#define MAX_CACHED (1u << 20)

struct st_gopcln {
	__u8 *data;
	size_t size;
	bool rel_entry;		/* 1.18+: entries are u32 offsets from text */
	__u8 ptr, minlc;
	__u64 text;		/* 1.18+: what entry offsets add to */
	size_t nfunc;
	size_t funcname, cutab, filetab, pctab, functab;
	size_t entsize;		/* one functab pair */
	/* source() cache: vaddr -> frame, frames in blocks that never move */
	struct st_u64map *cache;
	struct st_src_frame **blocks;
	size_t nframes, nblocks;
	struct st_src_frame scratch;	/* past MAX_CACHED */
};

static __u64 rd(const __u8 *p, size_t n)
{
	__u64 v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* The n-byte little-endian value at off, if [off, off + n) is inside. */
static bool get(const struct st_gopcln *g, size_t off, size_t n, __u64 *v)
{
	if (off > g->size || g->size - off < n)
		return false;
	*v = rd(g->data + off, n);
	return true;
}

/* The NUL-terminated string at base + off, inside the section. */
static const char *str_at(const struct st_gopcln *g, size_t base, __u64 off)
{
	const char *s, *nul;
	size_t left;

	if (off >= g->size - base)
		return NULL;
	s = (const char *)g->data + base + off;
	left = g->size - base - off;
	nul = memchr(s, '\0', left < ST_GOPCLN_MAX_NAME ? left : ST_GOPCLN_MAX_NAME);
	return nul && nul != s ? s : NULL;
}

static __u64 entry_of(const struct st_gopcln *g, size_t i)
{
	__u64 v = 0;	/* inside: check() bounds the table */

	(void)get(g, g->functab + i * g->entsize, g->rel_entry ? 4 : g->ptr, &v);
	return g->rel_entry ? g->text + v : v;
}

static int check(struct st_gopcln *g, __u64 text_vaddr)
{
	size_t word, hdr, i;
	__u64 magic, v[8], prev = 0;
	unsigned nw;

	if (!get(g, 0, 4, &magic))
		return -EINVAL;
	if (magic == MAGIC_12)
		return -EPROTONOSUPPORT;
	if (magic != MAGIC_116 && magic != MAGIC_118 && magic != MAGIC_120)
		return -EPROTONOSUPPORT;
	if (g->size < 8 || g->data[4] || g->data[5])
		return -EINVAL;
	g->minlc = g->data[6];
	g->ptr = g->data[7];
	if ((g->ptr != 4 && g->ptr != 8) || (g->minlc != 1 && g->minlc != 2 && g->minlc != 4))
		return -EINVAL;
	g->rel_entry = magic != MAGIC_116;
	word = g->ptr;
	nw = g->rel_entry ? 8 : 7;
	hdr = 8 + nw * word;
	if (g->size < hdr)
		return -EINVAL;
	for (i = 0; i < nw; i++)
		v[i] = rd(g->data + 8 + i * word, word);
	if (!g->rel_entry) {	/* no textStart: shift the offsets into place */
		memmove(v + 3, v + 2, 5 * sizeof(v[0]));
		v[2] = 0;
	}
	for (i = 3; i < 8; i++)
		if (v[i] < hdr || v[i] >= g->size)
			return -EINVAL;
	g->nfunc = v[0];
	g->text = v[2] ? v[2] : text_vaddr;
	g->funcname = v[3];
	g->cutab = v[4];
	g->filetab = v[5];
	g->pctab = v[6];
	g->functab = v[7];
	g->entsize = g->rel_entry ? 8 : 2 * word;
	if (g->nfunc == 0 || v[0] >= (g->size - g->functab) / g->entsize)
		return -EINVAL;
	for (i = 0; i <= g->nfunc; i++) {	/* entries ascend, the end included */
		__u64 e = entry_of(g, i);

		if (i && e < prev)
			return -EINVAL;
		prev = e;
	}
	return 0;
}

int st_gopcln__parse(const void *data, size_t size, __u64 text_vaddr, struct st_gopcln **out)
{
	struct st_gopcln *g;
	int err;

	*out = NULL;
	if (!data || size > ST_GOPCLN_MAX_BYTES)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g || !(g->data = malloc(size ? size : 1))) {
		free(g);
		return -ENOMEM;
	}
	memcpy(g->data, data, size);
	g->size = size;
	err = check(g, text_vaddr);
	if (err) {
		st_gopcln__free(g);
		return err;
	}
	*out = g;
	return 0;
}

void st_gopcln__free(struct st_gopcln *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nblocks; i++)
		free(g->blocks[i]);
	free(g->blocks);
	st_u64map__free(g->cache);
	free(g->data);
	free(g);
}

size_t st_gopcln__memory(const struct st_gopcln *g)
{
	if (!g)
		return 0;
	return sizeof(*g) + g->size + st_u64map__memory(g->cache) +
	       g->nblocks * (sizeof(*g->blocks) + FRAME_BLOCK * sizeof(struct st_src_frame));
}

size_t st_gopcln__count(const struct st_gopcln *g)
{
	return g ? g->nfunc : 0;
}

/* Offset of function i's _func record, if its fixed part is inside. */
static bool func_rec(const struct st_gopcln *g, size_t i, size_t *rec)
{
	__u64 off;
	size_t head = g->rel_entry ? 4 : g->ptr;

	if (!get(g, g->functab + i * g->entsize + (g->rel_entry ? 4 : g->ptr),
		 g->rel_entry ? 4 : g->ptr, &off))
		return false;
	if (off >= g->size - g->functab || g->size - g->functab - off < head + 8 * 4)
		return false;
	*rec = g->functab + off;
	return true;
}

/* The k-th u32 field after the _func record's entry (0: nameOff). */
static bool field(const struct st_gopcln *g, size_t rec, unsigned k, __u64 *v)
{
	return get(g, rec + (g->rel_entry ? 4 : g->ptr) + 4 * k, 4, v);
}

int st_gopcln__func(const struct st_gopcln *g, size_t i, __u64 *start, __u64 *end,
		    const char **name)
{
	size_t rec;
	__u64 nameoff;

	if (!g || i >= g->nfunc)
		return -EINVAL;
	*start = entry_of(g, i);
	*end = entry_of(g, i + 1);
	*name = NULL;
	if (func_rec(g, i, &rec) && field(g, rec, 0, &nameoff))
		*name = str_at(g, g->funcname, nameoff);
	return 0;
}

int st_gopcln__find(const struct st_gopcln *g, __u64 pc, size_t *index)
{
	size_t lo = 0, hi;

	if (!g || pc < entry_of(g, 0) || pc >= entry_of(g, g->nfunc))
		return -ENOENT;
	hi = g->nfunc;	/* entry(lo) <= pc < entry(hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (entry_of(g, mid) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	*index = lo;
	return 0;
}

/* A uvarint of at most 32 bits at *p (< end). */
static bool varint(const __u8 **p, const __u8 *end, __u32 *v)
{
	__u32 r = 0;

	for (unsigned shift = 0; shift < 35 && *p < end; shift += 7) {
		__u8 b = *(*p)++;

		r |= (__u32)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/* A pc-value table being read: at pctab + off, from value -1 at entry. */
struct pcv {
	const __u8 *p, *end;
	__u64 pc;		/* the current run ends here */
	__s32 val;		/* the current run's value */
	bool first;
};

static bool pcv_init(const struct st_gopcln *g, __u64 off, __u64 entry, struct pcv *v)
{
	if (off == 0 || off >= g->size - g->pctab)
		return false;
	*v = (struct pcv){ .p = g->data + g->pctab + off, .end = g->data + g->size,
			   .pc = entry, .val = -1, .first = true };
	return true;
}

/* The next run: [previous v->pc, new v->pc) has v->val; false at the
 * table's end or on bytes that are no table. Each step reads >= 2 bytes. */
static bool pcv_step(const struct st_gopcln *g, struct pcv *v)
{
	__u32 uv, pcd;

	if (!varint(&v->p, v->end, &uv) || (uv == 0 && !v->first))
		return false;
	if (!varint(&v->p, v->end, &pcd))
		return false;
	/* modulo 2^32, as Go's int32 (no signed overflow on crafted deltas) */
	v->val = (__s32)((__u32)v->val + ((uv & 1) ? ~(uv >> 1) : (uv >> 1)));
	v->pc += (__u64)pcd * g->minlc;
	v->first = false;
	return true;
}

/* The value of the pc-value table at off for pc, the function starting at
 * entry; false when the table ends first or is malformed. */
static bool pcvalue(const struct st_gopcln *g, __u64 off, __u64 entry, __u64 pc, __s32 *out)
{
	struct pcv v;

	if (!pcv_init(g, off, entry, &v))
		return false;
	while (pcv_step(g, &v))
		if (pc < v.pc) {
			*out = v.val;
			return true;
		}
	return false;
}

int st_gopcln__pcsp(const struct st_gopcln *g, size_t i, st_gopcln_run_fn fn, void *ctx)
{
	__u64 start, end, pcsp, at;
	size_t rec;
	struct pcv v;
	int err;

	if (!g || i >= g->nfunc)
		return -ENOENT;
	start = entry_of(g, i);
	end = entry_of(g, i + 1);
	if (!func_rec(g, i, &rec) || !field(g, rec, 3, &pcsp) || !pcv_init(g, pcsp, start, &v))
		return -ENOENT;
	at = start;
	while (at < end && pcv_step(g, &v)) {
		if (v.pc <= at)
			continue;
		err = fn(ctx, at, v.pc < end ? v.pc : end, v.val);
		if (err)
			return err;
		at = v.pc;
	}
	return 0;
}

int st_gopcln__line(const struct st_gopcln *g, size_t i, __u64 pc, const char **file,
		    __u32 *line)
{
	__u64 start, end, pcfile, pcln, cu, foff;
	size_t rec;
	__s32 fileno, ln;

	*file = NULL;
	*line = 0;
	if (!g || i >= g->nfunc)
		return -ENOENT;
	start = entry_of(g, i);
	end = entry_of(g, i + 1);
	if (pc < start || pc >= end || !func_rec(g, i, &rec))
		return -ENOENT;
	if (!field(g, rec, 4, &pcfile) || !field(g, rec, 5, &pcln) || !field(g, rec, 7, &cu))
		return -ENOENT;
	if (pcvalue(g, pcln, start, pc, &ln) && ln > 0)
		*line = (__u32)ln;
	if (cu != 0xffffffffu && pcvalue(g, pcfile, start, pc, &fileno) && fileno >= 0 &&
	    g->cutab + 4 * (cu + (__u64)fileno) < g->filetab &&
	    get(g, g->cutab + 4 * (cu + (__u64)fileno), 4, &foff) && foff != 0xffffffffu)
		*file = str_at(g, g->filetab, foff);
	return *line || *file ? 0 : -ENOENT;
}

int st_gopcln__load_symbols(struct st_elf *e, struct st_symtab *t, struct st_strtab *names,
			    struct st_gopcln **out)
{
	struct st_gopcln *g = NULL;
	GElf_Shdr sh, text;
	Elf_Scn *scn;
	Elf_Data *d;
	int err, n = 0;

	*out = NULL;
	scn = st_elf__section_named(e, ST_GOPCLN_SECTION, &sh);
	if (!scn)
		scn = st_elf__section_named(e, ST_GOPCLN_SECTION_PIE, &sh);
	if (!scn)
		return -ENOENT;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size != sh.sh_size)
		return -EINVAL;
	if (!st_elf__section_named(e, ".text", &text))
		text.sh_addr = 0;
	err = st_gopcln__parse(d->d_buf, d->d_size, text.sh_addr, &g);
	if (err)
		return err;
	for (size_t i = 0; i < g->nfunc; i++) {
		__u64 start, end;
		const char *name, *copy;

		if (st_gopcln__func(g, i, &start, &end, &name) || !name || end <= start)
			continue;
		copy = st_strtab__intern(names, name);
		if (!copy || st_symtab__add(t, start, end - start, copy, NULL, ST_BIND_GLOBAL)) {
			st_gopcln__free(g);
			return -ENOMEM;
		}
		n++;
	}
	if (st_symtab__add_bound(t, entry_of(g, g->nfunc))) {
		st_gopcln__free(g);
		return -ENOMEM;
	}
	*out = g;
	return n;
}

static struct st_src_frame *new_frame(struct st_gopcln *g, __u64 vaddr)
{
	struct st_src_frame *f;

	if (vaddr == 0 || g->nframes >= MAX_CACHED)
		return &g->scratch;
	if (!g->cache && !(g->cache = st_u64map__new()))
		return NULL;
	if (g->nframes == g->nblocks * FRAME_BLOCK) {
		struct st_src_frame **b = realloc(g->blocks, (g->nblocks + 1) * sizeof(*b));

		if (!b)
			return NULL;
		g->blocks = b;
		if (!(b[g->nblocks] = malloc(FRAME_BLOCK * sizeof(**b))))
			return NULL;
		g->nblocks++;
	}
	f = &g->blocks[g->nframes / FRAME_BLOCK][g->nframes % FRAME_BLOCK];
	if (st_u64map__put(g->cache, vaddr, f))
		return NULL;
	g->nframes++;
	return f;
}

int st_gopcln__source(struct st_gopcln *g, __u64 vaddr, const struct st_src_frame **frames,
		      size_t *n)
{
	struct st_src_frame *f;
	size_t i;
	__u64 start, end;

	*frames = NULL;
	*n = 0;
	f = vaddr && g->cache ? st_u64map__get(g->cache, vaddr) : NULL;
	if (!f) {
		if (st_gopcln__find(g, vaddr, &i))
			return 0;
		if (!(f = new_frame(g, vaddr)))
			return -ENOMEM;
		(void)st_gopcln__func(g, i, &start, &end, &f->function);
		(void)st_gopcln__line(g, i, vaddr, &f->file, &f->line);
	}
	*frames = f;
	*n = 1;
	return 0;
}

/* srcinfo.c - inlined frames and source lines of a module (see srcinfo.h
 * and st_symbolizer__source() in symbolizer.h).
 *
 * A lookup finds the compile unit covering the address in a table of CU
 * ranges built once (dwarf_get_units() and dwarf_ranges(), in order, no
 * recursion), then walks down the CU's DIEs into the scopes that hold the
 * address (dwarf_haspc(); iterative, bounded depth, only the path and its
 * siblings visited): the DW_TAG_subprogram and the DW_TAG_inlined_subroutine
 * chain in it, the same chain as eu-addr2line -i (which asks libdw's
 * dwarf_getscopes() and dwarf_getscopes_die(), a walk of the whole CU up
 * to the DIE, 10x slower on libc). Lines: the line table's
 * (dwarf_getsrc_die()) for the innermost, each DW_TAG_inlined_subroutine's
 * call site (DW_AT_call_file, DW_AT_call_line) for the ones around it. The
 * chain is kept in an open addressing cache keyed by the ELF address.
 */
#include "binsym/srcinfo.h"
#include "binsym/module.h"
#include "common/grow.h"
#include "common/hash.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binsym/dienames.h"
#include "binsym/elf.h"
#include "binsym/gopclntab.h"
#include "common/strtab.h"
#include "common/u64map.h"
#include "common/textesc.h"
#include "binsym/worklimit.h"

struct si_cu {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
};

struct si_slot {
	__u64 vaddr;
	__u32 first;		/* index in frames */
	__u8 n;			/* frames in the chain (0: none) */
	bool used;
};

struct st_srcinfo {
	struct st_elf *elf;	/* the file with the DWARF, while open */
	Dwarf *dw;
	bool dw_borrowed;	/* st_srcinfo__over(): the caller's */
	bool none;		/* the module has no DWARF */
	bool wanted;		/* source() deferred its opening to warm() */
	bool cut;		/* out of time or addresses: no more lookups */
	double spent;		/* seconds of lookups so far */
	struct si_cu *cus;	/* sorted by lo, while open */
	size_t ncus, cus_cap;
	struct si_slot *slots;	/* power of two */
	size_t nslots, nused;
	struct st_src_frame *frames;
	size_t nframes, frames_cap;
	struct st_strtab *strs;	/* names and files */
	struct st_u64map *composed; /* DIE offset -> a name composed (dienames.h), in strs */
};

void st_srcinfo__close(struct st_srcinfo *si)
{
	if (!si)
		return;
	if (si->dw && !si->dw_borrowed)
		dwarf_end(si->dw);
	si->dw = NULL;
	st_elf__free(si->elf);
	si->elf = NULL;
	free(si->cus);
	si->cus = NULL;
	si->ncus = si->cus_cap = 0;
	/* DIE offsets mean nothing once the file is closed */
	if (si->composed)
		st_u64map__clear(si->composed);
}

void st_srcinfo__free(struct st_srcinfo *si)
{
	if (!si)
		return;
	st_srcinfo__close(si);
	free(si->slots);
	free(si->frames);
	st_strtab__free(si->strs);
	st_u64map__free(si->composed);
	free(si);
}

size_t st_srcinfo__memory(const struct st_srcinfo *si)
{
	if (!si)
		return 0;
	return sizeof(*si) + si->cus_cap * sizeof(*si->cus) + si->nslots * sizeof(*si->slots) +
	       si->frames_cap * sizeof(*si->frames) + st_strtab__memory(si->strs) +
	       st_u64map__memory(si->composed);
}

static int cmp_cu(const void *pa, const void *pb)
{
	const struct si_cu *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The CU range table of si->dw, within w. */
static int build_cus(struct st_srcinfo *si, struct st_work *w)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	__u8 unit_type;
	size_t seen = 0;

	while (dwarf_get_units(si->dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		if (++seen % 256 == 0 && st_work__over(w))
			break;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
			if (start >= end)
				continue;
			if (ST_GROW(si->cus, si->cus_cap, si->ncus, 64))
				return -ENOMEM;
			si->cus[si->ncus++] = (struct si_cu){ .lo = start, .hi = end, .die = cudie };
		}
	}
	if (si->ncus)
		qsort(si->cus, si->ncus, sizeof(*si->cus), cmp_cu);
	return 0;
}

/* Open the module's DWARF (si->none when it has none). */
static int si_open(struct st_symbolizer *s, struct st_module *m, const char *path,
		   struct st_srcinfo *si)
{
	struct st_work w;
	int err;

	err = st_mod__dwarf_elf(s, m, path, &si->elf);
	if (err)
		return err;
	if (si->elf)
		si->dw = dwarf_begin_elf(st_elf__elf(si->elf), DWARF_C_READ, NULL);
	if (!si->dw) {
		st_srcinfo__close(si);
		si->none = true;
		return 0;
	}
	st_mod__work_begin(s, &w);
	err = build_cus(si, &w);
	if (w.out_of_time || w.cancelled) {
		si->cut = true;
		s->src_cut++;
	}
	st_mod__work_end(s, m, &w);
	if (s->verbose && !err)
		fprintf(stderr, "stacktreed: %s: DWARF for source lines, %zu CU ranges\n",
			ST_TEXTESC(m->path), si->ncus);
	return err;
}

/* The CU whose range holds vaddr, or NULL. */
static Dwarf_Die *find_cu(struct st_srcinfo *si, __u64 vaddr)
{
	size_t lo = 0, hi = si->ncus;

	while (lo < hi) {	/* first range starting after vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (si->cus[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges of different CUs do not overlap in practice: look at a few */
	for (size_t j = lo, k = 0; j > 0 && k < 8; j--, k++)
		if (vaddr < si->cus[j - 1].hi)
			return &si->cus[j - 1].die;
	return NULL;
}

/* A function DIE's name: its linkage name (demangled by the namer), or a
 * C++ name composed from its scopes (dienames.h), or its DW_AT_name. The
 * composed ones cost a walk of their unit (dwarf_getscopes_die()): kept by
 * DIE offset in si->composed, so each is made once. */
static const char *die_name(struct st_srcinfo *si, Dwarf_Die *die)
{
	char buf[ST_SRC_NAME_MAX];
	Dwarf_Attribute attr;
	const char *name, *got;
	__u64 off = dwarf_dieoffset(die);

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)
					?: dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (name && *name)
		return name;
	if (si->composed && (got = st_u64map__get(si->composed, off)))
		return got;
	if (si->composed && st_die__cxx_name(die, buf, sizeof(buf))) {
		got = st_strtab__intern(si->strs, buf);
		if (got && st_u64map__put(si->composed, off, (void *)got) == 0)
			return got;
	}
	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name && *name ? name : NULL;
}

/* A frame; a relative file name is taken from the CU's directory. */
static int push(struct st_srcinfo *si, Dwarf_Die *cudie, const char *name, const char *file,
		__u32 line)
{
	struct st_src_frame *f;
	Dwarf_Attribute attr;
	const char *dir;
	char *full = NULL;

	if (ST_GROW(si->frames, si->frames_cap, si->nframes, 64))
		return -ENOMEM;
	if (file && file[0] != '/' &&
	    (dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr))) && *dir) {
		if (asprintf(&full, "%s/%s", dir, file) < 0)
			return -ENOMEM;
		file = full;
	}
	f = &si->frames[si->nframes];
	f->function = st_strtab__intern(si->strs, name);
	f->file = st_strtab__intern(si->strs, file);
	f->line = line;
	free(full);
	if ((name && !f->function) || (file && !f->file))
		return -ENOMEM;
	si->nframes++;
	return 0;
}

/* DIE nesting followed at most (deeper scopes are not looked into). */
#define SI_MAX_DEPTH 128

/* The functions at vaddr in the CU: the innermost DW_TAG_subprogram whose
 * code holds vaddr, then the DW_TAG_inlined_subroutine scopes inside it
 * that hold it, outermost first, into chain[] (at most SI_MAX_DEPTH).
 * Iterative, and pruned: only scopes holding vaddr are entered (and the
 * namespaces and classes on the way, which have no code of their own), so
 * the work is the DIEs along the path and their siblings, not the CU. */
static size_t find_chain(Dwarf_Die *cudie, __u64 vaddr, Dwarf_Die *chain)
{
	Dwarf_Die stack[SI_MAX_DEPTH];
	int d = 0, floor = 0;	/* siblings below floor are outside the pc's scope */
	size_t n = 0;

	if (dwarf_child(cudie, &stack[0]) != 0)
		return 0;
	for (;;) {
		Dwarf_Die *cur = &stack[d];
		bool enter = false;

		switch (dwarf_tag(cur)) {
		case DW_TAG_subprogram:
		case DW_TAG_entry_point:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
			if (dwarf_haspc(cur, vaddr) != 1)
				break;
			if (dwarf_tag(cur) == DW_TAG_subprogram || dwarf_tag(cur) == DW_TAG_entry_point)
				n = 0;	/* a function nested in another: its own chain */
			if (dwarf_tag(cur) != DW_TAG_lexical_block && n < SI_MAX_DEPTH)
				chain[n++] = *cur;
			floor = d + 1;	/* found: the scope of vaddr is inside */
			enter = true;
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			enter = n == 0;	/* functions may be defined inside */
			break;
		default:
			break;
		}
		if (enter && d + 1 < SI_MAX_DEPTH && dwarf_child(cur, &stack[d + 1]) == 0) {
			d++;
			continue;
		}
		if (floor == d + 1 && n)
			return n;	/* the pc's scope has no inner scope holding it */
		while (dwarf_siblingof(&stack[d], &stack[d]) != 0) {
			if (d == 0 || d == floor)
				return n;
			d--;
		}
	}
}

/* Append the chain at vaddr to si->frames, outermost first; how many. Each
 * frame's line is where it calls the next (the next one's DW_AT_call_file
 * and DW_AT_call_line), the innermost's the line table's. */
static int chain(struct st_srcinfo *si, __u64 vaddr, size_t *n)
{
	Dwarf_Die *cudie = find_cu(si, vaddr), dies[SI_MAX_DEPTH];
	Dwarf_Files *files = NULL;
	Dwarf_Attribute attr;
	size_t nd, skip = 0;
	Dwarf_Word val;
	Dwarf_Line *l;
	int err = 0;

	*n = 0;
	if (!cudie)
		return 0;
	nd = find_chain(cudie, vaddr, dies);
	if (nd > ST_SRC_MAX_FRAMES)	/* keep the function and the innermost */
		skip = nd - ST_SRC_MAX_FRAMES;
	if (dwarf_getsrcfiles(cudie, &files, NULL))
		files = NULL;
	for (size_t i = 0; i < nd && !err; i++) {
		const char *file = NULL;
		int line = 0;

		if (i > 0 && i <= skip)
			continue;
		if (i + 1 < nd) {	/* where the next one in is called */
			if (files &&
			    dwarf_formudata(dwarf_attr(&dies[i + 1], DW_AT_call_file, &attr), &val) == 0)
				file = dwarf_filesrc(files, val, NULL, NULL);
			if (dwarf_formudata(dwarf_attr(&dies[i + 1], DW_AT_call_line, &attr), &val) == 0 &&
			    val <= INT32_MAX)
				line = (int)val;
		} else if ((l = dwarf_getsrc_die(cudie, vaddr))) {
			file = dwarf_linesrc(l, NULL, NULL);
			if (dwarf_lineno(l, &line))
				line = 0;
		}
		err = push(si, cudie, die_name(si, &dies[i]), file, line > 0 ? (__u32)line : 0);
		if (!err)
			++*n;
	}
	if (!err && nd == 0 && (l = dwarf_getsrc_die(cudie, vaddr))) {
		/* lines without a function DIE */
		const char *file = dwarf_linesrc(l, NULL, NULL);
		int line = 0;

		if (file && dwarf_lineno(l, &line) == 0) {
			err = push(si, cudie, NULL, file, line > 0 ? (__u32)line : 0);
			if (!err)
				*n = 1;
		}
	}
	return err;
}

static struct si_slot *slot_of(const struct st_srcinfo *si, __u64 vaddr)
{
	size_t mask = si->nslots - 1, j = (size_t)st_hash_u64(vaddr) & mask;

	while (si->slots[j].used && si->slots[j].vaddr != vaddr)
		j = (j + 1) & mask;
	return &si->slots[j];
}

static int grow_slots(struct st_srcinfo *si)
{
	struct st_srcinfo old = *si;

	si->nslots = old.nslots ? old.nslots * 2 : 1024;
	si->slots = calloc(si->nslots, sizeof(*si->slots));
	if (!si->slots) {
		si->slots = old.slots;
		si->nslots = old.nslots;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.nslots; i++)
		if (old.slots[i].used)
			*slot_of(si, old.slots[i].vaddr) = old.slots[i];
	free(old.slots);
	return 0;
}

/* Look vaddr up (not cached yet) and cache it in *out. */
static int si_lookup(struct st_srcinfo *si, __u64 vaddr, struct si_slot **out)
{
	size_t first = si->nframes, n;
	struct si_slot *sl;
	int err;

	if ((si->nused + 1) * 2 > si->nslots && (err = grow_slots(si)))
		return err;
	err = chain(si, vaddr, &n);
	if (err) {
		si->nframes = first;
		return err;
	}
	sl = slot_of(si, vaddr);
	*sl = (struct si_slot){ .vaddr = vaddr, .first = (__u32)first, .n = (__u8)n, .used = true };
	si->nused++;
	*out = sl;
	return 0;
}

/* The same within the module's limits (*out NULL past them). */
static int lookup(struct st_symbolizer *s, struct st_module *m, struct st_srcinfo *si,
		  __u64 vaddr, struct si_slot **out)
{
	double t0 = st_work__now();
	int err;

	*out = NULL;
	if (si->nused >= ST_SRC_MAX_ADDRS || si->spent > s->module_time_s ||
	    (s->cancel && s->cancel(s->cancel_ctx))) {
		si->cut = true;
		s->src_cut++;
		if (s->verbose)
			fprintf(stderr, "stacktreed: %s: source lines cut short (%zu addresses, "
				"%.2f s)\n", ST_TEXTESC(m->path), si->nused, si->spent);
		return 0;
	}
	err = si_lookup(si, vaddr, out);
	si->spent += st_work__now() - t0;
	return err;
}

static struct st_srcinfo *si_new(void)
{
	struct st_srcinfo *si = calloc(1, sizeof(*si));

	if (si && (!(si->strs = st_strtab__new()) || !(si->composed = st_u64map__new()))) {
		st_strtab__free(si->strs);
		free(si);
		si = NULL;
	}
	return si;
}

int st_srcinfo__over(Dwarf *dw, struct st_srcinfo **out)
{
	struct st_srcinfo *si = si_new();
	int err;

	*out = NULL;
	if (!si)
		return -ENOMEM;
	si->dw = dw;
	si->dw_borrowed = true;
	err = build_cus(si, NULL);
	if (err) {
		st_srcinfo__free(si);
		return err;
	}
	*out = si;
	return 0;
}

size_t st_srcinfo__cus(const struct st_srcinfo *si, __u64 (*ranges)[2], size_t max)
{
	size_t i;

	for (i = 0; i < si->ncus && i < max; i++) {
		ranges[i][0] = si->cus[i].lo;
		ranges[i][1] = si->cus[i].hi;
	}
	return si->ncus;
}

int st_srcinfo__find(struct st_srcinfo *si, __u64 vaddr, const struct st_src_frame **frames,
		     size_t *n)
{
	struct si_slot *sl = si->nslots ? slot_of(si, vaddr) : NULL;
	int err;

	if (!sl || !sl->used) {
		if (si->nused >= ST_SRC_MAX_ADDRS)
			return -ENOSPC;
		if ((err = si_lookup(si, vaddr, &sl)))
			return err;
	}
	*frames = sl->n ? si->frames + sl->first : NULL;
	*n = sl->n;
	return 0;
}

int st_symbolizer__source(struct st_symbolizer *s, struct st_module *m, const char *path,
			  __u64 map_start, __u64 map_pgoff, __u64 addr, bool is_return,
			  const struct st_src_frame **frames, size_t *n)
{
	struct st_srcinfo *si;
	struct si_slot *sl = NULL;
	__u64 look, vaddr;
	int err;

	if (!s || !m || !frames || !n)
		return -EINVAL;
	*frames = NULL;
	*n = 0;
	look = is_return && addr ? addr - 1 : addr;
	vaddr = st_mod__to_vaddr(m, look - map_start + map_pgoff);
	if (m->gopcln)	/* named from Go's table: its lines too */
		return st_gopcln__source(m->gopcln, vaddr, frames, n);
	if (!m->src && !(m->src = si_new()))
		return -ENOMEM;
	si = m->src;
	if (si->nslots) {
		sl = slot_of(si, vaddr);
		if (!sl->used)
			sl = NULL;
	}
	if (!sl) {
		if (si->none || si->cut)
			return 0;
		if (s->src_defer && (!si->dw || (s->src_deadline > 0 &&
						 st_work__now() > s->src_deadline))) {
			si->wanted = !si->dw;
			s->src_deferred++;
			return 0;
		}
		if (!si->dw) {
			err = si_open(s, m, path, si);
			if (err)
				return err == -ENOMEM ? err : 0; /* no file now: tried again later */
			if (!si->dw)
				return 0;
		}
		err = lookup(s, m, si, vaddr, &sl);
		if (err || !sl)
			return err;
	}
	*frames = sl->n ? si->frames + sl->first : NULL;
	*n = sl->n;
	return 0;
}

void st_symbolizer__source_budget(struct st_symbolizer *s, bool defer, double deadline)
{
	s->src_defer = defer;
	s->src_deadline = deadline;
}

size_t st_symbolizer__source_warm(struct st_symbolizer *s)
{
	struct st_module *m;
	size_t left = 0;
	bool done = false;

	for (m = s->modules; m; m = m->next) {
		struct st_srcinfo *si = m->src;

		if (!si || !si->wanted)
			continue;
		if (si->dw || si->none || si->cut) {
			si->wanted = false;
			continue;
		}
		if (done) {
			left++;
			continue;
		}
		/* no file now (an unreferenced module): noted again when asked */
		si->wanted = false;
		done = true;
		if (si_open(s, m, NULL, si) == -ENOMEM)
			si->wanted = true;
	}
	return left;
}

void st_symbolizer__source_release(struct st_symbolizer *s)
{
	for (struct st_module *m = s->modules; m; m = m->next)
		st_srcinfo__close(m->src);
}

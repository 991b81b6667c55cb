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
 *
 * A lookup also keeps what its function's other addresses need, so that
 * they are answered with the DWARF closed (a service closes it after each
 * snapshot, and opening it again inflates its compressed sections: libc's
 * 10 MiB): the function's scopes (its DW_TAG_inlined_subroutine and
 * DW_TAG_lexical_block DIEs, nested, with their address ranges, names and
 * call sites) and its line-table answers (dwarf_getsrc_die() at each row
 * address inside it: the answer is the same up to the next row). The chain
 * at an address of a kept function is then made from these alone, as
 * find_chain() and chain() make it from the DIEs. In a service, source()
 * notes the addresses it could not answer and warm() opens the module's
 * DWARF once for all of them and closes it again. The final reports do the
 * same in one go: a first pass over the trees notes every address
 * (gather()), and settle() opens one module's DWARF at a time, looks its
 * addresses up and closes it, so that the naming pass finds them cached
 * (libdw holds a module's debug sections, decompressed, while it is open:
 * all of them at once were the daemon's peak).
 */
#include "binsym/srcinfo.h"
#include "binsym/module.h"
#include "common/grow.h"
#include "common/hash.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stddef.h>
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

/* A function kept (see the top): its scopes and line answers. */
struct si_fn {
	__u32 node0, nnodes;	/* in nodes; nodes[node0] is the function */
	__u32 row0, nrows;	/* in rows, by address */
};

enum si_kind { SI_INLINE, SI_BLOCK, SI_SUB };	/* SI_SUB: a function nested in it */

struct si_node {
	const char *name;	/* interned (NULL: unnamed) */
	const char *call_file;	/* interned, full: where an SI_INLINE is called */
	__u32 call_line;
	__u32 range0, nranges;	/* in ranges */
	__s32 parent;		/* node index within the function; -1: none */
	__u8 kind;
};

struct si_range {
	__u64 lo, hi;
};

/* The line table's answer from addr up to the next row. */
struct si_row {
	__u64 addr;
	const char *file;	/* interned, full; NULL with line 0: no row */
	__u32 line;
};

/* One address range of a kept function (spans sorted by lo); fn is
 * SI_UNKEPT for a function not kept (too large): looked up per address,
 * not tried again. */
struct si_span {
	__u64 lo, hi;
	__u32 fn;
};

#define SI_UNKEPT UINT32_MAX

/* At most this many scopes and line answers kept per module (about 24
 * bytes each: 6 MiB) and per function (a larger one is looked up per
 * address, as before); addresses noted for warm() per module. */
#define SI_MAX_KEPT (1u << 18)
#define SI_MAX_FN_KEPT (1u << 15)
#define SI_MAX_PENDING 8192
#define SI_MAX_GATHER (1u << 16)	/* noted per module by gather() (2 MiB of map) */
#define SI_WARM_S 0.25		/* lookups in one warm() call */
/* Rows of line tables libdw may hold decoded (a Dwarf_Line each, ~40
 * bytes: 2.5 MiB) before warm() and settle() begin the module's Dwarf
 * again (hold_lines()). */
#define SI_LINES_HELD (1u << 16)

struct st_srcinfo {
	struct st_elf *elf;	/* the file with the DWARF, while open */
	Dwarf *dw;
	bool dw_borrowed;	/* st_srcinfo__over(): the caller's */
	bool none;		/* the module has no DWARF */
	bool wanted;		/* source() deferred its opening to warm() */
	bool cut;		/* out of time or addresses: no more lookups */
	bool no_keep;		/* st_srcinfo__keep(false): no function kept */
	double spent;		/* seconds of lookups so far */
	struct si_cu *cus;	/* sorted by lo, while open */
	size_t ncus, cus_cap;
	struct si_slot *slots;	/* power of two */
	size_t nslots, nused;
	struct st_src_frame *frames;
	size_t nframes, frames_cap;
	struct st_strtab *strs;	/* names and files */
	struct st_u64map *composed; /* DIE offset -> a name composed (dienames.h), in strs */
	struct si_fn *fns;	/* functions kept: their pcs need no DWARF */
	size_t nfns, fns_cap;
	struct si_node *nodes;
	size_t nnodes, nodes_cap;
	struct si_range *ranges;
	size_t nranges, ranges_cap;
	struct si_row *rows;
	size_t nrows, rows_cap;
	struct si_span *spans;	/* sorted by lo */
	size_t nspans, spans_cap;
	struct st_u64map *pending; /* vaddr + 1 -> (void *)1: asked while closed */
	const char *hint;	/* a mapping's path to open it by (m's strings), or NULL */
	__u64 line_cu;		/* offset + 1 of the CU last looked up in by warm() */
	size_t lines_held;	/* rows of the line tables decoded since dwarf_begin */
	struct st_u64map *tried; /* DIE offset + 1 -> (void *)1: keep_fn() done, while open */
	struct st_src_frame answer[ST_SRC_MAX_FRAMES]; /* the last chain made from a kept function */
};

void st_srcinfo__close(struct st_srcinfo *si)
{
	if (!si)
		return;
	if (si->dw && !si->dw_borrowed)
		dwarf_end(si->dw);
	si->dw = NULL;
	si->line_cu = 0;
	si->lines_held = 0;
	st_elf__free(si->elf);
	si->elf = NULL;
	free(si->cus);
	si->cus = NULL;
	si->ncus = si->cus_cap = 0;
	/* DIE offsets mean nothing once the file is closed */
	if (si->composed)
		st_u64map__clear(si->composed);
	if (si->tried)
		st_u64map__clear(si->tried);
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
	free(si->fns);
	free(si->nodes);
	free(si->ranges);
	free(si->rows);
	free(si->spans);
	st_u64map__free(si->pending);
	st_u64map__free(si->tried);
	free(si);
}

size_t st_srcinfo__memory(const struct st_srcinfo *si)
{
	if (!si)
		return 0;
	return sizeof(*si) + si->cus_cap * sizeof(*si->cus) + si->nslots * sizeof(*si->slots) +
	       si->frames_cap * sizeof(*si->frames) + st_strtab__memory(si->strs) +
	       st_u64map__memory(si->composed) + si->fns_cap * sizeof(*si->fns) +
	       si->nodes_cap * sizeof(*si->nodes) + si->ranges_cap * sizeof(*si->ranges) +
	       si->rows_cap * sizeof(*si->rows) + si->spans_cap * sizeof(*si->spans) +
	       st_u64map__memory(si->pending) + st_u64map__memory(si->tried);
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

/* libdw's dwarf_begin_elf() reads every debug section it knows whole
 * (decompressed), those that source lines and inline chains never read
 * too: variable locations (libpython3.11's .debug_loclists, 3.5 of its
 * 15.9 MiB), macros, call frames, name indexes. They are marked
 * SHT_NOBITS in the file's handle, si's own, whose sections libdw skips
 * (as a stripped file's); the file is not changed. */
static void skip_unread(Elf *elf)
{
	static const char *const unread[] = {
		"debug_loc", "debug_loclists", "debug_macro", "debug_macinfo", "debug_frame",
		"debug_pubnames", "debug_pubtypes", "debug_gnu_pubnames", "debug_gnu_pubtypes",
	};
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name = gelf_getshdr(scn, &sh) ?
				   elf_strptr(elf, shstrndx, sh.sh_name) : NULL;

		if (!name || sh.sh_type == SHT_NOBITS)
			continue;
		name += !strncmp(name, ".zdebug_", 8) ? 2 : !strncmp(name, ".debug_", 7) ? 1 : 0;
		for (size_t i = 0; i < sizeof(unread) / sizeof(unread[0]); i++)
			if (!strcmp(name, unread[i])) {
				sh.sh_type = SHT_NOBITS;
				(void)gelf_update_shdr(scn, &sh);
				break;
			}
	}
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
	if (si->elf) {
		skip_unread(st_elf__elf(si->elf));
		si->dw = dwarf_begin_elf(st_elf__elf(si->elf), DWARF_C_READ, NULL);
	}
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

/* Element i's __u64 at byte off (elements of size bytes from base). */
static __u64 field_at(const void *base, size_t i, size_t size, size_t off)
{
	__u64 v;

	memcpy(&v, (const char *)base + i * size + off, sizeof(v));
	return v;
}

/* Of n elements sorted by the __u64 at off: the first above x (n: none). */
static size_t first_above(const void *base, size_t n, size_t size, size_t off, __u64 x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (field_at(base, mid, size, off) <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Of n ranges sorted by their start (at lo_off; the end at hi_off), the
 * one holding x: its index, or n. Ranges of different CUs or functions do
 * not overlap in practice: the last few starting at or below x are seen. */
static size_t holding(const void *base, size_t n, size_t size, size_t lo_off, size_t hi_off,
		      __u64 x)
{
	size_t i = first_above(base, n, size, lo_off, x);

	for (size_t k = 0; i > 0 && k < 8; i--, k++)
		if (x < field_at(base, i - 1, size, hi_off))
			return i - 1;
	return n;
}

/* The CU whose range holds vaddr, or NULL. */
static Dwarf_Die *find_cu(struct st_srcinfo *si, __u64 vaddr)
{
	size_t i = holding(si->cus, si->ncus, sizeof(*si->cus), offsetof(struct si_cu, lo),
			   offsetof(struct si_cu, hi), vaddr);

	return i < si->ncus ? &si->cus[i].die : NULL;
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

/* file interned as a frame names it: a relative one is taken from the
 * CU's directory. 0 (*out NULL when file is) or -ENOMEM. */
static int intern_file(struct st_srcinfo *si, Dwarf_Die *cudie, const char *file,
		       const char **out)
{
	Dwarf_Attribute attr;
	const char *dir;
	char *full = NULL;

	*out = NULL;
	if (!file)
		return 0;
	if (file[0] != '/' &&
	    (dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr))) && *dir) {
		if (asprintf(&full, "%s/%s", dir, file) < 0)
			return -ENOMEM;
		file = full;
	}
	*out = st_strtab__intern(si->strs, file);
	free(full);
	return *out ? 0 : -ENOMEM;
}

/* name interned (NULL stays NULL): 0 or -ENOMEM. */
static int intern_name(struct st_srcinfo *si, const char *name, const char **out)
{
	*out = name ? st_strtab__intern(si->strs, name) : NULL;
	return name && !*out ? -ENOMEM : 0;
}

/* A frame of interned strings. */
static int push_frame(struct st_srcinfo *si, const char *function, const char *file, __u32 line)
{
	if (ST_GROW(si->frames, si->frames_cap, si->nframes, 64))
		return -ENOMEM;
	si->frames[si->nframes++] = (struct st_src_frame){ function, file, line };
	return 0;
}

/* A frame from DWARF's strings. */
static int push(struct st_srcinfo *si, Dwarf_Die *cudie, const char *name, const char *file,
		__u32 line)
{
	const char *function, *full;
	int err;

	if ((err = intern_name(si, name, &function)) || (err = intern_file(si, cudie, file, &full)))
		return err;
	return push_frame(si, function, full, line);
}

/* What find_chain() makes of a DIE: a scope that may hold code (entered
 * when it holds the address), a scope functions may be defined in
 * (entered while no function is found), or neither. */
enum si_tag { SI_TAG_OTHER, SI_TAG_SCOPE, SI_TAG_CONTAINER };

static enum si_tag tag_kind(Dwarf_Die *die)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_subprogram:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
		return SI_TAG_SCOPE;
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return SI_TAG_CONTAINER;	/* functions may be defined inside */
	default:
		return SI_TAG_OTHER;
	}
}

/* die's address ranges appended to *arr (*n of *cap): 0 or -ENOMEM. */
static int add_ranges(Dwarf_Die *die, struct si_range **arr, size_t *n, size_t *cap)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (ST_GROW(*arr, *cap, *n, 64))
			return -ENOMEM;
		(*arr)[(*n)++] = (struct si_range){ start, end };
	}
	return 0;
}

/* DIE nesting followed at most (deeper scopes are not looked into). */
#define SI_MAX_DEPTH 128

/* The functions at vaddr in the CU: the innermost DW_TAG_subprogram whose
 * code holds vaddr, then the DW_TAG_inlined_subroutine scopes inside it
 * that hold it, outermost first, into chain[] (at most SI_MAX_DEPTH).
 * Iterative, and pruned: only scopes holding vaddr are entered (and the
 * namespaces and classes on the way, which have no code of their own), so
 * the work is the DIEs along the path and their siblings, not the CU.
 * *top: the outermost function found (*has_top set). */
static size_t find_chain(Dwarf_Die *cudie, __u64 vaddr, Dwarf_Die *chain, Dwarf_Die *top,
			 bool *has_top)
{
	Dwarf_Die stack[SI_MAX_DEPTH];
	int d = 0, floor = 0;	/* siblings below floor are outside the pc's scope */
	size_t n = 0;

	if (dwarf_child(cudie, &stack[0]) != 0)
		return 0;
	for (;;) {
		Dwarf_Die *cur = &stack[d];
		bool enter = false;

		switch (tag_kind(cur)) {
		case SI_TAG_SCOPE:
			if (dwarf_haspc(cur, vaddr) != 1)
				break;
			if (dwarf_tag(cur) == DW_TAG_subprogram || dwarf_tag(cur) == DW_TAG_entry_point) {
				if (n == 0) {	/* the outermost: kept for its other pcs */
					*top = *cur;
					*has_top = true;
				}
				n = 0;	/* a function nested in another: its own chain */
			}
			if (dwarf_tag(cur) != DW_TAG_lexical_block && n < SI_MAX_DEPTH)
				chain[n++] = *cur;
			floor = d + 1;	/* found: the scope of vaddr is inside */
			enter = true;
			break;
		case SI_TAG_CONTAINER:
			enter = n == 0;
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

/* Where inlined DIE die is called from (DW_AT_call_file in files, which
 * may be NULL; DW_AT_call_line); NULL and 0 when not said. */
static void call_site(Dwarf_Files *files, Dwarf_Die *die, const char **file, __u32 *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word val;

	*file = NULL;
	*line = 0;
	if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &val) == 0)
		*file = dwarf_filesrc(files, val, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &val) == 0 && val > 0 &&
	    val <= INT32_MAX)
		*line = (__u32)val;
}

/* The line table's file and line at vaddr in the CU; false: no row. */
static bool line_at(Dwarf_Die *cudie, __u64 vaddr, const char **file, __u32 *line)
{
	Dwarf_Line *l = dwarf_getsrc_die(cudie, vaddr);
	int ln = 0;

	*file = NULL;
	*line = 0;
	if (!l)
		return false;
	*file = dwarf_linesrc(l, NULL, NULL);
	if (dwarf_lineno(l, &ln) == 0 && ln > 0)
		*line = (__u32)ln;
	return true;
}

static int cmp_span(const void *pa, const void *pb)
{
	const struct si_span *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int cmp_row(const void *pa, const void *pb)
{
	const struct si_row *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* A scope of the function being kept: its ranges, and for a function its
 * name, for an inlined one also its call site. */
static int keep_node(struct st_srcinfo *si, Dwarf_Die *cudie, Dwarf_Files *files, Dwarf_Die *die,
		     __s32 parent, enum si_kind kind)
{
	struct si_node nd = { .parent = parent, .kind = (__u8)kind, .range0 = (__u32)si->nranges };
	const char *file;
	int err;

	if ((err = add_ranges(die, &si->ranges, &si->nranges, &si->ranges_cap)))
		return err;
	nd.nranges = (__u32)(si->nranges - nd.range0);
	if (kind != SI_BLOCK && (err = intern_name(si, die_name(si, die), &nd.name)))
		return err;
	if (kind == SI_INLINE) {
		call_site(files, die, &file, &nd.call_line);
		if ((err = intern_file(si, cudie, file, &nd.call_file)))
			return err;
	}
	if (ST_GROW(si->nodes, si->nodes_cap, si->nnodes, 64))
		return -ENOMEM;
	si->nodes[si->nnodes++] = nd;
	return 0;
}

/* The scopes inside function top that find_chain() may enter, in its
 * order (DIE order, depth first), each with its parent's index; false:
 * nested deeper than find_chain() follows, or too many (not kept). */
static int keep_scopes(struct st_srcinfo *si, Dwarf_Die *cudie, Dwarf_Files *files,
		       Dwarf_Die *top, size_t node0, bool *ok)
{
	Dwarf_Die stack[SI_MAX_DEPTH];
	__s32 idx[SI_MAX_DEPTH];
	int d = 0, err;

	*ok = false;
	idx[0] = 0;
	stack[0] = *top;
	if (dwarf_child(top, &stack[1]) != 0) {
		*ok = true;
		return 0;
	}
	d = 1;
	while (d > 0) {
		Dwarf_Die *cur = &stack[d];
		int kind = -1;

		switch (dwarf_tag(cur)) {
		case DW_TAG_inlined_subroutine:
			kind = SI_INLINE;
			break;
		case DW_TAG_lexical_block:
			kind = SI_BLOCK;
			break;
		case DW_TAG_subprogram:
		case DW_TAG_entry_point:
			kind = SI_SUB;
			break;
		default:
			break;
		}
		if (kind >= 0) {
			idx[d] = (__s32)(si->nnodes - node0);
			if ((err = keep_node(si, cudie, files, cur, idx[d - 1], (enum si_kind)kind)))
				return err;
			if (si->nnodes - node0 > SI_MAX_FN_KEPT)
				return 0;
			if (dwarf_child(cur, &stack[d + 1]) == 0) {
				if (d + 2 >= SI_MAX_DEPTH / 2)
					return 0;	/* find_chain() may stop short */
				d++;
				continue;
			}
		}
		while (d > 0 && dwarf_siblingof(&stack[d], &stack[d]) != 0)
			d--;
	}
	*ok = true;
	return 0;
}

/* The first of the CU's lines (sorted by address, as dwarf_getsrc_die()
 * has them) whose address is above addr. */
static size_t first_row_after(Dwarf_Lines *lines, size_t nlines, __u64 addr)
{
	size_t lo = 0, hi = nlines;
	Dwarf_Addr a;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a) == 0 && a <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The line table's answers inside the ranges of fn's node 0: at each
 * range's start and at each row address inside (dwarf_getsrc_die() gives
 * the same answer up to the next row address: it depends on the last row
 * at or before the address only). */
static int keep_rows(struct st_srcinfo *si, Dwarf_Die *cudie, const struct si_node *fnode)
{
	Dwarf_Lines *lines;
	size_t nlines = 0, row0 = si->nrows, k;
	Dwarf_Addr a;
	int err;

	if (dwarf_getsrclines(cudie, &lines, &nlines))
		nlines = 0;
	for (__u32 r = 0; r < fnode->nranges; r++) {
		const struct si_range *rg = &si->ranges[fnode->range0 + r];

		if (rg->lo >= rg->hi)
			continue;
		if (ST_GROW(si->rows, si->rows_cap, si->nrows, 256))
			return -ENOMEM;
		si->rows[si->nrows++] = (struct si_row){ .addr = rg->lo };
		for (size_t i = first_row_after(lines, nlines, rg->lo); i < nlines; i++) {
			if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a))
				continue;
			if (a >= rg->hi)
				break;
			if (si->nrows - row0 > SI_MAX_FN_KEPT)
				return 0;
			if (ST_GROW(si->rows, si->rows_cap, si->nrows, 256))
				return -ENOMEM;
			si->rows[si->nrows++] = (struct si_row){ .addr = a };
		}
	}
	qsort(si->rows + row0, si->nrows - row0, sizeof(*si->rows), cmp_row);
	for (size_t i = k = row0; i < si->nrows; i++) {	/* each address once */
		const char *file;

		if (k > row0 && si->rows[k - 1].addr == si->rows[i].addr)
			continue;
		si->rows[k].addr = si->rows[i].addr;
		line_at(cudie, si->rows[k].addr, &file, &si->rows[k].line);
		if ((err = intern_file(si, cudie, file, &si->rows[k].file)))
			return err;
		k++;
	}
	si->nrows = k;
	return 0;
}

/* The ranges of the scopes find_chain() tries before function top in its
 * CU (the functions, and scopes, at the top and in namespaces and classes,
 * in DIE order): where one holds an address, it is the one found there.
 * false: nested too deep to tell. */
static bool scopes_before(Dwarf_Die *cudie, Dwarf_Off top, struct si_range **out, size_t *n,
			  size_t *cap, int *err)
{
	Dwarf_Die stack[SI_MAX_DEPTH];
	int d = 0;

	*err = 0;
	if (dwarf_child(cudie, &stack[0]) != 0)
		return false;
	for (;;) {
		Dwarf_Die *cur = &stack[d];
		enum si_tag kind = tag_kind(cur);

		if (dwarf_dieoffset(cur) == top)
			return true;
		if (kind == SI_TAG_SCOPE && (*err = add_ranges(cur, out, n, cap)))
			return false;
		if (kind == SI_TAG_CONTAINER && dwarf_child(cur, &stack[d + 1]) == 0) {
			if (++d + 1 >= SI_MAX_DEPTH)
				return false;
			continue;
		}
		while (dwarf_siblingof(&stack[d], &stack[d]) != 0)
			if (d-- == 0)
				return false;	/* top not found */
	}
}

static int cmp_u64(const void *pa, const void *pb)
{
	const __u64 *a = pa, *b = pb;

	return *a < *b ? -1 : *a > *b;
}

/* Spans to fn for the parts of function node's ranges (top, in cudie)
 * where the DWARF would find it too: find_cu() gives its CU there and no
 * scope before it in the CU holds the address (overlapping ranges: code
 * folded by the linker, or a broken file); elsewhere it is looked up in
 * the DWARF. Both are constant between the CU ranges' and those scopes'
 * bounds, so each piece between them is tried at its start. */
static int add_spans(struct st_srcinfo *si, Dwarf_Die *cudie, Dwarf_Die *top,
		     const struct si_node *node, __u32 fn)
{
	struct si_range *before = NULL;
	size_t nbefore = 0, before_cap = 0, nb = 0, b_cap = 0;
	Dwarf_Off cuoff = dwarf_dieoffset(cudie);
	__u64 *bounds = NULL;
	int err = 0;

	if (!scopes_before(cudie, dwarf_dieoffset(top), &before, &nbefore, &before_cap, &err))
		goto cleanup;	/* err, or not kept */
	for (__u32 r = 0; r < node->nranges && !err; r++) {
		const struct si_range rg = si->ranges[node->range0 + r];

		nb = 0;
		for (size_t i = 0; i < si->ncus + nbefore && !err; i++) {
			__u64 lo = i < si->ncus ? si->cus[i].lo : before[i - si->ncus].lo;
			__u64 hi = i < si->ncus ? si->cus[i].hi : before[i - si->ncus].hi;

			for (int k = 0; k < 2 && !err; k++) {
				__u64 at = k ? hi : lo;

				if (at > rg.lo && at < rg.hi && !(err = ST_GROW(bounds, b_cap, nb, 64)))
					bounds[nb++] = at;
			}
		}
		if (err || (err = ST_GROW(bounds, b_cap, nb, 64)))
			break;
		bounds[nb++] = rg.lo;
		qsort(bounds, nb, sizeof(*bounds), cmp_u64);
		for (size_t i = 0; i < nb && !err; i++) {
			__u64 lo = bounds[i], hi = i + 1 < nb ? bounds[i + 1] : rg.hi;
			Dwarf_Die *cu = find_cu(si, lo);
			bool ok = lo < hi && cu && dwarf_dieoffset(cu) == cuoff;

			for (size_t j = 0; ok && j < nbefore; j++)
				ok = !(before[j].lo <= lo && lo < before[j].hi);
			if (!ok)
				continue;
			if (si->nspans && si->spans[si->nspans - 1].fn == fn &&
			    si->spans[si->nspans - 1].hi == lo)
				si->spans[si->nspans - 1].hi = hi;	/* one span again */
			else if (!(err = ST_GROW(si->spans, si->spans_cap, si->nspans, 64)))
				si->spans[si->nspans++] = (struct si_span){ lo, hi, fn };
		}
	}
	qsort(si->spans, si->nspans, sizeof(*si->spans), cmp_span);
cleanup:
	free(before);
	free(bounds);
	return err;
}

/* The function top (outermost, found by find_chain() in cudie) kept, so
 * that its other addresses are answered without DWARF (see the top). A
 * function too large is marked SI_UNKEPT; past the module's share,
 * nothing more is kept. 0 or -ENOMEM. */
static int keep_fn(struct st_srcinfo *si, Dwarf_Die *cudie, Dwarf_Files *files, Dwarf_Die *top)
{
	size_t node0 = si->nnodes, range0 = si->nranges, row0 = si->nrows, span0 = si->nspans;
	struct si_fn fn = { .node0 = (__u32)node0, .row0 = (__u32)row0 };
	__u32 id = (__u32)si->nfns;
	bool ok = false;
	int err;

	if (si->no_keep || si->nnodes + si->nrows >= SI_MAX_KEPT || si->nfns >= SI_UNKEPT - 1)
		return 0;
	/* once per open: parts of its ranges may have no span (add_spans()) */
	if (!si->tried && !(si->tried = st_u64map__new()))
		return -ENOMEM;
	if (st_u64map__get(si->tried, dwarf_dieoffset(top) + 1))
		return 0;
	if ((err = st_u64map__put(si->tried, dwarf_dieoffset(top) + 1, (void *)1)))
		return err;
	if ((err = keep_node(si, cudie, files, top, -1, SI_SUB)))
		goto undo;
	if ((err = keep_scopes(si, cudie, files, top, node0, &ok)) ||
	    (ok && (err = keep_rows(si, cudie, &si->nodes[node0]))))
		goto undo;
	if (!ok || si->nrows - row0 > SI_MAX_FN_KEPT || si->nrows == row0) {
		/* only its ranges, to know it: node 0 and its ranges stay */
		si->nnodes = node0 + 1;
		si->nrows = row0;
		si->nranges = si->nodes[node0].range0 + si->nodes[node0].nranges;
		id = SI_UNKEPT;
	}
	if ((err = add_spans(si, cudie, top, &si->nodes[node0], id)))
		goto undo;
	if (id == SI_UNKEPT)
		return 0;
	if ((err = ST_GROW(si->fns, si->fns_cap, si->nfns, 64)))
		goto undo;
	fn.nnodes = (__u32)(si->nnodes - node0);
	fn.nrows = (__u32)(si->nrows - row0);
	si->fns[si->nfns++] = fn;
	return 0;
undo:	/* the strings interned stay (they are shared) */
	si->nnodes = node0;
	si->nranges = range0;
	si->nrows = row0;
	if (si->nspans != span0) {	/* sorted in: take this function's out again */
		size_t k = 0;

		for (size_t i = 0; i < si->nspans; i++)
			if (si->spans[i].fn != id)
				si->spans[k++] = si->spans[i];
		si->nspans = k;
	}
	return err;
}

/* The span of a function kept (or SI_UNKEPT) holding vaddr, or NULL. */
static const struct si_span *kept_span(const struct st_srcinfo *si, __u64 vaddr)
{
	size_t i = holding(si->spans, si->nspans, sizeof(*si->spans),
			   offsetof(struct si_span, lo), offsetof(struct si_span, hi), vaddr);

	return i < si->nspans ? &si->spans[i] : NULL;
}

/* The kept function holding vaddr, or NULL. */
static const struct si_fn *kept_fn(const struct st_srcinfo *si, __u64 vaddr)
{
	const struct si_span *sp = kept_span(si, vaddr);

	return sp && sp->fn != SI_UNKEPT ? &si->fns[sp->fn] : NULL;
}

static bool node_has(const struct st_srcinfo *si, const struct si_node *nd, __u64 vaddr)
{
	for (__u32 r = 0; r < nd->nranges; r++)
		if (si->ranges[nd->range0 + r].lo <= vaddr && vaddr < si->ranges[nd->range0 + r].hi)
			return true;
	return false;
}

/* Append the chain at vaddr to si->frames, outermost first; how many. Each
 * frame's line is where it calls the next (the next one's DW_AT_call_file
 * and DW_AT_call_line), the innermost's the line table's. From the kept
 * function fn when there is one (the scopes find_chain() would enter: the
 * first child holding vaddr at each level), else from the DWARF (then the
 * function is kept). */
static int chain(struct st_srcinfo *si, const struct si_fn *fn, __u64 vaddr, size_t *n)
{
	Dwarf_Die *cudie = NULL, dies[SI_MAX_DEPTH], top;
	const struct si_node *nodes = fn ? si->nodes + fn->node0 : NULL;
	__u32 path[SI_MAX_DEPTH];
	Dwarf_Files *files = NULL;
	size_t nd = 0, skip = 0;
	bool has_top = false;
	int err = 0;

	*n = 0;
	if (fn) {
		__s32 cur = 0;

		path[nd++] = 0;
		for (__u32 i = 1; i < fn->nnodes; i++) {
			if (nodes[i].parent != cur || !node_has(si, &nodes[i], vaddr))
				continue;
			if (nodes[i].kind == SI_SUB)
				nd = 0;	/* a function nested in another: its own chain */
			if (nodes[i].kind != SI_BLOCK)
				path[nd++] = i;
			cur = (__s32)i;
		}
	} else {
		if (!(cudie = find_cu(si, vaddr)))
			return 0;
		nd = find_chain(cudie, vaddr, dies, &top, &has_top);
		if (dwarf_getsrcfiles(cudie, &files, NULL))
			files = NULL;
	}
	if (nd > ST_SRC_MAX_FRAMES)	/* keep the function and the innermost */
		skip = nd - ST_SRC_MAX_FRAMES;
	for (size_t i = 0; i < nd && !err; i++) {
		const char *file = NULL;
		__u32 line = 0;

		if (i > 0 && i <= skip)
			continue;
		if (fn) {
			const struct si_row *r = si->rows + fn->row0;
			size_t lo;

			if (i + 1 < nd) {
				err = push_frame(si, nodes[path[i]].name, nodes[path[i + 1]].call_file,
						 nodes[path[i + 1]].call_line);
			} else {	/* the last answer at or before vaddr */
				lo = first_above(r, fn->nrows, sizeof(*r), offsetof(struct si_row, addr),
						 vaddr);
				err = push_frame(si, nodes[path[i]].name, lo ? r[lo - 1].file : NULL,
						 lo ? r[lo - 1].line : 0);
			}
		} else {
			if (i + 1 < nd)	/* where the next one in is called */
				call_site(files, &dies[i + 1], &file, &line);
			else
				line_at(cudie, vaddr, &file, &line);
			err = push(si, cudie, die_name(si, &dies[i]), file, line);
		}
		if (!err)
			++*n;
	}
	if (!err && !fn && nd == 0) {	/* lines without a function DIE */
		const char *file;
		__u32 line;

		if (line_at(cudie, vaddr, &file, &line) && file) {
			err = push(si, cudie, NULL, file, line);
			if (!err)
				*n = 1;
		}
	}
	if (!err && has_top && !kept_span(si, vaddr))
		err = keep_fn(si, cudie, files, &top);
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

/* The chain at vaddr made from kept function fn, into si->answer (not
 * cached per address: the function is). */
static int kept_answer(struct st_srcinfo *si, const struct si_fn *fn, __u64 vaddr,
		       const struct st_src_frame **frames, size_t *n)
{
	size_t first = si->nframes, k = 0;
	int err = chain(si, fn, vaddr, &k);

	if (!err)
		memcpy(si->answer, si->frames + first, k * sizeof(*si->answer));
	si->nframes = first;
	*frames = !err && k ? si->answer : NULL;
	*n = err ? 0 : k;
	return err;
}

/* Look vaddr up (not cached yet; in a kept function, or with the DWARF
 * open) and cache it in *out. */
static int si_lookup(struct st_srcinfo *si, __u64 vaddr, struct si_slot **out)
{
	size_t first = si->nframes, n;
	struct si_slot *sl;
	int err;

	if ((si->nused + 1) * 2 > si->nslots && (err = grow_slots(si)))
		return err;
	err = chain(si, kept_fn(si, vaddr), vaddr, &n);
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

void st_srcinfo__keep(struct st_srcinfo *si, bool keep)
{
	si->no_keep = !keep;
}

int st_srcinfo__find(struct st_srcinfo *si, __u64 vaddr, const struct st_src_frame **frames,
		     size_t *n)
{
	struct si_slot *sl = si->nslots ? slot_of(si, vaddr) : NULL;
	const struct si_fn *fn;
	int err;

	if ((!sl || !sl->used) && (fn = kept_fn(si, vaddr)))
		return kept_answer(si, fn, vaddr, frames, n);
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

/* vaddr noted for warm() or settle() (at most max a module; the others
 * are asked again by a later profile, or looked up by the naming pass
 * itself). 0 or -ENOMEM. */
static int note_pending(struct st_srcinfo *si, __u64 vaddr, size_t max)
{
	if (vaddr == UINT64_MAX)
		return 0;
	if (!si->pending && !(si->pending = st_u64map__new()))
		return -ENOMEM;
	if (st_u64map__count(si->pending) >= max)
		return 0;
	return st_u64map__put(si->pending, vaddr + 1, (void *)1);
}

int st_symbolizer__source(struct st_symbolizer *s, struct st_module *m, const char *path,
			  __u64 map_start, __u64 map_pgoff, __u64 addr, bool is_return,
			  const struct st_src_frame **frames, size_t *n)
{
	struct st_srcinfo *si;
	struct si_slot *sl = NULL;
	const struct si_fn *fn;
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
	if (!sl && (fn = kept_fn(si, vaddr)))	/* no DWARF needed */
		return kept_answer(si, fn, vaddr, frames, n);
	if (!sl) {
		if (si->none || si->cut)
			return 0;
		if (s->src_gather && !si->dw) {	/* settle() looks it up */
			if (!si->wanted && path && st_mod__display_len(path) == strlen(path))
				si->hint = st_mod__name(s, m, path);
			si->wanted = true;
			return note_pending(si, vaddr, SI_MAX_GATHER);
		}
		if (s->src_defer && (!si->dw || (s->src_deadline > 0 &&
							st_work__now() > s->src_deadline))) {
			si->wanted = !si->dw;
			s->src_deferred++;
			return si->dw ? 0 : note_pending(si, vaddr, SI_MAX_PENDING);
		} else {
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

/* libdw keeps the line table of every CU it was asked about decoded until
 * dwarf_end() (libpython's 50 CUs of a quiet -a profile: 364,000 rows,
 * 14.7 MiB, as much as its debug sections), and the answers are kept
 * here anyway. Before a lookup in another CU than the last one, once the
 * tables held pass SI_LINES_HELD rows, the Dwarf is begun again on the
 * same ELF (its sections stay read there; the CU table is built again) and
 * the tables go. Addresses come in order (warm_lookups()), so a CU's are
 * looked up together. False when the module's DWARF could not be begun
 * again (no more lookups). */
static bool hold_lines(struct st_srcinfo *si, __u64 vaddr)
{
	Dwarf_Die *cu = find_cu(si, vaddr);
	Dwarf_Lines *lines;
	double t0;
	size_t n;

	if (!cu || si->dw_borrowed || dwarf_dieoffset(cu) + 1 == si->line_cu)
		return true;
	if (si->lines_held > SI_LINES_HELD) {
		t0 = st_work__now();
		dwarf_end(si->dw);
		free(si->cus);
		si->cus = NULL;
		si->ncus = si->cus_cap = 0;
		si->lines_held = 0;
		si->dw = dwarf_begin_elf(st_elf__elf(si->elf), DWARF_C_READ, NULL);
		if (!si->dw || build_cus(si, NULL)) {
			st_srcinfo__close(si);
			si->cut = true;
			return false;
		}
		si->spent += st_work__now() - t0;
		if (!(cu = find_cu(si, vaddr)))
			return true;
	}
	si->line_cu = dwarf_dieoffset(cu) + 1;
	if (!dwarf_getsrclines(cu, &lines, &n))
		si->lines_held += n;
	return true;
}

/* The addresses noted (pending) looked up in order, until `until`
 * (st_work__now(); 0: no limit); *done when none is left (or the module's
 * lookups stopped). */
static int warm_lookups(struct st_symbolizer *s, struct st_module *m, struct st_srcinfo *si,
			double until, bool *done)
{
	size_t pos = 0, n = 0;
	struct si_slot *sl;
	__u64 key, *addrs;
	int err = 0;

	*done = false;
	addrs = malloc((st_u64map__count(si->pending) + 1) * sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	while (st_u64map__next(si->pending, &pos, &key))
		addrs[n++] = key - 1;
	qsort(addrs, n, sizeof(*addrs), cmp_u64);
	for (size_t i = 0; i < n; i++) {
		if ((si->nslots && slot_of(si, addrs[i])->used) || kept_fn(si, addrs[i]))
			continue;
		if (until > 0 && st_work__now() > until)
			goto cleanup;
		if (!hold_lines(si, addrs[i]))
			break;
		if ((err = lookup(s, m, si, addrs[i], &sl)))
			goto cleanup;
		if (!sl)
			break;	/* cut: no more lookups in this module */
	}
	st_u64map__free(si->pending);	/* up to SI_MAX_GATHER's table */
	si->pending = NULL;
	*done = true;
cleanup:
	free(addrs);
	return err;
}

/* Whether si's module has addresses noted to look up (else not wanted). */
static bool has_wanted(struct st_srcinfo *si)
{
	if (!si || !si->wanted)
		return false;
	if (si->none || si->cut || !si->pending) {
		si->wanted = false;
		st_u64map__free(si->pending);	/* nothing more to look up */
		si->pending = NULL;
	}
	return si->wanted;
}

/* m's noted addresses looked up (until `until`, as warm_lookups()), its
 * DWARF opened for them and closed once all are; still wanted while some
 * are left (the DWARF open) or its file could not be read for lack of
 * memory. Whether it has DWARF to look in. */
static bool warm_module(struct st_symbolizer *s, struct st_module *m, struct st_srcinfo *si,
			double until)
{
	bool finished;

	/* no file now (an unreferenced module): noted again when asked */
	if (!si->dw && si_open(s, m, si->hint, si) == -ENOMEM)
		return false;	/* still wanted */
	si->wanted = false;
	if (!si->dw)
		return false;
	if (warm_lookups(s, m, si, until, &finished) == -ENOMEM || !finished) {
		si->wanted = true;	/* the rest at the next call, still open */
		return true;
	}
	st_srcinfo__close(si);	/* all it was opened for is cached */
	return true;
}

size_t st_symbolizer__source_warm(struct st_symbolizer *s)
{
	struct st_module *m;
	size_t left = 0;
	bool done = false;

	for (m = s->modules; m; m = m->next) {
		if (!has_wanted(m->src))
			continue;
		if (done) {
			left++;
			continue;
		}
		done = true;
		(void)warm_module(s, m, m->src, st_work__now() + SI_WARM_S);
	}
	return left;
}

void st_symbolizer__source_gather(struct st_symbolizer *s, bool on)
{
	s->src_gather = on;
}

void st_symbolizer__source_settle(struct st_symbolizer *s)
{
	for (struct st_module *m = s->modules; m; m = m->next) {
		bool dwarf;

		if (!has_wanted(m->src))
			continue;
		dwarf = warm_module(s, m, m->src, 0);
		/* one module's DWARF at a time: what is left (out of memory)
		 * the naming pass looks up itself */
		st_srcinfo__close(m->src);
		if (s->verbose && dwarf)
			fprintf(stderr, "stacktreed: %s: DWARF closed, %zu addresses looked up\n",
				ST_TEXTESC(m->path), m->src->nused);
		st_u64map__free(m->src->pending);
		m->src->pending = NULL;
		m->src->wanted = false;
	}
}

void st_symbolizer__source_release(struct st_symbolizer *s)
{
	for (struct st_module *m = s->modules; m; m = m->next)
		st_srcinfo__close(m->src);
}

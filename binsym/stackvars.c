/* stackvars.c - frame-based DWARF variables of a module (see stackvars.h). */
#include "binsym/stackvars.h"
#include "common/grow.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/strtab.h"

/* x86-64: rbp = CFA - 16 once "push %rbp; mov %rsp,%rbp" ran */
#define X86_64_RBP_TO_CFA 16

struct sv_var {
	__u64 lo, hi;		/* ELF vaddrs where the location holds */
	__u64 maxhi;		/* greatest hi of this entry and all before it */
	const char *name;	/* in names */
	__s32 off;		/* start, from the CFA */
	__u32 size;
	__u32 depth;		/* 0: the function's own scope */
};

struct st_stackvars {
	struct sv_var *vars;
	size_t n, cap;
	struct st_strtab *names;
};

/* A scope while walking: its pc ranges, and how DW_OP_fbreg maps to the
 * CFA in the function around it. */
struct scope {
	Dwarf_Addr (*r)[2];
	size_t n;
	unsigned depth;
	bool in_func;		/* inside a function whose frame base is supported */
	__s64 delta;		/* CFA offset = fbreg offset + delta */
};

struct ctx {
	struct st_stackvars *t;
	int machine;
	int err;
	bool full;
};

void st_stackvars__free(struct st_stackvars *t)
{
	if (!t)
		return;
	free(t->vars);
	st_strtab__free(t->names);
	free(t);
}

size_t st_stackvars__count(const struct st_stackvars *t)
{
	return t ? t->n : 0;
}

size_t st_stackvars__memory(const struct st_stackvars *t)
{
	if (!t)
		return 0;
	return sizeof(*t) + t->cap * sizeof(*t->vars) + st_strtab__memory(t->names);
}

static int push(struct ctx *c, __u64 lo, __u64 hi, const char *name, __s64 off, __u64 size,
		unsigned depth)
{
	struct st_stackvars *t = c->t;

	if (lo >= hi || off < INT32_MIN || off > INT32_MAX)
		return 0;
	if (t->n >= ST_STACKVARS_MAX) {
		c->full = true;
		return 0;
	}
	if (ST_GROW(t->vars, t->cap, t->n, 64))
		return -ENOMEM;
	t->vars[t->n++] = (struct sv_var){
		.lo = lo, .hi = hi, .name = name, .off = (__s32)off,
		.size = size > UINT32_MAX ? UINT32_MAX : (__u32)size, .depth = depth,
	};
	return 0;
}

/* The pc ranges of die into sc (malloc'ed; none: n = 0). */
static int get_ranges(Dwarf_Die *die, struct scope *sc)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	size_t cap = 0;

	sc->r = NULL;
	sc->n = 0;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (start >= end)
			continue;
		if (sc->n == cap) {
			Dwarf_Addr(*r)[2];

			cap = cap ? cap * 2 : 2;
			r = realloc(sc->r, cap * sizeof(*r));
			if (!r) {
				free(sc->r);
				sc->r = NULL;
				sc->n = 0;
				return -ENOMEM;
			}
			sc->r = r;
		}
		sc->r[sc->n][0] = start;
		sc->r[sc->n][1] = end;
		sc->n++;
	}
	return 0;
}

/* A single-operation expression attribute (exprloc or block form). */
static bool single_op(Dwarf_Attribute *attr, Dwarf_Op **op)
{
	size_t nops;

	switch (dwarf_whatform(attr)) {
	case DW_FORM_exprloc:
	case DW_FORM_block:
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4:
		break;
	default:
		return false;	/* a location list, or not an expression */
	}
	return dwarf_getlocation(attr, op, &nops) == 0 && nops == 1;
}

/* How the subprogram's frame base relates to the CFA: 0 and *delta, or
 * -ENOTSUP. */
static int frame_base(const struct ctx *c, Dwarf_Die *die, __s64 *delta)
{
	Dwarf_Attribute attr;
	Dwarf_Op *op;

	if (!dwarf_attr(die, DW_AT_frame_base, &attr) || !single_op(&attr, &op))
		return -ENOTSUP;
	if (op->atom == DW_OP_call_frame_cfa) {
		*delta = 0;
		return 0;
	}
	if (c->machine != EM_X86_64)
		return -ENOTSUP;
	if (op->atom == DW_OP_reg6) {	/* the frame base is rbp's value */
		*delta = -X86_64_RBP_TO_CFA;
		return 0;
	}
	if (op->atom == DW_OP_breg6) {	/* rbp + N */
		*delta = (__s64)op->number - X86_64_RBP_TO_CFA;
		return 0;
	}
	return -ENOTSUP;
}

static __u64 type_size(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word size;
	Dwarf_Die type;

	if (!dwarf_attr_integrate(die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &type) ||
	    dwarf_aggregate_size(&type, &size) || !size)
		return 1;	/* unknown: the variable's first byte at least */
	return size;
}

static int add_var(struct ctx *c, Dwarf_Die *die, const struct scope *sc)
{
	Dwarf_Addr base, start, end;
	Dwarf_Attribute attr, nattr;
	const char *name = NULL;
	ptrdiff_t off = 0;
	Dwarf_Op *expr;
	size_t len, i;
	__u64 size = 0;
	int err;

	if (!dwarf_attr(die, DW_AT_location, &attr))
		return 0;
	while ((off = dwarf_getlocations(&attr, off, &base, &start, &end, &expr, &len)) > 0) {
		__s64 cfa_off;

		if (len != 1 || expr[0].atom != DW_OP_fbreg)
			continue;
		if (!name) {
			name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &nattr));
			if (!name || !*name)
				return 0;
			name = st_strtab__intern(c->t->names, name);
			if (!name)
				return -ENOMEM;
			size = type_size(die);
		}
		cfa_off = (__s64)expr[0].number + sc->delta;
		if (start == 0 && end == (Dwarf_Addr)-1) {	/* the whole scope */
			for (i = 0; i < sc->n; i++) {
				err = push(c, sc->r[i][0], sc->r[i][1], name, cfa_off, size,
					   sc->depth);
				if (err)
					return err;
			}
		} else {
			err = push(c, start, end, name, cfa_off, size, sc->depth);
			if (err)
				return err;
		}
	}
	return 0;
}

static void walk(struct ctx *c, Dwarf_Die *parent, const struct scope *sc)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		struct scope in = *sc;
		bool own = false;

		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			in.depth = 0;
			in.in_func = false;
			c->err = get_ranges(&child, &in);
			own = true;
			in.in_func = in.n && !frame_base(c, &child, &in.delta);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
			if (!sc->in_func)
				continue;
			in.depth = sc->depth + 1;
			c->err = get_ranges(&child, &in);
			own = true;
			if (!in.n) {	/* no code of its own: the scope around it */
				in.r = sc->r;
				in.n = sc->n;
				own = false;
			}
			break;
		case DW_TAG_formal_parameter:
		case DW_TAG_variable:
			if (sc->in_func)
				c->err = add_var(c, &child, sc);
			continue;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			break;	/* C++ function definitions may be inside */
		default:
			continue;
		}
		if (!c->err)
			walk(c, &child, &in);
		if (own)
			free(in.r);
	} while (!c->err && !c->full && dwarf_siblingof(&child, &child) == 0);
}

static int cmp_var(const void *pa, const void *pb)
{
	const struct sv_var *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

static void finish(struct st_stackvars *t)
{
	__u64 maxhi = 0;
	size_t i;

	if (t->n)	/* (vars is NULL when the module has none) */
		qsort(t->vars, t->n, sizeof(*t->vars), cmp_var);
	for (i = 0; i < t->n; i++) {
		if (t->vars[i].hi > maxhi)
			maxhi = t->vars[i].hi;
		t->vars[i].maxhi = maxhi;
	}
	if (t->n < t->cap) {
		struct sv_var *vars = realloc(t->vars, (t->n ? t->n : 1) * sizeof(*vars));

		if (vars) {
			t->vars = vars;
			t->cap = t->n ? t->n : 1;
		}
	}
}

int st_stackvars__build(Dwarf *dw, int machine, struct st_stackvars **out)
{
	struct ctx c = { .machine = machine };
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	__u8 unit_type;

	*out = NULL;
	c.t = calloc(1, sizeof(*c.t));
	if (!c.t)
		return -ENOMEM;
	c.t->names = st_strtab__new();
	if (!c.t->names) {
		c.err = -ENOMEM;
		goto cleanup;
	}
	while (!c.err && !c.full &&
	       dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		struct scope top = { 0 };

		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;	/* type units; split units live in .dwo files */
		walk(&c, &cudie, &top);
	}
	if (c.err)
		goto cleanup;
	finish(c.t);
	*out = c.t;
	return 0;
cleanup:
	st_stackvars__free(c.t);
	return c.err;
}

int st_stackvars__find(const struct st_stackvars *t, __u64 pc, __s64 cfa_offset,
		       const char **name, __u64 *offset)
{
	const struct sv_var *best = NULL;
	size_t lo = 0, hi = t ? t->n : 0, j;

	/* first entry starting after pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->vars[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* back while something at or before j may still reach pc */
	for (j = lo; j > 0 && t->vars[j - 1].maxhi > pc; j--) {
		const struct sv_var *v = &t->vars[j - 1];

		if (pc >= v->hi || cfa_offset < v->off || cfa_offset - v->off >= (__s64)v->size)
			continue;
		if (!best || v->depth > best->depth ||
		    (v->depth == best->depth && v->size < best->size))
			best = v;
	}
	if (!best)
		return -ENOENT;
	*name = best->name;
	*offset = (__u64)(cfa_offset - best->off);
	return 0;
}

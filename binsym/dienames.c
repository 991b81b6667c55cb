/* dienames.c - C++ function names composed from DWARF (see dienames.h). */
#include "binsym/dienames.h"

#include <dwarf.h>
#include <libiberty/demangle.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DN_MAX_ORIGIN 4		/* abstract origin / specification links followed */
#define DN_MAX_TYPE 8		/* type links followed for one parameter */
#define DN_MAX_PARAMS 32	/* parameters printed (then "...") */
#define DN_MAX_SCOPES 16	/* enclosing scopes printed */

/* Text appended to a fixed buffer, cut at its end. */
struct dn_out {
	char *buf;
	size_t len, used;
};

static void put(struct dn_out *o, const char *s)
{
	size_t n = strlen(s);

	if (o->used + 1 >= o->len)
		return;
	if (n > o->len - 1 - o->used)
		n = o->len - 1 - o->used;
	memcpy(o->buf + o->used, s, n);
	o->used += n;
	o->buf[o->used] = '\0';
}

static bool is_cxx(Dwarf_Die *die)
{
	Dwarf_Die cu;

	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return false;
	switch (dwarf_srclang(&cu)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
		return true;
	default:
		return false;
	}
}

static const char *linkage(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a)
					?: dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
}

/* The declaration of function die: its abstract origin's specification
 * (the DIE in the scope the function belongs to) into *decl. */
static void declaration(Dwarf_Die *die, Dwarf_Die *decl)
{
	Dwarf_Attribute a;
	Dwarf_Die next;

	*decl = *die;
	for (int i = 0; i < DN_MAX_ORIGIN; i++) {
		if (!dwarf_formref_die(dwarf_attr(decl, DW_AT_abstract_origin, &a), &next) &&
		    !dwarf_formref_die(dwarf_attr(decl, DW_AT_specification, &a), &next))
			return;
		*decl = next;
	}
}

/* A type's name as the demangler prints it: the named type under its
 * qualifiers ("char const*", "Book&"); typedefs followed to what they
 * name, as linkage names encode types. *is_const: the type pointed to (or
 * referred to) by the outermost link is const (for `this`). */
static void type_name(struct dn_out *o, Dwarf_Die *type, bool *is_const)
{
	const char *mods[DN_MAX_TYPE];
	const char *base = NULL;
	Dwarf_Attribute a;
	Dwarf_Die cur = *type, next;
	int n = 0, steps, prev = 0;

	if (is_const)
		*is_const = false;
	for (steps = 0; steps < DN_MAX_TYPE; steps++) {
		const char *m = NULL;
		int tag = dwarf_tag(&cur);

		switch (tag) {
		case DW_TAG_const_type: m = " const"; break;
		case DW_TAG_volatile_type: m = " volatile"; break;
		case DW_TAG_pointer_type: m = "*"; break;
		case DW_TAG_reference_type: m = "&"; break;
		case DW_TAG_rvalue_reference_type: m = "&&"; break;
		case DW_TAG_typedef: break;
		case DW_TAG_subroutine_type: base = "fn"; break;
		default:
			base = dwarf_diename(&cur);
			if (!base)
				base = tag == DW_TAG_enumeration_type ? "(anonymous enum)"
				       : tag == DW_TAG_base_type || tag == DW_TAG_unspecified_type
					       ? "?"
					       : "(anonymous class)";
			break;
		}
		if (is_const && tag == DW_TAG_const_type && prev == DW_TAG_pointer_type)
			*is_const = true;	/* (a const pointer's own const comes first) */
		prev = tag;
		if (m)
			mods[n++] = m;
		if (base)
			break;
		if (!dwarf_formref_die(dwarf_attr(&cur, DW_AT_type, &a), &next)) {
			base = "void";	/* a pointer to nothing is to void */
			break;
		}
		cur = next;
	}
	put(o, base ? base : "?");
	while (n > 0)
		put(o, mods[--n]);
}

/* "(T1, T2)" of function decl's formal parameters; *is_const: its `this`
 * points to a const object. */
static void params(struct dn_out *o, Dwarf_Die *decl, bool *is_const)
{
	Dwarf_Attribute a;
	Dwarf_Die child, type;
	bool first = true, art;
	int k = 0;

	*is_const = false;
	put(o, "(");
	if (dwarf_child(decl, &child) == 0) {
		do {
			int tag = dwarf_tag(&child);

			if (tag == DW_TAG_unspecified_parameters) {
				put(o, first ? "..." : ", ...");
				first = false;
				continue;
			}
			if (tag != DW_TAG_formal_parameter)
				continue;
			if (k++ >= DN_MAX_PARAMS) {
				put(o, ", ...");
				break;
			}
			art = dwarf_hasattr_integrate(&child, DW_AT_artificial);
			if (!dwarf_formref_die(dwarf_attr_integrate(&child, DW_AT_type, &a), &type))
				continue;
			if (art) {	/* this: only its constness shows */
				type_name(&(struct dn_out){ .buf = (char[8]){ 0 }, .len = 8 }, &type,
					  is_const);
				continue;
			}
			put(o, first ? "" : ", ");
			first = false;
			type_name(o, &type, NULL);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	put(o, ")");
}

/* The name of a scope around the function, or NULL (no part of the name:
 * lexical blocks, the unit). An unnamed class is "(anonymous class)"; the
 * caller names a lambda's. */
static const char *scope_part(Dwarf_Die *s)
{
	const char *name = dwarf_diename(s);

	switch (dwarf_tag(s)) {
	case DW_TAG_namespace:
		return name ? name : "(anonymous namespace)";
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return name ? name : "(anonymous class)";
	default:
		return NULL;
	}
}

/* An enclosing function's part: its demangled linkage name (qualified:
 * the whole prefix), or its name and parameters. */
static void function_part(struct dn_out *o, Dwarf_Die *fn)
{
	const char *ln = linkage(fn), *name;
	Dwarf_Die decl;
	bool c;
	char *dm;

	if (ln && (dm = cplus_demangle(ln, DMGL_PARAMS | DMGL_ANSI))) {
		put(o, dm);
		free(dm);
		return;
	}
	declaration(fn, &decl);
	name = dwarf_diename(&decl);
	put(o, name ? name : "(anonymous function)");
	params(o, &decl, &c);
	if (c)
		put(o, " const");
}

const char *st_die__cxx_name(Dwarf_Die *die, char *buf, size_t len)
{
	struct dn_out o = { .buf = buf, .len = len };
	Dwarf_Die decl, *scopes = NULL;
	const char *parts[DN_MAX_SCOPES], *name;
	Dwarf_Die *fns[DN_MAX_SCOPES];
	int nscopes, np = 0;
	bool c;

	if (!buf || len < 2 || linkage(die))
		return NULL;
	declaration(die, &decl);
	name = dwarf_diename(&decl);
	if (!name || !is_cxx(&decl))
		return NULL;
	buf[0] = '\0';
	nscopes = dwarf_getscopes_die(&decl, &scopes);
	/* scopes[0] is decl, the last the unit: the parts, innermost first,
	 * up to a function whose linkage name says all that is outside it */
	for (int i = 1; i < nscopes && np < DN_MAX_SCOPES; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram) {
			parts[np] = NULL;
			fns[np++] = &scopes[i];
			if (linkage(&scopes[i]))
				break;
		} else if ((parts[np] = scope_part(&scopes[i]))) {
			fns[np++] = NULL;
		}
	}
	if (!np) {	/* file scope: extern "C" or C-like, as peers print it */
		free(scopes);
		return NULL;
	}
	/* outermost first; a function's demangled linkage name holds all
	 * that is outside it (the loop above stopped there) */
	for (int i = np - 1; i >= 0; i--) {
		if (fns[i]) {
			function_part(&o, fns[i]);
		} else if (i == 0 && !dwarf_diename(&scopes[1]) && !strcmp(name, "operator()")) {
			/* g++'s lambda: an unnamed class whose call operator this
			 * is; the demangler's "{lambda(int)#1}" without the count */
			put(&o, "{lambda");
			params(&o, &decl, &c);
			put(&o, "}");
		} else {
			put(&o, parts[i]);
		}
		put(&o, "::");
	}
	put(&o, name);
	params(&o, &decl, &c);
	if (c)
		put(&o, " const");
	free(scopes);
	return buf;
}

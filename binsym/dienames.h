/* dienames.h - a C++ function's readable name built from its DWARF DIE
 * when it has no linkage name to demangle.
 *
 * Owner: binsym/dienames.c. g++ gives no DW_AT_linkage_name to a lambda's
 * operator() or to functions in an anonymous namespace, so an inline frame
 * of one was named by its bare DW_AT_name ("operator()", "quiet") where
 * every other frame of a C++ profile reads as its demangled linkage name
 * ("ledger::Book::accrue(double, int)"). The name is composed as the
 * demangler would print it: the enclosing scopes (namespaces, "(anonymous
 * namespace)", classes, enclosing functions with their parameters; the
 * scope chain from libdw's dwarf_getscopes_die()), the name, the parameter
 * types (the artificial `this` left out; " const" when it points to a
 * const class) — "ledger::(anonymous namespace)::quiet(unsigned int)",
 * "ledger::scan(double, int)::<lambda(int)>::operator()(int) const".
 * Type names are their DW_AT_name with pointer, reference and cv
 * qualifiers, not their scopes.
 *
 * Only for C++ compile units, and only for a function with a scope around
 * it or parameters: a C function (or an extern "C" one at file scope)
 * keeps its plain name, as every peer prints it. Bounded: scopes, type
 * chains and parameters each followed a fixed number of steps, no
 * recursion, the output cut at its buffer's size.
 */
#ifndef STACKTREE_BINSYM_DIENAMES_H
#define STACKTREE_BINSYM_DIENAMES_H

#include <stddef.h>
#include <elfutils/libdw.h>

/* The composed name of function DIE die (a DW_TAG_subprogram or
 * DW_TAG_inlined_subroutine; its abstract origin and specification are
 * followed) into buf (len bytes): buf, or NULL when it has a linkage name,
 * is not in a C++ unit, has no name, or nothing would be added to its
 * DW_AT_name. */
const char *st_die__cxx_name(Dwarf_Die *die, char *buf, size_t len);

#endif

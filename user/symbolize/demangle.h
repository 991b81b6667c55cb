/* demangle.h - C++ and Rust symbol names made readable, with libiberty's
 * demangler (the one binutils, gdb and perf use; Itanium C++, Rust legacy
 * and v0), remembered per name. Owner: user/symbolize/demangle.c. */
#ifndef STACKTREE_DEMANGLE_H
#define STACKTREE_DEMANGLE_H

#include <stddef.h>

struct st_demangler;

struct st_demangler *st_demangler__new(void);
void st_demangler__free(struct st_demangler *d);

/* The readable name of a mangled one ("_ZN3foo3barEv" -> "foo::bar()"),
 * owned by d until st_demangler__free(); NULL when name is not mangled (a
 * C name) or cannot be demangled. */
const char *st_demangler__name(struct st_demangler *d, const char *name);

#endif

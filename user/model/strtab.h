/* strtab.h - interned strings, shared with the symbolizer: equal strings
 * share one pointer, so tree nodes compare names by pointer. */
#ifndef STACKTREE_STRTAB_H
#define STACKTREE_STRTAB_H
#include "symbolizer/strtab.h"
#endif

/* lazyfns.c - liblazyfns.so: the 4096 functions of lazyfns.h, each a
 * symbol of its own for ld.so to look up at its first call. */
#include "lazyfns.h"

#define LAZY_DEF(n) unsigned long lazy_fn_##n(unsigned long x) { return x * 3 + 0##n; }
LAZY4096(LAZY_DEF)

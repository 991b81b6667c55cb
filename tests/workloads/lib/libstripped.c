/* libstripped.c - a library shipped without its symbol table (built, then
 * strip --strip-all): stripped_spin is exported (.dynsym keeps it), the
 * static hidden_spin where the time goes has no symbol left (issue 11,
 * item 7: unresolved frames counted per module). */
#include "../workload.h"

static __attribute__((noinline)) void hidden_spin(double s) { WL_SPIN_BODY(s); }

__attribute__((noinline)) void stripped_spin(double s) { hidden_spin(s); }

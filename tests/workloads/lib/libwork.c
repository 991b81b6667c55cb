/* libwork.c - a shared library function for the attribution test. */
#include "../workload.h"

__attribute__((noinline)) void lib_spin(double s) { WL_SPIN_BODY(s); }

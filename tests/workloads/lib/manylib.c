/* manylib.c - one of the many tiny libraries manylibs.c dlopen()s (the
 * Makefile links this object into build/workloads/manylibs.d/libmany<i>.so,
 * each with a build id of its own); built without frame pointers, so that
 * only CFI gets a walk from here back to main. */
#include "../workload.h"

#define NOIPA __attribute__((noipa))

NOIPA void many_leaf(double s) { WL_SPIN_BODY(s); }

NOIPA void many_work(double s)
{
	many_leaf(s);
	wl_sink++;
}

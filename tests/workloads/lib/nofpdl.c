/* nofpdl.c - libnofpdl.so, dlopen()ed by nofp.c after it started; built
 * without frame pointers. */
#include "../workload.h"

#define NOIPA __attribute__((noipa))

NOIPA void dl_leaf(double s) { WL_SPIN_BODY(s); }

NOIPA void dl_work(double s)
{
	dl_leaf(s);
	wl_sink++;
}

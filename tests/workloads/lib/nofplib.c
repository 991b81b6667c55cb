/* nofplib.c - libnofp.so for nofp.c, built without frame pointers. */
#include "../workload.h"

#define NOIPA __attribute__((noipa))

NOIPA void lib_leaf(double s) { WL_SPIN_BODY(s); }

NOIPA void lib_inner(double s)
{
	volatile char pad[256];

	pad[0] = 1;
	lib_leaf(s);
	wl_sink += (unsigned long)pad[0];
}

NOIPA void lib_outer(double s)
{
	lib_inner(s);
	wl_sink++;
}

NOIPA void lib_apply(void (*fn)(double), double s)
{
	fn(s);
	wl_sink++;
}

NOIPA unsigned long lib_tiny(unsigned long x)
{
	return x * 2654435761u + 1;
}

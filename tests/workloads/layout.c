/* layout.c - one program for two linkers (issue 20): extra.mk builds it
 * with clang-14 -O2 -fomit-frame-pointer, linked by GNU ld (layout) and by
 * lld (layout_lld, whose executable segment's address is a page above its
 * file offset); only CFI unwinds either. Each phase spins its share of CPU
 * time under a chain of calls and reports it:
 *   main -> run -> phase_short -> spin   0.4 s
 *   main -> run -> phase_long  -> spin   0.8 s */
#include "workload.h"

__attribute__((noinline)) void spin(double seconds)
{
	WL_SPIN_BODY(seconds);
}

__attribute__((noinline)) void phase_short(double s)
{
	double t0 = wl_cpu_now();

	spin(0.4 * s);
	wl_report("phase_short", wl_cpu_now() - t0);
}

__attribute__((noinline)) void phase_long(double s)
{
	double t0 = wl_cpu_now();

	spin(0.8 * s);
	wl_report("phase_long", wl_cpu_now() - t0);
}

__attribute__((noinline)) void run(double s)
{
	phase_short(s);
	phase_long(s);
}

int main(void)
{
	wl_wait_start();
	run(wl_scale());
	return 0;
}

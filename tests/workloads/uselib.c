/* uselib.c - half of the time in libwork.so's lib_spin, half in local_spin. */
#include "workload.h"

void lib_spin(double s);

__attribute__((noinline)) void local_spin(double s) { WL_SPIN_BODY(s); }

int main(void)
{
	double k = wl_scale(), t;

	t = wl_cpu_now();
	lib_spin(0.6 * k);
	wl_report("lib_spin", wl_cpu_now() - t);
	t = wl_cpu_now();
	local_spin(0.6 * k);
	wl_report("local_spin", wl_cpu_now() - t);
	return 0;
}

/* stripped.c - 0.6 s in libstripped.so (a stripped library: its frames
 * have no symbol), 0.4 s in local_spin (named). See lib/libstripped.c. */
#include "workload.h"

void stripped_spin(double s);

__attribute__((noinline)) void local_spin(double s) { WL_SPIN_BODY(s); }

int main(void)
{
	double k = wl_scale(), t;

	t = wl_cpu_now();
	stripped_spin(0.6 * k);
	wl_report("stripped_spin", wl_cpu_now() - t);
	t = wl_cpu_now();
	local_spin(0.4 * k);
	wl_report("local_spin", wl_cpu_now() - t);
	return 0;
}

/* phases.c - three phases with a known call structure and known CPU time:
 *   main -> phase_a -> work_a                      (1.2 s)
 *   main -> phase_b -> helper -> work_b            (0.6 s)
 *   main -> phase_c -> work_c1 / work_c2            (0.45 s + 0.75 s)
 * Each phase's real CPU time is reported (see workload.h); WL_START_FILE
 * and WL_END_FILE hold it before and after the work. WL_PHASES="A,B,C"
 * multiplies each phase's time (a second run whose phases moved, for
 * `stacktree diff`; default 1,1,1). */
#include "workload.h"

__attribute__((noinline)) void work_a(double s) { WL_SPIN_BODY(s); }
__attribute__((noinline)) void work_b(double s) { WL_SPIN_BODY(s); }
__attribute__((noinline)) void work_c1(double s) { WL_SPIN_BODY(s); }
__attribute__((noinline)) void work_c2(double s) { WL_SPIN_BODY(s); }
__attribute__((noinline)) void helper(double s) { work_b(s); }

__attribute__((noinline)) void phase_a(double k) { work_a(1.2 * k); }
__attribute__((noinline)) void phase_b(double k) { helper(0.6 * k); }
__attribute__((noinline)) void phase_c(double k)
{
	work_c1(0.45 * k);
	work_c2(0.75 * k);
}

int main(void)
{
	double k = wl_scale(), t, m[3] = { 1, 1, 1 };
	const char *phases = getenv("WL_PHASES");

	if (phases && sscanf(phases, "%lf,%lf,%lf", &m[0], &m[1], &m[2]) != 3)
		m[0] = m[1] = m[2] = 1;
	wl_wait_start();
	t = wl_cpu_now();
	phase_a(k * m[0]);
	wl_report("phase_a", wl_cpu_now() - t);
	t = wl_cpu_now();
	phase_b(k * m[1]);
	wl_report("phase_b", wl_cpu_now() - t);
	t = wl_cpu_now();
	phase_c(k * m[2]);
	wl_report("phase_c", wl_cpu_now() - t);
	wl_wait_end();
	return 0;
}

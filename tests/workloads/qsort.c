/* qsort.c - a frame-pointer program (the Makefile's workload flags) that
 * spends most of its time in libc's qsort, which has no frame pointers,
 * calling back its comparator:
 *   main -> phase_sort -> qsort (libc: msort_with_tmp, recursive) -> compare
 *           -> mix                                                   1.2 s
 *   main -> phase_scan -> scan                                       0.6 s
 * With frame pointers only, samples in compare lose main (the walk stops in
 * libc); DWARF unwinding finds it. Each phase reports its CPU time; the
 * comparator does enough work per call that its prologue and epilogue are a
 * small part of it. Also built without CFI as qsort_nocfi (extra.mk): then
 * --unwind auto must mix frame pointers (this program) and CFI (libc). */
#include "workload.h"

#define N 20000

static unsigned keys[N];

__attribute__((noinline)) unsigned mix(unsigned x)
{
	for (int i = 0; i < 24; i++)
		x = x * 2654435761u + (x >> 13);
	return x;
}

__attribute__((noinline)) int compare(const void *a, const void *b)
{
	unsigned x = mix(*(const unsigned *)a), y = mix(*(const unsigned *)b);

	return x < y ? -1 : x > y;
}

__attribute__((noinline)) void phase_sort(double k)
{
	double end = wl_cpu_now() + 1.2 * k;
	unsigned seed = 1;

	do {
		for (int i = 0; i < N; i++)
			keys[i] = seed = seed * 1103515245u + 12345u;
		qsort(keys, N, sizeof(keys[0]), compare);
		wl_sink += keys[N / 2];
	} while (wl_cpu_now() < end);
}

__attribute__((noinline)) void scan(double s) { WL_SPIN_BODY(s); }

__attribute__((noinline)) void phase_scan(double k) { scan(0.6 * k); }

int main(void)
{
	double k = wl_scale(), t;

	wl_wait_start();
	t = wl_cpu_now();
	phase_sort(k);
	wl_report("phase_sort", wl_cpu_now() - t);
	t = wl_cpu_now();
	phase_scan(k);
	wl_report("phase_scan", wl_cpu_now() - t);
	return 0;
}

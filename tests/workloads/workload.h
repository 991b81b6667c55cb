/* workload.h - helpers for the bundled workloads: CPU-time spinning in a
 * named function, and a report of how long each phase really took. */
#ifndef STACKTREE_WORKLOAD_H
#define STACKTREE_WORKLOAD_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long wl_sink;

static inline double wl_cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Burn `seconds` of this thread's CPU time; the clock is read rarely so that
 * nearly every sample lands in the calling spin loop. Returns CPU seconds. */
#define WL_SPIN_BODY(seconds)                                                  \
	do {                                                                   \
		double wl_end = wl_cpu_now() + (seconds);                      \
		do {                                                           \
			for (unsigned long wl_i = 0; wl_i < 400000; wl_i++)    \
				wl_sink += wl_i ^ (wl_sink >> 3);              \
		} while (wl_cpu_now() < wl_end);                               \
	} while (0)

/* Scale factor for all durations: WL_SCALE=0.5 halves them. */
static inline double wl_scale(void)
{
	const char *s = getenv("WL_SCALE");
	double v = s ? atof(s) : 1.0;

	return v > 0 ? v : 1.0;
}

/* With WL_START_FILE set, sleep until that file exists, so that a test can
 * attach its profilers to a process that has not started its work yet. */
static inline void wl_wait_start(void)
{
	const char *path = getenv("WL_START_FILE");

	while (path && access(path, F_OK) != 0)
		usleep(2000);
}

/* With WL_END_FILE set, sleep until that file exists before exiting, so
 * that a profiler which symbolizes only while the process lives (bpftrace)
 * can print its stacks. */
static inline void wl_wait_end(void)
{
	const char *path = getenv("WL_END_FILE");

	while (path && access(path, F_OK) != 0)
		usleep(2000);
}

/* "phase NAME CPU_SECONDS" lines on the file named by WL_REPORT (or stderr). */
static inline void wl_report(const char *name, double cpu_s)
{
	const char *path = getenv("WL_REPORT");
	FILE *f = path ? fopen(path, "a") : stderr;

	if (!f)
		return;
	fprintf(f, "phase %s %.6f\n", name, cpu_s);
	if (f != stderr)
		fclose(f);
}

#endif

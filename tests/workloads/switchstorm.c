/* switchstorm.c - a context-switch storm: two threads ping-pong one byte
 * through two pipes, N round trips (argv[1], default 200000), each one two
 * switches off the CPU and two back. Prints "storm SECONDS SWITCHES_PER_S"
 * (CLOCK_MONOTONIC, the ping-pong alone) on WL_REPORT or stderr: the
 * bench's measure of what an off-CPU profiler costs (bench/bench.py).
 * WL_START_FILE as in workload.h. */
#include <pthread.h>

#include "workload.h"

static int ping[2], pong[2];
static long rounds = 200000;

static void *ponger(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			abort();
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	pthread_t t;
	double s;
	char c = 'x';

	if (argc > 1)
		rounds = atol(argv[1]);
	if (rounds <= 0 || pipe(ping) || pipe(pong))
		return 1;
	wl_wait_start();
	if (pthread_create(&t, NULL, ponger, NULL))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < rounds; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			abort();
	clock_gettime(CLOCK_MONOTONIC, &b);
	pthread_join(t, NULL);
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	{
		const char *path = getenv("WL_REPORT");
		FILE *f = path ? fopen(path, "a") : stderr;

		if (!f)
			return 1;
		fprintf(f, "storm %.6f %.0f\n", s, 4.0 * (double)rounds / s);
		if (f != stderr)
			fclose(f);
	}
	return 0;
}

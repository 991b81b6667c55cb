/* bench_cpu.c - the benchmark workload (`make bench`): a fixed amount of
 * *work* (not of time, unlike deep.c), so that a profiler's cost shows up as
 * a longer run. Each iteration descends ~35 frames along one of 8 paths
 * (three level functions chosen by the path's bits, two leaf functions) and
 * does a short computation at the bottom, so consecutive samples of a thread
 * see different stacks, as in real programs. Prints nothing.
 * Usage: bench_cpu [ITERATIONS]   (default 1200000, ~2.5 s on a 2020s x86 core;
 * WL_SCALE multiplies it) */
#include "workload.h"

#define DEPTH 15		/* 2 frames a level: ~35-frame stacks */
#define LEAF_LOOP 1500

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long leaf_mix(unsigned long x)
{
	for (int i = 0; i < LEAF_LOOP; i++)
		x = x * 6364136223846793005UL + (x >> 29) + (unsigned long)i;
	return x;
}

__attribute__((noinline)) unsigned long leaf_hash(unsigned long x)
{
	for (int i = 0; i < LEAF_LOOP; i++)
		x ^= (x << 13) ^ (x >> 7) ^ ((unsigned long)i << 17);
	return x;
}

unsigned long level_a(int depth, unsigned path, unsigned long x);
unsigned long level_b(int depth, unsigned path, unsigned long x);
unsigned long level_c(int depth, unsigned path, unsigned long x);

/* picks the next level from the path's bits: 8 paths, distinct frames */
__attribute__((noinline)) static unsigned long next(int depth, unsigned path, unsigned long x)
{
	if (depth <= 0)
		return path & 4 ? leaf_hash(x) : leaf_mix(x);
	switch ((path >> (depth % 3)) % 3) {
	case 0:
		return level_a(depth - 1, path, x) + 1;
	case 1:
		return level_b(depth - 1, path, x) + 2;
	default:
		return level_c(depth - 1, path, x) + 3;
	}
}

__attribute__((noinline)) unsigned long level_a(int depth, unsigned path, unsigned long x)
{
	return next(depth, path, x ^ 0x9e37) + 1;
}

__attribute__((noinline)) unsigned long level_b(int depth, unsigned path, unsigned long x)
{
	return next(depth, path, x + 0x7f4a) + 1;
}

__attribute__((noinline)) unsigned long level_c(int depth, unsigned path, unsigned long x)
{
	return next(depth, path, x * 3) + 1;
}

int main(int argc, char **argv)
{
	long iters = (long)((argc > 1 ? atof(argv[1]) : 1200000) * wl_scale());
	unsigned long x = 1;

	wl_wait_start();
	for (long i = 0; i < iters; i++)
		x = level_a(DEPTH, (unsigned)(i % 8), x);
	sink = x;
	return 0;
}

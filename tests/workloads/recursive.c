/* recursive.c - recursion at known depths, for the arcflow integration test.
 *
 *   rec_self(n):  spin; rec_self(n - 1)             levels 1..SELF_DEPTH
 *   rec_ping(n):  spin; rec_pong(n - 1)              mutual recursion,
 *   rec_pong(n):  spin; rec_ping(n - 1)              levels 1..PING_DEPTH
 *
 * Every level does the same work (rec_spin), so in a profile:
 *   rec_self CUM_ALL / CUM = (SELF_DEPTH + 1) / 2 = 5.5
 *   rec_ping CUM_ALL / CUM = mean of ceil(j / 2), j = 1..PING_DEPTH = 2.5
 * Half the time goes to each chain. Usage: recursive [SECONDS] (default 2 s
 * of CPU, times WL_SCALE); reports "phase recursive CPU_SECONDS" (workload.h).
 * Built with frame pointers and without inlining (see the Makefile).
 */
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

#define SELF_DEPTH 10
#define PING_DEPTH 8
#define SPIN_ITERS 20000UL

#if defined(__GNUC__) && !defined(__clang__)
#define NOCLONE __attribute__((noinline, noipa))
#else
#define NOCLONE __attribute__((noinline))
#endif

NOCLONE unsigned long rec_spin(unsigned long seed);
NOCLONE unsigned long rec_self(int n, unsigned long acc);
NOCLONE unsigned long rec_ping(int n, unsigned long acc);
NOCLONE unsigned long rec_pong(int n, unsigned long acc);

NOCLONE unsigned long rec_spin(unsigned long seed)
{
	/* a volatile local keeps a stack frame: GCC 12 sets up no frame pointer
	 * in a frameless leaf despite -mno-omit-leaf-frame-pointer, and the
	 * unwinder would then lose the caller */
	volatile unsigned long x = seed | 1;

	for (unsigned long i = 0; i < SPIN_ITERS; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	wl_sink = x;
	return x;
}

NOCLONE unsigned long rec_self(int n, unsigned long acc)
{
	acc += rec_spin(acc);
	if (n > 1)
		acc ^= rec_self(n - 1, acc) * 3;	/* not a tail call */
	return acc;
}

NOCLONE unsigned long rec_pong(int n, unsigned long acc)
{
	acc += rec_spin(acc);
	if (n > 1)
		acc ^= rec_ping(n - 1, acc) * 5;
	return acc;
}

NOCLONE unsigned long rec_ping(int n, unsigned long acc)
{
	acc += rec_spin(acc);
	if (n > 1)
		acc ^= rec_pong(n - 1, acc) * 7;
	return acc;
}

int main(int argc, char **argv)
{
	double seconds = (argc > 1 ? atof(argv[1]) : 2.0) * wl_scale(), start, end;
	unsigned long acc = 1, rounds = 0;

	if (seconds <= 0 || seconds > 3600) {
		fprintf(stderr, "usage: recursive [SECONDS]\n");
		return 2;
	}
	start = wl_cpu_now();
	end = start + seconds;
	/* the same number of levels of each chain per round keeps the halves equal */
	while (wl_cpu_now() < end) {
		for (int i = 0; i < PING_DEPTH; i++)
			acc = rec_self(SELF_DEPTH, acc);
		for (int i = 0; i < SELF_DEPTH; i++)
			acc = rec_ping(PING_DEPTH, acc);
		rounds++;
	}
	wl_report("recursive", wl_cpu_now() - start);
	printf("recursive: %lu rounds, checksum %lx\n", rounds, acc);
	return 0;
}

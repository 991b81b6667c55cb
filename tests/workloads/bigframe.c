/* bigframe.c - a frame with untouched pages inside it: big() holds a
 * 12 KiB buffer of which it writes only the lowest byte, so that the two
 * pages in its middle are never touched (not there: a stack copy reads
 * holes), in a thread of its own (a fresh stack: no page touched before),
 * and spins in its callee spin_leaf(). As HotSpot's Threads::create_vm in
 * Temurin 25 (8.5 KiB, built without stack-clash probes). A stack copy
 * that ends at the first page not there cuts every sample at big().
 * Usage: bigframe [SECONDS]   (default 2; WL_SCALE multiplies it) */
#include <pthread.h>

#include "workload.h"

#define BIG 12288

__attribute__((noinline)) void spin_leaf(double seconds)
{
	WL_SPIN_BODY(seconds);
}

__attribute__((noinline)) void big(double seconds)
{
	volatile char buf[BIG];

	buf[0] = 1;	/* the lowest page only */
	spin_leaf(seconds);
	buf[0]++;
}

__attribute__((noinline)) void *thread_main(void *arg)
{
	big(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = (argc > 1 ? atof(argv[1]) : 2.0) * wl_scale();
	pthread_t t;

	if (pthread_create(&t, NULL, thread_main, &seconds))
		return 1;
	pthread_join(t, NULL);
	return 0;
}

/* deep.c - CPU work at the bottom of ~35-frame stacks, along a few distinct
 * paths (the benchmark workload: "~35-frame stacks"). Usage: deep [SECONDS]
 * (WL_START_FILE: its work starts once that file exists) */
#include "workload.h"

__attribute__((noinline)) void leaf_work(double s) { WL_SPIN_BODY(s); }

__attribute__((noinline)) void descend(int depth, int path, double s)
{
	volatile int pad = depth; /* keeps a real frame */

	if (depth <= 0)
		leaf_work(s);
	else if ((depth + path) % 7 == 0)
		descend(depth - 1, path, s); /* call site 1 */
	else
		descend(depth - 1, path, s); /* call site 2 */
	(void)pad;
}

int main(int argc, char **argv)
{
	double total = (argc > 1 ? atof(argv[1]) : 3.0) * wl_scale();

	wl_wait_start();

	for (int round = 0; round < 50; round++)
		descend(32, round % 4, total / 50);
	return 0;
}

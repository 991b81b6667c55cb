/* deeprec.c - CPU work at the bottom of one C recursion DEPTH frames deep
 * (stacks deeper than the kernel's frame-pointer walk, issue 35 item 2).
 * Built three ways: as every workload, and -O2 with and without frame
 * pointers (tests/workloads/extra.mk: deeprec_o2, deeprec_o2_nofp).
 * At the bottom: CPU work (spin), sleeps (sleep: off-CPU time) or page
 * faults on fresh anonymous pages (fault).
 * Usage: deeprec [DEPTH [SECONDS [spin|sleep|fault]]] */
#include <string.h>
#include <sys/mman.h>

#include "workload.h"

static volatile int wl_depth_seen;
static int leaf_mode;	/* 0 spin, 1 sleep, 2 fault */

static void leaf_sleep(double s)
{
	for (double t = 0; t < s; t += 0.002)
		usleep(2000);
}

static void leaf_fault(double s)
{
	double end = wl_cpu_now() + s;

	while (wl_cpu_now() < end) {
		size_t len = 4 << 20;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return;
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		munmap(p, len);
	}
}

__attribute__((noinline)) void deep_leaf(double s)
{
	if (leaf_mode == 1)
		leaf_sleep(s);
	else if (leaf_mode == 2)
		leaf_fault(s);
	else
		WL_SPIN_BODY(s);
}

/* Not a tail call (the sum after it), not inlined into itself: one real
 * frame a level at any optimization level. */
__attribute__((noinline)) int deep_rec(int depth, double s)
{
	volatile int pad = depth;
	int r;

	if (depth <= 1) {
		deep_leaf(s);
		return 1;
	}
	r = deep_rec(depth - 1, s);
	wl_depth_seen = pad;
	return r + pad;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 300;
	double total = (argc > 2 ? atof(argv[2]) : 3.0) * wl_scale();
	double t0;

	if (argc > 3)
		leaf_mode = !strcmp(argv[3], "sleep") ? 1 : !strcmp(argv[3], "fault") ? 2 : 0;
	wl_wait_start();
	t0 = wl_cpu_now();
	/* a few rounds: each starts the recursion again from main */
	for (int round = 0; round < 10; round++)
		deep_rec(depth, total / 10);
	wl_report("deep_rec", wl_cpu_now() - t0);
	wl_wait_end();
	return 0;
}

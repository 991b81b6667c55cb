/* shortlived.c - runs briefly in two named functions and exits:
 * short_outer -> short_inner for ~0.6 s of CPU (argv[1] overrides). */
#include "workload.h"

__attribute__((noinline)) void short_inner(double s) { WL_SPIN_BODY(s); }
__attribute__((noinline)) void short_outer(double s) { short_inner(s); }

int main(int argc, char **argv)
{
	short_outer(argc > 1 ? atof(argv[1]) : 0.6);
	return 0;
}

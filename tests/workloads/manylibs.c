/* manylibs.c - a process with many executable mappings (issue 23, item 5):
 * `manylibs N SECONDS` dlopen()s N tiny libraries (libmany0.so ..
 * libmany<N-1>.so beside it, in manylibs.d/; built without frame pointers)
 * and spends SECONDS of CPU time in them, an equal share in each, every
 * call from main. Real programs reach 300-400 libraries. */
#include <dlfcn.h>
#include <limits.h>
#include <string.h>

#include "workload.h"

#define NOIPA __attribute__((noipa))
#define MAX_LIBS 20000

typedef void (*work_fn)(double);
static work_fn fns[MAX_LIBS];

NOIPA static void run_round(int n, double each)
{
	for (int i = 0; i < n; i++)
		fns[i](each);
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	int n = argc > 1 ? atoi(argv[1]) : 400;
	double secs = (argc > 2 ? atof(argv[2]) : 2.0) * wl_scale(), end;
	ssize_t len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	char *slash;

	if (n < 1 || n > MAX_LIBS || len <= 0) {
		fprintf(stderr, "usage: manylibs N(1..%d) SECONDS\n", MAX_LIBS);
		return 2;
	}
	dir[len] = '\0';
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	for (int i = 0; i < n; i++) {
		void *h;

		snprintf(path, sizeof(path), "%s/manylibs.d/libmany%d.so", dir, i);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h || !(fns[i] = (work_fn)dlsym(h, "many_work"))) {
			fprintf(stderr, "manylibs: %s: %s\n", path, dlerror());
			return 1;
		}
	}
	/* rounds over every library (a spin is at least ~0.5 ms of CPU) */
	end = wl_cpu_now() + secs;
	while (wl_cpu_now() < end)
		run_round(n, 0.01 / n);
	return 0;
}

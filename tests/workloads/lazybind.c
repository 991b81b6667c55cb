/* lazybind.c - `lazybind SECONDS`: lazily bound first calls, many of them
 * (issue 35, item 5). Until SECONDS of CPU time are spent, dlopen()s
 * liblazycall.so (beside it; it needs liblazyfns.so), calls its lazy_run()
 * (4096 calls through the PLT, each a first one: ld.so's resolver binds
 * it) and dlclose()s it. A sample in the resolver or below it (_dl_fixup,
 * the symbol lookup) unwinds through the resolver, whose CFA is rbx-based,
 * to main. Run with LD_BIND_NOW unset or empty. */
#include <dlfcn.h>
#include <limits.h>
#include <string.h>

#include "workload.h"

#define NOIPA __attribute__((noipa))

typedef unsigned long (*run_fn)(unsigned long);

NOIPA static unsigned long one_round(const char *path, unsigned long x)
{
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	run_fn run;

	if (!h || !(run = (run_fn)dlsym(h, "lazy_run"))) {
		fprintf(stderr, "lazybind: %s: %s\n", path, dlerror());
		exit(1);
	}
	x = run(x);
	dlclose(h);
	return x;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	double secs = (argc > 1 ? atof(argv[1]) : 2.0) * wl_scale(), end;
	ssize_t len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	unsigned long x = 1, rounds = 0;
	char *slash, *bind_now;

	bind_now = getenv("LD_BIND_NOW");
	if (len <= 0 || (bind_now && *bind_now)) {
		fprintf(stderr, "lazybind: needs /proc/self/exe and LD_BIND_NOW unset or empty\n");
		return 2;
	}
	dir[len] = '\0';
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/liblazycall.so", dir);
	end = wl_cpu_now() + secs;
	while (wl_cpu_now() < end) {
		x = one_round(path, x);
		rounds++;
	}
	wl_sink = x;
	printf("%lu rounds\n", rounds);
	return 0;
}

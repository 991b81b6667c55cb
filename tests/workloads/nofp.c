/* nofp.c - DWARF unwinding workload, built WITHOUT frame pointers
 * (-O2 -fomit-frame-pointer, tests/workloads/extra.mk), like most
 * distribution code. Its callers can only be found from the CFI. Each phase
 * reports its CPU time (workload.h); the call chains and frame kinds:
 *   main -> phase_exe -> exe_outer (VLA: rbp-based CFA) -> exe_mid (2 KiB frame,
 *           callee-saved registers) -> exe_leaf                          0.5 s
 *   main -> phase_recurse -> recurse x 40 (WL_DEPTH) -> recurse_leaf     0.4 s
 *   main -> phase_lib -> lib_outer -> lib_inner -> lib_leaf (libnofp.so) 0.5 s
 *   main -> phase_callback -> lib_apply (libnofp.so) -> exe_callback    0.3 s
 *   main -> phase_plt -> lib_tiny through the PLT                       0.3 s
 *   main -> phase_aligned -> aligned_outer (VLA: rbp-based CFA) ->
 *           aligned_work (stack realigned: DW_OP_deref CFA, rbp at [rbp]) 0.3 s
 *   main -> phase_signal -> raise(SIGUSR1) => on_usr1 -> handler_work   0.3 s
 *           (signal frame: the kernel's sigreturn trampoline in libc)
 *   main -> phase_vdso -> clock_gettime(CLOCK_MONOTONIC) in the vDSO    0.3 s
 *   main -> phase_dlopen -> dlopen(libnofpdl.so) -> dl_work             0.3 s
 *           (a library mapped after the process started)
 * No function is inlined or turned into a tail call (noipa, work after
 * each call), so every frame is on the stack. WL_SCALE scales all. */
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

#define NOIPA __attribute__((noipa))

void lib_outer(double s);
void lib_apply(void (*fn)(double), double s);
unsigned long lib_tiny(unsigned long x);

static volatile double handler_seconds;

NOIPA void exe_leaf(double s) { WL_SPIN_BODY(s); }

NOIPA void exe_mid(double s, char *buf, int n)
{
	volatile char local[2048];

	for (int i = 0; i < (int)sizeof(local); i += 64)
		local[i] = buf[i % n];
	exe_leaf(s);
	buf[0] = local[64];
}

NOIPA void exe_outer(double s, int n)
{
	char vla[n];	/* a variable-length array: the CFA is rbp-based */

	memset(vla, 1, (size_t)n);
	exe_mid(s, vla, n);
	wl_sink += (unsigned long)vla[0];
}

NOIPA void phase_exe(double k) { exe_outer(0.5 * k, 96); wl_sink++; }

NOIPA void recurse_leaf(double s) { WL_SPIN_BODY(s); }

NOIPA void recurse(int depth, double s)
{
	if (depth > 0)
		recurse(depth - 1, s);
	else
		recurse_leaf(s);
	wl_sink += (unsigned long)depth;
}

NOIPA void phase_recurse(double k)
{
	const char *d = getenv("WL_DEPTH");	/* the depth-limit test: > 768 */

	recurse(d ? atoi(d) : 40, 0.4 * k);
	wl_sink++;
}

NOIPA void phase_lib(double k) { lib_outer(0.5 * k); wl_sink++; }

NOIPA void exe_callback(double s) { WL_SPIN_BODY(s); }

NOIPA void phase_callback(double k) { lib_apply(exe_callback, 0.3 * k); wl_sink++; }

NOIPA void phase_plt(double k)
{
	double end = wl_cpu_now() + 0.3 * k;
	unsigned long x = 1;

	do {
		for (int i = 0; i < 1000000; i++)
			x = lib_tiny(x);	/* a call through the PLT */
	} while (wl_cpu_now() < end);
	wl_sink += x;
}

NOIPA void aligned_work(double s, int n)
{
	/* a 64-byte aligned block next to a VLA: gcc realigns the stack through
	 * a DRAP register (CFA = r10, then CFA = *(rbp - 8)) */
	volatile char block[256] __attribute__((aligned(64)));
	char vla[n];

	memset(vla, 1, (size_t)n);
	block[0] = 1;
	WL_SPIN_BODY(s);
	wl_sink += (unsigned long)block[0] + (unsigned long)vla[n - 1];
}

NOIPA void aligned_outer(double s, int n)
{
	char vla[n];	/* rbp-based CFA: needs the rbp aligned_work saved at [rbp] */

	memset(vla, 2, (size_t)n);
	aligned_work(s, n);
	wl_sink += (unsigned long)vla[0];
}

NOIPA void phase_aligned(double k) { aligned_outer(0.3 * k, 40); wl_sink++; }

NOIPA void handler_work(double s) { WL_SPIN_BODY(s); }

static void on_usr1(int sig)
{
	handler_work(handler_seconds);
	wl_sink += (unsigned long)sig;
}

NOIPA void phase_signal(double k)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigaction(SIGUSR1, &sa, NULL);
	handler_seconds = 0.3 * k;
	raise(SIGUSR1);	/* the handler runs on return from the kill syscall */
	wl_sink++;
}

NOIPA void phase_vdso(double k)
{
	double end = wl_cpu_now() + 0.3 * k;
	struct timespec ts;

	do {
		for (int i = 0; i < 20000; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			wl_sink += (unsigned long)ts.tv_nsec;
		}
	} while (wl_cpu_now() < end);
}

NOIPA void phase_dlopen(double k)
{
	char path[PATH_MAX], *slash;
	void (*dl_work)(double);
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	void *h;

	if (n <= 0)
		exit(2);
	path[n] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash + 1, "libnofpdl.so");
	h = dlopen(path, RTLD_NOW);
	if (!h || !(dl_work = (void (*)(double))dlsym(h, "dl_work"))) {
		fprintf(stderr, "nofp: %s\n", dlerror());
		exit(2);
	}
	dl_work(0.3 * k);
	wl_sink++;
}

#define PHASE(fn)                                                              \
	do {                                                                   \
		double t0 = wl_cpu_now();                                      \
		fn(k);                                                         \
		wl_report(#fn, wl_cpu_now() - t0);                             \
	} while (0)

int main(void)
{
	double k = wl_scale();

	wl_wait_start();
	PHASE(phase_exe);
	PHASE(phase_recurse);
	PHASE(phase_lib);
	PHASE(phase_callback);
	PHASE(phase_plt);
	PHASE(phase_aligned);
	PHASE(phase_signal);
	PHASE(phase_vdso);
	PHASE(phase_dlopen);
	return 0;
}

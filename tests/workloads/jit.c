/* jit.c - a tiny JIT: x86-64 code written into anonymous executable memory,
 * named in /tmp/perf-PID.map as perf's JIT interface has it (issue 11,
 * item 5), with known CPU time per function:
 *   main -> jit_hot_loop                     (spins in JIT code, 0.9 s)
 *   main -> jit_cold_loop -> cold_work       (JIT code calling C, 0.3 s)
 *   main -> (unnamed JIT code)               (no map entry, 0.2 s)
 * The map's first line, "stale_entry", covers the first two functions and
 * is overridden by the later lines (the later entry wins). The map file is
 * removed at exit, so that the names must have been read while the process
 * lived. WL_JIT_MAP=symlink writes the map through a symbolic link (to
 * /tmp/perf-PID.map.target), WL_JIT_MAP=foreign chowns it to nobody
 * (65534, needs root): both must be refused by the profiler. Each phase's
 * CPU time is reported (workload.h). x86-64 only. */
#include "workload.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

typedef void (*hot_fn)(unsigned long n);
typedef void (*cold_fn)(unsigned long n, void (*fn)(void));

/* push rbp; mov rbp,rsp; 1: dec rdi; jnz 1b; pop rbp; ret */
static const unsigned char hot_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0x5d, 0xc3,
};

/* push rbp; mov rbp,rsp; push rbx; push r12; mov rbx,rdi; mov r12,rsi;
 * 1: call *r12; dec rbx; jnz 1b; pop r12; pop rbx; pop rbp; ret */
static const unsigned char cold_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x53, 0x41, 0x54, 0x48, 0x89, 0xfb, 0x49, 0x89, 0xf4,
	0x41, 0xff, 0xd4, 0x48, 0xff, 0xcb, 0x75, 0xf8, 0x41, 0x5c, 0x5b, 0x5d, 0xc3,
};

#define HOT_OFF 0x0
#define COLD_OFF 0x100
#define ANON_OFF 0x800	/* outside every map entry */
#define FN_SIZE 0x80

__attribute__((noinline)) void cold_tick(void)
{
	wl_sink++;
}

/* not a leaf (it calls cold_tick), so gcc gives it a frame pointer and
 * --unwind fp finds jit_cold_loop above it too */
__attribute__((noinline)) void cold_work(void)
{
	for (unsigned long i = 0; i < 20000; i++)
		wl_sink += i ^ (wl_sink >> 3);
	cold_tick();
}

static int write_map(const char *path, unsigned char *code)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	/* perf's format: START SIZE NAME, hex without 0x */
	fprintf(f, "%lx %x stale_entry\n", (unsigned long)(code + HOT_OFF), COLD_OFF + FN_SIZE);
	fprintf(f, "%lx %x jit_hot_loop\n", (unsigned long)(code + HOT_OFF), FN_SIZE);
	fprintf(f, "%lx %x jit_cold_loop\n", (unsigned long)(code + COLD_OFF), FN_SIZE);
	return fclose(f) ? -errno : 0;
}

int main(void)
{
	const char *mode = getenv("WL_JIT_MAP");
	double k = wl_scale(), t, end;
	char map[64], target[80];
	unsigned char *code;
	hot_fn hot, anon;
	cold_fn cold;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jit: mmap");
		return 1;
	}
	memcpy(code + HOT_OFF, hot_code, sizeof(hot_code));
	memcpy(code + COLD_OFF, cold_code, sizeof(cold_code));
	memcpy(code + ANON_OFF, hot_code, sizeof(hot_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("jit: mprotect");
		return 1;
	}
	hot = (hot_fn)(void *)(code + HOT_OFF);
	cold = (cold_fn)(void *)(code + COLD_OFF);
	anon = (hot_fn)(void *)(code + ANON_OFF);

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	snprintf(target, sizeof(target), "%s.target", map);
	if (mode && strcmp(mode, "symlink") == 0) {
		if (write_map(target, code) || symlink(target, map)) {
			perror("jit: the map through a symlink");
			return 1;
		}
	} else if (mode && strcmp(mode, "foreign") == 0) {
		/* another user's file from the start: written and given away
		 * under another name, then renamed into place */
		if (write_map(target, code) || chown(target, 65534, 65534) || rename(target, map)) {
			perror("jit: the foreign map file");
			return 1;
		}
	} else if (write_map(map, code)) {
		perror("jit: the map file");
		return 1;
	}

	t = wl_cpu_now();
	for (end = t + 0.9 * k; wl_cpu_now() < end;)
		hot(2000000);
	wl_report("jit_hot_loop", wl_cpu_now() - t);
	t = wl_cpu_now();
	for (end = t + 0.3 * k; wl_cpu_now() < end;)
		cold(100, cold_work);
	wl_report("jit_cold_loop", wl_cpu_now() - t);
	t = wl_cpu_now();
	for (end = t + 0.2 * k; wl_cpu_now() < end;)
		anon(2000000);
	wl_report("jit_anon", wl_cpu_now() - t);

	unlink(map);	/* the profiler must have read it already */
	unlink(target);
	munmap(code, 4096);
	return 0;
}

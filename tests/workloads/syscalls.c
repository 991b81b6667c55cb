/* syscalls.c - spends nearly all its time in the kernel, for the --kernel
 * test: sys_spin() reads 1 MiB at a time from /dev/zero, so the kernel
 * clears user memory (read_iter_zero) for each call and the system-call
 * entry and exit are a small part of it. Reports its own user and system
 * CPU time (getrusage) as the phases "user" and "system". */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "workload.h"

__attribute__((noinline)) void sys_spin(int fd, double s)
{
	static char buf[1 << 20];
	double end = wl_cpu_now() + s;

	while (wl_cpu_now() < end)
		for (int i = 0; i < 8; i++)
			if (read(fd, buf, sizeof(buf)) < 0)
				return;
}

static double tv_s(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

int main(void)
{
	int fd = open("/dev/zero", O_RDONLY);
	struct rusage ru;

	if (fd < 0)
		return 1;
	sys_spin(fd, 1.0 * wl_scale());
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		wl_report("user", tv_s(ru.ru_utime));
		wl_report("system", tv_s(ru.ru_stime));
	}
	return 0;
}

/* syscalls.c - spends most of its time in the kernel: write() to /dev/null
 * from sys_spin(), for the --kernel test. */
#include <fcntl.h>
#include <unistd.h>

#include "workload.h"

__attribute__((noinline)) void sys_spin(int fd, double s)
{
	static char buf[65536];
	double end = wl_cpu_now() + s;

	while (wl_cpu_now() < end)
		for (int i = 0; i < 200; i++)
			if (write(fd, buf, sizeof(buf)) < 0)
				return;
}

int main(void)
{
	int fd = open("/dev/zero", O_RDONLY);
	int out = open("/dev/null", O_WRONLY);
	char b[4096];
	double end;

	if (fd < 0 || out < 0)
		return 1;
	sys_spin(out, 1.0 * wl_scale());
	end = wl_cpu_now() + 0.2 * wl_scale();
	while (wl_cpu_now() < end)
		if (read(fd, b, sizeof(b)) < 0)
			return 1;
	return 0;
}

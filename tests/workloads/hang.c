/* hang.c - a process that hangs: main blocked in read() on a pipe no one
 * writes (block_in_read), a second thread in pause() (wait_forever, under
 * worker). Reports "phase ready 0" (see workload.h) once both wait; exits
 * on SIGTERM. For `stacktreed dump`. */
#include <pthread.h>

#include "workload.h"

__attribute__((noinline)) void wait_forever(void)
{
	for (;;)
		pause();
}

__attribute__((noinline)) void *worker(void *arg)
{
	(void)arg;
	wait_forever();
	return NULL;
}

__attribute__((noinline)) void block_in_read(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0)
		;
}

int main(void)
{
	int p[2];
	pthread_t t;

	if (pipe(p) || pthread_create(&t, NULL, worker, NULL))
		return 1;
	usleep(50000);	/* the worker is in pause() */
	wl_report("ready", 0);
	block_in_read(p[0]);
	return 0;
}

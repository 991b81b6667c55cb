/* churn.c - a busy build's process churn: starts RATE short processes a
 * second (argv[1], default 300) for SEC seconds (argv[2], default 60), each
 * exec'ing /bin/true (ld.so, libc: real mappings), and reaps them. Most are
 * never sampled; the daemon must forget each once it is gone (issue 23).
 * Prints the number started. */
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "workload.h"

extern char **environ;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double rate = argc > 1 ? atof(argv[1]) : 300, secs = argc > 2 ? atof(argv[2]) : 60;
	char *args[] = { "true", NULL };
	double t0 = now(), next = t0;
	unsigned long started = 0;
	pid_t pid;

	if (rate <= 0 || secs <= 0)
		return 2;
	while (now() - t0 < secs) {
		if (!posix_spawn(&pid, "/bin/true", NULL, NULL, args, environ))
			started++;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		next += 1 / rate;
		if (next > now())
			usleep((useconds_t)((next - now()) * 1e6));
	}
	while (wait(NULL) > 0)
		;
	printf("%lu\n", started);
	return 0;
}

/* threads.c - main plus three threads, each spinning in its own function
 * for a known CPU time; prints "thread NAME TID" for each. WL_NAME_LATE=1:
 * each thread spins a third of its time under the name it was born with
 * (the process's) before it names itself, as a JVM's threads do. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

struct job {
	const char *name;
	double seconds;
	void (*fn)(double);
};

__attribute__((noinline)) void spin_red(double s) { WL_SPIN_BODY(s); }
__attribute__((noinline)) void spin_green(double s) { WL_SPIN_BODY(s); }
__attribute__((noinline)) void spin_blue(double s) { WL_SPIN_BODY(s); }
__attribute__((noinline)) void spin_main(double s) { WL_SPIN_BODY(s); }

static void *run(void *arg)
{
	struct job *j = arg;
	double t = wl_cpu_now();

	if (getenv("WL_NAME_LATE") && atoi(getenv("WL_NAME_LATE"))) {
		j->fn(j->seconds / 3);
		pthread_setname_np(pthread_self(), j->name);
		j->fn(j->seconds * 2 / 3);
	} else {
		pthread_setname_np(pthread_self(), j->name);
		j->fn(j->seconds);
	}
	wl_report(j->name, wl_cpu_now() - t);
	{
		const char *path = getenv("WL_REPORT");
		FILE *f = path ? fopen(path, "a") : stderr;

		if (f) {
			fprintf(f, "thread %s %ld\n", j->name, (long)syscall(SYS_gettid));
			if (f != stderr)
				fclose(f);
		}
	}
	return NULL;
}

int main(void)
{
	double k = wl_scale();
	struct job jobs[] = {
		{ "red", 0.4 * k, spin_red },
		{ "green", 0.8 * k, spin_green },
		{ "blue", 1.2 * k, spin_blue },
	};
	pthread_t th[3];

	for (int i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, run, &jobs[i]))
			return 1;
	spin_main(0.3 * k);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return 0;
}

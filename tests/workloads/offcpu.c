/* offcpu.c - a main thread that spins, sleeps, blocks on a pipe and waits
 * for a mutex another thread holds, each phase in a function of its own:
 *   main -> phase_spin  -> spin                 (on the CPU)
 *   main -> phase_sleep -> nap                  (nanosleep: hrtimer_nanosleep)
 *   main -> phase_pipe  -> pipe_take            (read: pipe_read; a writer
 *                                               thread sends a byte every 8 ms)
 *   main -> phase_mutex -> mutex_take           (futex; a holder thread keeps
 *                                               the mutex 8 ms at a time)
 * Each phase's truth, measured by itself: "wall NAME S" (CLOCK_MONOTONIC)
 * and "cpu NAME S" (CLOCK_THREAD_CPUTIME_ID) lines on WL_REPORT; its time
 * off the CPU is the difference. WL_START_FILE / WL_END_FILE as in
 * workload.h; WL_SCALE scales the phases (0.6 s each at 1). */
#include <pthread.h>
#include <stdatomic.h>

#include "workload.h"

#define TICK_US 8000

static int pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop_holder;

static double mono_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void report(const char *kind, const char *name, double s)
{
	const char *path = getenv("WL_REPORT");
	FILE *f = path ? fopen(path, "a") : stderr;

	if (!f)
		return;
	fprintf(f, "%s %s %.6f\n", kind, name, s);
	if (f != stderr)
		fclose(f);
}

__attribute__((noinline)) void spin(double s) { WL_SPIN_BODY(s); }
__attribute__((noinline)) void nap(void) { usleep(TICK_US); }

__attribute__((noinline)) void pipe_take(void)
{
	char c;

	if (read(pipefd[0], &c, 1) != 1)
		abort();
}

__attribute__((noinline)) void mutex_take(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) void phase_spin(double k) { spin(0.6 * k); }

__attribute__((noinline)) void phase_sleep(double k)
{
	for (int i = 0; i < (int)(0.6 * k * 1e6 / TICK_US); i++)
		nap();
}

__attribute__((noinline)) void phase_pipe(double k)
{
	for (int i = 0; i < (int)(0.6 * k * 1e6 / TICK_US); i++)
		pipe_take();
}

__attribute__((noinline)) void phase_mutex(double k)
{
	double end = mono_now() + 0.6 * k;

	while (mono_now() < end) {
		mutex_take();
		usleep(200);	/* the holder takes it back meanwhile */
	}
}

static void *writer(void *arg)
{
	int n = *(int *)arg;

	for (int i = 0; i < n; i++) {
		usleep(TICK_US);
		if (write(pipefd[1], "x", 1) != 1)
			abort();
	}
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_holder)) {
		pthread_mutex_lock(&lock);
		usleep(TICK_US);
		pthread_mutex_unlock(&lock);
		usleep(50);
	}
	return NULL;
}

#define PHASE(name, call)                                                      \
	do {                                                                   \
		double w = mono_now(), c = wl_cpu_now();                       \
		call;                                                          \
		report("cpu", name, wl_cpu_now() - c);                         \
		report("wall", name, mono_now() - w);                          \
	} while (0)

int main(void)
{
	double k = wl_scale();
	int n = (int)(0.6 * k * 1e6 / TICK_US);
	pthread_t w, h;

	if (pipe(pipefd))
		return 1;
	wl_wait_start();
	PHASE("phase_spin", phase_spin(k));
	PHASE("phase_sleep", phase_sleep(k));
	if (pthread_create(&w, NULL, writer, &n))
		return 1;
	PHASE("phase_pipe", phase_pipe(k));
	pthread_join(w, NULL);
	if (pthread_create(&h, NULL, holder, NULL))
		return 1;
	usleep(1000);	/* it holds the mutex first */
	PHASE("phase_mutex", phase_mutex(k));
	atomic_store(&stop_holder, 1);
	pthread_join(h, NULL);
	wl_wait_end();
	return 0;
}

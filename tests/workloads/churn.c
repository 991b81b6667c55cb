/* churn.c - a busy build's process churn: starts RATE short processes a
 * second (argv[1], default 300) for SEC seconds (argv[2], default 60), each
 * exec'ing /bin/true (ld.so, libc: real mappings), and reaps them. Most are
 * never sampled; the daemon must forget each once it is gone (issue 23).
 * Further arguments, each a command line split at spaces ("/usr/bin/perl
 * -e 1"), are started in turn instead of /bin/true (a mix of real
 * programs: issue 35 item 3); their output goes to /dev/null. Prints the
 * number started; with CHURN_PIDS set, writes its own pid and those of
 * every process it started there, one a line (a profile's churn told
 * from the rest of the machine's). CHURN_SPAWNERS (default 1) processes
 * share the rate: a spawn waits for its child's exec, which on a busy
 * machine takes milliseconds (one spawner made 10-50 a second). */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

#include "workload.h"

#define CHURN_ARGS 16	/* words of one command line */

extern char **environ;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* cmd split at spaces into args (at most CHURN_ARGS - 1 words; cmd is
 * written into). */
static void split(char *cmd, char **args)
{
	int n = 0;

	for (char *w = strtok(cmd, " "); w && n < CHURN_ARGS - 1; w = strtok(NULL, " "))
		args[n++] = w;
	args[n] = NULL;
}

int main(int argc, char **argv)
{
	double rate = argc > 1 ? atof(argv[1]) : 300, secs = argc > 2 ? atof(argv[2]) : 60;
	char *deflt[] = { "/bin/true", NULL };
	int ncmd = argc > 3 ? argc - 3 : 1;
	char *(*cmds)[CHURN_ARGS] = calloc((size_t)ncmd, sizeof(*cmds));
	posix_spawn_file_actions_t fa;
	double t0 = now(), next = t0;
	unsigned long started = 0, turn = 0;
	const char *pids_path = getenv("CHURN_PIDS"), *sp = getenv("CHURN_SPAWNERS");
	FILE *pids = pids_path ? fopen(pids_path, "a") : NULL;
	int nspawn = sp ? atoi(sp) : 1, child = 0, fds[2];
	pid_t pid;

	if (rate <= 0 || secs <= 0 || !cmds || (pids_path && !pids) || nspawn < 1 ||
	    nspawn > 64)
		return 2;
	if (pids) {
		setvbuf(pids, NULL, _IOLBF, 0);	/* whole lines, appended (O_APPEND) */
		fprintf(pids, "%d\n", (int)getpid());
	}
	for (int i = 0; i < ncmd; i++) {
		if (argc > 3)
			split(argv[3 + i], cmds[i]);
		else
			memcpy(cmds[i], deflt, sizeof(deflt));
		if (!cmds[i][0])
			return 2;
	}
	/* the spawners: this process and nspawn - 1 children, each at
	 * rate / nspawn, their starts summed through a pipe */
	rate /= nspawn;
	if (pipe(fds))
		return 1;
	for (int i = 1; i < nspawn; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			child = 1;
			break;
		}
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	turn = (unsigned long)getpid();	/* spawners start at different commands */
	while (now() - t0 < secs) {
		char **args = cmds[turn++ % (unsigned long)ncmd];

		if (!posix_spawn(&pid, args[0], &fa, NULL, args, environ)) {
			started++;
			if (pids)
				fprintf(pids, "%d\n", (int)pid);	/* buffered */
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		next += 1 / rate;
		/* one reading: between two, the wait could turn negative, and
		 * a negative double made unsigned slept for an hour */
		double wait_s = next - now();

		if (wait_s > 0)
			usleep((useconds_t)(wait_s * 1e6));
	}
	while (wait(NULL) > 0)	/* (the other spawners too) */
		;
	posix_spawn_file_actions_destroy(&fa);
	if (pids && fclose(pids))
		return 1;
	free(cmds);
	if (child) {
		if (write(fds[1], &started, sizeof(started)) != sizeof(started))
			return 1;
		return 0;
	}
	close(fds[1]);
	for (unsigned long n; read(fds[0], &n, sizeof(n)) == sizeof(n);)
		started += n;
	printf("%lu\n", started);
	return 0;
}

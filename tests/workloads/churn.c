/* churn.c - a busy build's process churn: starts RATE short processes a
 * second (argv[1], default 300) for SEC seconds (argv[2], default 60), each
 * exec'ing /bin/true (ld.so, libc: real mappings), and reaps them. Most are
 * never sampled; the daemon must forget each once it is gone (issue 23).
 * Further arguments, each a command line split at spaces ("/usr/bin/perl
 * -e 1"), are started in turn instead of /bin/true (a mix of real
 * programs: issue 35 item 3); their output goes to /dev/null. Prints the
 * number started; with CHURN_PIDS set, writes its own pid and those of
 * every process it started there, one a line (a profile's churn told
 * from the rest of the machine's). */
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
	const char *pids_path = getenv("CHURN_PIDS");
	FILE *pids = pids_path ? fopen(pids_path, "w") : NULL;
	pid_t pid;

	if (rate <= 0 || secs <= 0 || !cmds || (pids_path && !pids))
		return 2;
	if (pids)
		fprintf(pids, "%d\n", (int)getpid());
	for (int i = 0; i < ncmd; i++) {
		if (argc > 3)
			split(argv[3 + i], cmds[i]);
		else
			memcpy(cmds[i], deflt, sizeof(deflt));
		if (!cmds[i][0])
			return 2;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
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
		if (next > now())
			usleep((useconds_t)((next - now()) * 1e6));
	}
	while (wait(NULL) > 0)
		;
	posix_spawn_file_actions_destroy(&fa);
	if (pids && fclose(pids))
		return 1;
	free(cmds);
	printf("%lu\n", started);
	return 0;
}

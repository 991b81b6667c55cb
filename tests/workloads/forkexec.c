/* forkexec.c - what every shell does: work, fork, and the child works a
 * little more, then execs another program (argv[1..]); the parent waits.
 *   main -> before_exec_work                      (0.4 s)
 *   child: main -> child_before_exec              (0.3 s), then exec
 * The exec'd program's samples must be its own: its name, its symbols, no
 * frame of this image (issue 10, item 5). */
#include <sys/wait.h>

#include "workload.h"

__attribute__((noinline)) void before_exec_work(double s) { WL_SPIN_BODY(s); }
__attribute__((noinline)) void child_before_exec(double s) { WL_SPIN_BODY(s); }

int main(int argc, char **argv)
{
	double k = wl_scale();
	int status = 0;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: forkexec PROGRAM [ARG...]\n");
		return 2;
	}
	before_exec_work(0.4 * k);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		child_before_exec(0.3 * k);
		execv(argv[1], argv + 1);
		_exit(127);
	}
	printf("forkexec: child %d\n", (int)pid);	/* for tests under -a */
	fflush(stdout);
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

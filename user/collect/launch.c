/* launch.c - fork the command, hold it on a pipe, exec on demand. */
#include "user/collect/launch.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct st_launch {
	pid_t pid;
	int go_fd;	/* write end: closing it lets the child exec */
	int err_fd;	/* read end: the child's exec errno, EOF on success */
	int exit_fd;	/* pidfd of the child (readable once it exits), or -1 */
	const char *cmd;
	bool reaped;
	int status;	/* its wait status, once reaped */
};

int st_launch__start(char *const argv[], struct st_launch **out)
{
	struct st_launch *l = calloc(1, sizeof(*l));
	int go[2] = { -1, -1 }, er[2] = { -1, -1 }, err;
	pid_t parent = getpid();

	*out = NULL;
	if (!l)
		return -ENOMEM;
	l->go_fd = l->err_fd = l->exit_fd = -1;
	l->cmd = argv[0];
	if (pipe2(go, O_CLOEXEC) || pipe2(er, O_CLOEXEC)) {
		err = -errno;
		goto cleanup;
	}
	l->pid = fork();
	if (l->pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (l->pid == 0) {
		char c;
		int e;

		/* the command dies with stacktreed, even by kill -9 (the check:
		 * the parent may have died before the prctl) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(127);
		close(go[1]);
		close(er[0]);
		/* wait until the parent closes its end */
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		signal(SIGINT, SIG_DFL);
		execvp(argv[0], argv);
		e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	/* -1 before Linux 5.3: the daemon then notices the exit at its next poll */
	l->exit_fd = (int)syscall(SYS_pidfd_open, l->pid, 0);
	l->go_fd = go[1];
	l->err_fd = er[0];
	*out = l;
	return 0;
cleanup:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (er[i] >= 0)
			close(er[i]);
	}
	free(l);
	return err;
}

int st_launch__which(const char *cmd, char *buf, size_t n)
{
	const char *path = getenv("PATH");

	if (!n)
		return -ENOENT;
	if (strchr(cmd, '/') || !path) {
		snprintf(buf, n, "%s", cmd);
		return 0;
	}
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ":");

		snprintf(buf, n, "%.*s/%s", (int)len, p, cmd);
		if (!access(buf, X_OK))
			return 0;
		p += len + (p[len] == ':');
	}
	buf[0] = '\0';
	return -ENOENT;
}

pid_t st_launch__pid(const struct st_launch *l)
{
	return l->pid;
}

int st_launch__exit_fd(const struct st_launch *l)
{
	return l->exit_fd;
}

int st_launch__go(struct st_launch *l)
{
	int e = 0;
	ssize_t n;

	close(l->go_fd);
	l->go_fd = -1;
	do {
		n = read(l->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		fprintf(stderr, "stacktreed: cannot run %s: %s\n", l->cmd, strerror(e));
		return -e;
	}
	return 0;
}

int st_launch__exited(struct st_launch *l, int *status)
{
	pid_t r;

	if (!l->reaped) {
		r = waitpid(l->pid, &l->status, WNOHANG);
		if (r != l->pid)
			return 0;
		l->reaped = true;
	}
	*status = l->status;
	return 1;
}

void st_launch__free(struct st_launch *l)
{
	int status;

	if (!l)
		return;
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	if (l->exit_fd >= 0)
		close(l->exit_fd);
	if (!l->reaped && l->pid > 0) {
		kill(l->pid, SIGKILL);
		waitpid(l->pid, &status, 0);
	}
	free(l);
}

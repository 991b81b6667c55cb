/* launch.h - start the profiled command, held before exec until the
 * sampler is ready. Owner: user/collect/launch.c. */
#ifndef STACKTREE_LAUNCH_H
#define STACKTREE_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

struct st_launch;

/* Fork a child that waits, then execvp(argv[0], argv). The child gets
 * SIGKILL when stacktreed dies, however it dies (PR_SET_PDEATHSIG; a setuid
 * command drops it at exec). */
int st_launch__start(char *const argv[], struct st_launch **out);
pid_t st_launch__pid(const struct st_launch *l);
/* The file execvp() runs for cmd (a name without '/' searched in $PATH,
 * the first executable one), in buf[n]: 0, or -ENOENT. */
int st_launch__which(const char *cmd, char *buf, size_t n);
/* A pidfd of the child, readable once it has exited (to wait on with
 * poll/epoll), owned by l; -1 where the kernel has no pidfd_open. */
int st_launch__exit_fd(const struct st_launch *l);
/* Let the child exec. Returns 0, or the exec failure as negative errno (with
 * one line on stderr). */
int st_launch__go(struct st_launch *l);
/* Non-blocking check: 1 and *status (its wait status, every time it is
 * asked once reaped) when the child has exited, else 0. */
int st_launch__exited(struct st_launch *l, int *status);
/* Kill (SIGKILL) and reap the child if still running; then free. */
void st_launch__free(struct st_launch *l);

#endif

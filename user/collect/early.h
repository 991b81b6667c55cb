/* early.h - the early object (bpf/early.bpf.c): a launched command sampled
 * from its exec on per-task cpu-clock events, inherited by its children,
 * while the session's full timer program is verified (--unwind dwarf/auto:
 * its samples are deferred ones, unwound late by the daemon). Cheap to load
 * (no kernel BTF read, some hundreds of instructions): its maps are all the
 * session's. Owner: user/collect/early.c. */
#ifndef STACKTREE_EARLY_H
#define STACKTREE_EARLY_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct st_early;

struct st_early_opts {
	bool kernel;		/* --kernel: kernel frames too */
	bool verbose;		/* -v: its verified instructions */
	/* the fd of the session's map of this name, or -1 (not created: the
	 * early object does not create it either) */
	int (*map_fd)(void *ctx, const char *name);
	void *ctx;
};

/* Open and load it: 0, or a negative errno (said under -v only: the
 * caller falls back and says so). */
int st_early__open(const struct st_early_opts *o, struct st_early **out);
/* A cpu-clock event of freq Hz on pid, inherited by the processes it forks,
 * enabled at its exec (the command held before it: user/collect/launch.h),
 * the program on it. 0 or a negative errno. */
int st_early__attach(struct st_early *e, pid_t pid, __u32 freq);
/* The events closed (their inherited copies with them). Idempotent. */
void st_early__stop(struct st_early *e);
/* Stops, then frees. NULL is fine. */
void st_early__free(struct st_early *e);

#endif

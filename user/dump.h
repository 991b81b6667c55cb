/* dump.h - `stacktreed dump --pid PID`: each thread's stack once, as it is
 * now, running, sleeping, hung or stopped (py-spy dump, gdb's thread apply
 * all bt). Owner: user/dump.c.
 *
 * Each thread is stopped a moment with ptrace (PTRACE_SEIZE, then
 * PTRACE_INTERRUPT: no signal reaches the process, and a thread stopped
 * by SIGSTOP stays stopped after), its registers and the top
 * ST_DEFER_STACK bytes of its stack are read, and it goes on. The stack is
 * then walked by the daemon's unwinder as a deferred sample is (the
 * process's CFI tables, frame pointers where a module has none) and folded
 * as one sample into the collector's tree of the thread, to be named as
 * the reports name theirs. Not walked: Python and Java frames (their walks
 * run in BPF at a sample: a thread stopped off the CPU has none) and
 * kernel frames (the thread's header says where it waits, from
 * /proc/PID/task/TID/wchan). Bounded: at most ST_DUMP_MAX_THREADS threads
 * (more are counted), and a thread that does not stop within
 * ST_DUMP_STOP_MS (uninterruptible sleep) is left alone and said so.
 */
#ifndef STACKTREE_DUMP_H
#define STACKTREE_DUMP_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct st_collector;
struct st_namer;
struct st_unwinder;

#define ST_DUMP_MAX_THREADS 4096
#define ST_DUMP_STOP_MS 200

/* A thread of the process and what became of it. */
struct st_dump_thread {
	__u32 tid;
	char state;		/* /proc's: R, S, D, T, t, Z... ('?' when not read) */
	char wchan[64];		/* the kernel function it waits in, or "" */
	int err;		/* 0: its stack was folded; else why not (negative errno) */
	const char *why;	/* err's sentence */
	size_t frames;		/* user frames walked */
	unsigned stop;		/* enum st_unw_stop of the walk */
};

struct st_dump {
	struct st_dump_thread *threads;	/* by tid */
	size_t n;
	size_t left_out;	/* threads past ST_DUMP_MAX_THREADS */
};

/* Take every thread's stack of pid (image: the one the collector knows
 * its maps for) into c's trees, walked by u. 0 (threads without a stack
 * say why in *out), or negative errno with one line on stderr (no such
 * process, not allowed to trace it, out of memory). Free with
 * st_dump__free(). */
int st_dump__take(struct st_unwinder *u, struct st_collector *c, __u32 pid, __u32 image,
		  struct st_dump *out);
void st_dump__free(struct st_dump *d);

/* The whole command: take the stacks (image 0: the maps add_targets had
 * the collector read), name them through a window on c's trees (n) and
 * print them into out (user/output/out_stacks.h), headed by the process's
 * line. 0 or negative errno (said on stderr). */
int st_dump__run(struct st_unwinder *u, struct st_collector *c, const struct st_namer *n,
		 __u32 pid, FILE *out);

#endif

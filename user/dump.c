/* dump.c - `stacktreed dump`: every thread's stack once, by ptrace, walked
 * by the daemon's unwinder, see dump.h. */
#include "user/dump.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stacktree.h"
#include "common/textesc.h"
#include "user/collect/collector.h"
#include "user/collect/unwind/unwind_native.h"
#include "user/collect/unwind/unwinder.h"
#include "user/model/profile.h"
#include "user/model/window.h"
#include "user/output/out_stacks.h"

#define PAGE 4096u

static int cmp_tid(const void *a, const void *b)
{
	const struct st_dump_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The threads of pid, by tid (at most ST_DUMP_MAX_THREADS). */
static int list_threads(__u32 pid, struct st_dump *d)
{
	char path[64];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	if (!(dir = opendir(path)))
		return -errno;
	d->threads = calloc(ST_DUMP_MAX_THREADS, sizeof(*d->threads));
	if (!d->threads) {
		closedir(dir);
		return -ENOMEM;
	}
	while ((e = readdir(dir))) {
		char *end;
		unsigned long tid = strtoul(e->d_name, &end, 10);

		if (e->d_name[0] < '1' || e->d_name[0] > '9' || *end || tid > UINT32_MAX)
			continue;
		if (d->n == ST_DUMP_MAX_THREADS) {
			d->left_out++;
			continue;
		}
		d->threads[d->n++] = (struct st_dump_thread){ .tid = (__u32)tid, .state = '?' };
	}
	closedir(dir);
	qsort(d->threads, d->n, sizeof(*d->threads), cmp_tid);
	return 0;
}

/* The thread's comm and state (/proc/PID/task/TID/stat: "tid (comm) S ..."),
 * and where it waits in the kernel (wchan). */
static void read_thread(__u32 pid, struct st_dump_thread *t, char *comm, size_t len)
{
	char path[96], buf[512], *lp, *rp;
	FILE *f;
	size_t n;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, t->tid);
	if ((f = fopen(path, "r"))) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
		lp = strchr(buf, '(');
		rp = strrchr(buf, ')');
		if (lp && rp && rp > lp) {
			size_t cl = (size_t)(rp - lp - 1);

			if (cl >= len)
				cl = len - 1;
			memcpy(comm, lp + 1, cl);
			comm[cl] = '\0';
			if (rp[1] == ' ' && rp[2])
				t->state = rp[2];
		}
	}
	snprintf(path, sizeof(path), "/proc/%u/task/%u/wchan", pid, t->tid);
	if ((f = fopen(path, "r"))) {
		n = fread(t->wchan, 1, sizeof(t->wchan) - 1, f);
		t->wchan[n] = '\0';
		fclose(f);
		if (!strcmp(t->wchan, "0"))
			t->wchan[0] = '\0';
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Up to len bytes of pid's memory from addr, page by page: a read stops at
 * the first page not mapped. The bytes read. */
static size_t read_stack(__u32 pid, __u64 addr, __u8 *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote[ST_DEFER_STACK / PAGE + 1];
	size_t nr = 0, off = 0;
	ssize_t got;

	while (off < len && nr < sizeof(remote) / sizeof(remote[0])) {
		size_t room = PAGE - (size_t)((addr + off) % PAGE);

		if (room > len - off)
			room = len - off;
		remote[nr++] = (struct iovec){ .iov_base = (void *)(uintptr_t)(addr + off),
					       .iov_len = room };
		off += room;
	}
	got = process_vm_readv((pid_t)pid, &local, 1, remote, nr, 0);
	return got > 0 ? (size_t)got : 0;
}

/* Stop tid a moment: its registers and stack into d. 0, or why not. */
static int stop_and_copy(__u32 pid, struct st_dump_thread *t, struct st_deferred *d,
			 const char **why)
{
	struct user_regs_struct regs;
	double end;
	int status = 0, sig = 0, err = 0;
	pid_t got = 0;

	if (ptrace(PTRACE_SEIZE, (pid_t)t->tid, NULL, NULL)) {
		err = -errno;
		*why = err == -ESRCH ? "it exited" : "cannot trace it";
		return err;
	}
	if (ptrace(PTRACE_INTERRUPT, (pid_t)t->tid, NULL, NULL)) {
		err = -errno;
		*why = "cannot stop it";
		goto detach;
	}
	for (end = now_ms() + ST_DUMP_STOP_MS; !got && now_ms() < end;) {
		got = waitpid((pid_t)t->tid, &status, __WALL | WNOHANG);
		if (got < 0) {
			err = -errno;
			*why = "it exited";
			return err;
		}
		if (!got)
			usleep(1000);
	}
	if (!got) {
		*why = "it did not stop within 200 ms (in an uninterruptible sleep?); left "
		       "traced until stacktreed exits";
		return -ETIMEDOUT;
	}
	if (!WIFSTOPPED(status)) {
		*why = "it exited";
		return -ESRCH;
	}
	/* a signal that came meanwhile goes back with the detach */
	if (status >> 16 == 0 && WSTOPSIG(status) != SIGTRAP)
		sig = WSTOPSIG(status);
	if (ptrace(PTRACE_GETREGS, (pid_t)t->tid, NULL, &regs)) {
		err = -errno;
		*why = "cannot read its registers";
		goto detach;
	}
	d->ip = regs.rip;
	d->sp = regs.rsp;
	d->bp = regs.rbp;
	d->r10 = regs.r10;
	d->rbx = regs.rbx;
	d->stack_len = (__u32)read_stack(pid, d->sp, d->stack, sizeof(d->stack));
detach:
	ptrace(PTRACE_DETACH, (pid_t)t->tid, NULL, (void *)(uintptr_t)sig);
	return err;
}

int st_dump__take(struct st_unwinder *u, struct st_collector *c, __u32 pid, __u32 image,
		  struct st_dump *out)
{
	struct st_deferred *d = calloc(1, sizeof(*d));
	__u64 frames[ST_MAX_USER];
	int err;

	memset(out, 0, sizeof(*out));
	if (!d)
		return -ENOMEM;
	if ((err = list_threads(pid, out))) {
		fprintf(stderr, "stacktreed dump: cannot list the threads of %u: %s\n", pid,
			strerror(-err));
		goto cleanup;
	}
	/* the modules its table waits for, compiled now */
	st_unwinder__finish_proc(u, pid);
	for (size_t i = 0; i < out->n; i++) {
		struct st_dump_thread *t = &out->threads[i];
		size_t fp = 0;
		int n;

		memset(d, 0, offsetof(struct st_deferred, stack));
		d->pid = pid;
		d->tid = t->tid;
		d->image = image;
		read_thread(pid, t, d->comm, sizeof(d->comm));
		t->err = stop_and_copy(pid, t, d, &t->why);
		if (t->err == -EPERM && i == 0) {
			fprintf(stderr, "stacktreed dump: cannot trace process %u: %s (root, or "
				"CAP_SYS_PTRACE; kernel.yama.ptrace_scope may forbid it)\n", pid,
				strerror(EPERM));
			err = -EPERM;
			goto cleanup;
		}
		if (t->err)
			continue;
		n = st_unwinder__walk(u, d, true, frames, ST_MAX_USER, &t->stop, &fp);
		if (n < 0)
			n = 0;
		t->frames = (size_t)n;
		if ((err = st_collector__add_sample(c, pid, t->tid, image, d->comm, frames,
						    (size_t)n, t->stop != ST_UNW_STOP_END, NULL, 0)))
			goto cleanup;
	}
	err = 0;
cleanup:
	free(d);
	return err;
}

void st_dump__free(struct st_dump *d)
{
	if (!d)
		return;
	free(d->threads);
	d->threads = NULL;
	d->n = 0;
}

_Static_assert(ST_MAX_USER == 768, "stop_reason() says 768 frames");

/* Why a walk stopped short, for the reader. */
static const char *stop_reason(unsigned stop)
{
	switch (stop) {
	case ST_UNW_STOP_END: return NULL;
	case ST_UNW_STOP_DEPTH: return "the frame limit (768 frames: ST_MAX_USER)";
	case ST_UNW_STOP_NO_TABLE: return "no unwind information (CFI or frame pointer) here";
	case ST_UNW_STOP_READ_FAULT: return "the stack copy ends here";
	case ST_UNW_STOP_UNSUPPORTED: return "CFI the unwinder does not support";
	case ST_UNW_STOP_BAD_FRAME: return "a frame that does not look like one";
	case ST_UNW_STOP_NO_PROC: return "no unwind table for the process";
	case ST_UNW_STOP_TOO_MANY_MAPS: return "a mapping left out of the process's table";
	default: return "an unknown reason";
	}
}

static void put_process(__u32 pid, FILE *out)
{
	char path[64], buf[4096];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	if ((f = fopen(path, "r"))) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	for (size_t i = 0; i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = '\0';
	fprintf(out, "Process %u: ", pid);
	st_textesc__put(out, buf);
	fputs("\n\n", out);
}

int st_dump__run(struct st_unwinder *u, struct st_collector *c, const struct st_namer *n,
		 __u32 pid, FILE *out)
{
	struct st_window *w = st_window__new(c, n, "dump", false, &(struct st_window_filter){ 0 });
	struct st_stack_note *notes = NULL;
	struct st_profile *p = NULL;
	struct st_dump d = { 0 };
	double t0 = now_ms(), taken = 0;
	int err = -ENOMEM;

	if (!w)
		goto nomem;
	if ((err = st_dump__take(u, c, pid, 0, &d)))
		goto cleanup;
	taken = now_ms() - t0;
	if (!(p = st_window__take(w)) || !(notes = calloc(d.n + 1, sizeof(*notes))))
		goto nomem;
	for (size_t i = 0; i < d.n; i++) {
		const struct st_dump_thread *t = &d.threads[i];

		notes[i] = (struct st_stack_note){ .tid = t->tid, .state = t->state,
						   .wchan = t->wchan, .why = t->err ? t->why : NULL,
						   .cut = t->err ? NULL : stop_reason(t->stop) };
	}
	put_process(pid, out);
	err = st_stacks__write(p, notes, d.n, out);
	if (!err && d.left_out)
		fprintf(out, "%zu more threads not shown (at most %d)\n", d.left_out,
			ST_DUMP_MAX_THREADS);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	if (err)
		fprintf(stderr, "stacktreed dump: cannot write the stacks: %s\n", strerror(-err));
	else
		fprintf(stderr, "stacktreed dump: %zu threads in %.0f ms: stopped and walked in "
			"%.0f ms, then named\n", d.n, now_ms() - t0, taken);
	goto cleanup;
nomem:
	err = -ENOMEM;
	fprintf(stderr, "stacktreed dump: out of memory\n");
cleanup:
	free(notes);
	st_profile__free(p);
	st_window__free(w);
	st_dump__free(&d);
	return err;
}

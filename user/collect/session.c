/* session.c - load, attach and drain the BPF timer sampler. Loads only the
 * programs (and creates only the maps) the session's mode uses: the fp or
 * dwarf variant of each sampling program (bpf/walk.bpf.h), the page-fault
 * program with --event faults, the sched_switch program with --event
 * offcpu or wall, the bare walk with --bench-bare.
 *
 * The timers run the cheap on_timer_early from the start (bpf/sample.bpf.c):
 * the full timer program (on_timer_fp or on_timer_dwarf) is verified after
 * the attach, on a thread of its own, by a second instance of the object
 * whose maps are the session's (bpf_map__reuse_fd()), and put in the early
 * program's tail-call slot (timer_jump) once in; it walks a runtime's
 * frames (Python, Java) only once a process of that runtime was seen, when
 * it is loaded again with them, at the daemon's priority, in place of a
 * load under way that does not walk it (late_supersede();
 * kernel-notes/README.md, "Start-up and verifier budgets"). With a launched command the same thread first loads
 * the end-maps programs and creates their maps (late_endmaps_load()), and
 * a runtime's walker-only caches are created by the first full program
 * that walks it (lazy_runtime()): neither delays the command's start.
 * A launched command (no filter; any --unwind mode; not a python* command,
 * nor java in fp mode: st_session__open()) is sampled
 * instead by the early object's per-task events (user/collect/early.h: no kernel BTF, a
 * few hundred instructions) while on_timer returns at once; the late
 * thread's one write to timer_early switches the two once the full
 * program is in its slot (early_object_open(), late_load_prog()). */
#include "user/collect/session.h"
#include "bpf/pathhash.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sample.skel.h"
#include "user/collect/early.h"

/* The verifier's limit of instructions checked per program
 * (BPF_COMPLEXITY_LIMIT_INSNS); the parts' ST_BUDGET_* are percentages of it. */
#define ST_VERIFIER_LIMIT 1000000u

/* The end-maps programs and the lifecycle programs re-attached after them,
 * in the order of late_load.links[] (late_endmaps_load()). */
#define ST_LATE_LINKS 4
#define ST_LATE_CREATE_FULL 1
#define ST_LATE_CREATE_ENDMAPS 2

/* struct late_load's state: a load walking no runtime the session has seen
 * a process of is superseded by one that does (late_supersede()) unless its
 * thread is putting it in already. */
enum { ST_LATE_LOADING, ST_LATE_INSTALLING, ST_LATE_SUPERSEDED };

/* One load of the full timer program, on its own thread (late_run()): a
 * second instance of the object, whose maps are the session's (their fds
 * duplicated here, so that the thread needs nothing of the session and
 * may outlive it), its .rodata the session's but for the runtimes walked.
 * Freed by the last of the session and the thread to let go of it. */
struct late_load {
	pthread_t thread;
	atomic_int refs;	/* 2 while both the session and the thread hold it */
	atomic_int done;	/* 0 loading, 1 in its slot, else a negative errno
				 * (-ECANCELED: superseded, not put in) */
	atomic_int state;	/* ST_LATE_LOADING, then whichever of the thread
				 * (ST_LATE_INSTALLING) and the main loop
				 * (ST_LATE_SUPERSEDED) moves it first */
	bool dwarf;		/* on_timer_dwarf, else on_timer_fp */
	bool background;	/* nobody waits for it: at ST_LATE_NICE */
	unsigned interp;	/* ST_INTERP_* its program walks */
	void *rodata;		/* the session's .rodata, interpreters set to interp */
	size_t rodata_len;
	/* copies of the names; fd -1: not created, by this instance either
	 * unless create says which load creates it: ST_LATE_CREATE_FULL (a
	 * runtime's walker-only cache it walks: lazy_runtime()) or
	 * ST_LATE_CREATE_ENDMAPS (the end-maps programs' maps, whose fd it then
	 * keeps here for the session: late_take_endmaps()) */
	struct { char *name; int fd; int create; } *maps;
	size_t nmaps;
	double start_ms, end_ms;	/* queued, slot filled */
	__u32 verified;			/* its verified_insns */
	/* the end-maps programs (bpf/endmaps.bpf.h), loaded first when the
	 * session left them out to start the command sooner: attached here in
	 * the order they must run, on_exit_maps and on_exec_maps before copies
	 * of on_exit and on_prepare_exec, whose first links the main loop then
	 * closes (late_take_endmaps()) */
	bool endmaps, endmaps_exec;	/* load them; on_exec_maps too */
	atomic_int endmaps_done;	/* 0 under way or none, 1 attached, else -errno */
	struct bpf_link *links[ST_LATE_LINKS];	/* late_link_progs[]' links, or NULL */
	__u32 endmaps_verified[2];	/* on_exit_maps's, on_exec_maps's */
};

struct st_session {
	struct sample_bpf *skel;
	struct bpf_program *timer;	/* the timer program attached, or NULL */
	struct late_load *late;		/* the full timer program's load under way, or NULL */
	struct late_load *late_old;	/* a load superseded, its thread still running, or NULL */
	double want_ms;			/* a runtime not walked by the program in was
					 * first seen (0: none waits) */
	struct st_early *early;		/* a launched command's early object, or NULL */
	pid_t launched;			/* the launched command (held before its exec), or 0 */
	unsigned late_in;		/* ST_INTERP_* of the full program in the slot,
					 * ST_LATE_NONE before the first */
	unsigned late_want;		/* ST_INTERP_* seen (or the command is one) */
	double late_checked_ms;		/* runtimes last looked for */
	double attach_ms;		/* the timers attached */
	bool late_wait;			/* tests: every load finished before the stop */
	bool late_launch;		/* tests: the first one before the attach returns */
	bool late_failed;		/* a load failed (said): no other is tried */
	bool endmaps_late;		/* the end-maps programs: the first late load's */
	bool endmaps_exec;		/* on_exec_maps too (sched_prepare_exec) */
	struct bpf_program *fault;	/* the page-fault program loaded, or NULL */
	struct bpf_link *fault_link;
	struct bpf_program *offcpu;	/* the sched_switch program loaded, or NULL */
	struct bpf_link *offcpu_link;
	struct st_session_opts opts;
	int ncpus;
	int *perf_fds;
	struct bpf_link **links;
	struct ring_buffer *rb;		/* the events ring */
	struct ring_buffer *rb_rt;	/* st_session__add_ring()'s, or NULL */
	int wake_fds[ST_SESSION_WAKE_FDS];	/* also end the poll's wait */
	int nwake;
	int epfd;			/* rb's and rb_rt's epoll fds and the wake fds, or -1 */
	st_event_fn ev_fn;
	void *ev_ctx;
	double events_until;	/* a read's budget for events ends (ms; 0: not begun) */
	bool stopped;		/* st_session__stop(): the last reads, no budget */
	struct st_node_rec *recs;	/* mmaped `nodes` array */
	size_t recs_len;
	__u64 *slots;		/* mmaped `node_slots` array */
	size_t nslots;		/* slots per generation */
	int stats_fd;			/* bpf_enable_stats() */
	struct {			/* st_session__add_ring(), into rb_rt at attach */
		int fd;
		st_ring_fn fn;
		void *ctx;
	} rings[4];
	unsigned nrings;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

/* Without -v libbpf says nothing: our own line says what failed and that
 * -v shows libbpf's messages and the verifier log. */
static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* A kernel.* sysctl's integer value (0: not read). */
static int sysctl_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static int max_sample_rate(void)
{
	return sysctl_int("/proc/sys/kernel/perf_event_max_sample_rate");
}

int st_session__check_privileges(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	char exe[PATH_MAX] = "stacktreed";
	bool bpf, perfmon, admin;
	ssize_t n;

	if (syscall(SYS_capget, &h, d))
		return 0;	/* cannot tell: the load says what fails */
#define ST_HAS_CAP(c) ((d[(c) / 32].effective >> ((c) % 32)) & 1)
	admin = ST_HAS_CAP(CAP_SYS_ADMIN);
	bpf = admin || ST_HAS_CAP(CAP_BPF);
	perfmon = admin || ST_HAS_CAP(CAP_PERFMON);
#undef ST_HAS_CAP
	if (bpf && perfmon)
		return 0;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0)
		exe[n] = 0;
	fprintf(stderr, "stacktreed: missing %s: run it as root, or give the binary file "
		"capabilities (a copy of it, to share it with no one): "
		"sudo setcap cap_bpf,cap_perfmon+ep %s\n",
		!bpf && !perfmon ? "CAP_BPF and CAP_PERFMON" : !bpf ? "CAP_BPF" : "CAP_PERFMON", exe);
	return -EPERM;
}

int st_session__check_freq(__u32 freq)
{
	int limit = max_sample_rate();

	if (limit > 0 && freq > (__u32)limit) {
		fprintf(stderr, "stacktreed: sampling rate %u Hz is above the kernel's limit %d "
			"(kernel.perf_event_max_sample_rate): use a lower -F\n", freq, limit);
		return -EINVAL;
	}
	if (freq > ST_FREQ_WARN)
		fprintf(stderr, "stacktreed: warning: -F %u is above %u Hz: the sampler takes "
			"~%u%% of every CPU (at ~2.5 us a sample) and may fill the node array "
			"(lost samples are counted as \"node array full\"; -F 999 is plenty)\n",
			freq, ST_FREQ_WARN, (unsigned)(freq / 4000));
	return 0;
}

/* --cgroup PATH: a cgroup v2 directory, absolute or under /sys/fs/cgroup. */
static bool has_event(const struct st_session *s, unsigned ev)
{
	return (s->opts.events & (1u << ev)) != 0;
}

static int set_cgroup_filter(struct st_session *s, const char *path)
{
	char full[4096];
	__u32 zero = 0;
	int fd, err = 0;

	if (path[0] == '/' && strncmp(path, "/sys/fs/cgroup", 14) == 0)
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "/sys/fs/cgroup/%s", path[0] == '/' ? path + 1 : path);
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "stacktreed: cannot open cgroup %s: %s (give a cgroup v2 path, "
			"e.g. /system.slice/ssh.service)\n", full, strerror(errno));
		return err;
	}
	if (bpf_map__update_elem(s->skel->maps.cgroup_filter, &zero, sizeof(zero), &fd,
				 sizeof(fd), BPF_ANY)) {
		err = -errno;
		fprintf(stderr, "stacktreed: cannot set the cgroup filter %s: %s\n", full,
			strerror(errno));
	}
	close(fd);
	return err;
}

/* The programs and maps the session's mode needs: the others are neither
 * loaded nor verified, nor created (kernel-notes/README.md, "Start-up and
 * verifier budgets"). */
static int choose_programs(struct st_session *s)
{
	struct sample_bpf *k = s->skel;
	bool dwarf = s->opts.unwind_mode != ST_UNWIND_FP;
	struct bpf_program *sampling[] = {
		k->progs.on_timer_fp, k->progs.on_timer_dwarf, k->progs.on_timer_bare,
		k->progs.on_timer, k->progs.on_timer_early,
		k->progs.on_fault_fp, k->progs.on_fault_dwarf,
		k->progs.on_offcpu_fp, k->progs.on_offcpu_dwarf,
	};
	/* used by the DWARF walker and by deferral only (the fp programs do
	 * not call them; the lifecycle programs' uses are dead code in fp
	 * mode, which the verifier skips) */
	struct bpf_map *dwarf_maps[] = {
		k->maps.unwind_shards, k->maps.unwind_procs, k->maps.unwind_cache,
		k->maps.unwind_requests, k->maps.handoffs,
		k->maps.deferred, k->maps.defer_buf,
	};
	struct bpf_map *py_maps[] = {
		k->maps.py_procs, k->maps.py_tstates, k->maps.py_codes,
		k->maps.py_events, k->maps.py_scratch, k->maps.py_memo, k->maps.py_stats,
		k->maps.py_exes,
	};
	int err = 0;

	/* the full timer program is loaded later, by another instance */
	if (has_event(s, ST_EVENT_CPU))
		s->timer = s->opts.bare ? k->progs.on_timer_bare : k->progs.on_timer;
	if (has_event(s, ST_EVENT_FAULTS))
		s->fault = dwarf ? k->progs.on_fault_dwarf : k->progs.on_fault_fp;
	if (has_event(s, ST_EVENT_OFFCPU) || s->opts.wall)
		s->offcpu = dwarf ? k->progs.on_offcpu_dwarf : k->progs.on_offcpu_fp;
	for (size_t i = 0; i < sizeof(sampling) / sizeof(sampling[0]); i++)
		if (!err)
			err = bpf_program__set_autoload(sampling[i], sampling[i] == s->timer ||
								     (sampling[i] == k->progs.on_timer_early &&
								      s->timer == k->progs.on_timer) ||
								     sampling[i] == s->fault ||
								     sampling[i] == s->offcpu);
	for (size_t i = 0; i < sizeof(dwarf_maps) / sizeof(dwarf_maps[0]); i++)
		if (!err && !dwarf)
			err = bpf_map__set_autocreate(dwarf_maps[i], false);
	/* CPython's maps: without it, their uses are dead code (bpf/python.bpf.h) */
	for (size_t i = 0; i < sizeof(py_maps) / sizeof(py_maps[0]); i++)
		if (!err && !(s->opts.interpreters & ST_INTERP_PYTHON))
			err = bpf_map__set_autocreate(py_maps[i], false);
	/* forced pages: the page-fault program's only */
	if (!err && !s->fault)
		err = bpf_map__set_autocreate(k->maps.forced_pages, false);
	/* the sched_switch program's own (--event wall folds into `threads`) */
	if (!err && !s->offcpu &&
	    !(err = bpf_map__set_autocreate(k->maps.offcpu_pending, false)) &&
	    !(err = bpf_map__set_autocreate(k->maps.offcpu_rate, false)))
		err = bpf_map__set_autocreate(k->maps.offcpu_threads, false);
	return err;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* -v: what the verifier checked of each program loaded, against the
 * kernel's limit (tests/integration/test_verifier.py reads these lines). */
static void print_verified(const struct st_session *s, double load_ms)
{
	struct bpf_program *p;

	fprintf(stderr, "stacktreed: BPF programs loaded in %.0f ms\n", load_ms);
	bpf_object__for_each_program(p, s->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(p) < 0 ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			continue;
		fprintf(stderr, "stacktreed: BPF program %s: %u instructions verified (%.1f%% "
			"of the kernel's %u)\n", bpf_program__name(p), info.verified_insns,
			100.0 * info.verified_insns / ST_VERIFIER_LIMIT, ST_VERIFIER_LIMIT);
	}
}

#define ST_LATE_NONE (~0u)

static void late_unref(struct late_load *l)
{
	if (!l || atomic_fetch_sub(&l->refs, 1) != 1)
		return;
	for (size_t i = 0; i < ST_LATE_LINKS; i++)	/* not taken by a session */
		bpf_link__destroy(l->links[i]);
	for (size_t i = 0; i < l->nmaps; i++) {
		if (l->maps[i].fd >= 0)
			close(l->maps[i].fd);
		free(l->maps[i].name);
	}
	free(l->maps);
	free(l->rodata);
	free(l);
}

static bool keep_full(const struct late_load *l, struct sample_bpf *k,
		      const struct bpf_program *p)
{
	return p == (l->dwarf ? k->progs.on_timer_dwarf : k->progs.on_timer_fp);
}

/* Another instance of the object, on the late thread: its maps the
 * session's, its .rodata the session's (interpreters: l->interp), only the
 * programs keep() says loaded (not yet: the caller loads it). */
static struct sample_bpf *late_open(struct late_load *l,
				    bool (*keep)(const struct late_load *l, struct sample_bpf *k,
						 const struct bpf_program *p),
				    int *errp)
{
	struct sample_bpf *k = sample_bpf__open();
	struct bpf_program *p;
	int err = 0;

	if (!k) {
		*errp = -errno;
		return NULL;
	}
	bpf_object__for_each_program(p, k->obj)
		if (!err)
			err = bpf_program__set_autoload(p, keep(l, k, p));
	for (size_t i = 0; !err && i < l->nmaps; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(k->obj, l->maps[i].name);

		if (!m || m == k->maps.rodata)
			continue;
		err = l->maps[i].fd >= 0 ? bpf_map__reuse_fd(m, l->maps[i].fd) :
		      bpf_map__set_autocreate(m, l->maps[i].create ==
						 (keep == keep_full ? ST_LATE_CREATE_FULL :
								      ST_LATE_CREATE_ENDMAPS));
	}
	/* the session's settings (sizes equal: the same object) */
	if (!err && !(err = bpf_map__set_initial_value(k->maps.rodata, l->rodata, l->rodata_len)))
		k->rodata->interpreters = l->interp;
	if (err) {
		sample_bpf__destroy(k);
		*errp = err;
		return NULL;
	}
	return k;
}

/* The load itself, on its thread: only the full timer program loaded;
 * then in timer_jump's slot, where the early program finds it at its next
 * sample. The instance is closed after: the slot holds the program. */
static int late_load_prog(struct late_load *l)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), zero = 0, off = ST_TIMER_EARLY_OFF;
	struct bpf_program *full;
	struct sample_bpf *k;
	int err = 0, fd;

	if (!(k = late_open(l, keep_full, &err)))
		return err;
	full = l->dwarf ? k->progs.on_timer_dwarf : k->progs.on_timer_fp;
	_Static_assert(ST_TIMER_SLOT_FULL == 0, "the full program's slot");
	err = sample_bpf__load(k);
	/* superseded meanwhile (a runtime seen: late_supersede()): not put in */
	if (!err && !atomic_compare_exchange_strong(&l->state, &(int){ ST_LATE_LOADING },
						    ST_LATE_INSTALLING))
		err = -ECANCELED;
	if (!err) {
		fd = bpf_program__fd(full);
		if (bpf_map__update_elem(k->maps.timer_jump, &zero, sizeof(zero), &fd, sizeof(fd),
					 BPF_ANY))
			err = -errno;
		else if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			l->verified = info.verified_insns;
		/* the early object's samples end, the timers' begin: one write */
		if (!err && bpf_map__update_elem(k->maps.timer_early, &zero, sizeof(zero), &off,
						 sizeof(off), BPF_ANY))
			err = -errno;
	}
	sample_bpf__destroy(k);
	return err;
}

/* late_load.links[]' programs, in their order of attachment: each one's
 * tracepoint runs them in that order, the end-maps ones before on_exit
 * deletes the process's seen_procs entry and before on_prepare_exec gives
 * it its new image. */
static struct bpf_program *late_link_prog(const struct late_load *l, struct sample_bpf *k,
					  size_t i)
{
	struct bpf_program *progs[ST_LATE_LINKS] = {
		k->progs.on_exit_maps, l->endmaps_exec ? k->progs.on_exec_maps : NULL,
		k->progs.on_exit, l->endmaps_exec ? k->progs.on_prepare_exec : NULL,
	};

	return progs[i];
}

static bool keep_endmaps(const struct late_load *l, struct sample_bpf *k,
			 const struct bpf_program *p)
{
	for (size_t i = 0; i < ST_LATE_LINKS; i++)
		if (p == late_link_prog(l, k, i))
			return true;
	return false;
}

/* The end-maps programs, loaded and attached after the launch (their
 * verification was 0.1 s of an idle start-up, 1.1-1.5 s of a busy one:
 * kernel-notes/README.md, "Start-up and verifier budgets"), with copies of
 * on_exit and on_prepare_exec attached after them. Until the main loop
 * closes the session's own links of those two, both copies run: the
 * second finds the process gone from seen_procs (no second exit event) or
 * sets the image the first did. */
static int late_endmaps_load(struct late_load *l)
{
	struct sample_bpf *k;
	int err = 0;

	if (!(k = late_open(l, keep_endmaps, &err)))
		return err;
	err = sample_bpf__load(k);
	for (size_t i = 0; !err && i < ST_LATE_LINKS; i++) {
		struct bpf_program *p = late_link_prog(l, k, i);

		if (p && !(l->links[i] = bpf_program__attach(p)))
			err = -errno;
	}
	/* the maps it created, the session's from now on */
	for (size_t i = 0; !err && i < l->nmaps; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(k->obj, l->maps[i].name);

		if (l->maps[i].create == ST_LATE_CREATE_ENDMAPS && m &&
		    (l->maps[i].fd = fcntl(bpf_map__fd(m), F_DUPFD_CLOEXEC, 0)) < 0)
			err = -errno;
	}
	for (size_t i = 0; !err && i < 2; i++) {
		struct bpf_program *p = late_link_prog(l, k, i);
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (p && !bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			l->endmaps_verified[i] = info.verified_insns;
	}
	for (size_t i = 0; err && i < ST_LATE_LINKS; i++) {
		bpf_link__destroy(l->links[i]);
		l->links[i] = NULL;
	}
	sample_bpf__destroy(k);	/* the links hold the programs */
	return err;
}

/* With a launched command, the verifier's seconds of the first load, which
 * walks no runtime (a speculative one: nothing waits for it but the early
 * samples' cost), are taken at a lower priority than the daemon's main
 * loop (reading a new process's maps, finding its interpreter, unwinding
 * the early samples) and the command: the early program samples
 * meanwhile. A load that adds the walker of a runtime seen runs at the
 * daemon's priority: that process's samples lack its frames until it is
 * in (beside two nice-0 spinners a nice-10 thread had ~10% of a CPU: the
 * Python walker came after an 8 s Python run; kernel-notes/README.md,
 * "A runtime seen after the launch"). --pid and -a wait for it (at nice
 * 10 beside two busy CPUs it took over 60 s). */
#define ST_LATE_NICE 10

static void *late_run(void *arg)
{
	struct late_load *l = arg;
	int err;

	/* the end-maps programs first, at the daemon's priority: a launched
	 * build's short processes need them soon */
	if (l->endmaps)
		atomic_store(&l->endmaps_done, (err = late_endmaps_load(l)) ? err : 1);
	if (atomic_load(&l->state) == ST_LATE_SUPERSEDED) {
		err = -ECANCELED;	/* not verified at all */
	} else {
		if (l->background)	/* best effort */
			setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), ST_LATE_NICE);
		err = late_load_prog(l);
	}

	l->end_ms = now_ms();
	atomic_store(&l->done, err ? err : 1);
	late_unref(l);
	return NULL;
}

static const char *interp_names(unsigned interp)
{
	return (interp & ST_INTERP_ALL) == ST_INTERP_ALL ? "python and java" :
	       (interp & ST_INTERP_PYTHON) ? "python" : (interp & ST_INTERP_JAVA) ? "java" :
	       "no runtime";
}

/* The runtime (ST_INTERP_*) of a map only its walker uses, a cache whose
 * loss costs a report again or a read again (py_codes, py_tstates,
 * java_methods, java_blob_cache: 0.4-0.5 s of LRU preallocation before a
 * busy launch, strace); else 0. The session creates it only when its
 * programs walk that runtime; else each full program that does creates its
 * own (late_open()), of the same bound. The DWARF walker's HotSpot rule
 * uses Java's whatever the runtimes walked (lazy_needed()). */
static unsigned lazy_runtime(struct sample_bpf *k, const struct bpf_map *m)
{
	return m == k->maps.py_codes || m == k->maps.py_tstates ? ST_INTERP_PYTHON :
	       m == k->maps.java_methods || m == k->maps.java_blob_cache ? ST_INTERP_JAVA : 0;
}

/* Whether programs walking interp, with the DWARF walker or not, use the
 * lazily created map m (lazy_runtime()). */
static bool lazy_needed(struct sample_bpf *k, const struct bpf_map *m, unsigned interp,
			bool dwarf)
{
	unsigned rt = lazy_runtime(k, m);

	return (rt & interp) || (rt == ST_INTERP_JAVA && dwarf);
}

/* The end-maps programs' own maps (bpf/endmaps.bpf.h), which the daemon
 * reads too: created by their late load when the session leaves them to it
 * (late_endmaps_load()); until then the daemon finds no process's
 * mappings kept (as for one that was not sampled). */
static bool endmaps_map(struct sample_bpf *k, const struct bpf_map *m)
{
	return m == k->maps.exec_maps || m == k->maps.file_paths || m == k->maps.endmaps_scratch;
}

/* Start loading the full timer program walking the runtimes interp. */
static int late_start(struct st_session *s, unsigned interp)
{
	struct late_load *l = calloc(1, sizeof(*l));
	const void *ro;
	struct bpf_map *m;
	size_t n = 0;
	int err;

	if (!l)
		return -ENOMEM;
	atomic_init(&l->refs, 2);
	atomic_init(&l->done, 0);
	atomic_init(&l->state, ST_LATE_LOADING);
	l->dwarf = s->opts.unwind_mode != ST_UNWIND_FP;
	/* (tests: with the early object held back, STACKTREED_TEST_EARLY=MS,
	 * at the daemon's priority, so that the switch comes in the run); a
	 * runtime's walker at the daemon's priority (ST_LATE_NICE) */
	l->background = s->opts.late_background && !s->late_launch && !interp &&
			!(s->early && getenv("STACKTREED_TEST_EARLY"));
	l->interp = interp;
	l->endmaps = s->endmaps_late;
	l->endmaps_exec = s->endmaps_exec;
	l->start_ms = now_ms();
	ro = bpf_map__initial_value(s->skel->maps.rodata, &l->rodata_len);
	l->rodata = ro ? malloc(l->rodata_len) : NULL;
	bpf_object__for_each_map(m, s->skel->obj)
		n++;
	l->maps = calloc(n, sizeof(*l->maps));
	if (!l->rodata || !l->maps) {
		err = -ENOMEM;
		goto cleanup;
	}
	memcpy(l->rodata, ro, l->rodata_len);
	bpf_object__for_each_map(m, s->skel->obj) {
		int fd = bpf_map__fd(m);

		/* a copy: the session's object may be freed before the thread
		 * ends (a command that cannot be run, test_exit_status_is_the_commands) */
		l->maps[l->nmaps].fd = -1;
		l->maps[l->nmaps].create = fd >= 0 ? 0 :
			l->endmaps && endmaps_map(s->skel, m) ? ST_LATE_CREATE_ENDMAPS :
			lazy_needed(s->skel, m, interp, l->dwarf) ? ST_LATE_CREATE_FULL : 0;
		if (!(l->maps[l->nmaps].name = strdup(bpf_map__name(m)))) {
			err = -ENOMEM;
			goto cleanup;
		}
		l->nmaps++;
		if (fd >= 0 && (l->maps[l->nmaps - 1].fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
			err = -errno;
			goto cleanup;
		}
	}
	if ((err = -pthread_create(&l->thread, NULL, late_run, l)))
		goto cleanup;
	s->late = l;
	s->endmaps_late = false;	/* this load's (taken: late_take_endmaps()) */
	return 0;
cleanup:
	atomic_store(&l->refs, 1);
	late_unref(l);
	return err;
}

/* The end-maps programs attached by the late thread: their links the
 * session's from now on, and the session's first on_exit and
 * on_prepare_exec closed (their copies run after the end-maps programs);
 * or one line on their failure. Once per session. */
static void late_take_endmaps(struct st_session *s, struct late_load *l)
{
	struct bpf_link **mine[ST_LATE_LINKS] = {
		&s->skel->links.on_exit_maps, &s->skel->links.on_exec_maps,
		&s->skel->links.on_exit, &s->skel->links.on_prepare_exec,
	};
	const char *names[2] = { "on_exit_maps", "on_exec_maps" };
	int done = l && l->endmaps ? atomic_load(&l->endmaps_done) : 0;

	if (!done)
		return;
	l->endmaps = false;	/* the thread is past them: only this thread reads it now */
	if (done < 0) {
		fprintf(stderr, "stacktreed: cannot load the programs that keep a process's "
			"mappings at its end (%s; -v shows the verifier log): processes gone "
			"before their maps are read stay [unknown]\n", strerror(-done));
		return;
	}
	/* their maps first: what the daemon reads */
	for (size_t i = 0; i < l->nmaps; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(s->skel->obj, l->maps[i].name);
		int err;

		if (l->maps[i].create != ST_LATE_CREATE_ENDMAPS || l->maps[i].fd < 0 || !m)
			continue;
		if ((err = bpf_map__reuse_fd(m, l->maps[i].fd))) {
			fprintf(stderr, "stacktreed: cannot take the map %s of the programs that "
				"keep a process's mappings at its end: %s: processes gone before "
				"their maps are read stay [unknown]\n", l->maps[i].name,
				strerror(-err));
			return;	/* their links stay the thread's, closed with it */
		}
	}
	for (size_t i = 0; i < ST_LATE_LINKS; i++) {
		if (!l->links[i])
			continue;
		bpf_link__destroy(*mine[i]);
		*mine[i] = l->links[i];
		l->links[i] = NULL;
	}
	for (size_t i = 0; s->opts.verbose && i < 2; i++)
		if (l->endmaps_verified[i])
			fprintf(stderr, "stacktreed: BPF program %s: %u instructions verified "
				"(%.1f%% of the kernel's %u; loaded on a thread after the attach)\n",
				names[i], l->endmaps_verified[i],
				100.0 * l->endmaps_verified[i] / ST_VERIFIER_LIMIT, ST_VERIFIER_LIMIT);
}

/* A load done: -v's figures, or one line on its failure (sampling goes on
 * with the early program). */
static void late_finish(struct st_session *s)
{
	struct late_load *l = s->late;
	int done;

	pthread_join(l->thread, NULL);
	late_take_endmaps(s, l);
	/* the instance's parse of its object and of the kernel's BTF, freed:
	 * back to the system (a quiet -a session 28 MiB after the load, 40
	 * without; test_quiet_all_session_stays_small) */
	malloc_trim(0);
	done = atomic_load(&l->done);
	s->late = NULL;
	if (done == -ECANCELED) {	/* superseded (late_supersede()): not in */
		late_unref(l);
		return;
	}
	if (done < 0) {
		fprintf(stderr, "stacktreed: cannot load the full timer program (%s, %s): %s: "
			"samples stay on the %s (-v shows the verifier log)\n",
			l->dwarf ? "on_timer_dwarf" : "on_timer_fp", interp_names(l->interp),
			strerror(-done), s->late_in != ST_LATE_NONE ? "one in, without it" :
			l->dwarf || s->early ? "early program, unwound late by the daemon" :
			"early program, without a runtime seen later");
		s->late_failed = true;	/* not again */
	} else {
		char seen[96] = "";

		s->late_in = l->interp;
		st_early__stop(s->early);	/* its events: the timers sample now */
		/* the runtimes seen before it started are walked now */
		if (s->want_ms && s->want_ms <= l->start_ms) {
			snprintf(seen, sizeof(seen), "; a process of it seen %.0f ms after "
				 "the attach, walked %.0f ms later", s->want_ms - s->attach_ms,
				 l->end_ms - s->want_ms);
			s->want_ms = 0;
		}
		if (s->opts.verbose)
			fprintf(stderr, "stacktreed: BPF program %s: %u instructions verified "
				"(%.1f%% of the kernel's %u; walking %s, loaded on a thread in "
				"%.0f ms, in %.0f ms after the attach%s)\n",
				l->dwarf ? "on_timer_dwarf" : "on_timer_fp", l->verified,
				100.0 * l->verified / ST_VERIFIER_LIMIT, ST_VERIFIER_LIMIT,
				interp_names(l->interp), l->end_ms - l->start_ms,
				l->end_ms - s->attach_ms, seen);
	}
	late_unref(l);
}

/* The runtimes seen: a process in py_procs or java_procs (the daemon puts
 * one there once it found the runtime in it). */
static bool map_has_entries(struct bpf_map *m)
{
	__u32 key;

	return bpf_map__fd(m) >= 0 && !bpf_map_get_next_key(bpf_map__fd(m), NULL, &key);
}

/* A superseded load (late_supersede()): its end-maps programs taken once
 * in, its thread let go of once it ended. */
static void late_old_work(struct st_session *s)
{
	struct late_load *l = s->late_old;

	late_take_endmaps(s, l);	/* (its thread may verify on for seconds) */
	if (!l || !atomic_load(&l->done))
		return;
	late_take_endmaps(s, l);	/* (in before its done) */
	pthread_join(l->thread, NULL);
	s->late_old = NULL;
	late_unref(l);
}

/* A runtime seen (want) that the load under way does not walk: that load
 * is left out, and the caller starts one walking it at once, at the
 * daemon's priority, rather than after it (beside two busy CPUs the first
 * load, at ST_LATE_NICE, took the whole of an 8 s Python run). Its thread
 * verifies nothing more after its end-maps programs if it had not begun
 * (they stay its to attach: late_old_work()), else goes on at its nice
 * and puts nothing in. Not when its thread is putting it in already (then
 * the next load follows it), nor with one superseded load still running. */
static bool late_supersede(struct st_session *s, unsigned want)
{
	struct late_load *l = s->late;

	if (s->late_old || !(want & ~l->interp) ||
	    !atomic_compare_exchange_strong(&l->state, &(int){ ST_LATE_LOADING },
					    ST_LATE_SUPERSEDED))
		return false;
	if (s->opts.verbose)
		fprintf(stderr, "stacktreed: the full timer program walking %s left out for one "
			"walking %s (a process of it seen %.0f ms after the attach)\n",
			interp_names(l->interp), interp_names(want), s->want_ms - s->attach_ms);
	s->late_old = l;
	s->late = NULL;
	return true;
}

/* The main loop's turn: a load finished, or one to start (the first, or
 * one for a runtime newly seen, in place of one under way that does not
 * walk it). */
static void late_work(struct st_session *s, bool wait)
{
	unsigned want;
	double t = now_ms();
	int err;

	if (!s->timer || s->timer != s->skel->progs.on_timer)
		return;
	/* tests (test_startup.py): the early object samples the whole run
	 * (STACKTREED_TEST_EARLY=all), or the first MS ms (=MS) */
	if (s->early && getenv("STACKTREED_TEST_EARLY") &&
	    (!strcmp(getenv("STACKTREED_TEST_EARLY"), "all") ||
	     t - s->attach_ms < strtod(getenv("STACKTREED_TEST_EARLY"), NULL)))
		return;
	late_take_endmaps(s, s->late);
	late_old_work(s);
	if (s->late && (wait || atomic_load(&s->late->done)))
		late_finish(s);
	if (s->late_failed)
		return;
	if (t - s->late_checked_ms >= 50) {
		s->late_checked_ms = t;
		if ((s->opts.interpreters & ST_INTERP_PYTHON) &&
		    map_has_entries(s->skel->maps.py_procs))
			s->late_want |= ST_INTERP_PYTHON;
		if ((s->opts.interpreters & ST_INTERP_JAVA) &&
		    map_has_entries(s->skel->maps.java_procs))
			s->late_want |= ST_INTERP_JAVA;
	}
	want = s->late_want & s->opts.interpreters;
	/* a runtime seen whose walker is not in: since when */
	if ((want & ~(s->late_in == ST_LATE_NONE ? 0 : s->late_in)) && !s->want_ms)
		s->want_ms = t;
	if (s->late && !late_supersede(s, want))
		return;
	if (s->late_in != ST_LATE_NONE && !(want & ~s->late_in))
		return;
	if (s->late_in != ST_LATE_NONE)
		want |= s->late_in;
	if ((err = late_start(s, want))) {
		fprintf(stderr, "stacktreed: cannot start loading the full timer program: %s: "
			"samples stay on the %s program\n", strerror(-err),
			s->late_in == ST_LATE_NONE ? "early" : "current");
		s->late_failed = true;
	}
	if (wait && s->late)
		late_finish(s);
}

/* Whether the kernel's BTF names each of names[n] (has[i]): a scan of its
 * string section rather than a parse of its types (btf__load_vmlinux_btf():
 * 0.3-0.4 s on a busy 2-CPU machine, as long as libbpf's own read of it at
 * the load). The names asked for (a tracepoint's typedef, a kfunc) name
 * nothing else. Unread or malformed: none. */
#define ST_VMLINUX_BTF_MAX (256u << 20)
static void kernel_btf_names(const char *const *names, bool *has, size_t n)
{
	FILE *f = fopen("/sys/kernel/btf/vmlinux", "re");
	struct btf_header h;
	char *buf = NULL, pat[128];
	size_t len = 0, got;

	for (size_t i = 0; i < n; i++)
		has[i] = false;
	if (!f)
		return;
	/* sysfs says no size: read it whole, growing */
	for (size_t cap = 8u << 20; cap <= ST_VMLINUX_BTF_MAX; cap *= 2) {
		char *nb = realloc(buf, cap);

		if (!nb)
			break;
		buf = nb;
		len += (got = fread(buf + len, 1, cap - len, f));
		if (len < cap)
			break;
	}
	fclose(f);
	if (!buf || len < sizeof(h))
		goto cleanup;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != BTF_MAGIC || h.hdr_len > len || h.str_off > len - h.hdr_len ||
	    h.str_len > len - h.hdr_len - h.str_off)
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		int pl = snprintf(pat + 1, sizeof(pat) - 1, "%s", names[i]) + 2;

		pat[0] = '\0';	/* "\0name\0": a whole string of the table */
		if (pl <= (int)sizeof(pat))
			has[i] = memmem(buf + h.hdr_len + h.str_off, h.str_len, pat, (size_t)pl) != NULL;
	}
cleanup:
	free(buf);
}

/* kernel_btf_names()' answers, kept for the boot in a file of root's that
 * a reboot clears (a tmpfs): "BOOT_ID\nNAME 0|1\n...". Its scan was 0.05-0.09
 * s of an idle start-up and 0.16-0.38 s of a busy one (strace), every run;
 * the kernel's BTF does not change within a boot. */
#define ST_BTF_NAMES_DIR "/run/stacktreed"
#define ST_BTF_NAMES_PATH ST_BTF_NAMES_DIR "/kernel-btf-names"
#define ST_BTF_NAMES_MAX 4096

static void kernel_btf_names_cached(const char *const *names, bool *has, size_t n)
{
	char boot[64] = "", buf[ST_BTF_NAMES_MAX], tmp[sizeof(ST_BTF_NAMES_PATH) + 32];
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	size_t found = 0, len = 0;
	struct stat st;
	int fd;

	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			boot[0] = 0;
		fclose(f);
	}
	if (!boot[0] || !strchr(boot, '\n'))
		goto scan;
	/* root's, written by no one else: trusted; else scanned */
	fd = open(ST_BTF_NAMES_PATH, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t got = 0;

		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    !(st.st_mode & 022))
			while (len < sizeof(buf) - 1 &&
			       (got = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
				len += (size_t)got;
		close(fd);
	}
	buf[len] = 0;
	if (len && !strncmp(buf, boot, strlen(boot)))
		for (size_t i = 0; i < n; i++) {
			char pat[160];
			const char *at;

			snprintf(pat, sizeof(pat), "\n%s ", names[i]);
			if ((at = strstr(buf, pat)) && (at[strlen(pat)] == '0' || at[strlen(pat)] == '1')) {
				has[i] = at[strlen(pat)] == '1';
				found++;
			}
		}
	if (found == n)
		return;
scan:
	kernel_btf_names(names, has, n);
	if (!boot[0] || !strchr(boot, '\n') || geteuid() != 0)
		return;
	/* best effort: a new file renamed over the old */
	if (mkdir(ST_BTF_NAMES_DIR, 0700) && errno != EEXIST)
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d", ST_BTF_NAMES_PATH, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	len = (size_t)snprintf(buf, sizeof(buf), "%s", boot);
	for (size_t i = 0; i < n && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s %d\n", names[i],
					has[i] ? 1 : 0);
	if (len >= sizeof(buf) || write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		unlink(tmp);
		return;
	}
	close(fd);
	if (rename(tmp, ST_BTF_NAMES_PATH))
		unlink(tmp);
}

/* The scheduler's text from /proc/kallsyms, for the off-CPU program
 * (bpf/offcpu.bpf.h); 0s when not found (or hidden: kptr_restrict). */
static void sched_text(__u64 *start, __u64 *end)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[256], name[128];
	unsigned long long a;
	char t;

	*start = *end = 0;
	if (!f)
		return;
	while ((!*start || !*end) && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127s", &a, &t, name) == 3) {
			if (!strcmp(name, "__sched_text_start"))
				*start = a;
			else if (!strcmp(name, "__sched_text_end"))
				*end = a;
		}
	fclose(f);
}

/* The early object's maps: the session's (user/collect/early.h). */
static int session_map_fd(void *ctx, const char *name)
{
	struct st_session *s = ctx;

	return bpf_object__find_map_fd_by_name(s->skel->obj, name);
}

/* A launched command is sampled from its exec by the early object on
 * per-task events (user/collect/early.h) rather than by on_timer_early
 * on the timers: loading it reads no kernel BTF and verifies some hundreds
 * of instructions (kernel-notes/README.md, "Sampling before the verifier
 * finishes"). Only where its samples can be deferred (the deferred ring:
 * not with --unwind-defer-mb 0); in every --unwind mode: in fp mode the
 * daemon follows the copies' frame pointers (user/collect/unwind/fpcopy.h)
 * and the full fp program defers a thread until its handoff (fp_handoff,
 * early_object_fp()). Not with a filter it does not apply (--comm,
 * --cgroup, -t, -u, -C), nor on kernels without sched_prepare_exec (its
 * samples take their image from proc_images, which must say when an exec
 * is under way). Tests: STACKTREED_NO_EARLY_OBJECT=1, on_timer_early as
 * before. */
static bool early_object_wanted(const struct st_session *s, bool prepare_exec)
{
	const struct st_session_opts *o = &s->opts;

	return s->timer == s->skel->progs.on_timer && o->late_background && !s->late_launch &&
	       o->defer_ring_mb && prepare_exec && !o->comm && !o->cgroup &&
	       !o->ntids && !o->filter_uid && !o->cpus && !getenv("STACKTREED_NO_EARLY_OBJECT");
}

/* --unwind fp with the early object: the deferral's maps, which fp mode
 * does not create otherwise (choose_programs()): the deferred ring and the
 * sample buffer the early object writes, and the handoffs by which the
 * full fp program takes each thread back from the daemon's last path
 * (bpf/sample.bpf.c, fp_handoff; its 1,024 threads at once, as in
 * dwarf/auto: a thread not handed back in time comes back without it,
 * counted). */
static int early_object_fp(struct st_session *s)
{
	struct bpf_map *maps[] = { s->skel->maps.deferred, s->skel->maps.defer_buf,
				   s->skel->maps.handoffs };
	int err = 0;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (!err)
			err = bpf_map__set_autocreate(maps[i], true);
	if (!err)
		err = bpf_map__set_max_entries(s->skel->maps.defer_buf,
					       (__u32)libbpf_num_possible_cpus());
	if (!err)
		s->skel->rodata->fp_handoff = true;
	return err;
}

/* The early object loaded, and set to sample (timer_early); else, said
 * under -v, the command waits for the full program, as --pid does. */
static void early_object_open(struct st_session *s)
{
	struct st_early_opts eo = {
		.kernel = s->opts.kernel, .verbose = s->opts.verbose,
		.map_fd = session_map_fd, .ctx = s,
	};
	__u32 zero = 0, on = ST_TIMER_EARLY_ON;
	int err = st_early__open(&eo, &s->early);

	if (!err && bpf_map__update_elem(s->skel->maps.timer_early, &zero, sizeof(zero), &on,
					 sizeof(on), BPF_ANY))
		err = -errno;
	if (!err)
		return;
	if (s->opts.verbose)
		fprintf(stderr, "stacktreed: cannot load the early sampler (%s): the command "
			"starts once the full timer program is in\n", strerror(-err));
	st_early__free(s->early);
	s->early = NULL;
	s->opts.late_background = false;
}

int st_session__open(const struct st_session_opts *opts, struct st_session **out)
{
	struct st_session *s = calloc(1, sizeof(*s));
	bool prepare_exec, vmas, early_obj;
	struct bpf_map *m;
	bool has[2];
	double t0, t_open, t_btf;
	int err, fp_max;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->stats_fd = -1;
	s->late_in = ST_LATE_NONE;
	s->late_want = opts->late_interp;
	/* tests: the loads waited for at the stop (test_verifier.py's figures
	 * of the full programs); all: every runtime walked at once; launch:
	 * the first full program in before the attach returns (no early
	 * sample of a launched command: tests/integration/test_startup.py) */
	/* a launched CPython waits for the full program before the timers
	 * start, as --pid and -a do (st_session__attach()): the early
	 * object's samples carry no Python frames (the daemon walks none),
	 * and the Python walker took 1.3-4.3 s to come in beside a machine at
	 * load 50-90 (most of a short run's samples). Nor on_timer_early,
	 * which walks Python: its samples' native frames are unwound from a
	 * copy of at most 128 KiB (tried 2026-11-30 at load 14-60: python3
	 * started after 0.9-1.5 s against 2.0-3.2 s, but 460 of the 468 early
	 * samples of test_python_merged_stack_cut_is_truncated, a recursion
	 * through C, were cut, "stack read fault"). A launched JVM does
	 * not wait: the daemon walks a deferred sample's Java frames itself
	 * (st_java__deferred(), the HotSpot rule) once it knows the JVM (from
	 * its libjvm mapping, in its first milliseconds), and the walker's
	 * load starts at the attach at the daemon's priority; before, with a
	 * 128 KiB copy and no such walk, a 3 s deep Java run had 449 of 625
	 * samples stopped at "no CFI" (kernel-notes/README.md, "A launched
	 * JVM on the early object"); in fp mode too, the daemon's walk of a
	 * copy by frame pointers (fpcopy.c) applying the same rule (before
	 * it did, none of a deep Java run's early samples was whole, and fp
	 * mode waited). --event wall, offcpu or faults wait
	 * too: their programs are verified before the launch anyway (not
	 * split), and the early program gives its samples no wall weight
	 * (test_offcpu_and_wall_shares_command: 1.9 of 2.5 s of a command's
	 * wall time folded) */
	if ((opts->late_interp & ~ST_INTERP_JAVA) || opts->wall ||
	    (opts->events & ~(1u << ST_EVENT_CPU)))
		s->opts.late_background = false;
	if (getenv("STACKTREED_TEST_LATE")) {
		s->late_wait = true;
		s->late_launch = !strcmp(getenv("STACKTREED_TEST_LATE"), "launch");
		if (!strcmp(getenv("STACKTREED_TEST_LATE"), "all"))
			s->late_want = ST_INTERP_ALL;
	}
	s->epfd = -1;
	libbpf_set_print(opts->verbose ? libbpf_print : libbpf_quiet);
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		err = s->ncpus ? s->ncpus : -EINVAL;
		fprintf(stderr, "stacktreed: cannot count CPUs: %s\n", strerror(-err));
		goto cleanup;
	}
	t0 = now_ms();
	s->skel = sample_bpf__open();
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "stacktreed: cannot open the BPF programs: %s\n", strerror(errno));
		goto cleanup;
	}
	s->skel->rodata->max_nodes = opts->max_nodes;
	st_ph_pinv_fill((__u64 *)s->skel->rodata->ph_pinv, ST_PATH_SLOTS);
	s->skel->rodata->filter_targets = !opts->all;
	s->skel->rodata->kernel_stacks = opts->kernel;
	s->skel->rodata->self_tgid = opts->include_self ? 0 : (__u32)getpid();
	if (opts->comm) {
		s->skel->rodata->filter_comm = true;
		snprintf((char *)s->skel->rodata->comm_filter, ST_COMM_LEN, "%s", opts->comm);
	}
	s->skel->rodata->filter_cgroup = opts->cgroup != NULL;
	s->skel->rodata->filter_tids = opts->ntids > 0;
	s->skel->rodata->filter_uid = opts->filter_uid;
	s->skel->rodata->uid_filter = opts->uid;
	s->skel->rodata->filter_cpus = opts->cpus != NULL;
	if (opts->cpus)
		memcpy((void *)s->skel->rodata->cpu_filter, opts->cpus, ST_MAX_CPUS / 8);
	s->skel->rodata->unwind_mode = opts->unwind_mode;
	/* --unwind fp: a 32-bit process's walk (bpf_get_stack()) ends at this
	 * many frames, cut there (bpf/walk.bpf.h; unread: the kernel's default) */
	fp_max = sysctl_int("/proc/sys/kernel/perf_event_max_stack");
	s->skel->rodata->fp_kernel_max = fp_max > 0 ? (__u32)fp_max : 127;
	s->skel->rodata->interpreters = opts->interpreters;
	s->skel->rodata->offcpu_wall = opts->wall;
	s->skel->rodata->offcpu_min_ns = opts->offcpu_min_ns;
	s->skel->rodata->offcpu_max_rate = opts->offcpu_max_rate;
	s->skel->rodata->defer_unwind = opts->unwind_mode != ST_UNWIND_FP && opts->defer_ring_mb;
	if (getenv("STACKTREED_TEST_SPARE_EVERY"))	/* tests only: base.bpf.h */
		s->skel->rodata->test_spare_every =
			(__u32)strtoul(getenv("STACKTREED_TEST_SPARE_EVERY"), NULL, 10);
	if (getenv("STACKTREED_TEST_DEFER"))		/* tests only: base.bpf.h */
		s->skel->rodata->test_defer =
			!strcmp(getenv("STACKTREED_TEST_DEFER"), "all") ? ST_TEST_DEFER_ALL :
			!strcmp(getenv("STACKTREED_TEST_DEFER"), "novma") ? ST_TEST_DEFER_NO_VMA : 0;
	if (getenv("STACKTREED_BENCH_PY_STOP"))		/* benchmarks only: base.bpf.h */
		s->skel->rodata->bench_py_stop =
			!strcmp(getenv("STACKTREED_BENCH_PY_STOP"), "walk") ? 1 :
			!strcmp(getenv("STACKTREED_BENCH_PY_STOP"), "report") ? 2 :
			!strcmp(getenv("STACKTREED_BENCH_PY_STOP"), "merge") ? 3 : 0;
	if (getenv("STACKTREED_BENCH_PARTS"))		/* benchmarks only: parts.bpf.h */
		s->skel->rodata->bench_parts_on = true;
	if (getenv("STACKTREED_BENCH_PARTS_TID"))	/* benchmarks only: one thread's too */
		s->skel->rodata->bench_parts_tid =
			(__u32)strtoul(getenv("STACKTREED_BENCH_PARTS_TID"), NULL, 10);
	err = 0;
	if (opts->unwind_mode != ST_UNWIND_FP)	/* fp: not created (choose_programs()) */
		err = bpf_map__set_max_entries(s->skel->maps.unwind_procs,
					       opts->unwind_procs + ST_UNWIND_CHUNK_ENTRIES);
	/* the `deferred` ring itself is the daemon's to create, small, and to
	 * grow up to defer_ring_mb (user/collect/unwind/defer_ring.c) */
	if (!err && s->skel->rodata->defer_unwind)
		err = bpf_map__set_max_entries(s->skel->maps.defer_buf,
					       (__u32)libbpf_num_possible_cpus());
	if (err) {
		fprintf(stderr, "stacktreed: cannot size the unwinding maps: %s\n", strerror(-err));
		goto cleanup;
	}
	/* at least twice as many slots as ids: a table at most half full */
	for (s->nslots = 1; s->nslots < 2 * (size_t)opts->max_nodes; s->nslots <<= 1)
		;
	s->skel->rodata->slot_mask = (__u32)(s->nslots - 1);
	if ((err = bpf_map__set_max_entries(s->skel->maps.node_slots, (__u32)(2 * s->nslots))) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.nodes, 2 * opts->max_nodes + 1)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.targets,
					    opts->max_targets ? opts->max_targets : 1)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.forced_pages,
					    opts->forced_pages ? opts->forced_pages : 1)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.tid_filter,
					    opts->ntids ? (__u32)opts->ntids : 1))) {
		fprintf(stderr, "stacktreed: cannot size the BPF maps: %s\n", strerror(-err));
		goto cleanup;
	}
	if (!s->opts.events)
		s->opts.events = 1u << ST_EVENT_CPU;
	t_open = now_ms() - t0;
	t0 = now_ms();
	/* sched_prepare_exec (kernels from 6.10): marks an exec in progress;
	 * the task VMA iterator: bpf/endmaps.bpf.h */
	kernel_btf_names_cached((const char *const[]){ "btf_trace_sched_prepare_exec",
						 "bpf_iter_task_vma_new" }, has, 2);
	prepare_exec = has[0];
	vmas = has[1];
	t_btf = now_ms() - t0;
	err = choose_programs(s);
	early_obj = early_object_wanted(s, prepare_exec);
	if (!err && early_obj)	/* the early object samples instead */
		err = bpf_program__set_autoload(s->skel->progs.on_timer_early, false);
	if (!err && early_obj && opts->unwind_mode == ST_UNWIND_FP)
		err = early_object_fp(s);
	/* a launched command starts before the end-maps programs are verified:
	 * the first late load attaches them (late_endmaps_load()) */
	s->endmaps_late = vmas && s->timer == s->skel->progs.on_timer &&
			  s->opts.late_background;
	s->endmaps_exec = prepare_exec && vmas;
	/* their maps with them (endmaps_map()) */
	bpf_object__for_each_map(m, s->skel->obj)
		if (!err && s->endmaps_late && endmaps_map(s->skel, m))
			err = bpf_map__set_autocreate(m, false);
	if (err ||
	    (err = bpf_program__set_autoload(s->skel->progs.on_prepare_exec, prepare_exec)) ||
	    (err = bpf_program__set_autoload(s->skel->progs.on_exec_maps,
					     s->endmaps_exec && !s->endmaps_late)) ||
	    (err = bpf_program__set_autoload(s->skel->progs.on_exit_maps,
					     vmas && !s->endmaps_late))) {
		fprintf(stderr, "stacktreed: cannot choose the BPF programs: %s\n", strerror(-err));
		goto cleanup;
	}
	if (s->offcpu)
		sched_text((__u64 *)&s->skel->rodata->sched_text_start,
			   (__u64 *)&s->skel->rodata->sched_text_end);
	/* the early program walks only the runtimes walked from the start
	 * (-- python3: Python; -- true: none, their walkers not verified);
	 * the page-fault and off-CPU programs, full walkers loaded now, need
	 * them all */
	if (s->timer == s->skel->progs.on_timer && !s->fault && !s->offcpu)
		s->skel->rodata->interpreters = opts->interpreters & s->late_want;
	/* a runtime's walker-only caches: with its walker (lazy_runtime()); the
	 * page-fault and off-CPU programs, full walkers, need them all */
	bpf_object__for_each_map(m, s->skel->obj)
		if (!err && lazy_runtime(s->skel, m) &&
		    !lazy_needed(s->skel, m, s->skel->rodata->interpreters,
				 s->fault || s->offcpu))
			err = bpf_map__set_autocreate(m, false);
	if (err) {
		fprintf(stderr, "stacktreed: cannot choose the BPF maps: %s\n", strerror(-err));
		goto cleanup;
	}
	t0 = now_ms();
	err = sample_bpf__load(s->skel);
	if (!err && opts->verbose) {
		fprintf(stderr, "stacktreed: start-up: BPF object opened in %.0f ms, kernel BTF "
			"checked in %.0f ms\n", t_open, t_btf);
		print_verified(s, now_ms() - t0);
	}
	if (err) {
		fprintf(stderr, "stacktreed: cannot load the BPF programs: %s (needs root or "
			"CAP_BPF+CAP_PERFMON, and a kernel with BTF; -v shows the verifier log)\n",
			strerror(-err));
		goto cleanup;
	}
	/* the timers' dispatcher finds the early program in its slot, or the
	 * early object samples the launched command */
	if (early_obj) {
		early_object_open(s);
	} else if (s->timer == s->skel->progs.on_timer) {
		__u32 slot = ST_TIMER_SLOT_EARLY;
		int fd = bpf_program__fd(s->skel->progs.on_timer_early);

		if (bpf_map__update_elem(s->skel->maps.timer_jump, &slot, sizeof(slot), &fd,
					 sizeof(fd), BPF_ANY)) {
			err = -errno;
			fprintf(stderr, "stacktreed: cannot set up the timer's programs (timer_jump): "
				"%s\n", strerror(errno));
			goto cleanup;
		}
	}
	if (opts->cgroup && (err = set_cgroup_filter(s, opts->cgroup)))
		goto cleanup;
	for (size_t i = 0; i < opts->ntids; i++) {
		__u32 tid = (__u32)opts->tids[i];
		__u8 one = 1;

		if (bpf_map__update_elem(s->skel->maps.tid_filter, &tid, sizeof(tid), &one,
					 sizeof(one), BPF_ANY)) {
			err = -errno;
			fprintf(stderr, "stacktreed: cannot set the -t filter: %s\n", strerror(errno));
			goto cleanup;
		}
	}
	s->recs_len = (2 * (size_t)opts->max_nodes + 1) * sizeof(struct st_node_rec);
	s->recs = mmap(NULL, s->recs_len, PROT_READ, MAP_SHARED,
		       bpf_map__fd(s->skel->maps.nodes), 0);
	if (s->recs == MAP_FAILED) {
		err = -errno;
		s->recs = NULL;
		fprintf(stderr, "stacktreed: cannot map the node array: %s\n", strerror(errno));
		goto cleanup;
	}
	s->slots = mmap(NULL, 2 * s->nslots * sizeof(*s->slots), PROT_READ | PROT_WRITE,
			MAP_SHARED, bpf_map__fd(s->skel->maps.node_slots), 0);
	if (s->slots == MAP_FAILED) {
		err = -errno;
		s->slots = NULL;
		fprintf(stderr, "stacktreed: cannot map the node table: %s\n", strerror(errno));
		goto cleanup;
	}
	/* kernel BPF run-time stats, kept on for the session */
	s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	*out = s;
	return 0;
cleanup:
	st_session__free(s);
	return err;
}

void st_session__stop(struct st_session *s)
{
	if (!s)
		return;
	s->stopped = true;	/* the events left are read whole */
	/* tests: the loads finished (their figures printed) before the stop */
	while (s->late_wait && s->late)
		late_work(s, true);
	st_early__stop(s->early);
	bpf_link__destroy(s->fault_link);
	s->fault_link = NULL;
	bpf_link__destroy(s->offcpu_link);
	s->offcpu_link = NULL;
	if (!s->links)
		return;
	for (int i = 0; i < s->ncpus; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
		if (s->perf_fds[i] >= 0)
			close(s->perf_fds[i]);
		s->perf_fds[i] = -1;
	}
}

void st_session__free(struct st_session *s)
{
	if (!s)
		return;
	st_session__stop(s);
	/* a load still under way is left to its thread, which frees it (or
	 * which the process's exit ends: the verifier stops at a fatal signal) */
	if (s->late) {
		pthread_detach(s->late->thread);
		late_unref(s->late);
		s->late = NULL;
	}
	if (s->late_old) {
		pthread_detach(s->late_old->thread);
		late_unref(s->late_old);
		s->late_old = NULL;
	}
	free(s->links);
	free(s->perf_fds);
	ring_buffer__free(s->rb);
	ring_buffer__free(s->rb_rt);
	st_early__free(s->early);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->recs)
		munmap(s->recs, s->recs_len);
	if (s->slots)
		munmap(s->slots, 2 * s->nslots * sizeof(*s->slots));
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	sample_bpf__destroy(s->skel);
	free(s);
}

int st_session__add_target(struct st_session *s, __u32 pid, bool at_exec)
{
	__u8 v = at_exec ? ST_TARGET_AT_EXEC : ST_TARGET_ACTIVE;

	if (at_exec)	/* the launched command: the early object's events' */
		s->launched = (pid_t)pid;
	if (bpf_map__update_elem(s->skel->maps.targets, &pid, sizeof(pid), &v, sizeof(v),
				 BPF_ANY))
		return -errno;
	return 0;
}

/* The events ring's reader. An event's handling can be long (an exec's
 * maps read, a process's deferred samples walked at its exit), and while
 * events keep coming one ring_buffer__consume() does not return: under -a
 * with both CPUs busy and processes starting all the time one read took
 * 8.5-10.3 s, and the loop's other work (snapshots on schedule, the
 * endpoint's windows, the deferred samples' queue) waited. So a read stops
 * after ST_SESSION_EVENTS_BUDGET_MS (the event in hand handled: libbpf has
 * consumed it), and the rest waits for the loop's next turn (the ring's
 * poll is level-triggered: that turn does not wait). */
#define ST_SESSION_EVENTS_BUDGET_MS 100

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct st_session *s = ctx;

	if (!s->events_until)	/* the read's first event */
		s->events_until = now_ms() + ST_SESSION_EVENTS_BUDGET_MS;
	if (size >= sizeof(struct st_event) && s->ev_fn)
		s->ev_fn(s->ev_ctx, data);
	if (!s->stopped && now_ms() > s->events_until)
		return -EAGAIN;	/* (ends ring_buffer__consume() here) */
	return 0;
}

int st_session__deferred_fd(struct st_session *s)
{
	if (!s->skel->rodata->defer_unwind && !s->skel->rodata->fp_handoff)
		return -ENOENT;
	return bpf_map__fd(s->skel->maps.deferred);
}

static bool cpu_online(int cpu)
{
	char path[64];
	FILE *f;
	int on = 1;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	f = fopen(path, "r");
	if (!f)
		return true; /* cpu0 has no "online" file */
	if (fscanf(f, "%d", &on) != 1)
		on = 1;
	fclose(f);
	return on == 1;
}

/* The early object's events could not be had: the timers sample, the
 * command waits for the full program (said under -v). */
static void early_fallback(struct st_session *s, int err)
{
	__u32 zero = 0, off = ST_TIMER_EARLY_OFF;

	if (s->opts.verbose)
		fprintf(stderr, "stacktreed: cannot open the early sampler's events (%s): the "
			"command starts once the full timer program is in\n", strerror(-err));
	st_early__free(s->early);
	s->early = NULL;
	bpf_map__update_elem(s->skel->maps.timer_early, &zero, sizeof(zero), &off, sizeof(off),
			     BPF_ANY);
	s->opts.late_background = false;
}

int st_session__attach(struct st_session *s)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = s->opts.freq,
	};
	struct epoll_event ev = { .events = EPOLLIN };
	int err, attached = 0;

	/* the events ring, and the runtimes' rings in a ring_buffer of their
	 * own, read after it and whole even when on_ringbuf() cut its read
	 * short (a process's events before its code objects' reports) */
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_ringbuf, s, NULL);
	if (s->rb && s->nrings &&
	    !(s->rb_rt = ring_buffer__new(s->rings[0].fd, s->rings[0].fn, s->rings[0].ctx, NULL))) {
		ring_buffer__free(s->rb);
		s->rb = NULL;
	}
	for (unsigned i = 1; s->rb && i < s->nrings; i++)
		if (ring_buffer__add(s->rb_rt, s->rings[i].fd, s->rings[i].fn, s->rings[i].ctx)) {
			ring_buffer__free(s->rb);
			s->rb = NULL;
		}
	s->perf_fds = malloc(s->ncpus * sizeof(*s->perf_fds));
	s->links = calloc(s->ncpus, sizeof(*s->links));
	/* the `deferred` ring has its own reader (st_session__deferred_fd()),
	 * which says through a wake fd that samples came, and a launched
	 * command's end is another: the poll waits on them all */
	if (s->rb && (s->nwake || s->rb_rt) &&
	    ((s->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	     epoll_ctl(s->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb), &ev) ||
	     (s->rb_rt &&
	      epoll_ctl(s->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb_rt), &ev)))) {
		err = -errno;
		fprintf(stderr, "stacktreed: cannot set up the event poll: %s\n", strerror(-err));
		return err;
	}
	for (int i = 0; s->epfd >= 0 && i < s->nwake; i++)
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->wake_fds[i], &ev)) {
			err = -errno;
			fprintf(stderr, "stacktreed: cannot set up the event poll: %s\n",
				strerror(-err));
			return err;
		}
	if (!s->rb || !s->perf_fds || !s->links) {
		fprintf(stderr, "stacktreed: cannot set up the event ring buffer: %s\n",
			strerror(errno));
		return -ENOMEM;
	}
	/* before on_exit and on_prepare_exec: they run first (endmaps.bpf.h) */
	if (bpf_program__autoload(s->skel->progs.on_exit_maps) &&
	    (!(s->skel->links.on_exit_maps = bpf_program__attach(s->skel->progs.on_exit_maps)) ||
	     (bpf_program__autoload(s->skel->progs.on_exec_maps) &&
	      !(s->skel->links.on_exec_maps = bpf_program__attach(s->skel->progs.on_exec_maps)))))
		fprintf(stderr, "stacktreed: cannot attach the programs that keep a process's "
			"mappings at its end (%s): processes gone before their maps are read "
			"stay [unknown]\n", strerror(errno));
	s->skel->links.on_fork = bpf_program__attach(s->skel->progs.on_fork);
	s->skel->links.on_exec = bpf_program__attach(s->skel->progs.on_exec);
	s->skel->links.on_exit = bpf_program__attach(s->skel->progs.on_exit);
	if (bpf_program__autoload(s->skel->progs.on_prepare_exec) &&
	    !(s->skel->links.on_prepare_exec = bpf_program__attach(s->skel->progs.on_prepare_exec)))
		fprintf(stderr, "stacktreed: cannot attach sched_prepare_exec (%s): a process read "
			"in the middle of an exec may lend its new maps to its old image\n",
			strerror(errno));
	if (!(s->skel->links.on_rename = bpf_program__attach(s->skel->progs.on_rename)))
		fprintf(stderr, "stacktreed: cannot attach task_rename (%s): a thread that renames "
			"itself after its first samples keeps its first name until the next node "
			"generation\n", strerror(errno));
	if (s->fault)
		s->fault_link = bpf_program__attach(s->fault);
	if (s->offcpu)
		s->offcpu_link = bpf_program__attach(s->offcpu);

	if (!s->skel->links.on_fork || !s->skel->links.on_exec || !s->skel->links.on_exit ||
	    (s->fault && !s->fault_link) || (s->offcpu && !s->offcpu_link)) {
		err = -errno;
		fprintf(stderr, "stacktreed: cannot attach the fork/exec/exit/page-fault/"
			"sched_switch tracepoints (tp_btf): %s\n",
			strerror(-err));
		return err;
	}
	for (int cpu = 0; cpu < s->ncpus; cpu++)
		s->perf_fds[cpu] = -1;
	for (int cpu = s->ncpus; s->opts.cpus && cpu < ST_MAX_CPUS; cpu++)
		if (s->opts.cpus[cpu / 64] & (1ull << (cpu % 64))) {
			fprintf(stderr, "stacktreed: -C: no CPU %d: this machine has CPUs 0-%d\n",
				cpu, s->ncpus - 1);
			return -ENODEV;
		}
	if (!s->timer)
		return 0;	/* page faults or off-CPU only: no timer */
	/* nobody to hurry (--pid, -a): the timers start with the full program,
	 * as they did before it was loaded late (a target's samples before
	 * 'sampling at' would be on no clock of the caller's) */
	s->attach_ms = now_ms();
	if (s->timer == s->skel->progs.on_timer && !s->opts.late_background)
		late_work(s, true);
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		bool named = s->opts.cpus && cpu < ST_MAX_CPUS &&
			     (s->opts.cpus[cpu / 64] & (1ull << (cpu % 64)));

		if (s->opts.cpus && !named)
			continue;
		if (!cpu_online(cpu)) {
			if (named) {
				fprintf(stderr, "stacktreed: -C: CPU %d is offline: name online "
					"CPUs (/sys/devices/system/cpu/online)\n", cpu);
				return -ENODEV;
			}
			continue;
		}
		s->perf_fds[cpu] = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
						PERF_FLAG_FD_CLOEXEC);
		if (s->perf_fds[cpu] < 0) {
			err = -errno;
			fprintf(stderr, "stacktreed: cannot open a cpu-clock event on CPU %d: %s "
				"(needs CAP_PERFMON, or kernel.perf_event_paranoid <= 0)\n",
				cpu, strerror(errno));
			return err;
		}
		s->links[cpu] = bpf_program__attach_perf_event(s->timer, s->perf_fds[cpu]);
		if (!s->links[cpu]) {
			err = -errno;
			fprintf(stderr, "stacktreed: cannot attach the sampler on CPU %d: %s\n",
				cpu, strerror(errno));
			return err;
		}
		attached++;
	}
	if (!attached)
		return -ENODEV;
	if (s->early && (err = s->launched ? st_early__attach(s->early, s->launched, s->opts.freq) :
					   -ESRCH))
		early_fallback(s, err);
	late_work(s, s->late_launch || !s->opts.late_background);	/* on its thread */
	return 0;
}

int st_session__poll(struct st_session *s, int timeout_ms, st_event_fn fn, void *ctx)
{
	int n;

	s->ev_fn = fn;
	s->ev_ctx = ctx;
	late_work(s, false);
	s->events_until = 0;
	if (s->epfd < 0) {
		n = ring_buffer__poll(s->rb, timeout_ms);
		return n == -EINTR || n == -EAGAIN ? 0 : n;
	}
	/* the events ring or a wake fd (the deferred samples' eventfd, which
	 * the caller resets; the launched command's pidfd): wait for any, then
	 * read the ring */
	{
		struct epoll_event ev[1 + ST_SESSION_WAKE_FDS];

		epoll_wait(s->epfd, ev, 1 + ST_SESSION_WAKE_FDS, timeout_ms);
	}
	n = ring_buffer__consume(s->rb);
	n = n == -EINTR || n == -EAGAIN ? 0 : n;
	if (n >= 0 && s->rb_rt) {
		int m = ring_buffer__consume(s->rb_rt);

		n = m == -EINTR ? n : m < 0 ? m : n + m;
	}
	return n;
}

int st_session__wake_on(struct st_session *s, int fd)
{
	if (fd < 0)
		return -EBADF;
	if (s->nwake >= ST_SESSION_WAKE_FDS)
		return -ENOSPC;
	s->wake_fds[s->nwake++] = fd;
	return 0;
}

double st_session__fill(const struct st_session *s)
{
	__u32 gen = __atomic_load_n(&s->skel->bss->epoch, __ATOMIC_RELAXED) & 1;
	__u32 used = __atomic_load_n(&s->skel->bss->next_id[gen], __ATOMIC_RELAXED);

	return (double)used / (double)s->opts.max_nodes;
}

/* Wait until no program is inside generation gen on any CPU. They run for
 * microseconds in interrupt context; a vCPU stalled by the hypervisor may
 * take longer, which is why this waits rather than sleeping a fixed time. */
static int wait_generation(struct st_session *s, __u32 gen)
{
	struct timespec pause = { .tv_nsec = 100 * 1000 };
	__u64 *vals = calloc(s->ncpus, sizeof(*vals));
	int err = -ETIMEDOUT;

	if (!vals)
		return -ENOMEM;
	for (int i = 0; i < 20000; i++) { /* 2 s at most */
		__u64 sum = 0;

		if (bpf_map__lookup_elem(s->skel->maps.busy_gen, &gen, sizeof(gen), vals,
					 s->ncpus * sizeof(*vals), 0)) {
			err = -errno;
			break;
		}
		for (int c = 0; c < s->ncpus; c++)
			sum += vals[c];
		if (sum == 0) {
			err = 0;
			break;
		}
		nanosleep(&pause, NULL);
	}
	free(vals);
	if (err)
		fprintf(stderr, "stacktreed: generation %u still busy: %s\n", gen, strerror(-err));
	return err;
}

int st_session__drain(struct st_session *s, st_drain_fn fn, void *ctx)
{
	struct sample_bpf__bss *bss = s->skel->bss;
	__u32 old = __atomic_load_n(&bss->epoch, __ATOMIC_ACQUIRE);
	__u32 gen = old & 1, used, first;
	int err;

	/* seq_cst: the store is visible before the counts are read (the programs
	 * count themselves in, then re-read the epoch: see gen_enter()) */
	__atomic_store_n(&bss->epoch, old + 1, __ATOMIC_SEQ_CST);
	err = wait_generation(s, gen);
	if (err)
		return err;
	used = __atomic_load_n(&bss->next_id[gen], __ATOMIC_ACQUIRE);
	if (used > s->opts.max_nodes)
		used = s->opts.max_nodes;
	first = gen * s->opts.max_nodes + 1;
	if (used)
		err = fn(ctx, s->recs + first, first, used);
	/* no program is in this generation until the epoch moves again */
	memset(s->slots + gen * s->nslots, 0, s->nslots * sizeof(*s->slots));
	__atomic_store_n(&bss->next_id[gen], 0, __ATOMIC_RELEASE);
	return err;
}

int st_session__proc_image(struct st_session *s, __u32 pid, __u32 *image)
{
	struct st_proc_image v;

	if (bpf_map__lookup_elem(s->skel->maps.proc_images, &pid, sizeof(pid), &v, sizeof(v), 0))
		return -ENOENT;
	*image = v.image;
	return v.busy ? -EBUSY : 0;
}

void st_session__handoff(struct st_session *s, __u32 tid, const struct st_handoff *h)
{
	/* as BPF compares it: its sums (bpf/pathhash.h) */
	struct st_handoff_sums *v = calloc(1, sizeof(*v));

	if (!v)
		return;	/* the thread comes back without it (counted in BPF) */
	v->seq = h->seq;
	/* a path BPF could not have folded: an empty one (every frame new) */
	if (st_ph_from_path(&v->s, h->addrs, h->flags, h->n))
		v->s.n = 0;
	/* an LRU map: an update only fails on a bad argument */
	bpf_map__update_elem(s->skel->maps.handoffs, &tid, sizeof(tid), v, sizeof(*v), BPF_ANY);
	free(v);
}

void st_session__thread_comm(struct st_session *s, __u32 pid, __u32 tid, __u32 image, char *comm,
			     size_t len)
{
	struct st_comm_key key = { .addr = ((__u64)pid << 32) | tid, .image = image };
	char v[ST_COMM_LEN] = "";

	if (bpf_map__lookup_elem(s->skel->maps.thread_comms, &key, sizeof(key), v, sizeof(v), 0))
		return; /* evicted from the LRU: keep what the caller has */
	v[ST_COMM_LEN - 1] = '\0';
	snprintf(comm, len, "%s", v);
}

void st_session__stats(const struct st_session *s, unsigned ev, __u64 out[ST_STAT__MAX])
{
	__u64 *vals = calloc(s->ncpus, sizeof(__u64));

	memset(out, 0, ST_STAT__MAX * sizeof(__u64));
	if (!vals)
		return;
	for (__u32 k = 0; k < ST_STAT__MAX; k++) {
		__u32 key = ev * ST_STAT__MAX + k;

		if (bpf_map__lookup_elem(s->skel->maps.stats, &key, sizeof(key), vals,
					 s->ncpus * sizeof(__u64), 0))
			continue;
		for (int c = 0; c < s->ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
}

int st_session__runtime(const struct st_session *s, unsigned ev, __u64 *run_ns, __u64 *runs)
{
	struct bpf_program *prog = ev == ST_EVENT_FAULTS ? s->fault :
				   ev == ST_EVENT_OFFCPU ? s->offcpu : s->timer;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	*run_ns = *runs = 0;
	if (!prog)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return -errno;
	/* on when we enabled them, or when kernel.bpf_stats_enabled=1 (the
	 * service sets it; bpf_enable_stats() needs CAP_SYS_ADMIN) */
	if (s->stats_fd < 0 && info.run_cnt == 0)
		return -ENOTSUP;
	*run_ns = info.run_time_ns;
	*runs = info.run_cnt;
	return 0;
}

__u32 st_session__unwind_mode(const struct st_session *s)
{
	return s->opts.unwind_mode;
}

int st_session__map_fd(struct st_session *s, const char *name)
{
	return bpf_object__find_map_fd_by_name(s->skel->obj, name);
}

void st_session__py_procs_changed(struct st_session *s)
{
	s->late_want |= ST_INTERP_PYTHON;	/* a CPython process seen */
	__atomic_fetch_add(&s->skel->bss->py_procs_epoch, 1, __ATOMIC_SEQ_CST);
}

void st_session__java_procs_changed(struct st_session *s)
{
	if (s)
		__atomic_fetch_add(&s->skel->bss->java_procs_epoch, 1, __ATOMIC_SEQ_CST);
}

int st_session__exec_maps(struct st_session *s, __u32 pid, __u32 image, struct st_exec_maps *out)
{
	struct st_exec_key k = { .pid = pid, .image = image };

	if (getenv("STACKTREED_TEST_NO_EXEC_MAPS"))	/* test hook: as before them */
		return -ENOENT;
	if (bpf_map__lookup_elem(s->skel->maps.exec_maps, &k, sizeof(k), out, sizeof(*out), 0))
		return -errno;
	return 0;
}

int st_session__file_path(struct st_session *s, const struct st_file_key *key,
			  struct st_file_path *out)
{
	if (bpf_map__lookup_elem(s->skel->maps.file_paths, key, sizeof(*key), out, sizeof(*out), 0))
		return -errno;
	return 0;
}

int st_session__add_ring(struct st_session *s, int fd, st_ring_fn fn, void *ctx)
{
	if (s->rb || s->nrings >= sizeof(s->rings) / sizeof(s->rings[0]))
		return -EINVAL;
	s->rings[s->nrings].fd = fd;
	s->rings[s->nrings].fn = fn;
	s->rings[s->nrings++].ctx = ctx;
	return 0;
}

int st_session__forced_pages_fd(struct st_session *s)
{
	return bpf_map__fd(s->skel->maps.forced_pages);
}

int st_session__unwind_shards_fd(struct st_session *s, __u32 *slots)
{
	if (s->opts.unwind_mode == ST_UNWIND_FP)
		return -EINVAL;
	*slots = bpf_map__max_entries(s->skel->maps.unwind_shards);
	return bpf_map__fd(s->skel->maps.unwind_shards);
}

int st_session__unwind_proc_pids(struct st_session *s, __u32 *pids, size_t cap, size_t *n)
{
	int fd = bpf_map__fd(s->skel->maps.unwind_procs);
	__u32 key, next;
	void *prev = NULL;

	*n = 0;
	while (*n < cap && !bpf_map_get_next_key(fd, prev, &next)) {
		if (next < ST_UNWIND_CHUNK_KEY(0, 0))	/* not a chunk */
			pids[(*n)++] = next;
		key = next;
		prev = &key;
	}
	return 0;
}

int st_session__unwind_set_proc(struct st_session *s, __u32 pid, const struct st_unwind_proc *p)
{
	if (bpf_map__update_elem(s->skel->maps.unwind_procs, &pid, sizeof(pid), p, sizeof(*p),
				 BPF_ANY))
		return -errno;
	return 0;
}

int st_session__unwind_del_proc(struct st_session *s, __u32 pid)
{
	if (bpf_map__delete_elem(s->skel->maps.unwind_procs, &pid, sizeof(pid), 0))
		return -errno;
	return 0;
}



/* The kernel's own accounting: "memlock:" in /proc/self/fdinfo/FD. */
static size_t map_memlock(int fd)
{
	char path[64], line[128];
	size_t bytes = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %zu", &bytes) == 1)
			break;
	fclose(f);
	return bytes;
}

size_t st_session__map_memory(const struct st_session *s)
{
	struct bpf_map *m;
	size_t total = 0;

	bpf_object__for_each_map(m, s->skel->obj)
		if (bpf_map__fd(m) >= 0)
			total += map_memlock(bpf_map__fd(m));
	return total;
}

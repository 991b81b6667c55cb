/* early.c - the early object: load, per-task events, stop (see early.h). */
#include "user/collect/early.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "early.skel.h"
#include "stacktree.h"

struct st_early {
	struct early_bpf *skel;
	int perf_fd;		/* the launched command's event, or -1 */
	struct bpf_link *link;
};

int st_early__open(const struct st_early_opts *o, struct st_early **out)
{
	struct st_early *e = calloc(1, sizeof(*e));
	struct bpf_map *m;
	int err = 0;

	*out = NULL;
	if (!e)
		return -ENOMEM;
	e->perf_fd = -1;
	if (!(e->skel = early_bpf__open())) {
		err = -errno;
		goto cleanup;
	}
	e->skel->rodata->kernel_stacks = o->kernel;
	bpf_object__for_each_map(m, e->skel->obj) {
		int fd;

		if (err || m == e->skel->maps.rodata)
			continue;
		fd = o->map_fd(o->ctx, bpf_map__name(m));
		err = fd >= 0 ? bpf_map__reuse_fd(m, fd) : bpf_map__set_autocreate(m, false);
	}
	if (err || (err = early_bpf__load(e->skel)))
		goto cleanup;
	if (o->verbose) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(e->skel->progs.on_early), &info, &len))
			fprintf(stderr, "stacktreed: BPF program on_early: %u instructions "
				"verified (the early object, until the full timer program is "
				"in: stacks copied for the daemon)\n", info.verified_insns);
	}
	*out = e;
	return 0;
cleanup:
	st_early__free(e);
	return err ? err : -EINVAL;
}

int st_early__attach(struct st_early *e, pid_t pid, __u32 freq)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = freq,
		.inherit = 1,		/* its children's copies run the program too */
		.disabled = 1,
		.enable_on_exec = 1,
	};
	int err;

	if (e->perf_fd >= 0)
		return -EBUSY;
	e->perf_fd = (int)syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (e->perf_fd < 0) {
		err = -errno;
		e->perf_fd = -1;
		return err;
	}
	if (!(e->link = bpf_program__attach_perf_event(e->skel->progs.on_early, e->perf_fd))) {
		err = -errno;
		goto fail;
	}
	/* the attach enables it: off again until the command's exec */
	if (ioctl(e->perf_fd, PERF_EVENT_IOC_DISABLE, 0)) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	st_early__stop(e);
	return err;
}

void st_early__stop(struct st_early *e)
{
	if (!e)
		return;
	/* the event closed with its inherited copies: by the link's
	 * destruction when there is one (libbpf's perf link owns the fd) */
	if (e->link)
		bpf_link__destroy(e->link);
	else if (e->perf_fd >= 0)
		close(e->perf_fd);
	e->link = NULL;
	e->perf_fd = -1;
}

void st_early__free(struct st_early *e)
{
	if (!e)
		return;
	st_early__stop(e);
	early_bpf__destroy(e->skel);
	free(e);
}

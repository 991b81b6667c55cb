/* python.c - CPython processes and their code objects, for the daemon
 * (see python.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/budget.h"
#include "common/strtab.h"
#include "user/collect/procmaps.h"
#include "user/collect/runtimes/python/pycode.h"
#include "user/collect/runtimes/python/pyoffsets.h"
#include "user/collect/runtimes/python/pyproc.h"
#include "user/collect/runtimes/python/python.h"
#include "user/collect/session.h"
#include "common/tree.h"
#include "common/u64map.h"

#define KEY(pid, image) ((__u64)(image) << 32 | (pid))

struct pycode {
	const char *qualname, *file;	/* interned */
	__u64 ident;			/* st_py_ident() of the object read */
	__u32 firstlineno;
	__u32 len;
	__u8 *table;
};

struct pyproc {
	__u32 pid, image;
	bool found;			/* its interpreter found (p): its code objects are read */
	bool pushed;			/* p is py_procs' entry for pid now (an exec or exit
					 * event deletes it: pushed again at the next probe) */
	struct st_py_proc p;
	struct st_u64map *codes;	/* code address -> pycode */
};

struct st_python {
	struct st_session *sess;
	int procs_fd, stats_fd;
	struct st_strtab *strs;
	struct st_u64map *procs;	/* KEY(pid, image) -> pyproc */
	struct st_u64map *said;		/* pid + 1 -> (void *)1: unsupported version said */
	struct st_u64map *live;		/* pid + 1 -> the pyproc pushed last for pid */
	__u64 processes, unsupported, codes, code_failed, code_dropped, code_renamed, lines_lost;
	__u64 table_bytes;
	struct st_budget *budget;	/* the daemon's (ST_BUDGET_PYCODE), or NULL */
	bool copies_only;		/* test hook: code objects from BPF's copies alone */
};

/* The code cache's bytes, told to the daemon's budget. */
static void budget_sync(struct st_python *py)
{
	st_budget__set(py->budget, ST_BUDGET_PYCODE,
		       py->codes * sizeof(struct pycode) + py->table_bytes);
}

void st_python__budget(struct st_python *py, struct st_budget *b)
{
	if (!py)
		return;
	py->budget = b;
	budget_sync(py);
}

static struct pyproc *proc_get(struct st_python *py, __u32 pid, __u32 image)
{
	struct pyproc *pp = st_u64map__get(py->procs, KEY(pid, image));

	if (pp)
		return pp;
	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return NULL;
	pp->pid = pid;
	pp->image = image;
	pp->codes = st_u64map__new();
	if (!pp->codes || st_u64map__put(py->procs, KEY(pid, image), pp)) {
		st_u64map__free(pp->codes);
		free(pp);
		return NULL;
	}
	return pp;
}

/* A code object BPF met for the first time at its address: read it now. */
static int on_code(void *ctx, void *data, size_t size)
{
	const struct st_py_event *e = data;
	struct st_python *py = ctx;
	struct st_py_snaps sn;
	struct st_py_code c;
	struct pycode *pc, *old;
	struct pyproc *pp;
	pid_t pid;

	if (size < sizeof(*e))
		return 0;
	pp = st_u64map__get(py->procs, KEY(e->pid, e->image));
	if (!pp)	/* found before the kernel knew its image (as st_python__frame()) */
		pp = st_u64map__get(py->procs, KEY(e->pid, ST_UNWIND_ANY_IMAGE));
	if (!pp || !pp->found || !e->code || !e->key)
		return 0;
	old = st_u64map__get(pp->codes, e->key);
	if (old && old->ident == e->ident)
		return 0;	/* reported again (py_codes forgot it): the same object */
	if (py->codes >= ST_PY_MAX_CODES || py->table_bytes >= ST_PY_MAX_TABLE_BYTES ||
	    st_budget__charge(py->budget, ST_BUDGET_PYCODE, sizeof(*pc))) {
		py->code_dropped++;
		return 0;
	}
	pid = (pid_t)e->pid;
	/* from BPF's copies, taken at the sample; the process's memory for
	 * what they miss (a long name, a table over ST_PY_SNAP_TABLE) */
	sn.e = e;
	sn.rd = py->copies_only ? NULL : st_py_read_pid;
	sn.arg = &pid;
	if (st_py_code__read(&pp->p.l, pp->p.code_type, st_py_read_snaps, &sn, e->code, &c)) {
		py->code_failed++;
		budget_sync(py);
		return 0;
	}
	if (c.lines_lost)
		py->lines_lost++;
	pc = calloc(1, sizeof(*pc));
	if (pc) {
		pc->ident = e->ident;
		pc->qualname = st_strtab__intern(py->strs, c.qualname);
		pc->file = st_strtab__intern(py->strs, c.filename);
		pc->firstlineno = c.firstlineno;
		pc->table = c.linetable;
		pc->len = c.linetable_len;
		c.linetable = NULL;
	}
	if (!pc || !pc->qualname || !pc->file || st_u64map__put(pp->codes, e->key, pc)) {
		if (pc)
			free(pc->table);
		free(pc);
		st_py_code__release(&c);
		py->code_dropped++;
		budget_sync(py);
		return 0;
	}
	py->codes++;
	py->table_bytes += pc->len;
	if (old) {	/* its address reused past ST_PY_GENS objects: the newest
			 * names the key, the samples of the older ones with it too */
		py->codes--;
		py->table_bytes -= old->len;
		free(old->table);
		free(old);
		py->code_renamed++;
	}
	budget_sync(py);
	return 0;
}

struct st_python *st_python__new(struct st_session *s)
{
	struct st_python *py = calloc(1, sizeof(*py));
	int events_fd, err;

	if (!py)
		return NULL;
	py->sess = s;
	/* test hook (tests/integration/test_python.py): never read the
	 * process's memory for a code object, BPF's copies only */
	py->copies_only = getenv("STACKTREED_TEST_PY_COPIES_ONLY") != NULL;
	py->procs_fd = st_session__map_fd(s, "py_procs");
	py->stats_fd = st_session__map_fd(s, "py_stats");
	events_fd = st_session__map_fd(s, "py_events");
	py->strs = st_strtab__new();
	py->procs = st_u64map__new();
	py->said = st_u64map__new();
	py->live = st_u64map__new();
	if (py->procs_fd < 0 || py->stats_fd < 0 || events_fd < 0 || !py->strs || !py->procs ||
	    !py->said || !py->live) {
		err = py->procs_fd < 0 ? py->procs_fd : events_fd < 0 ? events_fd : -ENOMEM;
		goto fail;
	}
	err = st_session__add_ring(s, events_fd, on_code, py);
	if (err)
		goto fail;
	return py;
fail:
	st_python__free(py);
	errno = -err;
	return NULL;
}

void st_python__free(struct st_python *py)
{
	struct pyproc *pp;
	struct pycode *pc;
	size_t pos = 0;

	if (!py)
		return;
	st_budget__set(py->budget, ST_BUDGET_PYCODE, 0);
	while (py->procs && (pp = st_u64map__next(py->procs, &pos, NULL))) {
		size_t cpos = 0;

		while ((pc = st_u64map__next(pp->codes, &cpos, NULL))) {
			free(pc->table);
			free(pc);
		}
		st_u64map__free(pp->codes);
		free(pp);
	}
	st_u64map__free(py->procs);
	st_u64map__free(py->said);
	st_u64map__free(py->live);
	st_strtab__free(py->strs);
	free(py);
}

/* Test hook (tests/integration/test_python.py makes the exec race
 * deterministic): with STACKTREED_TEST_STOP_BEFORE_PY_PROBE=TEXT in the
 * environment, the daemon stops itself (SIGSTOP) before probing a process
 * whose comm contains TEXT (st_procmaps__test_stop()). */
static void test_stop(__u32 pid)
{
	const char *hook = "STACKTREED_TEST_STOP_BEFORE_PY_PROBE";
	char path[64], comm[32] = "";
	FILE *f;

	if (!getenv(hook))
		return;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (!(f = fopen(path, "re")))
		return;
	if (fgets(comm, sizeof(comm), f))
		st_procmaps__test_stop(hook, comm);
	fclose(f);
}

void st_python__probe(struct st_python *py, __u32 pid)
{
	struct st_py_proc p;
	struct pyproc *pp, *old;
	__u32 image = ST_UNWIND_ANY_IMAGE, version;
	char v[16];
	int r;

	if (!py)
		return;
	test_stop(pid);
	r = st_session__proc_image(py->sess, pid, &image);
	if (r == -EBUSY)	/* inside an exec: the maps may be either image's (the
				 * old one's layout under ANY would be walked in the
				 * new program); the exec's own refresh probes again */
		return;
	if (r)
		image = ST_UNWIND_ANY_IMAGE;
	r = st_py_proc__probe((int)pid, &p, &version);
	if (r != ST_PY_PROBE_OK && r != ST_PY_PROBE_UNSUPPORTED)
		return;
	if (r == ST_PY_PROBE_UNSUPPORTED) {
		if (!st_u64map__get(py->said, (__u64)pid + 1) &&
		    !st_u64map__put(py->said, (__u64)pid + 1, (void *)1)) {
			fprintf(stderr, "stacktreed: python %s in pid %u: not supported, native "
				"frames only\n", st_py_version__str(version, v, sizeof(v)), pid);
			py->unsupported++;
		}
		return;
	}
	pp = proc_get(py, pid, image);
	if (!pp)
		return;
	p.image = image;
	/* found and still in py_procs: nothing new. Found but deleted since
	 * (the probe saw the new program before the daemon read its exec
	 * event, whose st_python__exited() deleted the entry): pushed again,
	 * or the process is never walked again */
	if (pp->found && pp->pushed && !memcmp(&pp->p, &p, sizeof(p)))
		return;
	if (bpf_map_update_elem(py->procs_fd, &pid, &p, BPF_ANY)) {
		fprintf(stderr, "stacktreed: cannot follow python in pid %u: %s (py_procs)\n", pid,
			strerror(errno));
		return;
	}
	st_session__py_procs_changed(py->sess);
	if (!pp->found)
		py->processes++;
	pp->p = p;
	pp->found = true;
	/* the pid's entry is this image's now, no other's */
	if ((old = st_u64map__get(py->live, (__u64)pid + 1)) && old != pp)
		old->pushed = false;
	/* untracked (no memory): pushed again at every probe, never left out */
	pp->pushed = !st_u64map__put(py->live, (__u64)pid + 1, pp);
}

void st_python__exited(struct st_python *py, __u32 pid)
{
	struct pyproc *pp;

	if (!py)
		return;
	if (!bpf_map_delete_elem(py->procs_fd, &pid))
		st_session__py_procs_changed(py->sess);
	if ((pp = st_u64map__get(py->live, (__u64)pid + 1)))
		pp->pushed = false;
}

int st_python__frame(const struct st_python *py, __u32 pid, __u32 image, __u64 addr,
		     const char **qualname, const char **file, __u32 *line)
{
	const struct pyproc *pp = py ? st_u64map__get(py->procs, KEY(pid, image)) : NULL;
	const struct pycode *pc;

	if (!pp && py)	/* found before the kernel knew its image */
		pp = st_u64map__get(py->procs, KEY(pid, ST_UNWIND_ANY_IMAGE));
	pc = pp ? st_u64map__get(pp->codes, ST_PY_CODE(addr)) : NULL;
	if (!pc)
		return -ENOENT;
	*qualname = pc->qualname;
	*file = pc->file;
	*line = st_py_code__line(&pp->p.l, pc->table, pc->len, pc->firstlineno, ST_PY_INDEX(addr));
	if (!*line)
		*line = pc->firstlineno;
	return 0;
}

struct st_frame st_python__symbolize(const struct st_python *py, __u32 pid, __u32 image,
				     const struct st_frame *raw, struct st_strtab *strs)
{
	struct st_frame f = *raw;
	const char *q = NULL, *file = NULL;
	__u32 line = 0;

	f.module = st_strtab__intern(strs, ST_PYTHON_MODULE);
	f.addr = ST_PY_CODE(raw->addr);
	f.offset = 0;
	if (st_python__frame(py, pid, image, raw->addr, &q, &file, &line)) {
		f.function = st_strtab__intern(strs, "[python code]");
		return f;
	}
	f.function = st_strtab__intern(strs, q);
	f.file = st_strtab__intern(strs, file);
	f.line = line;
	f.offset = line;
	return f;
}

int st_python__stats(const struct st_python *py, struct st_python_stats *out)
{
	int ncpus = libbpf_num_possible_cpus();
	struct st_py_counts *v;
	__u32 zero = 0;

	memset(out, 0, sizeof(*out));
	if (!py || ncpus <= 0)
		return 0;
	v = calloc((size_t)ncpus, sizeof(*v));	/* (8-byte multiple: a per-CPU value each) */
	if (!v)
		return -ENOMEM;
	if (!bpf_map_lookup_elem(py->stats_fd, &zero, v))
		for (int c = 0; c < ncpus; c++)
			for (__u32 k = 0; k < ST_PY_STAT__MAX; k++)
				out->bpf[k] += v[c].n[k];
	free(v);
	out->processes = py->processes;
	out->unsupported = py->unsupported;
	out->codes = py->codes;
	out->code_failed = py->code_failed;
	out->code_dropped = py->code_dropped;
	out->code_renamed = py->code_renamed;
	out->lines_lost = py->lines_lost;
	return 0;
}

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
#include "common/lru.h"
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

/* One code object's names and table, in one allocation (what it is
 * charged: the budget's ST_BUDGET_PYCODE part). */
struct pycode {
	struct st_lru_link lru;		/* on its process's list */
	struct pyproc *pp;
	__u64 key;			/* the code key it is kept under */
	__u64 ident;			/* st_py_ident() of the object read */
	const char *qualname, *file;	/* in data */
	__u8 *table;			/* in data (NULL: none) */
	size_t bytes;			/* charged */
	__u32 firstlineno;
	__u32 len;
	char data[];
};

struct pyproc {
	__u32 pid, image;
	bool found;			/* its interpreter found (p): its code objects are read */
	bool pushed;			/* p is py_procs' entry for pid now (an exec or exit
					 * event deletes it: pushed again at the next probe) */
	bool retired;			/* it exited or exec'd: freed at the next reset */
	struct st_py_proc p;
	struct st_u64map *codes;	/* an index: code key -> pycode */
	struct st_lru lru;		/* its codes, the least recently used last */
	size_t bytes;			/* its codes' bytes */
};

struct st_python {
	struct st_session *sess;
	int procs_fd, stats_fd;
	struct st_u64map *procs;	/* KEY(pid, image) -> pyproc */
	struct st_u64map *said;		/* pid + 1 -> (void *)1: unsupported version said */
	struct st_u64map *live;		/* pid + 1 -> the pyproc pushed last for pid */
	__u64 processes, unsupported, codes, code_failed, code_dropped, code_renamed, lines_lost;
	__u64 code_evicted, procs_freed;
	size_t held;			/* codes kept now */
	size_t bytes;			/* the codes' and their tables' (ST_BUDGET_PYCODE) */
	size_t share;			/* the most bytes may hold */
	struct st_budget *budget;	/* the daemon's (ST_BUDGET_PYCODE), or NULL */
	bool copies_only;		/* test hook: code objects from BPF's copies alone */
};

/* What a pyproc and its table cost besides its codes. */
static size_t proc_bytes(const struct pyproc *pp)
{
	return sizeof(*pp) + st_u64map__memory(pp->codes);
}

/* A code's key in its process's index. */
static bool is_code(const void *value, const void *key)
{
	return ((const struct pycode *)value)->key == *(const __u64 *)key;
}

/* Take pc out of its process's index and list, uncharge and free it. */
static void code_free(struct st_python *py, struct pycode *pc)
{
	struct pyproc *pp = pc->pp;

	st_u64map__remove(pp->codes, pc->key, is_code, &pc->key);
	st_lru__unlink(&pp->lru, &pc->lru);
	pp->bytes -= pc->bytes;
	py->bytes -= pc->bytes;
	py->held--;
	st_budget__uncharge(py->budget, ST_BUDGET_PYCODE, pc->bytes);
	free(pc);
}

/* Free the least recently used codes of the process holding the most,
 * until need bytes are freed or none is left; returns the bytes freed. A
 * flood of fresh code objects evicts its own process's first. */
static size_t evict(struct st_python *py, size_t need)
{
	size_t freed = 0;

	while (freed < need) {
		struct pyproc *pp, *big = NULL;
		size_t pos = 0, batch;

		while ((pp = st_u64map__next(py->procs, &pos, NULL)))
			if (pp->lru.count && (!big || pp->bytes > big->bytes))
				big = pp;
		if (!big)
			break;
		/* a sixteenth of the share at a time: one scan of the processes
		 * per batch, not per code */
		batch = need - freed > py->share / 16 ? need - freed : py->share / 16;
		for (size_t got = 0; got < batch && big->lru.count;) {
			struct pycode *pc = st_lru_entry(st_lru__oldest(&big->lru), struct pycode, lru);

			got += pc->bytes;
			freed += pc->bytes;
			code_free(py, pc);
			py->code_evicted++;
		}
	}
	return freed;
}

/* The budget's evictor of ST_BUDGET_PYCODE. */
static size_t on_evict(void *ctx, size_t need)
{
	return evict(ctx, need);
}

void st_python__budget(struct st_python *py, struct st_budget *b)
{
	struct st_budget_stats bs;

	if (!py)
		return;
	if (py->budget) {
		st_budget__uncharge(py->budget, ST_BUDGET_PYCODE, py->bytes);
		st_budget__on_evict(py->budget, ST_BUDGET_PYCODE, NULL, NULL);
	}
	py->budget = b;
	st_budget__stats(b, &bs);
	py->share = b ? bs.limit / ST_PY_SHARE_DIV : ST_PY_MAX_BYTES;
	if (!b)
		return;
	st_budget__on_evict(b, ST_BUDGET_PYCODE, on_evict, py);
	st_budget__set(b, ST_BUDGET_PYCODE, 0);
	if (py->bytes > py->share)
		evict(py, py->bytes - py->share);
	st_budget__set(b, ST_BUDGET_PYCODE, py->bytes);
}

/* pp's table grew (or shrank) from before bytes: its part follows. */
static void proc_resized(struct st_python *py, struct pyproc *pp, size_t before)
{
	size_t now = proc_bytes(pp);

	py->bytes = py->bytes - before + now;
	if (now > before)
		st_budget__set(py->budget, ST_BUDGET_PYCODE, py->bytes);
	else
		st_budget__uncharge(py->budget, ST_BUDGET_PYCODE, before - now);
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
	proc_resized(py, pp, 0);
	return pp;
}

/* Free pp, its codes and its table (it is out of py->procs, or about to be). */
static void proc_free(struct st_python *py, struct pyproc *pp)
{
	struct st_lru_link *l;

	while ((l = st_lru__oldest(&pp->lru)))
		code_free(py, st_lru_entry(l, struct pycode, lru));
	py->bytes -= proc_bytes(pp);
	st_budget__uncharge(py->budget, ST_BUDGET_PYCODE, proc_bytes(pp));
	if (st_u64map__get(py->live, (__u64)pp->pid + 1) == pp)
		st_u64map__put(py->live, (__u64)pp->pid + 1, NULL);
	st_u64map__free(pp->codes);
	free(pp);
}

/* A code object BPF met for the first time at its address: read it now,
 * keep it within the share (the least recently used codes of the process
 * holding most make room) and the budget. */
static int on_code(void *ctx, void *data, size_t size)
{
	const struct st_py_event *e = data;
	struct st_python *py = ctx;
	struct st_py_snaps sn;
	struct st_py_code c;
	struct pycode *pc, *old;
	struct pyproc *pp;
	size_t qlen, flen, bytes, before;
	pid_t pid;

	if (size < sizeof(*e))
		return 0;
	pp = st_u64map__get(py->procs, KEY(e->pid, e->image));
	if (!pp)	/* found before the kernel knew its image (as st_python__frame()) */
		pp = st_u64map__get(py->procs, KEY(e->pid, ST_UNWIND_ANY_IMAGE));
	if (!pp || !pp->found || !e->code || !e->key)
		return 0;
	old = st_u64map__find(pp->codes, e->key, is_code, &e->key);
	if (old && old->ident == e->ident) {
		st_lru__touch(&pp->lru, &old->lru);
		return 0;	/* reported again (py_codes forgot it): the same object */
	}
	pid = (pid_t)e->pid;
	/* from BPF's copies, taken at the sample; the process's memory for
	 * what they miss (a long name, a table over ST_PY_SNAP_TABLE) */
	sn.e = e;
	sn.rd = py->copies_only ? NULL : st_py_read_pid;
	sn.arg = &pid;
	if (st_py_code__read(&pp->p.l, pp->p.code_type, st_py_read_snaps, &sn, e->code, &c)) {
		py->code_failed++;
		return 0;
	}
	if (c.lines_lost)
		py->lines_lost++;
	if (old) {	/* its address reused past ST_PY_GENS objects: the newest
			 * names the key, the samples of the older ones with it too */
		code_free(py, old);
		py->code_renamed++;
	}
	qlen = strnlen(c.qualname, sizeof(c.qualname) - 1) + 1;
	flen = strnlen(c.filename, sizeof(c.filename) - 1) + 1;
	bytes = sizeof(*pc) + qlen + flen + c.linetable_len;
	if (py->bytes + bytes > py->share)
		evict(py, py->bytes + bytes - py->share);
	if (py->bytes + bytes > py->share)	/* one code over the whole share */
		st_budget__refused(py->budget, ST_BUDGET_PYCODE);
	if (py->bytes + bytes > py->share ||
	    st_budget__charge(py->budget, ST_BUDGET_PYCODE, bytes)) {
		st_py_code__release(&c);
		py->code_dropped++;
		return 0;
	}
	pc = malloc(bytes);
	before = proc_bytes(pp);
	if (!pc || st_u64map__add(pp->codes, e->key, pc)) {
		free(pc);
		st_py_code__release(&c);
		st_budget__uncharge(py->budget, ST_BUDGET_PYCODE, bytes);
		py->code_dropped++;
		return 0;
	}
	pc->pp = pp;
	pc->key = e->key;
	pc->ident = e->ident;
	pc->bytes = bytes;
	pc->firstlineno = c.firstlineno;
	pc->len = c.linetable_len;
	memcpy(pc->data, c.qualname, qlen - 1);
	pc->data[qlen - 1] = '\0';
	memcpy(pc->data + qlen, c.filename, flen - 1);
	pc->data[qlen + flen - 1] = '\0';
	pc->qualname = pc->data;
	pc->file = pc->data + qlen;
	pc->table = c.linetable_len ? (__u8 *)pc->data + qlen + flen : NULL;
	if (c.linetable_len)
		memcpy(pc->table, c.linetable, c.linetable_len);
	st_py_code__release(&c);
	st_lru__push(&pp->lru, &pc->lru);
	pp->bytes += bytes;
	py->bytes += bytes;
	py->held++;
	py->codes++;
	/* its table grew: within the share still (pc may go, the oldest) */
	proc_resized(py, pp, before);
	if (py->bytes > py->share)
		evict(py, py->bytes - py->share);
	return 0;
}

struct st_python *st_python__new(struct st_session *s)
{
	struct st_python *py = calloc(1, sizeof(*py));
	int events_fd, err;

	if (!py)
		return NULL;
	py->sess = s;
	py->share = ST_PY_MAX_BYTES;
	/* test hook (tests/integration/test_python.py): never read the
	 * process's memory for a code object, BPF's copies only */
	py->copies_only = getenv("STACKTREED_TEST_PY_COPIES_ONLY") != NULL;
	py->procs_fd = st_session__map_fd(s, "py_procs");
	py->stats_fd = st_session__map_fd(s, "py_stats");
	events_fd = st_session__map_fd(s, "py_events");
	py->procs = st_u64map__new();
	py->said = st_u64map__new();
	py->live = st_u64map__new();
	if (py->procs_fd < 0 || py->stats_fd < 0 || events_fd < 0 || !py->procs ||
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
	size_t pos = 0;

	if (!py)
		return;
	while (py->procs && (pp = st_u64map__next(py->procs, &pos, NULL)))
		proc_free(py, pp);
	st_budget__set(py->budget, ST_BUDGET_PYCODE, 0);
	st_budget__on_evict(py->budget, ST_BUDGET_PYCODE, NULL, NULL);
	st_u64map__free(py->procs);
	st_u64map__free(py->said);
	st_u64map__free(py->live);
	free(py);
}

void st_python__reset(struct st_python *py)
{
	struct st_u64map *keep;
	struct pyproc *pp;
	size_t pos = 0;
	__u64 key;

	if (!py || !(keep = st_u64map__new()))
		return;	/* on ENOMEM: freed at a later reset */
	while ((pp = st_u64map__next(py->procs, &pos, &key)))
		if (!pp->retired && st_u64map__put(keep, key, pp)) {
			st_u64map__free(keep);
			return;
		}
	pos = 0;
	while ((pp = st_u64map__next(py->procs, &pos, NULL)))
		if (pp->retired) {
			proc_free(py, pp);
			py->procs_freed++;
		}
	st_u64map__free(py->procs);
	py->procs = keep;
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
	pp->retired = false;	/* a new process under an exited one's key: kept */
	/* the pid's entry is this image's now, no other's: the other image's
	 * codes go at the next reset (its samples are in this interval) */
	if ((old = st_u64map__get(py->live, (__u64)pid + 1)) && old != pp) {
		old->pushed = false;
		old->retired = true;
	}
	/* untracked (no memory): pushed again at every probe, never left out */
	pp->pushed = !st_u64map__put(py->live, (__u64)pid + 1, pp);
}

void st_python__exited(struct st_python *py, __u32 pid, const __u32 *image)
{
	struct pyproc *pp;

	if (!py)
		return;
	if (!bpf_map_delete_elem(py->procs_fd, &pid))
		st_session__py_procs_changed(py->sess);
	if ((pp = st_u64map__get(py->live, (__u64)pid + 1))) {
		pp->pushed = false;
		/* an exec's new image may have been probed before its event */
		if (!image || pp->image != *image)
			pp->retired = true;
	}
	if ((pp = st_u64map__get(py->procs, KEY(pid, ST_UNWIND_ANY_IMAGE))))
		pp->retired = true;
	if (!image)	/* the pid may come back: another process */
		st_u64map__put(py->said, (__u64)pid + 1, NULL);
}

int st_python__frame(struct st_python *py, __u32 pid, __u32 image, __u64 addr,
		     const char **qualname, const char **file, __u32 *line)
{
	struct pyproc *pp = py ? st_u64map__get(py->procs, KEY(pid, image)) : NULL;
	__u64 key = ST_PY_CODE(addr);
	struct pycode *pc;

	if (!pp && py)	/* found before the kernel knew its image */
		pp = st_u64map__get(py->procs, KEY(pid, ST_UNWIND_ANY_IMAGE));
	pc = pp && key ? st_u64map__find(pp->codes, key, is_code, &key) : NULL;
	if (!pc)
		return -ENOENT;
	st_lru__touch(&pp->lru, &pc->lru);	/* named in a profile: used */
	*qualname = pc->qualname;
	*file = pc->file;
	*line = st_py_code__line(&pp->p.l, pc->table, pc->len, pc->firstlineno, ST_PY_INDEX(addr));
	if (!*line)
		*line = pc->firstlineno;
	return 0;
}

struct st_frame st_python__symbolize(struct st_python *py, __u32 pid, __u32 image,
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
	out->code_evicted = py->code_evicted;
	out->procs_freed = py->procs_freed;
	out->bytes = py->bytes;
	out->share = py->share;
	out->held = py->held;
	return 0;
}

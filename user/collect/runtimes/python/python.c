/* python.c - CPython processes and their code objects, for the daemon
 * (see python.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/pyexec.h"
#include "common/budget.h"
#include "common/hash.h"
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

/* py_exes files, as the daemon's table has them */
enum { EXE_PUT = 1, EXE_REFUSED = 2 };	/* registered; refused (a probe disagreed) */

struct st_python {
	struct st_session *sess;
	int procs_fd, stats_fd, exes_fd;
	struct st_u64map *procs;	/* KEY(pid, image) -> pyproc */
	struct st_u64map *said;		/* pid + 1 -> (void *)1: unsupported version said */
	struct st_u64map *live;		/* pid + 1 -> the pyproc pushed last for pid */
	struct st_u64map *exes;		/* hash of a py_exes key -> EXE_PUT or EXE_REFUSED */
	__u64 exes_put, exes_full, exec_agreed, exec_wrong, exec_adopted;
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

/* pid's entry is pp's now, no other image's: the other's codes go at the
 * next reset (its samples are in this interval). Untracked (no memory):
 * pushed again at every probe, never left out. */
static void proc_live(struct st_python *py, __u32 pid, struct pyproc *pp)
{
	struct pyproc *old = st_u64map__get(py->live, (__u64)pid + 1);

	if (old && old != pp) {
		old->pushed = false;
		old->retired = true;
	}
	pp->pushed = !st_u64map__put(py->live, (__u64)pid + 1, pp);
}

/* ---- executables walked from their exec (py_exes, bpf/pyexec.h) ---- */

/* The py_exes key of the file at path (a /proc link is followed): 0, or
 * a negative errno. */
static int exe_key(const char *path, struct st_py_exe_key *k, struct stat *st)
{
	if (stat(path, st))
		return -errno;
	memset(k, 0, sizeof(*k));
	k->ino = st->st_ino;
	k->size = (__u64)st->st_size;
	k->mtime = st->st_mtim.tv_sec;
	k->dev = (__u32)((major(st->st_dev) << 20) | minor(st->st_dev));
	return 0;
}

static __u64 exe_hash(const struct st_py_exe_key *k)
{
	return st_hash_bytes(k, sizeof(*k), 0) | 1;
}

/* Put file k's template in py_exes: once per file, never one a probe
 * refused; a full map is counted (exes_full) and the file left out. */
static void exe_put(struct st_python *py, const struct st_py_exe_key *k, const struct st_py_exe *e)
{
	__u64 h = exe_hash(k);

	if (py->exes_fd < 0 || st_u64map__get(py->exes, h))
		return;
	if (bpf_map_update_elem(py->exes_fd, k, e, BPF_NOEXIST) && errno != EEXIST) {
		if (errno == E2BIG)
			py->exes_full++;
		else
			fprintf(stderr, "stacktreed: cannot register a python executable for its "
				"exec: %s (py_exes): its processes are walked once probed\n",
				strerror(errno));
		st_u64map__put(py->exes, h, (void *)EXE_REFUSED);
		return;
	}
	if (!st_u64map__put(py->exes, h, (void *)EXE_PUT))
		py->exes_put++;
}

/* File k's template put a wrong entry: taken out, never put again. */
static void exe_refuse(struct st_python *py, const struct st_py_exe_key *k)
{
	if (py->exes_fd >= 0)
		bpf_map_delete_elem(py->exes_fd, k);
	st_u64map__put(py->exes, exe_hash(k), (void *)EXE_REFUSED);
}

/* Whether the interpreter the probe found in pid (where) is its
 * executable itself (not a libpython): then *k is the file's key. */
static bool exe_is_main(__u32 pid, const struct st_py_where *where, struct st_py_exe_key *k)
{
	char path[64];
	struct stat exe, mapped;
	struct st_py_exe_key mk;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	return !exe_key(path, k, &exe) && !exe_key(where->file, &mk, &mapped) &&
	       exe.st_dev == mapped.st_dev && exe.st_ino == mapped.st_ino;
}

void st_python__launching(struct st_python *py, const char *path)
{
	struct st_py_exe_key k;
	struct st_py_exe e;
	struct stat st;

	if (!py || !path || !st_py_elf__candidate(path) || exe_key(path, &k, &st) ||
	    !S_ISREG(st.st_mode) || st_py_exe__template(path, &e))
		return;
	exe_put(py, &k, &e);
}

/* A process the daemon has not probed, walked from its exec (BPF put its
 * entry cur from its file's template): followed from that entry (its code
 * objects read; the probe checks it later), or NULL. */
static struct pyproc *adopt(struct st_python *py, __u32 pid, const struct st_py_proc *cur)
{
	struct pyproc *pp = proc_get(py, pid, cur->image);

	if (!pp)
		return NULL;
	if (!pp->found)
		py->processes++;
	pp->p = *cur;
	pp->found = true;
	pp->retired = false;
	py->exec_adopted++;
	proc_live(py, pid, pp);
	return pp;
}

/* The same for a code object BPF reported of (pid, image). */
static struct pyproc *adopt_for_code(struct st_python *py, __u32 pid, __u32 image)
{
	struct st_py_proc cur;

	if (bpf_map_lookup_elem(py->procs_fd, &pid, &cur) || !cur.from_exec || cur.image != image)
		return NULL;
	return adopt(py, pid, &cur);
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
	if (!pp || !pp->found)	/* walked from its exec, not probed yet */
		pp = adopt_for_code(py, e->pid, e->image);
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
	py->exes_fd = st_session__map_fd(s, "py_exes");
	events_fd = st_session__map_fd(s, "py_events");
	py->procs = st_u64map__new();
	py->said = st_u64map__new();
	py->live = st_u64map__new();
	py->exes = st_u64map__new();
	if (py->procs_fd < 0 || py->stats_fd < 0 || events_fd < 0 || !py->procs ||
	    !py->said || !py->live || !py->exes) {
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
	st_u64map__free(py->exes);
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

/* The entry BPF put at pid's exec from its file's template, when the
 * probe found p (of image): counted agreed or wrong; a wrong template is
 * taken back (key: its file's, the interpreter being the executable). Whether there was one: the
 * probe's entry replaces it either way. */
static bool exec_check(struct st_python *py, __u32 pid, const struct st_py_proc *p, bool is_main,
		       const struct st_py_exe_key *key)
{
	struct st_py_proc cur;

	if (bpf_map_lookup_elem(py->procs_fd, &pid, &cur) || !cur.from_exec ||
	    cur.image != p->image)
		return false;
	cur.from_exec = 0;
	if (!memcmp(&cur, p, sizeof(cur))) {
		py->exec_agreed++;
		return true;
	}
	py->exec_wrong++;
	if (is_main)
		exe_refuse(py, key);
	return true;
}

void st_python__probe(struct st_python *py, __u32 pid)
{
	struct st_py_exe_key key;
	struct st_py_where where;
	struct st_py_proc p;
	struct st_py_exe tmpl;
	struct pyproc *pp;
	__u32 image = ST_UNWIND_ANY_IMAGE, version;
	bool is_main, from_exec;
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
	r = st_py_proc__probe((int)pid, &p, &version, &where);
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
	is_main = exe_is_main(pid, &where, &key);
	from_exec = exec_check(py, pid, &p, is_main, &key);
	/* found and still in py_procs: nothing new. Found but deleted since
	 * (the probe saw the new program before the daemon read its exec
	 * event, whose st_python__exited() deleted the entry): pushed again,
	 * or the process is never walked again. BPF's entry from the exec:
	 * the probe's replaces it */
	if (!from_exec && pp->found && pp->pushed && !memcmp(&pp->p, &p, sizeof(p)))
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
	proc_live(py, pid, pp);
	/* its executable's next processes: walked from their exec */
	if (is_main) {
		st_py_exe_make(&tmpl, &p, where.bias, where.text_vaddr);
		exe_put(py, &key, &tmpl);
	}
}

void st_python__exited(struct st_python *py, __u32 pid, const __u32 *image)
{
	struct pyproc *pp;

	struct st_py_proc cur;
	bool has = false;

	if (!py)
		return;
	if (!bpf_map_lookup_elem(py->procs_fd, &pid, &cur)) {
		has = true;
		/* walked from its exec and never probed (the daemon behind, or
		 * the process short): followed from BPF's entry, so that the
		 * code objects BPF reported of it are read still */
		if (cur.from_exec && !st_u64map__get(py->procs, KEY(pid, cur.image)))
			adopt(py, pid, &cur);
	}
	/* an exec's entry of its new image stays: BPF's from the file's
	 * template, or the probe's that came before this event */
	if (has && image && cur.image == *image)
		;
	else if (has && !bpf_map_delete_elem(py->procs_fd, &pid))
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

bool st_python__followed(const struct st_python *py, __u32 pid, __u32 image)
{
	const struct pyproc *pp = py ? st_u64map__get(py->procs, KEY(pid, image)) : NULL;

	if (!pp && py)	/* found before the kernel knew its image */
		pp = st_u64map__get(py->procs, KEY(pid, ST_UNWIND_ANY_IMAGE));
	return pp && pp->found;
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
	out->exes_put = py->exes_put;
	out->exes_full = py->exes_full;
	out->exec_agreed = py->exec_agreed;
	out->exec_wrong = py->exec_wrong;
	out->exec_adopted = py->exec_adopted;
	out->bytes = py->bytes;
	out->share = py->share;
	out->held = py->held;
	return 0;
}

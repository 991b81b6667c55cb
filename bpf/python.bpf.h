/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * python.bpf.h - CPython's own stack, walked at sampling time and merged
 * into the native one: the BPF program's side, its maps and per-sample
 * entry points (bpf/sample.bpf.c calls them). The walk is bpf/pywalk.h,
 * the merge bpf/pymerge.h, the code keys and memo bpf/pymemo.h, the line
 * runs bpf/pylines.h: each compiled here and natively. The types the
 * daemon shares are in bpf/stacktree.h.
 *
 * What is walked (kernel-notes/python.md): the daemon finds, for each
 * process running CPython, the address of `_PyRuntime`, the text range of
 * `_PyEval_EvalFrameDefault` and the version's structure layout (a table
 * keyed by the version the binary exports, user/collect/runtimes/python/pyoffsets.c), and
 * pushes them into `py_procs` (struct st_py_proc, key tgid). A sample of
 * such a process:
 *   1. finds its thread's PyThreadState: guessed per CPU (st_py_tguess)
 *      or cached per thread (py_tstates), a guess revalidated by
 *      re-reading native_thread_id, else by walking
 *      _PyRuntime.interpreters.head->threads.head->next... for the one whose
 *      native_thread_id is the thread's id (at most ST_PY_MAX_THREADS; 3.10:
 *      tstate_head, and thread_id, pthread_self(), the thread's fs base);
 *   2. walks tstate->cframe->current_frame and its `previous` chain (at most
 *      ST_PY_MAX_FRAMES; deeper stacks are cut and counted), recording per
 *      frame the code object and the instruction index, and where an
 *      evaluation loop's run of frames ends (3.11: `is_entry`; 3.12+: the
 *      frame below a C-stack-owned shim frame); 3.10: tstate->frame and
 *      its f_back chain of PyFrameObjects, f_lasti the index, one
 *      evaluation call per frame;
 *      a code object not in the CPU's memo of those reported
 *      (struct st_py_memo) is looked up in py_codes, and reported to the
 *      daemon when new at its address (its location table then decoded
 *      into runs of one line, pylines.h);
 *   3. merges: the native walk is leaf first; each native frame inside
 *      _PyEval_EvalFrameDefault is replaced by the Python frames that call
 *      runs (from the next unused Python frame up to the end of its run);
 *      3.10: the interpreter's own frames between two runs (one Python
 *      frame calling the next through C) are dropped.
 *      A Python frame goes into the native frame array tagged with
 *      ST_PY_TAG; path_at() turns the tag into flag ST_NODE_PYTHON.
 *      A sample deferred to the daemon (bpf/defer.bpf.h) carries what
 *      steps 1-2 found (struct st_py_frames, bpf/stacktree.h); the daemon
 *      runs step 3 after its unwind, with st_py_merge() built natively
 *      (user/collect/runtimes/python/pymerge.c).
 * Every read is checked; a failed read or an absurd value ends the walk,
 * counted by reason (enum st_py_stat). Reads go through the current task's
 * own memory only: a process that fakes its interpreter state fools only
 * its own profile.
 *
 * A Python node's address: ST_PY_ADDR in bpf/stacktree.h.
 */
#ifndef STACKTREE_PYTHON_BPF_H
#define STACKTREE_PYTHON_BPF_H

#include "stacktree.h"

/* bpf/pywalk.h's reads: the current task's own memory, counted in the
 * scratch (map memory: a counter on the stack would be one more verifier
 * state per value) */
#define ST_PY_READ(w, dst, n, a)                                                                   \
	((w)->s->reads++, bpf_probe_read_user((dst), (n), (const void *)(long)(a)))
#define ST_PY_WALK_ENV
#include "pywalk.h"
#include "pymerge.h"
#include "pyexec.h"

/* ---- the BPF program's side: maps and the per-sample entry point ---- */

#define ST_PY_PROCS 4096	/* processes running CPython */
#define ST_PY_TSTATES 16384	/* threads' cached thread states */
#define ST_PY_CODES 65536	/* (process, code object) pairs reported */
#define ST_PY_EXES 64		/* executable files holding CPython (py_exes) */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_PY_PROCS);
	__type(key, __u32);
	__type(value, struct st_py_proc);
} py_procs SEC(".maps");

/* Moved on by the daemon after each change to py_procs (an update or a
 * delete, user/collect/runtimes/python/python.c): a CPU's copy of an entry read at another
 * value is read again (st_py_walk_sample()). */
__u64 py_procs_epoch = 0;
/* One more at every report of a code object at an address where another
 * was reported (its address reused: st_py_report_step()): the CPUs' memo
 * entries filled before are not hits any more (bpf/pymemo.h) */
__u32 py_reuse_epoch = 0;

/* Executable files holding CPython, registered by the daemon once it
 * found the interpreter in a process running one
 * (user/collect/runtimes/python/python.c): an exec of one gets its
 * py_procs entry at once (st_py_on_exec()). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_PY_EXES);
	__type(key, struct st_py_exe_key);
	__type(value, struct st_py_exe);
} py_exes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_PY_TSTATES);
	__type(key, __u64);	/* pid_tgid */
	__type(value, __u64);	/* PyThreadState address */
} py_tstates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_PY_CODES);
	__type(key, struct st_py_code_key);
	__type(value, struct st_py_code_seen);
} py_codes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);	/* 460 reports (2,256 bytes + 8) */
} py_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_py_scratch);
	__uint(max_entries, 1);
} py_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_py_memos);
	__uint(max_entries, 1);
} py_memo SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_py_counts);
	__uint(max_entries, 1);
} py_stats SEC(".maps");

/* This CPU's counts (NULL: none; st_py_add() takes it). */
static __always_inline struct st_py_counts *st_py_counts(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&py_stats, &zero);
}

static __always_inline void st_py_add(struct st_py_counts *c, __u32 which, __u64 n)
{
	if (c && which < ST_PY_STAT__MAX)
		c->n[which] += n;
}

static __always_inline void st_py_count(__u32 which, __u64 n)
{
	st_py_add(st_py_counts(), which, n);
}

/* The exec program's hook (bpf/lifecycle.bpf.h): process tgid has just
 * exec'd into image; if its executable is a file of py_exes, its
 * py_procs entry is the file's template moved by the process's load bias
 * (bpf/pyexec.h), so that its first samples (the interpreter's start, the
 * frozen importlib, a script's first lines) are walked before the daemon
 * has read its maps; the daemon's probe later checks it
 * (st_python__probe()). Reads kernel memory only: the file's inode and
 * mm->start_code, which the ELF loader has set by now. */
static __always_inline void st_py_on_exec(struct task_struct *p, __u32 tgid, __u32 image)
{
	struct st_py_exe_key k = {};
	struct st_py_exe *e;
	struct st_py_proc v;
	struct mm_struct *mm;
	struct inode *ino;
	__u64 bias;

	if (!(interpreters & ST_INTERP_PYTHON))
		return;
	mm = BPF_CORE_READ(p, mm);
	ino = mm ? BPF_CORE_READ(mm, exe_file, f_inode) : NULL;
	if (!ino)
		return;
	k.ino = BPF_CORE_READ(ino, i_ino);
	k.dev = BPF_CORE_READ(ino, i_sb, s_dev);
	k.size = BPF_CORE_READ(ino, i_size);
	if (bpf_core_field_exists(ino->i_mtime_sec))
		k.mtime = BPF_CORE_READ(ino, i_mtime_sec);
	e = bpf_map_lookup_elem(&py_exes, &k);
	if (!e)
		return;
	if (st_py_exe_bias(e, BPF_CORE_READ(mm, start_code), &bias)) {
		st_py_count(ST_PY_STAT_EXEC_REFUSED, 1);
		return;
	}
	v = e->tmpl;
	st_py_proc_shift(&v, bias);
	v.image = image;
	v.from_exec = 1;
	if (bpf_map_update_elem(&py_procs, &tgid, &v, BPF_ANY)) {
		st_py_count(ST_PY_STAT_EXEC_REFUSED, 1);
		return;
	}
	/* the CPUs' copies of py_procs entries are read again */
	__sync_fetch_and_add(&py_procs_epoch, 1);
	st_py_count(ST_PY_STAT_EXEC_FOUND, 1);
}

/* The exit program's hook: a process never sampled ends (its main
 * thread). Its entry goes, so that one put at its exec is not left in the
 * map: the daemon deletes those of the processes it hears of (their exit
 * event, user/collect/runtimes/python/python.c), after it read the code
 * objects BPF reported of them. */
static __always_inline void st_py_on_exit(__u32 tgid)
{
	if ((interpreters & ST_INTERP_PYTHON) && !bpf_map_delete_elem(&py_procs, &tgid))
		__sync_fetch_and_add(&py_procs_epoch, 1);
}

/* Report the code objects not seen before in this process. */
struct st_py_report {
	struct st_py_scratch *s;
	struct st_py_memos *memos;
	const struct st_py_layout *l;
	__u32 tgid, image;
};

/* Copy n bytes at user address a into dst (or, that failing, the first
 * ST_PY_SNAP_SMALL): the bytes copied, 0 if none. */
#define ST_PY_SNAP(dst, n, a)                                                                      \
	(!(a) ? 0 : !bpf_probe_read_user((dst), (n), (const void *)(long)(a)) ? (n) :              \
	 !bpf_probe_read_user((dst), ST_PY_SNAP_SMALL, (const void *)(long)(a)) ? ST_PY_SNAP_SMALL : 0)

/* Fill a report's copies of code object e->code's memory. */
static __always_inline void st_py_snap_code(struct st_py_event *e, const struct st_py_layout *l)
{
	__u64 a;

	e->at[ST_PY_SNAP_CODE] = e->code;
	e->len[ST_PY_SNAP_CODE] =
		bpf_probe_read_user(e->hdr, ST_PY_CODE_BUF, (const void *)(long)e->code) ? 0 :
											 ST_PY_CODE_BUF;
	if (!e->len[ST_PY_SNAP_CODE])
		return;
	a = st_py_hdr64(e->hdr, l->code_qualname);
	e->at[ST_PY_SNAP_QUAL] = a;
	e->len[ST_PY_SNAP_QUAL] = ST_PY_SNAP(e->qual, ST_PY_SNAP_NAME, a);
	a = st_py_hdr64(e->hdr, l->code_filename);
	e->at[ST_PY_SNAP_FNAME] = a;
	e->len[ST_PY_SNAP_FNAME] = ST_PY_SNAP(e->file, ST_PY_SNAP_FILE, a);
	a = st_py_hdr64(e->hdr, l->code_linetable);
	e->at[ST_PY_SNAP_LT] = a;
	e->len[ST_PY_SNAP_LT] = ST_PY_SNAP(e->table, ST_PY_SNAP_TABLE, a);
}

static long st_py_report_step(__u32 i, void *ctx)
{
	struct st_py_report *r = ctx;
	struct st_py_scratch *s = r->s;
	struct st_py_code_key k = { .tgid = r->tgid, .image = r->image };
	struct st_py_code_seen *seen, now = {};
	struct st_py_event *e;
	__u32 j = i & (ST_PY_MAX_FRAMES - 1), first, lt;
	bool report;
	__u64 addr;

	if (i >= s->n)
		return 1;
	if (!st_py_unknown_is(s, j))
		return 0;	/* the walk found its generation in the memo */
	addr = s->addr[j];
	k.code = ST_PY_CODE(addr);
	now.ident = s->ident[j];
	seen = bpf_map_lookup_elem(&py_codes, &k);
	report = st_py_code_gen(seen, now.ident, &now.gen);
	if (!report && seen) {
		/* the object py_codes has: its runs of one line too */
		now.runs = seen->runs;
		now.cover = seen->cover;
		s->addr[j] = st_py_addr_key(addr, now.gen, &now.runs, now.cover);
		st_py_memo_put(r->memos, r->tgid, r->image, k.code, &now,
			       *(volatile __u32 *)&py_reuse_epoch);
		return 0;
	}
	/* another object than the one reported at this address: the
	 * memos' entries of every CPU may hold an earlier one with its
	 * identity (pymemo.h) */
	if (seen)
		__sync_fetch_and_add(&py_reuse_epoch, 1);
	/* a new object takes the new key even when its report is lost
	 * (then unnamed, never another object's name; keyed by its
	 * instruction until it is reported) */
	s->addr[j] = st_py_addr_gen(addr, now.gen);
	e = bpf_ringbuf_reserve(&py_events, sizeof(*e), 0);
	if (!e) {
		st_py_count(ST_PY_STAT_CODE_LOST, 1);
		return 0;	/* not marked seen: reported by a later sample */
	}
	e->pid = r->tgid;
	e->image = r->image;
	e->code = k.code;
	e->key = ST_PY_CODE(s->addr[j]);
	e->ident = now.ident;
	st_py_snap_code(e, r->l);
	/* its location table, copied, is decoded after the submit */
	first = e->len[ST_PY_SNAP_CODE] ?
		((const __u32 *)e->hdr)[(r->l->code_firstlineno >> 2) & (ST_PY_CODE_ROOM / 4 - 1)] : 0;
	lt = e->len[ST_PY_SNAP_CODE] ? e->len[ST_PY_SNAP_LT] : 0;
	if (lt && (lt > ST_PY_LT_BUF || bpf_probe_read_kernel(s->win, ST_PY_LT_BUF, e->table)))
		lt = 0;
	bpf_ringbuf_submit(e, 0);
	if (lt)
		st_py_runs_decode(s, r->l, lt, first, &now);
	s->addr[j] = st_py_addr_key(addr, now.gen, &now.runs, now.cover);
	bpf_map_update_elem(&py_codes, &k, &now, BPF_ANY);
	st_py_memo_put(r->memos, r->tgid, r->image, k.code, &now,
		       *(volatile __u32 *)&py_reuse_epoch);
	st_py_count(ST_PY_STAT_CODE_EVENTS, 1);
	return 0;
}

/* A sample the daemon unwinds later (deferred): its Python frames, walked
 * by st_py_walk_sample() now, go with it (st_py_defer()) and the daemon
 * merges them after its unwind (user/collect/runtimes/python/pymerge.c). */
static __always_inline void st_py_deferred(__u32 tgid)
{
	if ((interpreters & ST_INTERP_PYTHON) && bpf_map_lookup_elem(&py_procs, &tgid))
		st_py_count(ST_PY_STAT_DEFERRED, 1);
}

/*
 * The walk and the merge are global functions (not static): the verifier
 * checks each once, on its own, whatever the number of callers and of
 * their states, where a static one is checked again for every state that
 * reaches its call. With the walk before the deferral's branch and the
 * merge after it (a deferred sample is walked here and merged by the
 * daemon), static functions cost on_timer_dwarf 728,260 instructions
 * verified (72.8% of the limit, over its budget of 60%); global ones: see
 * kernel-notes/README.md, "Start-up and verifier budgets". Their price:
 * arguments are scalars or pointers to a type of known size
 * (struct st_py_ustack), and the caller bounds what they return.
 */

/* A sample's user frames as the merge sees them: the walkers' frame
 * array (at least ST_PY_MAX_FRAMES * 2 entries, leaf first). */
struct st_py_ustack {
	__u64 f[ST_PY_MAX_FRAMES * 2];
};

/* st_py_walk_sample(): the process runs no CPython the daemon found, as
 * of py_procs_epoch's value read before (no frames) */
#define ST_PY_WALK_NONE (-1)

/* Walk the Python stack of the current thread into py_scratch (reporting
 * its code objects not seen before) when its process runs a CPython the
 * daemon found: the frames walked (0: none; ST_PY_WALK_NONE: no CPython
 * there). They are read at the sample, while they are live, whether the
 * sample is folded here or deferred. */
__noinline int st_py_walk_sample(__u64 pid_tgid, __u32 image)
{
	__u32 tgid = pid_tgid >> 32, zero = 0;
	struct st_py_walk w = { .tid = (__u32)pid_tgid, .tgid = tgid, .image = image };
	struct st_py_report rep = {};
	struct st_py_scratch *s;
	struct st_py_memos *memos;
	struct st_py_counts *c;
	struct st_py_tguess *g;
	struct st_py_proc *p;
	__u64 *cached, ts = 0, epoch;

	/* read-only: without Python the rest is dead code, as in every
	 * function here that uses the py_* maps, which are then not created
	 * (user/collect/session.c) */
	if (!(interpreters & ST_INTERP_PYTHON))
		return 0;
	s = bpf_map_lookup_elem(&py_scratch, &zero);
	memos = bpf_map_lookup_elem(&py_memo, &zero);
	if (!s || !memos)
		return 0;
	s->n = 0;	/* read by st_py_merge_sample() and st_py_defer() */
	/* the process's py_procs entry: the CPU's copy while the daemon has
	 * changed no entry since (its epoch read first: an entry changed
	 * after the read makes the next sample look again), else looked up
	 * and copied, or its absence noted (a hash lookup and a copy of
	 * 120 bytes saved on a CPU's run of samples of one process) */
	epoch = py_procs_epoch;
	if (s->proc_state == ST_PY_PROC_UNREAD || s->proc_tgid != tgid || s->proc_epoch != epoch) {
		p = bpf_map_lookup_elem(&py_procs, &tgid);
		if (p)
			s->proc = *p;
		s->proc_tgid = tgid;
		s->proc_epoch = epoch;
		s->proc_state = p ? ST_PY_PROC_COPIED : ST_PY_PROC_NONE;
	}
	if (s->proc_state != ST_PY_PROC_COPIED)
		return ST_PY_WALK_NONE;
	p = &s->proc;
	if (p->image != image && p->image != ST_UNWIND_ANY_IMAGE)
		return ST_PY_WALK_NONE;
	c = st_py_counts();
	st_py_add(c, ST_PY_STAT_SAMPLES, 1);
	s->reads = s->reads_frames = s->reads_codes = 0;
	w.p = p;
	w.s = s;
	w.memos = memos;
	w.reuse_epoch = *(volatile __u32 *)&py_reuse_epoch;
	if (p->l.tstate_pthread) {
		/* 3.10 knows a thread by pthread_self(), glibc's thread
		 * pointer: the fs base the kernel set for it (arch_prctl at
		 * start-up, CLONE_SETTLS for a thread) */
		struct task_struct *task = bpf_get_current_task_btf();

		w.tid = BPF_CORE_READ(task, thread.fsbase);
	}
	/* the thread's state: this CPU's guess, else py_tstates', else found */
	g = &s->tguess[st_hash_u64(pid_tgid) & (ST_PY_TGUESS - 1)];
	ts = g->tstate;
	if (g->pid_tgid != pid_tgid || !st_py_tstate_is(&w, ts)) {
		cached = bpf_map_lookup_elem(&py_tstates, &pid_tgid);
		ts = cached ? *cached : 0;
		if (!cached || !st_py_tstate_is(&w, ts)) {
			ts = st_py_find_tstate(&w);
			if (!ts) {
				st_py_add(c, w.stop < ST_PY_STAT__MAX ? w.stop : ST_PY_STAT_NO_THREAD,
					  1);
				st_py_add(c, ST_PY_STAT_READS, s->reads);
				return 0;
			}
			bpf_map_update_elem(&py_tstates, &pid_tgid, &ts, BPF_ANY);
		}
		g->pid_tgid = pid_tgid;
		g->tstate = ts;
	}
	st_py_walk_frames(&w, ts);
	if (w.stop < ST_PY_STAT__MAX)
		st_py_add(c, w.stop, 1);
	if (c) {
		c->n[ST_PY_STAT_READS] += s->reads;
		c->n[ST_PY_STAT_READS_FRAMES] += s->reads_frames;
		c->n[ST_PY_STAT_READS_CODES] += s->reads_codes;
	}
	if (!s->n || bench_py_stop == 1)
		return 0;
	if (s->any_unknown) {
		/* code objects the memo has not got: py_codes, or a report */
		rep.s = s;
		rep.memos = memos;
		rep.l = &p->l;
		rep.tgid = tgid;
		rep.image = image;
		bpf_loop(ST_PY_MAX_FRAMES, st_py_report_step, &rep, 0);
	}
	if (bench_py_stop == 2)
		return 0;
	st_py_add(c, ST_PY_STAT_WALKED, 1);
	st_py_add(c, ST_PY_STAT_FRAMES, s->n);
	return s->n;
}

/* st_py_walk_sample() for the current thread, ts its state (or NULL):
 * not called while ts says its process had no CPython as of the current
 * py_procs_epoch (read before the walk's own read of it: an entry pushed
 * in between makes the next sample look again). A process without one
 * paid the call, its two per-CPU lookups and, whenever two processes
 * shared the CPU, a py_procs lookup a sample (the CPU's copy is of one
 * process). The frames walked (0: none). */
static __always_inline int st_py_walk_thread(struct thread_state *ts, __u64 pid_tgid)
{
	__u64 epoch = *(volatile __u64 *)&py_procs_epoch + 1;
	int n;

	if (!(interpreters & ST_INTERP_PYTHON) || (ts && ts->py_none == epoch))
		return 0;
	n = st_py_walk_sample(pid_tgid, task_image(bpf_get_current_task_btf()));
	if (ts)
		ts->py_none = n == ST_PY_WALK_NONE ? epoch : 0;
	return n > 0 ? n : 0;
}

/* Merge the frames st_py_walk_sample() walked last on this CPU (py_scratch)
 * into a sample's user frames (leaf first, u->f[0..un), room for max <=
 * ST_MAX_USER): the new count, at most max, | ST_PY_MERGE_CUT when the
 * merged stack did not fit and lost its outermost frames (the caller puts
 * it under [truncated], as a native walk cut short). */
#define ST_PY_MERGE_CUT (1 << 30)
__noinline int st_py_merge_sample(struct st_py_ustack *u, __u32 un, __u32 max, __u32 tgid)
{
	struct st_py_scratch *s;
	bool cut = false, unmatched = false;
	__u32 zero = 0, n;

	if (!u || !un || !(interpreters & ST_INTERP_PYTHON))
		return un;
	s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s || !s->n || s->proc_tgid != tgid)
		return un;
	n = st_py_merge(s, &s->proc, u->f, un, max, &cut, &unmatched);
	if (bench_py_stop == 3) {
		/* bench: the merge made, the native frames folded */
		st_py_copy_frames(u->f, s->native, un);
		return un;
	}
	if (cut)
		st_py_count(ST_PY_STAT_MERGE_CUT, 1);
	if (unmatched)
		st_py_count(ST_PY_STAT_UNMATCHED, 1);
	return cut ? (int)(n | ST_PY_MERGE_CUT) : (int)n;
}

/* Copy the frames st_py_walk_sample() walked (n of them) into a deferred
 * sample's record, with the evaluation loop's text they replace. */
static __always_inline void st_py_defer(struct st_py_frames *out, __u32 tgid, __u32 n)
{
	const struct st_py_proc *p;
	struct st_py_scratch *s;
	__u32 zero = 0;

	out->n = 0;
	if (!n || !(interpreters & ST_INTERP_PYTHON))
		return;
	s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s || !s->n || s->n > ST_PY_MAX_FRAMES || s->proc_tgid != tgid)
		return;
	p = &s->proc;
	out->eval_start = p->eval_start;
	out->eval_end = p->eval_end;
	out->cold_start = p->cold_start;
	out->cold_end = p->cold_end;
	out->text_start = p->text_start;
	out->text_end = p->text_end;
	/* (4 KiB: one helper call, not an inlined copy) */
	bpf_probe_read_kernel(out->addr, sizeof(out->addr), s->addr);
	bpf_probe_read_kernel(out->ends, sizeof(out->ends), s->ends);
	out->n = s->n;
	out->whole = s->stop == ST_PY_STAT__MAX;
}

/* A sample's user frames (leaf first, u->f[0..un), room for max <=
 * ST_MAX_USER): the Python frames merged in when the process runs a
 * CPython the daemon found; returns the new count, and sets *cut when the
 * merged stack lost its outermost frames. */
static __always_inline __u32 st_py_sample(struct st_py_ustack *u, __u32 un, __u32 max,
					  __u64 pid_tgid, __u32 image, bool *cut)
{
	int n;

	if (st_py_walk_sample(pid_tgid, image) <= 0)
		return un;
	n = st_py_merge_sample(u, un, max, pid_tgid >> 32);
	if (n >= 0 && (n & ST_PY_MERGE_CUT)) {
		*cut = true;
		n &= ~ST_PY_MERGE_CUT;
	}
	return n >= 0 && (__u32)n <= max ? (__u32)n : un;
}

#endif

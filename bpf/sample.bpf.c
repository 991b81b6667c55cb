// SPDX-License-Identifier: GPL-2.0
/*
 * sample.bpf.c - timer sampling: walk the interrupted thread's stack and fold
 * it into the thread's call-stack tree, in the kernel.
 *
 * Per sample: one bpf_get_stack() walk (frame pointers), then the path is
 * compared with the thread's previous path (task storage); the shared prefix
 * reuses the previous node ids, so only the frames past it cost a lookup in
 * the node table. BASE is added on the leaf, CALLS on frames that are new
 * calls. CUM is derived in user space (cum = base + sum of the children's
 * cum).
 * See bpf/stacktree.h for the maps' layout and kernel-notes/ for the rules.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "stacktree.h"
#include "classify.h"
#include "unwind.h"
#include "python.h"

char LICENSE[] SEC("license") = "GPL";

/* set by user space before load */
const volatile __u32 max_nodes = 1;	/* node ids per generation */
const volatile __u32 slot_mask = 0;	/* node_slots per generation - 1 (a power of two) */
const volatile bool filter_targets = false;
const volatile bool kernel_stacks = false;
const volatile __u32 self_tgid = 0;	/* 0: the daemon may profile itself */
const volatile bool filter_comm = false;	/* --comm */
const volatile char comm_filter[ST_COMM_LEN] = {};
const volatile bool filter_cgroup = false;	/* --cgroup */
const volatile __u32 unwind_mode = ST_UNWIND_FP;	/* --unwind: ST_UNWIND_* */
const volatile bool defer_unwind = false;	/* dwarf/auto: walks without tables go to the daemon */

/* written by user space at run time (mmaped .bss) */
__u32 epoch = 0;		/* generation = epoch & 1 */
__u32 next_id[2] = {};		/* ids handed out in each generation */

/* The node table: (parent, flags, addr) -> node id, open addressing with
 * linear probing, one half per generation (slot_mask + 1 slots each, at
 * least twice the generation's ids). A slot is 0 (empty) or id << 32 | tag,
 * the tag being the key's hash bits that did not pick the slot; the key
 * itself is the id's record in `nodes`. Slots are only ever claimed
 * (compare-and-swap from 0) while their generation is current, and the
 * daemon zeroes the old half when it drains it (through mmap). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);	/* 2 * (slot_mask + 1), resized before load */
	__uint(map_flags, BPF_F_MMAPABLE);
} node_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct st_node_rec);
	__uint(max_entries, 1);	/* 2 * max_nodes + 1, resized before load */
	__uint(map_flags, BPF_F_MMAPABLE);
} nodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, ST_EVENTS * ST_STAT__MAX);	/* per event */
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);	/* resized before load */
} targets SEC(".maps");

/* --force-faults: pages the daemon paged out, until their next fault */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct st_forced_key);
	__type(value, __u8);
	__uint(max_entries, 1);	/* resized before load when forcing */
} forced_pages SEC(".maps");

/* --cgroup: the cgroup directory's fd at index 0 */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} cgroup_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 16384);
} seen_procs SEC(".maps");

/* The image each process runs (struct st_proc_image): written at fork, at
 * exec and at a process's first sample, removed at its exit. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct st_proc_image);
	__uint(max_entries, 65536);
} proc_images SEC(".maps");

/* The fork fields of an existing entry are kept. */
static __always_inline void set_proc_image(__u32 tgid, __u32 image, __u32 busy, __u64 flags)
{
	struct st_proc_image v = { .image = image, .busy = busy }, *old;

	old = bpf_map_lookup_elem(&proc_images, &tgid);
	if (old && flags == BPF_NOEXIST)
		return;
	if (old) {
		v.parent = old->parent;
		v.fork_image = old->fork_image;
	}
	bpf_map_update_elem(&proc_images, &tgid, &v, flags);
}

/* comm of each thread, written when its root node is created */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct st_comm_key);
	__type(value, char[ST_COMM_LEN]);
	__uint(max_entries, 16384);
} thread_comms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* samples whose walk waits for tables (struct st_deferred, variable size) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* resized before load */
} deferred SEC(".maps");

/* a deferred sample being assembled, one per CPU (by CPU number: a per-CPU
 * array's values are limited to 32 KiB; only the timer program, which does
 * not nest with itself, uses it) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct st_deferred);
	__uint(max_entries, 1);	/* resized before load: possible CPUs */
} defer_buf SEC(".maps");

/* A thread's recently used nodes, direct-mapped by (parent, flags, addr):
 * a thread that alternates between a few paths finds their nodes here
 * instead of in the node table. Entries of an older epoch are stale. */
#define ST_NODE_CACHE 256

struct node_cache_ent {
	__u64 addr;
	__u32 parent;
	__u32 id;
	__u32 epoch;
	__u16 flags;
	__u16 pad;
};

/* The previous sample's path of a thread, and its node cache. */
struct thread_state {
	__u32 epoch;
	__u32 depth;		/* frames in the path, root excluded */
	__u32 root;		/* root node id (valid when epoch matches) */
	__u32 defer_seq;	/* samples of the thread deferred so far */
	__u32 deferring;	/* deferred since the last folded one (0: folding here) */
	__u32 ids[ST_PATH_SLOTS];
	__u64 addrs[ST_PATH_SLOTS];
	__u16 flags[ST_PATH_SLOTS];
	struct node_cache_ent cache[ST_NODE_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

/* A thread's path handed back by the daemon (struct st_handoff), by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct st_handoff);
	__uint(max_entries, 1024);	/* 1 without deferral (--unwind fp) */
} handoffs SEC(".maps");

/* thread_state.epoch of a path handed back: ids to be looked up again */
#define ST_EPOCH_HANDOFF 0xffffffffu

/* The same for the page-fault trees (--event faults). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} fault_threads SEC(".maps");

/* The current sample, per CPU. */
#define ST_USTACK_SLOTS 128	/* power of two > ST_MAX_USER */

struct scratch {
	__u64 ustack[ST_USTACK_SLOTS];	/* leaf first; ST_MAX_USER used */
	__u64 kstack[ST_MAX_KERNEL];	/* leaf first */
	bool utrunc;		/* dwarf/auto: the user walk stopped early */
	bool defer;		/* ... for want of tables: unwind it in the daemon */
	bool force_defer;	/* in: the thread waits for its handoff (defer it anyway) */
	__u32 stop_stat;	/* ... why (ST_STAT__MAX: not counted), when deferred */
};

/* A sample's path, root first, read in place from the walked stacks:
 * [truncated] root, user frames, kernel frames, then an optional extra
 * frame (a page fault's data leaf, or [kernel] for a sample without any
 * frame). The user frame walked first is the interrupted IP: flagged
 * ST_NODE_LEAF when no kernel frame follows it. */
struct path_view {
	__u32 trunc, un, kn, extra, n;
	__u64 extra_addr;
	__u16 extra_flags;
};

static __always_inline __u64 path_at(const struct scratch *sc, const struct path_view *pv,
				     __u32 i, __u16 *flags)
{
	__u32 from;

	if (i < pv->trunc) {
		*flags = ST_NODE_TRUNCATED;
		return 0;
	}
	i -= pv->trunc;
	if (i < pv->un) {
		__u64 a;

		from = pv->un - 1 - i;
		*flags = (from == 0 && pv->kn == 0) ? ST_NODE_LEAF : 0;
		a = sc->ustack[from & (ST_USTACK_SLOTS - 1)];
		if (a & ST_PY_TAG) {	/* merged in by st_py_sample() */
			*flags |= ST_NODE_PYTHON;
			a &= ~ST_PY_TAG;
		}
		return a;
	}
	i -= pv->un;
	if (i < pv->kn) {
		from = pv->kn - 1 - i;
		*flags = ST_NODE_KERNEL | (from == 0 ? ST_NODE_LEAF : 0);
		return sc->kstack[from & (ST_MAX_KERNEL - 1)];
	}
	*flags = pv->extra_flags;
	return pv->extra_addr;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct scratch);
	__uint(max_entries, 1);
} scratch_map SEC(".maps");

/* The program a task runs: its self_exec_id (incremented by every exec,
 * inherited at fork), low 32 bits. */
static __always_inline __u32 task_image(struct task_struct *t)
{
	return (__u32)BPF_CORE_READ(t, self_exec_id);
}

static __always_inline void stat_ev(__u32 ev, __u32 which)
{
	__u32 key = ev * ST_STAT__MAX + which;
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		*v += 1;
}

/* A cpu-clock counter (the events' shared paths count for ST_EVENT_CPU). */
static __always_inline void stat_inc(__u32 which)
{
	stat_ev(ST_EVENT_CPU, which);
}

/* The user part of a path: un frames, under a [truncated] root when the
 * walk was cut (frame pointers: it filled the buffer; DWARF: the unwinder
 * says so and has counted why). */
static __always_inline void path_user(struct path_view *pv, const struct scratch *sc, long un,
				      __u32 ev)
{
	if (unwind_mode == ST_UNWIND_FP ? un >= ST_MAX_USER : sc->utrunc) {
		if (unwind_mode == ST_UNWIND_FP)
			stat_ev(ev, ST_STAT_TRUNCATED);
		pv->trunc = 1;
	}
	pv->un = un;
}

#define ST_SLOT_PROBES 32	/* at most half the slots are used: a longer run is
				 * next to impossible, and is counted as a full table */

static __always_inline __u64 node_hash(__u32 parent, __u16 flags, __u64 addr)
{
	__u64 x = addr * 0x9E3779B97F4A7C15ull ^ (((__u64)parent << 16 | flags) * 0xC2B2AE3D27D4EB4Full);

	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ull;
	return x ^ (x >> 32);
}

/* A new record for (parent, flags, addr) in generation gen; 0 when the
 * generation's ids are used up. */
static __always_inline __u32 node_new(__u32 ev, __u32 gen, __u32 parent, __u16 flags, __u64 addr)
{
	struct st_node_rec *rec;
	__u32 id, n;

	n = __sync_fetch_and_add(&next_id[gen & 1], 1) + 1;
	if (n > max_nodes) {
		stat_ev(ev, ST_STAT_LOST_NODES_FULL);
		return 0;
	}
	id = gen * max_nodes + n;
	rec = bpf_map_lookup_elem(&nodes, &id);
	if (!rec)
		return 0;
	rec->addr = addr;
	rec->parent = parent;
	rec->flags = flags;
	rec->gen = gen;
	rec->base = 0;
	rec->calls = 0;
	return id;
}

/* Whether node id (of slot value v) has the key (parent, flags, addr). */
static __always_inline bool node_is(__u64 v, __u32 parent, __u16 flags, __u64 addr)
{
	__u32 id = v >> 32;
	struct st_node_rec *rec = bpf_map_lookup_elem(&nodes, &id);

	return rec && rec->addr == addr && rec->parent == parent && rec->flags == flags;
}

struct probe_ctx {
	__u64 h, addr;
	__u32 ev, gen, parent, mine, id;
	__u16 flags;
	bool created, failed;
};

/* Probe p of a key's run of slots: stop at the key's slot or at an empty
 * one, which is claimed (compare-and-swap) for a new record. */
static long node_probe(__u32 p, void *data)
{
	struct probe_ctx *c = data;
	__u32 k = (c->gen & 1) * (slot_mask + 1) + (((__u32)c->h + p) & slot_mask);
	__u64 *slot = bpf_map_lookup_elem(&node_slots, &k), v;

	if (!slot)
		return 1;
	v = *(volatile __u64 *)slot;
	if (!v) {
		if (!c->mine &&
		    !(c->mine = node_new(c->ev, c->gen, c->parent, c->flags, c->addr))) {
			c->failed = true;
			return 1;
		}
		v = __sync_val_compare_and_swap(slot, 0, (__u64)c->mine << 32 | (c->h >> 32));
		if (!v) {
			c->id = c->mine;
			c->created = true;
			return 1;
		}
	}
	if ((__u32)v == (__u32)(c->h >> 32) && node_is(v, c->parent, c->flags, c->addr)) {
		c->id = v >> 32;
		return 1;
	}
	return 0;
}

/* A node id for (parent, flags, addr) in this generation, created if new.
 * Returns 0 when the generation's ids or slots are exhausted. A record is
 * written before its slot is claimed, so a program that finds the slot
 * finds the key; one that loses the race for an empty slot to the same key
 * uses the winner's id and marks its own record dead (the daemon skips it). */
static __always_inline __u32 node_get(__u32 ev, __u32 gen, __u32 parent, __u16 flags,
				      __u64 addr, bool *created)
{
	struct probe_ctx c = { .h = node_hash(parent, flags, addr), .addr = addr, .ev = ev,
			       .gen = gen, .parent = parent, .flags = flags };
	struct st_node_rec *rec;

	bpf_loop(ST_SLOT_PROBES, node_probe, &c, 0);
	*created = c.created;
	if (c.mine && !c.created && (rec = bpf_map_lookup_elem(&nodes, &c.mine)))
		rec->flags = flags | ST_NODE_DEAD;
	if (!c.id && !c.failed)
		stat_ev(ev, ST_STAT_LOST_TABLE_FULL);
	return c.id;
}

/* Programs inside a generation, per CPU: the daemon waits for the old
 * generation's count to drop to zero before it drains it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 2);
} busy_gen SEC(".maps");

/* Enter the current generation: count this program in, then check that the
 * epoch did not move meanwhile (the daemon stores the epoch, then reads the
 * counts; both sides use full barriers, so one of them sees the other). */
static __always_inline __u64 *gen_enter(__u32 *ep)
{
	for (int tries = 0; tries < 2; tries++) {
		__u32 e = *(volatile __u32 *)&epoch, g = e & 1;
		__u64 *b = bpf_map_lookup_elem(&busy_gen, &g);

		if (!b)
			return NULL;
		__sync_fetch_and_add(b, 1);
		if (*(volatile __u32 *)&epoch == e) {
			*ep = e;
			return b;
		}
		__sync_fetch_and_sub(b, 1);
	}
	return NULL;
}


struct fold_ctx {
	struct thread_state *ts;
	struct scratch *sc;
	struct path_view *pv;
	__u32 gen;
	__u32 parent;
	__u32 start;		/* first path index to fold */
	__u32 end;		/* one past the last */
	__u32 epoch;
	__u32 prefix;		/* common prefix with the previous path */
	__u32 limit;		/* frames to compare for the prefix */
	__u32 ev;		/* ST_EVENT_* */
	__u32 prev_depth;
	__u32 failed;
};

/* node_get() through the thread's node cache. */
static __always_inline __u32 node_get_cached(struct fold_ctx *c, __u16 flags, __u64 addr)
{
	__u32 h = (__u32)(addr ^ (addr >> 21) ^ ((__u64)c->parent * 0x9E3779B1u) ^ flags) &
		  (ST_NODE_CACHE - 1);
	struct node_cache_ent *e = &c->ts->cache[h];
	bool created;
	__u32 id;

	if (e->epoch == c->epoch && e->addr == addr && e->parent == c->parent &&
	    e->flags == flags)
		return e->id;
	id = node_get(c->ev, c->gen, c->parent, flags, addr, &created);
	if (id) {
		e->addr = addr;
		e->parent = c->parent;
		e->flags = flags;
		e->epoch = c->epoch;
		e->id = id;
	}
	return id;
}

/* Fold path frame i: find or create its node, count a new call. */
static __always_inline int fold_frame(struct fold_ctx *c, __u32 i)
{
	__u32 slot = i & (ST_PATH_SLOTS - 1);
	struct st_node_rec *rec;
	__u32 id;

	__u16 flags;
	__u64 addr = path_at(c->sc, c->pv, i, &flags);

	id = node_get_cached(c, flags, addr);
	if (!id) {
		c->failed = 1;
		return 1;
	}
	/* ST_CALLS_FRAME: past the prefix every frame is a new call; the frame
	 * at the prefix is the same frame, moved on, if the old path had it;
	 * frames inside the prefix (looked up again after a generation swap)
	 * are not new */
	if (i > c->prefix || (i == c->prefix && c->prev_depth <= c->prefix)) {
		rec = bpf_map_lookup_elem(&nodes, &id);
		if (rec)
			rec->calls += 1;
	}
	c->ts->ids[slot] = id;
	c->ts->addrs[slot] = addr;
	c->ts->flags[slot] = flags;
	c->parent = id;
	return 0;
}

/* Two frames per call: it saves a fifth of the fold's time on stacks that
 * change a lot; four exceed the verifier's budget once kernel frames are on. */
static long fold_frames(__u32 k, void *data)
{
	struct fold_ctx *c = data;
	__u32 i = c->start + 2 * k;

	if (i >= c->end || fold_frame(c, i))
		return 1;
	if (i + 1 >= c->end || fold_frame(c, i + 1))
		return 1;
	return 0;
}

static long match_prefix(__u32 i, void *data)
{
	struct fold_ctx *c = data;
	__u32 slot = i & (ST_PATH_SLOTS - 1);
	__u16 flags;
	__u64 addr;

	if (i >= c->limit)
		return 1;
	addr = path_at(c->sc, c->pv, i, &flags);
	if (c->ts->addrs[slot] != addr || c->ts->flags[slot] != flags)
		return 1;
	c->prefix = i + 1;
	return 0;
}

/* A ring-buffer event for the daemon; a full buffer is counted (false). */
static __always_inline bool emit_event_ppid(__u32 type, __u32 pid, __u32 tid, __u32 ppid)
{
	struct st_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(ST_STAT_NEW_PROC_LOST);
		return false;
	}
	e->type = type;
	e->pid = pid;
	e->tid = tid;
	e->ppid = ppid;
	e->image = task_image(bpf_get_current_task_btf());
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return true;
}

static __always_inline bool emit_event(__u32 type, __u32 pid, __u32 tid)
{
	return emit_event_ppid(type, pid, tid, 0);
}

/* dwarf/auto: a launched command is sampled from its exec on: the loader's
 * own work is walked with the exec-time tables (the program and ld.so);
 * until it is active, a sample that needs another table is not taken
 * (counted, see on_timer). Once it runs outside the dynamic loader, its
 * start-up libraries are all mapped: the daemon reads its maps again
 * (ST_EV_STARTED) and marks it active. */
static __always_inline void wait_tables(__u32 tgid, __u32 tid, __u8 *target)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct st_unwind_proc *up = bpf_map_lookup_elem(&unwind_procs, &tgid);
	__u64 ip;

	if (*target != ST_TARGET_AT_TABLES || !up ||	/* exec-time tables not in yet */
	    (up->image != task_image(task) && up->image != ST_UNWIND_ANY_IMAGE))
		return;
	ip = BPF_CORE_READ((struct pt_regs *)bpf_task_pt_regs(task), ip);
	if (ip - up->interp_start < up->interp_len)
		return;
	*target = ST_TARGET_STARTED;
	if (!emit_event(ST_EV_STARTED, tgid, tid))
		*target = ST_TARGET_ACTIVE;
}

static __always_inline void notify_new_proc(__u32 tgid, __u32 tid)
{
	__u32 image = task_image(bpf_get_current_task_btf()), ppid = 0;
	struct st_proc_image *pi;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&seen_procs, &tgid))
		return;
	/* a process older than the session: its image from now on */
	set_proc_image(tgid, image, 0, BPF_NOEXIST);
	pi = bpf_map_lookup_elem(&proc_images, &tgid);
	if (pi && pi->parent && pi->fork_image == image)	/* not exec'd since its fork */
		ppid = pi->parent;
	bpf_map_update_elem(&seen_procs, &tgid, &one, BPF_ANY);
	emit_event_ppid(ST_EV_NEW_PROC, tgid, tid, ppid);
}

/* Whether the current task is to be sampled: not the idle task (counted),
 * not the daemon, and passing --pid/CMD targets, --comm and --cgroup. */
/* ev: the event of the calling program. A launched command is a target
 * from its exec on (ST_TARGET_AT_EXEC: not yet); page faults taken before
 * its tables are in fall back to frame pointers (they are not deferred). */
static __always_inline bool wanted(__u32 tgid, __u32 tid, __u32 ev)
{
	__u8 *target;

	if (tid == 0) {
		stat_inc(ST_STAT_IDLE);
		return false;
	}
	if (tgid == self_tgid)
		return false;
	if (filter_targets) {
		target = bpf_map_lookup_elem(&targets, &tgid);
		if (target && *target >= ST_TARGET_AT_TABLES)
			wait_tables(tgid, tid, target);
		if (!target || *target == ST_TARGET_AT_EXEC)
			return false;
	}
	if (filter_comm) {
		struct task_struct *task = bpf_get_current_task_btf();
		char comm[ST_COMM_LEN];

		/* the process's name: its main thread's comm */
		BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm);
		for (int i = 0; i < ST_COMM_LEN; i++) {
			if (comm[i] != comm_filter[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	return true;
}

/* Tables missing for tgid (DWARF unwinding): the daemon reads its maps. */
static __always_inline void notify_unwind(__u32 tgid, __u32 tid)
{
	emit_event(ST_EV_UNWIND, tgid, tid);
}

/* --unwind dwarf|auto: bpf/unwind.h from the task's user registers. */
static __always_inline long dwarf_stack(struct scratch *sc, bool may_defer)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct st_unwind_result res;
	__u32 stat;
	long n;

	n = st_unwind_user(task, (struct pt_regs *)bpf_task_pt_regs(task), sc->ustack,
			   ST_MAX_USER, unwind_mode == ST_UNWIND_AUTO, may_defer ? 0 : 1, &res);
	sc->utrunc = n > 0 && res.stop != ST_UNW_STOP_END;
	stat = res.no_proc ? ST_STAT_UNW_NO_PROC : st_unwind_stop_stat(res.stop);
	if (!(sc->utrunc || res.no_proc))
		stat = ST_STAT__MAX;
	/* went where tables were missing (what frame pointers found there,
	 * even a "complete" stack, is a guess in code built without them):
	 * the daemon unwinds it later */
	sc->defer = defer_unwind && may_defer && n > 0 &&
		    (sc->force_defer || res.no_proc || res.pending || res.miss);
	sc->stop_stat = stat;
	if (stat < ST_STAT__MAX && !sc->defer)
		stat_inc(stat);
	if (res.fp_frames && !sc->defer) {	/* else the daemon's walk counts them */
		__u32 k = ST_STAT_UNW_FP_FRAMES;
		__u64 *v = bpf_map_lookup_elem(&stats, &k);

		if (v)
			*v += res.fp_frames;
	}
	if (res.over_budget)
		stat_inc(ST_STAT_UNW_OVER_BUDGET);
	if (res.pending)
		stat_inc(ST_STAT_UNW_PENDING);
	if (res.request)
		notify_unwind(task->tgid, task->pid);
	return n;
}

/* The interrupted thread's user stack, leaf first, into sc->ustack: the
 * number of frames, or a negative error. Frame pointers (bpf_get_stack) or
 * CFI (dwarf, auto); sc->utrunc: a DWARF walk stopped early. */
static __always_inline long user_stack(void *ctx, struct scratch *sc, bool may_defer)
{
	long r;

	sc->utrunc = false;
	sc->defer = false;
	if (unwind_mode != ST_UNWIND_FP)
		return dwarf_stack(sc, may_defer);
	r = bpf_get_stack(ctx, sc->ustack, ST_MAX_USER * sizeof(__u64), BPF_F_USER_STACK);
	return r < 0 ? r : r >> 3; /* bytes to frames (no signed division in BPF) */
}

/* The current task is inside execve. From begin_new_exec() on it has the new
 * mm, comm and image (self_exec_id) but still the old program's user
 * registers (until start_thread()), and before it the old image with the new
 * comm may already be set: a sample there belongs to neither program. */
static __always_inline bool in_execve(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return bpf_core_field_exists(task->in_execve) &&
	       BPF_CORE_READ_BITFIELD_PROBED(task, in_execve);
}

/* Fold one sample, whose path pv describes, into the calling thread's tree
 * for event ev (tmap: that event's per-thread state). */
/* A global function: the verifier checks it once, on its own, not once per
 * state its callers reach it in (the page-fault program's branches
 * multiplied the fold's states close to the 1M-instruction limit). */
__noinline int fold_sample(struct scratch *sc, struct path_view *pv, struct thread_state *ts,
			   __u64 pid_tgid, __u32 ev)
{
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u16 root_flags = ST_NODE_ROOT | (ev == ST_EVENT_FAULTS ? ST_NODE_FAULTS : 0);
	struct fold_ctx fc = {};
	struct st_node_rec *rec;
	__u32 ep, gen, n, leaf;
	bool fresh, created;
	__u64 *busy;

	if (!sc || !pv)
		return 0;
	n = pv->n;
	if (n > ST_PATH_SLOTS - 1)
		n = ST_PATH_SLOTS - 1;
	if (!ts) {
		stat_ev(ev, ST_STAT_LOST_THREAD);
		return 0;
	}
	busy = gen_enter(&ep);
	if (!busy) {
		stat_ev(ev, ST_STAT_LOST_EPOCH);
		return 0;
	}
	gen = ep & 1;
	/* a thread's first sample folded here (a handed-back path has no ids) */
	fresh = ts->root == 0 && (ts->depth == 0 || ts->epoch == ST_EPOCH_HANDOFF);
	if (fresh)	/* a thread's first sample: is its process new? */
		notify_new_proc(tgid, tid);

	/* common prefix with the previous path, by address */
	fc.prev_depth = ts->depth;
	fc.ts = ts;
	fc.sc = sc;
	fc.pv = pv;
	fc.limit = n < fc.prev_depth ? n : fc.prev_depth;
	bpf_loop(fc.limit, match_prefix, &fc, 0);

	if (ts->epoch != ep || !ts->root) {
		/* new generation (or new thread): ids must be looked up again, but
		 * the prefix still tells which frames are new calls */
		struct st_comm_key ck = {
			.addr = ((__u64)tgid << 32) | tid,
			.image = task_image(bpf_get_current_task_btf()),
		};
		__u32 root = node_get(ev, gen, ck.image, root_flags, ck.addr, &created);

		if (!root) {
			ts->depth = 0;
			goto out;
		}
		if (created) {
			char comm[ST_COMM_LEN];

			bpf_get_current_comm(comm, sizeof(comm));
			bpf_map_update_elem(&thread_comms, &ck, comm, BPF_ANY);
		}
		if (created && fresh) {
			rec = bpf_map_lookup_elem(&nodes, &root);
			if (rec)
				rec->calls = 1;
		}
		ts->root = root;
		ts->epoch = ep;
		fc.parent = root;
		fc.start = 0;
	} else {
		fc.parent = fc.prefix ? ts->ids[(fc.prefix - 1) & (ST_PATH_SLOTS - 1)] : ts->root;
		fc.start = fc.prefix;
	}
	fc.gen = gen;
	fc.ev = ev;
	fc.epoch = ep;
	fc.end = n;
	if (n > fc.start)
		bpf_loop((n - fc.start + 1) / 2, fold_frames, &fc, 0);
	if (fc.failed) {
		/* the sample is lost (counted by node_get); start the next path afresh */
		ts->depth = 0;
		ts->root = 0;
		goto out;
	}
	ts->depth = n;
	leaf = ts->ids[(n - 1) & (ST_PATH_SLOTS - 1)];
	rec = bpf_map_lookup_elem(&nodes, &leaf);
	if (rec)
		rec->base += 1;
	stat_ev(ev, ST_STAT_FOLDED);
out:
	__sync_fetch_and_sub(busy, 1);
	return 0;
}

struct stack_top {
	__u64 end;
	bool found;
};

static long stack_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct stack_top *t = data;

	t->found = true;
	t->end = vma->vm_end;
	return 0;
}

/* Copy the stack page by page, up to the first page that is not there
 * (a single read of the whole range fails on any page missing, seen for
 * young processes). */
struct stack_copy {
	struct st_deferred *d;
	__u64 start, end;	/* sp, and the end of the range to copy */
	__u32 first;		/* bytes in sp's page (copy 0), then whole pages */
	__u32 len;		/* out: bytes copied */
};

/* Copy i: sp's page for i == 0, then the i-th page above. Offsets derive
 * from i, not from the previous copy, so that the verifier checks the
 * callback once for any i. */
static long copy_page(__u32 i, void *data)
{
	struct stack_copy *c = data;
	__u32 off = i ? c->first + (i - 1) * 4096 : 0, n = i ? 4096 : c->first;
	__u64 addr = c->start + off;

	if (addr >= c->end || off > ST_DEFER_STACK - 4096 || n > 4096)
		return 1;
	if (n > c->end - addr)
		n = (__u32)(c->end - addr);
	if (bpf_probe_read_user(&c->d->stack[off], n, (const void *)addr))
		return 1;
	c->len = off + n;
	return 0;
}

/* The sample for the daemon to unwind (sc->defer): registers, the stack
 * from sp up to the end of its mapping (at most ST_DEFER_STACK bytes) and
 * the kernel frames. False when the ring buffer is full. */
__noinline int defer_sample(struct scratch *sc, __u32 tgid, __u32 tid, __u32 kn, __u32 seq)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct stack_top top = {};
	struct st_deferred *d;
	__u32 cpu = bpf_get_smp_processor_id(), len = 0;
	struct stack_copy cp = {};
	__u64 avail, start_stack;

	d = bpf_map_lookup_elem(&defer_buf, &cpu);
	if (!d || !sc)
		return 0;
	d->pid = tgid;
	d->tid = tid;
	d->image = task_image(task);
	/* the daemon reads this process's maps for d->image: say which it is */
	set_proc_image(tgid, d->image, 0, BPF_NOEXIST);
	d->seq = seq;
	d->ip = BPF_CORE_READ(regs, ip);
	d->sp = BPF_CORE_READ(regs, sp);
	d->bp = BPF_CORE_READ(regs, bp);
	d->r10 = BPF_CORE_READ(regs, r10);
	d->rbx = BPF_CORE_READ(regs, bx);
	bpf_get_current_comm(d->comm, sizeof(d->comm));
	d->kn = kn <= ST_MAX_KERNEL ? kn : 0;
	if (d->kn)
		__builtin_memcpy(d->kstack, sc->kstack, sizeof(d->kstack));
	start_stack = BPF_CORE_READ(task, mm, start_stack);
	if (!bpf_find_vma(task, d->sp, stack_vma_cb, &top, 0) && top.found && top.end > d->sp)
		avail = top.end - d->sp;
	else if (start_stack > d->sp && start_stack - d->sp < (8u << 20))
		avail = start_stack - d->sp;	/* the lock is busy: the main thread's stack */
	else
		avail = 4096 - (d->sp & 4095);	/* the rest of sp's page, always mapped */
	cp.d = d;
	cp.start = d->sp;
	cp.end = d->sp + (avail > ST_DEFER_STACK ? ST_DEFER_STACK : avail);
	cp.first = 4096 - (__u32)(d->sp & 4095);
	bpf_loop(ST_DEFER_STACK / 4096 + 1, copy_page, &cp, 0);
	len = cp.len;
	if (len > ST_DEFER_STACK)
		len = 0;
	d->stack_len = len;
	return bpf_ringbuf_output(&deferred, d, offsetof(struct st_deferred, stack) + len, 0) == 0;
}

/* A thread comes back to the fold here without the daemon's path: its
 * next sample starts a path afresh (every frame a new call). */
static __always_inline void end_deferral(struct thread_state *ts)
{
	ts->depth = 0;
	ts->root = 0;
	ts->deferring = 0;
}

/* A thread whose samples went to the daemon (deferred) comes back to the
 * fold here only with the daemon's last path for it (struct st_handoff,
 * written once the daemon has unwound them all): compared with that path,
 * its next sample counts as new calls only the frames that are new. Until
 * then its samples are deferred, even those walked whole here, and after
 * ST_HANDOFF_WAIT of them it comes back without the path (counted). */
static __always_inline bool take_handoff(struct thread_state *ts, __u32 tid)
{
	struct st_handoff *h = bpf_map_lookup_elem(&handoffs, &tid);

	if (h && h->seq == ts->defer_seq) {
		bpf_probe_read_kernel(ts->addrs, sizeof(ts->addrs), h->addrs);
		bpf_probe_read_kernel(ts->flags, sizeof(ts->flags), h->flags);
		ts->depth = h->n < ST_PATH_SLOTS ? h->n : ST_PATH_SLOTS - 1;
		ts->root = 0;
		ts->epoch = ST_EPOCH_HANDOFF;
		ts->deferring = 0;
		bpf_map_delete_elem(&handoffs, &tid);
		stat_inc(ST_STAT_HANDOFF);
		return false;
	}
	if (ts->deferring >= ST_HANDOFF_WAIT) {
		end_deferral(ts);
		stat_inc(ST_STAT_HANDOFF_MISSED);
		return false;
	}
	return true;
}

SEC("perf_event")
int on_timer(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct path_view pv = {};
	struct thread_state *ts;
	struct scratch *sc;
	__u32 zero = 0, n;
	long un = 0, kn = 0;

	if (!wanted(tgid, tid, ST_EVENT_CPU))
		return 0;
	if (in_execve()) {	/* counted, not folded (like idle samples) */
		stat_inc(ST_STAT_IN_EXECVE);
		return 0;
	}
	stat_inc(ST_STAT_SAMPLES);

	sc = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!sc)
		return 0;
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	/* a thread waiting for its handoff: deferred whatever its walk (whose
	 * stop, if any, is then the daemon's to count) */
	sc->force_defer = ts && ts->deferring && take_handoff(ts, tid);
	un = user_stack(ctx, sc, true);
	if (un < 0) {
		stat_inc(ST_STAT_LOST_STACK);
		return 0;
	}
	if (kernel_stacks) {
		kn = bpf_get_stack(ctx, sc->kstack, sizeof(sc->kstack), 0);
		kn = kn < 0 ? 0 : kn / sizeof(__u64);
	}

	if (sc->defer) {
		__u32 seq = ts ? ts->defer_seq + 1 : 0;

		if (defer_sample(sc, tgid, tid, kn > 0 ? (__u32)kn : 0, seq)) {
			if (ts) {
				ts->defer_seq = seq;
				ts->deferring++;
			}
			stat_inc(ST_STAT_DEFERRED);
			st_py_deferred(tgid);
			/* its maps are read while it lives, and its exit
			 * reported, even if no sample of it is folded here */
			notify_new_proc(tgid, tid);
			return 0;
		}
		stat_inc(ST_STAT_DEFER_LOST);	/* folded as walked, its reason counted */
		if (sc->stop_stat < ST_STAT__MAX)
			stat_inc(sc->stop_stat);
		if (ts && ts->deferring)	/* the daemon's path is not this thread's last */
			end_deferral(ts);
	}

	if (un > 0)	/* CPython's frames in place of its evaluation loop's */
		un = st_py_sample(sc->ustack, (__u32)un, ST_MAX_USER, pid_tgid,
				  task_image(bpf_get_current_task_btf()));
	/* the path, root first: [truncated], user frames, kernel frames */
	path_user(&pv, sc, un, ST_EVENT_CPU);
	pv.kn = kn;
	if (!un && !kn) {
		/* no frame at all (kernel thread without --kernel): "[kernel]" */
		stat_inc(ST_STAT_EMPTY_STACK);
		pv.extra = 1;
		pv.extra_flags = ST_NODE_KERNEL | ST_NODE_LEAF;
	}
	n = pv.trunc + pv.un + pv.kn + pv.extra;
	if (n > ST_PATH_SLOTS - 1)
		n = ST_PATH_SLOTS - 1;
	pv.n = n;

	fold_sample(sc, &pv, ts, pid_tgid, ST_EVENT_CPU);
	return 0;
}

/* Benchmark baseline (stacktreed --bench-bare): the same filter and stack
 * walk as on_timer, nothing folded. Its run time is the "bare walk". */
SEC("perf_event")
int on_timer_bare(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, zero = 0;
	struct scratch *sc;
	long un;

	if (!wanted(tgid, (__u32)pid_tgid, ST_EVENT_CPU))
		return 0;
	stat_inc(ST_STAT_SAMPLES);
	sc = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!sc)
		return 0;
	un = bpf_get_stack(ctx, sc->ustack, ST_MAX_USER * sizeof(__u64), BPF_F_USER_STACK);
	if (un < 0)
		stat_inc(ST_STAT_LOST_STACK);
	if (kernel_stacks)
		bpf_get_stack(ctx, sc->kstack, sizeof(sc->kstack), 0);
	return 0;
}

/* Children of targeted processes are targeted too (like perf's inherit). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 *t, active = ST_TARGET_ACTIVE;
	struct st_unwind_proc *up;

	if (ptgid != ctgid) {
		struct st_proc_image v = { .image = task_image(child), .parent = ptgid };

		v.fork_image = v.image;
		bpf_map_update_elem(&proc_images, &ctgid, &v, BPF_ANY);
	}
	/* a child has its parent's mappings: and its unwinding tables */
	if (unwind_mode != ST_UNWIND_FP && ptgid != ctgid &&
	    (up = bpf_map_lookup_elem(&unwind_procs, &ptgid)))
		bpf_map_update_elem(&unwind_procs, &ctgid, up, BPF_ANY);
	if (!filter_targets || ptgid == ctgid)
		return 0;
	/* whatever the parent's state once it has exec'd: a launched command
	 * still waiting for its tables (a compiler driver forking cc1 at once)
	 * has children to profile too */
	t = bpf_map_lookup_elem(&targets, &ptgid);
	if (t && *t != ST_TARGET_AT_EXEC)
		bpf_map_update_elem(&targets, &ctgid, &active, BPF_ANY);
	return 0;
}

/* A launched command becomes a target at its exec; any exec of a seen
 * process is reported so that its maps are read again. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u8 *t, active = ST_TARGET_ACTIVE, wait = ST_TARGET_AT_TABLES;

	set_proc_image(tgid, task_image(p), 0, BPF_ANY);
	if (unwind_mode != ST_UNWIND_FP)	/* the old image's tables */
		bpf_map_delete_elem(&unwind_procs, &tgid);
	if (filter_targets) {
		t = bpf_map_lookup_elem(&targets, &tgid);
		if (!t)
			return 0;
		if (*t == ST_TARGET_AT_EXEC && unwind_mode != ST_UNWIND_FP &&
		    emit_event(ST_EV_TABLES, tgid, BPF_CORE_READ(p, pid))) {
			/* its maps read again once it left the loader */
			bpf_map_update_elem(&targets, &tgid, &wait, BPF_ANY);
		} else if (*t == ST_TARGET_AT_EXEC) {
			bpf_map_update_elem(&targets, &tgid, &active, BPF_ANY);
		}
	}
	/* a new image: the saved paths mean nothing now, and the next sample
	 * (once the libraries are mapped) reports the process again */
	bpf_task_storage_delete(&threads, p);
	bpf_task_storage_delete(&fault_threads, p);
	if (!bpf_map_lookup_elem(&seen_procs, &tgid))
		return 0;
	emit_event(ST_EV_EXEC, tgid, BPF_CORE_READ(p, pid));
	bpf_map_delete_elem(&seen_procs, &tgid);
	return 0;
}

/* An exec begins (kernels from 6.10; not loaded on older ones): from here
 * to sched_process_exec /proc/PID may show either image. */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(on_prepare_exec, struct task_struct *p, struct linux_binprm *bprm)
{
	set_proc_image(BPF_CORE_READ(p, tgid), task_image(p), 1, BPF_ANY);
	return 0;
}

/* A seen process ends: the daemon may evict it once it is written out. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), pid = BPF_CORE_READ(p, pid);

	if (pid == tgid)
		bpf_map_delete_elem(&proc_images, &tgid);
	if (pid == tgid && unwind_mode != ST_UNWIND_FP)
		bpf_map_delete_elem(&unwind_procs, &tgid);
	if (pid != tgid || !bpf_map_lookup_elem(&seen_procs, &tgid))
		return 0;
	bpf_map_delete_elem(&seen_procs, &tgid);
	if (filter_targets)
		bpf_map_delete_elem(&targets, &tgid);
	emit_event(ST_EV_EXIT, tgid, pid);
	return 0;
}

/* ---- page faults (--event faults) ----------------------------------------- */

#define X86_PF_INSTR (1UL << 4)	/* the fault was an instruction fetch */
#define ST_VM_GROWSDOWN 0x100UL	/* VM_GROWSDOWN: the main thread's stack */

struct vma_info {
	__u64 start, end, sp;
	bool found, file, growsdown;
};

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_info *v = data;

	v->found = true;
	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->file = vma->vm_file != NULL;
	v->growsdown = (BPF_CORE_READ(vma, vm_flags) & ST_VM_GROWSDOWN) != 0;
	return 0;
}

/* The data leaf for a data fault at addr (see classify.h). Only one
 * bpf_find_vma() per program run is allowed here: the tracepoint runs with
 * interrupts off, so the mmap lock is released later, by an irq_work, and a
 * second call fails with EBUSY. */
static __always_inline __u16 classify(struct task_struct *task, __u64 addr, __u64 sp, __u64 bp,
				      __u64 *leaf)
{
	struct st_fault_in in = { .addr = addr, .sp = sp, .bp = bp };
	struct vma_info v = {};

	if (!bpf_find_vma(task, addr, vma_cb, &v, 0) && v.found) {
		in.vma_found = 1;
		in.vma_start = v.start;
		in.vma_end = v.end;
		in.vma_file = v.file;
		in.vma_growsdown = v.growsdown;
	}
	in.start_data = BPF_CORE_READ(task, mm, start_data);
	in.start_brk = BPF_CORE_READ(task, mm, start_brk);
	in.brk = BPF_CORE_READ(task, mm, brk);
	return st_classify_fault(&in, leaf);
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0, n;
	struct task_struct *task = bpf_get_current_task_btf();
	struct path_view pv = {};
	struct scratch *sc;
	__u64 leaf = 0;
	__u16 cls;
	long un;

	if (!wanted(tgid, tid, ST_EVENT_FAULTS))
		return 0;
	stat_ev(ST_EVENT_FAULTS, ST_STAT_SAMPLES);
	sc = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!sc)
		return 0;
	un = user_stack(ctx, sc, false);
	if (un < 0) {
		stat_ev(ST_EVENT_FAULTS, ST_STAT_LOST_STACK);
		return 0;
	}
	if (un > 0)	/* the Python line whose work touched the data */
		un = st_py_sample(sc->ustack, (__u32)un, ST_MAX_USER, pid_tgid, task_image(task));
	path_user(&pv, sc, un, ST_EVENT_FAULTS);
	if (error_code & X86_PF_INSTR) {
		/* an instruction fetch: the path ends at the faulting function */
		stat_ev(ST_EVENT_FAULTS, ST_STAT_FAULT_INSTR);
	} else {
		cls = classify(task, address, regs->sp, regs->bp, &leaf);
		if (!cls)
			stat_ev(ST_EVENT_FAULTS, ST_STAT_FAULT_UNKNOWN);
		if (cls) {
			/* a page --force-faults paged out: its key is deleted at its next
			 * fault. Branch-free (0 or ST_NODE_FORCED): a branch here doubles the
			 * verifier's states of the fold below, past its 1M-instruction limit */
			struct st_forced_key fk = { .tgid = tgid, .page = address & ~4095ULL };
			__u64 forced = ~(__u64)bpf_map_delete_elem(&forced_pages, &fk) >> 63;
			__u32 key = ST_EVENT_FAULTS * ST_STAT__MAX + ST_STAT_FAULT_FORCED;
			__u64 *v = bpf_map_lookup_elem(&stats, &key);

			if (v)
				*v += forced;
			cls |= (__u16)(forced << 10);	/* ST_NODE_FORCED */
			stat_ev(ST_EVENT_FAULTS, (cls & ST_NODE_DATA_MODULE) ? ST_STAT_FAULT_MODULE :
						 (cls & ST_NODE_DATA_STACK)	 ? ST_STAT_FAULT_STACK :
											   ST_STAT_FAULT_HEAP);
			pv.extra = 1;
			pv.extra_flags = cls;
			pv.extra_addr = leaf;
		}
	}
	if (!pv.un && !pv.extra) {
		stat_ev(ST_EVENT_FAULTS, ST_STAT_EMPTY_STACK);
		pv.extra = 1;
		pv.extra_flags = ST_NODE_KERNEL | ST_NODE_LEAF;
	}
	n = pv.trunc + pv.un + pv.extra;
	if (n > ST_PATH_SLOTS - 1)
		n = ST_PATH_SLOTS - 1;
	pv.n = n;
	fold_sample(sc, &pv,
		    bpf_task_storage_get(&fault_threads, bpf_get_current_task_btf(), 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE),
		    ((__u64)tgid << 32) | tid, ST_EVENT_FAULTS);
	return 0;
}

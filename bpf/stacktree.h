/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stacktree.h - structures shared by the BPF programs (bpf/) and the daemon
 * (user/). Fixed-width __u32/__u64 types only; no pointers.
 *
 * The kernel folds every sample into a call-stack tree per (pid, tid):
 *   - node ids index the `nodes` array map; id 0 means "none";
 *   - the `node_slots` table (open addressing, one half per generation)
 *     maps (parent id, flags, address) to a node id, so that a node is
 *     created once and found again; the key is kept in the id's record;
 *   - a thread's root node has flag ST_NODE_ROOT, addr = (pid << 32) | tid
 *     and, in place of a parent, the image the thread runs: its task's
 *     self_exec_id (low 32 bits), which every exec increments and fork
 *     inherits; (pid, image) names one program a process ran, and an exec
 *     starts a new tree (kernel-notes/README.md).
 * Two generations of node ids alternate so that user space can drain one
 * while the programs fill the other: generation g owns the ids
 * [g * max_nodes + 1, (g + 1) * max_nodes].
 */
#ifndef STACKTREE_BPF_SHARED_H
#define STACKTREE_BPF_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* User frames per sample, native and interpreted merged (a C recursion
 * 300 deep, a Python one 150 deep through C every fifth level, HotSpot
 * frames): every walk is a bpf_loop() whose callback the verifier checks
 * once, so the limit costs only the samples that go that deep, and the
 * per-CPU arrays that hold the frames (kernel-notes/README.md, "Stack
 * depth"). Deeper stacks are cut at their outermost frames, under
 * [truncated], and counted (ST_STAT_TRUNCATED). */
#define ST_MAX_USER 768
/* x86-64 user addresses are below this (4-level paging; a process can map
 * above it only by asking for 5-level addresses, which stacktreed does not
 * support). A "return address" at or above it is stack garbage: no walker
 * makes a frame of it (bpf/unwind_step.h, bpf/walk.bpf.h), so no native
 * frame can carry bit 63, ST_PY_TAG. */
#define ST_USER_END (1ULL << 47)
#define ST_USER_MIN 4096ULL	/* the null page: below vm.mmap_min_addr nothing is mapped */
#define ST_MAX_KERNEL 64	/* kernel frames per sample (--kernel) */
#define ST_PATH_SLOTS 1024	/* path buffers: power of two >= user + kernel + 2 */
_Static_assert(ST_PATH_SLOTS >= ST_MAX_USER + ST_MAX_KERNEL + 2, "a path's frames fit");
#define ST_COMM_LEN 16
#define ST_MAX_CPUS 1024	/* -C: CPUs a filter can name (cpu_filter bits) */
#define ST_PY_MAX_FRAMES 512	/* Python frames walked per sample (bpf/pywalk.h);
				 * a power of two, twice it >= ST_MAX_USER */

/* Interpreted runtimes whose own stacks BPF walks (the `interpreters`
 * bitmask in .rodata, from --interpreters: user/collect/interp.h), one bit
 * each: bpf/python.bpf.h for CPython. */
#define ST_INTERP_PYTHON (1u << 0)
#define ST_INTERP_JAVA (1u << 1)	/* bpf/hotspot_step.h for HotSpot */
#define ST_INTERP_ALL (ST_INTERP_PYTHON | ST_INTERP_JAVA)

/* st_node_rec.flags */
#define ST_NODE_ROOT 0x1	/* a thread's root; addr = pid << 32 | tid */
#define ST_NODE_LEAF 0x2	/* the sampled instruction pointer */
#define ST_NODE_KERNEL 0x4	/* a kernel address */
#define ST_NODE_TRUNCATED 0x8	/* pseudo frame: the walk hit the depth limit */
#define ST_NODE_DATA_MODULE 0x10	/* page-fault data leaf: a module's data; addr = the
					 * faulting address */
#define ST_NODE_DATA_STACK 0x20	/* ... a stack: addr = (s64) offset from the faulting
				 * function's CFA (rbp + 16) */
#define ST_NODE_DATA_HEAP 0x40	/* ... heap: brk heap: addr = offset from its start;
				 * anonymous memory: addr = the address */
#define ST_NODE_DEAD 0x80	/* record allocated but not in the node table */
#define ST_NODE_HEAP_BRK 0x100	/* with DATA_HEAP: the brk heap (else anonymous mmap) */
#define ST_NODE_FAULTS 0x200	/* with ROOT: the thread's page-fault tree */
#define ST_NODE_FORCED 0x400	/* with a DATA flag: a fault on a page --force-faults paged
				 * out (its key was in forced_pages) */
#define ST_NODE_PYTHON 0x800	/* a CPython frame: addr = code object << 16 | instruction
				 * index (ST_PY_ADDR below) */
#define ST_NODE_JAVA 0x1000	/* a HotSpot interpreted frame: addr = ST_JAVA_ADDR(Method*,
				 * bci) (bpf/hotspot_step.h) */
#define ST_NODE_OFFCPU 0x4000	/* with ROOT: the thread's off-CPU tree (--event offcpu) */
#define ST_NODE_STATE 0x8000	/* off-CPU leaf: the thread's state when it left the CPU,
				 * addr = enum st_offcpu_state (bpf/offcpu.bpf.h) */
#define ST_NODE_DATA (ST_NODE_DATA_MODULE | ST_NODE_DATA_STACK | ST_NODE_DATA_HEAP)

/* An off-CPU path's leaf (ST_NODE_STATE): how the thread left the CPU, from
 * sched_switch's preempt flag and prev_state. */
enum st_offcpu_state {
	ST_OFFCPU_PREEMPTED,	/* runnable, waiting for a CPU: preempted (in the kernel
				 * or on its way back to user space), or it yielded */
	ST_OFFCPU_SLEEPING,	/* TASK_INTERRUPTIBLE (ps S) */
	ST_OFFCPU_DISK,		/* TASK_UNINTERRUPTIBLE (ps D) */
	ST_OFFCPU_IDLE,		/* TASK_IDLE: uninterruptible, not counted in the load (ps I) */
	ST_OFFCPU_STOPPED,	/* stopped or traced (ps T, t) */
	ST_OFFCPU_OTHER,
	ST_OFFCPU_STATES,
};

/* What a sample is; the stats map holds ST_STAT__MAX counters per event. */
#define ST_EVENT_CPU 0
#define ST_EVENT_FAULTS 1
#define ST_EVENT_OFFCPU 2	/* time off the CPU (bpf/offcpu.bpf.h): BASE in ns */
#define ST_EVENTS 3

struct st_node_rec {
	__u64 addr;
	__u32 parent;
	__u16 flags;
	__u16 gen;
	__u64 base;	/* samples where this node is the leaf */
	__u64 calls;	/* new calls of this frame, see kernel-notes/ */
};

/* Per-CPU counters, index of the `stats` per-CPU array. */
enum st_stat {
	ST_STAT_SAMPLES,	 /* timer samples of targeted threads, folded or lost */
	ST_STAT_FOLDED,		 /* samples folded into a tree */
	ST_STAT_LOST_NODES_FULL, /* no free node id in this generation */
	ST_STAT_LOST_TABLE_FULL,	 /* no free node_slots slot near the key's */
	ST_STAT_LOST_THREAD,	 /* no per-thread state (task storage) */
	ST_STAT_LOST_STACK,	 /* bpf_get_stack failed */
	ST_STAT_TRUNCATED,	 /* stacks cut at ST_MAX_USER (still folded) */
	ST_STAT_EMPTY_STACK,	 /* no user frame (kernel thread, exiting task) */
	ST_STAT_IDLE,		 /* samples of the idle task, not folded */
	ST_STAT_NEW_PROC_LOST,	 /* "new process" event lost (ring buffer full) */
	/* DWARF unwinding (--unwind dwarf|auto, bpf/unwind.h): why walks stopped
	 * before the outermost frame (the stack gets a [truncated] root; the
	 * depth limit counts as ST_STAT_TRUNCATED) */
	ST_STAT_UNW_NO_PROC,	 /* process tables not loaded yet (auto: frame pointers) */
	ST_STAT_UNW_NO_TABLE,	 /* an address without CFI (auto: frame pointers failed) */
	ST_STAT_UNW_READ_FAULT,	 /* reading the stack failed */
	ST_STAT_UNW_UNSUPPORTED, /* a CFI form the BPF unwinder does not evaluate */
	ST_STAT_UNW_BAD_FRAME,	 /* the stack pointer did not move up */
	ST_STAT_UNW_FP_FRAMES,	 /* auto: frames walked by frame pointers */
	ST_STAT_LOST_EPOCH,	 /* the generation moved twice while entering it */
	/* page faults (event ST_EVENT_FAULTS): by kind */
	ST_STAT_FAULT_INSTR,	 /* instruction fetches */
	ST_STAT_FAULT_MODULE,	 /* data in a module (.data, .rodata, .bss) */
	ST_STAT_FAULT_STACK,	 /* data on a stack */
	ST_STAT_FAULT_HEAP,	 /* data in the brk heap or anonymous memory */
	ST_STAT_FAULT_UNKNOWN,	 /* data faults left unclassified (mapping not found) */
	ST_STAT_UNW_OVER_BUDGET, /* walks through a module left without rows by --unwind-memory */
	ST_STAT_UNW_PENDING,	 /* walks through a module whose rows were not compiled yet */
	ST_STAT_DEFERRED,	 /* walks stopped for want of tables: stack copied for the daemon */
	ST_STAT_DEFER_LOST,	 /* ... but the deferred ring buffer was full (folded as walked;
				  * the early object's: ST_STAT_EARLY_LOST) */
	ST_STAT_IN_EXECVE,	 /* timer samples inside execve: neither image's (not taken) */
	ST_STAT_FAULT_FORCED,	 /* data faults on pages --force-faults paged out */
	ST_STAT_HANDOFF,	 /* threads folded here again, from the daemon's last late path */
	ST_STAT_HANDOFF_MISSED,	 /* ... without it: the daemon fell ST_HANDOFF_WAIT samples behind */
	ST_STAT_UNW_TOO_MANY_MAPS, /* walks stopped in a mapping left out of its table */
	/* counted by the daemon (user/collect/unwind/deferred.c), never by BPF */
	ST_STAT_LATE_UNWOUND,	 /* deferred samples unwound and folded by the daemon */
	ST_STAT_LATE_DROPPED,	 /* deferred samples dropped: the daemon's queue was full */
	ST_STAT_LATE_AGED,	 /* deferred samples walked without waiting longer (ST_DEFER_WAIT_S) */
	/* counted by BPF again */
	ST_STAT_SPARE_THREAD,	 /* folded with the CPU's spare state: no task storage (calls not counted) */
	ST_STAT_MAP_EVENTS,	 /* processes whose executable mappings were kept at their end
				  * (bpf/endmaps.bpf.h) */
	ST_STAT_MAP_LOST,	 /* ... mappings not kept: over ST_EXEC_MAPS for their process */
	/* off-CPU (bpf/offcpu.bpf.h), counted in ST_EVENT_OFFCPU's row even with
	 * --event wall */
	ST_STAT_OFFCPU_NS,	 /* ns of off-CPU time folded */
	ST_STAT_OFFCPU_SHORT,	 /* off-CPU periods under --offcpu-min-us: not folded */
	ST_STAT_OFFCPU_SHORT_NS, /* ... their ns */
	ST_STAT_OFFCPU_RATE,	 /* switch-outs over --offcpu-max-rate: not walked, not folded */
	ST_STAT_OFFCPU_RATE_NS,	 /* ... their ns off the CPU */
	ST_STAT_EARLY,		 /* timer samples taken before the full walker was in
				  * (on_timer_early: deferred, or frame pointers) */
	/* counted by the daemon (user/collect/unwind/unwind_native.h, st_unw_scan()) */
	ST_STAT_UNW_SCANNED,	 /* frames without CFI whose return address the checked scan found */
	ST_STAT_UNW_SCAN_FAILED, /* ... scans that found none (the walk cut there) */
	ST_STAT_EARLY_LOST,	 /* an early sample whose stack copy the deferred ring buffer
				  * had no room for: lost (the early object walks nothing) */
	ST_STAT__MAX,
};

/* timer_jump's slots (bpf/sample.bpf.c): the programs on_timer tail-calls */
#define ST_TIMER_SLOT_FULL 0	/* on_timer_fp or on_timer_dwarf, once loaded */
#define ST_TIMER_SLOT_EARLY 1	/* on_timer_early, until then */

/* The early object (bpf/early.bpf.c, user/collect/early.c): one program
 * on per-task cpu-clock events of a launched command, inherited by its
 * children, sampling while the full timer program is verified. Its map
 * timer_early (shared with the session's object) says which samples:
 * ST_TIMER_EARLY_ON, the early object's (the session's on_timer returns
 * at once); ST_TIMER_EARLY_OFF, the session's timers' (the early program
 * returns at once): one write switches, no sample taken twice. */
#define ST_TIMER_EARLY_OFF 0
#define ST_TIMER_EARLY_ON 1

/* targets map values */
#define ST_TARGET_ACTIVE 1	/* sample this process */
#define ST_TARGET_AT_EXEC 2	/* start sampling when it calls exec (launched command) */
#define ST_TARGET_AT_TABLES 3	/* exec'd (dwarf/auto): in the loader */
#define ST_TARGET_STARTED 4	/* ran outside the loader: the daemon reads its maps again */

/* Ring buffer events: the daemon captures a process's maps on first sight. */
#define ST_EV_NEW_PROC 1
#define ST_EV_EXEC 2
#define ST_EV_EXIT 3	/* a seen process's main thread exited */
#define ST_EV_UNWIND 4	/* unwinding met an address without tables: refresh the maps */
#define ST_EV_TABLES 5	/* a launched command exec'd: push its tables */
#define ST_EV_STARTED 6	/* it left the dynamic loader: push its tables again, activate it */

/* A sampled process's executable file mappings as it ended (bpf/endmaps.bpf.h:
 * map exec_maps, key st_exec_key): what /proc/PID/maps showed, kept for
 * the daemon to read when a process it captures is gone before its maps
 * could be read (a build's cc1, as, sh live milliseconds). Each file's path is in
 * map file_paths (key: its device and inode), built from its dentries up
 * to ST_MAP_PATH_MAX bytes, across mounts, at path[off .. ST_MAP_PATH_END)
 * with a NUL there; the daemon takes it only when the file at that path
 * is the inode mapped. */
#define ST_EXEC_MAPS 32		/* mappings kept per process (a power of two; the rest counted) */
#define ST_MAP_PATH_END 256
#define ST_MAP_PATH_MAX (ST_MAP_PATH_END - 1)
#define ST_MAP_CUT 1		/* the path did not fit or was not walked to its root */
#define ST_MAP_VDSO (~0ULL)	/* st_exec_map.dev of the vDSO (no file) */
struct st_exec_map {
	__u64 start, end, pgoff;
	__u64 dev;	/* the file system's s_dev (kernel encoding: major << 20 | minor) */
	__u64 ino;
};
struct st_exec_key {
	__u32 pid;
	__u32 image;	/* the image (self_exec_id) that ran with them */
};
struct st_exec_maps {
	__u32 image;
	__u32 n;	/* mappings in m[] */
	struct st_exec_map m[ST_EXEC_MAPS];
};
struct st_file_key {
	__u64 dev, ino;
};
struct st_file_path {
	__u32 off;	/* the path is path[off .. ST_MAP_PATH_END) */
	__u32 flags;	/* ST_MAP_* */
	char path[2 * ST_MAP_PATH_END];	/* (the upper half: room for the walk's writes) */
};

struct st_event {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 ppid;	/* ST_EV_NEW_PROC: the parent whose image (and mappings) it
			 * still runs, when it was forked during the session; or 0 */
	__u32 image;	/* the process's image (self_exec_id) when it was sent */
	__u32 pad;
	char comm[ST_COMM_LEN];
};

/* forced_pages key (--force-faults, user/collect/faults/forcefault.c): a page the
 * daemon is about to page out; the fault program deletes it at the page's next
 * fault and marks that fault's data leaf ST_NODE_FORCED. */
struct st_forced_key {
	__u32 tgid;
	__u32 pad;
	__u64 page;	/* address & ~4095 */
};

/* thread_comms key: a thread's comm in one image */
/* proc_images: the image (self_exec_id) a process runs, so that the daemon
 * reads /proc/PID only for the image it means; busy from the start of an
 * exec (sched_prepare_exec, where the kernel has it) to its end. A process
 * forked during the session names its parent: until it execs, it runs the
 * parent's image with the parent's mappings (self_exec_id is copied at
 * fork), which the daemon lends it when its own /proc/PID/maps came too
 * late (it exec'd first). */
struct st_proc_image {
	__u32 image;
	__u32 busy;
	__u32 parent;		/* tgid of the process that forked it (0: not seen) */
	__u32 fork_image;	/* its image at that fork */
};

struct st_comm_key {
	__u64 addr;	/* pid << 32 | tid */
	__u32 image;
	__u32 pad;
};

/*
 * DWARF unwinding (bpf/unwind.h, user/collect/unwind/unwind_tables.c, user/collect/unwind/unwinder.c;
 * kernel-notes/unwinding.md). User space compiles each module's CFI into
 * rows sorted by pc, stored once per module (shared by build id) in an
 * extent of a shard (an array map in a slot of `unwind_shards`, see
 * user/collect/unwind/unwind_store.h); each process has a sorted table of its executable
 * mappings in `unwind_procs` (key: tgid): up to ST_UNWIND_MAX_MAPS in the
 * table itself, more in chunks that the table indexes (see
 * ST_UNWIND_CHUNK_KEY). x86-64: the return address is at CFA - 8
 * and the caller's rsp is the CFA.
 */
#define ST_UNWIND_FP 0		/* --unwind fp: bpf_get_stack, frame pointers */
#define ST_UNWIND_DWARF 1	/* --unwind dwarf: CFI only, stop where there is none */
#define ST_UNWIND_AUTO 2	/* --unwind auto: CFI, frame pointers where there is none */

enum st_unw_kind {		/* st_unwind_row.kind & ST_UNW_KIND_MASK */
	ST_UNW_NONE,		/* no CFI covers this pc */
	ST_UNW_RSP,		/* CFA = rsp + off */
	ST_UNW_RBP,		/* CFA = rbp + off */
	ST_UNW_PLT,		/* .plt: CFA = rsp + off + ((ip & 15) >= rbp ? 8 : 0) */
	ST_UNW_DEREF_RBP,	/* stack realignment: CFA = *(rbp + off) */
	ST_UNW_SIGNAL,		/* sigreturn trampoline: registers in the ucontext at rsp */
	ST_UNW_END,		/* outermost frame: return address undefined */
	ST_UNW_UNSUPPORTED,	/* a CFI form the BPF unwinder does not evaluate */
	ST_UNW_R10,		/* CFA = r10 + off (DRAP prologue/epilogue): the leaf only */
	ST_UNW_RBX,		/* CFA = rbx + off (glibc's lazy-binding resolver,
				 * _dl_runtime_resolve*): where rbx is known (the
				 * leaf's, a signal frame's, or restored through the
				 * frames below by their ST_UNW_RBX_* rules) */
};
#define ST_UNW_KIND_MASK 0x0f
#define ST_UNW_F_RBP_AT_RBP 0x10 /* saved rbp at rbp + 8 * rbp, not at CFA + 8 * rbp */
#define ST_UNW_F_OFF8 0x20	 /* off is in units of 8 bytes (frames over 32 KiB) */
#define ST_UNW_F_OVER_BUDGET 0x40 /* (BPF only, kind NONE) the module has no rows for want
				   * of memory (--unwind-memory) */
#define ST_UNW_F_PENDING 0x80	 /* (BPF only, kind NONE) its rows are not compiled yet */
/* The same two bits in a row of any other kind: where this frame keeps the
 * caller's rbx (callee-saved), so that a frame above whose CFA is rbx-based
 * (ST_UNW_RBX) knows it. 96-99.9% of the rows of ld.so, libc, libpython and
 * perl are one of the first three (compilers push rbx last, just below rbp
 * when both are saved); kernel-notes/unwinding.md. */
#define ST_UNW_RBX_SHIFT 6
#define ST_UNW_RBX_SAME 0	/* rbx unchanged by this frame (or restored already) */
#define ST_UNW_RBX_BELOW_RBP 1	/* at the slot below rbp's (CFA + 8 * rbp - 8) */
#define ST_UNW_RBX_CFA16 2	/* at CFA - 16 (rbx pushed first, rbp not saved) */
#define ST_UNW_RBX_LOST 3	/* elsewhere: not known above this frame */

/* rbx as a walk goes (bpf/unwind_step.h): val, unless at is not 0: where a
 * frame below saved it (read by an rbx-based CFA only); val 0 and at 0:
 * not known. */
struct st_unw_rbx {
	__u64 val, at;
};
#define ST_UNW_RBP_SAME 0	 /* st_unwind_row.rbp: rbp unchanged by this frame */
#define ST_UNW_RBP_UNKNOWN (-128) /* rbp not recoverable (later rbp-based frames fail) */

struct st_unwind_row {
	__u32 pc;	/* first module-relative address of the row (ELF vaddr - the
			 * module's base: user/collect/unwind/unwind_tables.h) */
	__u8 kind;	/* enum st_unw_kind | ST_UNW_F_* */
	__s8 rbp;	/* saved rbp at CFA + 8 * rbp; ST_UNW_RBP_SAME / _UNKNOWN */
	__s16 off;	/* CFA offset (see kind) */
};

#define ST_UNWIND_MAX_SHARDS 1024	/* shard slots in unwind_shards */
#define ST_UNWIND_ANY_IMAGE 0xffffffffu	/* st_unwind_proc.image: not known */
#define ST_UNWIND_MAX_MAPS 256	/* entries of a table or a chunk (power of two) */
#define ST_UNWIND_MAP_STEPS 9	/* binary search steps: log2(ST_UNWIND_MAX_MAPS) + 1 */
#define ST_UNWIND_MAX_CHUNKS 64	/* chunks per process: */
#define ST_UNWIND_MAX_PROC_MAPS (ST_UNWIND_MAX_CHUNKS * ST_UNWIND_MAX_MAPS) /* 16,384 */
#define ST_UNWIND_CHUNK_ENTRIES 1024	/* chunks of all processes (unwind_procs entries) */
/* A chunk is an st_unwind_proc too (nmaps, maps; the rest unused), in
 * unwind_procs at a key no tgid has (PID_MAX_LIMIT is 2^22): the walk's
 * pointers into a table and into a chunk are then of one map, which keeps
 * the verifier's work the same (kernel-notes/unwinding.md). gen < 2^25. */
#define ST_UNWIND_GEN_MASK 0x1ffffffu
#define ST_UNWIND_CHUNK_KEY(gen, k) (0x80000000u | ((gen) << 6) | (k))
#define ST_UNWIND_ROW_STEPS 22	/* binary search steps over a module's rows */
#define ST_UNWIND_MAX_MODULE_ROWS ((1u << (ST_UNWIND_ROW_STEPS - 1)) - 1)

struct st_unwind_map {
	__u64 start;	/* runtime address of the executable mapping */
	__u32 len;	/* its length */
	__u32 vaddr;	/* module-relative address at start: pc = ip - start + vaddr */
	__u32 shard;	/* the module's rows: the shard's slot in unwind_shards, */
	__u32 first;	/* first row there, */
	__u32 nrows;	/* count (0: none, frame pointers in auto mode: see flags) */
	__u32 flags;	/* ST_UNWIND_MAP_* */
	/* the module's pc index (0 buckets: none), right after its rows in the
	 * shard: bucket b (pcs with pc >> ishift == ibase + b) is an
	 * st_unwind_bucket at row first + nrows + b */
	__u32 nbuckets;
	__u32 ishift;
	__u32 ibase;
	__u32 pad;
};

/* Rows [first + lo, first + hi) of a module hold every row whose pc falls
 * in the bucket, and lo = the count of rows below the bucket's first pc:
 * the row covering a pc of the bucket is found by searching that range
 * alone (user/collect/unwind/unwind_index.c). Stored in a row's 8 bytes. */
struct st_unwind_bucket {
	__u32 lo, hi;
};

#define ST_UNWIND_MAP_OVER_BUDGET 0x1	/* no rows: the module did not fit --unwind-memory */
#define ST_UNWIND_MAP_PENDING 0x2	/* no rows yet: the daemon is compiling them */
#define ST_UNWIND_MAP_CHUNK 0x4		/* an index entry: the mappings from start on (up
					 * to the next entry's) are in chunk `shard` */
#define ST_UNWIND_PROC_TRUNCATED 0x1	/* st_unwind_proc.flags: mappings left out (more
					 * than ST_UNWIND_MAX_PROC_MAPS, or no room) */
_Static_assert(ST_UNWIND_MAX_CHUNKS <= 64, "a chunk number fits in 6 bits of the key");

/* A process's table: its mappings themselves when they are at most
 * ST_UNWIND_MAX_MAPS, else an index of chunks (every entry
 * ST_UNWIND_MAP_CHUNK, start = its chunk's first mapping's). */
struct st_unwind_proc {
	__u32 nmaps;	/* maps[0..nmaps) sorted by start, disjoint */
	__u32 gen;	/* table version, unique per push (below 2^25): keys the BPF
			 * row cache and the chunks */
	__u32 image;	/* the image whose maps these are (self_exec_id), or
			 * ST_UNWIND_ANY_IMAGE: a process the kernel had not reported */
	__u32 flags;	/* ST_UNWIND_PROC_* */
	__u64 interp_start, interp_len;	/* the dynamic loader's text (0: none) */
	struct st_unwind_map maps[ST_UNWIND_MAX_MAPS];
};

/* Chunk k of a table of version gen: up to ST_UNWIND_MAX_MAPS consecutive
 * mappings, at unwind_procs key ST_UNWIND_CHUNK_KEY(gen, k). A new version
 * of a table has a new gen: its chunks are written before it, the old ones
 * deleted after, so a walk never mixes two versions. */

/*
 * Deferred unwinding (dwarf/auto, user/collect/unwind/deferred.c): a timer sample whose walk
 * stopped because the process or a module it went through had no rows yet
 * (a young process, a new library) is not folded in BPF: its registers, the
 * top of its user stack and its kernel frames go to the `deferred` ring
 * buffer, and the daemon unwinds it with the same rows once they are in.
 */
/* handoffs (hash by tid), written by the daemon once it has unwound a
 * thread's deferred samples up to seq: its last path (as the fold keeps
 * it: root first, flags ST_NODE_*), so that the first sample folded in BPF
 * after them counts as new calls only the frames that are new to it. */
#define ST_HANDOFF_WAIT 2000	/* deferred samples a thread waits for its handoff */

struct st_handoff {
	__u32 seq;		/* st_deferred.seq of the last deferred sample */
	__u32 n;		/* frames in the path */
	__u64 addrs[ST_PATH_SLOTS];
	__u16 flags[ST_PATH_SLOTS];
};

#define ST_DEFER_STACK 262144	/* bytes of user stack copied from sp up (cc1: up to 95 KiB;
				 * python3.11, 150 levels through sorted(): 154 KiB) */
#define ST_DEFER_CHAIN 1024	/* steps of a deferred copy's frame-pointer chain (defer.bpf.h) */
#define ST_TEST_DEFER_ALL 1	/* tests only: every sample deferred (base.bpf.h test_defer) */
#define ST_TEST_DEFER_NO_VMA 2	/* ... and its stack's mapping not looked up */
/* The deferred ring's reader is woken once 1/ST_DEFER_WAKE_SHARE of it
 * waits (bpf/defer.bpf.h), else reads it every ST_DEFER_READ_MS while
 * records come: 20 ms of a target's samples at 999 Hz on 2 CPUs is 40
 * records, mostly a few KiB each. */
#define ST_DEFER_WAKE_SHARE 8
#define ST_DEFER_READ_MS 20

/* ---- CPython (bpf/python.bpf.h walks it, user/collect/runtimes/python/
 * feeds it): what the BPF program and the daemon share ---- */

#define ST_PY_CODE_BUF 160	/* bytes of a code object read (its type and st_py_ident()'s fields) */
#define ST_PY_CODE_ROOM 256	/* room for them (a power of two: masked index) */
#define ST_PY_GENS 16		/* generations of a code address (its 4 aligned bits) */
#define ST_PY_TAG (1ULL << 63)	/* frame array entry: a Python frame's node address */
#define ST_PY_IDX_MAX 0xffffULL
#define ST_PY_NO_OFF 0xffff	/* st_py_layout: the field does not exist */
#define ST_PY_USER_MAX ST_USER_END

/* A Python node's address (ST_NODE_PYTHON): code key << 16 | min(index,
 * 0xffff), the index being the first code unit of the instruction's run
 * of one line when the runs have it (else the instruction's own), the code
 * key being the code object's address with its generation in the low 4
 * bits, which are zero in a 16-byte aligned object (obmalloc and glibc's
 * malloc align them so): a code object freed and its address reused for
 * another one is another key (bpf/pymemo.h). User addresses are below
 * 2^47, so this stays below 2^63, and bit 63 is free for ST_PY_TAG in the
 * frame array. */
#define ST_PY_ADDR(code, idx) (((__u64)(code) << 16) | ((idx) > ST_PY_IDX_MAX ? ST_PY_IDX_MAX : (idx)))
#define ST_PY_CODE(addr) ((addr) >> 16)
#define ST_PY_INDEX(addr) ((__u32)((addr) & 0xffff))

/* Runs of one line of a code object (bpf/pylines.h), for its first
 * ST_PY_RUN_UNITS code units: bit i of starts set when unit i starts a run
 * (its line is not its predecessor's). Units from `cover` on are not in
 * it. */
#define ST_PY_RUN_UNITS 256
#define ST_PY_RUN_WORDS (ST_PY_RUN_UNITS / 64)
struct st_py_runs {
	__u64 starts[ST_PY_RUN_WORDS];
};

/* Byte offsets of the fields walked, per CPython version
 * (user/collect/runtimes/python/pyoffsets.c). */
struct st_py_layout {
	__u16 runtime_interp_head;	/* _PyRuntimeState.interpreters.head */
	__u16 interp_threads_head;	/* PyInterpreterState.threads.head */
	__u16 tstate_next;		/* PyThreadState.next */
	__u16 tstate_native_tid;	/* PyThreadState.native_thread_id */
	__u16 tstate_cframe;		/* PyThreadState.cframe (3.11, 3.12) */
	__u16 cframe_current_frame;	/* _PyCFrame.current_frame (ST_PY_NO_OFF: the
					 * thread state's own field at tstate_cframe, 3.13) */
	__u16 frame_code;		/* _PyInterpreterFrame.f_code (3.13: f_executable) */
	__u16 frame_previous;
	__u16 frame_prev_instr;		/* prev_instr (3.13: instr_ptr) */
	__u16 frame_is_entry;		/* bool is_entry (3.11), or ST_PY_NO_OFF */
	__u16 frame_owner;		/* char owner */
	__u16 owner_cstack;		/* owner value of C-stack shim frames (3.12+) or
					 * ST_PY_NO_OFF */
	__u16 code_adaptive;		/* PyCodeObject.co_code_adaptive */
	__u16 code_qualname, code_filename, code_firstlineno, code_linetable;
	__u16 object_type;		/* PyObject.ob_type */
	__u16 unicode_length;		/* PyASCIIObject.length */
	__u16 unicode_state;		/* PyASCIIObject.state (32-bit bit field) */
	__u16 unicode_ascii_data;	/* sizeof(PyASCIIObject): a compact ASCII string's data */
	__u16 unicode_compact_data;	/* sizeof(PyCompactUnicodeObject) */
	__u16 bytes_size;		/* PyVarObject.ob_size */
	__u16 bytes_data;		/* PyBytesObject.ob_sval */
	__u16 version;			/* 0x030b: 3.11 ... 0x030d: 3.13 */
	__u16 code_consts;		/* PyCodeObject.co_consts, then co_names and
					 * co_exceptiontable (st_py_ident()) */
	__u16 frame_lasti;		/* 3.10: PyFrameObject.f_lasti, the index of the
					 * code unit running (an int; -1: not started), or
					 * ST_PY_NO_OFF: the index from frame_prev_instr */
	__u16 tstate_pthread;		/* 1: tstate_native_tid is 3.10's thread_id,
					 * pthread_self(): the thread's fs base */
};

/* py_procs value (key: tgid), pushed by the daemon (user/collect/runtimes/python/pyproc.c). */
struct st_py_proc {
	__u64 runtime;			/* address of _PyRuntime */
	__u64 eval_start, eval_end;	/* _PyEval_EvalFrameDefault's text */
	__u64 cold_start, cold_end;	/* ... its .cold part (GCC's hot/cold split), or 0 */
	__u64 code_type;		/* address of PyCode_Type (0: unknown) */
	__u64 text_start, text_end;	/* the interpreter's executable mapping when its
					 * frames between two runs are its call plumbing
					 * (3.10: every Python call is a C call), else 0 */
	__u32 image;			/* the image (self_exec_id) it was found in */
	__u32 from_exec;		/* 1: put by BPF at the exec, from the file's
					 * template (py_exes); 0: by the daemon's probe */
	struct st_py_layout l;
};

/* py_exes key: an executable file holding CPython (its interpreter in the
 * executable itself, not in a libpython), as the kernel knows the file
 * (mm->exe_file's inode). */
struct st_py_exe_key {
	__u64 ino;
	__u64 size;	/* i_size and */
	__s64 mtime;	/* ... i_mtime_sec: a file replaced under one inode is another */
	__u32 dev;	/* its superblock's dev_t, the kernel's encoding (major << 20 | minor) */
	__u32 pad;
};

/* py_exes value: the py_procs entry of a process running that file, its
 * addresses the file's own (bpf/pyexec.h relocates them at an exec). */
struct st_py_exe {
	__u64 text_vaddr;	/* p_vaddr of the file's lowest executable PT_LOAD */
	struct st_py_proc tmpl;	/* image 0, from_exec 0 */
};

/* py_codes key: a code address the process was sampled in */
struct st_py_code_key {
	__u32 tgid;
	__u32 image;	/* an exec's new program reports its code objects anew */
	__u64 code;
};

/* py_codes value: the object last reported at that address. */
struct st_py_code_seen {
	__u64 ident;	/* st_py_ident() of the object */
	struct st_py_runs runs;	/* its runs of one line (pylines.h), */
	__u32 gen;	/* its generation (0 .. ST_PY_GENS - 1) */
	__u16 cover;	/* ... of its first `cover` code units (0: none known) */
	__u16 pad;
};

/* What a report copies of a code object's memory at the sample, while it
 * is alive (struct st_py_event): its header, and the first bytes of the
 * objects holding its qualified name, file name and location table, each
 * room for the header and the text the daemon keeps (ST_PY_NAME_MAX,
 * ST_PY_FILE_MAX of user/collect/runtimes/python/pycode.h in an ASCII str, 3.11) or a
 * table of 990 bytes. The daemon reads the object from these copies
 * (user/collect/runtimes/python/python.c), the process's memory only for what they miss:
 * a code object freed (or its process gone) before the daemon reads it
 * keeps its name. */
#define ST_PY_SNAP_NAME 320
#define ST_PY_SNAP_FILE 576
#define ST_PY_SNAP_TABLE 1024
#define ST_PY_SNAP_SMALL 64	/* read when a whole copy fails (the object at
				 * the end of its mapping) */
enum { ST_PY_SNAP_CODE, ST_PY_SNAP_QUAL, ST_PY_SNAP_FNAME, ST_PY_SNAP_LT, ST_PY_SNAPS };

/* py_events ring buffer: a code object not seen before at its address. */
struct st_py_event {
	__u32 pid;
	__u32 image;
	__u64 code;	/* the object's address (read there) */
	__u64 key;	/* ST_PY_CODE() of its frames: the address and generation */
	__u64 ident;	/* st_py_ident(): a second report of one key with another
			 * ident is an address reused past ST_PY_GENS generations */
	__u64 at[ST_PY_SNAPS];	/* where each copy was read from */
	__u32 len[ST_PY_SNAPS];	/* its bytes (0: none) */
	__u64 hdr[ST_PY_CODE_ROOM / 8];	/* ST_PY_CODE_BUF of it read */
	__u8 qual[ST_PY_SNAP_NAME];
	__u8 file[ST_PY_SNAP_FILE];
	__u8 table[ST_PY_SNAP_TABLE];
};

_Static_assert(sizeof(struct st_py_event) == 2256, "py_events' sizing (1 MiB) counts on it");

/* Per-CPU counters, index of the `py_stats` per-CPU array. */
enum st_py_stat {
	ST_PY_STAT_SAMPLES,	/* samples of processes running a known CPython */
	ST_PY_STAT_WALKED,	/* ... with at least one Python frame */
	ST_PY_STAT_FRAMES,	/* Python frames folded */
	ST_PY_STAT_NO_THREAD,	/* the thread has no thread state (not running Python) */
	ST_PY_STAT_NO_FRAME,	/* a thread state without a current frame */
	ST_PY_STAT_READ_FAULT,	/* a read of interpreter state failed: walk stopped */
	ST_PY_STAT_BAD_VALUE,	/* an absurd pointer (kernel, unaligned, self loop): stopped */
	ST_PY_STAT_TRUNCATED,	/* more than ST_PY_MAX_FRAMES frames: cut */
	ST_PY_STAT_UNMATCHED,	/* evaluation frames without Python frames, or the reverse */
	ST_PY_STAT_MERGE_CUT,	/* merged stack over the frame array: cut at the root */
	ST_PY_STAT_CODE_EVENTS,	/* new code objects reported to the daemon */
	ST_PY_STAT_CODE_LOST,	/* ... lost: the ring buffer was full */
	ST_PY_STAT_DEFERRED,	/* samples unwound late by the daemon (Python frames merged there) */
	ST_PY_STAT_READS,	/* the walks' reads of process memory (the most of their cost) */
	ST_PY_STAT_READS_FRAMES,	/* ... of them, of frames (a window of them) */
	ST_PY_STAT_READS_CODES,	/* ... of them, of code objects (type and identity) */
	ST_PY_STAT_EXEC_FOUND,	/* execs of a file in py_exes: walked from the exec */
	ST_PY_STAT_EXEC_REFUSED,	/* ... whose template did not fit (bias) or was not put */
	ST_PY_STAT__MAX,
};

/* py_stats' one per-CPU value: one lookup a sample for all its counts. */
struct st_py_counts {
	__u64 n[ST_PY_STAT__MAX];
};

/* A deferred sample's Python frames (bpf/pywalk.h): walked by BPF at the
 * sample, while the interpreter's frames are live, and merged by the daemon
 * after its native unwind with the same merge (user/collect/runtimes/python/pymerge.h). */
struct st_py_frames {
	__u64 eval_start, eval_end;	/* the process's _PyEval_EvalFrameDefault, */
	__u64 cold_start, cold_end;	/* ... and its .cold part (or 0) */
	__u64 text_start, text_end;	/* the interpreter's text, whose frames between
					 * two runs are dropped (3.10), or 0 */
	__u64 addr[ST_PY_MAX_FRAMES];	/* ST_PY_ADDR, leaf first */
	__u8 ends[ST_PY_MAX_FRAMES];	/* last frame of an evaluation call's run */
	__u32 n;			/* frames in addr[] (0: none, or not Python) */
	__u32 whole;			/* 1: the walk reached the outermost frame (the
					 * merge pairs the runs from the root) */
};

#define ST_USER64_CS 0x33	/* pt_regs.cs of 64-bit user mode (__USER_CS); ia32: 0x23 */

/* Whether user registers whose cs is this are a 32-bit (ia32) process's,
 * whose frames are 4-byte words: the one rule for the fp walk's choice of
 * walker, the DWARF modes' (bpf/walk.bpf.h) and a deferred sample's
 * compat flag (bpf/shared_rules.h). */
static inline int st_cs_compat(__u64 cs)
{
	return cs != ST_USER64_CS;
}

struct st_deferred {
	__u32 pid, tid;
	__u32 image;		/* the image the thread ran (self_exec_id) */
	__u32 seq;		/* the thread's deferred samples, this one included */
	__u64 ip, sp, bp, r10, rbx, r13;	/* the interrupted user registers */
	__u32 stack_len;	/* bytes of stack[] (from sp) */
	__u32 kn;		/* kernel frames in kstack (--kernel), leaf first */
	__u32 compat;		/* 1: a 32-bit (ia32) process's (cs not ST_USER64_CS): its
				 * frames are 4-byte words (user/collect/unwind/fpcopy.h) */
	__u32 pad;
	__u64 holes;		/* bit i: page i of the copy (0: sp's, to its end) was not
				 * there (never touched: a big frame's unused part): zeros,
				 * not read (st_deferred_hole()) */
	char comm[ST_COMM_LEN];
	__u64 kstack[ST_MAX_KERNEL];
	struct st_py_frames py;	/* its Python frames */
	__u8 stack[ST_DEFER_STACK];
};
_Static_assert(__builtin_offsetof(struct st_deferred, stack) % 8 == 0,
	       "bpf/defer.bpf.h's chain_step() loads aligned words from stack[]");

/* Whether bytes [off, off + n) of a copy of the stack from sp (n > 0)
 * touch one of its holes (struct st_deferred's). */
static inline int st_deferred_hole(__u64 holes, __u64 sp, __u64 off, __u64 n)
{
	__u64 first = 4096 - (sp & 4095);
	__u64 a = off < first ? 0 : 1 + (off - first) / 4096;
	__u64 b = off + n - 1 < first ? 0 : 1 + (off + n - 1 - first) / 4096;

	if (!holes)
		return 0;
	for (__u64 i = a; i <= b && i < 64; i++)
		if (holes & (1ull << i))
			return 1;
	return 0;
}

/* ---- HotSpot: bpf/hotspot_abi.h ---- */
#include "hotspot_abi.h"

#endif

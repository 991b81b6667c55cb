/* unwinder.h - the daemon's side of DWARF unwinding: compiles the CFI of
 * every module a profiled process maps (user/collect/unwind/unwind_tables.c), once per
 * build id, into the BPF rows array (user/collect/unwind/unwind_modules.c, within a time
 * budget), and pushes each process's table of executable mappings into the
 * BPF hash, so that bpf/unwind.h can walk its stacks. Owner:
 * user/collect/unwind/unwinder.c. See kernel-notes/unwinding.md. */
#ifndef STACKTREE_UNWINDER_H
#define STACKTREE_UNWINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "bpf/stacktree.h"
#include "user/collect/unwind/unwind_cache.h"

struct st_session;
struct st_unwinder;

struct st_unwinder_stats {
	size_t loaded, rows_loaded; /* modules given rows, and their rows, over the session */
	size_t modules;		/* modules with rows in the kernel now */
	size_t no_cfi;		/* modules without usable CFI (frame pointers in auto) */
	size_t no_room;		/* modules left without rows by the memory budget (or
				 * for want of a module slot), over the session */
	size_t rows;		/* rows in the kernel now */
	size_t bytes, budget;	/* their kernel memory (pages) / --unwind-memory */
	size_t peak_bytes;	/* the most bytes held at once */
	size_t shards;		/* rows maps in the kernel now */
	size_t released;	/* modules released: no live process mapped them */
	char no_room_names[160]; /* the first modules over the budget (basenames) */
	size_t unsupported;	/* rows with a CFI form BPF does not evaluate */
	size_t procs;		/* processes given a table */
	size_t pushes;		/* process tables written */
	size_t too_many_maps;	/* processes with mappings left out of their table (more
				 * than ST_UNWIND_MAX_PROC_MAPS, or no room for chunks) */
	size_t other_image;	/* tables not pushed: read in or across an exec (read again) */
	size_t ended;		/* last tables from the mappings BPF kept at a process's end */
	size_t ended_none;	/* ... none kept (walked with the table read before) */
	double compile_s;	/* time spent compiling CFI */
	struct st_ucache_stats cache;	/* the on-disk cache (dir NULL: off) */
	size_t refused;		/* files not parsed: FIFO, device, over the size bound */
	size_t unshared;	/* non-root files with a build id, not shared by it */
	/* the code the daemon's walks read (st_ufile__read(), issue 37) */
	size_t code_files;	/* files kept open for it now */
	size_t code_files_peak;	/* ... the most at once */
	size_t code_files_max;	/* ... at most (ST_UFILE_MAX_FDS, RLIMIT_NOFILE) */
	size_t code_not_kept;	/* mappings of files not kept: over the bound, or
				 * unreadable (the process's memory read instead) */
	size_t code_file_reads;	/* reads from files (and the vDSO's image) */
	size_t code_mem_reads;	/* reads from the process's memory (JIT code, a file
				 * not kept) */
	size_t code_failed;	/* reads that failed (the process gone, or short) */
};

struct st_unwinder_opts {
	size_t budget_bytes;	/* --unwind-memory */
	bool cache;		/* the on-disk cache of compiled tables (user/collect/unwind/unwind_cache.h) */
	const char *cache_dir;	/* NULL: the default one */
	size_t cache_bytes;	/* its size bound */
	bool verbose;
	double compile_s;	/* seconds of compiling in every 0.2 s before modules
				 * wait for the loop (st_unwinder__work()); 0: 0.04 */
};

/* NULL with errno set on failure. The session must be in dwarf or auto mode. */
struct st_unwinder *st_unwinder__new(struct st_session *s, const struct st_unwinder_opts *o);
void st_unwinder__free(struct st_unwinder *u);

/* Compile the tables of a command's executable (found in PATH like
 * execvp) before it runs. libc, the dynamic loader and the vDSO are
 * compiled by st_unwinder__new(). */
int st_unwinder__preload(struct st_unwinder *u, const char *cmd);

/* (Re-)read /proc/PID/maps, compile the tables of modules not seen before
 * and push the process's mapping table (only when it changed). 0, or
 * negative errno (-ENOENT: the process is gone, or exiting: no mapping
 * left to read). */
int st_unwinder__update(struct st_unwinder *u, __u32 pid);
/* The table of process pid, gone from /proc (or exiting: its maps read
 * empty) before its last deferred samples were walked, from the mappings
 * BPF kept at its end while it ran image (st_unwinder__on_exec_maps()):
 * a library it mapped since its table was last read (a dlopen just
 * before the exit) is then in. 0, or -ENOENT (none kept, or the table
 * read while it ran has a mapping they lack: BPF keeps 32, no JIT code;
 * that table stays). */
int st_unwinder__update_ended(struct st_unwinder *u, __u32 pid, __u32 image);
/* Where st_unwinder__update_ended() reads the kept mappings (procmaps.h). */
struct st_exec_source;
void st_unwinder__on_exec_maps(struct st_unwinder *u, const struct st_exec_source *src);
/* Compile modules left pending by the time budget and push the tables of
 * the processes that wait for them. Call it from the daemon's loop. */
void st_unwinder__work(struct st_unwinder *u);
/* Compile every pending module now, whatever the time budget (before
 * walking the deferred samples of a process that is gone). */
void st_unwinder__finish(struct st_unwinder *u);
/* Compile the modules pid's table waits for now (its deferred samples are
 * walked before it is gone), and only those; how many were compiled. */
size_t st_unwinder__finish_proc(struct st_unwinder *u, __u32 pid);
/* Some process still waits for a module to be compiled. */
bool st_unwinder__pending(const struct st_unwinder *u);
/* The process ended: drop its table. */
void st_unwinder__forget(struct st_unwinder *u, __u32 pid);
/* Drop the tables of processes that no longer exist, give their own table
 * to the children the kernel gave a copy of their parent's at fork, and
 * release the rows of modules no live process maps any more. */
void st_unwinder__sweep(struct st_unwinder *u);

/* Walk a deferred sample's stack (bpf/stacktree.h struct st_deferred) in
 * the daemon, with the process's table as last pushed and the same rows:
 * the count of addresses (leaf first) in out, *stop why it ended (enum
 * st_unw_stop, bpf/unwind_step.h; ST_UNW_STOP_NO_PROC: no table at all). -EAGAIN while the process's tables
 * are not all in yet (force: walk with what there is). */
struct st_deferred;
int st_unwinder__walk(struct st_unwinder *u, const struct st_deferred *d, bool force, __u64 *out,
		      size_t max, unsigned *stop, size_t *fp_frames);

void st_unwinder__stats(const struct st_unwinder *u, struct st_unwinder_stats *out);
/* Adds the checked scans of its walks through code without CFI
 * (user/collect/unwind/unwind_native.h, st_unw_scan()): frames whose
 * return address they found, and scans that found none (cut as before). */
void st_unwinder__scan_stats(const struct st_unwinder *u, __u64 *scanned, __u64 *failed);

/* The JVMs of the processes whose samples it walks (the daemon's copy of
 * java_procs: bpf/hotspot_step.h's rule applies to the deferred samples
 * too, its methods read from the process's memory). proc: pid's JVM in
 * image, or NULL (called before each walk of pid's); mem: reads pid's
 * memory, arg a struct st_unw_java_arg; seen: the Java frames of a walk,
 * for their methods to be read at once; counts: the rule's
 * (ST_JAVA_STAT_DEFERRED and LATE_NO_MEM counted here). */
struct st_java_proc;
struct st_java_counts;
struct st_unw_java_arg {
	int pid;
	void *ctx;	/* the ops' */
};
struct st_unw_java_ops {
	const struct st_java_proc *(*proc)(void *ctx, __u32 pid, __u32 image);
	long (*mem)(void *arg, void *dst, __u32 n, __u64 addr);
	void (*seen)(void *ctx, __u32 pid, __u32 image, const __u64 *frames, size_t n);
	struct st_java_counts *counts;
	void *ctx;
};
void st_unwinder__java(struct st_unwinder *u, const struct st_unw_java_ops *ops);
/* A walk of a deferred sample of (pid, image) with ops's JVM done (the
 * dwarf path's, st_unwinder__walk(), and --unwind fp's, fpcopy.h): n
 * frames in out, jframes of them Java ones, mem_failed reads of its
 * methods failed: counted (ST_JAVA_STAT_DEFERRED, LATE_NO_MEM), its
 * methods read at once (ops->seen). */
static inline void st_unw_java_walked(const struct st_unw_java_ops *ops, __u32 pid,
				      __u32 image, const __u64 *out, size_t n, __u32 jframes,
				      __u32 mem_failed)
{
	ops->counts->n[ST_JAVA_STAT_DEFERRED]++;
	if (jframes)
		ops->seen(ops->ctx, pid, image, out, n);
	if (mem_failed)	/* (the process gone: frames kept as addresses) */
		ops->counts->n[ST_JAVA_STAT_LATE_NO_MEM]++;
}

#endif

/* java.h - the daemon's side of Java: the HotSpot JVMs a session meets,
 * their walker's inputs and their methods' names.
 *
 * Owner: user/collect/runtimes/java/java.c. After each read of a process's
 * maps, st_java__probe() looks for a JVM in it (jvmproc.h) until one is
 * found (or its tables could not be read); the tables of one libjvm build
 * are read once. A JVM found is pushed into `java_procs` (struct
 * st_java_proc: the interpreter's and the code cache's bounds, the frame
 * layout), which the unwinder's HotSpot rule reads (bpf/hotspot_step.h);
 * the daemon's walk of deferred samples reads the same copy
 * (st_java__unwinder()). Each method the BPF side reports on
 * `java_events` (its first sight in the process) is read at once from
 * the process's memory (jmethod.h), on a thread of its own (jevents.h:
 * whatever the main loop's backlog; java.c says what its mutex guards):
 * "pkg.Class.method", its source file
 * and line table, kept per (pid, image, Method*) until the snapshot after
 * the process exited or exec'd (st_java__reset()), at most ST_JAVA_MAX_HELD
 * methods (those over it counted: dropped, and named "[java method]").
 */
#ifndef STACKTREE_JAVA_DAEMON_H
#define STACKTREE_JAVA_DAEMON_H

#include <stdbool.h>
#include <linux/types.h>

#include "bpf/stacktree.h"

#define ST_JAVA_MAX_HELD 200000	/* methods kept at once (~100 bytes each) */

struct st_java;
struct st_session;
struct st_unwinder;

/* Set up on a loaded session (its java_* maps; NULL: count the JVMs only,
 * as the unit tests do). NULL and errno on error. */
struct st_java *st_java__new(struct st_session *s);
void st_java__free(struct st_java *j);

/* Look for a JVM in pid (maps just read). Nothing once pid's JVM was
 * found or failed; again at the next read while none is found, and (up
 * to 1200 probes) while its tables cannot be read yet. j NULL: nothing. */
void st_java__probe(struct st_java *j, __u32 pid);

/* pid sent samples whose tables the daemon read again (the deferred
 * walks', user/collect/unwind/deferred.h): probed as st_java__probe()
 * does, at most every 200 ms while none is found. A JVM mapping libjvm
 * after the collector's last read of its maps (its follow-ups end 0.6 s
 * after the exec; a JVM under -a on a saturated machine maps it later)
 * is found so from its first samples in libjvm, whether or not the
 * event asking for its maps reached the daemon. t: CLOCK_MONOTONIC s. */
void st_java__sampled(struct st_java *j, __u32 pid, double t);

/* Probe again, every 50 ms, the JVMs still starting (libjvm mapped, its
 * tables or its interpreter not set up yet): a JVM generates its
 * interpreter some 100 ms after libjvm is mapped idle, seconds later on a
 * saturated machine, when no read of its maps may come. t:
 * CLOCK_MONOTONIC seconds. */
void st_java__tick(struct st_java *j, double t);

/* The main thread of pid exited (image NULL), or pid exec'd into *image:
 * its java_procs entry goes, the next probe of pid looks anew; its
 * methods stay until st_java__reset(). */
void st_java__exited(struct st_java *j, __u32 pid, const __u32 *image);

/* A snapshot was written: free the methods of the processes that exited
 * or exec'd before it (their samples were named). */
void st_java__reset(struct st_java *j);

/* Let u's walks of deferred samples apply the HotSpot rule (the JVMs as
 * pushed; the methods they meet read at once). */
void st_java__unwinder(struct st_java *j, struct st_unwinder *u);

/* The same rule's hooks for --unwind fp's walks of deferred samples
 * (user/collect/unwind/fpcopy.h, through st_defer__java()): into *ops;
 * false when j is NULL. */
struct st_unw_java_ops;
bool st_java__ops(struct st_java *j, struct st_unw_java_ops *ops);

/* A deferred sample taken in (user/collect/unwind/deferred.h), its
 * process likely alive: when it is a JVM's, its Java frames from the leaf
 * are walked now (no unwinding table needed: the rule's), their methods
 * read, and the memory the rule read kept (up to 65,536 reads of at most
 * 256 bytes a process), so that its walk for the profile, which waits
 * for the process's tables and may come after the JVM exited, still
 * finds its Java frames (before: their methods unreadable then, the
 * frames kept as addresses). */
struct st_deferred;
void st_java__deferred(struct st_java *j, const struct st_deferred *d);

/* The symbolized frame of raw Java frame raw (runtime ST_RUNTIME_JAVA, addr
 * ST_JAVA_ADDR) of process (pid, image), strings interned in strs:
 * function "pkg.Class.method", module "[java]", file the source file,
 * line the line at the bci; offset = line (one node per line); addr = the
 * Method*. "[java method]" when the method could not be read. A compiled
 * frame (st_java_entry_jit: its methods read by jscopes.c while the
 * process lives, kept by entry): the outermost method, and in *chain
 * (*nchain entries, [0] unused; 0: none) the methods inlined into it,
 * outer to inner, as the symbolizer gives a native frame's inline chain
 * (valid until the next call); "[java compiled]" when its methods could
 * not be read. A native method's wrapper (bci ST_JAVA_BCI_NONE): line 0. */
struct st_frame;
struct st_strtab;
struct st_src_frame;
struct st_frame st_java__symbolize(struct st_java *j, __u32 pid, __u32 image,
				   const struct st_frame *raw, struct st_strtab *strs,
				   const struct st_src_frame **chain, size_t *nchain);

/* A native frame's address addr of (pid, image) that no mapping covers:
 * when it is in a JVM's code cache (a stub, an adapter, the interpreter,
 * or a compiled method the walk kept as an address), its name is read now
 * (while the process lives) and kept by address: true; false when no
 * JVM of the process holds it. The call stub's return address is
 * "StubRoutines::call_stub" (the JVM's own spelling: its frame under
 * JavaCalls::call_helper), the interpreter's code "Interpreter", a
 * compiled method or a native method's wrapper its Java method
 * "pkg.Class.method", every other blob the JVM's name of it (CodeBlob::
 * _name: "StubRoutines (1)", "I2C/C2I adapters", "_new_array_Java",
 * "vtable chunks", ...). */
bool st_java__code_seen(struct st_java *j, __u32 pid, __u32 image, __u64 addr);
/* ... and its name at naming time, NULL when none was read. */
const char *st_java__code_name(struct st_java *j, __u32 pid, __u32 image, __u64 addr);

struct st_java_stats {
	__u64 bpf[ST_JAVA_STAT__MAX];	/* the rule's (BPF and the daemon's walks) */
	__u64 jvms;		/* processes in which a JVM was found */
	__u64 failed;		/* JVMs whose tables could not be read */
	__u64 unsupported;	/* ... whose frame layout the walker does not know */
	__u64 table_reads;	/* tables read (the others from the cache) */
	__u64 methods;		/* methods read */
	__u64 method_failed;	/* ... unreadable (process gone, not a Method) */
	__u64 method_dropped;	/* ... read but not kept (ST_JAVA_MAX_HELD) */
	__u64 procs_freed;	/* processes' methods freed after they exited */
	__u64 jits;		/* compiled frames' methods read (jscopes.c) */
	__u64 jit_gone;		/* ... whose nmethod was freed and reused before */
	__u64 jit_failed;	/* ... unreadable (gone, or its tables absurd) */
	__u64 jit_own;		/* ... of them named by their nmethod's own method,
				 * read before at another pc (jit_get()) */
	__u64 code_named;	/* code cache addresses named (st_java__code_seen()) */
	__u64 code_failed;	/* ... whose blob could not be found or read */
	__u64 prewalks;		/* deferred samples walked as they came (st_java__deferred()) */
	__u64 prewalks_native;	/* ... of them with a native leaf, walked from the code
				 * cache address above it (its Java callers' reads kept) */
	__u64 tables_pushed;	/* unwinding tables pushed for JVMs found off a read
				 * of their maps, or whose exec was read late */
	__u64 mem_replayed;	/* reads of a late walk served from what was kept */
	__u64 held;		/* methods, compiled frames and code names held now */
};
void st_java__stats(const struct st_java *j, struct st_java_stats *out);

#endif

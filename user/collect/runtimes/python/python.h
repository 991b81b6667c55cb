/* python.h - the daemon's side of CPython frames (bpf/python.bpf.h walks them).
 *
 * Owner: user/collect/runtimes/python/python.c. It finds CPython in the processes the
 * session meets (st_python__probe(), after each read of a process's maps:
 * user/collect/runtimes/python/pyproc.c) and pushes what the BPF walker needs into
 * `py_procs`; it reads each code object the BPF side reports on
 * `py_events` at once, while the process lives (user/collect/runtimes/python/pycode.c), and
 * keeps its qualname, file name and location table per (pid, image, code
 * address), so that frames are named even when the object was freed or
 * the process exited before the drain: until the snapshot after the
 * process exited or exec'd (st_python__reset()), and within the memory
 * budget: the codes held (names and tables in one allocation each) are its
 * ST_BUDGET_PYCODE part, at most a share of it (ST_PY_SHARE_DIV); a new
 * code that does not fit evicts the least recently used codes (reported or
 * named in a profile last) of the process holding the most, so that a
 * process making fresh code objects evicts its own (counted: code_evicted).
 * A version without a layout is reported once per version and process on
 * stderr. An executable holding the interpreter itself (not a libpython),
 * once probed in one process, goes into py_exes with its addresses made
 * the file's (bpf/pyexec.h): BPF then puts the py_procs entry of the
 * file's next processes at their exec; the probe of each checks it (a
 * wrong one is replaced and its template taken back).
 */
#ifndef STACKTREE_PYTHON_DAEMON_H
#define STACKTREE_PYTHON_DAEMON_H

#include <stdbool.h>
#include <linux/types.h>

#include "user/collect/runtimes/python/pywalk_native.h"

struct st_session;
struct st_python;

/* The codes' share of the memory budget: at most 1/ST_PY_SHARE_DIV of it;
 * without a budget, ST_PY_MAX_BYTES. */
#define ST_PY_SHARE_DIV 4
#define ST_PY_MAX_BYTES (64u << 20)

/* Set up on a loaded session (its py_* maps). NULL and errno on error. */
struct st_python *st_python__new(struct st_session *s);
void st_python__free(struct st_python *py);

/* The daemon's memory budget (common/budget.h): the code cache is its
 * ST_BUDGET_PYCODE part, whose evictor frees the least recently used
 * codes; a code object that does not fit even so is not kept (counted with
 * code_dropped). NULL: none (ST_PY_MAX_BYTES). */
struct st_budget;
void st_python__budget(struct st_python *py, struct st_budget *b);

/* Look for CPython in pid (maps just read): push or update its py_procs
 * entry. Cheap when nothing changed. */
void st_python__probe(struct st_python *py, __u32 pid);

/* The launched command's executable, resolved (before it is run): when
 * it is a CPython executable (st_py_elf__candidate(), then an ELF read),
 * its template goes into py_exes, so that the command is walked from its
 * exec. */
void st_python__launching(struct st_python *py, const char *path);

/* The main thread of pid exited (image NULL), or pid exec'd into *image:
 * its py_procs entry goes; the next probe of pid pushes one again, even one
 * it had pushed before (the exec's probe may come before its event is
 * read). The codes of the image that ended stay until st_python__reset(). */
void st_python__exited(struct st_python *py, __u32 pid, const __u32 *image);

/* A snapshot was written (or its trees dropped): free the codes of the
 * processes that exited or exec'd before it (their samples were named). */
void st_python__reset(struct st_python *py);

/* The name of Python node addr (ST_NODE_PYTHON) of process (pid, image):
 * 0 with *qualname, *file (owned by py) and *line (0: unknown), or
 * -ENOENT when its code object could not be read (or was evicted). The
 * code is marked used (least recently used codes are evicted first). */
int st_python__frame(struct st_python *py, __u32 pid, __u32 image, __u64 addr,
		     const char **qualname, const char **file, __u32 *line);

/* The symbolized frame of raw CPython frame raw (kind call site or leaf,
 * addr as the BPF program gave it) of process (pid, image), strings
 * interned in strs: function = qualname, module ST_PYTHON_MODULE, file and
 * line; offset = line (one node per line, call sites and leaves alike);
 * addr = the code object's address. Named "[python code]" when the object
 * could not be read. */
struct st_frame;
struct st_strtab;
struct st_frame st_python__symbolize(struct st_python *py, __u32 pid, __u32 image,
				     const struct st_frame *raw, struct st_strtab *strs);

/* Counters for report headers and the summary (told by user/summary.c):
 * the BPF side's (enum st_py_stat, bpf/stacktree.h), summed over the CPUs and
 * since the start, and the daemon's own. */
struct st_python_stats {
	__u64 bpf[ST_PY_STAT__MAX];
	__u64 processes, unsupported, codes, code_failed, code_dropped;	/* codes: read */
	__u64 code_renamed;	/* a key named anew: its address reused past ST_PY_GENS */
	__u64 lines_lost;	/* read without their location table */
	__u64 code_evicted;	/* codes evicted (least recently used) for room */
	__u64 procs_freed;	/* processes' codes freed after they exited */
	__u64 exes_put;		/* executables registered in py_exes (walked from their exec) */
	__u64 exes_full;	/* ... left out: py_exes full */
	__u64 exec_agreed;	/* entries BPF put at an exec the probe found right */
	__u64 exec_wrong;	/* ... found wrong (replaced, the file's template taken back) */
	__u64 exec_adopted;	/* processes followed from BPF's entry before their probe */
	size_t held, bytes, share;	/* codes and bytes held now, and bytes at most */
};
int st_python__stats(const struct st_python *py, struct st_python_stats *out);

/* Whether CPython was found in process pid running image (kept until the
 * st_python__reset() after its end): its samples are a Python process's
 * (user/daemon.c counts those the BPF walker did not see). */
bool st_python__followed(const struct st_python *py, __u32 pid, __u32 image);

#endif

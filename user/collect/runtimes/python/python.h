/* python.h - the daemon's side of CPython frames (bpf/python.bpf.h walks them).
 *
 * Owner: user/collect/runtimes/python/python.c. It finds CPython in the processes the
 * session meets (st_python__probe(), after each read of a process's maps:
 * user/collect/runtimes/python/pyproc.c) and pushes what the BPF walker needs into
 * `py_procs`; it reads each code object the BPF side reports on
 * `py_events` at once, while the process lives (user/collect/runtimes/python/pycode.c), and
 * keeps its qualname, file name and location table per (pid, image, code
 * address) until the session ends, so that frames are named even when the
 * object was freed or the process exited before the drain. A version
 * without a layout is reported once per version and process on stderr.
 */
#ifndef STACKTREE_PYTHON_DAEMON_H
#define STACKTREE_PYTHON_DAEMON_H

#include <stdbool.h>
#include <linux/types.h>

#include "user/collect/runtimes/python/pywalk_native.h"

struct st_session;
struct st_python;

/* Bounds of what is kept: code objects, and bytes of their tables. */
#define ST_PY_MAX_CODES (1u << 20)
#define ST_PY_MAX_TABLE_BYTES (256u << 20)

/* Set up on a loaded session (its py_* maps). NULL and errno on error. */
struct st_python *st_python__new(struct st_session *s);
void st_python__free(struct st_python *py);

/* The daemon's memory budget (common/budget.h): the code cache is its
 * ST_BUDGET_PYCODE part; a code object that does not fit is not read
 * (counted with code_dropped). NULL: none. */
struct st_budget;
void st_python__budget(struct st_python *py, struct st_budget *b);

/* Look for CPython in pid (maps just read): push or update its py_procs
 * entry. Cheap when nothing changed. */
void st_python__probe(struct st_python *py, __u32 pid);

/* The main thread of pid exited, or pid exec'd: its py_procs entry goes
 * (names stay); the next probe of pid pushes one again, even one it had
 * pushed before (the exec's probe may come before its event is read). */
void st_python__exited(struct st_python *py, __u32 pid);

/* The name of Python node addr (ST_NODE_PYTHON) of process (pid, image):
 * 0 with *qualname, *file (owned by py) and *line (0: unknown), or
 * -ENOENT when its code object could not be read. */
int st_python__frame(const struct st_python *py, __u32 pid, __u32 image, __u64 addr,
		     const char **qualname, const char **file, __u32 *line);

/* The symbolized frame of raw CPython frame raw (kind call site or leaf,
 * addr as the BPF program gave it) of process (pid, image), strings
 * interned in strs: function = qualname, module ST_PYTHON_MODULE, file and
 * line; offset = line (one node per line, call sites and leaves alike);
 * addr = the code object's address. Named "[python code]" when the object
 * could not be read. */
struct st_frame;
struct st_strtab;
struct st_frame st_python__symbolize(const struct st_python *py, __u32 pid, __u32 image,
				     const struct st_frame *raw, struct st_strtab *strs);

/* Counters for report headers and the summary (told by user/summary.c):
 * the BPF side's (enum st_py_stat, bpf/stacktree.h), summed over the CPUs and
 * since the start, and the daemon's own. */
struct st_python_stats {
	__u64 bpf[ST_PY_STAT__MAX];
	__u64 processes, unsupported, codes, code_failed, code_dropped;
	__u64 code_renamed;	/* a key named anew: its address reused past ST_PY_GENS */
	__u64 lines_lost;	/* read without their location table */
};
int st_python__stats(const struct st_python *py, struct st_python_stats *out);

#endif

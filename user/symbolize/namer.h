/* namer.h - the symbolize stage: names the frames of a raw call-stack tree.
 *
 * Owner: user/symbolize/namer.c. The collect stage gives raw trees (nodes
 * keyed by kind and address, user/collect/collector.h: st_raw_thread); the
 * namer turns one into a named tree (function, module, offset, source line,
 * inline frames, data symbols) through the symbolizer library, the process's
 * mappings and its perf map. The model stage puts named trees in a profile
 * (user/model/build.h).
 */
#ifndef STACKTREE_NAMER_H
#define STACKTREE_NAMER_H

#include <stdbool.h>
#include <linux/types.h>

struct st_symbolizer;
struct st_demangler;
struct st_strtab;
struct st_tree;
struct st_raw_thread;
struct st_namer;

/* A module a named frame refers to: name as the frames name it, the file's
 * path (or NULL) and its build id (or NULL). 0 or -ENOMEM. */
typedef int (*st_module_fn)(void *ctx, const char *name, const char *path,
			    const char *build_id);

/* sym is not owned and must outlive the namer. NULL on ENOMEM. */
struct st_namer *st_namer__new(struct st_symbolizer *sym);
void st_namer__free(struct st_namer *n);

/* Demangle C++ and Rust names from now on (NULL: keep them as they are;
 * not owned). */
void st_namer__demangle(struct st_namer *n, struct st_demangler *d);

/* Inline frames (ST_FRAME_INLINE, from DWARF) in the named trees from now on
 * (the default); off (--no-inline): each frame is its function only. Source
 * lines (file, line) are given either way when DWARF has them. */
void st_namer__inline(struct st_namer *n, bool on);

/* Name CPython frames (ST_NODE_PYTHON) with py (user/collect/runtimes/python/python.h). */
struct st_python;
void st_namer__python(struct st_namer *n, struct st_python *py);

/* Name HotSpot frames (ST_NODE_JAVA) with j (user/collect/runtimes/java/java.h);
 * without one they are "[java method]". */
struct st_java;
void st_namer__java(struct st_namer *n, struct st_java *j);

/* Add the named frames of raw thread t's tree under dst's root (counts
 * summed where names merge: a leaf's IPs in one function are one node).
 * Strings are interned in strs; every module a frame names is passed to
 * module_fn. A stack's outermost return address in no mapping of a
 * process whose mappings are known (a frame-pointer walk's read through
 * code without frame pointers) is left out, and its samples added to
 * *invented (when not NULL). 0, or -ENOMEM (dst then holds part of the
 * tree). */
int st_namer__tree(const struct st_namer *n, const struct st_raw_thread *t, struct st_tree *dst,
		   struct st_strtab *strs, st_module_fn module_fn, void *module_ctx,
		   __u64 *invented);

/* Before the final reports' st_namer__tree() calls: the source lines and
 * inline frames of every user frame in c's raw trees looked up module by
 * module, each module's DWARF closed before the next is opened
 * (st_symbolizer__source_settle()), so that naming finds them cached and
 * the daemon's peak holds one module's debug sections, not all of them.
 * 0 or -ENOMEM. */
struct st_collector;
int st_namer__settle_sources(const struct st_namer *n, struct st_collector *c);

#endif

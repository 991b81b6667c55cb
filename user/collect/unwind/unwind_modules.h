/* unwind_modules.h - the CFI rows of every module profiled processes map,
 * in shards of BPF array maps (user/collect/unwind/unwind_store.c), compiled
 * once per build id (private to user/collect/unwind/unwinder.c). Compiling is budgeted (a
 * share of one CPU) so that a burst of new programs does not stall the
 * daemon's loop: modules over the budget stay pending until
 * st_umods__work(). The rows' kernel memory is bounded (--unwind-memory):
 * a module that does not fit gets none (frame pointers in auto mode), and
 * a module no pushed process table refers to any more is released.
 * Owner: user/collect/unwind/unwind_modules.c. */
#ifndef STACKTREE_UNWIND_MODULES_H
#define STACKTREE_UNWIND_MODULES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

struct st_maps_line;
struct st_unwinder_stats;
struct st_umod;
struct st_umods;

/* shards_fd: the `unwind_shards` map of slots slots; budget: bytes of
 * shards at most. */
struct st_umods *st_umods__new(int shards_fd, __u32 slots, size_t budget, bool verbose);
/* Seconds of compiling allowed in every 0.2 s before modules are left
 * pending (default 0.04; a test that must not depend on how fast this
 * machine compiles sets more). */
void st_umods__compile_budget(struct st_umods *ms, double seconds);
void st_umods__free(struct st_umods *ms);

/* The module mapped by a /proc/PID/maps line of pid (a file opened once per
 * dev/inode, "[vdso]" from the daemon's own vDSO), or NULL. *file (file
 * non-NULL) gets the code the line maps, for the daemon's walks to read
 * (st_ufile__read()), or NULL when none is kept. */
struct st_ufile;
struct st_umod *st_umods__of_mapping(struct st_umods *ms, __u32 pid,
				     const struct st_maps_line *l, struct st_ufile **file);

/* The code of a mapped file, read by the daemon's walks from the file
 * itself, not from the process, which may be gone by then (a deferred
 * sample walked after its exit: issue 37) or, its pid reused, another
 * one: its descriptor, opened when the mapping was first read with the
 * dev/inode check of the symbolizer's (st_file_is_mapped(): a file
 * replaced since is never read), kept while a pushed process table refers
 * to it (st_ufile__ref()), at most ST_UFILE_MAX_FDS (or a quarter of
 * RLIMIT_NOFILE) at once; closed by the sweep after the last unref
 * (st_umods__release_unused()). The vDSO's is the daemon's own vDSO, the
 * same kernel's image (as its rows are), when its mapping has the same
 * length. No bytes are copied: the cache's memory does not grow. */
#define ST_UFILE_MAX_FDS 256
void st_ufile__ref(struct st_ufile *f);
void st_ufile__unref(struct st_ufile *f);
/* n bytes at offset off of f's file (the vDSO's image): 0, or negative
 * errno (-EIO: short, past its end; -EBADF: its descriptor not kept). */
long st_ufile__read(const struct st_ufile *f, __u64 off, void *dst, __u32 n);
/* A module by path, compiled now whatever the budget (start-up). */
struct st_umod *st_umods__of_path(struct st_umods *ms, const char *path);

/* Compiled rows are looked up in, and written to, cache (NULL: none;
 * not owned). */
struct st_ucache;
void st_umods__set_cache(struct st_umods *ms, struct st_ucache *cache);

/* Where an executable mapping finds its rows and pc index (mp's vaddr,
 * shard, first, nrows, nbuckets, ishift, ibase), from mp->start, its file
 * offset pgoff and base, the start of the same file's mapping at offset 0
 * in that process (0: unknown), which tells apart segments sharing a file
 * page (binsym/loadmap.h): 0, -EAGAIN while the module is pending,
 * -ENOSPC when it did not fit the memory budget, -ENOENT when it has none. */
int st_umod__rows(const struct st_umod *m, __u64 pgoff, __u64 base, struct st_unwind_map *mp);

/* A pushed process table refers to m (ref), or no longer does (unref). */
void st_umod__ref(struct st_umod *m);
void st_umod__unref(struct st_umod *m);

/* Release the rows of modules that some table referred to and none does
 * now; their extents are reused two calls later (a walk on another CPU, or
 * a child's copy of its parent's table made since this sweep's scan, may
 * still refer to them); close the descriptors of the files none refers to.
 * Call once per sweep. Returns how many modules. */
size_t st_umods__release_unused(struct st_umods *ms);

/* The rows of shard slot, index buckets included (for the daemon's own
 * walks, user/collect/unwind/unwind_native.h). */
const struct st_unwind_row *st_umods__shard_rows(const struct st_umods *ms, __u32 slot,
						 size_t *n);

/* Compile m now if it is pending, whatever the budget: whether it was. */
bool st_umods__compile_now(struct st_umods *ms, struct st_umod *m);
/* Compile pending modules within the budget (all: every one); returns how
 * many were done. */
int st_umods__work(struct st_umods *ms, bool all);

/* Fills the module fields of *out (modules, no_cfi, no_room, rows, bytes,
 * budget, released, unsupported, compile_s, ...). */
void st_umods__stats(const struct st_umods *ms, struct st_unwinder_stats *out);

#endif

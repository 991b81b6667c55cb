/* extents.h - a first-fit allocator of ranges of [0, cap), for the CFI rows
 * shards (user/collect/unwind/unwind_store.c) and their slots. A released range is reused
 * only once `quarantine` ticks have passed (the caller's clock: the
 * unwinder's sweeps), so that a reader still holding an old reference sees
 * the old contents, never someone else's. Pure logic; owner:
 * user/collect/unwind/extents.c. */
#ifndef STACKTREE_EXTENTS_H
#define STACKTREE_EXTENTS_H

#include <stddef.h>
#include <linux/types.h>

struct st_extents;

/* NULL on ENOMEM. */
struct st_extents *st_extents__new(__u32 cap, __u64 quarantine);
void st_extents__free(struct st_extents *e);

/* n (> 0) units at *first: 0, or -ENOSPC (no free range long enough whose
 * quarantine is over at tick now, and no room above the ranges ever
 * used), -EINVAL for n == 0. */
int st_extents__alloc(struct st_extents *e, __u32 n, __u64 now, __u32 *first);
/* Give back [first, first + n) at tick now (merged with free neighbours;
 * the merged range's quarantine is the latest). 0, -EINVAL for a range
 * outside what was handed out, -ENOMEM (the range is lost, never reused
 * too early). */
int st_extents__release(struct st_extents *e, __u32 first, __u32 n, __u64 now);

/* Units handed out and not released. */
__u64 st_extents__used(const struct st_extents *e);
/* Free ranges kept (for tests and statistics). */
size_t st_extents__free_ranges(const struct st_extents *e);

#endif

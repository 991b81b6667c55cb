/* unwind_index.h - a module's pc index: its module-relative pcs cut in
 * buckets of 2^shift bytes, each naming the few rows that may cover its pcs
 * (struct st_unwind_bucket), so that the walk's search for a pc
 * (st_unw_find_row, bpf/unwind_step.h) takes 2-3 steps in a bucket rather
 * than ~20 over all the module's rows. Built when the rows go into a shard, stored right after
 * them (user/collect/unwind/unwind_modules.c); not kept in the on-disk cache. */
#ifndef STACKTREE_UNWIND_INDEX_H
#define STACKTREE_UNWIND_INDEX_H

#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

#define ST_UNWIND_INDEX_ROWS 4	/* rows per bucket on average, at least */

struct st_unwind_index {
	__u32 nbuckets;		/* 0: no index (too few rows) */
	__u32 shift, base;	/* bucket b holds the pcs with pc >> shift == base + b */
};

/* The index's shape for n rows sorted by pc (nbuckets 0 for few rows). */
void st_unwind_index__plan(const struct st_unwind_row *rows, size_t n, struct st_unwind_index *ix);

/* Fill out[0, ix->nbuckets) (rows' slots: the buckets are stored among
 * rows) for the n rows. */
void st_unwind_index__build(const struct st_unwind_row *rows, size_t n,
			    const struct st_unwind_index *ix, struct st_unwind_row *out);

#endif

/* unwind_index.c - a module's pc index (see unwind_index.h). */
#include "user/collect/unwind/unwind_index.h"

#include <string.h>

_Static_assert(sizeof(struct st_unwind_bucket) == sizeof(struct st_unwind_row),
	       "a bucket is stored in a row's slot");

void st_unwind_index__plan(const struct st_unwind_row *rows, size_t n, struct st_unwind_index *ix)
{
	size_t want = n / ST_UNWIND_INDEX_ROWS;
	__u32 first, last, shift = 0;

	memset(ix, 0, sizeof(*ix));
	if (want < 2)
		return;
	first = rows[0].pc;
	last = rows[n - 1].pc;
	/* the smallest buckets, at least ST_UNWIND_INDEX_ROWS rows each on average */
	while (shift < 31 && (size_t)((last >> shift) - (first >> shift)) + 1 > want)
		shift++;
	ix->shift = shift;
	ix->base = first >> shift;
	ix->nbuckets = (last >> shift) - ix->base + 1;
}

void st_unwind_index__build(const struct st_unwind_row *rows, size_t n,
			    const struct st_unwind_index *ix, struct st_unwind_row *out)
{
	size_t i = 0;

	for (__u32 b = 0; b < ix->nbuckets; b++) {
		struct st_unwind_bucket bk;
		__u64 next = (__u64)(ix->base + b + 1) << ix->shift;

		bk.lo = (__u32)i;	/* rows below the bucket's first pc */
		while (i < n && rows[i].pc < next)
			i++;
		bk.hi = (__u32)i;	/* ... and below the next bucket's */
		memcpy(&out[b], &bk, sizeof(bk));
	}
}

/* fpcopy.c - a deferred sample's frame-pointer walk through its stack copy
 * (see fpcopy.h). */
#include "user/collect/unwind/fpcopy.h"

#include <string.h>

#include "user/collect/unwind/unwind_native.h"

size_t st_fpcopy_walk(const struct st_deferred *d, __u64 *out, size_t max, unsigned *stop)
{
	__u64 fp = d->bp, len = d->stack_len <= ST_DEFER_STACK ? d->stack_len : 0, pair[2];
	size_t n = 0;

	*stop = ST_UNW_STOP_END;
	if (!max)
		return 0;
	out[n++] = d->ip;
	/* the kernel's loop (perf_callchain_user()): a frame whose pair it
	 * cannot read ends the walk, whatever the pointer */
	while (n < max) {
		__u64 off = fp - d->sp;

		if (fp < d->sp || off > len || len - off < sizeof(pair)) {
			/* past a copy cut at its bound: the stack went on */
			if (fp >= d->sp && len + 4096 > ST_DEFER_STACK)
				*stop = ST_UNW_STOP_READ_FAULT;
			break;
		}
		if (st_deferred_hole(d->holes, d->sp, off, sizeof(pair)))
			break;	/* not there: the process's read would fail too */
		memcpy(pair, d->stack + off, sizeof(pair));
		out[n++] = pair[1];
		fp = pair[0];
	}
	if (n == max && *stop == ST_UNW_STOP_END)
		*stop = ST_UNW_STOP_DEPTH;
	/* the fp program's cut (bpf/walk.bpf.h, fp_user_end_step()) */
	for (size_t i = 0; i < n; i++)
		if (out[i] >= ST_USER_END) {
			*stop = ST_UNW_STOP_BAD_FRAME;
			return i;
		}
	return n;
}

/* pymerge.c - bpf/pymerge.h's merge for deferred samples (see pymerge.h). */
#include "user/collect/runtimes/python/pymerge.h"

#include <string.h>

#include "user/collect/runtimes/python/pywalk_native.h"

__u32 st_py_merge_deferred(const struct st_py_frames *py, __u64 *frames, __u32 un, __u32 max,
			   bool *cut, bool *unmatched)
{
	struct st_py_scratch s;
	struct st_py_proc p;
	__u32 n = py->n < ST_PY_MAX_FRAMES ? py->n : ST_PY_MAX_FRAMES;

	*cut = false;
	*unmatched = false;
	if (!n)
		return un;
	memset(&s, 0, sizeof(s));
	memset(&p, 0, sizeof(p));
	memcpy(s.addr, py->addr, sizeof(s.addr));
	memcpy(s.ends, py->ends, sizeof(s.ends));
	s.n = n;
	/* a whole Python stack pairs its runs from the root, as in BPF */
	s.stop = py->whole && n == py->n ? ST_PY_STAT__MAX : ST_PY_STAT_TRUNCATED;
	p.eval_start = py->eval_start;
	p.eval_end = py->eval_end;
	p.cold_start = py->cold_start;
	p.cold_end = py->cold_end;
	p.text_start = py->text_start;
	p.text_end = py->text_end;
	if (max > ST_MAX_USER)
		max = ST_MAX_USER;
	return st_py_merge(&s, &p, frames, un, max, cut, unmatched);
}

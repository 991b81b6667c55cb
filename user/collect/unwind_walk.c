/* unwind_walk.c - the BPF stack walk (bpf/unwind.h) in C, over a copy of
 * the stack (see unwind_walk.h). Keep the two in step: the rules per row
 * kind are the same, only the reads differ. */
#include "user/collect/unwind_walk.h"

#include <string.h>

struct walk {
	const struct st_uwalk_in *in;
	__u64 ip, sp, bp;
	bool exact;		/* look up ip itself (leaf, after a signal frame) */
};

/* size bytes at addr, from the copied stack only */
static bool rd(const struct walk *w, __u64 addr, void *dst, size_t size)
{
	__u64 base = w->in->sp;

	if (addr < base || addr - base > w->in->stack_len ||
	    size > w->in->stack_len - (addr - base))
		return false;
	memcpy(dst, w->in->stack + (addr - base), size);
	return true;
}

static const struct st_unwind_map *find_map(const struct st_unwind_proc *p, __u64 ip)
{
	size_t lo = 0, hi = p->nmaps < ST_UNWIND_MAX_MAPS ? p->nmaps : ST_UNWIND_MAX_MAPS;

	while (lo < hi) {	/* the last mapping starting at or below ip */
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ip - p->maps[lo - 1].start >= p->maps[lo - 1].len)
		return NULL;
	return &p->maps[lo - 1];
}

/* The row covering pc in the mapping's module, or kind NONE. */
static struct st_unwind_row find_row(const struct st_uwalk_in *in, const struct st_unwind_map *m,
				     __u64 pc)
{
	struct st_unwind_row none = { .kind = ST_UNW_NONE };
	const struct st_unwind_row *rows;
	size_t n = 0, lo, hi;
	__u32 want;

	if (!m->nrows || !(rows = in->rows(in->ctx, m->shard, &n)) || m->first > n ||
	    m->nrows > n - m->first)
		return none;
	want = (__u32)(pc - m->start + m->vaddr);
	lo = m->first;
	hi = (size_t)m->first + m->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].pc <= want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == m->first ? none : rows[lo - 1];
}

static bool fp_step(struct walk *w, bool unmapped, enum st_uwalk_stop *stop, size_t *fp_frames)
{
	__u64 fr[2];

	/* the outermost frame only where a call saved it (bpf/unwind.h's
	 * st_unw_fp_step) */
	if (!w->bp && !w->exact && !unmapped) {
		*stop = ST_UWALK_END;
		return false;
	}
	if (!w->bp || w->bp < w->sp || (w->bp & 7) || !rd(w, w->bp, fr, sizeof(fr))) {
		*stop = ST_UWALK_NO_TABLE;
		return false;
	}
	w->sp = w->bp + 16;
	w->bp = fr[0];
	w->ip = fr[1];
	w->exact = false;
	(*fp_frames)++;
	return true;
}

size_t st_uwalk(const struct st_uwalk_in *in, __u64 *out, size_t max, enum st_uwalk_stop *stop,
		size_t *fp_frames)
{
	struct walk w = { .in = in, .ip = in->ip, .sp = in->sp, .bp = in->bp, .exact = true };
	size_t n = 0;

	*stop = ST_UWALK_END;
	*fp_frames = 0;
	for (;;) {
		const struct st_unwind_map *m;
		struct st_unwind_row r;
		__u64 cfa, ra, fr[2], pc;
		__s64 off;
		unsigned kind;

		if (n >= max || n >= ST_MAX_USER) {
			*stop = ST_UWALK_DEPTH;
			return n;
		}
		out[n++] = w.ip;
		pc = w.ip - (w.exact ? 0 : 1);
		m = in->proc ? find_map(in->proc, w.ip) : NULL;
		r = m ? find_row(in, m, pc) : (struct st_unwind_row){ .kind = ST_UNW_NONE };
		kind = r.kind & ST_UNW_KIND_MASK;
		if ((kind == ST_UNW_R10 || kind == ST_UNW_RBX) && n > 1)	/* the leaf only */
			kind = ST_UNW_UNSUPPORTED;
		if (kind == ST_UNW_NONE || kind == ST_UNW_UNSUPPORTED) {
			if (in->fallback) {
				if (!fp_step(&w, !m, stop, fp_frames))
					return n;
				continue;
			}
			*stop = kind == ST_UNW_NONE ? ST_UWALK_NO_TABLE : ST_UWALK_UNSUPPORTED;
			return n;
		}
		if (kind == ST_UNW_END)
			return n;
		if (kind == ST_UNW_SIGNAL) {
			__u64 regs[7];	/* gregs[REG_RBP .. REG_RIP] */

			if (!rd(&w, w.sp + 40 + 10 * 8, regs, sizeof(regs))) {
				*stop = ST_UWALK_READ_FAULT;
				return n;
			}
			w.bp = regs[0];
			w.sp = regs[5];
			w.ip = regs[6];
			w.exact = true;
			continue;
		}
		off = r.off;
		if (r.kind & ST_UNW_F_OFF8)
			off *= 8;
		if (kind == ST_UNW_RSP) {
			cfa = w.sp + (__u64)off;
		} else if (kind == ST_UNW_RBP) {
			cfa = w.bp + (__u64)off;
		} else if (kind == ST_UNW_R10) {
			cfa = in->r10 + (__u64)off;
		} else if (kind == ST_UNW_RBX) {
			cfa = in->rbx + (__u64)off;
		} else if (kind == ST_UNW_PLT) {
			cfa = w.sp + (__u64)off + ((w.ip & 15) >= (__u64)(__s64)r.rbp ? 8 : 0);
		} else if (kind == ST_UNW_DEREF_RBP) {
			if (!rd(&w, w.bp + (__u64)off, &cfa, sizeof(cfa))) {
				*stop = ST_UWALK_READ_FAULT;
				return n;
			}
		} else {
			*stop = ST_UWALK_UNSUPPORTED;
			return n;
		}
		if (cfa <= w.sp) {
			*stop = ST_UWALK_BAD_FRAME;
			return n;
		}
		if (kind == ST_UNW_PLT ||
		    (r.rbp == ST_UNW_RBP_SAME && !(r.kind & ST_UNW_F_RBP_AT_RBP))) {
			if (!rd(&w, cfa - 8, &ra, sizeof(ra)))
				goto fault;
		} else if (r.rbp == -2 && !(r.kind & ST_UNW_F_RBP_AT_RBP)) {
			if (!rd(&w, cfa - 16, fr, sizeof(fr)))
				goto fault;
			w.bp = fr[0];
			ra = fr[1];
		} else {
			if (!rd(&w, cfa - 8, &ra, sizeof(ra)))
				goto fault;
			if (r.rbp == ST_UNW_RBP_UNKNOWN)
				w.bp = 0;
			else if (!rd(&w, ((r.kind & ST_UNW_F_RBP_AT_RBP) ? w.bp : cfa) +
						 (__u64)((__s64)r.rbp * 8), &w.bp, sizeof(w.bp)))
				goto fault;
		}
		w.sp = cfa;
		w.ip = ra;
		w.exact = false;
		if (!ra)
			return n;
	}
fault:
	*stop = ST_UWALK_READ_FAULT;
	return n;
}

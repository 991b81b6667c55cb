/* fpcopy.c - a deferred sample's frame-pointer walk through its stack copy
 * (see fpcopy.h). */
#include "user/collect/unwind/fpcopy.h"

#include <string.h>

#include "user/collect/unwind/unwind_native.h"
#include "user/collect/unwind/unwinder.h"

/* The fp program's cut (bpf/walk.bpf.h, fp_user_end_step()): the walk
 * ends before the first address that is no user address (bad frame). */
static bool user_addr(__u64 a, unsigned *stop)
{
	if (a < ST_USER_END)
		return true;
	*stop = ST_UNW_STOP_BAD_FRAME;
	return false;
}

/* A 32-bit (ia32) process's walk: the kernel's perf_callchain_user32(),
 * the fp program's for it (bpf/walk.bpf.h, fp_stack_compat()): the ip,
 * then from ebp each frame's pair of 4-byte words (saved ebp, return
 * address) until a pair cannot be read; no other check. */
static size_t walk32(const struct st_deferred *d, __u64 *out, size_t max, unsigned *stop)
{
	__u64 len = d->stack_len <= ST_DEFER_STACK ? d->stack_len : 0;
	__u64 fp = (__u32)d->bp;
	__u32 pair[2];
	size_t n = 0;

	out[n++] = (__u32)d->ip;
	while (n < max) {
		__u64 off = fp - d->sp;

		if (fp < d->sp || off > len || len - off < sizeof(pair)) {
			if (fp >= d->sp && len + 4096 > ST_DEFER_STACK)
				*stop = ST_UNW_STOP_READ_FAULT;	/* the copy's bound */
			return n;
		}
		if (st_deferred_hole(d->holes, d->sp, off, sizeof(pair)))
			return n;
		memcpy(pair, d->stack + off, sizeof(pair));
		out[n++] = pair[1];
		fp = pair[0];
	}
	*stop = ST_UNW_STOP_DEPTH;
	return n;
}

/* A 64-bit process's walk (st_fpcopy_walk()'s, max > 0). */
static size_t walk64(const struct st_deferred *d, const struct st_unw_java_ops *java, __u64 *out,
		     size_t max, unsigned *stop)
{
	static const struct st_unwind_proc empty;
	struct st_unw_java_arg jarg = { .pid = (int)d->pid, .ctx = java ? java->ctx : NULL };
	const struct st_java_proc *jp = java && java->proc ?
					java->proc(java->ctx, d->pid, d->image) : NULL;
	__u64 len = d->stack_len <= ST_DEFER_STACK ? d->stack_len : 0, pair[2];
	/* the HotSpot rule's state, as the dwarf path's walk sets it up
	 * (unwind_native.h, st_unw_walk_native()): s.bp the walk's fp */
	struct st_unw_state s = {
		.out = out, .max = (__u32)(max < ST_MAX_USER ? max : ST_MAX_USER), .proc = &empty,
		.env = { .stack = d->stack, .stack_len = (size_t)len, .stack_base = d->sp,
			 .holes = d->holes, .mem = jp ? java->mem : NULL, .mem_arg = &jarg },
		.jc = jp ? java->counts : NULL,
	};
	size_t n = 0;

	if (jp) {
		memcpy(&s.hs.java, jp, sizeof(s.hs.java));	/* its head */
		s.hs.proc = (__u64)(uintptr_t)jp;
		s.image = jp->image;	/* the caller's choice */
	}
	/* (frame pointers where the blob step cannot take a code cache pc) */
	st_unw_start(&s, d->ip, d->sp, d->bp, d->r10, d->rbx, d->r13, true);
	s.hs.env = (__u64)(uintptr_t)&s.env;
	s.hs.jc = (__u64)(uintptr_t)s.jc;
	if (!user_addr(d->ip, stop))
		return 0;
	out[n++] = d->ip;
	/* the kernel's loop (perf_callchain_user()): a frame whose pair it
	 * cannot read ends the walk, whatever the pointer; but a frame in
	 * the JVM's code cache (the interpreter, compiled methods, stubs)
	 * is the HotSpot rule's, as in the dwarf path's walk of a copy
	 * (bpf/hotspot_step.h: its Java entry in place of the address, its
	 * caller by the frame's own layout: compiled Java keeps no frame
	 * pointer) */
	for (;;) {
		__u64 off = s.bp - d->sp;
		bool java = st_hs_in(out[n - 1], s.hs.java.code_start, s.hs.java.code_end) &&
			    st_hs_image_ok(&s);

		/* (the last frame's too, at the bound: its entry, as the
		 * dwarf path's walk makes it before its depth stop) */
		if (java) {
			s.ip = out[n - 1];
			s.exact = n == 1;
			if (st_hs_step(&s, (__u32)(n - 1))) {
				*stop = s.stop;	/* where the dwarf path's walk stops */
				break;
			}
		}
		if (n >= max)
			break;
		if (java) {
			if (!user_addr(s.ip, stop))
				break;
			out[n++] = s.ip;
			continue;
		}
		if (s.bp < d->sp || off > len || len - off < sizeof(pair)) {
			/* past a copy cut at its bound: the stack went on */
			if (s.bp >= d->sp && len + 4096 > ST_DEFER_STACK)
				*stop = ST_UNW_STOP_READ_FAULT;
			break;
		}
		if (st_deferred_hole(d->holes, d->sp, off, sizeof(pair)))
			break;	/* not there: the process's read would fail too */
		memcpy(pair, d->stack + off, sizeof(pair));
		if (!user_addr(pair[1], stop))
			break;
		out[n++] = pair[1];
		s.sp = s.bp + 16;
		s.bp = pair[0];
	}
	if (n == max && *stop == ST_UNW_STOP_END)
		*stop = ST_UNW_STOP_DEPTH;
	if (jp) {
		st_hs_walk_end(&s, d->ip);
		st_unw_java_walked(java, d->pid, d->image, out, n, s.hs.jframes, s.env.mem_failed);
	}
	return n;
}

size_t st_fpcopy_walk(const struct st_deferred *d, const struct st_unw_java_ops *java, __u64 *out,
		      size_t max, unsigned *stop)
{
	*stop = ST_UNW_STOP_END;
	if (!max)
		return 0;
	/* (a 32-bit process's: no JVM process looked up for it) */
	return d->compat ? walk32(d, out, max < ST_MAX_USER ? max : ST_MAX_USER, stop) :
			   walk64(d, java, out, max, stop);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pathhash.h - the hash of every prefix of a path from sums kept leaf
 * first, so that the walk that reads the frames leaf first can add them up
 * as it goes. One source, compiled into the BPF fold (bpf/fold.bpf.h: its
 * thread's node cache is keyed by these hashes, and the CALLS prefix is
 * found by comparing them with the previous path's) and the daemon (the
 * handoff's path, user/collect/session.c); unit-tested natively
 * (tests/unit/test_pathhash.c).
 *
 * A path is the frames below its root, root first: [truncated], user
 * frames, kernel frames, an extra leaf (bpf/fold.bpf.h, path_at()). Frame
 * i's value is m_i = st_ph_mix(address, flags). The hash of the prefix
 * that ends at frame i is Horner's, root first:
 *     H(-1) = 0,  H(i) = H(i - 1) * P + m_i.
 * Numbered leaf first (g = n - 1 - i), with W(<g) = sum of m_g' * P^g'
 * over g' < g and W = W(<n):
 *     H(i) = P^-g * (W - W(<g))
 * (P is odd, so P^-1 exists modulo 2^64). The frame-pointer walk adds
 * m_f * P^f for each user frame f as it reads it (bpf/walk.bpf.h), and
 * the fold then has the hash of any frame in a few multiplications: before
 * (2026-11-30) a pass over the path's ~25 frames past its prefix hashed
 * them root first (~45 ns a frame on this VM) and another compared the
 * prefix frame by frame with a copy of the previous path, which that pass
 * wrote (kernel-notes/README.md, "The path's hashes from the walk").
 *
 * The sums are kept in two parts, because the user frames are walked
 * before the kernel frames and the extra leaf are known: the part below
 * the user frames (leaf first: the extra leaf, then the kernel frames,
 * `kn` of them), whose partial sums are k[], and the user frames, whose
 * leaf's value m0 is set at the fold (its flags say LEAF only when no
 * kernel frame follows) and whose other frames' partial sums are u[].
 */
#ifndef STACKTREE_PATHHASH_H
#define STACKTREE_PATHHASH_H

#include "dual.h"
#include "stacktree.h"

#define ST_PH_P 0xff51afd7ed558ccdull	/* odd */
#define ST_PH_PINV 0x4f74430c22a54005ull	/* P^-1: P * P^-1 = 1 modulo 2^64 */
#define ST_PH_KSLOTS 128	/* k[]: frames below the user part + 1, a power of two */

/* A frame's value: a bijection of its address and flags (distinct frames
 * have distinct values). */
static __always_inline __u64 st_ph_mix(__u64 addr, __u16 flags)
{
	__u64 h = (addr ^ ((__u64)flags << 48)) * 0x9E3779B97F4A7C15ull;

	return h ^ (h >> 31);
}

/* A path's sums. */
struct st_path_sums {
	__u32 n;	/* frames (root excluded) */
	__u32 un;	/* user frames */
	__u32 kn;	/* frames below them (kernel frames, the extra leaf) */
	__u32 pad;
	__u64 m0;	/* the user leaf's value (un > 0) */
	__u64 pk;	/* P^kn */
	__u64 pu;	/* P^un */
	__u64 total;	/* W: the whole path's sum */
	__u64 k[ST_PH_KSLOTS];	/* k[g] = W(<g), g <= kn */
	__u64 u[ST_PATH_SLOTS];	/* u[f] = sum of user frames 1..f's m * P^f (leaf first,
				 * counted from the user leaf); u[0] = 0 */
};

/* `handoffs` (bpf/defer.bpf.h): a thread's last path from the daemon
 * (struct st_handoff) as its sums, st_ph_from_path()'s, written by
 * user/collect/session.c: the next sample folded in BPF compares its
 * prefix with them. */
struct st_handoff_sums {
	__u32 seq;		/* st_handoff.seq */
	__u32 pad;
	struct st_path_sums s;
};

/* P^g times the hash of the path's prefix up to frame i (root first; i <
 * s->n; g = n - 1 - i): W - W(<g). Two paths' prefixes up to i are equal
 * when these are, each times P^ the other's g (st_ph_at() without the
 * power: a binary search compares these). */
static __always_inline __u64 st_ph_raw(const struct st_path_sums *s, __u32 i)
{
	__u32 g = s->n - 1 - i, f;
	__u64 w;

	if (g < s->kn) {
		w = s->k[g & (ST_PH_KSLOTS - 1)];
	} else {
		f = g - s->kn;	/* user frame f (leaf first); un: the [truncated] root */
		w = s->k[s->kn & (ST_PH_KSLOTS - 1)] +
		    (f ? s->pk * (s->m0 + s->u[(f - 1) & (ST_PATH_SLOTS - 1)]) : 0);
	}
	return s->total - w;
}

/* The hash of the path's prefix up to frame i (root first; i < s->n).
 * pinv: P^-g for g < ST_PATH_SLOTS (st_ph_pinv_fill()). */
static __always_inline __u64 st_ph_at(const struct st_path_sums *s, const volatile __u64 *pinv,
				      __u32 i)
{
	__u32 g = s->n - 1 - i;

	return pinv[g & (ST_PATH_SLOTS - 1)] * st_ph_raw(s, i);
}

/* The whole path's sum and its frames, once u[], m0, k[], pk, pu, un and
 * kn are in; trunc: a [truncated] root above the user frames. */
static __always_inline void st_ph_finish(struct st_path_sums *s, bool trunc)
{
	__u64 w = s->k[s->kn & (ST_PH_KSLOTS - 1)];

	if (s->un)
		w += s->pk * (s->m0 + s->u[(s->un - 1) & (ST_PATH_SLOTS - 1)]);
	if (trunc)
		w += st_ph_mix(0, ST_NODE_TRUNCATED) * s->pk * s->pu;
	s->total = w;
	s->n = (trunc ? 1 : 0) + s->un + s->kn;
}

#if !ST_BPF
/* base^e, by squaring */
static inline __u64 st_ph_pow(__u64 base, __u32 e)
{
	__u64 r = 1;

	for (; e; e >>= 1) {
		if (e & 1)
			r *= base;
		base *= base;
	}
	return r;
}

/* P^-g for g < n, into pinv (the BPF program's table, set before load:
 * user/collect/session.c). */
static inline void st_ph_pinv_fill(__u64 *pinv, unsigned n)
{
	__u64 p = 1;

	for (unsigned g = 0; g < n; g++) {
		pinv[g] = p;
		p *= ST_PH_PINV;
	}
}

/* The sums of a path given root first (addrs, flags, as the fold's path_at()
 * gives them: the daemon's handoff, st_handoff): 0, or -EINVAL when it has
 * more frames below its user part than k[] holds or more than ST_PATH_SLOTS - 1. */
static inline int st_ph_from_path(struct st_path_sums *s, const __u64 *addrs, const __u16 *flags,
				  __u32 n)
{
	__u32 t, kn = 0, un;
	__u64 pw = 1;

	if (n >= ST_PATH_SLOTS)
		return -22;
	t = n && (flags[0] & ST_NODE_TRUNCATED) ? 1 : 0;
	while (kn < n - t && (flags[n - 1 - kn] & ST_NODE_KERNEL))
		kn++;
	if (kn >= ST_PH_KSLOTS)
		return -22;
	un = n - t - kn;
	s->kn = kn;
	s->un = un;
	s->k[0] = 0;
	for (__u32 g = 0; g < kn; g++) {	/* leaf first */
		s->k[g + 1] = s->k[g] + st_ph_mix(addrs[n - 1 - g], flags[n - 1 - g]) * pw;
		pw *= ST_PH_P;
	}
	s->pk = pw;
	pw = 1;
	s->u[0] = 0;
	s->m0 = 0;
	for (__u32 f = 0; f < un; f++) {
		__u32 i = t + un - 1 - f;
		__u64 m = st_ph_mix(addrs[i], flags[i]);

		if (f == 0)
			s->m0 = m;
		else
			s->u[f] = s->u[f - 1] + m * pw;
		pw *= ST_PH_P;
	}
	s->pu = pw;
	st_ph_finish(s, t);
	return 0;
}
#endif

#endif

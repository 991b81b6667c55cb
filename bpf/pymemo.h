/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pymemo.h - a Python frame's node key (bpf/stacktree.h, ST_PY_ADDR): the
 * generation of its code object's address (a freed object's address
 * reused by another is another key), its index moved to the first code
 * unit of its line's run (bpf/pylines.h), and each CPU's memo of the code
 * objects already reported, which saves a py_codes lookup a frame. Dual
 * build (bpf/dual.h): the BPF walker's (bpf/pywalk.h, bpf/python.bpf.h)
 * and the native tests'.
 */
#ifndef STACKTREE_PYMEMO_H
#define STACKTREE_PYMEMO_H

#include "dual.h"
#include "stacktree.h"
#include "pylines.h"
#include "common/hash.h"

/* A CPU's memo of py_codes (py_memo): a code object whose report was
 * made, by address and identity, with the generation it got and its runs
 * of one line. Two ways per set: a new object takes its address's entry,
 * else an empty one, else the set's older one. Direct-mapped, two objects
 * of one stack that hashed to one slot missed on every sample (a py_codes
 * lookup and the report loop each time: +0.3 to +1.1 us a sample, as
 * addresses fell from run to run). An entry stays right for as long as its
 * object lives (its identity is the object's), and for as long as no
 * other object has been reported at a reused address: an identity is the
 * addresses of what the object owns, and a later object whose owned
 * objects were all handed out again in the same places has the same one
 * (the CI's pyreuse test: f9 of gen9.py named f0 of gen0.py, 58 of its
 * ~80 samples, on a CPU whose memo still held f0 from before the process
 * ran on the other one while f1-f8 came and went). So each entry keeps
 * the reuse epoch it was filled in (python.bpf.h, py_reuse_epoch: one
 * more at every such report), and a hit needs the epoch now: a hit is
 * what a py_codes lookup would say, without one (kernel-notes/python.md,
 * "Costs"). */
#define ST_PY_MEMO_SLOTS 512	/* 256 sets of 2: 32 KiB, a per-CPU value's most */
struct st_py_memo {
	__u64 code;	/* the object's address */
	__u64 ident;	/* st_py_ident() */
	struct st_py_runs runs;	/* st_py_code_seen's */
	__u32 tgid, image;
	__u16 gen1;	/* its generation + 1 (0: an empty slot) */
	__u16 cover;	/* st_py_code_seen's */
	__u32 epoch;	/* the reuse epoch it was filled in */
};

struct st_py_memos {
	struct st_py_memo e[ST_PY_MEMO_SLOTS];
};

/* The generation of code object `ident` at an address whose last report
 * is *seen (NULL: none) into *gen: true when it is to be reported (new at
 * the address, or another object than the one reported there). */
static __always_inline bool st_py_code_gen(const struct st_py_code_seen *seen, __u64 ident,
					   __u32 *gen)
{
	if (!seen) {
		*gen = 0;
		return true;
	}
	if (seen->ident == ident) {
		*gen = seen->gen & (ST_PY_GENS - 1);
		return false;
	}
	*gen = (seen->gen + 1) & (ST_PY_GENS - 1);
	return true;
}

/* A frame's node address (ST_PY_ADDR) keyed by its code object's
 * generation; an object not 16-byte aligned keeps its address (all its
 * generations are one key, named by the last report). */
static __always_inline __u64 st_py_addr_gen(__u64 addr, __u32 gen)
{
	if (ST_PY_CODE(addr) & (ST_PY_GENS - 1))
		return addr;
	return addr | (__u64)(gen & (ST_PY_GENS - 1)) << 16;
}

/* The first of the two memo slots of code object `code` of process tgid. */
static __always_inline __u32 st_py_memo_set(__u32 tgid, __u64 code)
{
	return (__u32)st_hash_u64(code ^ ((__u64)tgid << 48)) & (ST_PY_MEMO_SLOTS - 2);
}

/* Whether memo entry m holds (whatever object) address code of (tgid, image). */
static __always_inline bool st_py_memo_at(const struct st_py_memo *m, __u32 tgid, __u32 image,
					  __u64 code)
{
	return m->gen1 && m->code == code && m->tgid == tgid && m->image == image;
}

/* Whether memo entry m is object (code, ident) of process (tgid, image),
 * filled in reuse epoch `epoch`. */
static __always_inline bool st_py_memo_is(const struct st_py_memo *m, __u32 tgid, __u32 image,
					  __u64 code, __u64 ident, __u32 epoch)
{
	return st_py_memo_at(m, tgid, image, code) && m->ident == ident && m->epoch == epoch;
}

/* The memo's entry of object (code, ident) of process (tgid, image), or
 * NULL (or one filled before reuse epoch `epoch`): its generation is
 * gen1 - 1. */
static __always_inline const struct st_py_memo *
st_py_memo_get(const struct st_py_memos *ms, __u32 tgid, __u32 image, __u64 code, __u64 ident,
	       __u32 epoch)
{
	__u32 k = st_py_memo_set(tgid, code);
	const struct st_py_memo *m = &ms->e[k & (ST_PY_MEMO_SLOTS - 1)];

	if (st_py_memo_is(m, tgid, image, code, ident, epoch))
		return m;
	m = &ms->e[(k + 1) & (ST_PY_MEMO_SLOTS - 1)];
	return st_py_memo_is(m, tgid, image, code, ident, epoch) ? m : NULL;
}

/* Remember object (code, ident) of process (tgid, image): its py_codes
 * value *seen, in reuse epoch `epoch`. */
static __always_inline void st_py_memo_put(struct st_py_memos *ms, __u32 tgid, __u32 image,
					   __u64 code, const struct st_py_code_seen *seen,
					   __u32 epoch)
{
	__u32 k = st_py_memo_set(tgid, code);
	struct st_py_memo *m = &ms->e[k & (ST_PY_MEMO_SLOTS - 1)];
	struct st_py_memo *o = &ms->e[(k + 1) & (ST_PY_MEMO_SLOTS - 1)];

	if (!st_py_memo_at(m, tgid, image, code)) {
		if (st_py_memo_at(o, tgid, image, code) || !o->gen1) {
			m = o;		/* its address's entry, or an empty one */
		} else if (m->gen1) {
			*o = *m;	/* the older one goes */
		}
	}
	m->code = code;
	m->ident = seen->ident;
	m->runs = seen->runs;
	m->tgid = tgid;
	m->image = image;
	m->gen1 = (__u16)((seen->gen & (ST_PY_GENS - 1)) + 1);
	m->cover = seen->cover;
	m->epoch = epoch;
}

/* A frame's node address: its code object's key (generation gen) and, for
 * the index, the first code unit of the index's run of one line when the
 * runs have it (pylines.h): two instructions of one line are one node. */
static __always_inline __u64 st_py_addr_key(__u64 addr, __u32 gen, const struct st_py_runs *runs,
					    __u32 cover)
{
	addr = st_py_addr_gen(addr, gen);
	return ST_PY_ADDR(ST_PY_CODE(addr), st_py_canon(runs, cover, ST_PY_INDEX(addr)));
}

#endif

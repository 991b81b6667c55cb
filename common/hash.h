/* hash.h - the one hash function family of the daemon (user space): every
 * hash table (common/u64map.h) and every content hash uses these.
 *   st_hash_bytes  FNV-1a 64 over bytes, chainable (strings, file keys,
 *                  table contents; the unwind table cache's file names, so
 *                  its values must never change)
 *   st_hash_u64    spreads an integer's bits over the word (the first half
 *                  of MurmurHash3's fmix64): slots of a table from a key
 *   st_hash_mix    folds one more field into a hash (boost's hash_combine):
 *                  keys of several fields
 * The BPF node table (bpf/nodes.bpf.h) hashes in the kernel with its own
 * function, tuned for the verifier; BPF uses st_hash_mix for a code
 * object's identity (bpf/pywalk.h, st_py_ident()), so this header builds
 * in BPF too (inline functions, no libc). */
#ifndef STACKTREE_HASH_H
#define STACKTREE_HASH_H

#ifndef __VMLINUX_H__	/* BPF has the kernel's types */
#include <stddef.h>
#include <linux/types.h>
#endif

#define ST_HASH_INIT 0xcbf29ce484222325ull	/* FNV-1a 64 offset basis */

/* FNV-1a 64 of data[0..len), continuing from h (ST_HASH_INIT to start). */
static inline __u64 st_hash_bytes(const void *data, size_t len, __u64 h)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* FNV-1a 64 of a NUL-terminated string. */
static inline __u64 st_hash_str(const char *s)
{
	__u64 h = ST_HASH_INIT;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static inline __u64 st_hash_u64(__u64 v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return v;
}

static inline __u64 st_hash_mix(__u64 h, __u64 v)
{
	return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

#endif

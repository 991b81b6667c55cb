/* jvm_image.h - the input of tests/fuzz/fuzz_jvm.c (and the seeds
 * tests/fuzz/jvm_seed.c dumps from a running JVM): a JVM's memory as
 * records of the reads a reader made, with what the reader is given.
 *
 *   byte 0      the reader (enum jvm_mode, modulo JVM_MODES)
 *   bytes 2-3   sizeof(struct st_java_proc) the image was made with,
 *   bytes 4-5   sizeof(struct st_jvm_layout) (members added at their end
 *               keep older seeds meaningful: the smaller size is copied)
 *   8           pc (JVM_BLOB) or the registers ip, sp, bp, r10, rbx, r13
 *               (JVM_WALK), 6 x 8 bytes
 *   56          the JVM (struct st_java_proc), then its layout (struct
 *               st_jvm_layout), each of the size above
 *   then        records to the end: address (8 bytes), length (2), bytes;
 *               a read is served by the first record that holds it whole
 *               (JVM_WALK: the first record is the stack copy, from sp).
 */
#ifndef STACKTREE_JVM_IMAGE_H
#define STACKTREE_JVM_IMAGE_H

#include <stddef.h>
#include <string.h>
#include <linux/types.h>

#include "bpf/stacktree.h"
#include "user/collect/runtimes/java/jvmlayout.h"

enum jvm_mode {
	JVM_BLOB,	/* a code cache pc's blob and name (jcode.h) */
	JVM_WALK,	/* a deferred walk, kept, then replayed (jkeep.h) */
	JVM_LAYOUT,	/* the walker's JVM read through a layout (jvmlayout.h), then JVM_BLOB */
	JVM_MODES
};

#define JVM_REGS 6
#define JVM_HEAD (8 + 8 * JVM_REGS)
#define JVM_REC_MAX 4096	/* records read (more: ignored) */

struct jvm_image {
	enum jvm_mode mode;
	__u64 regs[JVM_REGS];
	struct st_java_proc p;
	struct st_jvm_layout l;
	const __u8 *rec;	/* the records */
	size_t nrec;		/* ... bytes of them */
};

/* Parse an input: 0, or -1 when too short for its head. */
static inline int jvm_image__parse(const __u8 *d, size_t n, struct jvm_image *im)
{
	__u16 psz, lsz;

	memset(im, 0, sizeof(*im));
	if (n < JVM_HEAD)
		return -1;
	im->mode = (enum jvm_mode)(d[0] % JVM_MODES);
	memcpy(&psz, d + 2, 2);
	memcpy(&lsz, d + 4, 2);
	memcpy(im->regs, d + 8, sizeof(im->regs));
	if (n - JVM_HEAD < (size_t)psz + lsz)
		return -1;
	memcpy(&im->p, d + JVM_HEAD, psz < sizeof(im->p) ? psz : sizeof(im->p));
	memcpy(&im->l, d + JVM_HEAD + psz, lsz < sizeof(im->l) ? lsz : sizeof(im->l));
	im->rec = d + JVM_HEAD + psz + lsz;
	im->nrec = n - JVM_HEAD - psz - lsz;
	return 0;
}

/* The record at *pos (advanced past it): 0, or -1 at the end. */
static inline int jvm_image__next(const struct jvm_image *im, size_t *pos, __u64 *addr,
				  const __u8 **bytes, __u16 *len)
{
	if (*pos > im->nrec || im->nrec - *pos < 10)
		return -1;
	memcpy(addr, im->rec + *pos, 8);
	memcpy(len, im->rec + *pos + 8, 2);
	if (im->nrec - *pos - 10 < *len)
		return -1;
	*bytes = im->rec + *pos + 10;
	*pos += 10 + (size_t)*len;
	return 0;
}

/* A reader over the records (st_vm_read_fn): 0 or -14 (EFAULT). */
static inline long jvm_image__read(void *arg, void *dst, __u32 n, __u64 addr)
{
	const struct jvm_image *im = arg;
	const __u8 *b;
	size_t pos = 0;
	__u64 at;
	__u16 len;

	for (int i = 0; i < JVM_REC_MAX && !jvm_image__next(im, &pos, &at, &b, &len); i++)
		if (addr >= at && addr - at <= len && n <= len - (addr - at)) {
			memcpy(dst, b + (addr - at), n);
			return 0;
		}
	return -14;
}

#endif

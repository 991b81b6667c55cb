/* jscopes.h - the Java methods a compiled frame stands for: from an
 * nmethod and a pc in it, the inlined methods (innermost first) and their
 * bytecode indexes, read from the nmethod's debug information in a JVM's
 * memory.
 *
 * Owner: user/collect/runtimes/java/jscopes.c. A compiled frame in the
 * frame array (bpf/stacktree.h ST_JAVA_JIT_ADDR, bpf/hotspot_blob.h) names
 * its nmethod (by code cache segment), a pc offset in it and its compile
 * id's low bits. The nmethod's PC descriptors (PcDesc: pc offset from the
 * code's start, scope decode offset; sorted by pc) give the pc's scope:
 * a return address's is the one at its offset exactly (HotSpot's
 * pc_desc_at), the leaf's the first after it (pc_desc_near(pc + 1), as
 * AsyncGetCallTrace and JFR take it). A scope, in the scopes data (a
 * CompressedReadStream: UNSIGNED5 numbers, the byte 0 excluded from JDK 20
 * on as in jmethod.h's line tables), is: its sender's decode offset (0:
 * none), its method's index in the nmethod's metadata (index i is entry
 * i - 1; 0 none), its bci minus InvocationEntryBci (-1). The chain runs
 * from the innermost inlined method out to the nmethod's own.
 *
 * Where the tables are (both JDKs' own VMStructs, jvmlayout.h):
 *   JDK 17 (to 22): metadata [nm + _metadata_offset, _scopes_data_begin),
 *     scopes data [_scopes_data_begin, nm + _scopes_pcs_offset), PC descs
 *     [nm + _scopes_pcs_offset, nm + _dependencies_offset); code at
 *     CodeBlob::_code_begin (a pointer).
 *   JDK 25 (23+): the immutable data (nmethod::_immutable_data) holds PC
 *     descs [+ _scopes_pcs_offset, + _scopes_data_offset) and scopes data
 *     [+ _scopes_data_offset, + _immutable_data_size); the metadata is in
 *     the mutable data after the relocations [CodeBlob::_mutable_data +
 *     _relocation_size, + _mutable_data_size); code at blob +
 *     CodeBlob::_code_offset.
 *
 * Nothing read is trusted (the memory is the user's): every region
 * bounded (ST_JSCOPES_REGION_MAX) and every read checked, the PC descs
 * binary searched (at most 32 probes), each scope read within the scopes
 * data, a sender's offset below its scope's (HotSpot writes senders
 * first), at most ST_JSCOPES_MAX scopes; every stop is a reason in
 * st_jscopes.stop. Fuzzed: tests/fuzz/fuzz_jscopes.c.
 */
#ifndef STACKTREE_JSCOPES_H
#define STACKTREE_JSCOPES_H

#include <stdbool.h>
#include <linux/types.h>

#include "bpf/stacktree.h"
#include "user/collect/runtimes/java/jvmlayout.h"
#include "user/collect/runtimes/java/vmstructs.h"

#define ST_JSCOPES_MAX 32		/* scopes kept (C2 inlines 15 deep by default) */
#define ST_JSCOPES_REGION_MAX (4U << 20)	/* bytes of a table: larger is absurd */
#define ST_JSCOPES_HEADER_MAX 1024	/* bytes of the nmethod read at once */

/* How a read ended. */
enum st_jscopes_stop {
	ST_JSCOPES_OK,		/* the whole chain, out to the nmethod's method */
	ST_JSCOPES_NO_PCDESC,	/* no PC desc for the pc: only the nmethod's method */
	ST_JSCOPES_NO_SCOPE,	/* a PC desc without a scope: only the nmethod's method */
	ST_JSCOPES_DEEP,	/* ST_JSCOPES_MAX scopes kept, more not */
	ST_JSCOPES_BAD_SCOPE,	/* a scope unreadable or absurd (a sender not before it,
				 * a method index out of the metadata): the scopes before
				 * it kept */
	ST_JSCOPES_GONE,	/* the nmethod is not the one sampled (its compile id
				 * differs: freed and its space reused) */
	ST_JSCOPES_BAD_NMETHOD,	/* the nmethod unreadable, or its tables absurd */
	ST_JSCOPES_NO_LAYOUT,	/* a layout member it needs missing */
	ST_JSCOPES__MAX
};

struct st_jscope {
	__u64 method;		/* Method* */
	__s32 bci;		/* -1: none (the method's entry) */
};

struct st_jscopes {
	struct st_jscope s[ST_JSCOPES_MAX];	/* innermost first */
	__u32 n;
	__u32 stop;		/* enum st_jscopes_stop */
	__u64 method;		/* the nmethod's own Method* */
	__u32 compile_id;
	__s32 pc_offset;	/* the pc's offset from the code's start */
};

/* The scopes of the pc at nmethod + pc_off (from the nmethod's start, as
 * ST_JAVA_JIT_PC); leaf: an interrupted pc (else a return address);
 * cid: the compile id's low 15 bits the frame was taken with, or -1 for
 * any. major: the JVM's (UNSIGNED5's form). Always fills *out: n scopes
 * (n = 1 with the nmethod's method and bci -1 when the chain could not
 * be read but the nmethod could) and stop. Returns 0 when out->n > 0,
 * else -1. */
int st_jscopes__read(const struct st_jvm_layout *l, int major, st_vm_read_fn rd, void *arg,
		     __u64 nmethod, __u32 pc_off, bool leaf, int cid, struct st_jscopes *out);

/* The nmethod address of a compiled frame's entry (ST_JAVA_JIT_*) in the
 * JVM whose code cache b describes. */
static inline __u64 st_jscopes__nmethod(const struct st_java_blobs *b, __u64 entry)
{
	return b->cc_lo + ((__u64)ST_JAVA_JIT_SEG(entry) << b->log2_segment) + b->heapblock;
}

/* "ok", "no-pcdesc" ... for a stop, or "?" */
const char *st_jscopes__stop_name(__u32 stop);

#endif

/* jcode.h - what a pc in a JVM's code cache is named: the code blob that
 * holds it and the blob's name, read from the JVM's memory.
 *
 * Owner: user/collect/runtimes/java/jcode.c. A frame the walk kept as an
 * address in the code cache (a stub, an adapter, the interpreter, or a
 * compiled method before its JVM was found) is named by the daemon while
 * the process lives (java.c st_java__code_seen()): the call stub's return
 * address and the interpreter's code by their fixed names; any other pc
 * by its blob, found through the code heaps' segment maps
 * (bpf/hotspot_blob.h st_hs_blob_find(), the walker's own search), whose
 * CodeBlob::_name is a C string of the JVM's ("StubRoutines (1)", "I2C/C2I
 * adapters", "nmethod", ...) and whose _size bounds it. A compiled method
 * or a native method's wrapper ("nmethod", "native nmethod") also gives
 * its Method*, which the caller names (jmethod.h).
 *
 * Nothing read is trusted (the memory is the user's): every read checked,
 * the name read in one piece of at most ST_JCODE_NAME_MAX bytes (the
 * largest that reads: it may end before an unmapped page), cut at its NUL
 * and made printable; a size not positive, a Method* not aligned or not a
 * user address refused. Fuzzed: tests/fuzz/fuzz_jvm.c.
 */
#ifndef STACKTREE_JCODE_H
#define STACKTREE_JCODE_H

#include <linux/types.h>

#include "bpf/stacktree.h"
#include "user/collect/runtimes/java/vmstructs.h"

#define ST_JCODE_NAME_MAX 96	/* bytes of a blob's name read ("I2C/C2I adapters") */
/* The JVM's own name of its call stub (StubRoutines::call_stub, entered
 * from JavaCalls::call_helper), as its stack printing spells it. */
#define ST_JCODE_CALL_STUB "StubRoutines::call_stub"
#define ST_JCODE_INTERPRETER "Interpreter"

struct st_jcode {
	__u64 start, end;	/* the blob: [start, start + CodeBlob::_size) */
	__u64 method;		/* a compiled method's or native wrapper's Method*; 0: none */
	char name[ST_JCODE_NAME_MAX + 1];	/* the blob's name, printable; "": unread */
};

/* The fixed name of pc in JVM p (the call stub's return address, the
 * interpreter's code), or NULL. */
const char *st_jcode__fixed(const struct st_java_proc *p, __u64 pc);

/* The blob that holds pc in JVM p, through rd: 1 and *blob; 0 (pc not in
 * a blob: between heaps, a free block); -1 (the search stopped: a segment
 * map unreadable or absurd). */
int st_jcode__find(const struct st_java_proc *p, st_vm_read_fn rd, void *arg, __u64 pc,
		   __u64 *blob);

/* Blob blob's bounds, name and (for a compiled method or a native
 * method's wrapper) Method* through rd, b the JVM's blob offsets: 0 and
 * *out (method or name, or both, set); -EFAULT (its name pointer, kind or
 * size unreadable or absurd, or neither a Method* nor a name read). */
int st_jcode__read(const struct st_java_blobs *b, st_vm_read_fn rd, void *arg, __u64 blob,
		   struct st_jcode *out);

#endif

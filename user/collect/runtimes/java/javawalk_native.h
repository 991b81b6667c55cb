/* javawalk_native.h - HotSpot's interpreted frame walk (bpf/javawalk.h)
 * built natively: the unit tests walk a live JVM's stopped thread, or
 * fake memory, through a reader callback (vmstructs.h's st_vm_read_fn).
 * Only the reads are here (the contract on top of bpf/javawalk.h); the
 * rest is the BPF program's own source. */
#ifndef STACKTREE_JAVAWALK_NATIVE_H
#define STACKTREE_JAVAWALK_NATIVE_H

#include <linux/types.h>

#include "user/collect/runtimes/java/vmstructs.h"

#define ST_JAVA_WALK_ENV                                                                           \
	st_vm_read_fn read;                                                                        \
	void *read_arg;
#define ST_JAVA_READ(w, dst, n, a) ((w)->read((w)->read_arg, (dst), (n), (a)))

#include "bpf/javawalk.h"

#endif

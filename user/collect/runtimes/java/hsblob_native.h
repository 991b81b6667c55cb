/* hsblob_native.h - the step over HotSpot code blobs (bpf/hotspot_blob.h)
 * built natively: the unit tests step over fake memory and a live JVM's
 * stopped thread through a reader callback (vmstructs.h's st_vm_read_fn).
 * Only the reads are here (the contract on top of bpf/hotspot_blob.h: a
 * struct st_unw_env, st_unw_read, st_unw_read8); the rest is the BPF
 * program's own source. Not for a file that includes
 * user/collect/unwind/unwind_native.h (its own st_unw_env). */
#ifndef STACKTREE_HSBLOB_NATIVE_H
#define STACKTREE_HSBLOB_NATIVE_H

#include <linux/types.h>

#include "user/collect/runtimes/java/vmstructs.h"

struct st_unw_env {
	st_vm_read_fn read;
	void *arg;
};

static inline long st_unw_read(struct st_unw_env *e, void *dst, __u32 size, __u64 addr)
{
	return e->read(e->arg, dst, size, addr) ? -1 : 0;
}

static inline long st_unw_read8(struct st_unw_env *e, __u64 addr, __u64 *out)
{
	return st_unw_read(e, out, sizeof(*out), addr);
}

#include "bpf/hotspot_blob.h"

#endif

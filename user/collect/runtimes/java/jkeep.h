/* jkeep.h - the memory a JVM's walks read, kept for the same walks done
 * after the JVM exited.
 *
 * Owner: user/collect/runtimes/java/jkeep.c. A JVM's deferred sample is
 * walked as it comes (java.c st_java__deferred(), the process likely
 * alive) and again for the profile, which waits for the process's tables
 * and may come after the JVM exited. Each read of the first walk that
 * reads is kept by its address and size; a read of a later walk that
 * fails (the process gone) is served from what was kept of the same read,
 * so the later walk finds the same Java frames.
 *
 * Bounded: at most ST_JKEEP_MAX reads kept, of at most ST_JKEEP_READ_MAX
 * bytes each, only user addresses (below ST_USER_END) and non-empty
 * reads; a read served only by its exact (address, size), never by
 * another read's bytes. Fuzzed: tests/fuzz/fuzz_jvm.c (a walk through
 * it, then the same walk with every live read failing, must give the
 * same frames).
 */
#ifndef STACKTREE_JKEEP_H
#define STACKTREE_JKEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "user/collect/runtimes/java/vmstructs.h"

#define ST_JKEEP_MAX 65536	/* reads kept per process */
#define ST_JKEEP_READ_MAX 256	/* bytes of one read kept */

/* How a read was served. */
enum st_jkeep_how {
	ST_JKEEP_LIVE,		/* read from the process, not kept (no room, not keepable) */
	ST_JKEEP_KEPT,		/* read from the process and kept */
	ST_JKEEP_REPLAYED,	/* the process's read failed: served from what was kept */
	ST_JKEEP_FAILED,	/* neither */
};

struct st_jkeep;

struct st_jkeep *st_jkeep__new(void);
void st_jkeep__free(struct st_jkeep *k);

/* n bytes at addr into dst through rd (the live process); when it reads
 * and keep is true (the caller's room), they are kept if new and
 * keepable; when it fails, the bytes kept of the same (addr, n) are
 * given. 0 or rd's error (ST_JKEEP_FAILED); *how (or NULL) says how. */
long st_jkeep__read(struct st_jkeep *k, bool keep, st_vm_read_fn rd, void *arg, void *dst,
		    __u32 n, __u64 addr, enum st_jkeep_how *how);

/* Reads kept. */
size_t st_jkeep__count(const struct st_jkeep *k);

#endif

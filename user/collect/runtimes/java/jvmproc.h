/* jvmproc.h - finding a HotSpot JVM in a process: its libjvm.so, load
 * bias, VMStructs symbols, the layout the Java walker needs, and version.
 *
 * Owner: user/collect/runtimes/java/jvmproc.c. st_jvm_elf__find() reads
 * one libjvm.so's .dynsym for the VMStructs symbols (vmstructs.h);
 * st_jvm_proc__probe() scans /proc/PID/maps for a mapping of a file named
 * libjvm.so, opens it through /proc/PID/map_files/ (binsym's st_elf__open:
 * st_safe_open(), a regular file of bounded size), turns the symbols into
 * the process's addresses, reads the tables from its memory
 * (process_vm_readv) and fills the layout (jvmlayout.h). A cache keeps the
 * tables of each libjvm build id read once (files only root can have
 * written: st_file_trusted()), so the same JVM in many processes costs one
 * read of its tables.
 */
#ifndef STACKTREE_JVMPROC_H
#define STACKTREE_JVMPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "binsym/elf.h"
#include "user/collect/runtimes/java/jvmlayout.h"
#include "user/collect/runtimes/java/vmstructs.h"

/* The VMStructs symbols of one libjvm.so (ELF addresses; 0: absent). */
struct st_jvm_elf {
	__u64 syms[ST_VM_NSYMS];
	char build_id[ST_BUILD_ID_HEX_MAX];	/* "" when it has none */
	bool trusted;				/* st_file_trusted() */
};

/* Whether a mapped file's base name is libjvm.so: the only ones probed. */
bool st_jvm_elf__candidate(const char *path);

/* Read path's .dynsym: 0, -ENOENT (no gHotSpotVMStructs: no HotSpot
 * libjvm), or another negative errno. */
int st_jvm_elf__find(const char *path, struct st_jvm_elf *out);

struct st_jvm_cache;
struct st_jvm_cache *st_jvm_cache__new(void);
void st_jvm_cache__free(struct st_jvm_cache *c);
/* Reads of tables made, and probes served from the cache. */
void st_jvm_cache__stats(const struct st_jvm_cache *c, size_t *reads, size_t *hits);

struct st_jvm_proc {
	__u64 bias;			/* libjvm's load bias */
	char path[256];			/* libjvm as /proc/PID/maps names it (cut) */
	struct st_jvm_elf elf;
	__u64 syms[ST_VM_NSYMS];	/* in the process */
	struct st_vm_counts counts;	/* what its tables held */
	struct st_jvm_layout l;
	int missing;			/* members of l not described */
	struct st_jvm_version version;
};

enum st_jvm_probe {
	ST_JVM_PROBE_NONE,	/* no HotSpot libjvm mapped */
	ST_JVM_PROBE_OK,	/* *out filled */
	ST_JVM_PROBE_STARTING,	/* libjvm mapped, its tables not initialized yet */
};

/* Look for a JVM in process pid: ST_JVM_PROBE_*, or a negative errno
 * (-ENOENT: the process is gone; a table read's, vmstructs.h). c (or NULL)
 * caches the tables by build id. */
int st_jvm_proc__probe(struct st_jvm_cache *c, int pid, struct st_jvm_proc *out);

/* The reader of process *(int *)arg's memory (process_vm_readv): 0 or a
 * negative errno (-EFAULT: not all of it readable). */
long st_jvm_read_process(void *arg, void *dst, __u32 n, __u64 addr);

#endif

/* fuzz_vmstructs.c - libFuzzer target: the daemon's reader of a JVM's
 * VMStructs tables (user/collect/runtimes/java/vmstructs.c) and what is
 * built from them (jvmlayout.c: the walker's layout, the version read
 * through it), over an input that stands for the JVM's memory: a compact
 * image (vmstructs.h) mapped at MEM. Seeds: tests/fuzz/corpus/vmstructs/,
 * captures of JDK 17's and Temurin 25's tables (tests/fuzz/vmstructs_seed.py,
 * the entries of the types the layout reads and every constant). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "user/collect/runtimes/java/jvmlayout.h"
#include "user/collect/runtimes/java/vmstructs.h"

#define MEM 0x10000000ULL

struct mem {
	const uint8_t *p;
	size_t n;
};

static long rd(void *arg, void *dst, __u32 n, __u64 addr)
{
	const struct mem *m = arg;

	if (addr < MEM || addr - MEM > m->n || n > m->n - (addr - MEM))
		return -14;
	memcpy(dst, m->p + (addr - MEM), n);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = { data, size };
	struct st_vmstructs *v = NULL;
	struct st_jvm_layout l;
	struct st_jvm_version ver;
	struct st_vm_counts c;
	__u64 syms[ST_VM_NSYMS], val;
	bool is_static;
	__s32 i;
	__s64 q;

	st_vm_syms__image(MEM, syms);
	if (st_vmstructs__read(syms, 0, rd, &m, &v))
		return 0;
	st_vmstructs__counts(v, &c);
	if (c.structs + c.types + c.ints + c.longs > 4 * ST_VM_MAX_ENTRIES)
		__builtin_trap();
	(void)st_vmstructs__field(v, "CodeCache", "_heaps", &val, &is_static);
	(void)st_vmstructs__type_size(v, "Method", &val);
	(void)st_vmstructs__int(v, "oopSize", &i);
	(void)st_vmstructs__long(v, "markWord::hash_mask", &q);
	if (st_jvm_layout__fill(v, 0, &l) > ST_JF_COUNT)
		__builtin_trap();
	if (st_jvm_version__read(&l, rd, &m, &ver) == 0 &&
	    strnlen(ver.release, sizeof(ver.release)) >= sizeof(ver.release))
		__builtin_trap();
	st_vmstructs__free(v);
	return 0;
}

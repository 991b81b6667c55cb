/* vmstructs.h - HotSpot's own structure tables, read from a JVM's memory.
 *
 * Owner: user/collect/runtimes/java/vmstructs.c. libjvm.so describes its
 * C++ classes to debuggers (the serviceability agent) in four tables
 * (src/hotspot/share/runtime/vmStructs.cpp): gHotSpotVMStructs (field
 * offsets and static field addresses by type and field name),
 * gHotSpotVMTypes (type sizes), gHotSpotVMIntConstants and
 * gHotSpotVMLongConstants. Each exported table symbol is a pointer to an
 * array of entries ending with one whose (type) name is NULL; the layout of
 * an entry is itself exported (gHotSpotVMStructEntryTypeNameOffset, ...,
 * gHotSpotVMStructEntryArrayStride), as 64-bit values the JVM sets when
 * libjvm is loaded. st_vmstructs__read() reads all of it through a reader
 * callback, trusting nothing it reads: entry counts, strides and string
 * lengths are bounded, every read is checked, and an entry whose names
 * cannot be read is skipped and counted. The result is a lookup by name.
 *
 * Compact image (the fuzz target's input, tests/fuzz/vmstructs_seed.py's
 * captures, the unit tests' synthetic tables): the ST_VM_NSYMS symbols'
 * 64-bit values first, in enum st_vm_sym order, at base + 8 * i (so the
 * symbols' addresses are st_vm_syms__image(base)), the tables and strings
 * anywhere after them.
 */
#ifndef STACKTREE_VMSTRUCTS_H
#define STACKTREE_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* The exported symbols read, in this order (names: st_vm_sym_name()). */
enum st_vm_sym {
	ST_VM_STRUCTS, ST_VM_TYPES, ST_VM_INT_CONSTS, ST_VM_LONG_CONSTS,
	ST_VM_SE_TYPE_NAME, ST_VM_SE_FIELD_NAME, ST_VM_SE_TYPE_STRING, ST_VM_SE_IS_STATIC,
	ST_VM_SE_OFFSET, ST_VM_SE_ADDRESS, ST_VM_SE_STRIDE,
	ST_VM_TE_TYPE_NAME, ST_VM_TE_SUPERCLASS_NAME, ST_VM_TE_IS_OOP, ST_VM_TE_IS_INTEGER,
	ST_VM_TE_IS_UNSIGNED, ST_VM_TE_SIZE, ST_VM_TE_STRIDE,
	ST_VM_IC_NAME, ST_VM_IC_VALUE, ST_VM_IC_STRIDE,
	ST_VM_LC_NAME, ST_VM_LC_VALUE, ST_VM_LC_STRIDE,
	ST_VM_NSYMS
};

/* Bounds on what is read: entries per table (JDK 17 has 788 structs, 768
 * types, 398 int and 86 long constants; Temurin 25 585, 335, 346, 97),
 * bytes per entry (in both: 48 per struct, 40 per type, 16 per constant),
 * bytes of a name with its NUL (the longest in both: 69). */
#define ST_VM_MAX_ENTRIES 16384
#define ST_VM_MAX_STRIDE 256
#define ST_VM_NAME_MAX 256

/* Reads n bytes at addr of the process into dst: 0 or a negative errno
 * (the shape of the Python readers' callbacks). */
typedef long (*st_vm_read_fn)(void *arg, void *dst, __u32 n, __u64 addr);

/* "gHotSpotVMStructs" ... for sym, or NULL out of range. */
const char *st_vm_sym_name(int sym);

/* The symbol addresses of a compact image at base. */
void st_vm_syms__image(__u64 base, __u64 syms[ST_VM_NSYMS]);

struct st_vmstructs;

/* Read the four tables: syms[] holds the runtime addresses of the
 * symbols (all but ST_VM_SE_TYPE_STRING, ST_VM_TE_SUPERCLASS_NAME and
 * ST_VM_TE_IS_* are needed). Static field addresses are kept relative to
 * bias (the address minus bias), so that one lookup serves every process
 * of the same libjvm. 0 and *out, or: -EAGAIN (the entry layouts are
 * still 0: the JVM has not initialized them yet), -EINVAL (a symbol
 * missing, an implausible stride or offset), -EFAULT (a layout value or
 * table pointer unreadable), -E2BIG (a table without its end within
 * ST_VM_MAX_ENTRIES), -ENOMEM. */
int st_vmstructs__read(const __u64 syms[ST_VM_NSYMS], __u64 bias, st_vm_read_fn rd, void *arg,
		       struct st_vmstructs **out);
void st_vmstructs__free(struct st_vmstructs *v);

/* Field (type, field): its offset in its type (*is_static false) or its
 * static address relative to bias (*is_static true). 0 or -ENOENT. */
int st_vmstructs__field(const struct st_vmstructs *v, const char *type, const char *field,
			__u64 *value, bool *is_static);
/* sizeof(type). 0 or -ENOENT. */
int st_vmstructs__type_size(const struct st_vmstructs *v, const char *type, __u64 *size);
/* An int constant (gHotSpotVMIntConstants: 32-bit), a long constant
 * (64-bit). 0 or -ENOENT. */
int st_vmstructs__int(const struct st_vmstructs *v, const char *name, __s32 *value);
int st_vmstructs__long(const struct st_vmstructs *v, const char *name, __s64 *value);

/* What was read: entries kept of each table (structs, types, int and long
 * constants), and entries skipped (a name unreadable, unterminated within
 * ST_VM_NAME_MAX, or an entry read failing; a duplicate). */
struct st_vm_counts {
	size_t structs, types, ints, longs, skipped;
};
void st_vmstructs__counts(const struct st_vmstructs *v, struct st_vm_counts *c);

/* Bytes held. */
size_t st_vmstructs__memory(const struct st_vmstructs *v);

#endif

/* jvmlayout.h - the HotSpot structure layout a Java frame walker needs,
 * taken from the JVM's own VMStructs tables (vmstructs.h).
 *
 * Owner: user/collect/runtimes/java/jvmlayout.c. One plain struct, one
 * member per (type, field) read, named after it; a bit of missing[] per
 * member the JVM did not describe (its value is then ST_JVM_NO_OFF, or 0
 * for addresses). Names changed between JDKs: a member lists the names it
 * is known under, first found wins. What JDK 17 (Debian's 17.0.x) and
 * Temurin 25 describe is in docs/java.md; tests/unit/test_vmstructs.c
 * checks both against captures of their tables.
 *
 * Kinds: OFF (the field's offset in its type), ADDR (a static field's
 * address in the process), SIZE (sizeof the type), INT (an int constant).
 */
#ifndef STACKTREE_JVMLAYOUT_H
#define STACKTREE_JVMLAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "bpf/stacktree.h"
#include "user/collect/runtimes/java/vmstructs.h"

#define ST_JVM_NO_OFF 0xffffffffu

/* X(member, kind, type, field, type2, field2): (type2, field2) the name in
 * other JDKs, or NULL, NULL. For SIZE and INT, type is the name and field
 * NULL. */
#define ST_JVM_FIELDS(X)									\
	/* the code cache: its heaps and bounds (JDK 8: one _heap) */				\
	X(codecache_heaps, ADDR, "CodeCache", "_heaps", "CodeCache", "_heap")			\
	X(codecache_low_bound, ADDR, "CodeCache", "_low_bound", NULL, NULL)			\
	X(codecache_high_bound, ADDR, "CodeCache", "_high_bound", NULL, NULL)			\
	X(growablearray_len, OFF, "GrowableArrayBase", "_len", "GenericGrowableArray", "_len")	\
	X(growablearray_data, OFF, "GrowableArray<int>", "_data", NULL, NULL)			\
	X(codeheap_memory, OFF, "CodeHeap", "_memory", NULL, NULL)				\
	X(codeheap_segmap, OFF, "CodeHeap", "_segmap", NULL, NULL)				\
	X(codeheap_log2_segment_size, OFF, "CodeHeap", "_log2_segment_size", NULL, NULL)	\
	X(virtualspace_low, OFF, "VirtualSpace", "_low", NULL, NULL)				\
	X(virtualspace_high, OFF, "VirtualSpace", "_high", NULL, NULL)				\
	X(virtualspace_low_boundary, OFF, "VirtualSpace", "_low_boundary", NULL, NULL)		\
	X(virtualspace_high_boundary, OFF, "VirtualSpace", "_high_boundary", NULL, NULL)	\
	X(heapblock_size, SIZE, "HeapBlock", NULL, NULL, NULL)					\
	X(stubroutines_call_stub_return_address, ADDR, "StubRoutines",				\
	  "_call_stub_return_address", NULL, NULL)						\
	/* the template interpreter's code: a StubQueue's buffer */				\
	X(abstractinterpreter_code, ADDR, "AbstractInterpreter", "_code", NULL, NULL)		\
	X(stubqueue_stub_buffer, OFF, "StubQueue", "_stub_buffer", NULL, NULL)			\
	X(stubqueue_buffer_limit, OFF, "StubQueue", "_buffer_limit", NULL, NULL)		\
	/* code blobs and compiled methods */							\
	X(codeblob_name, OFF, "CodeBlob", "_name", NULL, NULL)					\
	X(codeblob_size, OFF, "CodeBlob", "_size", NULL, NULL)					\
	X(codeblob_frame_size, OFF, "CodeBlob", "_frame_size", NULL, NULL)			\
	X(codeblob_frame_complete_offset, OFF, "CodeBlob", "_frame_complete_offset", NULL, NULL) \
	X(codeblob_code_begin, OFF, "CodeBlob", "_code_begin", NULL, NULL)			\
	X(codeblob_code_offset, OFF, "CodeBlob", "_code_offset", NULL, NULL)			\
	X(codeblob_data_offset, OFF, "CodeBlob", "_data_offset", NULL, NULL)			\
	X(codeblob_relocation_size, OFF, "CodeBlob", "_relocation_size", NULL, NULL)		\
	X(codeblob_mutable_data, OFF, "CodeBlob", "_mutable_data", NULL, NULL)			\
	X(codeblob_mutable_data_size, OFF, "CodeBlob", "_mutable_data_size", NULL, NULL)	\
	X(nmethod_method, OFF, "nmethod", "_method", "CompiledMethod", "_method")		\
	X(nmethod_compile_id, OFF, "nmethod", "_compile_id", NULL, NULL)			\
	X(nmethod_orig_pc_offset, OFF, "nmethod", "_orig_pc_offset", NULL, NULL)		\
	X(nmethod_scopes_pcs_offset, OFF, "nmethod", "_scopes_pcs_offset", NULL, NULL)		\
	X(nmethod_scopes_data_begin, OFF, "CompiledMethod", "_scopes_data_begin", NULL, NULL)	\
	X(nmethod_scopes_data_offset, OFF, "nmethod", "_scopes_data_offset", NULL, NULL)	\
	X(nmethod_metadata_offset, OFF, "nmethod", "_metadata_offset", NULL, NULL)		\
	X(nmethod_immutable_data, OFF, "nmethod", "_immutable_data", NULL, NULL)		\
	X(nmethod_immutable_data_size, OFF, "nmethod", "_immutable_data_size", NULL, NULL)	\
	X(nmethod_dependencies_offset, OFF, "nmethod", "_dependencies_offset", NULL, NULL)	\
	X(nmethod_stub_offset, OFF, "nmethod", "_stub_offset", NULL, NULL)			\
	X(nmethod_deopt_handler_begin, OFF, "CompiledMethod", "_deopt_handler_begin", NULL, NULL) \
	X(nmethod_deopt_handler_offset, OFF, "nmethod", "_deopt_handler_offset", NULL, NULL)	\
	X(pcdesc_pc_offset, OFF, "PcDesc", "_pc_offset", NULL, NULL)				\
	X(pcdesc_scope_decode_offset, OFF, "PcDesc", "_scope_decode_offset", NULL, NULL)	\
	X(pcdesc_size, SIZE, "PcDesc", NULL, NULL, NULL)					\
	X(invocation_entry_bci, INT, "InvocationEntryBci", NULL, NULL, NULL)			\
	/* methods and their names */								\
	X(method_constmethod, OFF, "Method", "_constMethod", NULL, NULL)			\
	X(method_access_flags, OFF, "Method", "_access_flags", NULL, NULL)			\
	X(method_flags, OFF, "Method", "_flags", NULL, NULL)					\
	X(method_size, SIZE, "Method", NULL, NULL, NULL)					\
	X(constmethod_constants, OFF, "ConstMethod", "_constants", NULL, NULL)			\
	X(constmethod_name_index, OFF, "ConstMethod", "_name_index", NULL, NULL)		\
	X(constmethod_signature_index, OFF, "ConstMethod", "_signature_index", NULL, NULL)	\
	X(constmethod_code_size, OFF, "ConstMethod", "_code_size", NULL, NULL)			\
	X(constmethod_flags, OFF, "ConstMethod", "_flags", "ConstMethod", "_flags._flags")	\
	X(constmethod_size, SIZE, "ConstMethod", NULL, NULL, NULL)				\
	X(constmethod_has_linenumber_table, INT, "ConstMethod::_has_linenumber_table", NULL,	\
	  "ConstMethodFlags::_misc_has_linenumber_table", NULL)					\
	X(constantpool_pool_holder, OFF, "ConstantPool", "_pool_holder", NULL, NULL)		\
	X(constantpool_length, OFF, "ConstantPool", "_length", NULL, NULL)			\
	X(constantpool_source_file_name_index, OFF, "ConstantPool", "_source_file_name_index",	\
	  NULL, NULL)										\
	X(constantpool_size, SIZE, "ConstantPool", NULL, NULL, NULL)				\
	X(klass_name, OFF, "Klass", "_name", NULL, NULL)					\
	X(symbol_length, OFF, "Symbol", "_length", NULL, NULL)					\
	X(symbol_body, OFF, "Symbol", "_body", NULL, NULL)					\
	/* threads: the list, each one's tid, state and last Java frame */			\
	X(threadssmrsupport_java_thread_list, ADDR, "ThreadsSMRSupport", "_java_thread_list",	\
	  NULL, NULL)										\
	X(threadslist_length, OFF, "ThreadsList", "_length", NULL, NULL)			\
	X(threadslist_threads, OFF, "ThreadsList", "_threads", NULL, NULL)			\
	X(javathread_anchor, OFF, "JavaThread", "_anchor", NULL, NULL)				\
	X(javathread_threadobj, OFF, "JavaThread", "_threadObj", NULL, NULL)			\
	X(javathread_thread_state, OFF, "JavaThread", "_thread_state", NULL, NULL)		\
	X(javathread_osthread, OFF, "Thread", "_osthread", "JavaThread", "_osthread")		\
	X(osthread_thread_id, OFF, "OSThread", "_thread_id", NULL, NULL)			\
	X(javaframeanchor_last_java_sp, OFF, "JavaFrameAnchor", "_last_Java_sp", NULL, NULL)	\
	X(javaframeanchor_last_java_pc, OFF, "JavaFrameAnchor", "_last_Java_pc", NULL, NULL)	\
	X(javaframeanchor_last_java_fp, OFF, "JavaFrameAnchor", "_last_Java_fp", NULL, NULL)	\
	X(thread_in_java, INT, "_thread_in_Java", NULL, NULL, NULL)				\
	/* interpreter frames: slots relative to fp, in words */				\
	X(frame_interpreter_sender_sp_offset, INT, "frame::interpreter_frame_sender_sp_offset",	\
	  NULL, NULL, NULL)									\
	X(frame_interpreter_last_sp_offset, INT, "frame::interpreter_frame_last_sp_offset",	\
	  NULL, NULL, NULL)									\
	X(frame_interpreter_method_offset, INT, "frame::interpreter_frame_method_offset",	\
	  NULL, NULL, NULL)									\
	X(frame_interpreter_bcp_offset, INT, "frame::interpreter_frame_bcp_offset",		\
	  NULL, NULL, NULL)									\
	X(oop_size, INT, "oopSize", NULL, NULL, NULL)						\
	/* the version */									\
	X(vm_release, ADDR, "Abstract_VM_Version", "_s_vm_release", NULL, NULL)			\
	X(vm_major_version, ADDR, "Abstract_VM_Version", "_vm_major_version", NULL, NULL)

#define ST_JVM_T_OFF __u32
#define ST_JVM_T_SIZE __u32
#define ST_JVM_T_INT __s32
#define ST_JVM_T_ADDR __u64

enum st_jvm_field {
#define ST_JVM_ENUM(m, k, t, f, t2, f2) ST_JF_##m,
	ST_JVM_FIELDS(ST_JVM_ENUM)
#undef ST_JVM_ENUM
	ST_JF_COUNT
};

struct st_jvm_layout {
#define ST_JVM_MEMBER(m, k, t, f, t2, f2) ST_JVM_T_##k m;
	ST_JVM_FIELDS(ST_JVM_MEMBER)
#undef ST_JVM_MEMBER
	__u64 missing[(ST_JF_COUNT + 63) / 64];	/* bit ST_JF_x: member x not described */
};

/* Fill l from v: static addresses are v's (relative) plus bias. Returns
 * the number of members missing. */
int st_jvm_layout__fill(const struct st_vmstructs *v, __u64 bias, struct st_jvm_layout *l);

static inline bool st_jvm_layout__has(const struct st_jvm_layout *l, enum st_jvm_field f)
{
	return !(l->missing[f / 64] & (1ull << (f % 64)));
}

/* What the BPF walker needs of this JVM (bpf/stacktree.h's st_java_proc):
 * the layout's offsets, the interpreter frame's Method* and bcp slots, and
 * the interpreter's code read from the process (AbstractInterpreter::_code,
 * a StubQueue: [_stub_buffer, + _buffer_limit)). The slots: the JVM's own
 * when it describes them, else taken from the ones it does describe on
 * x86-64's frame_x86.hpp (JDK 9+): Method* one word below the last SP
 * slot, bcp five below that (mirror, mdp, cache, locals between), which
 * holds only where the sender SP and last SP slots are -1 and -2 as
 * there. The code cache's bounds are the interpreter's (the caller
 * widens them). 0, -ENOENT (a member missing), -ENOTSUP (another frame layout),
 * -EFAULT (the interpreter's bounds unreadable or absurd). */
int st_jvm_layout__java_proc(const struct st_jvm_layout *l, st_vm_read_fn rd, void *arg,
			     struct st_java_proc *out);

/* What the BPF step over code blobs needs of this JVM (bpf/stacktree.h's
 * st_java_blobs; bpf/hotspot_blob.h): the code cache's bounds, each heap's
 * reserved bounds and segment map (CodeCache::_heaps, a GrowableArray of
 * CodeHeap*), read once from the process (rd, arg), and the blob offsets.
 * The heaps are reserved at start-up and never move; their committed part
 * grows within them (a read past it fails: counted). 0, -ENOENT (a member
 * missing), -ENOTSUP (more than ST_JAVA_MAX_HEAPS heaps, heaps of
 * different segment sizes, an offset past 64 KiB), -EFAULT (unreadable or
 * absurd: a heap outside the code cache's bounds, no heap). */
int st_jvm_layout__java_blobs(const struct st_jvm_layout *l, st_vm_read_fn rd, void *arg,
			      struct st_java_blobs *out);

/* "codecache_heaps" ... for f, or NULL out of range. */
const char *st_jvm_field__name(int f);
/* "CodeCache::_heaps" (the first name) for f, into buf; "oopSize" for a
 * constant, "Method" for a size. */
const char *st_jvm_field__what(int f, char *buf, size_t len);

/* The JVM's version from its memory, through the layout's vm_release
 * (a const char * to "17.0.13+11-Debian-2deb12u1"-like text) and
 * vm_major_version (an int): 0, -ENOENT (neither described), -EFAULT.
 * release is "" when only the major is readable; *major 0 when only the
 * release is (then taken from its leading digits). */
struct st_jvm_version {
	char release[64];
	int major;
};
int st_jvm_version__read(const struct st_jvm_layout *l, st_vm_read_fn rd, void *arg,
			 struct st_jvm_version *out);

#endif

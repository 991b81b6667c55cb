/* jvmlayout.c - filling the walker's HotSpot layout from the VMStructs
 * lookup, and reading the JVM's version (see jvmlayout.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/collect/runtimes/java/jvmlayout.h"

enum kind { OFF, SIZE, INT, ADDR };

struct desc {
	const char *member;
	enum kind kind;
	size_t at;		/* offsetof the member */
	const char *names[2][2];	/* (type, field) or (name, NULL), by preference */
};

static const struct desc descs[ST_JF_COUNT] = {
#define ST_JVM_DESC(m, k, t, f, t2, f2)								\
	[ST_JF_##m] = { #m, k, offsetof(struct st_jvm_layout, m), { { t, f }, { t2, f2 } } },
	ST_JVM_FIELDS(ST_JVM_DESC)
#undef ST_JVM_DESC
};

const char *st_jvm_field__name(int f)
{
	return f >= 0 && f < ST_JF_COUNT ? descs[f].member : NULL;
}

const char *st_jvm_field__what(int f, char *buf, size_t len)
{
	if (f < 0 || f >= ST_JF_COUNT)
		return NULL;
	if (descs[f].names[0][1])
		snprintf(buf, len, "%s::%s", descs[f].names[0][0], descs[f].names[0][1]);
	else
		snprintf(buf, len, "%s", descs[f].names[0][0]);
	return buf;
}

/* The value of name (type, field) of kind k from v: 0 or -ENOENT. */
static int lookup(const struct st_vmstructs *v, enum kind k, const char *type, const char *field,
		  __u64 bias, __u64 *out)
{
	bool is_static = false;
	__s32 i;

	switch (k) {
	case OFF:
		if (st_vmstructs__field(v, type, field, out, &is_static) || is_static || *out >= ST_JVM_NO_OFF)
			return -ENOENT;
		return 0;
	case ADDR:
		if (st_vmstructs__field(v, type, field, out, &is_static) || !is_static)
			return -ENOENT;
		*out += bias;
		return 0;
	case SIZE:
		if (st_vmstructs__type_size(v, type, out) || *out >= ST_JVM_NO_OFF)
			return -ENOENT;
		return 0;
	case INT:
		if (st_vmstructs__int(v, type, &i))
			return -ENOENT;
		*out = (__u64)(__u32)i;
		return 0;
	}
	return -ENOENT;
}

int st_jvm_layout__fill(const struct st_vmstructs *v, __u64 bias, struct st_jvm_layout *l)
{
	int missing = 0;

	memset(l, 0, sizeof(*l));
	for (int f = 0; f < ST_JF_COUNT; f++) {
		const struct desc *d = &descs[f];
		char *at = (char *)l + d->at;
		__u64 val = 0;
		int found = -ENOENT;

		for (int n = 0; n < 2 && found; n++)
			if (d->names[n][0])
				found = lookup(v, d->kind, d->names[n][0], d->names[n][1], bias, &val);
		if (found) {
			l->missing[f / 64] |= 1ull << (f % 64);
			missing++;
			val = d->kind == ADDR ? 0 : ST_JVM_NO_OFF;
		}
		if (d->kind == ADDR) {
			memcpy(at, &val, sizeof(__u64));
		} else {
			__u32 v32 = (__u32)val;

			memcpy(at, &v32, sizeof(v32));
		}
	}
	return missing;
}

int st_jvm_version__read(const struct st_jvm_layout *l, st_vm_read_fn rd, void *arg,
			 struct st_jvm_version *out)
{
	bool has_rel = st_jvm_layout__has(l, ST_JF_vm_release),
	     has_major = st_jvm_layout__has(l, ST_JF_vm_major_version);
	bool got = false;
	__u64 p;
	__s32 major;

	memset(out, 0, sizeof(*out));
	if (!has_rel && !has_major)
		return -ENOENT;
	/* the text in pieces that end at page ends, a byte at a time once
	 * a piece is not all readable (it may end just before memory that
	 * is not) */
	if (has_rel && !rd(arg, &p, sizeof(p), l->vm_release) && p) {
		size_t n = 0, cap = sizeof(out->release) - 1;
		bool bytes = false;

		while (n < cap && !memchr(out->release, '\0', n)) {
			size_t k = bytes ? 1 : 4096 - ((p + n) % 4096);

			if (k > cap - n)
				k = cap - n;
			if (p + n < p)
				break;
			if (rd(arg, out->release + n, (__u32)k, p + n)) {
				if (bytes)
					break;
				bytes = true;
				continue;
			}
			n += k;
		}
		out->release[n] = '\0';
		n = strlen(out->release);
		for (size_t i = 0; i < n; i++)	/* printable text only */
			if (out->release[i] < 0x20 || out->release[i] > 0x7e)
				out->release[i] = '?';
		got = n > 0;
	}
	if (has_major && !rd(arg, &major, sizeof(major), l->vm_major_version) && major > 0 &&
	    major < 1000) {
		out->major = major;
		got = true;
	} else if (got) {
		out->major = atoi(out->release);
	}
	return got ? 0 : -EFAULT;
}

int st_jvm_layout__java_proc(const struct st_jvm_layout *l, st_vm_read_fn rd, void *arg,
			     struct st_java_proc *out)
{
	static const enum st_jvm_field need[] = {
		ST_JF_abstractinterpreter_code, ST_JF_stubqueue_stub_buffer, ST_JF_stubqueue_buffer_limit,
		ST_JF_method_constmethod, ST_JF_constmethod_size, ST_JF_constmethod_code_size,
	};
	__s32 method, bcp, limit = 0;
	__u64 queue = 0, buf = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!st_jvm_layout__has(l, need[i]))
			return -ENOENT;
	if (l->method_constmethod > 0xfff8 || l->constmethod_size > 0xffff ||
	    l->constmethod_code_size > 0xfffe)
		return -ENOTSUP;
	if (st_jvm_layout__has(l, ST_JF_frame_interpreter_method_offset) &&
	    st_jvm_layout__has(l, ST_JF_frame_interpreter_bcp_offset)) {
		method = l->frame_interpreter_method_offset;
		bcp = l->frame_interpreter_bcp_offset;
	} else if (st_jvm_layout__has(l, ST_JF_frame_interpreter_sender_sp_offset) &&
		   st_jvm_layout__has(l, ST_JF_frame_interpreter_last_sp_offset) &&
		   l->frame_interpreter_sender_sp_offset == -1 &&
		   l->frame_interpreter_last_sp_offset == -2) {
		method = l->frame_interpreter_last_sp_offset - 1;
		bcp = method - 5;
	} else {
		return l->frame_interpreter_last_sp_offset == (__s32)ST_JVM_NO_OFF ? -ENOENT : -ENOTSUP;
	}
	if (method < -ST_JAVA_SLOTS_BELOW || method > -1 || bcp < -ST_JAVA_SLOTS_BELOW || bcp > -1)
		return -ENOTSUP;
	if (rd(arg, &queue, sizeof(queue), l->abstractinterpreter_code) || !queue ||
	    rd(arg, &buf, sizeof(buf), queue + l->stubqueue_stub_buffer) ||
	    rd(arg, &limit, sizeof(limit), queue + l->stubqueue_buffer_limit))
		return -EFAULT;
	/* the interpreter is some hundreds of KiB of code */
	if (!buf || buf >= ST_USER_END || limit <= 0 || limit > (64 << 20) ||
	    buf + (__u64)limit > ST_USER_END)
		return -EFAULT;
	out->interp_start = buf;
	out->interp_end = buf + (__u64)limit;
	out->code_start = out->interp_start;	/* the code cache: the caller's to widen */
	out->code_end = out->interp_end;
	out->l.method_constmethod = (__u16)l->method_constmethod;
	out->l.constmethod_size = (__u16)l->constmethod_size;
	out->l.constmethod_code_size = (__u16)l->constmethod_code_size;
	out->l.frame_method = (__s8)method;
	out->l.frame_bcp = (__s8)bcp;
	return 0;
}

/* A 64-bit word at a of the process: 0 or -EFAULT. */
static int rd64(st_vm_read_fn rd, void *arg, __u64 a, __u64 *out)
{
	return rd(arg, out, sizeof(*out), a) ? -EFAULT : 0;
}

int st_jvm_layout__java_blobs(const struct st_jvm_layout *l, st_vm_read_fn rd, void *arg,
			      struct st_java_blobs *out)
{
	static const enum st_jvm_field need[] = {
		ST_JF_codecache_heaps, ST_JF_codecache_low_bound, ST_JF_codecache_high_bound,
		ST_JF_growablearray_len, ST_JF_growablearray_data, ST_JF_codeheap_memory,
		ST_JF_codeheap_segmap, ST_JF_codeheap_log2_segment_size, ST_JF_virtualspace_low,
		ST_JF_virtualspace_high_boundary, ST_JF_heapblock_size,
		ST_JF_stubroutines_call_stub_return_address, ST_JF_codeblob_name,
		ST_JF_codeblob_frame_size, ST_JF_codeblob_frame_complete_offset, ST_JF_nmethod_method,
		ST_JF_nmethod_compile_id, ST_JF_nmethod_stub_offset,
	};
	__u64 arr = 0, data = 0, at;
	__s32 len = 0, log2 = -1;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!st_jvm_layout__has(l, need[i]))
			return -ENOENT;
	if (st_jvm_layout__has(l, ST_JF_codeblob_code_begin)) {
		out->code = (__u16)l->codeblob_code_begin;
		at = l->codeblob_code_begin;
	} else if (st_jvm_layout__has(l, ST_JF_codeblob_code_offset)) {
		out->code = (__u16)l->codeblob_code_offset;
		out->code_is_offset = 1;
		at = l->codeblob_code_offset;
	} else {
		return -ENOENT;
	}
	if (at > 0xfff0 || l->codeblob_name > 0xfff0 || l->codeblob_frame_size > 0xfff0 ||
	    l->codeblob_frame_complete_offset > 0xfff0 || l->nmethod_method > 0xfff0 ||
	    l->nmethod_compile_id > 0xfff0 || l->nmethod_stub_offset > 0xfff0 ||
	    l->heapblock_size == 0 || l->heapblock_size > 64)
		return -ENOTSUP;
	out->name = (__u16)l->codeblob_name;
	out->frame_size = (__u16)l->codeblob_frame_size;
	out->frame_complete = (__u16)l->codeblob_frame_complete_offset;
	out->method = (__u16)l->nmethod_method;
	out->compile_id = (__u16)l->nmethod_compile_id;
	out->stub = (__u16)l->nmethod_stub_offset;
	out->heapblock = (__u8)l->heapblock_size;
	/* a deoptimized frame's original pc: optional (without it such a
	 * frame is named by its method alone) */
	if (st_jvm_layout__has(l, ST_JF_nmethod_orig_pc_offset) && l->nmethod_orig_pc_offset <= 0xfff0 &&
	    st_jvm_layout__has(l, ST_JF_codeblob_size) && l->codeblob_size <= 0xfff0) {
		out->size = (__u16)l->codeblob_size;
		if (st_jvm_layout__has(l, ST_JF_nmethod_deopt_handler_begin) &&
		    l->nmethod_deopt_handler_begin <= 0xfff0) {
			out->deopt = (__u16)l->nmethod_deopt_handler_begin;
		} else if (st_jvm_layout__has(l, ST_JF_nmethod_deopt_handler_offset) &&
			   l->nmethod_deopt_handler_offset <= 0xfff0) {
			out->deopt = (__u16)l->nmethod_deopt_handler_offset;
			out->deopt_is_offset = 1;
		}
		if (out->deopt)
			out->orig_pc = (__u16)l->nmethod_orig_pc_offset;
	}
	if (rd64(rd, arg, l->codecache_low_bound, &out->cc_lo) ||
	    rd64(rd, arg, l->codecache_high_bound, &out->cc_hi) ||
	    rd64(rd, arg, l->stubroutines_call_stub_return_address, &out->call_stub_ret) ||
	    rd64(rd, arg, l->codecache_heaps, &arr) || !arr ||
	    rd(arg, &len, sizeof(len), arr + l->growablearray_len) ||
	    rd64(rd, arg, arr + l->growablearray_data, &data) || !data)
		return -EFAULT;
	if (!out->cc_lo || out->cc_lo >= out->cc_hi || out->cc_hi > ST_USER_END || len <= 0)
		return -EFAULT;
	if (len > ST_JAVA_MAX_HEAPS)
		return -ENOTSUP;
	for (__s32 i = 0; i < len; i++) {
		struct st_java_heap *h = &out->heaps[i];
		__u64 heap = 0;
		__s32 lg = 0;

		if (rd64(rd, arg, data + 8ULL * (__u64)i, &heap) || !heap ||
		    rd64(rd, arg, heap + l->codeheap_memory + l->virtualspace_low, &h->lo) ||
		    rd64(rd, arg, heap + l->codeheap_memory + l->virtualspace_high_boundary, &h->hi) ||
		    rd64(rd, arg, heap + l->codeheap_segmap + l->virtualspace_low, &h->segmap) ||
		    rd(arg, &lg, sizeof(lg), heap + l->codeheap_log2_segment_size))
			return -EFAULT;
		/* segments of 16 bytes to 64 KiB; a heap within the code cache */
		if (lg < 4 || lg > 16 || h->lo >= h->hi || h->lo < out->cc_lo || h->hi > out->cc_hi ||
		    !h->segmap || h->segmap >= ST_USER_END || ((h->lo - out->cc_lo) & ((1ULL << lg) - 1)))
			return -EFAULT;
		if (log2 >= 0 && lg != log2)
			return -ENOTSUP;
		log2 = lg;
	}
	/* the entries' segment field spans the whole code cache */
	if (((out->cc_hi - out->cc_lo) >> log2) > ST_JAVA_JIT_SEG_MAX)
		return -ENOTSUP;
	out->log2_segment = (__u8)log2;
	out->nheaps = (__u8)len;
	return 0;
}

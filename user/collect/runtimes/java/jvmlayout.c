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

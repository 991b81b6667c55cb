/* jscopes.c - a compiled Java frame's inlined methods from its nmethod's
 * PC descriptors and scopes data (see jscopes.h). */
#include <errno.h>
#include <string.h>

#include "user/collect/runtimes/java/jscopes.h"

#define USER_END (1ULL << 47)
#define SEARCH_STEPS 32		/* binary search probes: 2^32 descs */
#define SCOPE_BYTES 15		/* three UNSIGNED5 numbers at most */

/* Where an nmethod's tables are: [lo, hi) each. */
struct tables {
	__u64 pcs, pcs_end;
	__u64 data, data_end;
	__u64 meta, meta_end;
	__u64 code;
};

static const char *const stop_names[ST_JSCOPES__MAX] = {
	"ok", "no-pcdesc", "no-scope", "deep", "bad-scope", "gone", "bad-nmethod", "no-layout",
};

const char *st_jscopes__stop_name(__u32 stop)
{
	return stop < ST_JSCOPES__MAX ? stop_names[stop] : "?";
}

static bool ptr_ok(__u64 a)
{
	return a && a < USER_END && !(a & 7);
}

static bool has(const struct st_jvm_layout *l, enum st_jvm_field f)
{
	return st_jvm_layout__has(l, f);
}

/* A field of the nmethod's header copy h (n bytes): 0, or -1 when past it. */
static int field(const __u8 *h, size_t n, __u32 off, void *dst, size_t size)
{
	if (off >= n || size > n - off)
		return -1;
	memcpy(dst, h + off, size);
	return 0;
}

static int field32(const __u8 *h, size_t n, __u32 off, __s32 *v)
{
	return field(h, n, off, v, sizeof(*v));
}

static int field64(const __u8 *h, size_t n, __u32 off, __u64 *v)
{
	return field(h, n, off, v, sizeof(*v));
}

/* [lo, lo + a) .. [lo + b): a region of at most ST_JSCOPES_REGION_MAX
 * bytes, within user space. */
static bool region(__u64 base, __s64 a, __s64 b, __u64 *lo, __u64 *hi)
{
	if (!base || base >= USER_END || a < 0 || b < a || (__u64)(b - a) > ST_JSCOPES_REGION_MAX ||
	    (__u64)b > USER_END - base)
		return false;
	*lo = base + (__u64)a;
	*hi = base + (__u64)b;
	return true;
}

/* The tables of the nmethod at nm (its header h, n bytes): 0, or -1. */
static int find_tables(const struct st_jvm_layout *l, __u64 nm, const __u8 *h, size_t n,
		       struct tables *t)
{
	__s32 pcs = 0, end = 0, a = 0, b = 0, c = 0;
	__u64 p = 0;

	if (has(l, ST_JF_codeblob_code_begin)) {
		if (field64(h, n, l->codeblob_code_begin, &t->code))
			return -1;
	} else {
		if (field32(h, n, l->codeblob_code_offset, &a) || a < 0)
			return -1;
		t->code = nm + (__u64)a;
	}
	if (field32(h, n, l->nmethod_scopes_pcs_offset, &pcs))
		return -1;
	if (has(l, ST_JF_nmethod_immutable_data)) {
		/* JDK 23+: PC descs and scopes in the immutable data, the
		 * metadata after the relocations in the mutable data */
		if (field64(h, n, l->nmethod_immutable_data, &p) ||
		    field32(h, n, l->nmethod_scopes_data_offset, &a) ||
		    field32(h, n, l->nmethod_immutable_data_size, &end) ||
		    !region(p, pcs, a, &t->pcs, &t->pcs_end) ||
		    !region(p, a, end, &t->data, &t->data_end))
			return -1;
		if (field64(h, n, l->codeblob_mutable_data, &p) ||
		    field32(h, n, l->codeblob_relocation_size, &b) ||
		    field32(h, n, l->codeblob_mutable_data_size, &c) ||
		    !region(p, b, c, &t->meta, &t->meta_end))
			return -1;
		return 0;
	}
	/* JDK 17: all in the nmethod, the scopes data's start a pointer */
	if (field64(h, n, l->nmethod_scopes_data_begin, &p) ||
	    field32(h, n, l->nmethod_metadata_offset, &a) ||
	    field32(h, n, l->nmethod_dependencies_offset, &end) || p < nm ||
	    p - nm > ST_JSCOPES_REGION_MAX || !region(nm, pcs, end, &t->pcs, &t->pcs_end) ||
	    !region(nm, a, (__s64)(p - nm), &t->meta, &t->meta_end) ||
	    !region(nm, (__s64)(p - nm), pcs, &t->data, &t->data_end))
		return -1;
	return 0;
}

/* One UNSIGNED5 number of t[0, n) at *at (x: the excluded low bytes, 0
 * before JDK 20, 1 after): 0, or -1 (cut, or an excluded byte). */
static int unsigned5(const __u8 *t, size_t n, size_t *at, __u8 x, __u32 *out)
{
	const __u32 low = 256 - x - 64;	/* bytes that end a number */
	__u32 sum = 0;

	for (__u32 i = 0; i < 5; i++) {
		__u32 b;

		if (*at + i >= n)
			return -1;
		b = t[*at + i];
		if (b < x)
			return -1;
		sum += (b - x) << (6 * i);
		if (b < x + low || i == 4) {
			*at += i + 1;
			*out = sum;
			return 0;
		}
	}
	return -1;
}

/* The scope decode offset of the PC desc for the code offset want: the
 * one at want (exact), else the first at or after it (the leaf asks for
 * its pc + 1). 0 and *scope, or -1
 * (none, or unreadable). */
static int find_pcdesc(const struct st_jvm_layout *l, st_vm_read_fn rd, void *arg,
		       const struct tables *t, __s32 want, bool exact, __s32 *scope)
{
	__u64 size = l->pcdesc_size, count, lo = 0, hi;
	__s32 d[2];

	if (size < 8 || size > 64 || l->pcdesc_pc_offset > size - 4 ||
	    l->pcdesc_scope_decode_offset > size - 4)
		return -1;
	count = (t->pcs_end - t->pcs) / size;
	hi = count;
	/* the first desc whose pc offset >= want, in [lo, hi) */
	for (int i = 0; i < SEARCH_STEPS && lo < hi; i++) {
		__u64 mid = lo + (hi - lo) / 2;

		if (rd(arg, &d[0], 4, t->pcs + mid * size + l->pcdesc_pc_offset))
			return -1;
		if (d[0] < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= count || lo != hi ||
	    rd(arg, &d[0], 4, t->pcs + lo * size + l->pcdesc_pc_offset) ||
	    rd(arg, &d[1], 4, t->pcs + lo * size + l->pcdesc_scope_decode_offset))
		return -1;
	if (exact && d[0] != want)
		return -1;
	*scope = d[1];
	return 0;
}

int st_jscopes__read(const struct st_jvm_layout *l, int major, st_vm_read_fn rd, void *arg,
		     __u64 nmethod, __u32 pc_off, bool leaf, int cid, struct st_jscopes *out)
{
	static const enum st_jvm_field need[] = {
		ST_JF_nmethod_method, ST_JF_nmethod_compile_id, ST_JF_nmethod_scopes_pcs_offset,
		ST_JF_pcdesc_pc_offset, ST_JF_pcdesc_scope_decode_offset, ST_JF_pcdesc_size,
	};
	__u8 h[ST_JSCOPES_HEADER_MAX];
	const __u8 x = major >= 20 ? 1 : 0;
	struct tables t = {};
	__s32 entry_bci = has(l, ST_JF_invocation_entry_bci) ? l->invocation_entry_bci : -1;
	__s32 scope = 0, cid_now = 0;
	__u64 limit;
	size_t hn = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!has(l, need[i])) {
			out->stop = ST_JSCOPES_NO_LAYOUT;
			return -1;
		}
	if (!has(l, ST_JF_nmethod_immutable_data) &&
	    (!has(l, ST_JF_nmethod_scopes_data_begin) || !has(l, ST_JF_nmethod_metadata_offset) ||
	     !has(l, ST_JF_nmethod_dependencies_offset) || !has(l, ST_JF_codeblob_code_begin))) {
		out->stop = ST_JSCOPES_NO_LAYOUT;
		return -1;
	}
	if (has(l, ST_JF_nmethod_immutable_data) &&
	    (!has(l, ST_JF_nmethod_scopes_data_offset) || !has(l, ST_JF_nmethod_immutable_data_size) ||
	     !has(l, ST_JF_codeblob_mutable_data) || !has(l, ST_JF_codeblob_relocation_size) ||
	     !has(l, ST_JF_codeblob_mutable_data_size) || !has(l, ST_JF_codeblob_code_offset))) {
		out->stop = ST_JSCOPES_NO_LAYOUT;
		return -1;
	}
	/* the header: in pieces that end at page ends, the first that fails
	 * ending it (the nmethod may sit just before unreadable memory) */
	out->stop = ST_JSCOPES_BAD_NMETHOD;
	if (!ptr_ok(nmethod) || nmethod > USER_END - sizeof(h))
		return -1;
	while (hn < sizeof(h)) {
		size_t k = 4096 - ((nmethod + hn) % 4096);

		if (k > sizeof(h) - hn)
			k = sizeof(h) - hn;
		if (rd(arg, h + hn, (__u32)k, nmethod + hn))
			break;
		hn += k;
	}
	if (field64(h, hn, l->nmethod_method, &out->method) ||
	    field32(h, hn, l->nmethod_compile_id, &cid_now) || !ptr_ok(out->method))
		return -1;
	out->compile_id = (__u32)cid_now;
	if (cid >= 0 && ((__u32)cid_now & 0x7fff) != ((__u32)cid & 0x7fff)) {
		out->stop = ST_JSCOPES_GONE;
		return -1;
	}
	/* the nmethod's own method, whatever comes of its scopes */
	out->s[0].method = out->method;
	out->s[0].bci = -1;
	out->n = 1;
	if (find_tables(l, nmethod, h, hn, &t) || t.code < nmethod ||
	    t.code - nmethod > ST_JSCOPES_REGION_MAX || pc_off < t.code - nmethod)
		return 0;
	out->pc_offset = (__s32)(pc_off - (t.code - nmethod));
	out->stop = ST_JSCOPES_NO_PCDESC;
	/* a leaf's pc: the first desc after it (pc_desc_near(pc + 1), as
	 * AsyncGetCallTrace and JFR take it): a desc at the pc itself is the
	 * state after the instruction before it (a call's return) */
	if (find_pcdesc(l, rd, arg, &t, out->pc_offset + (leaf ? 1 : 0), !leaf, &scope))
		return 0;
	out->stop = ST_JSCOPES_NO_SCOPE;
	if (scope <= 0)
		return 0;
	out->n = 0;
	out->stop = ST_JSCOPES_OK;
	limit = t.data_end - t.data;
	while (scope > 0) {
		__u8 b[SCOPE_BYTES];
		size_t at = 0, n = SCOPE_BYTES;
		__u32 next = 0, idx = 0, bci = 0;
		__u64 m = 0;

		if (out->n >= ST_JSCOPES_MAX) {
			out->stop = ST_JSCOPES_DEEP;
			break;
		}
		if ((__u64)scope >= limit) {
			out->stop = ST_JSCOPES_BAD_SCOPE;
			break;
		}
		if (n > t.data_end - t.data - (__u64)scope)
			n = (size_t)(t.data_end - t.data - (__u64)scope);
		if (rd(arg, b, (__u32)n, t.data + (__u64)scope) || unsigned5(b, n, &at, x, &next) ||
		    unsigned5(b, n, &at, x, &idx) || unsigned5(b, n, &at, x, &bci) || !idx ||
		    (__u64)idx > (t.meta_end - t.meta) / 8 ||
		    rd(arg, &m, sizeof(m), t.meta + 8ULL * (idx - 1)) || !ptr_ok(m) || bci > 0x10000) {
			out->stop = ST_JSCOPES_BAD_SCOPE;
			break;
		}
		out->s[out->n].method = m;
		out->s[out->n].bci = (__s32)bci + entry_bci;
		out->n++;
		/* a sender is written before its scope: its offset is lower */
		limit = (__u64)scope;
		scope = (__s32)next;
	}
	if (!out->n) {
		out->s[0].method = out->method;
		out->s[0].bci = -1;
		out->n = 1;
	}
	return 0;
}

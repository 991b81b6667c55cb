/* jmethod.c - a HotSpot method's names and line table from a JVM's
 * memory, and the line of a bci (see jmethod.h). */
#include <errno.h>
#include <string.h>

#include "user/collect/runtimes/java/jmethod.h"

#define USER_END (1ULL << 47)
#define PAGE 4096ULL

static int unsigned5(const __u8 *t, size_t n, size_t *at, __u8 x, __u32 *out);
static int signed5(const __u8 *t, size_t n, size_t *at, __u8 x, __u32 *out);

static bool ptr_ok(__u64 a)
{
	return a && a < USER_END && !(a & 7);
}

static bool off_ok(__u32 off)
{
	return off != ST_JVM_NO_OFF && off < 4096;
}

/* Symbol sym's text into out (ST_JNAME_MAX), cut and made printable; ""
 * when unreadable. '/' becomes '.' when dots. */
static void symbol(const struct st_jvm_layout *l, st_vm_read_fn rd, void *arg, __u64 sym,
		   bool dots, char *out)
{
	__u16 len = 0;
	__u32 n;

	out[0] = '\0';
	if (!ptr_ok(sym) || rd(arg, &len, sizeof(len), sym + l->symbol_length))
		return;
	n = len < ST_JNAME_MAX - 1 ? len : ST_JNAME_MAX - 1;
	if (n && rd(arg, out, n, sym + l->symbol_body))
		n = 0;
	out[n] = '\0';
	for (__u32 i = 0; i < n; i++) {
		if (out[i] < 0x20 || out[i] > 0x7e)
			out[i] = '?';
		else if (dots && out[i] == '/')
			out[i] = '.';
	}
}

/* A hidden class's name as the JVM shows it (Klass::external_name,
 * Class.getName()): its Symbol joins the name and the address with '+'
 * ("Ledger$$Lambda$14+0x0000000801001000"), shown with '/'. */
static void hidden_name(char *klass)
{
	char *plus = strrchr(klass, '+');

	if (plus && plus[1] == '0' && plus[2] == 'x')
		*plus = '/';
}

/* The Symbol* at pool entry idx of the pool at cp (length entries), or 0. */
static __u64 pool_symbol(const struct st_jvm_layout *l, st_vm_read_fn rd, void *arg, __u64 cp,
			 __s32 length, __u16 idx)
{
	__u64 v = 0;

	if (!idx || idx >= length ||
	    rd(arg, &v, sizeof(v), cp + l->constantpool_size + 8ULL * idx))
		return 0;
	return v & ~1ULL;	/* a low tag bit in some JDKs */
}

/* Up to ST_JLINES_MAX bytes of the table at a, in pieces that end at page
 * ends (the table may end just before memory that is not readable),
 * until its end is among them: the bytes kept (up to its end). */
static __u32 copy_lines(st_vm_read_fn rd, void *arg, __u64 a, __u8 x, __u8 *dst)
{
	__u32 n = 0;
	size_t end;

	while (n < ST_JLINES_MAX) {
		__u32 k = (__u32)(PAGE - ((a + n) % PAGE));

		if (k > ST_JLINES_MAX - n)
			k = ST_JLINES_MAX - n;
		if (rd(arg, dst + n, k, a + n))
			break;
		n += k;
		end = st_jlines__end(dst, n, x);
		if (end)
			return (__u32)end;
	}
	return n;
}

int st_jmethod__read(const struct st_jvm_layout *l, int major, st_vm_read_fn rd, void *arg,
		     __u64 method, struct st_jmethod *out)
{
	static const enum st_jvm_field need[] = {
		ST_JF_method_constmethod, ST_JF_constmethod_constants, ST_JF_constmethod_name_index,
		ST_JF_constmethod_signature_index, ST_JF_constmethod_code_size, ST_JF_constmethod_size,
		ST_JF_constantpool_pool_holder, ST_JF_constantpool_length, ST_JF_constantpool_size,
		ST_JF_klass_name, ST_JF_symbol_length, ST_JF_symbol_body,
	};
	__u64 cm = 0, cp = 0, holder = 0, kname = 0;
	__u16 name_idx = 0, sig_idx = 0, src_idx = 0, code_size = 0, flags = 0;
	__s32 length = 0;

	memset(out, 0, offsetof(struct st_jmethod, lines));
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!st_jvm_layout__has(l, need[i]))
			return -ENOENT;
	if (!off_ok(l->method_constmethod) || !off_ok(l->constmethod_constants) ||
	    !off_ok(l->constmethod_name_index) || !off_ok(l->constmethod_signature_index) ||
	    !off_ok(l->constmethod_code_size) || !off_ok(l->constmethod_size) ||
	    !off_ok(l->constantpool_pool_holder) || !off_ok(l->constantpool_length) ||
	    !off_ok(l->constantpool_size) || !off_ok(l->klass_name) || !off_ok(l->symbol_length) ||
	    !off_ok(l->symbol_body))
		return -ENOENT;
	if (!ptr_ok(method) || rd(arg, &cm, sizeof(cm), method + l->method_constmethod) ||
	    !ptr_ok(cm) || rd(arg, &cp, sizeof(cp), cm + l->constmethod_constants) || !ptr_ok(cp) ||
	    rd(arg, &name_idx, sizeof(name_idx), cm + l->constmethod_name_index) ||
	    rd(arg, &sig_idx, sizeof(sig_idx), cm + l->constmethod_signature_index) ||
	    rd(arg, &code_size, sizeof(code_size), cm + l->constmethod_code_size) ||
	    rd(arg, &length, sizeof(length), cp + l->constantpool_length) || length <= 0 ||
	    length > 0xffff || rd(arg, &holder, sizeof(holder), cp + l->constantpool_pool_holder) ||
	    !ptr_ok(holder))
		return -EFAULT;
	out->code_size = code_size;
	if (!rd(arg, &kname, sizeof(kname), holder + l->klass_name))
		symbol(l, rd, arg, kname, true, out->klass);
	hidden_name(out->klass);
	symbol(l, rd, arg, pool_symbol(l, rd, arg, cp, length, name_idx), false, out->name);
	symbol(l, rd, arg, pool_symbol(l, rd, arg, cp, length, sig_idx), false, out->sig);
	if (off_ok(l->constantpool_source_file_name_index) &&
	    !rd(arg, &src_idx, sizeof(src_idx), cp + l->constantpool_source_file_name_index))
		symbol(l, rd, arg, pool_symbol(l, rd, arg, cp, length, src_idx), false, out->source);
	/* the flags' low 16 bits (a u2 in JDK 17, a u4 from 21: little endian) */
	if (off_ok(l->constmethod_flags) && st_jvm_layout__has(l, ST_JF_constmethod_has_linenumber_table) &&
	    l->constmethod_has_linenumber_table > 0 && l->constmethod_has_linenumber_table <= 0xffff &&
	    !rd(arg, &flags, sizeof(flags), cm + l->constmethod_flags) &&
	    (flags & l->constmethod_has_linenumber_table)) {
		out->lines_x = major >= 20 ? 1 : 0;
		out->nlines = copy_lines(rd, arg, cm + l->constmethod_size + code_size, out->lines_x,
					  out->lines);
	}
	return 0;
}

/* One UNSIGNED5 number at t[*at] (at most 5 bytes, within n): 0, or -1. */
static int unsigned5(const __u8 *t, size_t n, size_t *at, __u8 x, __u32 *out)
{
	__u32 sum = 0;

	for (int i = 0, shift = 0; i < 5; i++, shift += 6) {
		__u8 b;

		if (*at >= n)
			return -1;
		b = t[(*at)++];
		if (b < x)
			return -1;
		sum += (__u32)(b - x) << shift;
		if (b < 192 || i == 4) {
			*out = sum;
			return 0;
		}
	}
	return -1;
}

static int signed5(const __u8 *t, size_t n, size_t *at, __u8 x, __u32 *out)
{
	__u32 v;

	if (unsigned5(t, n, at, x, &v))
		return -1;
	*out = (v >> 1) ^ (0u - (v & 1));
	return 0;
}

/* One pair at t[*at]: 1 (read into *db, *dl), 0 (the end byte), -1 (cut). */
static int pair(const __u8 *t, size_t n, size_t *at, __u8 x, __u32 *db, __u32 *dl)
{
	__u8 b;

	if (*at >= n)
		return -1;
	b = t[(*at)++];
	if (b == 0)
		return 0;
	if (b == 0xff)
		return signed5(t, n, at, x, db) || signed5(t, n, at, x, dl) ? -1 : 1;
	*db = b >> 3;
	*dl = b & 7;
	return 1;
}

size_t st_jlines__end(const __u8 *t, size_t n, __u8 x)
{
	size_t at = 0;
	__u32 db, dl;
	int r;

	while ((r = pair(t, n, &at, x, &db, &dl)) > 0)
		;
	return r == 0 ? at : 0;
}

__u32 st_jlines__find(const __u8 *t, size_t n, __u8 x, __u32 bci)
{
	__u32 cur_bci = 0, cur_line = 0, best_bci = 0, best_line = 0;
	size_t at = 0;
	__u32 db, dl;

	/* each pair takes a byte at least: at most n of them */
	while (pair(t, n, &at, x, &db, &dl) > 0) {
		cur_bci += db;
		cur_line += dl;
		if (cur_bci == bci)
			return cur_line;
		if (cur_bci < bci && cur_bci >= best_bci) {
			best_bci = cur_bci;
			best_line = cur_line;
		}
	}
	return best_line;
}

__u32 st_jmethod__line(const struct st_jmethod *m, __u32 bci)
{
	if (!m->nlines || bci >= m->code_size)
		return 0;
	return st_jlines__find(m->lines, m->nlines, m->lines_x, bci);
}

/* pycode.c - code objects, strings and location tables read out of a
 * CPython process (see pycode.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "user/collect/runtimes/python/pycode.h"

#define STATE_KIND(s) (((s) >> ST_PY_STATE_KIND) & 7)
#define STATE_COMPACT(s) (((s) >> ST_PY_STATE_COMPACT) & 1)
#define STATE_ASCII(s) (((s) >> ST_PY_STATE_ASCII) & 1)

/* One code point as UTF-8 into buf (room checked): its length, 0 if no room. */
static size_t put_utf8(char *buf, size_t room, __u32 c)
{
	if (c >= 0x110000 || (c >= 0xd800 && c <= 0xdfff))
		c = '?';	/* lone surrogates (surrogateescape'd file names), junk */
	if (c < 0x80) {
		if (room < 1)
			return 0;
		buf[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		if (room < 2)
			return 0;
		buf[0] = (char)(0xc0 | (c >> 6));
		buf[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		if (room < 3)
			return 0;
		buf[0] = (char)(0xe0 | (c >> 12));
		buf[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		buf[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (room < 4)
		return 0;
	buf[0] = (char)(0xf0 | (c >> 18));
	buf[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	buf[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	buf[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

int st_py_unicode__read(const struct st_py_layout *l, st_py_read_fn rd, void *arg, __u64 addr,
			char *buf, size_t len)
{
	__u64 length = 0, data;
	__u32 state = 0, kind, want;
	__u8 raw[ST_PY_NAME_MAX * 4];
	size_t o = 0;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	if (!addr || addr >= ST_PY_USER_MAX || (addr & 7))
		return -EINVAL;
	if (rd(arg, &length, sizeof(length), addr + l->unicode_length) ||
	    rd(arg, &state, sizeof(state), addr + l->unicode_state))
		return -EFAULT;
	kind = STATE_KIND(state);
	if (length > ST_PY_STR_MAX || !STATE_COMPACT(state) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	if (STATE_ASCII(state) && kind != 1)
		return -EINVAL;
	data = addr + (STATE_ASCII(state) ? l->unicode_ascii_data : l->unicode_compact_data);
	/* at most len - 1 code points can be kept: read no more */
	if (length > len - 1)
		length = len - 1;
	if (length > sizeof(raw) / kind)
		length = sizeof(raw) / kind;
	want = (__u32)length * kind;
	if (want && rd(arg, raw, want, data))
		return -EFAULT;
	for (__u32 i = 0; i < (__u32)length; i++) {
		__u32 c = kind == 1 ? raw[i] :
			  kind == 2 ? (__u32)(raw[2 * i] | raw[2 * i + 1] << 8) :
				      (__u32)raw[4 * i] | (__u32)raw[4 * i + 1] << 8 |
					      (__u32)raw[4 * i + 2] << 16 | (__u32)raw[4 * i + 3] << 24;
		size_t k;

		if (STATE_ASCII(state) && c >= 0x80)
			return -EINVAL;
		if (c == 0)
			c = '?';
		k = put_utf8(buf + o, len - 1 - o, c);
		if (!k)
			break;
		o += k;
	}
	buf[o] = '\0';
	return 0;
}

int st_py_code__read(const struct st_py_layout *l, __u64 code_type, st_py_read_fn rd, void *arg,
		     __u64 addr, struct st_py_code *out)
{
	__u64 typ = 0, qual = 0, file = 0, lt = 0, size = 0;
	__s32 first = 0;
	int r;

	memset(out, 0, sizeof(*out));
	if (!addr || addr >= ST_PY_USER_MAX || (addr & 7))
		return -EINVAL;
	if (rd(arg, &typ, sizeof(typ), addr + l->object_type) ||
	    rd(arg, &qual, sizeof(qual), addr + l->code_qualname) ||
	    rd(arg, &file, sizeof(file), addr + l->code_filename) ||
	    rd(arg, &first, sizeof(first), addr + l->code_firstlineno) ||
	    rd(arg, &lt, sizeof(lt), addr + l->code_linetable))
		return -EFAULT;
	if ((code_type && typ != code_type) || first < 0)
		return -EINVAL;
	r = st_py_unicode__read(l, rd, arg, qual, out->qualname, sizeof(out->qualname));
	if (!r)
		r = st_py_unicode__read(l, rd, arg, file, out->filename, sizeof(out->filename));
	if (r)
		return r;
	out->firstlineno = (__u32)first;
	if (!lt || lt >= ST_PY_USER_MAX || (lt & 7))
		return 0;	/* no table: lines are the first line */
	if (rd(arg, &size, sizeof(size), lt + l->bytes_size)) {
		out->lines_lost = true;
		return 0;
	}
	if (size > ST_PY_LINETABLE_MAX)
		return -EINVAL;
	if (!size)
		return 0;
	out->linetable = malloc(size);
	if (!out->linetable)
		return -ENOMEM;
	if (rd(arg, out->linetable, (__u32)size, lt + l->bytes_data)) {
		st_py_code__release(out);
		out->lines_lost = true;
		return 0;
	}
	out->linetable_len = (__u32)size;
	return 0;
}

void st_py_code__release(struct st_py_code *c)
{
	free(c->linetable);
	c->linetable = NULL;
	c->linetable_len = 0;
}

__u32 st_py_linetable__line(const __u8 *t, size_t n, __u32 firstlineno, __u32 index)
{
	__s64 line = firstlineno;
	__u64 at = 0;	/* first code unit of the entry */
	__u32 p = 0, len = n > UINT32_MAX ? UINT32_MAX : (__u32)n;
	struct st_py_loc e;

	while (p < len) {
		__u32 next = st_py_loc_next(t, 0, len, p, &e);

		if (!next)
			return 0;	/* not an entry's first byte: corrupt */
		line += e.delta;
		if (index < at + e.units)
			return (__u32)st_py_loc_line(e.kind, line);
		at += e.units;
		p = next;
	}
	return 0;
}

__u32 st_py_linetable310__line(const __u8 *t, size_t n, __u32 firstlineno, __u32 index)
{
	__s64 line = firstlineno, cur;
	__u64 end = 0, at = (__u64)index * 2;	/* the table counts bytes */

	for (size_t p = 0; p + 1 < n; p += 2) {
		__u64 start = end;
		__s8 d = (__s8)t[p + 1];

		end += t[p];
		cur = 0;
		if (d != -128)
			cur = line += d;
		if (at >= start && at < end)	/* a range of 0 bytes only moves the line */
			return cur <= 0 || cur > 0x7fffffff ? 0 : (__u32)cur;
	}
	return 0;
}

__u32 st_py_code__line(const struct st_py_layout *l, const __u8 *t, size_t n, __u32 firstlineno,
		       __u32 index)
{
	return l->version < 0x030b ? st_py_linetable310__line(t, n, firstlineno, index) :
				     st_py_linetable__line(t, n, firstlineno, index);
}

long st_py_read_pid(void *arg, void *dst, __u32 n, __u64 addr)
{
	struct iovec l = { dst, n }, r = { (void *)(uintptr_t)addr, n };

	return process_vm_readv(*(pid_t *)arg, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

long st_py_read_snaps(void *arg, void *dst, __u32 n, __u64 addr)
{
	const struct st_py_snaps *sn = arg;
	const struct st_py_event *e = sn->e;
	const __u8 *buf[ST_PY_SNAPS] = { (const __u8 *)e->hdr, e->qual, e->file, e->table };
	const __u32 room[ST_PY_SNAPS] = { sizeof(e->hdr), sizeof(e->qual), sizeof(e->file),
					  sizeof(e->table) };

	for (int i = 0; i < ST_PY_SNAPS; i++) {
		__u32 len = e->len[i] < room[i] ? e->len[i] : room[i];

		if (len && addr >= e->at[i] && addr - e->at[i] <= len && n <= len - (addr - e->at[i])) {
			memcpy(dst, buf[i] + (addr - e->at[i]), n);
			return 0;
		}
	}
	return sn->rd ? sn->rd(sn->arg, dst, n, addr) : -EFAULT;
}

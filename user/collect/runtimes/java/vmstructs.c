/* vmstructs.c - reading HotSpot's VMStructs tables through a reader
 * callback, into a lookup by name (see vmstructs.h).
 *
 * Entries are read a batch at a time (ST_VM_BATCH entries in one read;
 * entry by entry where the batch crosses into unreadable memory), names
 * from whole pages kept while the tables are read (a piece at a time,
 * halving, where a page is not all readable). Names are interned;
 * every entry is one row of an array, indexed by the hash of its kind and
 * names (common/u64map.h, the row's index + 1 as the value).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hash.h"
#include "common/strtab.h"
#include "common/u64map.h"
#include "user/collect/runtimes/java/vmstructs.h"

#define ST_VM_BATCH 64
#define PAGE 4096u

enum kind { K_FIELD, K_TYPE, K_INT, K_LONG };

struct row {
	const char *type, *field;	/* interned; field NULL for types and constants */
	__u64 value;
	__u8 kind;			/* enum kind */
	bool is_static;
};

struct st_vmstructs {
	struct st_strtab *names;
	struct st_u64map *index;
	struct row *rows;
	size_t n, cap;
	struct st_vm_counts counts;
};

static const char *const sym_names[ST_VM_NSYMS] = {
	"gHotSpotVMStructs", "gHotSpotVMTypes", "gHotSpotVMIntConstants", "gHotSpotVMLongConstants",
	"gHotSpotVMStructEntryTypeNameOffset", "gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryTypeStringOffset", "gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset", "gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMTypeEntryTypeNameOffset", "gHotSpotVMTypeEntrySuperclassNameOffset",
	"gHotSpotVMTypeEntryIsOopTypeOffset", "gHotSpotVMTypeEntryIsIntegerTypeOffset",
	"gHotSpotVMTypeEntryIsUnsignedOffset", "gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMTypeEntryArrayStride",
	"gHotSpotVMIntConstantEntryNameOffset", "gHotSpotVMIntConstantEntryValueOffset",
	"gHotSpotVMIntConstantEntryArrayStride",
	"gHotSpotVMLongConstantEntryNameOffset", "gHotSpotVMLongConstantEntryValueOffset",
	"gHotSpotVMLongConstantEntryArrayStride",
};

const char *st_vm_sym_name(int sym)
{
	return sym >= 0 && sym < ST_VM_NSYMS ? sym_names[sym] : NULL;
}

void st_vm_syms__image(__u64 base, __u64 syms[ST_VM_NSYMS])
{
	for (int i = 0; i < ST_VM_NSYMS; i++)
		syms[i] = base + 8 * (__u64)i;
}

/* ---- the lookup ------------------------------------------------------- */

struct key {
	const struct st_vmstructs *v;
	const char *type, *field;
	__u8 kind;
};

static __u64 key_hash(__u8 kind, const char *type, const char *field)
{
	__u64 h = st_hash_mix(st_hash_str(type), kind);

	return field ? st_hash_mix(h, st_hash_str(field)) : h;
}

static bool row_eq(const void *value, const void *key)
{
	const struct key *k = key;
	const struct row *r = &k->v->rows[(uintptr_t)value - 1];

	return r->kind == k->kind && !strcmp(r->type, k->type) &&
	       (r->field && k->field ? !strcmp(r->field, k->field) : r->field == k->field);
}

static const struct row *find(const struct st_vmstructs *v, __u8 kind, const char *type,
			      const char *field)
{
	struct key k = { v, type, field, kind };
	void *i;

	if (!v || !type)
		return NULL;
	i = st_u64map__find(v->index, key_hash(kind, type, field), row_eq, &k);
	return i ? &v->rows[(uintptr_t)i - 1] : NULL;
}

/* Add a row (names already interned); a duplicate is counted as skipped. */
static int add(struct st_vmstructs *v, const struct row *r)
{
	__u64 h = key_hash(r->kind, r->type, r->field);

	if (find(v, r->kind, r->type, r->field)) {
		v->counts.skipped++;
		return 0;
	}
	if (ST_GROW(v->rows, v->cap, v->n, 256))
		return -ENOMEM;
	v->rows[v->n++] = *r;
	if (st_u64map__add(v->index, h, (void *)(uintptr_t)v->n)) {
		v->n--;
		return -ENOMEM;
	}
	return 0;
}

int st_vmstructs__field(const struct st_vmstructs *v, const char *type, const char *field,
			__u64 *value, bool *is_static)
{
	const struct row *r = field ? find(v, K_FIELD, type, field) : NULL;

	if (!r)
		return -ENOENT;
	*value = r->value;
	if (is_static)
		*is_static = r->is_static;
	return 0;
}

int st_vmstructs__type_size(const struct st_vmstructs *v, const char *type, __u64 *size)
{
	const struct row *r = find(v, K_TYPE, type, NULL);

	if (!r)
		return -ENOENT;
	*size = r->value;
	return 0;
}

int st_vmstructs__int(const struct st_vmstructs *v, const char *name, __s32 *value)
{
	const struct row *r = find(v, K_INT, name, NULL);

	if (!r)
		return -ENOENT;
	*value = (__s32)(__u32)r->value;
	return 0;
}

int st_vmstructs__long(const struct st_vmstructs *v, const char *name, __s64 *value)
{
	const struct row *r = find(v, K_LONG, name, NULL);

	if (!r)
		return -ENOENT;
	*value = (__s64)r->value;
	return 0;
}

void st_vmstructs__counts(const struct st_vmstructs *v, struct st_vm_counts *c)
{
	*c = v->counts;
}

size_t st_vmstructs__memory(const struct st_vmstructs *v)
{
	return sizeof(*v) + v->cap * sizeof(*v->rows) + st_strtab__memory(v->names) +
	       st_u64map__memory(v->index);
}

void st_vmstructs__free(struct st_vmstructs *v)
{
	if (!v)
		return;
	st_strtab__free(v->names);
	st_u64map__free(v->index);
	free(v->rows);
	free(v);
}

/* ---- reading ------------------------------------------------------------ */

/* One table's entry layout: where each value is in an entry. */
struct layout {
	__u64 stride;
	__u64 name, field, is_static, value, address;	/* field, is_static,
							 * address: structs only */
	__u8 kind;
};

/* Pages of the process's memory that names were read from: the names
 * of a table lie together (libjvm's .rodata), so that a few pages serve
 * thousands of names in a few reads. */
#define NPAGES 8

struct page {
	__u64 base;
	bool valid;
	__u8 b[PAGE];
};

struct reader {
	st_vm_read_fn rd;
	void *arg;
	struct st_vmstructs *v;
	__u64 bias;
	__u64 last_ptr;		/* the last name read, as a pointer ... */
	const char *last;	/* ... and interned */
	struct page *pages;	/* NPAGES, or NULL: every piece read directly */
	unsigned next;		/* the page replaced next */
	__u64 bad_base;		/* the last page not all readable (+ 1) */
};

static int read_u64(const struct reader *r, __u64 addr, __u64 *out)
{
	return r->rd(r->arg, out, sizeof(*out), addr) ? -EFAULT : 0;
}

/* n bytes at at, all within one page: from the page cache (the page read
 * whole), else read directly. 0 or -EFAULT. */
static int piece(struct reader *r, void *dst, __u32 n, __u64 at)
{
	__u64 base = at - at % PAGE;
	struct page *pg = NULL;

	for (int i = 0; r->pages && i < NPAGES && !pg; i++)
		if (r->pages[i].valid && r->pages[i].base == base)
			pg = &r->pages[i];
	if (!pg && r->pages && r->bad_base != base + 1) {
		pg = &r->pages[r->next];
		pg->valid = r->rd(r->arg, pg->b, PAGE, base) == 0;
		pg->base = base;
		if (pg->valid) {
			r->next = (r->next + 1) % NPAGES;
		} else {
			r->bad_base = base + 1;
			pg = NULL;
		}
	}
	if (pg) {
		memcpy(dst, pg->b + (at - base), n);
		return 0;
	}
	return r->rd(r->arg, dst, n, at) ? -EFAULT : 0;
}

/* The NUL-terminated name at addr, interned; NULL when unreadable or not
 * terminated within ST_VM_NAME_MAX bytes, or on ENOMEM (*err). */
static const char *read_name(struct reader *r, __u64 addr, int *err)
{
	char buf[ST_VM_NAME_MAX];
	__u32 have = 0, size = sizeof(buf);

	if (addr && addr == r->last_ptr)
		return r->last;
	while (have < sizeof(buf)) {
		__u64 at = addr + have;
		__u32 n = PAGE - (__u32)(at % PAGE), left = (__u32)sizeof(buf) - have;
		char *nul;

		if (n > size)
			n = size;
		if (n > left)
			n = left;
		if (at < addr)
			return NULL;
		if (piece(r, buf + have, n, at)) {
			/* the name may end just before unreadable memory:
			 * halve the piece (at most log2(256) more reads) */
			if (n == 1)
				return NULL;
			size = n / 2;
			continue;
		}
		nul = memchr(buf + have, '\0', n);
		if (nul) {
			const char *s = st_strtab__intern_len(r->v->names, buf, (size_t)(nul - buf));

			if (!s) {
				*err = -ENOMEM;
				return NULL;
			}
			r->last_ptr = addr;
			r->last = s;
			return s;
		}
		have += n;
	}
	return NULL;
}

static __u64 get_u64(const __u8 *e, __u64 off)
{
	__u64 v;

	memcpy(&v, e + off, sizeof(v));
	return v;
}

static __u32 get_u32(const __u8 *e, __u64 off)
{
	__u32 v;

	memcpy(&v, e + off, sizeof(v));
	return v;
}

/* One entry e (stride bytes): 1 at the table's end, 0 (kept or skipped),
 * or a negative errno. */
static int entry(struct reader *r, const struct layout *l, const __u8 *e)
{
	__u64 name = get_u64(e, l->name);
	struct row row = { .kind = l->kind };
	int err = 0;

	if (!name)
		return 1;
	row.type = read_name(r, name, &err);
	if (l->kind == K_FIELD) {
		__u64 field = get_u64(e, l->field);

		row.field = row.type && field ? read_name(r, field, &err) : NULL;
		if (!row.field)
			row.type = NULL;
		row.is_static = get_u32(e, l->is_static) != 0;
		row.value = row.is_static ? get_u64(e, l->address) - r->bias : get_u64(e, l->value);
	} else if (l->kind == K_INT) {
		row.value = get_u32(e, l->value);
	} else {
		row.value = get_u64(e, l->value);
	}
	if (err)
		return err;
	if (!row.type) {
		r->v->counts.skipped++;
		return 0;
	}
	return add(r->v, &row);
}

/* The table whose pointer is at sym: every entry up to its end. */
static int table(struct reader *r, __u64 sym, const struct layout *l, size_t *kept)
{
	__u8 buf[ST_VM_BATCH * ST_VM_MAX_STRIDE];
	size_t before = r->v->n;
	__u64 at;
	int res;

	if (read_u64(r, sym, &at))
		return -EFAULT;
	if (!at)
		return -EAGAIN;
	for (__u32 i = 0; i < ST_VM_MAX_ENTRIES; i += ST_VM_BATCH) {
		__u64 base = at + i * l->stride;
		__u32 n = ST_VM_BATCH, len = (__u32)(n * l->stride);
		bool batch;

		if (base < at)
			return -EINVAL;
		batch = r->rd(r->arg, buf, len, base) == 0;
		for (__u32 j = 0; j < n; j++) {
			__u8 *e = buf + j * l->stride;

			if (!batch && r->rd(r->arg, e, (__u32)l->stride, base + j * l->stride))
				return -EFAULT;	/* ends in unreadable memory */
			res = entry(r, l, e);
			if (res < 0)
				return res;
			if (res == 1) {
				*kept = r->v->n - before;
				return 0;
			}
		}
	}
	return -E2BIG;
}

/* The layout values of one table: names[] symbols into out[] (each a
 * field of 8 bytes or less within the stride, the stride last). */
static int layout_of(struct reader *r, const __u64 *syms, const int *which, int n, __u64 *out[],
		     const __u8 *width)
{
	__u64 stride;

	for (int i = 0; i < n; i++) {
		if (!syms[which[i]])
			return -EINVAL;
		if (read_u64(r, syms[which[i]], out[i]))
			return -EFAULT;
	}
	stride = *out[n - 1];
	if (!stride)
		return -EAGAIN;
	if (stride < 8 || stride > ST_VM_MAX_STRIDE)
		return -EINVAL;
	for (int i = 0; i < n - 1; i++)
		if (*out[i] > stride - width[i])
			return -EINVAL;
	return 0;
}

int st_vmstructs__read(const __u64 syms[ST_VM_NSYMS], __u64 bias, st_vm_read_fn rd, void *arg,
		       struct st_vmstructs **out)
{
	struct layout ls = { .kind = K_FIELD }, lt = { .kind = K_TYPE }, li = { .kind = K_INT },
		      ll = { .kind = K_LONG };
	const int ws[] = { ST_VM_SE_TYPE_NAME, ST_VM_SE_FIELD_NAME, ST_VM_SE_IS_STATIC,
			   ST_VM_SE_OFFSET, ST_VM_SE_ADDRESS, ST_VM_SE_STRIDE },
		  wt[] = { ST_VM_TE_TYPE_NAME, ST_VM_TE_SIZE, ST_VM_TE_STRIDE },
		  wi[] = { ST_VM_IC_NAME, ST_VM_IC_VALUE, ST_VM_IC_STRIDE },
		  wl[] = { ST_VM_LC_NAME, ST_VM_LC_VALUE, ST_VM_LC_STRIDE };
	__u64 *os[] = { &ls.name, &ls.field, &ls.is_static, &ls.value, &ls.address, &ls.stride },
	      *ot[] = { &lt.name, &lt.value, &lt.stride }, *oi[] = { &li.name, &li.value, &li.stride },
	      *ol[] = { &ll.name, &ll.value, &ll.stride };
	const __u8 ws_w[] = { 8, 8, 4, 8, 8 }, wt_w[] = { 8, 8 }, wi_w[] = { 8, 4 }, wl_w[] = { 8, 8 };
	struct reader r = { .rd = rd, .arg = arg, .bias = bias };
	struct st_vmstructs *v = NULL;
	int err;

	*out = NULL;
	if ((err = layout_of(&r, syms, ws, 6, os, ws_w)) || (err = layout_of(&r, syms, wt, 3, ot, wt_w)) ||
	    (err = layout_of(&r, syms, wi, 3, oi, wi_w)) || (err = layout_of(&r, syms, wl, 3, ol, wl_w)))
		return err;
	for (int t = ST_VM_STRUCTS; t <= ST_VM_LONG_CONSTS; t++)
		if (!syms[t])
			return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->names = st_strtab__new();
	v->index = st_u64map__new();
	err = -ENOMEM;
	if (!v->names || !v->index)
		goto cleanup;
	r.v = v;
	r.pages = malloc(NPAGES * sizeof(*r.pages));	/* NULL: slower, not wrong */
	for (int i = 0; r.pages && i < NPAGES; i++)
		r.pages[i].valid = false;
	if ((err = table(&r, syms[ST_VM_STRUCTS], &ls, &v->counts.structs)) ||
	    (err = table(&r, syms[ST_VM_TYPES], &lt, &v->counts.types)) ||
	    (err = table(&r, syms[ST_VM_INT_CONSTS], &li, &v->counts.ints)) ||
	    (err = table(&r, syms[ST_VM_LONG_CONSTS], &ll, &v->counts.longs)))
		goto cleanup;
	free(r.pages);
	*out = v;
	return 0;
cleanup:
	free(r.pages);
	st_vmstructs__free(v);
	return err;
}

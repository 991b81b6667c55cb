/* loadmap.c - the PT_LOAD segment a file mapping shows (see loadmap.h). */
#include "binsym/loadmap.h"

#include <errno.h>
#include <gelf.h>

/* How well l fits a mapping at pgoff of permission exec: 0 when it does
 * not hold pgoff; higher is better. */
static int fit(const struct st_load *l, __u64 pgoff, bool exec, __u64 page, __u64 hint)
{
	__u64 first = l->offset & ~(page - 1);
	bool at_hint = hint != ST_LOADMAP_NO_HINT && hint >= (l->vaddr & ~(page - 1)) &&
		       hint < l->vaddr + l->memsz;

	if (pgoff < first || pgoff >= l->offset + l->filesz)
		return 0;
	return 1 + 8 * at_hint + 4 * (l->exec == exec) + 2 * (first == pgoff);
}

const struct st_load *st_loadmap__segment(const struct st_load *loads, size_t n, __u64 pgoff,
					  bool exec, __u64 page, __u64 hint)
{
	const struct st_load *hit = NULL;
	int best = 0;

	for (size_t i = 0; i < n; i++) {
		int f = fit(&loads[i], pgoff, exec, page, hint);

		if (f > best || (f && f == best && loads[i].offset > hit->offset)) {
			hit = &loads[i];
			best = f;
		}
	}
	return hit;
}

int st_loadmap__vaddr(const struct st_load *loads, size_t n, __u64 pgoff, bool exec,
		      __u64 page, __u64 hint, __u64 *vaddr)
{
	const struct st_load *l = st_loadmap__segment(loads, n, pgoff, exec, page, hint);

	if (!l)
		return -ENOENT;
	*vaddr = pgoff + (l->vaddr - l->offset);
	return 0;
}

__u64 st_loadmap__hint(const struct st_load *loads, size_t n, __u64 page, __u64 delta)
{
	const struct st_load *low = NULL;

	for (size_t i = 0; i < n; i++)
		if (!low || loads[i].vaddr < low->vaddr)
			low = &loads[i];
	if (!low || low->offset >= page)
		return ST_LOADMAP_NO_HINT;
	return (low->vaddr & ~(page - 1)) + delta;
}

size_t st_loadmap__read(Elf *elf, struct st_load *out, size_t max)
{
	size_t n = 0, k = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n && k < max; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		out[k++] = (struct st_load){ .offset = ph.p_offset, .vaddr = ph.p_vaddr,
					     .filesz = ph.p_filesz, .memsz = ph.p_memsz,
					     .exec = ph.p_flags & PF_X };
	}
	return k;
}

__u64 st_loadmap__base(const struct st_load *loads, size_t n, __u64 page)
{
	__u64 low = ~0ull;

	for (size_t i = 0; i < n; i++)
		if (loads[i].vaddr < low)
			low = loads[i].vaddr;
	return n ? low & ~(page - 1) : 0;
}

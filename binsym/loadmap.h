/* loadmap.h - which PT_LOAD segment a file mapping of a module shows, and
 * so which ELF address its first byte is: the one rule the unwinder (rows
 * per mapping, user/collect/unwind/unwind_modules.c) and the symbolizer (load bias,
 * binsym/datasym.c) share. A segment's file offset and virtual address
 * may differ by any multiple of the page size (lld's default layout,
 * -z separate-code, BOLT, prelink), and two segments may share a file page
 * (lld packs them: the read-only one ends in the page the executable one
 * starts in), so the mapping's page offset alone does not name the
 * segment: its permission does, then where the segment starts.
 * Owner: binsym/loadmap.c. Pure: no I/O. */
#ifndef STACKTREE_SYMBOLIZER_LOADMAP_H
#define STACKTREE_SYMBOLIZER_LOADMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include <libelf.h>

#include "binsym/elf.h"

#define ST_LOADMAP_NO_HINT (~0ull)

/* Of the n segments loads, the one a mapping at file offset pgoff (a page
 * boundary), executable or not, shows: among the segments whose file range
 * [offset rounded down to page, offset + filesz) holds pgoff, the one
 * whose pages [vaddr rounded down, vaddr + memsz) hold hint (the ELF
 * address the caller expects at the mapping's start, from where the
 * file's first segment is mapped; ST_LOADMAP_NO_HINT: none) first, then
 * those of the mapping's permission, then one that starts in that page (the
 * kernel maps each segment from its own first page), then the later one.
 * Without a hint, two segments of one permission starting in one file page
 * (lld puts a small executable section before .text so) are told apart
 * only by that last rule. page: the page size (a power of two). NULL when
 * no segment holds pgoff. */
const struct st_load *st_loadmap__segment(const struct st_load *loads, size_t n, __u64 pgoff,
					  bool exec, __u64 page, __u64 hint);

/* The ELF address at the first byte of that mapping (pgoff + vaddr -
 * offset of its segment) into *vaddr: 0, or -ENOENT when no segment holds
 * pgoff. */
int st_loadmap__vaddr(const struct st_load *loads, size_t n, __u64 pgoff, bool exec,
		      __u64 page, __u64 hint, __u64 *vaddr);

/* The hint for a mapping delta bytes above the file's mapping at file
 * offset 0 (the loader maps the segment of lowest address there first,
 * the others at their distance from it): that segment's first page's
 * address + delta; ST_LOADMAP_NO_HINT when that segment does not start in
 * the file's first page. */
__u64 st_loadmap__hint(const struct st_load *loads, size_t n, __u64 page, __u64 delta);

/* elf's PT_LOAD segments, at most max, into out: how many. */
size_t st_loadmap__read(Elf *elf, struct st_load *out, size_t max);

/* The base that module-relative addresses count from (the unwinder's rows:
 * 32-bit, so that a prelinked library at 0x3000000000 fits): the lowest
 * segment's address rounded down to a page; 0 for PIE and shared
 * libraries, whose first segment is at 0. */
__u64 st_loadmap__base(const struct st_load *loads, size_t n, __u64 page);

#endif

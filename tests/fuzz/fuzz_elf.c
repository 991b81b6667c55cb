/* fuzz_elf.c - libFuzzer target: ELF symbol loading from a memory image
 * (build id note, .gnu_debuglink, PT_LOADs and where a mapping of the
 * file lands by them (loadmap.c), .symtab/.dynsym function and
 * data symbols, PLT names, a stripped program's _start and main from its
 * entry code and .eh_frame, every FDE start as a guess, section lookups), as the symbolizer does it for any file a
 * user maps, after the layout check every parsed file passes (elflayout.h).
 * Seeds: tests/fuzz/corpus/elf/ (sparse_shnum_10m: the first 8 KiB of
 * issue 23's sparse file, 10 million section headers claimed). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "binsym/debuginfo.h"
#include "binsym/elf.h"
#include "binsym/entry.h"
#include "binsym/loadmap.h"
#include "common/strtab.h"
#include "binsym/symtab.h"
#include "binsym/worklimit.h"

static const char *guess_name(void *ctx, __u64 start)
{
	(void)start;
	return ctx;
}

static void symbols(struct st_elf *e, GElf_Word type, bool data)
{
	struct st_work w = { .max_symbols = 100000 };
	struct st_symtab *t = st_symtab__new();
	struct st_strtab *names = st_strtab__new();

	if (t && names) {
		if (data)
			st_elf__load_data_symbols(e, type, t, names, &w);
		else
			st_elf__load_symbols(e, type, t, names, &w);
		if (!data) {
			st_elf__load_plt_symbols(e, t, names);
			st_entry__load_symbols(e, t, names);
			st_entry__load_fde_guesses(e, t);
		}
		st_symtab__finish(t);
		st_symtab__name_guesses(t, guess_name, "[guess]");
		st_symtab__find(t, 0x1000);
		st_symtab__find(t, 0x401000);
	}
	st_symtab__free(t);
	st_strtab__free(names);
}

/* The ELF address of a mapping at each segment's file page, and at a few
 * other offsets, executable or not, with and without a hint
 * (binsym/loadmap.c: how the unwinder and the symbolizer place a
 * mapping): a segment found holds the offset. */
static void mappings(const struct st_load *loads, size_t n)
{
	static const __u64 page = 4096;
	__u64 offs[8] = { 0, page, 2 * page, 0x200000 }, vaddr;
	size_t k = 4;

	for (size_t i = 0; i < n && k < 8; i++)
		offs[k++] = loads[i].offset & ~(page - 1);
	(void)st_loadmap__base(loads, n, page);
	for (size_t i = 0; i < k; i++)
		for (int exec = 0; exec < 2; exec++) {
			__u64 hint = st_loadmap__hint(loads, n, page, offs[i]);
			const struct st_load *l = st_loadmap__segment(loads, n, offs[i], exec, page, hint);

			if (l && (l < loads || l >= loads + n))
				__builtin_trap();
			(void)st_loadmap__vaddr(loads, n, offs[i], exec, page, ST_LOADMAP_NO_HINT, &vaddr);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char hex[ST_BUILD_ID_HEX_MAX];
	struct st_load *loads = NULL;
	int nloads;
	struct st_elf *e = NULL, *debug = NULL;
	struct st_debug_query q = { .debug_dir = "/nonexistent-debug", .path = "/nonexistent/x",
				    .root_fd = -2 };
	const char *how;

	if (st_elf__open_memory(data, size, &e))
		return 0;
	if (!st_elf__build_id(e, hex))
		q.build_id = hex;
	q.debuglink = st_elf__debuglink(e, &q.crc);
	if (!st_debuginfo__find(&q, &debug, &how))
		st_elf__free(debug);
	if ((nloads = st_elf__loads(e, &loads)) >= 0) {
		mappings(loads, (size_t)nloads);
		free(loads);
	}
	st_elf__has_section_type(e, SHT_SYMTAB);
	st_elf__has_section_named(e, ".debug_info");
	symbols(e, SHT_SYMTAB, false);
	symbols(e, SHT_DYNSYM, false);
	symbols(e, SHT_SYMTAB, true);
	st_elf__free(e);
	return 0;
}

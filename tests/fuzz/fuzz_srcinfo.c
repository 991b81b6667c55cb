/* fuzz_srcinfo.c - libFuzzer target: inlined frames and source lines from
 * the DWARF of an ELF memory image (binsym/srcinfo.c: the CU range
 * table, the pruned walk down a CU to the inline chain at an address, the
 * call lines and the line table, the C++ names composed from DIEs:
 * binsym/dienames.c), as the daemon does for any file a user maps; and the
 * stack variables' table of the same DWARF (binsym/stackvars.c, which
 * --data names page faults on the stack with). Looked up: the start,
 * middle and last byte of the first CU ranges, and a few fixed addresses,
 * each also by a second st_srcinfo that keeps no function (every chain
 * from the DWARF): the two chains must be the same (srcinfo.c's kept
 * functions); a variable at a few CFA offsets of each. Seeds: tests/fuzz/corpus/srcinfo/ (small C++
 * programs with inlining, DWARF 5 from gcc and DWARF 4 from clang). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binsym/elf.h"
#include "binsym/srcinfo.h"
#include "binsym/stackvars.h"

#define MAX_CUS 64

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !__builtin_strcmp(a, b));
}

/* vaddr in si (functions kept) and in dwarf (none kept): the same chain */
static void look(struct st_srcinfo *si, struct st_srcinfo *dwarf, __u64 vaddr)
{
	const struct st_src_frame *f, *g;
	size_t n, ng, len = 0;

	if (st_srcinfo__find(si, vaddr, &f, &n) || st_srcinfo__find(dwarf, vaddr, &g, &ng))
		return;
	if (n != ng)
		__builtin_trap();
	for (size_t i = 0; i < n; i++) {	/* every string is readable */
		len += (f[i].function ? __builtin_strlen(f[i].function) : 0) +
		       (f[i].file ? __builtin_strlen(f[i].file) : 0) + f[i].line;
		if (!same(f[i].function, g[i].function) || !same(f[i].file, g[i].file) ||
		    f[i].line != g[i].line)
			__builtin_trap();
	}
	(void)len;
}

/* The variables at pc: each one found is named within the table. */
static void vars(const struct st_stackvars *t, __u64 pc)
{
	static const __s64 off[] = { -8, -16, -24, -40, -64, -128, -4096, 0, 8 };
	const char *name;
	__u64 at;

	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		if (!st_stackvars__find(t, pc, off[i], &name, &at) && !name)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_stackvars *sv = NULL;
	static __u64 ranges[MAX_CUS][2];
	struct st_srcinfo *si = NULL, *dwarf = NULL;
	struct st_elf *e = NULL;
	Dwarf *dw;
	size_t n;

	if (st_elf__open_memory(data, size, &e))
		return 0;
	dw = dwarf_begin_elf(st_elf__elf(e), DWARF_C_READ, NULL);
	if (dw && !st_srcinfo__over(dw, &si) && !st_srcinfo__over(dw, &dwarf)) {
		st_srcinfo__keep(dwarf, false);
		n = st_srcinfo__cus(si, ranges, MAX_CUS);
		for (size_t i = 0; i < n && i < MAX_CUS; i++) {
			look(si, dwarf, ranges[i][0]);
			look(si, dwarf, ranges[i][0] + (ranges[i][1] - ranges[i][0]) / 2);
			look(si, dwarf, ranges[i][1] - 1);
		}
		look(si, dwarf, 0);
		look(si, dwarf, 0x1000);
		look(si, dwarf, 0x401000);
		look(si, dwarf, ranges[0][0]);	/* again: from the cache */
		if (!st_stackvars__build(dw, EM_X86_64, &sv)) {
			if (st_stackvars__count(sv) > ST_STACKVARS_MAX)
				__builtin_trap();
			for (size_t i = 0; i < n && i < MAX_CUS; i++) {
				vars(sv, ranges[i][0]);
				vars(sv, ranges[i][0] + (ranges[i][1] - ranges[i][0]) / 2);
			}
		}
	}
	st_stackvars__free(sv);
	st_srcinfo__free(si);
	st_srcinfo__free(dwarf);
	if (dw)
		dwarf_end(dw);
	st_elf__free(e);
	return 0;
}

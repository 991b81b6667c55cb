/* unwind_tables.h - one module's DWARF CFI (.eh_frame, else .debug_frame)
 * compiled into the BPF unwinder's rows (struct st_unwind_row in
 * bpf/stacktree.h): sorted by pc, one row where the CFA rule or rbp's rule
 * changes, ST_UNW_NONE rows over gaps without CFI. CFI is read with libdw
 * (dwarf_next_cfi to list the FDEs); the rules of the programs compilers
 * emit are read by user/collect/unwind/cfi_eval.c, the others by libdw
 * (dwarf_cfi_addrframe), with the same rows.
 * Forms the BPF side does not evaluate become ST_UNW_UNSUPPORTED rows.
 * Owner: user/collect/unwind/unwind_tables.c. x86-64 only. */
#ifndef STACKTREE_UNWIND_TABLES_H
#define STACKTREE_UNWIND_TABLES_H

#include <stddef.h>
#include <libelf.h>
#include <linux/types.h>

#include "stacktree.h"

struct st_unwind_table;

struct st_unwind_table_info {
	const char *source;	/* ".eh_frame" or ".debug_frame" */
	size_t fdes;		/* FDEs read */
	size_t rows;		/* rows after merging */
	size_t unsupported;	/* ST_UNW_UNSUPPORTED rows */
	size_t libdw_fdes;	/* FDEs run by libdw (forms user/collect/unwind/cfi_eval.c does not read) */
	__u64 base;		/* the rows' pcs are ELF addresses - base (binsym/loadmap.h's
				 * st_loadmap__base(): 0 for PIE and shared libraries) */
};

/* Compile elf's CFI. -ENOENT: the module has no CFI; -ENOEXEC: not an
 * x86-64 ELF; -E2BIG: more than ST_UNWIND_MAX_MODULE_ROWS rows or code
 * more than 4 GiB above the base (or below it); -EINVAL: malformed CFI. */
int st_unwind_table__from_elf(Elf *elf, struct st_unwind_table **out);
/* The same with every FDE's rows from libdw (dwarf_cfi_addrframe() per
 * row), not user/collect/unwind/cfi_eval.c: the reference, ~5x slower. */
int st_unwind_table__from_elf_libdw(Elf *elf, struct st_unwind_table **out);
/* The same for an ELF file (an fd is not kept). */
int st_unwind_table__from_file(const char *path, struct st_unwind_table **out);
void st_unwind_table__free(struct st_unwind_table *t);

const struct st_unwind_row *st_unwind_table__rows(const struct st_unwind_table *t, size_t *n);
/* The row covering ELF address vaddr (the BPF binary search, at vaddr -
 * base), or NULL before the first row. */
const struct st_unwind_row *st_unwind_table__find(const struct st_unwind_table *t, __u64 vaddr);
void st_unwind_table__info(const struct st_unwind_table *t, struct st_unwind_table_info *out);

#endif

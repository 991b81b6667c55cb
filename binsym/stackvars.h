/* stackvars.h - a module's local variables and parameters that live in the
 * stack frame, from DWARF (private).
 *
 * Built once per module: every DW_TAG_variable / DW_TAG_formal_parameter
 * of a function with code whose location is the single operation
 * DW_OP_fbreg N, as a plain expression or as an entry of a location list
 * (other operations and registers are skipped), becomes an entry (pc range,
 * offset from the CFA, size, scope depth, name). The function's
 * DW_AT_frame_base must be DW_OP_call_frame_cfa (gcc) or, on x86-64 with a
 * frame pointer, DW_OP_reg6 / DW_OP_breg6 N (clang: rbp = CFA - 16, true
 * after the prologue); functions with any other frame base are skipped.
 * Inlined subroutines and lexical blocks are inner scopes. The table holds
 * names (interned) and no DWARF: the Dwarf handle can be closed after.
 */
#ifndef STACKTREE_SYMBOLIZER_STACKVARS_H
#define STACKTREE_SYMBOLIZER_STACKVARS_H

#include <stddef.h>
#include <elfutils/libdw.h>
#include <linux/types.h>

struct st_stackvars;

/* At most this many entries per module (~48 bytes each); the rest of the
 * module's variables are then not named. */
#define ST_STACKVARS_MAX (1u << 18)

/* Build the table of dw (machine: the ELF's e_machine). 0 with *out (maybe
 * empty), or -ENOMEM. */
int st_stackvars__build(Dwarf *dw, int machine, struct st_stackvars **out);
void st_stackvars__free(struct st_stackvars *t);

/* The variable whose storage covers CFA + cfa_offset at ELF vaddr pc: the
 * innermost scope wins, then the smallest variable. 0 with *name (valid
 * until free) and *offset into it, or -ENOENT. */
int st_stackvars__find(const struct st_stackvars *t, __u64 pc, __s64 cfa_offset,
		       const char **name, __u64 *offset);

size_t st_stackvars__count(const struct st_stackvars *t);
size_t st_stackvars__memory(const struct st_stackvars *t);

#endif

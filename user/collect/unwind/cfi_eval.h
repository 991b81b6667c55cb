/* cfi_eval.h - runs one FDE's DWARF CFI program (after its CIE's initial
 * instructions) for the forms x86-64 compilers emit, and reports the
 * rules of the CFA, rip, rbp and rbx at every row: the fast path of
 * user/collect/unwind/unwind_tables.c, which asks libdw (dwarf_cfi_addrframe, one call per
 * row) only for the programs this returns -EOPNOTSUPP for. Row boundaries
 * are libdw's: one row per positive advance, the last one up to the FDE's
 * end. Work is linear in the program's length; no allocation.
 * Owner: user/collect/unwind/cfi_eval.c. */
#ifndef STACKTREE_CFI_EVAL_H
#define STACKTREE_CFI_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum st_cfi_how {
	ST_CFI_SAME,		/* same value */
	ST_CFI_UNDEF,		/* undefined */
	ST_CFI_AT_CFA,		/* saved at CFA + val */
	ST_CFI_OTHER,		/* any other rule (val_offset, ...) */
};

struct st_cfi_rule {
	__u8 how;		/* enum st_cfi_how */
	__s64 val;
};

struct st_cfi_state {
	__u64 cfa_reg;		/* CFA = cfa_reg + cfa_off */
	__s64 cfa_off;
	struct st_cfi_rule rip, rbp, rbx;
};

/* Read a ULEB128 at *p (advanced past it): 0, or -EINVAL when it runs
 * past end or over 64 bits. */
int st_cfi_uleb(const __u8 **p, const __u8 *end, __u64 *v);

/* A CIE as read by libdw (dwarf_next_cfi). */
struct st_cfi_cie {
	const __u8 *init, *init_end;	/* initial instructions */
	__u64 code_align;
	__s64 data_align;
	__u64 ra_reg;
	const char *augmentation;
};

/* Called once per row (pc ascending, pc < end); non-zero stops the run. */
typedef int (*st_cfi_emit_fn)(void *ctx, __u64 pc, const struct st_cfi_state *s);

/* Run the FDE [start, end) with program [prog, prog_end) of cie. Returns
 * 0, what emit returned, or -EOPNOTSUPP before any emit when the CIE or
 * the program uses a form not read here (expressions, set_loc, register
 * rules, signal frames, other alignment factors, a restore_state without
 * its remember_state, states nested deeper than 16). */
int st_cfi_eval(const struct st_cfi_cie *cie, const __u8 *prog, const __u8 *prog_end,
		__u64 start, __u64 end, st_cfi_emit_fn emit, void *ctx);

#endif

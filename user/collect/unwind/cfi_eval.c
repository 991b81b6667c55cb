/* cfi_eval.c - the CFI programs of x86-64 compilers run without libdw
 * (see cfi_eval.h). */
#include "user/collect/unwind/cfi_eval.h"

#include <dwarf.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#define REG_RBX 3
#define REG_RBP 6
#define REG_RIP 16
#define MAX_DEPTH 16		/* remember_state nesting (gcc: 1) */
#define UNSET 0xff		/* rule not set by the CIE yet */

struct run {
	const struct st_cfi_state *cie;	/* NULL while running the CIE */
	struct st_cfi_state s, stack[MAX_DEPTH];
	unsigned depth;
	__s64 data_align;
};

int st_cfi_uleb(const __u8 **p, const __u8 *end, __u64 *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		__u8 b = *(*p)++;

		*v |= (__u64)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return 0;
	}
	return -EINVAL;
}

static int sleb(const __u8 **p, const __u8 *end, __s64 *v)
{
	unsigned shift = 0;
	__u64 r = 0;

	while (*p < end && shift < 64) {
		__u8 b = *(*p)++;

		r |= (__u64)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				r |= ~0ull << shift;
			*v = (__s64)r;
			return 0;
		}
	}
	return -EOPNOTSUPP;
}

/* v * data alignment, wrapping as libdw's unsigned arithmetic does (a
 * crafted operand must not overflow a signed product). */
static __s64 factored(__u64 v, __s64 align)
{
	return (__s64)(v * (__u64)align);
}

static struct st_cfi_rule *rule_of(struct st_cfi_state *s, __u64 reg)
{
	return reg == REG_RIP ? &s->rip : reg == REG_RBP ? &s->rbp :
	       reg == REG_RBX ? &s->rbx : NULL;
}

static void set_rule(struct run *r, __u64 reg, __u8 how, __s64 val)
{
	struct st_cfi_rule *rule = rule_of(&r->s, reg);

	/* libdw keeps a register rule's offset in 61 bits (a bit-field) */
	if (rule)
		*rule = (struct st_cfi_rule){ .how = how,
					      .val = (__s64)((__u64)val << 3) >> 3 };
}

/* DW_CFA_restore: the rule the CIE left. */
static int restore(struct run *r, __u64 reg)
{
	struct st_cfi_rule *rule = rule_of(&r->s, reg);

	if (!r->cie)
		return -EOPNOTSUPP;
	if (rule)
		*rule = reg == REG_RIP ? r->cie->rip : reg == REG_RBP ? r->cie->rbp : r->cie->rbx;
	return 0;
}

static int fixed(const __u8 **p, const __u8 *end, size_t size, __u64 *v)
{
	if ((size_t)(end - *p) < size)
		return -EOPNOTSUPP;
	*v = 0;
	memcpy(v, *p, size);	/* little endian */
	*p += size;
	return 0;
}

/* One instruction: *advance set by the advance_loc forms (else 0). */
static int step(struct run *r, const __u8 **p, const __u8 *end, __u64 *advance)
{
	__u8 op = *(*p)++;
	__u64 reg, u;
	__s64 s;

	*advance = 0;
	switch (op >> 6) {
	case 1:
		if (!r->cie)
			return -EOPNOTSUPP;
		*advance = op & 0x3f;
		return 0;
	case 2:
		if (st_cfi_uleb(p, end, &u))
			return -EOPNOTSUPP;
		set_rule(r, op & 0x3f, ST_CFI_AT_CFA, factored(u, r->data_align));
		return 0;
	case 3:
		return restore(r, op & 0x3f);
	}
	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_advance_loc1:
	case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4:
		if (!r->cie)
			return -EOPNOTSUPP;
		return fixed(p, end, op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4,
			     advance);
	case DW_CFA_GNU_args_size:
		return st_cfi_uleb(p, end, &u) ? -EOPNOTSUPP : 0;
	case DW_CFA_remember_state:
		if (!r->cie || r->depth == MAX_DEPTH)
			return -EOPNOTSUPP;
		r->stack[r->depth++] = r->s;
		return 0;
	case DW_CFA_restore_state:
		if (!r->cie || !r->depth)
			return -EOPNOTSUPP;
		r->s = r->stack[--r->depth];
		return 0;
	case DW_CFA_def_cfa:
		if (st_cfi_uleb(p, end, &reg) || st_cfi_uleb(p, end, &u))
			return -EOPNOTSUPP;
		r->s.cfa_reg = reg;
		r->s.cfa_off = (__s64)u;
		return 0;
	case DW_CFA_def_cfa_sf:
		if (st_cfi_uleb(p, end, &reg) || sleb(p, end, &s))
			return -EOPNOTSUPP;
		r->s.cfa_reg = reg;
		r->s.cfa_off = factored((__u64)s, r->data_align);
		return 0;
	case DW_CFA_def_cfa_register:
		if (st_cfi_uleb(p, end, &reg) || r->s.cfa_reg == UINT64_MAX)
			return -EOPNOTSUPP;
		r->s.cfa_reg = reg;
		return 0;
	case DW_CFA_def_cfa_offset:
		if (st_cfi_uleb(p, end, &u) || r->s.cfa_reg == UINT64_MAX)
			return -EOPNOTSUPP;
		r->s.cfa_off = (__s64)u;
		return 0;
	case DW_CFA_def_cfa_offset_sf:
		if (sleb(p, end, &s) || r->s.cfa_reg == UINT64_MAX)
			return -EOPNOTSUPP;
		r->s.cfa_off = factored((__u64)s, r->data_align);
		return 0;
	case DW_CFA_offset_extended:
		if (st_cfi_uleb(p, end, &reg) || st_cfi_uleb(p, end, &u))
			return -EOPNOTSUPP;
		set_rule(r, reg, ST_CFI_AT_CFA, factored(u, r->data_align));
		return 0;
	case DW_CFA_offset_extended_sf:
		if (st_cfi_uleb(p, end, &reg) || sleb(p, end, &s))
			return -EOPNOTSUPP;
		set_rule(r, reg, ST_CFI_AT_CFA, factored((__u64)s, r->data_align));
		return 0;
	case DW_CFA_GNU_negative_offset_extended:
		if (st_cfi_uleb(p, end, &reg) || st_cfi_uleb(p, end, &u))
			return -EOPNOTSUPP;
		set_rule(r, reg, ST_CFI_AT_CFA, (__s64)(0 - (__u64)factored(u, r->data_align)));
		return 0;
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
		if (st_cfi_uleb(p, end, &reg) || (op == DW_CFA_val_offset ? st_cfi_uleb(p, end, &u) :
					   sleb(p, end, &s)))
			return -EOPNOTSUPP;
		set_rule(r, reg, ST_CFI_OTHER, 0);
		return 0;
	case DW_CFA_restore_extended:
		if (st_cfi_uleb(p, end, &reg))
			return -EOPNOTSUPP;
		return restore(r, reg);
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		if (st_cfi_uleb(p, end, &reg))
			return -EOPNOTSUPP;
		set_rule(r, reg, op == DW_CFA_undefined ? ST_CFI_UNDEF : ST_CFI_SAME, 0);
		return 0;
	default:	/* set_loc, register, the expressions: libdw's */
		return -EOPNOTSUPP;
	}
}

/* "" or 'z' then each of 'P', 'L', 'R' at most once: no signal frame
 * 'S', nothing libdw might read otherwise. */
static bool plain_augmentation(const char *a)
{
	unsigned seen = 0;

	if (!a || !*a)
		return a != NULL;
	if (*a++ != 'z')
		return false;
	for (; *a; a++) {
		const char *c = strchr("PLR", *a);
		unsigned bit = c ? 1u << (c - "PLR") : 0;

		if (!bit || (seen & bit))
			return false;
		seen |= bit;
	}
	return true;
}

/* The state after the CIE's initial instructions (on top of the x86-64
 * ABI's: rbp and rbx keep their values), or -EOPNOTSUPP. */
static int run_cie(const struct st_cfi_cie *cie, struct run *r)
{
	const __u8 *p = cie->init;
	__u64 adv;

	memset(r, 0, sizeof(*r));
	r->data_align = cie->data_align;
	r->s.cfa_reg = UINT64_MAX;
	r->s.rip.how = UNSET;
	r->s.rbp.how = ST_CFI_SAME;
	r->s.rbx.how = ST_CFI_SAME;
	if (cie->code_align != 1 || cie->data_align != -8 || cie->ra_reg != REG_RIP ||
	    !plain_augmentation(cie->augmentation))
		return -EOPNOTSUPP;
	while (p < cie->init_end)
		if (step(r, &p, cie->init_end, &adv))
			return -EOPNOTSUPP;
	return r->s.cfa_reg == UINT64_MAX || r->s.rip.how == UNSET ? -EOPNOTSUPP : 0;
}

/* emit NULL: only check that every instruction is read here. */
static int run_fde(struct run *r, const struct st_cfi_state *cie_s, const __u8 *p,
		   const __u8 *end, __u64 loc, __u64 fde_end, st_cfi_emit_fn emit, void *ctx)
{
	__u64 adv;
	int err;

	r->s = *cie_s;
	r->cie = cie_s;
	r->depth = 0;
	while (p < end) {
		if (step(r, &p, end, &adv))
			return -EOPNOTSUPP;
		if (!adv || !emit)
			continue;
		if ((err = emit(ctx, loc, &r->s)))
			return err;
		if (adv >= fde_end - loc)	/* the next row starts at or past the end */
			return 0;
		loc += adv;
	}
	return emit ? emit(ctx, loc, &r->s) : 0;
}

int st_cfi_eval(const struct st_cfi_cie *cie, const __u8 *prog, const __u8 *prog_end,
		__u64 start, __u64 end, st_cfi_emit_fn emit, void *ctx)
{
	struct st_cfi_state cie_s;
	struct run r;
	int err;

	if (start >= end || run_cie(cie, &r))
		return -EOPNOTSUPP;
	cie_s = r.s;
	err = run_fde(&r, &cie_s, prog, prog_end, start, end, NULL, NULL);
	if (err)
		return err;
	return run_fde(&r, &cie_s, prog, prog_end, start, end, emit, ctx);
}

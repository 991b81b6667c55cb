/* unwind_tables.c - DWARF CFI to BPF unwinder rows (see unwind_tables.h). */
#include "user/collect/unwind/unwind_tables.h"

#include "user/collect/unwind/cfi_eval.h"
#include "user/collect/unwind/unwind_go.h"

#include "binsym/loadmap.h"
#include "binsym/safeopen.h"
#include "common/grow.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REG_RBP 6
#define REG_RSP 7
#define REG_R10 10
#define REG_RBX 3
#define REG_RIP 16
/* struct rt_sigframe on x86-64: at __restore_rt, rsp points at the ucontext;
 * uc_mcontext.gregs[] starts at 40 (kernel ABI) */
#define UC_RBP (40 + 10 * 8)
#define UC_RSP (40 + 15 * 8)
#define UC_RIP (40 + 16 * 8)

struct st_unwind_table {
	struct st_unwind_row *rows;
	size_t nrows, cap;
	size_t steps;	/* CFI rows read from libdw, before merging */
	__u64 base;	/* rows' pcs count from here (info.base) */
	struct st_unwind_table_info info;
};

/* A module may need at most this many rows (the BPF search's depth), and
 * its CFI may make at most MAX_STEPS of libdw's rows before merging: a
 * crafted FDE over gigabytes with a row per byte ends here, not in hours
 * of work or gigabytes of memory. */
#define MAX_STEPS (4 * (size_t)ST_UNWIND_MAX_MODULE_ROWS)

struct cie {
	Dwarf_Off offset;
	__u8 enc;		/* FDE pointer encoding */
	bool z;			/* 'z' augmentation: FDEs have augmentation data */
	struct st_cfi_cie eval;	/* for user/collect/unwind/cfi_eval.c */
};

struct fde {
	__u64 start, end;
	const __u8 *prog, *prog_end;	/* its CFI program */
	struct st_cfi_cie cie;
	__u8 enc;			/* its CIE's pointer encoding */
};

struct cfi_src {
	Elf_Data *data;
	__u64 addr;		/* sh_addr of the section (pcrel base) */
	bool eh;		/* .eh_frame (pointer encodings) or .debug_frame */
	Dwarf_CFI *cfi;
	Dwarf *dw;		/* .debug_frame only */
	const char *name;
};

/* ---- rows ---------------------------------------------------------------- */

static bool same_rules(const struct st_unwind_row *a, const struct st_unwind_row *b)
{
	return a->kind == b->kind && a->rbp == b->rbp && a->off == b->off;
}

/* Append the row r at ELF address pc (r->pc is set from it, relative to
 * the base); rows with the rules of the previous one are merged into it,
 * a row at the previous one's pc replaces it (an empty range). */
static int push_row(struct st_unwind_table *t, __u64 pc, const struct st_unwind_row *rule)
{
	struct st_unwind_row *last = t->nrows ? &t->rows[t->nrows - 1] : NULL;
	struct st_unwind_row one = *rule, *r = &one;

	one.pc = (__u32)(pc - t->base);	/* from_elf() checked the range */
	if (last && last->pc == r->pc) {
		t->nrows--;
		last = t->nrows ? &t->rows[t->nrows - 1] : NULL;
	}
	if (++t->steps > MAX_STEPS)
		return -E2BIG;
	if (last && same_rules(last, r))
		return 0;
	if (t->nrows >= ST_UNWIND_MAX_MODULE_ROWS)
		return -E2BIG;
	if (ST_GROW(t->rows, t->cap, t->nrows, 1024))
		return -ENOMEM;
	t->rows[t->nrows++] = *r;
	return 0;
}

static struct st_unwind_row row(__u64 pc, __u8 kind, int rbp, int off)
{
	return (struct st_unwind_row){ .pc = (__u32)pc, .kind = kind, .rbp = (__s8)rbp,
				       .off = (__s16)off };
}

/* ---- one frame's rules ---------------------------------------------------- */

static bool is_op(const Dwarf_Op *op, __u8 atom)
{
	return op->atom == atom;
}

/* The .plt expression: rsp + N + ((rip & 15) >= K ? 8 : 0). */
static bool plt_expr(const Dwarf_Op *o, size_t n, __s64 *off, __u64 *k)
{
	if (n != 9 || !is_op(&o[0], DW_OP_breg7) || !is_op(&o[1], DW_OP_breg16) ||
	    o[1].number != 0 || !is_op(&o[2], DW_OP_lit15) || !is_op(&o[3], DW_OP_and) ||
	    o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit15 || !is_op(&o[5], DW_OP_ge) ||
	    !is_op(&o[6], DW_OP_lit3) || !is_op(&o[7], DW_OP_shl) || !is_op(&o[8], DW_OP_plus))
		return false;
	*off = (__s64)o[0].number;
	*k = o[4].atom - DW_OP_lit0;
	return true;
}

/* Address rule "at CFA + off" (libdw: call_frame_cfa [plus_uconst off]). */
static bool at_cfa(const Dwarf_Op *o, size_t n, __s64 *off)
{
	if (n == 1 && is_op(&o[0], DW_OP_call_frame_cfa)) {
		*off = 0;
		return true;
	}
	if (n == 2 && is_op(&o[0], DW_OP_call_frame_cfa) && is_op(&o[1], DW_OP_plus_uconst)) {
		*off = (__s64)o[1].number;
		return true;
	}
	return false;
}

/* Address rule "at breg + off" (DW_CFA_expression: DW_OP_bregN off; libdw
 * pushes the CFA first, as DWARF says, which the expression ignores). */
static bool at_breg(const Dwarf_Op *o, size_t n, __u8 breg, __s64 *off)
{
	if (n == 2 && is_op(&o[0], DW_OP_call_frame_cfa)) {
		o++;
		n--;
	}
	if (n != 1 || !is_op(&o[0], breg))
		return false;
	*off = (__s64)o[0].number;
	return true;
}

static bool slot8(__s64 off, int *out)
{
	if (off % 8 || off / 8 <= ST_UNW_RBP_UNKNOWN || off / 8 > 127)
		return false;
	*out = (int)(off / 8);
	return true;
}

/* rbp's rule: unchanged, saved at CFA + 8k, saved at rbp + 8k, or unknown. */
static void rbp_rule(Dwarf_Frame *f, struct st_unwind_row *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	__s64 off;
	int k;

	r->rbp = ST_UNW_RBP_UNKNOWN;
	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &n))
		return;
	if (n == 0) {
		if (!ops)	/* same value */
			r->rbp = ST_UNW_RBP_SAME;
		return;
	}
	if (at_cfa(ops, n, &off) && off && slot8(off, &k)) {
		r->rbp = (__s8)k;
	} else if (at_breg(ops, n, DW_OP_breg6, &off) && slot8(off, &k)) {
		r->rbp = (__s8)k;
		r->kind |= ST_UNW_F_RBP_AT_RBP;
	}
}

/* rbx's rule into r->kind's ST_UNW_RBX_* bits, once its rbp rule is set:
 * unchanged (same), saved at CFA + off (at), or anything else. Only where
 * it is kept in one of the three places the walk reads (bpf/stacktree.h);
 * elsewhere a frame above whose CFA is rbx-based stops the walk. */
static void set_rbx(struct st_unwind_row *r, bool same, bool at, __s64 off)
{
	__u8 rule = ST_UNW_RBX_LOST;

	if (same)
		rule = ST_UNW_RBX_SAME;
	else if (at && !(r->kind & ST_UNW_F_RBP_AT_RBP) && r->rbp != ST_UNW_RBP_SAME &&
		 r->rbp != ST_UNW_RBP_UNKNOWN && off == (__s64)r->rbp * 8 - 8)
		rule = ST_UNW_RBX_BELOW_RBP;
	else if (at && off == -16)
		rule = ST_UNW_RBX_CFA16;
	r->kind = (__u8)((r->kind & ~(3u << ST_UNW_RBX_SHIFT)) | rule << ST_UNW_RBX_SHIFT);
}

static void rbx_rule(Dwarf_Frame *f, struct st_unwind_row *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	__s64 off = 0;
	bool at;

	if (dwarf_frame_register(f, REG_RBX, mem, &ops, &n)) {
		set_rbx(r, false, false, 0);
		return;
	}
	/* same value (ops NULL) or undefined: both read as unchanged. libdw's
	 * x86-64 ABI rules (elfutils backends/x86_64_cfi.c) name register 0,
	 * not rbx (3), callee-saved, so every rbx without a rule of its FDE is
	 * "undefined" there; compilers state no other undefined rbx (cfi_eval.c
	 * reads it the same way: its rows and libdw's agree) */
	if (n == 0) {
		set_rbx(r, true, false, 0);
		return;
	}
	at = at_cfa(ops, n, &off);
	set_rbx(r, false, at, off);
}

/* sigreturn trampoline (CIE "S", glibc's __restore_rt): CFA = *(rsp + 160),
 * rip at rsp + 168, rbp at rsp + 120 */
static __u8 signal_rule(Dwarf_Frame *f, const Dwarf_Op *cfa, size_t ncfa)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	__s64 off;

	if (ncfa != 2 || !is_op(&cfa[0], DW_OP_breg7) || cfa[0].number != UC_RSP ||
	    !is_op(&cfa[1], DW_OP_deref))
		return ST_UNW_UNSUPPORTED;
	if (dwarf_frame_register(f, REG_RIP, mem, &ops, &n) ||
	    !at_breg(ops, n, DW_OP_breg7, &off) || off != UC_RIP)
		return ST_UNW_UNSUPPORTED;
	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &n) ||
	    !at_breg(ops, n, DW_OP_breg7, &off) || off != UC_RBP)
		return ST_UNW_UNSUPPORTED;
	return ST_UNW_SIGNAL;
}

/* The CFA offset into r->off (scaled by 8 past 32 KiB): kind, or
 * ST_UNW_UNSUPPORTED when it does not fit. */
static __u8 set_off(struct st_unwind_row *r, __u8 kind, __s64 off)
{
	if (off >= INT16_MIN && off <= INT16_MAX) {
		r->off = (__s16)off;
		return kind;
	}
	if (off % 8 == 0 && off / 8 >= INT16_MIN && off / 8 <= INT16_MAX) {
		r->off = (__s16)(off / 8);
		return kind | ST_UNW_F_OFF8;
	}
	return ST_UNW_UNSUPPORTED;
}

static struct st_unwind_row frame_row(Dwarf_Frame *f, __u64 pc, bool signal, int ra_reg)
{
	struct st_unwind_row r = row(pc, ST_UNW_UNSUPPORTED, ST_UNW_RBP_SAME, 0);
	Dwarf_Op mem[3], *ops, *cfa;
	size_t n, ncfa;
	__s64 off;
	__u64 k;

	if (ra_reg != REG_RIP || dwarf_frame_cfa(f, &cfa, &ncfa) || !ncfa)
		return r;
	if (signal) {
		r.kind = signal_rule(f, cfa, ncfa);
		return r;
	}
	if (dwarf_frame_register(f, REG_RIP, mem, &ops, &n))
		return r;
	if (n == 0) {		/* return address undefined: the outermost frame */
		r.kind = ops ? ST_UNW_END : ST_UNW_UNSUPPORTED;
		return r;
	}
	if (!at_cfa(ops, n, &off) || off != -8)
		return r;
	if (ncfa == 1 && is_op(&cfa[0], DW_OP_bregx) && (cfa[0].number == REG_RSP ||
	    cfa[0].number == REG_RBP || cfa[0].number == REG_R10 || cfa[0].number == REG_RBX)) {
		off = (__s64)cfa[0].number2;
		r.kind = cfa[0].number == REG_RSP ? ST_UNW_RSP :
			 cfa[0].number == REG_RBP ? ST_UNW_RBP :
			 cfa[0].number == REG_R10 ? ST_UNW_R10 : ST_UNW_RBX;
	} else if (ncfa == 2 && is_op(&cfa[0], DW_OP_breg6) && is_op(&cfa[1], DW_OP_deref)) {
		off = (__s64)cfa[0].number;
		r.kind = ST_UNW_DEREF_RBP;
	} else if (plt_expr(cfa, ncfa, &off, &k)) {
		r.kind = set_off(&r, ST_UNW_PLT, off);
		r.rbp = (__s8)k;	/* rbp is unchanged in the .plt */
		return r;
	} else {
		return r;
	}
	r.kind = set_off(&r, r.kind, off);
	if (r.kind != ST_UNW_UNSUPPORTED) {
		rbp_rule(f, &r);
		rbx_rule(f, &r);
	}
	return r;
}

/* The row of a state from user/collect/unwind/cfi_eval.c: what frame_row() makes of the
 * same rules read through libdw. */
static struct st_unwind_row state_row(__u64 pc, const struct st_cfi_state *s)
{
	struct st_unwind_row r = row(pc, ST_UNW_UNSUPPORTED, ST_UNW_RBP_SAME, 0);
	const struct st_cfi_rule *rbp = &s->rbp;
	__u8 kind;
	int k;

	if (s->rip.how == ST_CFI_UNDEF) {
		r.kind = ST_UNW_END;
		return r;
	}
	if (s->rip.how != ST_CFI_AT_CFA || s->rip.val != -8)
		return r;
	switch (s->cfa_reg) {
	case REG_RSP: kind = ST_UNW_RSP; break;
	case REG_RBP: kind = ST_UNW_RBP; break;
	case REG_R10: kind = ST_UNW_R10; break;
	case REG_RBX: kind = ST_UNW_RBX; break;
	default: return r;
	}
	r.kind = set_off(&r, kind, s->cfa_off);
	if (r.kind == ST_UNW_UNSUPPORTED)
		return r;
	r.rbp = rbp->how == ST_CFI_SAME ? ST_UNW_RBP_SAME : ST_UNW_RBP_UNKNOWN;
	if (rbp->how == ST_CFI_AT_CFA && rbp->val && slot8(rbp->val, &k))
		r.rbp = (__s8)k;
	set_rbx(&r, s->rbx.how == ST_CFI_SAME || s->rbx.how == ST_CFI_UNDEF,
		s->rbx.how == ST_CFI_AT_CFA, s->rbx.val);
	return r;
}

static int emit_row(void *ctx, __u64 pc, const struct st_cfi_state *s)
{
	struct st_unwind_row r = state_row(pc, s);

	return push_row(ctx, pc, &r);
}

/* ---- FDE list -------------------------------------------------------------- */

/* Decode a DW_EH_PE_* encoded pointer at *p (pcrel against the section's
 * address when with_app). */
static int read_encoded(const struct cfi_src *s, const __u8 **p, const __u8 *end, __u8 enc,
			bool with_app, __u64 *v)
{
	const __u8 *at = *p;
	size_t size;
	__u64 raw = 0;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: size = 8; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: size = 2; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: size = 4; break;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: size = 8; break;
	case DW_EH_PE_uleb128:
		if (with_app && (enc & 0x70))
			return -EINVAL;
		return st_cfi_uleb(p, end, v);
	default:
		return -EINVAL;
	}
	if ((size_t)(end - at) < size)
		return -EINVAL;
	memcpy(&raw, at, size);	/* little endian */
	if ((enc & 0x08) && size < 8 && (raw >> (size * 8 - 1)))
		raw |= ~0ull << (size * 8);	/* sign extend */
	*p = at + size;
	*v = raw;
	if (!with_app)
		return 0;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		return 0;
	case DW_EH_PE_pcrel:
		*v += s->addr + (__u64)(at - (const __u8 *)s->data->d_buf);
		return 0;
	default:
		return -EINVAL;
	}
}

/* The largest DWARF register number a CFI program may name: x86-64's go up
 * to 66 (mxcsr, fcw, fsw). libdw sizes its register-rule array by the
 * largest number it meets, so a crafted DW_CFA_offset_extended of register
 * 2^28 would make it allocate and clear gigabytes: such modules are refused
 * before libdw runs their programs. */
#define MAX_CFI_REG 127

/* Read a CFI program's operands far enough to see every register number. */
static int screen_program(const struct cfi_src *s, const __u8 *p, const __u8 *end, __u8 enc)
{
	__u64 reg, v;

	while (p < end) {
		__u8 op = *p++;

		if (op >> 6 == 1)	/* advance_loc */
			continue;
		if (op >> 6 == 2) {	/* offset: register in the low bits, offset */
			if (st_cfi_uleb(&p, end, &v))
				return -EINVAL;
			continue;
		}
		if (op >> 6 == 3)	/* restore */
			continue;
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_remember_state:
		case DW_CFA_restore_state:
			break;
		case DW_CFA_set_loc:
			if (read_encoded(s, &p, end, enc, false, &v))
				return -EINVAL;
			break;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			v = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;
			if ((size_t)(end - p) < v)
				return -EINVAL;
			p += v;
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			if (st_cfi_uleb(&p, end, &v))
				return -EINVAL;
			break;
		case DW_CFA_def_cfa_expression:
			if (st_cfi_uleb(&p, end, &v) || v > (__u64)(end - p))
				return -EINVAL;
			p += v;
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			if (st_cfi_uleb(&p, end, &reg) || reg > MAX_CFI_REG)
				return -EINVAL;
			break;
		case DW_CFA_register:
			if (st_cfi_uleb(&p, end, &reg) || reg > MAX_CFI_REG ||
			    st_cfi_uleb(&p, end, &reg) || reg > MAX_CFI_REG)
				return -EINVAL;
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			if (st_cfi_uleb(&p, end, &reg) || reg > MAX_CFI_REG || st_cfi_uleb(&p, end, &v))
				return -EINVAL;
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (st_cfi_uleb(&p, end, &reg) || reg > MAX_CFI_REG ||
			    st_cfi_uleb(&p, end, &v) || v > (__u64)(end - p))
				return -EINVAL;
			p += v;
			break;
		default:	/* unknown: libdw refuses it too */
			return -EINVAL;
		}
	}
	return 0;
}

/* The FDE pointer encoding from a CIE's augmentation ("zPLR..."). */
static __u8 cie_fde_encoding(const struct cfi_src *s, const Dwarf_CIE *c)
{
	const __u8 *p = c->augmentation_data, *end = p + c->augmentation_data_size;
	__u64 dummy;

	if (!s->eh || c->augmentation[0] != 'z')
		return DW_EH_PE_absptr;
	for (const char *a = c->augmentation + 1; *a && p < end; a++) {
		__u8 enc;

		switch (*a) {
		case 'R':
			return *p;
		case 'L':
			p++;
			break;
		case 'P':
			enc = *p++;
			if (read_encoded(s, &p, end, enc & 0x7f, false, &dummy))
				return DW_EH_PE_omit;
			break;
		default:
			break;
		}
	}
	return DW_EH_PE_absptr;
}

static int cmp_fde(const void *pa, const void *pb)
{
	const struct fde *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* CIEs are listed in section order, so by increasing offset: a binary
 * search (a linear one made a crafted .eh_frame of many CIEs quadratic). */
static const struct cie *find_cie(const struct cie *cies, size_t n, Dwarf_Off offset)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cies[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && cies[lo].offset == offset ? &cies[lo] : NULL;
}

static int list_fdes(const struct cfi_src *s, const unsigned char *ident, struct fde **out,
		     size_t *nout)
{
	struct cie *cies = NULL;
	struct fde *fdes = NULL;
	size_t ncies = 0, nfdes = 0, ccap = 0, fcap = 0;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int err = 0, r;

	while ((r = dwarf_next_cfi(ident, s->data, s->eh, off, &next, &e)) == 0) {
		if (dwarf_cfi_cie_p(&e)) {
			if (ncies == ccap) {
				struct cie *n = realloc(cies, (ccap = ccap ? 2 * ccap : 16) * sizeof(*n));

				if (!n) {
					err = -ENOMEM;
					goto cleanup;
				}
				cies = n;
			}
			cies[ncies++] = (struct cie){ .offset = off, .enc = cie_fde_encoding(s, &e.cie),
						      .z = e.cie.augmentation[0] == 'z',
						      .eval = {
							.init = e.cie.initial_instructions,
							.init_end = e.cie.initial_instructions_end,
							.code_align = e.cie.code_alignment_factor,
							.data_align = e.cie.data_alignment_factor,
							.ra_reg = e.cie.return_address_register,
							.augmentation = e.cie.augmentation } };
			if (screen_program(s, e.cie.initial_instructions,
					   e.cie.initial_instructions_end, cies[ncies - 1].enc)) {
				err = -EINVAL;
				goto cleanup;
			}
		} else {
			const __u8 *p = e.fde.start;
			__u8 enc = DW_EH_PE_omit;
			__u64 start, len;

			const struct cie *c = find_cie(cies, ncies, e.fde.CIE_pointer);
			__u64 aug = 0;

			if (c)
				enc = c->enc;
			if (enc == DW_EH_PE_omit || read_encoded(s, &p, e.fde.end, enc, true, &start) ||
			    read_encoded(s, &p, e.fde.end, enc & 0x0f, false, &len) ||
			    (c->z && (st_cfi_uleb(&p, e.fde.end, &aug) ||
				      aug > (__u64)(e.fde.end - p))) ||
			    screen_program(s, p + aug, e.fde.end, enc)) {
				err = -EINVAL;
				goto cleanup;
			}
			if (start + len < start) {	/* wraps: no such code */
				err = -EINVAL;
				goto cleanup;
			}
			if (len && start) {	/* zero: a discarded function's FDE */
				if (nfdes == fcap) {
					struct fde *n = realloc(fdes, (fcap = fcap ? 2 * fcap : 256) *
								      sizeof(*n));

					if (!n) {
						err = -ENOMEM;
						goto cleanup;
					}
					fdes = n;
				}
				fdes[nfdes++] = (struct fde){ .start = start, .end = start + len,
							      .prog = p + aug, .prog_end = e.fde.end,
							      .cie = c->eval, .enc = enc };
			}
		}
		if (next == (Dwarf_Off)-1)
			break;
		off = next;
	}
	if (r < 0) {
		err = -EINVAL;
		goto cleanup;
	}
	if (nfdes)
		qsort(fdes, nfdes, sizeof(*fdes), cmp_fde);
	*out = fdes;
	*nout = nfdes;
	fdes = NULL;
cleanup:
	free(cies);
	free(fdes);
	return err;
}

/* ---- compile ------------------------------------------------------------- */

static int compile_fde(struct st_unwind_table *t, const struct cfi_src *s, __u64 start,
		       __u64 end)
{
	__u64 a = start;
	int err;

	while (a < end) {
		Dwarf_Frame *f = NULL;
		Dwarf_Addr fs, fe;
		struct st_unwind_row r;
		bool signal = false;
		int ra;

		if (dwarf_cfi_addrframe(s->cfi, a, &f)) {
			/* unreadable rules: the rest of this FDE is unsupported */
			return push_row(t, a, &(struct st_unwind_row){ .kind = ST_UNW_UNSUPPORTED });
		}
		ra = dwarf_frame_info(f, &fs, &fe, &signal);
		r = frame_row(f, a, signal, ra);
		err = push_row(t, a, &r);
		free(f);
		if (err)
			return err;
		a = fe > a && fe <= end ? fe : end;
	}
	return 0;
}

static int find_section(Elf *elf, const char *name, Elf_Data **data, __u64 *addr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			*data = elf_getdata(scn, NULL);
			*addr = sh.sh_addr;
			return *data && (*data)->d_size ? 0 : -ENOENT;
		}
	}
	return -ENOENT;
}

static int open_cfi(Elf *elf, struct cfi_src *s)
{
	memset(s, 0, sizeof(*s));
	if (!find_section(elf, ".eh_frame", &s->data, &s->addr)) {
		s->eh = true;
		s->name = ".eh_frame";
		s->cfi = dwarf_getcfi_elf(elf);
		return s->cfi ? 0 : -ENOENT;
	}
	if (!find_section(elf, ".debug_frame", &s->data, &s->addr)) {
		s->name = ".debug_frame";
		s->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		s->cfi = s->dw ? dwarf_getcfi(s->dw) : NULL;
		return s->cfi ? 0 : -ENOENT;
	}
	return -ENOENT;
}

static void close_cfi(struct cfi_src *s)
{
	if (s->dw)
		dwarf_end(s->dw);	/* owns the .debug_frame CFI */
	else if (s->cfi)
		dwarf_cfi_end(s->cfi);
}

#define ENTRY_END_MAX 128	/* bytes of entry code without CFI taken as the outermost frame */

/* The ELF entry point is where the kernel starts a process, with no return
 * address and rbp 0: the outermost frame by definition. Where no FDE covers
 * it (the dynamic loader's _start and _dl_start_user), a range without
 * rules (prog NULL) from it to the next FDE, at most ENTRY_END_MAX bytes,
 * is added to the sorted *fdes: an ST_UNW_END row there, so that a sample
 * in that code is a complete stack, not one cut short. 0 or -ENOMEM. */
static int entry_end(Elf *elf, struct fde **fdes, size_t *n)
{
	__u64 entry, end;
	struct fde *f;
	GElf_Ehdr eh;
	size_t i;

	if (!gelf_getehdr(elf, &eh) || !(entry = eh.e_entry))
		return 0;
	for (i = 0; i < *n && (*fdes)[i].start <= entry; i++)
		if (entry < (*fdes)[i].end)
			return 0;	/* it has CFI */
	end = i < *n && (*fdes)[i].start - entry < ENTRY_END_MAX ? (*fdes)[i].start
								: entry + ENTRY_END_MAX;
	if (!(f = realloc(*fdes, (*n + 1) * sizeof(*f))))
		return -ENOMEM;
	memmove(&f[i + 1], &f[i], (*n - i) * sizeof(*f));
	f[i] = (struct fde){ .start = entry, .end = end };
	*fdes = f;
	(*n)++;
	return 0;
}

static int go_rule(void *ctx, __u64 pc, __u8 kind, int rbp, __s64 off)
{
	struct st_unwind_table *t = ctx;
	struct st_unwind_row r = row(0, kind, rbp, 0);

	/* rows hold 32-bit pcs from the module's base (from_elf()) */
	if (pc < t->base || pc - t->base > UINT32_MAX)
		return -E2BIG;
	r.kind = set_off(&r, kind, off);
	/* Go's ABI saves no register for its caller: rbx is not known above */
	if ((r.kind & ST_UNW_KIND_MASK) != ST_UNW_NONE && r.kind != ST_UNW_UNSUPPORTED)
		set_rbx(&r, false, false, 0);
	return push_row(t, pc, &r);
}

/* A module without CFI that has Go's function table: its rows from the
 * stack depths there (user/collect/unwind/unwind_go.h). */
static int go_table(Elf *elf, struct st_unwind_table **out)
{
	struct st_unwind_table *t;
	struct st_load loads[16];
	Elf_Data *pcln, *text;
	__u64 addr, text_addr;
	int err;

	if (find_section(elf, ST_GOPCLN_SECTION, &pcln, &addr) &&
	    find_section(elf, ST_GOPCLN_SECTION_PIE, &pcln, &addr))
		return -ENOENT;
	if (find_section(elf, ".text", &text, &text_addr))
		text_addr = 0;
	if (!(t = calloc(1, sizeof(*t))))
		return -ENOMEM;
	t->info.source = ".gopclntab";
	t->base = t->info.base =
		st_loadmap__base(loads, st_loadmap__read(elf, loads, sizeof(loads) / sizeof(loads[0])),
				 4096);
	err = st_unwind_go__rules(pcln->d_buf, pcln->d_size, text_addr, go_rule, t,
				  &t->info.fdes);
	if (!err && !t->nrows)
		err = -ENOENT;
	if (err) {
		st_unwind_table__free(t);
		return err;
	}
	t->info.rows = t->nrows;
	*out = t;
	return 0;
}

/* libdw_only: every FDE through dwarf_cfi_addrframe() (the reference the
 * tests compare user/collect/unwind/cfi_eval.c's rows with). */
static int from_elf(Elf *elf, bool libdw_only, struct st_unwind_table **out)
{
	struct st_load loads[16];
	size_t nloads;
	struct st_unwind_table *t = NULL;
	struct fde *fdes = NULL;
	size_t nfdes = 0;
	__u64 covered = 0;
	struct cfi_src s;
	GElf_Ehdr eh;
	const char *ident;
	int err;

	*out = NULL;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    !(ident = elf_getident(elf, NULL)))
		return -ENOEXEC;
	err = open_cfi(elf, &s);
	if (err == -ENOENT)	/* Go's own code has none: its table */
		return go_table(elf, out);
	if (err)
		goto cleanup;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto cleanup;
	}
	t->info.source = s.name;
	err = list_fdes(&s, (const unsigned char *)ident, &fdes, &nfdes);
	if (err)
		goto cleanup;
	if (!nfdes) {
		err = -ENOENT;
		goto cleanup;
	}
	t->info.fdes = nfdes;
	if ((err = entry_end(elf, &fdes, &nfdes)))
		goto cleanup;
	/* rows hold 32-bit pcs from the module's base: every FDE must lie
	 * within 4 GiB above it (sorted by start, the last one does not always
	 * end last) */
	nloads = st_loadmap__read(elf, loads, sizeof(loads) / sizeof(loads[0]));
	t->base = t->info.base = st_loadmap__base(loads, nloads, 4096);
	for (size_t i = 0; i < nfdes; i++)
		if (fdes[i].start < t->base || fdes[i].end - t->base > UINT32_MAX) {
			err = -E2BIG;
			goto cleanup;
		}
	for (size_t i = 0; i < nfdes && !err; i++) {
		/* overlapping FDEs: the earlier one wins */
		__u64 start = fdes[i].start > covered ? fdes[i].start : covered;
		bool mine;

		if (start >= fdes[i].end)
			continue;
		if (covered && start > covered)	/* a gap without CFI */
			err = push_row(t, covered, &(struct st_unwind_row){ 0 });
		if (!fdes[i].prog) {	/* entry_end()'s */
			if (!err)
				err = push_row(t, start, &(struct st_unwind_row){ .kind = ST_UNW_END });
			covered = fdes[i].end;
			continue;
		}
		/* a whole FDE no other overlaps: libdw would find it for
		 * each of its rows, and cfi_eval.c gives the same rules */
		mine = !libdw_only && start == fdes[i].start && !(fdes[i].enc & DW_EH_PE_indirect) &&
		       (i + 1 == nfdes || fdes[i + 1].start >= fdes[i].end);
		if (!err && mine)
			err = st_cfi_eval(&fdes[i].cie, fdes[i].prog, fdes[i].prog_end, start,
					  fdes[i].end, emit_row, t);
		if ((!err && !mine) || err == -EOPNOTSUPP) {
			t->info.libdw_fdes++;
			err = compile_fde(t, &s, start, fdes[i].end);
		}
		covered = fdes[i].end;
	}
	if (!err)
		err = push_row(t, covered, &(struct st_unwind_row){ 0 });
	if (err)
		goto cleanup;
	if (t->nrows > ST_UNWIND_MAX_MODULE_ROWS) {
		err = -E2BIG;
		goto cleanup;
	}
	for (size_t i = 0; i < t->nrows; i++)
		t->info.unsupported += (t->rows[i].kind & ST_UNW_KIND_MASK) == ST_UNW_UNSUPPORTED;
	t->info.rows = t->nrows;
	*out = t;
	t = NULL;
cleanup:
	free(fdes);
	if (s.cfi || s.dw)
		close_cfi(&s);
	st_unwind_table__free(t);
	return err;
}

int st_unwind_table__from_elf(Elf *elf, struct st_unwind_table **out)
{
	return from_elf(elf, false, out);
}

int st_unwind_table__from_elf_libdw(Elf *elf, struct st_unwind_table **out)
{
	return from_elf(elf, true, out);
}

int st_unwind_table__from_file(const char *path, struct st_unwind_table **out)
{
	int fd, err;
	Elf *elf;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	fd = st_safe_open(path, NULL, NULL);	/* a bounded regular file */
	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	err = elf ? st_unwind_table__from_elf(elf, out) : -ENOEXEC;
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

void st_unwind_table__free(struct st_unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

const struct st_unwind_row *st_unwind_table__rows(const struct st_unwind_table *t, size_t *n)
{
	*n = t->nrows;
	return t->rows;
}

const struct st_unwind_row *st_unwind_table__find(const struct st_unwind_table *t, __u64 vaddr)
{
	size_t lo = 0, hi = t->nrows;
	__u64 pc = vaddr - t->base;

	if (vaddr < t->base)
		return NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}

void st_unwind_table__info(const struct st_unwind_table *t, struct st_unwind_table_info *out)
{
	*out = t->info;
}

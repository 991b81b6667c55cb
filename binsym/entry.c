/* entry.c - names from the entry point and the CFI's function starts, for
 * code the symbol table does not name: see entry.h. */
#include "binsym/entry.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>

#include "binsym/elf.h"
#include "common/strtab.h"
#include "binsym/symtab.h"

#define ENTRY_SCAN 64	/* bytes of _start looked at for main's address */

/* How the kernel treats the image's entry point (e_entry). */
enum entry_kind {
	ENTRY_NONE,	/* a shared library: e_entry means nothing at run time */
	ENTRY_PROGRAM,	/* ET_EXEC, or ET_DYN with PT_INTERP: _start calls main */
	ENTRY_SELF,	/* ET_DYN without PT_INTERP nor DT_NEEDED: the dynamic
			 * loader itself or a static-pie program, entered by
			 * the kernel at _start (glibc's ld.so: RTLD_START) */
};

/* Whether the image names other libraries it needs (DT_NEEDED), from its
 * PT_DYNAMIC segment's section. */
static bool needs_libraries(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Dyn dyn;
	Elf_Data *d;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		if (!(d = elf_getdata(scn, NULL)))
			return true;	/* unreadable: not ours to name */
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == DT_NEEDED)
				return true;
		}
	}
	return false;
}

static enum entry_kind entry_kind(Elf *elf, GElf_Ehdr *eh)
{
	size_t i, n;
	GElf_Phdr ph;

	if (!gelf_getehdr(elf, eh) || !eh->e_entry)
		return ENTRY_NONE;
	if (eh->e_type == ET_EXEC)
		return ENTRY_PROGRAM;
	if (eh->e_type != ET_DYN || elf_getphdrnum(elf, &n))
		return ENTRY_NONE;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return ENTRY_PROGRAM;
	return needs_libraries(elf) ? ENTRY_NONE : ENTRY_SELF;
}

/* .eh_frame_hdr's search table: the start of every function with CFI,
 * sorted (GNU ld, gold and lld write it as DW_EH_PE_datarel | sdata4
 * pairs, relative to the section; other encodings are not read). */
struct fn_starts {
	const unsigned char *table;	/* (start, fde) pairs of 2 x 4 bytes */
	size_t count;
	__u64 base;			/* the section's address */
};

#define EH_PE_SDATA4_DATAREL 0x3b

static bool fn_starts_open(struct st_elf *e, struct fn_starts *fs)
{
	Elf_Scn *scn = st_elf__section_named(e, ".eh_frame_hdr", NULL);
	const unsigned char *h;
	GElf_Shdr sh;
	Elf_Data *d;
	__u32 count;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
		return false;
	d = elf_getdata(scn, NULL);
	h = d ? d->d_buf : NULL;
	/* version 1; eh_frame_ptr and fde_count as 4-byte values */
	if (!h || d->d_size < 12 || h[0] != 1 || (h[1] & 0x07) != 0x03 ||
	    (h[2] & 0x07) != 0x03 || h[3] != EH_PE_SDATA4_DATAREL)
		return false;
	memcpy(&count, h + 8, sizeof(count));
	if (count > (d->d_size - 12) / 8)
		return false;
	*fs = (struct fn_starts){ .table = h + 12, .count = count, .base = sh.sh_addr };
	return true;
}

static __u64 fn_start(const struct fn_starts *fs, size_t i)
{
	__s32 v;

	memcpy(&v, fs->table + 8 * i, sizeof(v));
	return fs->base + (__s64)v;
}

/* The SHT_PROGBITS section (executable when exec) that holds addr: true,
 * *end its end, and its bytes from addr on (*p, *avail; NULL and 0 when
 * the file has none there). */
static bool section_at(Elf *elf, __u64 addr, bool exec, __u64 *end, const unsigned char **p,
		       size_t *avail)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    (exec && !(sh.sh_flags & SHF_EXECINSTR)) || addr < sh.sh_addr ||
		    addr - sh.sh_addr >= sh.sh_size)
			continue;
		*end = sh.sh_addr + sh.sh_size;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr >= d->d_size) {
			*p = NULL;
			*avail = 0;
		} else {
			*p = (const unsigned char *)d->d_buf + (addr - sh.sh_addr);
			*avail = d->d_size - (addr - sh.sh_addr);
		}
		return true;
	}
	return false;
}

/* The address range length of the FDE at p (avail bytes of its section
 * from there on), at fde_addr, when it describes the function at addr
 * with 4-byte pc_begin (pcrel) and pc_range fields (as compilers write it
 * for x86-64): 0 when not so. */
static __u64 fde_length_at(const unsigned char *p, size_t avail, __u64 fde_addr, __u64 addr)
{
	__u32 len, range;
	__s32 begin;

	if (!p || avail < 16)
		return 0;
	memcpy(&len, p, 4);
	memcpy(&begin, p + 8, 4);
	memcpy(&range, p + 12, 4);
	if (len < 12 || len == 0xffffffffu || fde_addr + 8 + (__s64)begin != addr)
		return 0;
	return range;
}

static __u64 fde_length(Elf *elf, __u64 fde_addr, __u64 addr)
{
	const unsigned char *p;
	size_t avail;
	__u64 end;

	if (!section_at(elf, fde_addr, false, &end, &p, &avail))
		return 0;
	return fde_length_at(p, avail, fde_addr, addr);
}

/* A function with CFI starts at addr: 0, with the start of the next one
 * (or 0: none) and its FDE's length (0: unknown), else -ENOENT; with
 * any_code, also 0 for code without CFI there (length unknown). */
static int function_at(Elf *elf, const struct fn_starts *fs, __u64 addr, bool any_code,
		       __u64 *next, __u64 *len)
{
	size_t lo = 0, hi = fs->count, mid;
	__s32 fde;

	while (lo < hi) {	/* first entry above addr */
		mid = lo + (hi - lo) / 2;
		if (fn_start(fs, mid) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || fn_start(fs, lo - 1) != addr) {
		if (!any_code)
			return -ENOENT;
		*next = lo < fs->count ? fn_start(fs, lo) : 0;
		*len = 0;
		return 0;
	}
	*next = lo < fs->count ? fn_start(fs, lo) : 0;
	memcpy(&fde, fs->table + 8 * (lo - 1) + 4, sizeof(fde));
	*len = fde_length(elf, fs->base + (__s64)fde, addr);
	return 0;
}

/* Up to max bytes of the executable section holding addr: how many; *end:
 * the section's end (0 when no such section). */
static size_t code_at(Elf *elf, __u64 addr, unsigned char *buf, size_t max, __u64 *end)
{
	const unsigned char *p;
	size_t n;

	*end = 0;
	if (!section_at(elf, addr, true, end, &p, &n) || !p)
		return 0;
	n = n < max ? n : max;
	memcpy(buf, p, n);
	return n;
}

/* main's address in _start's first bytes (code, n bytes at addr), or 0:
 * the first `lea rel32(%rip), %rdi` (48 8d 3d) or `mov $imm32, %rdi`
 * (48 c7 c7). */
static __u64 main_from_start(const unsigned char *code, size_t n, __u64 addr)
{
	size_t i;
	__s32 v;

	for (i = 0; i + 7 <= n; i++) {
		if (code[i] != 0x48 || (code[i + 1] != 0x8d && code[i + 1] != 0xc7) ||
		    code[i + 2] != (code[i + 1] == 0x8d ? 0x3d : 0xc7))
			continue;
		memcpy(&v, code + i + 3, sizeof(v));
		if (code[i + 1] == 0x8d)
			return addr + i + 7 + (__s64)v;
		return v > 0 ? (__u64)v : 0;
	}
	return 0;
}

/* A function at addr: its FDE's range, else up to the next function or
 * its section's end. Without CFI at addr (any_code: glibc's ld.so's
 * _start, assembly with no FDE), up to the next function. */
static int add_function(Elf *elf, const struct fn_starts *fs, struct st_symtab *t,
			struct st_strtab *names, __u64 addr, bool any_code, const char *name,
			unsigned char *code, size_t *ncode)
{
	__u64 next, end, len;
	const char *s;
	size_t n;

	if (function_at(elf, fs, addr, any_code, &next, &len))
		return -ENOENT;
	n = code_at(elf, addr, code, ENTRY_SCAN, &end);
	if (!end)
		return -ENOENT;	/* not in an executable section */
	if (next && next > addr && next < end)
		end = next;
	if (len && len < end - addr)	/* the FDE's own range: crt code without CFI
					 * may follow _start */
		end = addr + len;
	if (ncode)
		*ncode = n < end - addr ? n : (size_t)(end - addr);
	if (!(s = st_strtab__add(names, name, strlen(name))))
		return -ENOMEM;
	return st_symtab__add(t, addr, end - addr, s, NULL, ST_BIND_LOCAL);
}

int st_entry__load_symbols(struct st_elf *e, struct st_symtab *t, struct st_strtab *names)
{
	Elf *elf = st_elf__elf(e);
	unsigned char code[ENTRY_SCAN];
	struct fn_starts fs;
	__u64 main_addr;
	enum entry_kind kind;
	GElf_Ehdr eh;
	size_t n = 0;
	int err;

	if (!elf || !(kind = entry_kind(elf, &eh)) || !fn_starts_open(e, &fs))
		return 0;
	if ((err = add_function(elf, &fs, t, names, eh.e_entry, kind == ENTRY_SELF, "_start",
				code, &n)))
		return err == -ENOMEM ? err : 0;
	if (kind != ENTRY_PROGRAM)	/* ld.so's _start calls _dl_start, not main */
		return 1;
	main_addr = main_from_start(code, n, eh.e_entry);
	if (!main_addr)
		return 1;
	err = add_function(elf, &fs, t, names, main_addr, false, "main", code, NULL);
	return err == -ENOMEM ? err : err ? 1 : 2;
}

int st_entry__load_fde_guesses(struct st_elf *e, struct st_symtab *t)
{
	Elf *elf = st_elf__elf(e);
	const unsigned char *eh = NULL;
	__u64 eh_addr = 0, eh_end = 0;
	struct fn_starts fs;
	size_t avail = 0;
	int err;

	if (!elf || !fn_starts_open(e, &fs))
		return 0;
	for (size_t i = 0; i < fs.count; i++) {
		__u64 start = fn_start(&fs, i), fde_addr, len = 0;
		__s32 fde;

		memcpy(&fde, fs.table + 8 * i + 4, sizeof(fde));
		fde_addr = fs.base + (__s64)fde;
		/* the FDEs are in one section (.eh_frame): found once */
		if ((fde_addr < eh_addr || fde_addr >= eh_end) &&
		    section_at(elf, fde_addr, false, &eh_end, &eh, &avail))
			eh_addr = fde_addr;
		if (eh && fde_addr >= eh_addr && fde_addr - eh_addr < avail)
			len = fde_length_at(eh + (fde_addr - eh_addr), avail - (fde_addr - eh_addr),
					    fde_addr, start);
		if ((err = st_symtab__add_guess(t, start, len)))
			return err;
	}
	return (int)(fs.count < INT32_MAX ? fs.count : INT32_MAX);
}

/* mkelf.h - writes a minimal x86-64 ELF file (ET_DYN, no program headers)
 * whose only content is an .eh_frame section at a given address: for tests
 * and fuzz targets of the CFI compiler that need hostile or arbitrary CFI
 * bytes in a file it can open. Header-only, libelf. */
#ifndef STACKTREE_TESTS_MKELF_H
#define STACKTREE_TESTS_MKELF_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A section of n bytes at addr; its index, or 0 on a libelf error. */
static inline size_t mkelf_section(Elf *e, GElf_Word name, GElf_Word type, GElf_Xword flags,
				   uint64_t addr, const void *bytes, size_t n, size_t align)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d = scn ? elf_newdata(scn) : NULL;
	GElf_Shdr sh;

	if (!d || !gelf_getshdr(scn, &sh))
		return 0;
	d->d_buf = (void *)bytes;
	d->d_size = n;
	d->d_type = ELF_T_BYTE;
	d->d_align = align;
	sh.sh_name = name;
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addr = addr;
	sh.sh_addralign = align;
	return gelf_update_shdr(scn, &sh) ? elf_ndxscn(scn) : 0;
}

/* 0 on success, -1 on a libelf error. fd: open for writing, truncated. */
static inline int mkelf_eh_frame(int fd, const void *bytes, size_t n, uint64_t addr)
{
	static const char shstr[] = "\0.eh_frame\0.shstrtab";
	Elf *e = NULL;
	GElf_Ehdr eh;
	size_t strndx;
	int err = -1;

	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_WRITE, NULL)) ||
	    !gelf_newehdr(e, ELFCLASS64) || !gelf_getehdr(e, &eh))
		goto cleanup;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	if (!gelf_update_ehdr(e, &eh) ||
	    !mkelf_section(e, 1, SHT_PROGBITS, SHF_ALLOC, addr, bytes, n, 8) ||
	    !(strndx = mkelf_section(e, 11, SHT_STRTAB, 0, 0, shstr, sizeof(shstr), 1)) ||
	    !gelf_getehdr(e, &eh))
		goto cleanup;
	eh.e_shstrndx = (GElf_Half)strndx;
	if (!gelf_update_ehdr(e, &eh) || elf_update(e, ELF_C_WRITE) < 0)
		goto cleanup;
	err = 0;
cleanup:
	if (e)
		elf_end(e);
	return err;
}

#endif

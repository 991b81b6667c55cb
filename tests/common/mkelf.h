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

/* 0 on success, -1 on a libelf error. fd: open for writing, truncated. */
static inline int mkelf_eh_frame(int fd, const void *bytes, size_t n, uint64_t addr)
{
	static const char shstr[] = "\0.eh_frame\0.shstrtab";
	Elf *e = NULL;
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	int err = -1;

	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_WRITE, NULL)) ||
	    !gelf_newehdr(e, ELFCLASS64) || !gelf_getehdr(e, &eh))
		goto cleanup;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	if (!gelf_update_ehdr(e, &eh))
		goto cleanup;
	/* .eh_frame */
	if (!(scn = elf_newscn(e)) || !(d = elf_newdata(scn)))
		goto cleanup;
	d->d_buf = (void *)bytes;
	d->d_size = n;
	d->d_type = ELF_T_BYTE;
	d->d_align = 8;
	if (!gelf_getshdr(scn, &sh))
		goto cleanup;
	sh.sh_name = 1;
	sh.sh_type = SHT_PROGBITS;
	sh.sh_flags = SHF_ALLOC;
	sh.sh_addr = addr;
	sh.sh_addralign = 8;
	if (!gelf_update_shdr(scn, &sh))
		goto cleanup;
	/* .shstrtab */
	if (!(scn = elf_newscn(e)) || !(d = elf_newdata(scn)))
		goto cleanup;
	d->d_buf = (void *)shstr;
	d->d_size = sizeof(shstr);
	d->d_type = ELF_T_BYTE;
	d->d_align = 1;
	if (!gelf_getshdr(scn, &sh))
		goto cleanup;
	sh.sh_name = 11;
	sh.sh_type = SHT_STRTAB;
	if (!gelf_update_shdr(scn, &sh) || !gelf_getehdr(e, &eh))
		goto cleanup;
	eh.e_shstrndx = (GElf_Half)elf_ndxscn(scn);
	if (!gelf_update_ehdr(e, &eh))
		goto cleanup;
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto cleanup;
	err = 0;
cleanup:
	if (e)
		elf_end(e);
	return err;
}

#endif

/* vdso.c - locating this process's vDSO: the same kernel's image that every
 * other process of this ABI maps as [vdso]. */
#include "binsym/vdso.h"

#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>

#define VDSO_MAX_SIZE (1024 * 1024)

int st_vdso__image(const void **image, size_t *size)
{
	const ElfW(Ehdr) *ehdr = (const void *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Phdr) *phdr;
	size_t end, i;

	if (!ehdr || memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0)
		return -ENOENT;
	end = ehdr->e_shoff + (size_t)ehdr->e_shnum * ehdr->e_shentsize;
	phdr = (const void *)((const char *)ehdr + ehdr->e_phoff);
	for (i = 0; i < ehdr->e_phnum; i++) {
		if (phdr[i].p_type == PT_LOAD && phdr[i].p_offset + phdr[i].p_filesz > end)
			end = phdr[i].p_offset + phdr[i].p_filesz;
	}
	if (end < sizeof(*ehdr) || end > VDSO_MAX_SIZE)
		return -ENOEXEC;
	*image = ehdr;
	*size = end;
	return 0;
}

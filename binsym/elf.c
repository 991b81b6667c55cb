/* elf.c - reading what the symbolizer needs out of an ELF image. */
#include "binsym/elf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>

#include "binsym/elflayout.h"
#include "binsym/safeopen.h"
#include "common/strtab.h"
#include "binsym/symtab.h"
#include "binsym/worklimit.h"

struct st_elf {
	int fd;
	Elf *elf;
	void *image;	/* owned copy for memory images */
};

static int check_kind(struct st_elf *e)
{
	GElf_Ehdr ehdr;

	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &ehdr))
		return -ENOEXEC;
	return 0;
}

int st_elf__open(const char *path, struct st_elf **out)
{
	int fd = st_safe_open(path, NULL, NULL);

	if (fd < 0)
		return fd;
	return st_elf__open_fd(fd, out);
}

int st_elf__open_fd(int fd, struct st_elf **out)
{
	struct st_elf *e;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return -ENOTSUP;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		close(fd);
		return -ENOMEM;
	}
	e->fd = fd;
	/* read(), not mmap(): a file rewritten in place must not SIGBUS us */
	e->elf = elf_begin(e->fd, ELF_C_READ, NULL);
	err = check_kind(e);
	if (err)
		goto cleanup;
	*out = e;
	return 0;
cleanup:
	st_elf__free(e);
	return err;
}

int st_elf__open_memory(const void *image, size_t size, struct st_elf **out)
{
	struct st_elf *e;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	err = st_elf_layout__check_memory(image, size, 0);	/* as st_safe_open() */
	if (err)
		return err;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->fd = -1;
	e->image = malloc(size);
	if (!e->image) {
		err = -ENOMEM;
		goto cleanup;
	}
	memcpy(e->image, image, size);
	e->elf = elf_memory(e->image, size);
	err = check_kind(e);
	if (err)
		goto cleanup;
	*out = e;
	return 0;
cleanup:
	st_elf__free(e);
	return err;
}

void st_elf__free(struct st_elf *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->image);
	free(e);
}

int st_elf__fd(const struct st_elf *e)
{
	return e->fd;
}

int st_elf__each_symbol(Elf *elf, GElf_Word type,
			int (*fn)(const GElf_Sym *s, const char *name, void *ctx), void *ctx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (name && fn(&s, name, ctx))
				break;
		}
		return 0;
	}
	return -ENOENT;
}

Elf *st_elf__elf(const struct st_elf *e)
{
	return e->elf;
}

int st_elf__build_id(struct st_elf *e, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *id;
	const void *p;
	ssize_t n, i;

	n = dwelf_elf_gnu_build_id(e->elf, &p);
	if (n <= 0 || n > (ST_BUILD_ID_HEX_MAX - 1) / 2)
		return -ENOENT;
	id = p;
	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 0xf];
	}
	hex[2 * n] = '\0';
	return 0;
}

const char *st_elf__debuglink(struct st_elf *e, __u32 *crc)
{
	GElf_Word c = 0;
	const char *name = dwelf_elf_gnu_debuglink(e->elf, &c);

	*crc = c;
	return name && *name ? name : NULL;
}

int st_elf__loads(struct st_elf *e, struct st_load **out)
{
	struct st_load *loads = NULL;
	size_t nphdr, i, n = 0;
	GElf_Phdr phdr;

	*out = NULL;
	if (elf_getphdrnum(e->elf, &nphdr))
		return -ENOEXEC;
	if (!nphdr)
		return 0;
	loads = calloc(nphdr, sizeof(*loads));
	if (!loads)
		return -ENOMEM;
	for (i = 0; i < nphdr; i++) {
		if (!gelf_getphdr(e->elf, i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		loads[n].offset = phdr.p_offset;
		loads[n].vaddr = phdr.p_vaddr;
		loads[n].filesz = phdr.p_filesz;
		loads[n].memsz = phdr.p_memsz;
		loads[n].exec = phdr.p_flags & PF_X;
		n++;
	}
	*out = loads;
	return n;
}

static Elf_Scn *find_section(struct st_elf *e, GElf_Word type, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		if (gelf_getshdr(scn, shdr) && shdr->sh_type == type)
			return scn;
	}
	return NULL;
}

bool st_elf__has_section_type(struct st_elf *e, GElf_Word type)
{
	GElf_Shdr shdr;

	return find_section(e, type, &shdr) != NULL;
}

Elf_Scn *st_elf__section_named(struct st_elf *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	const char *n;
	GElf_Shdr shdr;
	size_t shstrndx;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e->elf, shstrndx, shdr.sh_name);
		if (n && strcmp(n, name) == 0) {
			if (sh)
				*sh = shdr;
			return scn;
		}
	}
	return NULL;
}

bool st_elf__has_section_named(struct st_elf *e, const char *name)
{
	return st_elf__section_named(e, name, NULL) != NULL;
}

/* Section ends as bounds: of the executable sections for functions, of the
 * other allocated ones for data. */
static int add_section_bounds(struct st_elf *e, bool data, struct st_symtab *t)
{
	GElf_Xword want = data ? SHF_ALLOC : SHF_ALLOC | SHF_EXECINSTR;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	int err;

	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		if ((shdr.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != want)
			continue;
		err = st_symtab__add_bound(t, shdr.sh_addr + shdr.sh_size);
		if (err)
			return err;
	}
	return 0;
}

static enum st_sym_bind bind_of(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return ST_BIND_GLOBAL;
	case STB_WEAK:
		return ST_BIND_WEAK;
	default:
		return ST_BIND_LOCAL;
	}
}

/* Function symbols (STT_FUNC, STT_GNU_IFUNC, and untyped labels in code:
 * assembly entry points such as ld.so's _start) or, with data, data objects
 * (STT_OBJECT, STT_COMMON) defined in a section that is in memory (not
 * SHN_ABS, nor SHN_COMMON, which only relocatable objects have). */
static bool wanted(struct st_elf *e, const GElf_Sym *sym, GElf_Word shndx, bool data)
{
	int stype = GELF_ST_TYPE(sym->st_info);
	GElf_Shdr shdr;

	if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0)
		return false;
	if (sym->st_shndx != SHN_XINDEX)	/* the extended index only then */
		shndx = sym->st_shndx;
	if (!data && stype == STT_NOTYPE)
		return sym->st_shndx != SHN_ABS && sym->st_shndx != SHN_COMMON &&
		       gelf_getshdr(elf_getscn(e->elf, shndx), &shdr) &&
		       (shdr.sh_flags & SHF_EXECINSTR);
	if (!data)
		return stype == STT_FUNC || stype == STT_GNU_IFUNC;
	return (stype == STT_OBJECT || stype == STT_COMMON) && sym->st_shndx != SHN_ABS &&
	       sym->st_shndx != SHN_COMMON;
}

static int load_symbols(struct st_elf *e, GElf_Word type, bool data, struct st_symtab *t,
			struct st_strtab *names, struct st_work *w)
{
	Elf_Data *symdata, *xndx_data = NULL;
	Elf_Scn *scn, *xscn = NULL;
	GElf_Shdr shdr, xshdr;
	size_t i, nsyms;
	int err, n = 0;

	scn = find_section(e, type, &shdr);
	if (!scn)
		return -ENOENT;
	symdata = elf_getdata(scn, NULL);
	if (!symdata || !shdr.sh_entsize)
		return -ENOEXEC;
	while ((xscn = elf_nextscn(e->elf, xscn))) {
		if (gelf_getshdr(xscn, &xshdr) && xshdr.sh_type == SHT_SYMTAB_SHNDX &&
		    xshdr.sh_link == elf_ndxscn(scn)) {
			xndx_data = elf_getdata(xscn, NULL);
			break;
		}
	}
	nsyms = shdr.sh_size / shdr.sh_entsize;
	for (i = 1; i < nsyms; i++) {
		const char *name, *copy;
		GElf_Word shndx;
		size_t len;
		GElf_Sym sym;

		if (!(i & 4095) && st_work__over(w))
			break;	/* what was read is kept, the reason counted by the caller */
		if (!gelf_getsymshndx(symdata, xndx_data, i, &sym, &shndx))
			continue;
		if (!wanted(e, &sym, shndx, data))
			continue;
		if (w && w->max_symbols && (size_t)n >= w->max_symbols) {
			w->too_many = true;
			break;
		}
		name = elf_strptr(e->elf, shdr.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		/* "memcpy@@GLIBC_2.14" in .symtab: drop the version */
		len = strchr(name + 1, '@') ? (size_t)(strchr(name + 1, '@') - name)
					    : strlen(name);
		copy = st_strtab__add(names, name, len);
		if (!copy)
			return -ENOMEM;
		err = st_symtab__add(t, sym.st_value, sym.st_size, copy, NULL, bind_of(&sym));
		if (err)
			return err;
		n++;
	}
	err = add_section_bounds(e, data, t);
	return err ? err : n;
}

#define PLT_ENTRY 16

struct plt_sections {
	GElf_Shdr plt, sec, got, rela;	/* sh_type SHT_NULL: absent */
	Elf_Scn *rela_scn;
};

static void find_plt_sections(struct st_elf *e, struct plt_sections *p)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *n;

	memset(p, 0, sizeof(*p));
	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e->elf, shstrndx, sh.sh_name)))
			continue;
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR)) {
			if (!strcmp(n, ".plt"))
				p->plt = sh;
			else if (!strcmp(n, ".plt.sec"))
				p->sec = sh;
			else if (!strcmp(n, ".plt.got"))
				p->got = sh;
		} else if (sh.sh_type == SHT_RELA && !strcmp(n, ".rela.plt")) {
			p->rela = sh;
			p->rela_scn = scn;
		}
	}
}

/* "NAME@plt" for relocation i of .rela.plt, into names; NULL if it is no
 * JUMP_SLOT of a named symbol. */
static const char *plt_name(struct st_elf *e, Elf_Data *rdata, size_t i, Elf_Data *syms,
			    GElf_Word strtab, struct st_strtab *names)
{
	const char *name;
	char buf[256];
	GElf_Rela r;
	GElf_Sym s;
	int len;

	if (!gelf_getrela(rdata, (int)i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
	    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s) ||
	    !(name = elf_strptr(e->elf, strtab, s.st_name)) || !*name)
		return NULL;
	len = snprintf(buf, sizeof(buf), "%s@plt", name);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return NULL;
	return st_strtab__add(names, buf, (size_t)len);
}

static int add_plt_entry(struct st_symtab *t, const GElf_Shdr *sec, size_t k, const char *name)
{
	if (sec->sh_type == SHT_NULL || (k + 1) * PLT_ENTRY > sec->sh_size)
		return 0;
	return st_symtab__add(t, sec->sh_addr + k * PLT_ENTRY, PLT_ENTRY, name, NULL, ST_BIND_LOCAL);
}

int st_elf__load_plt_symbols(struct st_elf *e, struct st_symtab *t, struct st_strtab *names)
{
	Elf_Data *rdata = NULL, *syms = NULL;
	struct plt_sections p;
	GElf_Shdr dsh = { 0 };
	size_t i, nrel = 0, room;
	const char *name;
	int err, n = 0;

	find_plt_sections(e, &p);
	if (p.plt.sh_type == SHT_NULL || p.plt.sh_size < PLT_ENTRY)
		return -ENOENT;
	if (!(name = st_strtab__add(names, ".plt", 4)))
		return -ENOMEM;
	if ((err = st_symtab__add(t, p.plt.sh_addr, PLT_ENTRY, name, NULL, ST_BIND_LOCAL)))
		return err;
	n++;
	if (p.got.sh_type != SHT_NULL && p.got.sh_size) {
		if (!(name = st_strtab__add(names, ".plt.got", 8)))
			return -ENOMEM;
		if ((err = st_symtab__add(t, p.got.sh_addr, p.got.sh_size, name, NULL, ST_BIND_LOCAL)))
			return err;
		n++;
	}
	if (p.rela_scn && p.rela.sh_entsize && (rdata = elf_getdata(p.rela_scn, NULL)) &&
	    gelf_getshdr(elf_getscn(e->elf, p.rela.sh_link), &dsh) && dsh.sh_type == SHT_DYNSYM &&
	    (syms = elf_getdata(elf_getscn(e->elf, p.rela.sh_link), NULL)))
		nrel = p.rela.sh_size / p.rela.sh_entsize;
	/* no more relocations than entries: the loop is bounded by the PLT */
	room = p.plt.sh_size / PLT_ENTRY - 1;
	if (p.sec.sh_type != SHT_NULL && p.sec.sh_size / PLT_ENTRY > room)
		room = p.sec.sh_size / PLT_ENTRY;
	if (nrel > room)
		nrel = room;
	for (i = 0; i < nrel; i++) {
		if (!(name = plt_name(e, rdata, i, syms, dsh.sh_link, names)))
			continue;
		if ((err = add_plt_entry(t, &p.plt, i + 1, name)) ||
		    (err = add_plt_entry(t, &p.sec, i, name)))
			return err;
		n++;
	}
	return n;
}

int st_elf__load_symbols(struct st_elf *e, GElf_Word type, struct st_symtab *t,
			 struct st_strtab *names, struct st_work *w)
{
	return load_symbols(e, type, false, t, names, w);
}

int st_elf__load_data_symbols(struct st_elf *e, GElf_Word type, struct st_symtab *t,
			      struct st_strtab *names, struct st_work *w)
{
	return load_symbols(e, type, true, t, names, w);
}

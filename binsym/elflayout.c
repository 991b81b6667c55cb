/* elflayout.c - refusing ELF files whose header tables are implausible for
 * their real size (see elflayout.h). */
#include "binsym/elflayout.h"

#include <elf.h>
#include <stdbool.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

/* The header fields the check needs, whatever the class and byte order. */
struct layout {
	__u64 shoff, phoff, shnum, phnum;
	__u64 shentsize, phentsize, shdr_size, phdr_size;
};

static __u64 get(const unsigned char *p, size_t n, bool msb)
{
	__u64 v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (__u64)p[msb ? i : n - 1 - i] << (8 * (n - 1 - i));
	return v;
}

/* Where the header's fields are, per class (addr: their offsets' size). */
struct ehdr_fields {
	size_t phoff, shoff, phentsize, phnum, shentsize, shnum, addr;
};

#define EHDR_FIELDS(T, addr)                                                              \
	{ offsetof(T, e_phoff), offsetof(T, e_shoff), offsetof(T, e_phentsize),           \
	  offsetof(T, e_phnum), offsetof(T, e_shentsize), offsetof(T, e_shnum), addr }
static const struct ehdr_fields ehdr64 = EHDR_FIELDS(Elf64_Ehdr, 8);
static const struct ehdr_fields ehdr32 = EHDR_FIELDS(Elf32_Ehdr, 4);

/* The header's fields into *l: 0, 1 (not ELF: let libelf say so) or
 * -errno. */
static int read_header(st_elf_layout_read read, void *ctx, struct layout *l, bool *is64,
		       bool *msb)
{
	unsigned char h[sizeof(Elf64_Ehdr)];
	ssize_t n = read(ctx, h, sizeof(h), 0);
	const struct ehdr_fields *f;

	if (n < 0)
		return (int)n;
	if ((size_t)n < EI_NIDENT || memcmp(h, ELFMAG, SELFMAG) ||
	    (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64) ||
	    (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB))
		return 1;
	*is64 = h[EI_CLASS] == ELFCLASS64;
	*msb = h[EI_DATA] == ELFDATA2MSB;
	if ((size_t)n < (*is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return -EUCLEAN;	/* magic and a cut header */
	f = *is64 ? &ehdr64 : &ehdr32;
	l->phoff = get(h + f->phoff, f->addr, *msb);
	l->shoff = get(h + f->shoff, f->addr, *msb);
	l->phentsize = get(h + f->phentsize, 2, *msb);
	l->phnum = get(h + f->phnum, 2, *msb);
	l->shentsize = get(h + f->shentsize, 2, *msb);
	l->shnum = get(h + f->shnum, 2, *msb);
	l->shdr_size = *is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	l->phdr_size = *is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	return 0;
}

/* The extended counts in section 0 (e_shnum 0 with a section table,
 * e_phnum PN_XNUM): 0 or -errno. */
static int read_extended(st_elf_layout_read read, void *ctx, struct layout *l, bool is64,
			 bool msb, __u64 size)
{
	unsigned char s[sizeof(Elf64_Shdr)];
	size_t want = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	ssize_t n;

	if (!l->shoff || (l->shnum && l->phnum != PN_XNUM))
		return 0;
	if (l->shoff > size || size - l->shoff < want)
		return -EUCLEAN;
	n = read(ctx, s, want, l->shoff);
	if (n < 0)
		return (int)n;
	if ((size_t)n < want)
		return -EUCLEAN;
	if (!l->shnum)
		l->shnum = is64 ? get(s + offsetof(Elf64_Shdr, sh_size), 8, msb)
				: get(s + offsetof(Elf32_Shdr, sh_size), 4, msb);
	if (l->phnum == PN_XNUM)
		l->phnum = is64 ? get(s + offsetof(Elf64_Shdr, sh_info), 4, msb)
				: get(s + offsetof(Elf32_Shdr, sh_info), 4, msb);
	return 0;
}

/* Whether num entries of entsize at off fit in size bytes (no overflow:
 * every factor is checked first); *bytes the table's length. */
static bool table_fits(__u64 off, __u64 num, __u64 entsize, __u64 min_entsize, __u64 size,
		       __u64 *bytes)
{
	*bytes = 0;
	if (!num)
		return true;
	if (entsize < min_entsize || off > size || num > (size - off) / entsize)
		return false;
	*bytes = num * entsize;
	return true;
}

int st_elf_layout__check(st_elf_layout_read read, void *ctx, __u64 size, __u64 allocated,
			 __u64 budget)
{
	struct layout l = { 0 };
	__u64 sh_bytes, ph_bytes, slack = 1 << 20;
	bool is64 = false, msb = false;
	int err;

	if (!budget)
		budget = (__u64)ST_ELF_LAYOUT_BUDGET_MB << 20;
	err = read_header(read, ctx, &l, &is64, &msb);
	if (err)
		return err > 0 ? 0 : err;
	err = read_extended(read, ctx, &l, is64, msb, size);
	if (err)
		return err;
	if (!l.shoff)
		l.shnum = 0;	/* no section table, whatever e_shnum says */
	if (!l.phoff)
		l.phnum = 0;
	if (!table_fits(l.shoff, l.shnum, l.shentsize, l.shdr_size, size, &sh_bytes) ||
	    !table_fits(l.phoff, l.phnum, l.phentsize, l.phdr_size, size, &ph_bytes))
		return -EUCLEAN;
	/* both counts are now below size (at least 32 bytes an entry): the
	 * products cannot overflow */
	if (l.shnum * ST_ELF_LAYOUT_SCN_COST + l.phnum * ST_ELF_LAYOUT_PHDR_COST > budget)
		return -EUCLEAN;
	if (allocated && (sh_bytes + ph_bytes > ST_ELF_LAYOUT_SPARSE_RATIO * allocated + slack ||
			  size > ST_ELF_LAYOUT_SPARSE_RATIO * allocated + 16 * slack))
		return -EUCLEAN;
	return 0;
}

static ssize_t read_fd(void *ctx, void *buf, size_t len, __u64 off)
{
	ssize_t n;

	do
		n = pread(*(int *)ctx, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int st_elf_layout__check_fd(int fd, __u64 size, __u64 allocated, __u64 budget)
{
	return st_elf_layout__check(read_fd, &fd, size, allocated, budget);
}

struct image {
	const unsigned char *p;
	size_t size;
};

static ssize_t read_image(void *ctx, void *buf, size_t len, __u64 off)
{
	const struct image *im = ctx;

	if (off >= im->size)
		return 0;
	if (len > im->size - off)
		len = im->size - off;
	memcpy(buf, im->p + off, len);
	return (ssize_t)len;
}

int st_elf_layout__check_memory(const void *image, size_t size, __u64 budget)
{
	struct image im = { image, size };

	return st_elf_layout__check(read_image, &im, size, size, budget);
}

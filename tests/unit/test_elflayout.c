/* test_elflayout.c - st_elf_layout__check() and its use by st_safe_open()
 * and st_elf__open_memory(): crafted ELF headers whose tables lie beyond
 * the end, in a hole of a sparse file (issue 23: 8 KiB on disk, 640 MB
 * apparent, 10 million section headers), over the budget, with extended
 * counts in section 0, too small entries, both classes and byte orders;
 * real files pass. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binsym/elf.h"
#include "binsym/elflayout.h"
#include "binsym/safeopen.h"
#include "../common/mkelf.h"
#define TMPDIR_PREFIX "st-test-layout"
#include "tmpdir_fx.h"

/* An x86-64 header with a section table of shnum entries at shoff (and its
 * section 0, whose sh_size carries an extended count), in an image of
 * size bytes (zeros after it). */
static unsigned char *image(size_t size, __u64 shoff, __u16 shnum, __u64 sh0_size)
{
	unsigned char *p = calloc(1, size);
	Elf64_Ehdr *h = (Elf64_Ehdr *)p;

	assert_non_null(p);
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_DYN;
	h->e_machine = EM_X86_64;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(*h);
	h->e_shoff = shoff;
	h->e_shnum = shnum;
	h->e_shentsize = sizeof(Elf64_Shdr);
	if (shoff && shoff + sizeof(Elf64_Shdr) <= size)
		((Elf64_Shdr *)(p + shoff))->sh_size = sh0_size;
	return p;
}

static void test_real_and_not_elf_pass(void **state)
{
	static const char text[] = "not an ELF file at all\n";
	static const unsigned char cfi[64];
	struct tmpdir_fx *f = *state;
	struct st_safe_stats st = { 0 };
	struct st_safe_open o = { .root_fd = -1, .stats = &st };
	int fd;

	assert_int_equal(st_elf_layout__check_memory(text, sizeof(text), 0), 0);
	snprintf(f->path, sizeof(f->path), "%s/small.so", f->dir);
	fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(mkelf_eh_frame(fd, cfi, sizeof(cfi), 0x1000), 0);
	close(fd);
	fd = st_safe_open(f->path, &o, NULL);
	assert_true(fd >= 0);
	close(fd);
	fd = st_safe_open("/proc/self/exe", &o, NULL);	/* a real program */
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(st.implausible, 0);
}

/* The attack of issue 23: a sparse file, its first page written, whose
 * section table (10 million entries in section 0's sh_size) fills a hole
 * of 640 MB. */
static void test_sparse_file_refused_and_counted(void **state)
{
	struct tmpdir_fx *f = *state;
	struct st_safe_stats st = { 0 };
	struct st_safe_open o = { .root_fd = -1, .stats = &st };
	__u64 n = 10000000, shoff = 4096;
	unsigned char *p = image(8192, shoff, 0, n);
	struct st_elf *e = NULL;
	struct stat sb;
	int fd;

	snprintf(f->path, sizeof(f->path), "%s/sparse.so", f->dir);
	fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, 8192), 8192);
	assert_int_equal(ftruncate(fd, (off_t)(shoff + n * sizeof(Elf64_Shdr))), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_true((__u64)sb.st_blocks * 512 < (1 << 20));	/* really sparse */
	assert_int_equal(st_elf_layout__check_fd(fd, (__u64)sb.st_size, (__u64)sb.st_blocks * 512,
						 0), -EUCLEAN);
	close(fd);
	assert_int_equal(st_safe_open(f->path, &o, NULL), ST_SAFE_IMPLAUSIBLE);
	assert_int_equal(st.implausible, 1);
	assert_string_equal(st.implausible_path, f->path);
	assert_int_equal(st_elf__open(f->path, &e), ST_SAFE_IMPLAUSIBLE);
	assert_null(e);
	free(p);
}

/* The same count in a file that really holds its table: within the size
 * and not sparse, but over the budget of libelf's memory. */
static void test_budget(void **state)
{
	size_t n = 3000, size = 64 + n * sizeof(Elf64_Shdr);
	unsigned char *p = image(size, 64, 0, n);
	struct st_elf *e = NULL;

	(void)state;
	assert_int_equal(st_elf_layout__check_memory(p, size, 0), 0);
	assert_int_equal(st_elf_layout__check_memory(p, size, n * ST_ELF_LAYOUT_SCN_COST), 0);
	assert_int_equal(st_elf_layout__check_memory(p, size, n * ST_ELF_LAYOUT_SCN_COST - 1),
			 -EUCLEAN);
	/* 300,000 sections: over the default budget of 64 MiB */
	free(p);
	n = 300000;
	size = 64 + n * sizeof(Elf64_Shdr);
	p = image(size, 64, 0, n);
	assert_int_equal(st_elf_layout__check_memory(p, size, 0), -EUCLEAN);
	assert_int_equal(st_elf__open_memory(p, size, &e), -EUCLEAN);
	free(p);
}

static void test_tables_beyond_the_end(void **state)
{
	unsigned char *p = image(4096, 64, 100, 0);
	Elf64_Ehdr *h = (Elf64_Ehdr *)p;

	(void)state;
	assert_int_equal(st_elf_layout__check_memory(p, 4096, 0), -EUCLEAN);	/* 6400 bytes */
	h->e_shnum = 60;
	assert_int_equal(st_elf_layout__check_memory(p, 4096, 0), 0);	/* 3840: fits */
	h->e_shoff = UINT64_MAX - 16;	/* offset + size wraps */
	assert_int_equal(st_elf_layout__check_memory(p, 4096, 0), -EUCLEAN);
	h->e_shoff = 64;
	h->e_shentsize = 8;	/* entries smaller than a section header */
	assert_int_equal(st_elf_layout__check_memory(p, 4096, 0), -EUCLEAN);
	h->e_shentsize = sizeof(Elf64_Shdr);
	h->e_shoff = 0;		/* no section table: the count means nothing */
	assert_int_equal(st_elf_layout__check_memory(p, 4096, 0), 0);
	h->e_phoff = 64;	/* program headers beyond the end */
	h->e_phnum = 100;
	h->e_phentsize = sizeof(Elf64_Phdr);
	assert_int_equal(st_elf_layout__check_memory(p, 4096, 0), -EUCLEAN);
	h->e_phnum = 10;
	assert_int_equal(st_elf_layout__check_memory(p, 4096, 0), 0);
	assert_int_equal(st_elf_layout__check_memory(p, 40, 0), -EUCLEAN);	/* cut header */
	free(p);
}

/* e_phnum PN_XNUM: the count is section 0's sh_info. */
static void test_extended_phnum(void **state)
{
	unsigned char *p = image(8192, 4096, 1, 0);
	Elf64_Ehdr *h = (Elf64_Ehdr *)p;
	Elf64_Shdr *s0 = (Elf64_Shdr *)(p + 4096);

	(void)state;
	h->e_phoff = 64;
	h->e_phentsize = sizeof(Elf64_Phdr);
	h->e_phnum = PN_XNUM;
	s0->sh_info = 50;
	assert_int_equal(st_elf_layout__check_memory(p, 8192, 0), 0);
	s0->sh_info = 1000000;
	assert_int_equal(st_elf_layout__check_memory(p, 8192, 0), -EUCLEAN);
	h->e_shoff = 8190;	/* section 0 itself cut */
	assert_int_equal(st_elf_layout__check_memory(p, 8192, 0), -EUCLEAN);
	free(p);
}

/* A 32-bit big-endian header is read in its own order. */
static void test_elf32_msb(void **state)
{
	unsigned char p[4096] = { 0 };
	Elf32_Ehdr *h = (Elf32_Ehdr *)p;

	(void)state;
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS32;
	h->e_ident[EI_DATA] = ELFDATA2MSB;
	h->e_shoff = htobe32(64);
	h->e_shentsize = htobe16(sizeof(Elf32_Shdr));
	h->e_shnum = htobe16(90);	/* 3600 bytes: fits */
	assert_int_equal(st_elf_layout__check_memory(p, sizeof(p), 0), 0);
	h->e_shnum = htobe16(110);	/* 4400: beyond */
	assert_int_equal(st_elf_layout__check_memory(p, sizeof(p), 0), -EUCLEAN);
	h->e_shnum = htobe16(90);
	h->e_shentsize = htobe16(sizeof(Elf64_Shdr) / 2 - 1);
	assert_int_equal(st_elf_layout__check_memory(p, sizeof(p), 0), -EUCLEAN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_real_and_not_elf_pass, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_sparse_file_refused_and_counted, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_tables_beyond_the_end),
		cmocka_unit_test(test_extended_phnum),
		cmocka_unit_test(test_elf32_msb),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

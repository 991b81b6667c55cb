/* fuzz_cfi.c - the CFI compiler (user/collect/unwind/unwind_tables.c) on arbitrary bytes
 * as the .eh_frame of an ELF file at 0x1000: it may refuse them, never
 * crash, hang or leak; the rows it returns are sorted, and agree with
 * those of the libdw reference path where it has any. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/common/mkelf.h"
#include "user/collect/unwind/unwind_tables.h"

/* Where libdw's own rows (st_unwind_table__from_elf_libdw) say how to
 * unwind, user/collect/unwind/cfi_eval.c's say the same. (Crafted sections may make
 * libdw fail where cfi_eval.c reads an FDE: one malformed FDE breaks
 * libdw's lookups of all the others; real files give identical rows,
 * tests/unit/test_cfi_eval.c.) */
static void same_as_libdw(const char *path, int err, const struct st_unwind_table *t)
{
	struct st_unwind_table *ref = NULL;
	const struct st_unwind_row *a, *b;
	size_t na;
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;

	if (!elf)
		abort();
	if (st_unwind_table__from_elf_libdw(elf, &ref) == 0 && err == 0) {
		a = st_unwind_table__rows(ref, &na);
		for (size_t i = 0; i < na; i++) {
			if ((a[i].kind & ST_UNW_KIND_MASK) == ST_UNW_UNSUPPORTED)
				continue;
			b = st_unwind_table__find(t, a[i].pc);
			if (!b || b->kind != a[i].kind || b->rbp != a[i].rbp || b->off != a[i].off) {
				fprintf(stderr, "fuzz_cfi: at %#x libdw says kind %#x rbp %d off %d, "
					"cfi_eval %#x %d %d\n", a[i].pc, a[i].kind, a[i].rbp,
					a[i].off, b ? b->kind : 0, b ? b->rbp : 0, b ? b->off : 0);
				abort();
			}
		}
	}
	st_unwind_table__free(ref);
	elf_end(elf);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct st_unwind_table *t = NULL;
	const struct st_unwind_row *rows;
	size_t n;
	int err;

	if (fd < 0) {
		fd = memfd_create("fuzz-cfi", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET)) {
		perror("fuzz_cfi: memfd");
		abort();
	}
	if (mkelf_eh_frame(fd, data, size, 0x1000)) {
		fprintf(stderr, "fuzz_cfi: cannot write the ELF file: %s\n", elf_errmsg(-1));
		abort();
	}
	err = st_unwind_table__from_file(path, &t);
	same_as_libdw(path, err, t);
	if (err == 0) {
		rows = st_unwind_table__rows(t, &n);
		for (size_t i = 1; i < n; i++)
			if (rows[i].pc < rows[i - 1].pc)
				abort();
		st_unwind_table__find(t, 0x1000);
		st_unwind_table__free(t);
	}
	return 0;
}

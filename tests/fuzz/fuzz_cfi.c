/* fuzz_cfi.c - the CFI compiler (user/unwind_tables.c) on arbitrary bytes
 * as the .eh_frame of an ELF file at 0x1000: it may refuse them, never
 * crash, hang or leak; the rows it returns are sorted. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/common/mkelf.h"
#include "user/unwind_tables.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct st_unwind_table *t = NULL;
	const struct st_unwind_row *rows;
	size_t n;

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
	if (st_unwind_table__from_file(path, &t) == 0) {
		rows = st_unwind_table__rows(t, &n);
		for (size_t i = 1; i < n; i++)
			if (rows[i].pc < rows[i - 1].pc)
				abort();
		st_unwind_table__find(t, 0x1000);
		st_unwind_table__free(t);
	}
	return 0;
}

/* elflayout.h - whether an ELF file's header tables are plausible for its
 * real size, before libelf or libdw see it.
 *
 * libelf (ELF_C_READ) allocates per section header the header claims, and
 * reads every section it is asked for into memory: a sparse file of 8 KiB
 * on disk, 640 MB apparent, claiming 10 million section headers made the
 * daemon hold 2.7 GB. st_elf_layout__check() reads the ELF header (and
 * section 0, where the extended section and program header counts live)
 * and refuses the file when
 *   - a table (section or program headers) lies beyond the file's end, or
 *     its entries are smaller than the class's header (e_shentsize,
 *     e_phentsize),
 *   - the headers would cost libelf more than the budget
 *     (ST_ELF_LAYOUT_SCN_COST per section, ..._PHDR_COST per segment),
 *   - or, when the allocated size is known (st_blocks, nonzero), the tables
 *     are far larger than what is stored (a hole: over
 *     ST_ELF_LAYOUT_SPARSE_RATIO times the allocated bytes plus 1 MiB), or
 *     the whole file is (the same ratio plus 16 MiB: a section read from a
 *     hole is allocated and read as zeros). The ratio leaves room for
 *     filesystems that count compressed blocks (ZFS: debug info ~3-6x).
 * Files that are not ELF (no magic, unknown class) pass: libelf refuses
 * them itself, cheaply. Both byte orders are read.
 *
 * One check for every file the daemon parses: st_safe_open() runs it on
 * every regular file that starts with the ELF magic (so the symbolizer's
 * binaries and debug files, the unwinder's CFI sources and debuginfod's
 * downloads), and st_elf__open_memory() on memory images. Owner:
 * binsym/. */
#ifndef STACKTREE_SYMBOLIZER_ELFLAYOUT_H
#define STACKTREE_SYMBOLIZER_ELFLAYOUT_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* libelf's memory per section header (Elf_Scn, its header copy and data
 * list; measured: 10 million sections held 2.7 GB) and per program
 * header. */
#define ST_ELF_LAYOUT_SCN_COST 320
#define ST_ELF_LAYOUT_PHDR_COST 64
/* Default budget of one file's headers: 64 MiB, about 200,000 sections
 * (linked programs and their debug files have under 100; relocatable
 * objects, which are never mapped, reach 65,000). */
#define ST_ELF_LAYOUT_BUDGET_MB 64
#define ST_ELF_LAYOUT_SPARSE_RATIO 32

/* Reads len bytes at off into buf: the count read (short at the end), or
 * -errno. */
typedef ssize_t (*st_elf_layout_read)(void *ctx, void *buf, size_t len, __u64 off);

/* 0 (plausible, or not ELF) or -EUCLEAN (implausible; ST_SAFE_IMPLAUSIBLE),
 * or the reader's -errno. size: the file's length; allocated: bytes stored
 * (st_blocks * 512; 0: unknown, the sparse checks are skipped); budget:
 * bytes (0: ST_ELF_LAYOUT_BUDGET_MB). */
int st_elf_layout__check(st_elf_layout_read read, void *ctx, __u64 size, __u64 allocated,
			 __u64 budget);

/* The same on a file descriptor (pread) and on a memory image (fully
 * allocated). */
int st_elf_layout__check_fd(int fd, __u64 size, __u64 allocated, __u64 budget);
int st_elf_layout__check_memory(const void *image, size_t size, __u64 budget);

#endif

/* test_cfi_eval.c - user/collect/unwind/cfi_eval.c's rows are libdw's: libc, the dynamic
 * loader, libstdc++, libLLVM-14, cc1, this test binary, the unit fixtures
 * and test_unwind_tables (a DRAP frame: expressions, left to libdw) compiled both ways (st_unwind_table__from_elf, and the libdw
 * reference st_unwind_table__from_elf_libdw) give identical rows, and the
 * fast path serves nearly every FDE; on the CFI fuzz corpus, the rows
 * agree wherever libdw's have rules; hand-written programs for the forms
 * the evaluator reads and those it leaves to libdw. A file that is absent
 * is skipped (and said so). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/common/mkelf.h"
#include "tests/unit/fixtures/fx_util.h"
#include "user/collect/unwind/cfi_eval.h"
#include "user/collect/unwind/unwind_tables.h"

/* Both ways on one ELF file: same error, same rows (strict), or (not
 * strict, crafted CFI: one malformed FDE can make libdw fail on all) the
 * same rules wherever libdw's rows have any. Returns the FDEs and those
 * libdw ran in *fdes / *libdw (0 when absent: -ENOENT). */
static int both_ways(const char *path, bool strict, size_t *fdes, size_t *libdw)
{
	struct st_unwind_table *a = NULL, *b = NULL;
	struct st_unwind_table_info info = { 0 };
	const struct st_unwind_row *ra, *rb;
	size_t na = 0, nb = 0;
	int fd = open(path, O_RDONLY), ea, eb;
	Elf *elf;

	*fdes = *libdw = 0;
	if (fd < 0) {
		printf("    skipped (absent): %s\n", path);
		return -ENOENT;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	ea = st_unwind_table__from_elf_libdw(elf, &a);
	eb = st_unwind_table__from_elf(elf, &b);
	if (!strict) {
		ra = ea || eb ? NULL : st_unwind_table__rows(a, &na);
		for (size_t i = 0; i < na; i++) {
			const struct st_unwind_row *r = st_unwind_table__find(b, ra[i].pc);

			if ((ra[i].kind & ST_UNW_KIND_MASK) == ST_UNW_UNSUPPORTED)
				continue;
			assert_non_null(r);
			if (memcmp(r, &ra[i], sizeof(*r)))
				fail_msg("%s: at %#x: kind %#x rbp %d off %d (libdw) vs kind %#x "
					 "rbp %d off %d", path, ra[i].pc, ra[i].kind, ra[i].rbp,
					 ra[i].off, r->kind, r->rbp, r->off);
		}
		ea = -EINVAL;	/* counted, not compared further */
		goto cleanup;
	}
	if (ea != eb)
		fail_msg("%s: libdw %d, cfi_eval %d", path, ea, eb);
	if (!ea) {
		ra = st_unwind_table__rows(a, &na);
		rb = st_unwind_table__rows(b, &nb);
		assert_int_equal(na, nb);
		for (size_t i = 0; i < na; i++)
			if (memcmp(&ra[i], &rb[i], sizeof(ra[i])))
				fail_msg("%s: row %zu differs: pc %#x kind %#x rbp %d off %d (libdw) "
					 "vs pc %#x kind %#x rbp %d off %d", path, i, ra[i].pc,
					 ra[i].kind, ra[i].rbp, ra[i].off, rb[i].pc, rb[i].kind,
					 rb[i].rbp, rb[i].off);
		st_unwind_table__info(b, &info);
		*fdes = info.fdes;
		*libdw = info.libdw_fdes;
	}
cleanup:
	st_unwind_table__free(a);
	st_unwind_table__free(b);
	elf_end(elf);
	close(fd);
	return ea;
}

static void test_real_files(void **state)
{
	static const char *const paths[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/lib64/ld-linux-x86-64.so.2",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
		"/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
		"/proc/self/exe",
	};
	size_t fdes, libdw, checked = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (both_ways(paths[i], true, &fdes, &libdw) == -ENOENT)
			continue;
		checked++;
		/* the fast path serves nearly all (libLLVM: 1 of 94,994 to libdw) */
		if (fdes >= 1000 && libdw * 100 > fdes)
			fail_msg("%s: %zu of %zu FDEs left to libdw", paths[i], libdw, fdes);
		printf("    %s: %zu FDEs, %zu run by libdw\n", paths[i], fdes, libdw);
	}
	assert_true(checked >= 2);	/* libc and this binary at least */
}

static void test_fixtures(void **state)
{
	static const char *const names[] = {
		"fx_pie", "libfx.so", "fx_bid.full", "fx_data", "fx_data_nog", "libfxdata.so",
		"libfxdata_clang.so", "fx_realign.o", "fx_same_a", "fx_same_b",
		"../tests/test_unwind_tables",	/* with fx_realign.o's DRAP frame */
	};
	char path[PATH_MAX];
	size_t fdes, libdw, checked = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fx_path(path, sizeof(path), names[i]);
		if (both_ways(path, true, &fdes, &libdw) != -ENOENT)
			checked++;
	}
	assert_true(checked > 0);
}

/* Every committed fuzz input (arbitrary .eh_frame bytes): the same rules
 * wherever libdw's rows have any (as fuzz_cfi checks). */
static void test_fuzz_corpus(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 256], tmp[] = "/tmp/st-cfi-eval-XXXXXX";
	size_t fdes, libdw, checked = 0;
	struct dirent *de;
	DIR *d;
	int out;

	(void)state;
	fx_path(dir, sizeof(dir), "../../tests/fuzz/corpus/cfi");
	d = opendir(dir);
	if (!d) {
		printf("    skipped (absent): %s\n", dir);
		skip();
	}
	out = mkstemp(tmp);
	assert_true(out >= 0);
	while ((de = readdir(d))) {
		static unsigned char buf[1 << 20];
		ssize_t n;
		int in;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		in = open(path, O_RDONLY);
		assert_true(in >= 0);
		n = read(in, buf, sizeof(buf));
		close(in);
		assert_true(n >= 0);
		assert_int_equal(ftruncate(out, 0), 0);
		assert_int_equal(lseek(out, 0, SEEK_SET), 0);
		assert_int_equal(mkelf_eh_frame(out, buf, (size_t)n, 0x1000), 0);
		both_ways(tmp, false, &fdes, &libdw);
		checked++;
	}
	closedir(d);
	close(out);
	unlink(tmp);
	assert_true(checked > 0);
}

/* ---- hand-written programs ------------------------------------------------ */

#define MAX_ROWS 16

struct rows {
	size_t n;
	__u64 pc[MAX_ROWS];
	struct st_cfi_state s[MAX_ROWS];
};

static int collect(void *ctx, __u64 pc, const struct st_cfi_state *s)
{
	struct rows *r = ctx;

	if (r->n == MAX_ROWS)
		return -E2BIG;
	r->pc[r->n] = pc;
	r->s[r->n++] = *s;
	return 0;
}

/* gcc's CIE: def_cfa rsp+8; rip at cfa-8 */
static const __u8 cie_prog[] = { DW_CFA_def_cfa, 7, 8, 0x80 | 16, 1 };

static const struct st_cfi_cie gcc_cie = {
	.init = cie_prog, .init_end = cie_prog + sizeof(cie_prog), .code_align = 1,
	.data_align = -8, .ra_reg = 16, .augmentation = "zR",
};

static int run(const __u8 *prog, size_t n, __u64 end, struct rows *r)
{
	memset(r, 0, sizeof(*r));
	return st_cfi_eval(&gcc_cie, prog, prog + n, 0x1000, end, collect, r);
}

/* push rbp; mov rsp,rbp; ...; remember; leave; ret; restore; more code */
static void test_prologue_epilogue(void **state)
{
	static const __u8 prog[] = {
		0x40 | 1, DW_CFA_def_cfa_offset, 16, 0x80 | 6, 2,	/* 0x1001 */
		0x40 | 3, DW_CFA_def_cfa_register, 6,			/* 0x1004 */
		0x40 | 8, DW_CFA_remember_state, DW_CFA_def_cfa, 7, 8, 0xc0 | 6,	/* 0x100c */
		0x40 | 1, DW_CFA_restore_state,				/* 0x100d */
		DW_CFA_nop, DW_CFA_nop,
	};
	struct rows r;

	(void)state;
	assert_int_equal(run(prog, sizeof(prog), 0x1020, &r), 0);
	assert_int_equal(r.n, 5);
	assert_int_equal(r.pc[0], 0x1000);
	assert_int_equal(r.s[0].cfa_reg, 7);
	assert_int_equal(r.s[0].cfa_off, 8);
	assert_int_equal(r.s[0].rbp.how, ST_CFI_SAME);
	assert_int_equal(r.s[0].rip.how, ST_CFI_AT_CFA);
	assert_int_equal(r.s[0].rip.val, -8);
	assert_int_equal(r.pc[1], 0x1001);
	assert_int_equal(r.s[1].cfa_off, 16);
	assert_int_equal(r.s[1].rbp.how, ST_CFI_AT_CFA);
	assert_int_equal(r.s[1].rbp.val, -16);
	assert_int_equal(r.pc[2], 0x1004);
	assert_int_equal(r.s[2].cfa_reg, 6);
	assert_int_equal(r.pc[3], 0x100c);	/* after leave: rsp+8, rbp restored */
	assert_int_equal(r.s[3].cfa_reg, 7);
	assert_int_equal(r.s[3].cfa_off, 8);
	assert_int_equal(r.s[3].rbp.how, ST_CFI_SAME);
	assert_int_equal(r.pc[4], 0x100d);	/* the remembered state again */
	assert_int_equal(r.s[4].cfa_reg, 6);
	assert_int_equal(r.s[4].cfa_off, 16);
	assert_int_equal(r.s[4].rbp.how, ST_CFI_AT_CFA);
}

/* A zero advance makes no row; an advance to or past the FDE's end ends
 * it; rows after that are not made. */
static void test_row_boundaries(void **state)
{
	static const __u8 prog[] = {
		0x40 | 0, DW_CFA_def_cfa_offset, 16,
		0x40 | 4, DW_CFA_def_cfa_offset, 24,	/* 0x1004 */
		DW_CFA_advance_loc1, 0x40, DW_CFA_def_cfa_offset, 32,	/* 0x1044: past the end */
		0x40 | 1,
	};
	struct rows r;

	(void)state;
	assert_int_equal(run(prog, sizeof(prog), 0x1010, &r), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.pc[0], 0x1000);
	assert_int_equal(r.s[0].cfa_off, 16);
	assert_int_equal(r.pc[1], 0x1004);
	assert_int_equal(r.s[1].cfa_off, 24);
}

/* The forms left to libdw: -EOPNOTSUPP before any row. */
static void test_left_to_libdw(void **state)
{
	static const __u8 expr[] = { 0x40 | 1, DW_CFA_def_cfa_expression, 2, DW_OP_breg6, 0 };
	static const __u8 set_loc[] = { DW_CFA_set_loc, 0, 0x20, 0, 0, 0, 0, 0, 0 };
	static const __u8 reg[] = { 0x40 | 1, DW_CFA_register, 6, 3 };
	static const __u8 unbalanced[] = { 0x40 | 1, DW_CFA_restore_state };
	static const __u8 truncated[] = { 0x40 | 1, DW_CFA_def_cfa, 7 };
	static const __u8 unknown[] = { 0x40 | 1, 0x3f };
	const __u8 *progs[] = { expr, set_loc, reg, unbalanced, truncated, unknown };
	const size_t lens[] = { sizeof(expr), sizeof(set_loc), sizeof(reg), sizeof(unbalanced),
				sizeof(truncated), sizeof(unknown) };
	__u8 deep[20];
	struct st_cfi_cie signal = gcc_cie, ra = gcc_cie;
	struct rows r;

	(void)state;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		assert_int_equal(run(progs[i], lens[i], 0x1010, &r), -EOPNOTSUPP);
		assert_int_equal(r.n, 0);
	}
	memset(deep, DW_CFA_remember_state, sizeof(deep));	/* nested deeper than 16 */
	assert_int_equal(run(deep, sizeof(deep), 0x1010, &r), -EOPNOTSUPP);
	signal.augmentation = "zRS";
	assert_int_equal(st_cfi_eval(&signal, deep, deep, 0x1000, 0x1010, collect, &r),
			 -EOPNOTSUPP);
	ra.ra_reg = 15;
	assert_int_equal(st_cfi_eval(&ra, deep, deep, 0x1000, 0x1010, collect, &r), -EOPNOTSUPP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_files),
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_fuzz_corpus),
		cmocka_unit_test(test_prologue_epilogue),
		cmocka_unit_test(test_row_boundaries),
		cmocka_unit_test(test_left_to_libdw),
	};

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

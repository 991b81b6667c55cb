/* test_unwind_tables.c - CFI compiled into BPF unwinder rows, checked row by
 * row against `readelf -wF` (binutils' own CFI interpreter) on libc, the
 * dynamic loader and this test binary (built -O2, no frame pointers), plus
 * the special forms: signal frame, PLT expression, undefined return address,
 * stack realignment (DRAP), frames over 32 KiB, and the vDSO. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "tests/common/mkelf.h"
#include "user/collect/unwind/unwind_tables.h"

/* Stack realignment through a DRAP register: CFA = r10, then *(rbp - 8).
 * In fixtures/fx_realign.c, built by gcc without sanitizers whatever
 * compiles this test (clang realigns without a DRAP register). */
unsigned long tut_realigned(int n);

/* A path mapped by this process whose basename starts with prefix. */
static int mapped_path(const char *prefix, char *out, size_t len)
{
	char line[4096], *path, *base;
	FILE *f = fopen("/proc/self/maps", "r");
	int found = -ENOENT;

	if (!f)
		return -errno;
	while (found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		path = strchr(line, '/');
		if (!path)
			continue;
		base = strrchr(path, '/') + 1;
		if (!strncmp(base, prefix, strlen(prefix))) {
			snprintf(out, len, "%s", path);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

static int kind(const struct st_unwind_row *r)
{
	return r->kind & ST_UNW_KIND_MASK;
}

static long row_off(const struct st_unwind_row *r)
{
	return (r->kind & ST_UNW_F_OFF8) ? (long)r->off * 8 : r->off;
}

/* ---- readelf -wF ------------------------------------------------------ */

struct cmp_stats {
	size_t rows, fdes, skipped_fdes, mismatches, gaps;
};

/* The rules readelf shows in one row, against ours at loc. */
static int check_row(const struct st_unwind_table *t, unsigned long loc, char **cols,
		     char **vals, int n)
{
	const struct st_unwind_row *r = st_unwind_table__find(t, loc);
	const char *cfa = NULL, *ra = "u", *rbp = "u";
	long off;
	char reg[8];

	if (!r)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!strcmp(cols[i], "CFA"))
			cfa = vals[i];
		else if (!strcmp(cols[i], "ra"))
			ra = vals[i];
		else if (!strcmp(cols[i], "rbp"))
			rbp = vals[i];
	}
	if (!cfa)
		return -1;
	if (!strcmp(ra, "u"))
		return kind(r) == ST_UNW_END ? 0 : -1;
	if (!strcmp(cfa, "exp"))
		return kind(r) == ST_UNW_PLT || kind(r) == ST_UNW_DEREF_RBP ||
		       kind(r) == ST_UNW_SIGNAL ? 0 : -1;
	if (strcmp(ra, "c-8") || sscanf(cfa, "%7[a-z0-9]%ld", reg, &off) != 2)
		return kind(r) == ST_UNW_UNSUPPORTED ? 0 : -1;
	if (!strcmp(reg, "rsp") ? kind(r) != ST_UNW_RSP :
	    !strcmp(reg, "rbp") ? kind(r) != ST_UNW_RBP :
	    !strcmp(reg, "r10") ? kind(r) != ST_UNW_R10 :
	    !strcmp(reg, "rbx") ? kind(r) != ST_UNW_RBX : kind(r) != ST_UNW_UNSUPPORTED)
		return -1;
	if (kind(r) == ST_UNW_UNSUPPORTED)
		return 0;
	if (row_off(r) != off)
		return -1;
	if (!strcmp(rbp, "u") || !strcmp(rbp, "s"))
		return r->rbp == ST_UNW_RBP_SAME && !(r->kind & ST_UNW_F_RBP_AT_RBP) ? 0 : -1;
	if (!strcmp(rbp, "exp"))
		return (r->kind & ST_UNW_F_RBP_AT_RBP) || r->rbp == ST_UNW_RBP_UNKNOWN ? 0 : -1;
	if (sscanf(rbp, "c%ld", &off) == 1)
		return !(r->kind & ST_UNW_F_RBP_AT_RBP) && r->rbp * 8L == off ? 0 : -1;
	return r->rbp == ST_UNW_RBP_UNKNOWN ? 0 : -1;
}

#define MAXC 40

/* Compare every row readelf prints for path's .eh_frame with ours. FDEs with
 * register-in-register rules are skipped: readelf's table shows them
 * inconsistently (their rows are checked as UNSUPPORTED in other tests). */
static void compare_with_readelf(const char *path, const struct st_unwind_table *t,
				 struct cmp_stats *st)
{
	char cmd[4200], line[1024], *cols[MAXC], *vals[MAXC], colbuf[1024] = "";
	unsigned long fde_start = 0, fde_end = 0, prev_end = 0;
	bool in_fde = false, skip = false;
	int ncols = 0;
	FILE *p;

	memset(st, 0, sizeof(*st));
	snprintf(cmd, sizeof(cmd), "readelf -wF '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *s, *save = NULL;
		unsigned long loc;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		if (strstr(line, "Contents of the .debug_frame"))
			break;
		if (strstr(line, " CIE")) {
			in_fde = false;
			continue;
		}
		if ((s = strstr(line, " FDE cie=")) && (s = strstr(s, "pc=")) &&
		    sscanf(s, "pc=%lx..%lx", &fde_start, &fde_end) == 2) {
			if (fde_start > prev_end && prev_end) {
				/* a gap without CFI before this FDE */
				const struct st_unwind_row *r = st_unwind_table__find(t, prev_end);

				st->gaps++;
				if (!r || kind(r) != ST_UNW_NONE)
					st->mismatches++;
			}
			if (fde_end > prev_end)
				prev_end = fde_end;
			in_fde = true;
			skip = false;
			ncols = 0;
			st->fdes++;
			continue;
		}
		if (!in_fde)
			continue;
		if (!strncmp(line, "   LOC", 6)) {
			snprintf(colbuf, sizeof(colbuf), "%s", line + 6);
			ncols = 0;
			for (s = strtok_r(colbuf, " ", &save); s && ncols < MAXC;
			     s = strtok_r(NULL, " ", &save))
				cols[ncols++] = s;
			continue;
		}
		if (sscanf(line, "%16lx", &loc) != 1 || strlen(line) < 17 || line[16] != ' ')
			continue;
		for (s = strtok_r(line + 17, " ", &save); s && n < MAXC; s = strtok_r(NULL, " ", &save))
			vals[n++] = s;
		for (int i = 0; i < n && i < ncols; i++)
			if (strcmp(cols[i], "CFA") && (vals[i][0] == 'r' || vals[i][0] == '('))
				skip = true;
		if (skip) {
			st->skipped_fdes++;
			in_fde = false;
			continue;
		}
		st->rows++;
		if (n != ncols || check_row(t, loc, cols, vals, n)) {
			const struct st_unwind_row *r = st_unwind_table__find(t, loc);

			if (st->mismatches++ < 5)
				print_message("%s: %lx: ours kind %d rbp %d off %ld\n", path, loc,
					      r ? r->kind : -1, r ? r->rbp : 0, r ? row_off(r) : 0);
		}
	}
	pclose(p);	/* readelf exits 1 on some libraries without saying why */
}

static void check_file(const char *path, size_t min_rows)
{
	struct st_unwind_table *t;
	struct st_unwind_table_info info;
	struct cmp_stats st;
	const struct st_unwind_row *rows;
	size_t n;

	assert_int_equal(st_unwind_table__from_file(path, &t), 0);
	st_unwind_table__info(t, &info);
	assert_string_equal(info.source, ".eh_frame");
	rows = st_unwind_table__rows(t, &n);
	assert_int_equal(n, info.rows);
	for (size_t i = 1; i < n; i++) {
		/* sorted, and merged: no two neighbours with the same rules */
		assert_true(rows[i - 1].pc < rows[i].pc);
		assert_false(rows[i - 1].kind == rows[i].kind && rows[i - 1].rbp == rows[i].rbp &&
			     rows[i - 1].off == rows[i].off);
	}
	compare_with_readelf(path, t, &st);
	print_message("%s: %zu rows, %zu FDEs; readelf: %zu rows in %zu FDEs (%zu skipped), "
		      "%zu gaps, %zu mismatches\n", path, n, info.fdes, st.rows, st.fdes,
		      st.skipped_fdes, st.gaps, st.mismatches);
	assert_int_equal(st.mismatches, 0);
	assert_true(st.rows >= min_rows);
	assert_true(st.fdes == info.fdes || st.fdes + 64 > info.fdes);
	assert_true(st.skipped_fdes * 100 <= st.fdes);
	st_unwind_table__free(t);
}

static void test_libc_matches_readelf(void **state)
{
	char path[4096];

	(void)state;
	assert_int_equal(mapped_path("libc.so", path, sizeof(path)), 0);
	check_file(path, 20000);
}

static void test_ld_so_matches_readelf(void **state)
{
	char path[4096];

	(void)state;
	assert_int_equal(mapped_path("ld-linux", path, sizeof(path)), 0);
	check_file(path, 1000);
}

/* ld.so's lazy-binding resolvers (_dl_runtime_resolve_*) keep their CFA in
 * rbx once they realign rsp: rows of kind ST_UNW_RBX (readelf's "rbx+16"),
 * which check_file() above compares one by one. */
static void test_ld_so_resolver_rows(void **state)
{
	struct st_unwind_table *t;
	const struct st_unwind_row *rows;
	size_t n, rbx = 0;
	char path[4096];

	(void)state;
	assert_int_equal(mapped_path("ld-linux", path, sizeof(path)), 0);
	assert_int_equal(st_unwind_table__from_file(path, &t), 0);
	rows = st_unwind_table__rows(t, &n);
	for (size_t i = 0; i < n; i++)
		if (kind(&rows[i]) == ST_UNW_RBX) {
			rbx++;
			assert_true(row_off(&rows[i]) > 0 && row_off(&rows[i]) < 64);
		}
	assert_true(rbx >= 3);	/* xsave, xsavec, fxsave variants */
	st_unwind_table__free(t);
}

static void test_self_matches_readelf(void **state)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	(void)state;
	assert_true(n > 0);
	path[n] = '\0';
	check_file(path, 100);
}

/* The forms only libc has: sigreturn frame, .plt expression, undefined
 * return address (thread start), rip kept in a register, frames > 32 KiB. */
static void test_libc_special_rows(void **state)
{
	struct st_unwind_table *t;
	struct st_unwind_table_info info;
	const struct st_unwind_row *rows;
	size_t n, count[16] = { 0 }, off8 = 0;
	char path[4096];

	(void)state;
	assert_int_equal(mapped_path("libc.so", path, sizeof(path)), 0);
	assert_int_equal(st_unwind_table__from_file(path, &t), 0);
	st_unwind_table__info(t, &info);
	rows = st_unwind_table__rows(t, &n);
	for (size_t i = 0; i < n; i++) {
		count[kind(&rows[i])]++;
		if (rows[i].kind & ST_UNW_F_OFF8) {
			off8++;
			assert_true(row_off(&rows[i]) > INT16_MAX);
		}
		if (kind(&rows[i]) == ST_UNW_PLT) {
			assert_int_equal(rows[i].off, 8);
			assert_true(rows[i].rbp == 11 || rows[i].rbp == 10);
		}
		if (kind(&rows[i]) == ST_UNW_SIGNAL)	/* __restore_rt: a nop + 9 bytes */
			assert_true(i + 1 < n && rows[i + 1].pc - rows[i].pc <= 16);
	}
	assert_int_equal(count[ST_UNW_SIGNAL], 1);
	assert_true(count[ST_UNW_PLT] >= 1);
	assert_true(count[ST_UNW_END] >= 1);
	assert_true(count[ST_UNW_UNSUPPORTED] >= 1);
	assert_int_equal(count[ST_UNW_UNSUPPORTED], info.unsupported);
	assert_true(off8 >= 1);
	assert_true(count[ST_UNW_NONE] >= 1);
	assert_true(count[ST_UNW_RSP] > n / 2);
	st_unwind_table__free(t);
}

/* tut_realigned: rsp+8 at entry, r10 in the prologue, *(rbp - 8) in the
 * body with rbp saved at [rbp]. */
static void test_realigned_frame(void **state)
{
	struct st_unwind_table *t;
	const struct st_unwind_row *r, *rows;
	char path[4096];
	Dl_info dl;
	ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 1);
	bool r10 = false, deref = false;
	size_t n, i;
	uint64_t pc;

	(void)state;
	assert_true(len > 0);
	path[len] = '\0';
	assert_true(dladdr((void *)tut_realigned, &dl));
	pc = (uintptr_t)tut_realigned - (uintptr_t)dl.dli_fbase; /* PIE linked at 0 */
	assert_int_equal(st_unwind_table__from_file(path, &t), 0);
	r = st_unwind_table__find(t, pc);
	assert_non_null(r);
	assert_int_equal(r->pc, pc);
	assert_int_equal(kind(r), ST_UNW_RSP);
	assert_int_equal(r->off, 8);
	rows = st_unwind_table__rows(t, &n);
	for (i = (size_t)(r - rows) + 1; i < n && i < (size_t)(r - rows) + 12; i++) {
		if (kind(&rows[i]) == ST_UNW_RSP && rows[i].off == 8 && (r10 || deref))
			break;	/* the epilogue */
		if (kind(&rows[i]) == ST_UNW_R10)
			r10 = true;
		if (kind(&rows[i]) == ST_UNW_DEREF_RBP) {
			deref = true;
			assert_int_equal(rows[i].off, -8);
			assert_true(rows[i].kind & ST_UNW_F_RBP_AT_RBP);
			assert_int_equal(rows[i].rbp, 0);
		}
	}
	assert_true(r10);
	assert_true(deref);
	assert_int_equal(tut_realigned(5), 6);
	st_unwind_table__free(t);
}

static void test_vdso(void **state)
{
	const GElf_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct st_unwind_table *t;
	const struct st_unwind_row *rows;
	size_t size, n;
	char *copy;
	Elf *elf;

	(void)state;
	if (!eh) {
		printf("    skipped: no vDSO in this process\n");
		skip();
	}
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	copy = malloc(size);
	assert_non_null(copy);
	memcpy(copy, eh, size);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_memory(copy, size);
	assert_non_null(elf);
	assert_int_equal(st_unwind_table__from_elf(elf, &t), 0);
	rows = st_unwind_table__rows(t, &n);
	assert_true(n >= 4);
	for (size_t i = 0; i < n; i++)
		assert_true(kind(&rows[i]) == ST_UNW_RSP || kind(&rows[i]) == ST_UNW_RBP ||
			    kind(&rows[i]) == ST_UNW_NONE);
	assert_int_equal(kind(&rows[n - 1]), ST_UNW_NONE);	/* past the last FDE */
	st_unwind_table__free(t);
	elf_end(elf);
	free(copy);
}

static void test_find(void **state)
{
	struct st_unwind_table *t;
	const struct st_unwind_row *rows;
	char path[4096];
	size_t n;

	(void)state;
	assert_int_equal(mapped_path("ld-linux", path, sizeof(path)), 0);
	assert_int_equal(st_unwind_table__from_file(path, &t), 0);
	rows = st_unwind_table__rows(t, &n);
	assert_null(st_unwind_table__find(t, rows[0].pc - 1));
	for (size_t i = 0; i < n; i++) {
		assert_ptr_equal(st_unwind_table__find(t, rows[i].pc), &rows[i]);
		if (i + 1 < n)
			assert_ptr_equal(st_unwind_table__find(t, rows[i + 1].pc - 1), &rows[i]);
	}
	assert_ptr_equal(st_unwind_table__find(t, UINT32_MAX), &rows[n - 1]);
	st_unwind_table__free(t);
}

static void test_errors(void **state)
{
	char exe[4096], tmp[] = "/tmp/st-unwind-XXXXXX", cmd[8400];
	struct st_unwind_table *t = (void *)1;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd;

	(void)state;
	assert_int_equal(st_unwind_table__from_file("/nonexistent/x", &t), -ENOENT);
	assert_null(t);
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	assert_int_equal(st_unwind_table__from_file(tmp, &t), -ENOEXEC);
	/* an ELF without any CFI */
	assert_true(n > 0);
	exe[n] = '\0';
	snprintf(cmd, sizeof(cmd), "objcopy -R .eh_frame -R .eh_frame_hdr -R .debug_frame '%s' %s",
		 exe, tmp);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(st_unwind_table__from_file(tmp, &t), -ENOENT);
	assert_null(t);
	unlink(tmp);
}

/* An .eh_frame of many CIEs whose FDEs all name the first one (a crafted
 * binary): the CIE of each FDE is found by binary search, not by a scan of
 * every CIE before it (quadratic: 200k CIEs took 47 s in the daemon). Each FDE covers
 * 16 bytes at 0x10000 + 16 * i with the CIE's rule, CFA = rsp + 8. */
#define MANY 400000

static size_t put_cie(unsigned char *p)
{
	/* length, id 0, version 1, "zR", code 1, data -8, ra 16, aug 1: absptr,
	 * def_cfa rsp+8, offset r16 at cfa-8, nop padding to 24 bytes */
	static const unsigned char cie[24] = {
		20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x00,
		0x0c, 7, 8, 0x90, 1, 0, 0,
	};

	memcpy(p, cie, sizeof(cie));
	return sizeof(cie);
}

static size_t put_fde(unsigned char *p, size_t at, size_t cie_at, uint64_t start)
{
	uint32_t len = 28, ptr = (uint32_t)(at + 4 - cie_at);
	uint64_t range = 16;

	memcpy(p, &len, 4);
	memcpy(p + 4, &ptr, 4);
	memcpy(p + 8, &start, 8);
	memcpy(p + 16, &range, 8);
	memset(p + 24, 0, 8);	/* aug length 0, nops */
	return 32;
}

/* Compile an .eh_frame of count CIEs, each with one FDE: the CPU seconds
 * it took (of this process: other load on the machine does not count). */
static double many_cies(size_t count)
{
	size_t cap = count * 56, n = 0;
	struct st_unwind_table_info info;
	unsigned char *buf = malloc(cap);
	char path[] = "/tmp/st-many-cies-XXXXXX";
	int fd = mkstemp(path);
	struct st_unwind_table *t = NULL;
	const struct st_unwind_row *r;
	struct timespec t0, t1;

	assert_non_null(buf);
	assert_true(fd >= 0);
	n += put_cie(buf);
	for (size_t i = 1; i < count; i++) {
		n += put_cie(buf + n);
		n += put_fde(buf + n, n, 0, 0x10000 + 16 * (uint64_t)i);
	}
	memset(buf + n, 0, 4);	/* terminator */
	n += 4;
	assert_int_equal(mkelf_eh_frame(fd, buf, n, 0x1000), 0);
	close(fd);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	assert_int_equal(st_unwind_table__from_file(path, &t), 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	unlink(path);
	free(buf);
	r = st_unwind_table__find(t, 0x10000 + 16 * 5 + 3);
	assert_non_null(r);
	assert_int_equal(kind(r), ST_UNW_RSP);
	assert_int_equal(r->off, 8);
	st_unwind_table__info(t, &info);
	assert_int_equal(info.fdes, count - 1);
	st_unwind_table__free(t);
	return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* Linear in the CIEs: 8x the CIEs take about 8x the time (the old scan,
 * quadratic, took 27 s for these 400k, 7 s for 200k: 64x for 8x). A ratio
 * of CPU times measured side by side, so neither a slow nor a busy
 * machine decides it: 24x (3x linear) still catches a quadratic scan. */
static void test_many_cies_linear(void **state)
{
	double small, big;

	(void)state;
	small = many_cies(MANY / 8);
	big = many_cies(MANY);
	if (small < 1e-3)	/* below the clock's use: nothing to compare */
		small = 1e-3;
	if (big / small >= 24)
		fail_msg("%d CIEs took %.3f s, %d took %.3f s: %.1fx for 8x", MANY / 8, small, MANY,
			 big, big / small);
}

/* An empty .eh_frame (only the terminator): no FDE, ENOENT, no qsort of
 * nothing. */
static void test_empty_eh_frame(void **state)
{
	static const unsigned char term[4];
	char path[] = "/tmp/st-empty-eh-XXXXXX";
	int fd = mkstemp(path);
	struct st_unwind_table *t = NULL;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(mkelf_eh_frame(fd, term, sizeof(term), 0x1000), 0);
	close(fd);
	assert_int_equal(st_unwind_table__from_file(path, &t), -ENOENT);
	assert_null(t);
	unlink(path);
}

/* A CFI program naming a huge register number (DW_CFA_offset_extended of
 * register 2^28) is refused before libdw runs it: libdw would size its rule
 * array by that number (gigabytes). Register 16 (the return address) in
 * the same form is fine. */
static void test_huge_register_refused(void **state)
{
	/* CIE: "zR", absptr; def_cfa rsp+8; offset_extended REG at cfa-8 */
	unsigned char cie[32] = {
		28, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x00,
		0x0c, 7, 8, 0x05, 0x80, 0x80, 0x80, 0x80, 0x01, 1, 0, 0, 0, 0, 0,
	};
	unsigned char buf[32 + 32 + 4];
	char path[] = "/tmp/st-huge-reg-XXXXXX";
	struct st_unwind_table *t = NULL;
	int fd;

	(void)state;
	memcpy(buf, cie, sizeof(cie));
	put_fde(buf + 32, 32, 0, 0x10000);
	memset(buf + 64, 0, 4);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(mkelf_eh_frame(fd, buf, sizeof(buf), 0x1000), 0);
	assert_int_equal(st_unwind_table__from_file(path, &t), -EINVAL);
	assert_null(t);
	/* the same program naming register 16 (a five-byte ULEB): accepted */
	buf[21] = 0x90;
	buf[22] = buf[23] = buf[24] = 0x80;
	buf[25] = 0x00;
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(mkelf_eh_frame(fd, buf, sizeof(buf), 0x1000), 0);
	close(fd);
	assert_int_equal(st_unwind_table__from_file(path, &t), 0);
	st_unwind_table__free(t);
	unlink(path);
}

/* The dynamic loader's entry code (_start, _dl_start_user) has no CFI:
 * the entry point is the outermost frame all the same (an END row up to
 * the next FDE), not a gap that cuts the stacks of a starting process. */
static void test_entry_point_is_outermost(void **state)
{
	const char *ld = "/lib64/ld-linux-x86-64.so.2";
	struct st_unwind_table *t = NULL;
	const struct st_unwind_row *r;
	GElf_Ehdr eh;
	Elf *elf;
	int fd;

	(void)state;
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	fd = open(ld, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_non_null(gelf_getehdr(elf, &eh));
	assert_int_equal(st_unwind_table__from_elf(elf, &t), 0);
	r = st_unwind_table__find(t, eh.e_entry);
	assert_non_null(r);
	assert_int_equal(kind(r), ST_UNW_END);
	r = st_unwind_table__find(t, eh.e_entry + 8);	/* _dl_start_user */
	assert_int_equal(kind(r), ST_UNW_END);
	st_unwind_table__free(t);
	/* the reference path makes the same row */
	assert_int_equal(st_unwind_table__from_elf_libdw(elf, &t), 0);
	assert_int_equal(kind(st_unwind_table__find(t, eh.e_entry)), ST_UNW_END);
	st_unwind_table__free(t);
	elf_end(elf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc_matches_readelf),
		cmocka_unit_test(test_ld_so_matches_readelf),
		cmocka_unit_test(test_self_matches_readelf),
		cmocka_unit_test(test_libc_special_rows),
		cmocka_unit_test(test_ld_so_resolver_rows),
		cmocka_unit_test(test_realigned_frame),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_entry_point_is_outermost),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_many_cies_linear),
		cmocka_unit_test(test_empty_eh_frame),
		cmocka_unit_test(test_huge_register_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

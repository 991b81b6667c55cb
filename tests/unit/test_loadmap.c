/* test_loadmap.c - which segment a file mapping shows (binsym/loadmap.c)
 * on the layouts of GNU ld, lld, BOLT and prelink, then end to end on the
 * lld fixtures and a library laid out above 4 GiB (fixtures.mk): the address the unwinder computes for an ip
 * of each function (pc = ip - start + vaddr, as BPF does) is the function's
 * ELF address, its row is the function's entry row, and the symbolizer
 * names it from the same mapping. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binsym/elf.h"
#include "binsym/loadmap.h"
#include "binsym/symbolizer.h"
#include "tests/unit/fixtures/fx_util.h"
#include "user/collect/unwind/unwind_tables.h"

#define PAGE 0x1000ull
#define NO_HINT ST_LOADMAP_NO_HINT
#define R(off, va, sz) { .offset = (off), .vaddr = (va), .filesz = (sz), .memsz = (sz) }
#define X(off, va, sz) { .offset = (off), .vaddr = (va), .filesz = (sz), .memsz = (sz), .exec = true }

/* The address at the start of a mapping at pgoff, or ~0 when none. */
static __u64 at(const struct st_load *l, size_t n, __u64 pgoff, bool exec, __u64 hint)
{
	__u64 v = 0;

	return st_loadmap__vaddr(l, n, pgoff, exec, PAGE, hint, &v) ? ~0ull : v;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_gnu_ld(void **state)
{
	/* -z separate-code (Debian's default): offsets equal addresses up to
	 * the data segment, which shares a file page with .rodata */
	static const struct st_load l[] = {
		R(0, 0, 0x618), X(0x1000, 0x1000, 0x13d), R(0x2000, 0x2000, 0x108),
		R(0x2e00, 0x3e00, 0x210),
	};

	(void)state;
	assert_int_equal(at(l, N(l), 0x1000, true, NO_HINT), 0x1000);
	assert_int_equal(at(l, N(l), 0, false, NO_HINT), 0);
	/* pgoff 0x2000: .rodata's mapping or the data's: the address tells */
	assert_int_equal(at(l, N(l), 0x2000, false, 0x2000), 0x2000);
	assert_int_equal(at(l, N(l), 0x2000, false, 0x3000), 0x3000);
	assert_int_equal(at(l, N(l), 0x2000, false, NO_HINT), 0x3000);	/* the later */
}

static void test_lld(void **state)
{
	/* clang -fuse-ld=lld: .text starts in the read-only segment's last
	 * file page, a page above its offset */
	static const struct st_load l[] = {
		R(0, 0, 0x724), X(0x730, 0x1730, 0x390), R(0xac0, 0x2ac0, 0x1e8),
		R(0xca8, 0x3ca8, 0x40),
	};
	static const struct st_load big[] = { R(0, 0, 0x5724), X(0x5730, 0x6730, 0x2000) };

	(void)state;
	assert_int_equal(at(l, N(l), 0, true, NO_HINT), 0x1000);
	/* the read-only and both data segments start in page 0 too: only
	 * the address tells them apart, else the later wins */
	assert_int_equal(at(l, N(l), 0, false, 0), 0);
	assert_int_equal(at(l, N(l), 0, false, 0x2000), 0x2000);
	assert_int_equal(at(l, N(l), 0, false, NO_HINT), 0x3000);
	assert_int_equal(at(l, N(l), 0, true, st_loadmap__hint(l, N(l), PAGE, 0x1000)), 0x1000);
	assert_int_equal(at(big, N(big), 0x5000, true, NO_HINT), 0x6000);
	assert_int_equal(at(big, N(big), 0x6000, true, NO_HINT), 0x7000);
	assert_int_equal(at(big, N(big), 0x8000, true, NO_HINT), ~0ull);	/* past the file */
}

static void test_two_exec_one_page(void **state)
{
	/* fx_lld2x: farcode at 0x400000, .text at 0x4023c0, both from file
	 * page 0x1000: only where the mapping sits tells them apart */
	static const struct st_load l[] = {
		R(0, 0, 0x318), X(0x1000, 0x400000, 0xb), R(0x100b, 0x40100b, 0x3a9),
		X(0x13c0, 0x4023c0, 0x150), R(0x1510, 0x403510, 0x1e8),
	};
	__u64 far = st_loadmap__hint(l, N(l), PAGE, 0x400000);
	__u64 text = st_loadmap__hint(l, N(l), PAGE, 0x402000);

	(void)state;
	assert_int_equal(far, 0x400000);
	assert_int_equal(at(l, N(l), 0x1000, true, far), 0x400000);
	assert_int_equal(at(l, N(l), 0x1000, true, text), 0x402000);
	assert_int_equal(at(l, N(l), 0x1000, true, NO_HINT), 0x402000);
	/* a hint no segment holds (the file mapped again elsewhere) is no help */
	assert_int_equal(at(l, N(l), 0x1000, true, 0x7000000), 0x402000);
}

static void test_bolt_and_prelink(void **state)
{
	/* BOLT: the new text in a segment of its own far above the old */
	static const struct st_load bolt[] = {
		R(0, 0, 0x800), X(0x1000, 0x1000, 0x5000), R(0x6000, 0x7000, 0x100),
		X(0x600000, 0x800000, 0x10000),
	};
	/* prelinked: every address moved by the same amount, above 4 GiB */
	static const struct st_load pre[] = {
		R(0, 0x3000000000ull, 0x724), X(0x730, 0x3000001730ull, 0x390),
	};
	static const struct st_load high[] = { R(0x1000, 0x1000, 0x100), X(0x2000, 0x2000, 0x100) };

	(void)state;
	assert_int_equal(at(bolt, N(bolt), 0x1000, true, NO_HINT), 0x1000);
	assert_int_equal(at(bolt, N(bolt), 0x605000, true, NO_HINT), 0x805000);
	assert_int_equal(at(bolt, N(bolt), 0x600000, true,
			    st_loadmap__hint(bolt, N(bolt), PAGE, 0x800000)), 0x800000);
	assert_int_equal(at(pre, N(pre), 0, true, NO_HINT), 0x3000001000ull);
	assert_int_equal(st_loadmap__hint(pre, N(pre), PAGE, 0x1000), 0x3000001000ull);
	/* the lowest segment is not in the file's first page: no hint */
	assert_int_equal(st_loadmap__hint(high, N(high), PAGE, 0x1000), NO_HINT);
	assert_int_equal(st_loadmap__hint(NULL, 0, PAGE, 0), NO_HINT);
	assert_null(st_loadmap__segment(NULL, 0, 0, true, PAGE, NO_HINT));
}

/* For each executable segment of fixture name mapped at bias: every
 * function of names in it, through the unwinder's arithmetic and rows and
 * the symbolizer. Returns how many functions were checked. */
static int check_fixture(const char *name, const char *nmfile, const char *const *names,
			 size_t nnames)
{
	const __u64 bias = 0x555555554000ull;
	struct st_symbolizer_opts opts = { .debug_dir = "/nonexistent" };
	struct st_symbolizer *s = st_symbolizer__new(&opts);
	struct st_unwind_table *t = NULL;
	struct st_unwind_table_info info;
	struct st_load *loads = NULL;
	struct st_module *m;
	struct st_elf *e = NULL;
	char path[PATH_MAX];
	__u64 low = ~0ull;
	int n, checked = 0;

	fx_path(path, sizeof(path), name);
	assert_non_null(s);
	assert_int_equal(st_elf__open(path, &e), 0);
	n = st_elf__loads(e, &loads);
	assert_true(n > 0);
	assert_int_equal(st_unwind_table__from_file(path, &t), 0);
	st_unwind_table__info(t, &info);
	m = st_symbolizer__module(s, path, NULL);
	assert_non_null(m);
	for (int i = 0; i < n; i++)
		if (loads[i].vaddr < low)
			low = loads[i].vaddr;
	for (int i = 0; i < n; i++) {
		const struct st_load *seg = &loads[i];
		/* as the kernel maps it, below the file's first mapping */
		__u64 start = bias + (seg->vaddr & ~(PAGE - 1)), pgoff = seg->offset & ~(PAGE - 1);
		__u64 base = bias + (low & ~(PAGE - 1)), v;
		__u64 hint = st_loadmap__hint(loads, (size_t)n, PAGE, start - base);

		if (!seg->exec)
			continue;
		assert_int_equal(st_loadmap__vaddr(loads, (size_t)n, pgoff, true, PAGE, hint, &v), 0);
		/* what BPF adds to ip - start: 32 bits from the module's base */
		assert_int_equal(info.base, st_loadmap__base(loads, (size_t)n, PAGE));
		assert_true(v >= info.base && v - info.base <= UINT32_MAX);
		for (size_t k = 0; k < nnames; k++) {
			const struct st_unwind_row *r;
			struct fx_nm sym;
			struct st_sym out;
			__u64 ip;

			assert_true(fx_nm(nmfile, names[k], &sym));
			if (sym.addr < seg->vaddr || sym.addr >= seg->vaddr + seg->memsz)
				continue;
			ip = bias + sym.addr;
			assert_int_equal(ip - start + v, sym.addr);
			/* the entry row: CFA = rsp + 8 (_start: the outermost frame) */
			r = st_unwind_table__find(t, ip - start + v);
			assert_non_null(r);
			if (!strcmp(names[k], "_start")) {
				assert_int_equal(r->kind & ST_UNW_KIND_MASK, ST_UNW_END);
			} else {
				assert_int_equal(r->kind & ST_UNW_KIND_MASK, ST_UNW_RSP);
				assert_int_equal(r->off, 8);
			}
			assert_int_equal(st_symbolizer__resolve(s, m, path, start, pgoff, ip + 1, false,
								&out), 0);
			assert_non_null(out.function);
			assert_string_equal(out.function, names[k]);
			assert_int_equal(out.func_addr, ip);
			checked++;
		}
	}
	st_symbolizer__release(s, m);
	st_unwind_table__free(t);
	free(loads);
	st_elf__free(e);
	st_symbolizer__free(s);
	return checked;
}

static void test_lld_fixtures(void **state)
{
	static const char *const names[] = { "fx_near", "fx_far", "main", "_start" };
	struct fx_nm far, near;

	(void)state;
	assert_int_equal(check_fixture("fx_lld", "fx_lld.nm", names, N(names)), 4);
	/* fx_lld2x: fx_far in its own segment, the others in .text's */
	assert_true(fx_nm("fx_lld2x.nm", "fx_far", &far));
	assert_true(fx_nm("fx_lld2x.nm", "fx_near", &near));
	assert_int_equal(far.addr, 0x400000);
	assert_true(near.addr > 0x401000);
	assert_int_equal(check_fixture("fx_lld2x", "fx_lld2x.nm", names, N(names)), 4);
}

static void test_prelinked_fixture(void **state)
{
	static const char *const names[] = { "fx_lib_func", "fx_lib_other", "fx_lib_static" };
	struct st_unwind_table *t = NULL;
	struct st_unwind_table_info info;
	char path[PATH_MAX];
	size_t n;

	(void)state;
	/* every address above 4 GiB: rows from the base, not refused */
	fx_path(path, sizeof(path), "libfx_prelink.so");
	assert_int_equal(st_unwind_table__from_file(path, &t), 0);
	st_unwind_table__info(t, &info);
	assert_int_equal(info.base, 0x3000000000ull);
	assert_non_null(st_unwind_table__rows(t, &n));
	assert_true(n > 2);
	st_unwind_table__free(t);
	assert_int_equal(check_fixture("libfx_prelink.so", "libfx_prelink.so.nm", names,
				       N(names)), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gnu_ld),
		cmocka_unit_test(test_lld),
		cmocka_unit_test(test_two_exec_one_page),
		cmocka_unit_test(test_bolt_and_prelink),
		cmocka_unit_test(test_lld_fixtures),
		cmocka_unit_test(test_prelinked_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

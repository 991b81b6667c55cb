/* test_symtab.c - symbols bounded by what the binary says (issue 20): a
 * size-0 symbol ends at the next symbol, FDE start (a guess) or section
 * end; a symbol running past its section ends there; code only an FDE
 * shows is named by it; then end to end on fixtures/fx_guess.c (a size-0
 * assembly symbol before static functions whose symbols are gone, as in
 * x264). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "binsym/symbolizer.h"
#include "binsym/symtab.h"
#include "tests/unit/fixtures/fx_map.h"
#include "tests/unit/fixtures/fx_util.h"

static const char *name_of(void *ctx, __u64 start)
{
	static char names[8][32];
	static int k;
	char *n = names[k++ & 7];

	(void)ctx;
	snprintf(n, sizeof(names[0]), "[m+0x%llx]", (unsigned long long)start);
	return n;
}

static const char *at(const struct st_symtab *t, __u64 addr)
{
	const struct st_symbol *s = st_symtab__find(t, addr);

	return s ? s->name : NULL;
}

static void test_zero_size_ends_at_fde(void **state)
{
	struct st_symtab *t = st_symtab__new();

	(void)state;
	assert_non_null(t);
	assert_int_equal(st_symtab__add(t, 0x100, 0, "asm0", NULL, ST_BIND_GLOBAL), 0);
	assert_int_equal(st_symtab__add_guess(t, 0x120, 0x10), 0);	/* static, stripped */
	assert_int_equal(st_symtab__add_guess(t, 0x130, 0), 0);	/* length unknown */
	assert_int_equal(st_symtab__add(t, 0x200, 0x10, "b", NULL, ST_BIND_GLOBAL), 0);
	/* a guess at a symbol's start, and one inside a sized symbol */
	assert_int_equal(st_symtab__add_guess(t, 0x200, 0x10), 0);
	assert_int_equal(st_symtab__add_guess(t, 0x208, 0x4), 0);
	/* a size-0 symbol with an FDE of its own at its start: its name wins */
	assert_int_equal(st_symtab__add(t, 0x300, 0, "asm1", NULL, ST_BIND_LOCAL), 0);
	assert_int_equal(st_symtab__add_guess(t, 0x300, 0x40), 0);
	assert_int_equal(st_symtab__add_bound(t, 0x380), 0);		/* section end */
	/* a sized symbol running past its section */
	assert_int_equal(st_symtab__add(t, 0x400, 0x1000, "long", NULL, ST_BIND_GLOBAL), 0);
	assert_int_equal(st_symtab__add_bound(t, 0x480), 0);
	assert_int_equal(st_symtab__add(t, 0x500, 0x10, "next", NULL, ST_BIND_GLOBAL), 0);
	st_symtab__finish(t);
	assert_int_equal(st_symtab__name_guesses(t, name_of, NULL), 2);

	assert_string_equal(at(t, 0x100), "asm0");
	assert_string_equal(at(t, 0x11f), "asm0");		/* up to the first FDE */
	assert_string_equal(at(t, 0x120), "[m+0x120]");
	assert_string_equal(at(t, 0x12f), "[m+0x120]");
	assert_string_equal(at(t, 0x130), "[m+0x130]");	/* to the next start */
	assert_string_equal(at(t, 0x1ff), "[m+0x130]");
	assert_string_equal(at(t, 0x208), "b");		/* not the guess inside it */
	assert_null(at(t, 0x210));
	assert_string_equal(at(t, 0x300), "asm1");
	assert_string_equal(at(t, 0x37f), "asm1");		/* to the section end */
	assert_null(at(t, 0x380));
	assert_string_equal(at(t, 0x47f), "long");
	assert_null(at(t, 0x480));				/* cut at its section's end */
	assert_string_equal(at(t, 0x500), "next");
	assert_int_equal(st_symtab__count(t), 7);	/* the 2 guesses in b and at asm1 dropped */
	st_symtab__free(t);
}

/* fx_guess: fx_asm0 (size 0, no CFI) used to reach main over the static
 * functions; now it ends at fx_hidden1's FDE, and each static function is
 * "[fx_guess+0xOFF]" by its FDE. */
static void test_fixture(void **state)
{
	const __u64 bias = 0x555555554000ull;
	struct st_symbolizer_opts opts = { .debug_dir = "/nonexistent" };
	struct st_symbolizer *s = st_symbolizer__new(&opts);
	struct fx_nm asm0, h1, h2, mainf;
	char path[PATH_MAX], want[64];
	struct fx_map map = { 0 };
	struct st_module *m;
	struct st_sym r;

	(void)state;
	assert_non_null(s);
	fx_path(path, sizeof(path), "fx_guess");
	fx_exec_mapping(path, bias, &map);
	m = st_symbolizer__module(s, path, NULL);
	assert_non_null(m);
	assert_true(fx_nm("fx_guess.nm", "fx_asm0", &asm0));
	assert_true(fx_nm("fx_guess.nm", "fx_hidden1", &h1));
	assert_true(fx_nm("fx_guess.nm", "fx_hidden2", &h2));
	assert_true(fx_nm("fx_guess.nm", "main", &mainf));
	assert_true(asm0.addr < h1.addr && h1.addr < h2.addr && h2.addr < mainf.addr);

	assert_int_equal(st_symbolizer__resolve(s, m, path, map.start, map.pgoff,
						bias + h1.addr - 1, false, &r), 0);
	assert_string_equal(r.function, "fx_asm0");
	assert_int_equal(st_symbolizer__resolve(s, m, path, map.start, map.pgoff,
						bias + h1.addr + 1, false, &r), 0);
	snprintf(want, sizeof(want), "[fx_guess+0x%llx]", (unsigned long long)h1.addr);
	assert_string_equal(r.function, want);
	assert_int_equal(r.offset, 1);
	assert_int_equal(st_symbolizer__resolve(s, m, path, map.start, map.pgoff,
						bias + h2.addr + 2, false, &r), 0);
	snprintf(want, sizeof(want), "[fx_guess+0x%llx]", (unsigned long long)h2.addr);
	assert_string_equal(r.function, want);
	assert_int_equal(st_symbolizer__resolve(s, m, path, map.start, map.pgoff,
						bias + mainf.addr, false, &r), 0);
	assert_string_equal(r.function, "main");
	st_symbolizer__release(s, m);
	st_symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_size_ends_at_fde),
		cmocka_unit_test(test_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

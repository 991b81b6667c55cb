/* test_budget.c - the daemon's one memory budget (common/budget.h): charges
 * within the limit, evictors asked in part order before a refusal, refusals
 * counted per part, measured parts, and a NULL budget accepting all. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/budget.h"

struct pool {
	struct st_budget *b;
	enum st_budget_part part;
	size_t held, calls;
	char order;
	char *log;
};

/* Frees what it holds, up to need, in 10-byte pieces. */
static size_t evict(void *ctx, size_t need)
{
	struct pool *p = ctx;
	size_t freed = 0;

	p->calls++;
	if (p->log)
		strncat(p->log, &p->order, 1);
	while (freed < need && p->held >= 10) {
		p->held -= 10;
		freed += 10;
		st_budget__uncharge(p->b, p->part, 10);
	}
	return freed;
}

static void test_charges_within_the_limit(void **state)
{
	struct st_budget *b = st_budget__new(100);
	struct st_budget_stats s;

	(void)state;
	assert_non_null(b);
	assert_int_equal(st_budget__charge(b, ST_BUDGET_MAPS, 60), 0);
	assert_int_equal(st_budget__charge(b, ST_BUDGET_TREES, 40), 0);
	assert_false(st_budget__fits(b, 1));
	assert_int_equal(st_budget__charge(b, ST_BUDGET_TREES, 1), -ENOSPC);
	st_budget__uncharge(b, ST_BUDGET_MAPS, 30);
	assert_true(st_budget__fits(b, 30));
	st_budget__uncharge(b, ST_BUDGET_MAPS, 1000);	/* no more than it holds */
	st_budget__stats(b, &s);
	assert_int_equal(s.limit, 100);
	assert_int_equal(s.used, 40);
	assert_int_equal(s.peak, 100);
	assert_int_equal(s.part[ST_BUDGET_MAPS], 0);
	assert_int_equal(s.part_peak[ST_BUDGET_MAPS], 60);
	assert_int_equal(s.part[ST_BUDGET_TREES], 40);
	assert_int_equal(s.refused[ST_BUDGET_TREES], 1);
	assert_int_equal(s.refused[ST_BUDGET_MAPS], 0);
	assert_int_equal(st_budget__charge(b, ST_BUDGET_MAPS, 101), -ENOSPC);
	st_budget__free(b);
}

static void test_evictors_in_part_order_before_a_refusal(void **state)
{
	struct st_budget *b = st_budget__new(100);
	char log[16] = "";
	struct pool sym = { b, ST_BUDGET_SYMBOLS, 0, 0, 's', log };
	struct pool py = { b, ST_BUDGET_PYCODE, 0, 0, 'p', log };
	struct st_budget_stats s;

	(void)state;
	st_budget__on_evict(b, ST_BUDGET_PYCODE, evict, &py);
	st_budget__on_evict(b, ST_BUDGET_SYMBOLS, evict, &sym);
	assert_int_equal(st_budget__charge(b, ST_BUDGET_SYMBOLS, 30), 0);
	sym.held = 30;
	assert_int_equal(st_budget__charge(b, ST_BUDGET_PYCODE, 30), 0);
	py.held = 30;
	assert_int_equal(st_budget__charge(b, ST_BUDGET_TREES, 40), 0);
	/* 20 more: the symbols' evictor alone frees enough */
	assert_int_equal(st_budget__charge(b, ST_BUDGET_TREES, 20), 0);
	assert_string_equal(log, "s");
	assert_int_equal(sym.held, 10);
	assert_int_equal(py.calls, 0);
	/* 30 more: the symbols' last 10, then Python's */
	assert_int_equal(st_budget__charge(b, ST_BUDGET_TREES, 30), 0);
	assert_string_equal(log, "ssp");
	assert_int_equal(sym.held, 0);
	assert_int_equal(py.held, 10);
	/* more than all the evictors can free: refused, counted */
	assert_int_equal(st_budget__charge(b, ST_BUDGET_TREES, 50), -ENOSPC);
	st_budget__stats(b, &s);
	assert_int_equal(s.refused[ST_BUDGET_TREES], 1);
	assert_int_equal(s.used, 90 + 0);
	assert_int_equal(s.part[ST_BUDGET_PYCODE], 0);
	assert_int_equal(s.evicted_bytes, 60);
	st_budget__free(b);
}

static void test_measured_parts(void **state)
{
	struct st_budget *b = st_budget__new(100);
	struct pool sym = { b, ST_BUDGET_SYMBOLS, 0, 0, 's', NULL };
	struct st_budget_stats s;

	(void)state;
	st_budget__on_evict(b, ST_BUDGET_SYMBOLS, evict, &sym);
	assert_false(st_budget__set(b, ST_BUDGET_SYMBOLS, 50));
	sym.held = 50;
	assert_false(st_budget__set(b, ST_BUDGET_TREES, 40));
	/* the trees grew past the limit: the symbols make room */
	assert_false(st_budget__set(b, ST_BUDGET_TREES, 70));
	assert_int_equal(sym.held, 30);
	/* beyond what can be evicted: still over, not refused (held already) */
	assert_true(st_budget__set(b, ST_BUDGET_TREES, 120));
	st_budget__refused(b, ST_BUDGET_TREES);
	st_budget__stats(b, &s);
	assert_int_equal(s.part[ST_BUDGET_SYMBOLS], 0);
	assert_int_equal(s.used, 120);
	assert_int_equal(s.refused[ST_BUDGET_TREES], 1);
	assert_false(st_budget__set(b, ST_BUDGET_TREES, 10));
	st_budget__free(b);
}

static void test_null_budget_accepts_all(void **state)
{
	struct st_budget_stats s;

	(void)state;
	assert_null(st_budget__new(0));
	assert_int_equal(st_budget__charge(NULL, ST_BUDGET_TREES, SIZE_MAX), 0);
	assert_false(st_budget__set(NULL, ST_BUDGET_TREES, SIZE_MAX));
	assert_true(st_budget__fits(NULL, SIZE_MAX));
	st_budget__uncharge(NULL, ST_BUDGET_TREES, 1);
	st_budget__refused(NULL, ST_BUDGET_TREES);
	st_budget__stats(NULL, &s);
	assert_int_equal(s.limit, 0);
	assert_string_equal(st_budget_part_names[ST_BUDGET_SYMBOLS], "symbols");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_charges_within_the_limit),
		cmocka_unit_test(test_evictors_in_part_order_before_a_refusal),
		cmocka_unit_test(test_measured_parts),
		cmocka_unit_test(test_null_budget_accepts_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

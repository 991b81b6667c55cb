/* test_pyexec.c - a CPython executable's py_exes template (bpf/pyexec.h):
 * its addresses made the file's and moved back by a load bias, the bias
 * from mm->start_code, and the template user/collect/runtimes/python/pyproc.c
 * reads from Debian's python3.11 (skipped when not installed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "bpf/pyexec.h"
#include "user/collect/runtimes/python/pyproc.h"

#define PY311 "/usr/bin/python3.11"

static struct st_py_proc sample_proc(void)
{
	struct st_py_proc p;

	memset(&p, 0, sizeof(p));
	p.runtime = 0x7f0000709220ULL;
	p.eval_start = 0x7f00000ee1c0ULL;
	p.eval_end = 0x7f00000f51c0ULL;
	p.code_type = 0x7f0000650000ULL;
	p.image = 7;
	p.l.version = 0x030b;
	return p;
}

/* Absent addresses (0) stay absent; the others move, and back. */
static void test_shift(void **state)
{
	struct st_py_proc p = sample_proc(), q = p;

	(void)state;
	st_py_proc_shift(&q, (__u64)0 - 0x7f0000000000ULL);
	assert_int_equal(q.runtime, 0x709220);
	assert_int_equal(q.eval_start, 0xee1c0);
	assert_int_equal(q.cold_start, 0);
	assert_int_equal(q.cold_end, 0);
	assert_int_equal(q.text_start, 0);
	st_py_proc_shift(&q, 0x7f0000000000ULL);
	assert_memory_equal(&p, &q, sizeof(p));
}

/* A PIE's bias from start_code (the lowest executable PT_LOAD's vaddr plus
 * the bias), a non-PIE's 0; a start below the text or a bias not
 * page-aligned is refused. */
static void test_bias(void **state)
{
	struct st_py_exe e = { .text_vaddr = 0xec000 };
	__u64 bias = 1;

	(void)state;
	assert_int_equal(st_py_exe_bias(&e, 0x55d0f05ec000ULL, &bias), 0);
	assert_int_equal(bias, 0x55d0f0500000ULL);
	e.text_vaddr = 0x41f000;	/* Debian's python3.11: ET_EXEC */
	assert_int_equal(st_py_exe_bias(&e, 0x41f000, &bias), 0);
	assert_int_equal(bias, 0);
	assert_int_equal(st_py_exe_bias(&e, 0x41e000, &bias), -1);
	assert_int_equal(st_py_exe_bias(&e, 0x55d0f05ec100ULL, &bias), -1);
}

/* The daemon's template of a probed process, relocated at another exec of
 * the file, is that process's entry with that process's bias. */
static void test_make_relocate(void **state)
{
	struct st_py_proc p = sample_proc(), again;
	struct st_py_exe e;
	__u64 bias = 0;

	(void)state;
	p.from_exec = 1;
	st_py_exe_make(&e, &p, 0x7f0000000000ULL, 0xec000);
	assert_int_equal(e.tmpl.image, 0);
	assert_int_equal(e.tmpl.from_exec, 0);
	assert_int_equal(e.tmpl.runtime, 0x709220);
	assert_int_equal(st_py_exe_bias(&e, 0x560000000000ULL + 0xec000, &bias), 0);
	again = e.tmpl;
	st_py_proc_shift(&again, bias);
	assert_int_equal(again.runtime, 0x560000709220ULL);
	assert_int_equal(again.eval_end - again.eval_start, p.eval_end - p.eval_start);
	assert_int_equal(again.l.version, 0x030b);
}

/* The file alone gives the template a probe of a process running it
 * gives (a non-PIE: bias 0): its symbols, layout and text. */
static void test_template_of_file(void **state)
{
	struct st_py_exe e;
	struct st_py_elf pe;

	(void)state;
	if (access(PY311, R_OK)) {
		skip();
		return;
	}
	assert_int_equal(st_py_exe__template(PY311, &e), 0);
	assert_int_equal(st_py_elf__find(PY311, PY311, &pe), 0);
	assert_int_equal(e.text_vaddr, pe.text_vaddr);
	assert_true(e.text_vaddr != 0);
	assert_int_equal(e.tmpl.runtime, pe.runtime);
	assert_int_equal(e.tmpl.eval_start, pe.eval);
	assert_int_equal(e.tmpl.l.version, 0x030b);
	assert_int_equal(e.tmpl.text_start, 0);	/* 3.11: no text range */
	assert_int_equal(e.tmpl.image, 0);
	assert_int_equal(st_py_exe__template("/bin/true", &e), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shift),
		cmocka_unit_test(test_bias),
		cmocka_unit_test(test_make_relocate),
		cmocka_unit_test(test_template_of_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_classify.c - the page-fault data classes of bpf/classify.h, on
 * synthetic process maps laid out like a real PIE process's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bpf/classify.h"

/* exe data 0x555555558000-0x55555574e000 (file), .bss pieces up to
 * 0x555555f20000, brk heap 0x555555f40000-0x555555f61000, an anonymous mmap
 * 0x7ffff7217000-0x7ffff7dd0000, a library's data (file) at 0x7ffff7fa0000,
 * main stack 0x7ffffffde000-0x7ffffffff000 with sp 0x7fffffffe000. */
#define START_DATA 0x555555558000ULL
#define START_BRK 0x555555f40000ULL
#define BRK 0x555555f61000ULL
#define SP 0x7fffffffe000ULL
#define BP 0x7fffffffe100ULL

static struct st_fault_in fault(__u64 addr, __u64 start, __u64 end, int file, int down)
{
	return (struct st_fault_in){
		.addr = addr, .sp = SP, .bp = BP, .start_data = START_DATA,
		.start_brk = START_BRK, .brk = BRK, .vma_start = start, .vma_end = end,
		.vma_found = start != 0, .vma_file = (__u8)file, .vma_growsdown = (__u8)down,
	};
}

static void test_module_data(void **state)
{
	struct st_fault_in in = fault(0x555555560010ULL, START_DATA, 0x55555574e000ULL, 1, 0);
	__u64 leaf = 0;

	(void)state;
	assert_int_equal(st_classify_fault(&in, &leaf), ST_NODE_DATA_MODULE);
	assert_int_equal(leaf, 0x555555560010ULL);
	/* a library's file-backed data far from the executable */
	in = fault(0x7ffff7fa1008ULL, 0x7ffff7fa0000ULL, 0x7ffff7fa4000ULL, 1, 0);
	assert_int_equal(st_classify_fault(&in, &leaf), ST_NODE_DATA_MODULE);
	assert_int_equal(leaf, 0x7ffff7fa1008ULL);
}

static void test_exe_bss_split_by_madvise(void **state)
{
	__u64 leaf = 0;
	/* three anonymous pieces between the data and the brk heap */
	struct st_fault_in a = fault(0x55555574e008ULL, 0x55555574e000ULL, 0x55555574f000ULL, 0, 0);
	struct st_fault_in b = fault(0x555555800008ULL, 0x55555574f000ULL, 0x555555f1f000ULL, 0, 0);
	struct st_fault_in c = fault(0x555555f1f008ULL, 0x555555f1f000ULL, 0x555555f20000ULL, 0, 0);

	(void)state;
	assert_int_equal(st_classify_fault(&a, &leaf), ST_NODE_DATA_MODULE);
	assert_int_equal(st_classify_fault(&b, &leaf), ST_NODE_DATA_MODULE);
	assert_int_equal(leaf, 0x555555800008ULL);
	assert_int_equal(st_classify_fault(&c, &leaf), ST_NODE_DATA_MODULE);
}

static void test_brk_heap_offset(void **state)
{
	struct st_fault_in in = fault(START_BRK + 0x2010, START_BRK, BRK, 0, 0);
	__u64 leaf = 0;

	(void)state;
	assert_int_equal(st_classify_fault(&in, &leaf), ST_NODE_DATA_HEAP | ST_NODE_HEAP_BRK);
	assert_int_equal(leaf, 0x2010);
}

static void test_anonymous_mmap_is_heap_by_address(void **state)
{
	struct st_fault_in in = fault(0x7ffff7300010ULL, 0x7ffff7217000ULL, 0x7ffff7dd0000ULL, 0, 0);
	__u64 leaf = 0;

	(void)state;
	assert_int_equal(st_classify_fault(&in, &leaf), ST_NODE_DATA_HEAP);
	assert_int_equal(leaf, 0x7ffff7300010ULL);
}

static void test_stacks(void **state)
{
	__u64 leaf = 0;
	/* the main stack: VM_GROWSDOWN */
	struct st_fault_in main_stack = fault(SP - 0x40, 0x7ffffffde000ULL, 0x7ffffffff000ULL, 0, 1);
	/* a thread stack: anonymous, not growsdown, but it contains sp */
	struct st_fault_in thread = fault(0x7ffff6000100ULL, 0x7ffff5800000ULL, 0x7ffff6001000ULL,
					  0, 0);
	/* below the main stack's mapping: the stack growing */
	struct st_fault_in growing = fault(0x7ffffffd0000ULL, 0, 0, 0, 0);

	(void)state;
	assert_int_equal(st_classify_fault(&main_stack, &leaf), ST_NODE_DATA_STACK);
	assert_int_equal((__s64)leaf, (__s64)(SP - 0x40) - (__s64)(BP + 16));
	thread.sp = 0x7ffff6000000ULL;
	thread.bp = 0x7ffff6000080ULL;
	assert_int_equal(st_classify_fault(&thread, &leaf), ST_NODE_DATA_STACK);
	assert_int_equal(leaf, 0x100 - 0x90);
	assert_int_equal(st_classify_fault(&growing, &leaf), ST_NODE_DATA_STACK);
}

static void test_unmapped_far_from_sp(void **state)
{
	struct st_fault_in in = fault(0x10000ULL, 0, 0, 0, 0);
	__u64 leaf = 7;

	(void)state;
	assert_int_equal(st_classify_fault(&in, &leaf), 0);
	assert_int_equal(leaf, 7); /* untouched */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_module_data),
		cmocka_unit_test(test_exe_bss_split_by_madvise),
		cmocka_unit_test(test_brk_heap_offset),
		cmocka_unit_test(test_anonymous_mmap_is_heap_by_address),
		cmocka_unit_test(test_stacks),
		cmocka_unit_test(test_unmapped_far_from_sp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

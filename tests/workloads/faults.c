/* faults.c - page faults with a known count per class, for --event faults:
 *   touch_bss   writes one byte per page of bss_pages  (.bss, module)
 *   touch_data  writes one byte per page of data_pages (.data, module)
 *   recurse     touches its own 8 KiB frame, 2 pages a level (stack)
 *   touch_heap  writes one byte per page of a malloc'd block (heap)
 * It reports "phase NAME PAGES" lines (see workload.h) with the pages each
 * one touched for the first time. Transparent huge pages are turned off for
 * these ranges so that one fault is one page. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

#define BSS_PAGES 2000
#define DATA_PAGES 500
#define STACK_LEVELS 300
#define HEAP_PAGES 3000
#define PAGE 4096

char bss_pages[BSS_PAGES * PAGE] __attribute__((aligned(PAGE)));
char data_pages[DATA_PAGES * PAGE] __attribute__((aligned(PAGE))) = { 1 };
static volatile char sink;

static void no_thp(void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(PAGE - 1);

	madvise((void *)a, len + ((uintptr_t)p - a), MADV_NOHUGEPAGE);
}

__attribute__((noinline)) void touch_bss(void)
{
	for (int i = 0; i < BSS_PAGES; i++)
		bss_pages[(size_t)i * PAGE + 8] = (char)i;
}

__attribute__((noinline)) void touch_data(void)
{
	for (int i = 0; i < DATA_PAGES; i++)
		data_pages[(size_t)i * PAGE + 16] = (char)i;
}

__attribute__((noinline)) int recurse(int level)
{
	volatile char buf[2 * PAGE];

	buf[0] = (char)level;
	buf[PAGE] = (char)level;
	if (level > 1)
		return recurse(level - 1) + buf[PAGE];
	return buf[0];
}

__attribute__((noinline)) void touch_heap(char *block)
{
	for (int i = 0; i < HEAP_PAGES; i++)
		block[(size_t)i * PAGE] = (char)i;
}

int main(void)
{
	char *block = malloc((size_t)HEAP_PAGES * PAGE);

	if (!block)
		return 1;
	no_thp(bss_pages, sizeof(bss_pages));
	no_thp(block, (size_t)HEAP_PAGES * PAGE);
	touch_bss();
	wl_report("touch_bss", BSS_PAGES);
	touch_data();
	wl_report("touch_data", DATA_PAGES);
	sink = (char)recurse(STACK_LEVELS);
	wl_report("recurse", 2 * STACK_LEVELS);
	touch_heap(block);
	wl_report("touch_heap", HEAP_PAGES);
	free(block);
	return 0;
}

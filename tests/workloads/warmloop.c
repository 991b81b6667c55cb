/* warmloop.c - a warmed-up process for forced page faults (--force-faults):
 * a first pass touches every page of a 64 MiB heap buffer and of the 16 MiB
 * .bss array bss_array, then it loops over both, one byte per page, 4 heap
 * pages to 1 .bss page, so that after the warm-up no natural fault happens.
 * It reports "phase warm PAGES" (see workload.h) once warm, then loops for
 * WL_SECONDS (default 60) seconds of wall time. Transparent huge pages are
 * turned off for both ranges so that one fault is one page. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "workload.h"

#define PAGE 4096
#define HEAP_BYTES (64UL << 20)
#define BSS_BYTES (16UL << 20)

char bss_array[BSS_BYTES] __attribute__((aligned(PAGE)));

static void no_thp(void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(PAGE - 1);

	madvise((void *)a, len + ((uintptr_t)p - a), MADV_NOHUGEPAGE);
}

__attribute__((noinline)) void loop_heap(volatile char *heap, size_t from, size_t n)
{
	for (size_t i = from; i < from + n; i++)
		heap[i * PAGE + 64] += 1;
}

__attribute__((noinline)) void loop_bss(size_t from, size_t n)
{
	volatile char *b = bss_array;

	for (size_t i = from; i < from + n; i++)
		b[i * PAGE + 64] += 1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
	const size_t heap_pages = HEAP_BYTES / PAGE, bss_pages = BSS_BYTES / PAGE;
	const char *s = getenv("WL_SECONDS");
	double end = now() + (s ? atof(s) : 60.0);
	char *heap = aligned_alloc(PAGE, HEAP_BYTES);

	if (!heap)
		return 1;
	no_thp(heap, HEAP_BYTES);
	no_thp(bss_array, BSS_BYTES);
	memset(heap, 1, HEAP_BYTES);
	memset(bss_array, 1, BSS_BYTES);
	wl_report("warm", (double)(heap_pages + bss_pages));
	/* 4 heap pages, then 1 .bss page, in steps of 64 and 16 pages */
	while (now() < end)
		for (size_t b = 0; b < bss_pages; b += 16) {
			loop_heap(heap, b * 4, 64);
			loop_bss(b, 16);
		}
	free(heap);
	return 0;
}

/* fuzz_perfmap.c - the /tmp/perf-PID.map parser (binsym/perfmap.c) on
 * arbitrary bytes: it may skip lines, never crash, read past the input or
 * leak; what it keeps is sorted, disjoint ranges whose lookups agree.
 * Differential: the input cut after one of its newlines and given in two
 * appends (the second part painted over the first's ranges) must name
 * every address as one parse of the whole does. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "binsym/perfmap.h"

#define MAX_ENTRIES 64

static __u64 probe_at(const uint8_t *data, size_t size, size_t i)
{
	__u64 v = 0;

	memcpy(&v, data + i, size - i < 8 ? size - i : 8);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_perfmap_stats st = {};
	struct st_perfmap *whole = st_perfmap__new(), *parts = st_perfmap__new();
	/* copies of exactly their size: ASan catches a read past them */
	char *buf = malloc(size ? size : 1), *first;
	const uint8_t *nl = size ? memchr(data + size / 2, '\n', size - size / 2) : NULL;
	size_t cut = nl ? (size_t)(nl - data) + 1 : 0;

	if (!whole || !parts || !buf)
		abort();
	memcpy(buf, data, size);
	if (st_perfmap__parse(whole, buf, size, MAX_ENTRIES, &st))
		abort();
	if (st_perfmap__count(whole) > 2 * MAX_ENTRIES)
		abort();
	first = malloc(cut ? cut : 1);
	if (!first)
		abort();
	memcpy(first, data, cut);
	if (st_perfmap__append(parts, first, cut, MAX_ENTRIES, &st, NULL) ||
	    st_perfmap__append(parts, buf + cut, size - cut, MAX_ENTRIES, &st, NULL))
		abort();
	/* probe at addresses taken from the input, and next to them */
	for (size_t i = 0; i < size && i < 512; i += 4) {
		__u64 p = probe_at(data, size, i), s1 = 0, s2 = 0;

		for (int d = -1; d <= 1; d++) {
			const char *a = st_perfmap__find(whole, p + (__u64)d, &s1);
			const char *b = st_perfmap__find(parts, p + (__u64)d, &s2);

			if (a && (s1 > p + (__u64)d || strlen(a) > ST_PERFMAP_MAX_NAME))
				abort();
			if (!a != !b || (a && (strcmp(a, b) || s1 != s2)))
				abort();
		}
	}
	st_perfmap__free(whole);
	st_perfmap__free(parts);
	free(buf);
	free(first);
	return 0;
}

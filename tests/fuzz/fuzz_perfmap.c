/* fuzz_perfmap.c - the /tmp/perf-PID.map parser (symbolizer/perfmap.c) on
 * arbitrary bytes: it may skip lines, never crash, read past the input or
 * leak; what it keeps is sorted, disjoint ranges whose lookups agree. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_perfmap_stats st = {};
	struct st_perfmap *m = st_perfmap__new();
	/* a copy of exactly size bytes: ASan catches a read past it */
	char *buf = malloc(size ? size : 1);
	__u64 probe = 0;

	if (!m || !buf)
		abort();
	memcpy(buf, data, size);
	if (st_perfmap__parse(m, buf, size, 64, &st))
		abort();
	if (st_perfmap__count(m) > 2 * 64)
		abort();
	/* probe at addresses taken from the input */
	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		__u64 start = 0;
		const char *name;

		memcpy(&probe, data + i, 8);
		name = st_perfmap__find(m, probe, &start);
		if (name && (start > probe || strlen(name) > ST_PERFMAP_MAX_NAME))
			abort();
	}
	st_perfmap__free(m);
	free(buf);
	return 0;
}

/* fuzz_procmaps.c - the /proc/PID/maps line parser (user/collect/procmaps.c) on
 * arbitrary text, one line at a time: it may refuse a line, never crash or
 * read past it; a line it accepts has start <= end and a path inside it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/collect/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;

	while (p < end) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		char *line = malloc(len + 1);
		struct st_maps_line l;

		if (!line)
			abort();
		memcpy(line, p, len);
		line[len] = '\0';
		if (st_procmaps__parse_line(line, &l) == 0) {
			if (l.start > l.end)
				abort();
			if (l.path && (l.path < line || l.path > line + len))
				abort();
		}
		free(line);
		p += len + 1;
	}
	return 0;
}

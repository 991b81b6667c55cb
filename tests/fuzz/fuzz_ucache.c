/* fuzz_ucache.c - the unwind table cache's reader (user/collect/unwind/unwind_cache.c) on
 * arbitrary file contents: a file is taken only whole and well-formed
 * (rows sorted, known kinds), never read past, never crashes. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/collect/unwind/unwind_cache.h"

#define KEY "b:00112233445566778899aabbccddeeff00112233"

static struct st_ucache *cache;
static char path[256];

/* A cache in a private directory, and the name of KEY's file in it. */
static void init(void)
{
	static char dir[] = "/tmp/st-fuzz-ucache-XXXXXX";
	struct st_unwind_row row = { .pc = 1, .kind = ST_UNW_RSP, .off = 8 };
	FILE *p;
	char cmd[128];

	if (!mkdtemp(dir))
		abort();
	cache = st_ucache__new(dir, 1 << 30, false);
	if (!cache)
		abort();
	st_ucache__put(cache, KEY, &row, 1, 0);
	snprintf(cmd, sizeof(cmd), "ls %s/*.cfi", dir);
	p = popen(cmd, "r");
	if (!p || !fgets(path, sizeof(path), p))
		abort();
	path[strcspn(path, "\n")] = '\0';
	pclose(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_unwind_row *rows = NULL;
	size_t n = 0, unsupported = 0;
	int fd;

	if (!cache)
		init();
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
	if (st_ucache__get(cache, KEY, &rows, &n, &unsupported) == 0) {
		if (!n || n > ST_UNWIND_MAX_MODULE_ROWS)
			abort();
		for (size_t i = 1; i < n; i++)
			if (rows[i].pc < rows[i - 1].pc)
				abort();
		free(rows);
	}
	return 0;
}

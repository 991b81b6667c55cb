/* fuzz_pprof.c - the pprof reader (user/model/pprof_read.c) on arbitrary
 * bytes (gzip-compressed or not), then every report writer on what it
 * read. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tests/fuzz/writers.h"
#include "user/model/pprof_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_profile *p = NULL;
	char err[512];

	if (st_pprof__read(data, size, "fuzz", &p, err, sizeof(err)) == 0)
		fuzz_write_all(p);
	st_profile__free(p);
	return 0;
}

/* fuzz_folded.c - the folded-stacks reader (user/model/folded.c) on arbitrary
 * bytes, then every report writer on what it read. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tests/fuzz/writers.h"
#include "user/model/folded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_profile *p = NULL;
	char err[512];
	FILE *in;

	if (!size)
		return 0;
	in = fmemopen((void *)data, size, "r");
	if (!in)
		abort();
	if (st_folded__read(in, "fuzz", &p, err, sizeof(err)) == 0)
		fuzz_write_all(p);
	st_profile__free(p);
	fclose(in);
	return 0;
}

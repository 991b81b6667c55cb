/* fuzz_ffstate.c - the --force-faults state file parser
 * (user/collect/faults/forcefault.c) on arbitrary bytes: it may refuse, never crash
 * or read past the buffer; what it accepts formats back to a file it
 * accepts again, with the same content (identities included). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/collect/faults/forcefault.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_ffstate a, b;
	char buf[256];
	int n;

	if (st_ffstate__parse((const char *)data, size, &a))
		return 0;
	if (a.pid <= 0 || !a.boot[0] || (a.swapon && a.zram < 0) || (a.added != (a.zram >= 0)))
		abort();
	n = st_ffstate__format(&a, buf, sizeof(buf));
	if (n < 0 || st_ffstate__parse(buf, (size_t)n, &b) || a.pid != b.pid || a.zram != b.zram ||
	    a.added != b.added || a.swapon != b.swapon || a.diskseq != b.diskseq ||
	    a.ino != b.ino || strcmp(a.boot, b.boot) || strcmp(a.uuid, b.uuid))
		abort();
	return 0;
}

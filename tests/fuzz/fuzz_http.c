/* fuzz_http.c - the live endpoint's request parser (user/output/http_parse.c)
 * on arbitrary bytes, fed whole and in two pieces as a socket would give
 * them: a complete head is never longer than its input, a refusal is one
 * of the statuses the header lists, the parameters are bounded strings. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/output/http_parse.h"

static void check(const uint8_t *data, size_t size)
{
	struct st_http_request r;
	int n = st_http__parse((const char *)data, size, &r);

	if (n > 0) {
		if ((size_t)n > size || (size_t)n > ST_HTTP_MAX_HEAD || r.nparams > ST_HTTP_MAX_PARAMS)
			abort();
		if (strlen(r.path) >= sizeof(r.path) || r.path[0] != '/')
			abort();
		for (size_t i = 0; i < r.nparams; i++)
			if (strlen(r.params[i].name) >= ST_HTTP_MAX_NAME ||
			    strlen(r.params[i].value) >= ST_HTTP_MAX_VALUE)
				abort();
		(void)st_http__param(&r, "seconds");
	} else if (n < 0 && n != -ST_HTTP_BAD && n != -ST_HTTP_URI_TOO_LONG &&
		   n != -ST_HTTP_HEAD_TOO_LARGE && n != -ST_HTTP_VERSION) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size);
	if (size > 1)
		check(data, size / 2);	/* a head cut short: waits or is refused */
	return 0;
}

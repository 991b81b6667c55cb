/* fuzz_http.c - the live endpoint's request parser (user/output/http_parse.c)
 * on arbitrary bytes, fed whole and in two pieces as a socket would give
 * them: a complete head is never longer than its input, a refusal is one
 * of the statuses the header lists, the parameters and the Authorization
 * value are bounded strings (the value trimmed, without control
 * characters but tab), and a bearer token check of that value never
 * reads past it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/output/http_parse.h"
#include "user/output/http_policy.h"

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
		if (!r.has_auth && r.authorization[0])
			abort();
		if (r.has_auth) {
			size_t a = strnlen(r.authorization, sizeof(r.authorization));

			if (a >= sizeof(r.authorization) ||
			    (a && (r.authorization[0] == ' ' || r.authorization[0] == '\t' ||
				   r.authorization[a - 1] == ' ' || r.authorization[a - 1] == '\t')))
				abort();
			for (size_t i = 0; i < a; i++)
				if (((unsigned char)r.authorization[i] < 0x20 &&
				     r.authorization[i] != '\t') ||
				    (unsigned char)r.authorization[i] == 0x7f)
					abort();
			(void)st_http_policy__bearer_ok("s3cret", 6, r.authorization);
		}
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

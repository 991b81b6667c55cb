/* http_parse.h - an HTTP/1.x request head, parsed: the live endpoint's
 * (user/output/http.h) reader of hostile bytes, pure (no I/O, no
 * allocation), bounded by the sizes below.
 * Owner: user/output/http_parse.c.
 *
 * Accepted: "METHOD SP /path[?query] SP HTTP/1.0|1.1" CRLF (or LF), header
 * lines "Name: value" (names of token characters; values without control
 * characters but tab), an empty line. The query is split at '&' into
 * name=value pairs, percent and '+' decoded; a pair whose decoding holds a
 * NUL or a control character, or names too long, refuses the request.
 * Headers are checked, and only Authorization is kept (its value, without
 * the white space around it: the bearer token of a remote scraper); a
 * second Authorization header refuses the request, one longer than
 * ST_HTTP_MAX_AUTH too. The endpoint answers each connection once and reads
 * no body.
 */
#ifndef STACKTREE_HTTP_PARSE_H
#define STACKTREE_HTTP_PARSE_H

#include <stddef.h>

#define ST_HTTP_MAX_HEAD 8192		/* request line + headers, bytes */
#define ST_HTTP_MAX_HEADERS 64		/* header lines */
#define ST_HTTP_MAX_PATH 256		/* the path (without the query) */
#define ST_HTTP_MAX_PARAMS 16		/* query parameters */
#define ST_HTTP_MAX_NAME 32		/* a parameter's name, decoded, with its NUL */
#define ST_HTTP_MAX_VALUE 512		/* a parameter's value, decoded, with its NUL */
#define ST_HTTP_MAX_AUTH 1024		/* the Authorization header's value, with its NUL */

struct st_http_param {
	char name[ST_HTTP_MAX_NAME];
	char value[ST_HTTP_MAX_VALUE];
};

struct st_http_request {
	char method[16];
	char path[ST_HTTP_MAX_PATH];
	struct st_http_param params[ST_HTTP_MAX_PARAMS];
	size_t nparams;
	int minor;			/* HTTP/1.minor */
	/* the Authorization header's value, trimmed; "" without one (has_auth
	 * tells an empty one apart) */
	char authorization[ST_HTTP_MAX_AUTH];
	int has_auth;
};

/* What st_http__parse() refused, as HTTP statuses. */
enum st_http_refusal {
	ST_HTTP_BAD = 400,		/* malformed */
	ST_HTTP_URI_TOO_LONG = 414,	/* path, parameters or a value over the bounds */
	ST_HTTP_HEAD_TOO_LARGE = 431,	/* no end of the head within ST_HTTP_MAX_HEAD, too
					 * many header lines, an Authorization value over
					 * ST_HTTP_MAX_AUTH */
	ST_HTTP_VERSION = 505,		/* not HTTP/1.x */
};

/* Parse the head at the start of buf (len bytes, not NUL-terminated).
 * Returns the head's length (> 0, up to and including its empty line) and
 * fills *req; 0 when the head is not complete yet (more bytes may finish
 * it: len < ST_HTTP_MAX_HEAD and nothing seen is wrong so far); or minus an
 * enum st_http_refusal. */
int st_http__parse(const char *buf, size_t len, struct st_http_request *req);

/* The value of the first parameter called name, or NULL. */
const char *st_http__param(const struct st_http_request *req, const char *name);

#endif

/* test_http_parse.c - the live endpoint's request parser
 * (user/output/http_parse.h): complete and partial heads, query decoding,
 * the Authorization header kept, and every refusal (malformed lines, bare
 * CR, NUL, bounds, a second Authorization). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "user/output/http_parse.h"

static int parse(const char *s, struct st_http_request *r)
{
	return st_http__parse(s, strlen(s), r);
}

static void test_complete_head(void **state)
{
	struct st_http_request r;
	const char *s = "GET /debug/pprof/profile?seconds=2&comm=my%20app&pid=42 HTTP/1.1\r\n"
			"Host: 127.0.0.1:6060\r\nUser-Agent: Go-http-client/1.1\r\n"
			"Accept-Encoding: gzip\r\n\r\nextra";

	(void)state;
	assert_int_equal(parse(s, &r), (int)(strlen(s) - strlen("extra")));
	assert_string_equal(r.method, "GET");
	assert_string_equal(r.path, "/debug/pprof/profile");
	assert_int_equal(r.minor, 1);
	assert_int_equal(r.nparams, 3);
	assert_string_equal(st_http__param(&r, "seconds"), "2");
	assert_string_equal(st_http__param(&r, "comm"), "my app");
	assert_string_equal(st_http__param(&r, "pid"), "42");
	assert_null(st_http__param(&r, "cgroup"));
}

static void test_lf_only_and_no_query(void **state)
{
	struct st_http_request r;

	(void)state;
	assert_true(parse("GET /metrics HTTP/1.0\n\n", &r) > 0);
	assert_string_equal(r.path, "/metrics");
	assert_int_equal(r.minor, 0);
	assert_int_equal(r.nparams, 0);
}

static void test_query_decoding(void **state)
{
	struct st_http_request r;

	(void)state;
	assert_true(parse("GET /x?cgroup=%2Fsystem.slice%2Fa.service&b=1+2&flag&&=v&c=#frag "
			  "HTTP/1.1\r\n\r\n", &r) > 0);
	assert_string_equal(st_http__param(&r, "cgroup"), "/system.slice/a.service");
	assert_string_equal(st_http__param(&r, "b"), "1 2");
	assert_string_equal(st_http__param(&r, "flag"), "");
	assert_string_equal(st_http__param(&r, ""), "v");
	assert_string_equal(st_http__param(&r, "c"), "");
}

static void test_incomplete(void **state)
{
	struct st_http_request r;
	const char *s = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

	(void)state;
	for (size_t n = 0; n < strlen(s); n++)	/* every prefix waits for more */
		assert_int_equal(st_http__parse(s, n, &r), 0);
	assert_int_equal(st_http__parse(s, strlen(s), &r), (int)strlen(s));
}

static void test_refusals(void **state)
{
	static const struct {
		const char *s;
		int want;
	} cases[] = {
		{ "GET\r\n\r\n", -ST_HTTP_BAD },
		{ "GET  /metrics HTTP/1.1\r\n\r\n", -ST_HTTP_BAD },
		{ "GET metrics HTTP/1.1\r\n\r\n", -ST_HTTP_BAD },
		{ "GET http://h/metrics HTTP/1.1\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /metrics HTTP/1.1 \r\n\r\n", -ST_HTTP_BAD },
		{ "GET /metrics HTTQ/1.1\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /metrics HTTP/2.0\r\n\r\n", -ST_HTTP_VERSION },
		{ "G(T /metrics HTTP/1.1\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /met%41rics HTTP/1.1\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /x?a=%4 HTTP/1.1\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /x?a=%zz HTTP/1.1\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /x?a=%00 HTTP/1.1\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /x?a=%0a HTTP/1.1\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /metrics HTTP/1.1\r\nNo colon\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /metrics HTTP/1.1\r\n: empty name\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /metrics HTTP/1.1\r\nA: b\rc\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /metrics HTTP/1.1\r\nA: b\x01\r\n\r\n", -ST_HTTP_BAD },
		{ "GET /metrics HTTP/1.1\r\n\r\n", 25 },
	};
	struct st_http_request r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = parse(cases[i].s, &r);

		if (got != cases[i].want)
			fail_msg("case %zu (%s): got %d, want %d", i, cases[i].s, got, cases[i].want);
	}
	/* a NUL inside a line */
	assert_int_equal(st_http__parse("GET /a\0b HTTP/1.1\r\n\r\n", 21, &r), -ST_HTTP_BAD);
}

static void test_bounds(void **state)
{
	static char buf[ST_HTTP_MAX_HEAD + 64];
	struct st_http_request r;
	size_t n;

	(void)state;
	/* a head that never ends: refused once the bound is reached */
	n = (size_t)snprintf(buf, sizeof(buf), "GET /metrics HTTP/1.1\r\n");
	while (n + 12 < sizeof(buf))
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "X-Pad: 1234\r\n");
	assert_int_equal(st_http__parse(buf, n, &r), -ST_HTTP_HEAD_TOO_LARGE);
	/* one line longer than the bound */
	memset(buf, 'a', sizeof(buf));
	memcpy(buf, "GET /", 5);
	assert_int_equal(st_http__parse(buf, sizeof(buf), &r), -ST_HTTP_HEAD_TOO_LARGE);
	/* too many headers */
	n = (size_t)snprintf(buf, sizeof(buf), "GET /metrics HTTP/1.1\r\n");
	for (int i = 0; i <= ST_HTTP_MAX_HEADERS; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "A: b\r\n");
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\r\n");
	assert_int_equal(st_http__parse(buf, n, &r), -ST_HTTP_HEAD_TOO_LARGE);
	/* a long path, too many parameters, a long value */
	n = (size_t)snprintf(buf, sizeof(buf), "GET /%0300d HTTP/1.1\r\n\r\n", 0);
	assert_int_equal(st_http__parse(buf, n, &r), -ST_HTTP_URI_TOO_LONG);
	n = (size_t)snprintf(buf, sizeof(buf), "GET /x?");
	for (int i = 0; i <= ST_HTTP_MAX_PARAMS; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "a=%d&", i);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, " HTTP/1.1\r\n\r\n");
	assert_int_equal(st_http__parse(buf, n, &r), -ST_HTTP_URI_TOO_LONG);
	n = (size_t)snprintf(buf, sizeof(buf), "GET /x?v=%0600d HTTP/1.1\r\n\r\n", 0);
	assert_int_equal(st_http__parse(buf, n, &r), -ST_HTTP_URI_TOO_LONG);
	n = (size_t)snprintf(buf, sizeof(buf), "GET /x?%040d=1 HTTP/1.1\r\n\r\n", 0);
	assert_int_equal(st_http__parse(buf, n, &r), -ST_HTTP_URI_TOO_LONG);
}

static void test_authorization(void **state)
{
	static char buf[ST_HTTP_MAX_HEAD];
	struct st_http_request r;
	size_t n;

	(void)state;
	assert_true(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &r) > 0);
	assert_false(r.has_auth);
	assert_string_equal(r.authorization, "");
	/* any case of the name; white space around the value dropped */
	assert_true(parse("GET /metrics HTTP/1.1\r\nauthorization: \t Bearer abc \t\r\n\r\n",
			  &r) > 0);
	assert_true(r.has_auth);
	assert_string_equal(r.authorization, "Bearer abc");
	assert_true(parse("GET /metrics HTTP/1.1\r\nAUTHORIZATION:Bearer  a b\r\n\r\n", &r) > 0);
	assert_string_equal(r.authorization, "Bearer  a b");
	assert_true(parse("GET /metrics HTTP/1.1\r\nAuthorization:\r\n\r\n", &r) > 0);
	assert_true(r.has_auth);
	assert_string_equal(r.authorization, "");
	/* a name that only starts like it is another header */
	assert_true(parse("GET /metrics HTTP/1.1\r\nAuthorizationX: y\r\n\r\n", &r) > 0);
	assert_false(r.has_auth);
	/* two: refused */
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nAuthorization: Bearer a\r\n"
			       "Authorization: Bearer b\r\n\r\n", &r), -ST_HTTP_BAD);
	/* the longest value kept, and one byte more */
	n = (size_t)snprintf(buf, sizeof(buf), "GET /metrics HTTP/1.1\r\nAuthorization: %0*d\r\n\r\n",
			     ST_HTTP_MAX_AUTH - 1, 0);
	assert_int_equal(st_http__parse(buf, n, &r), (int)n);
	assert_int_equal(strlen(r.authorization), ST_HTTP_MAX_AUTH - 1);
	n = (size_t)snprintf(buf, sizeof(buf), "GET /metrics HTTP/1.1\r\nAuthorization: %0*d\r\n\r\n",
			     ST_HTTP_MAX_AUTH, 0);
	assert_int_equal(st_http__parse(buf, n, &r), -ST_HTTP_HEAD_TOO_LARGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_complete_head),
		cmocka_unit_test(test_lf_only_and_no_query),
		cmocka_unit_test(test_query_decoding),
		cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_authorization),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* http_parse.c - an HTTP/1.x request head, parsed from hostile bytes: one
 * pass, bounded by the head's size, no recursion, no allocation (see
 * http_parse.h). */
#include "user/output/http_parse.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

static bool is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode s[0..n) (percent, '+') into out (cap bytes with the NUL). 0, or
 * minus a refusal. */
static int decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return -ST_HTTP_BAD;
			hi = hexval((unsigned char)s[i + 1]);
			lo = hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0)
				return -ST_HTTP_BAD;
			c = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		if (c < 0x20 || c == 0x7f)
			return -ST_HTTP_BAD;
		if (o + 1 >= cap)
			return -ST_HTTP_URI_TOO_LONG;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* The query q[0..n): name=value pairs split at '&'. */
static int parse_query(const char *q, size_t n, struct st_http_request *req)
{
	size_t i = 0;

	while (i < n) {
		size_t end = i, eq;
		struct st_http_param *p;
		int err;

		while (end < n && q[end] != '&')
			end++;
		if (end > i) {
			if (req->nparams >= ST_HTTP_MAX_PARAMS)
				return -ST_HTTP_URI_TOO_LONG;
			p = &req->params[req->nparams];
			for (eq = i; eq < end && q[eq] != '='; eq++)
				;
			if ((err = decode(q + i, eq - i, p->name, sizeof(p->name))) ||
			    (err = decode(q + eq + (eq < end), end - eq - (eq < end), p->value,
					  sizeof(p->value))))
				return err;
			req->nparams++;
		}
		i = end + 1;
	}
	return 0;
}

/* The request line l[0..n) (without its line end). */
static int parse_request_line(const char *l, size_t n, struct st_http_request *req)
{
	size_t i = 0, start, qs;

	for (start = i; i < n && is_tchar((unsigned char)l[i]); i++)
		;
	if (i == start || i >= n || l[i] != ' ')
		return -ST_HTTP_BAD;
	if (i - start >= sizeof(req->method))
		return -ST_HTTP_BAD;
	memcpy(req->method, l + start, i - start);
	req->method[i - start] = '\0';
	start = ++i;
	while (i < n && l[i] != ' ') {
		unsigned char c = (unsigned char)l[i];

		if (c <= 0x20 || c >= 0x7f)
			return -ST_HTTP_BAD;
		i++;
	}
	if (i == start || i >= n || l[start] != '/')
		return -ST_HTTP_BAD;
	for (qs = start; qs < i && l[qs] != '?'; qs++)
		;
	if (qs - start >= sizeof(req->path))
		return -ST_HTTP_URI_TOO_LONG;
	for (size_t k = start; k < qs; k++)	/* a path is matched as it is: no escapes */
		if (l[k] == '%' || l[k] == '#')
			return -ST_HTTP_BAD;
	memcpy(req->path, l + start, qs - start);
	req->path[qs - start] = '\0';
	if (qs < i) {
		size_t qe = qs + 1;
		int err;

		while (qe < i && l[qe] != '#')
			qe++;
		if ((err = parse_query(l + qs + 1, qe - qs - 1, req)))
			return err;
	}
	i++;	/* the space */
	if (n - i != 8 || memcmp(l + i, "HTTP/", 5) || l[i + 6] != '.' ||
	    l[i + 5] < '0' || l[i + 5] > '9' || l[i + 7] < '0' || l[i + 7] > '9')
		return -ST_HTTP_BAD;
	if (l[i + 5] != '1')
		return -ST_HTTP_VERSION;
	req->minor = l[i + 7] - '0';
	return 0;
}

/* A header line l[0..n): a token, ':', a value without control
 * characters. Authorization's value, trimmed, into req. */
static int check_header(const char *l, size_t n, struct st_http_request *req)
{
	static const char auth[] = "authorization";
	size_t i = 0, v, e;

	while (i < n && is_tchar((unsigned char)l[i]))
		i++;
	if (i == 0 || i >= n || l[i] != ':')
		return -ST_HTTP_BAD;
	for (v = i + 1; v < n; v++) {
		unsigned char c = (unsigned char)l[v];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return -ST_HTTP_BAD;
	}
	if (i != sizeof(auth) - 1 || strncasecmp(l, auth, i))
		return 0;
	if (req->has_auth)
		return -ST_HTTP_BAD;	/* two: which one counts is not ours to guess */
	for (v = i + 1; v < n && (l[v] == ' ' || l[v] == '\t'); v++)
		;
	for (e = n; e > v && (l[e - 1] == ' ' || l[e - 1] == '\t'); e--)
		;
	if (e - v >= sizeof(req->authorization))
		return -ST_HTTP_HEAD_TOO_LARGE;
	memcpy(req->authorization, l + v, e - v);
	req->authorization[e - v] = '\0';
	req->has_auth = 1;
	return 0;
}

int st_http__parse(const char *buf, size_t len, struct st_http_request *req)
{
	size_t pos = 0, lines = 0;

	memset(req, 0, sizeof(*req));
	if (len > ST_HTTP_MAX_HEAD)
		len = ST_HTTP_MAX_HEAD;
	for (;;) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n, next;
		int err;

		if (!nl)
			return len >= ST_HTTP_MAX_HEAD ? -ST_HTTP_HEAD_TOO_LARGE : 0;
		next = (size_t)(nl - buf) + 1;
		n = next - 1 - pos;
		if (n && buf[pos + n - 1] == '\r')
			n--;
		if (memchr(buf + pos, '\r', n) || memchr(buf + pos, '\0', n))
			return -ST_HTTP_BAD;	/* a bare CR, a NUL: request smuggling's tools */
		if (lines == 0)
			err = parse_request_line(buf + pos, n, req);
		else if (n == 0)
			return (int)next;
		else if (lines > ST_HTTP_MAX_HEADERS)
			err = -ST_HTTP_HEAD_TOO_LARGE;
		else
			err = check_header(buf + pos, n, req);
		if (err)
			return err;
		lines++;
		pos = next;
	}
}

const char *st_http__param(const struct st_http_request *req, const char *name)
{
	for (size_t i = 0; i < req->nparams; i++)
		if (strcmp(req->params[i].name, name) == 0)
			return req->params[i].value;
	return NULL;
}

/* jsonstr.c - see jsonstr.h. */
#include "user/model/jsonstr.h"

#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "common/textesc.h"

/* Length of the valid UTF-8 sequence at s, or 0 (the one rule:
 * common/textesc.h). */
static size_t seq_len(const unsigned char *s)
{
	return st_utf8__seq_len(s, SIZE_MAX);
}

bool st_json__valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = seq_len(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

json_object *st_json__string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	json_object *o;
	char *buf, *q;

	if (!s)
		return NULL;
	if (st_json__valid_utf8(s))
		return json_object_new_string(s);
	buf = malloc(strlen(s) * 3 + 1);	/* U+FFFD is 3 bytes */
	if (!buf)
		return NULL;
	for (q = buf; *p;) {
		size_t n = seq_len(p);

		if (n) {
			memcpy(q, p, n);
			q += n;
			p += n;
		} else {
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			p++;
		}
	}
	*q = '\0';
	o = json_object_new_string(buf);
	free(buf);
	return o;
}

json_object *st_json__raw(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	json_object *o;
	char *buf, *q;

	if (!s || st_json__valid_utf8(s))
		return NULL;
	buf = malloc(strlen(s) * 2 + 1);
	if (!buf)
		return NULL;
	for (q = buf; *p; p++) {
		if (*p < 0x80) {
			*q++ = (char)*p;
		} else {
			*q++ = (char)(0xc0 | *p >> 6);
			*q++ = (char)(0x80 | (*p & 0x3f));
		}
	}
	*q = '\0';
	o = json_object_new_string(buf);
	free(buf);
	return o;
}

char *st_json__unraw(const char *utf8)
{
	const unsigned char *p = (const unsigned char *)utf8;
	char *buf = malloc(strlen(utf8) + 1), *q = buf;

	if (!buf)
		return NULL;
	while (*p) {
		if (*p < 0x80) {
			*q++ = (char)*p++;
		} else if ((*p == 0xc2 || *p == 0xc3) && (p[1] & 0xc0) == 0x80) {
			*q++ = (char)((*p & 0x03) << 6 | (p[1] & 0x3f));
			p += 2;
		} else {
			free(buf);
			errno = EINVAL;
			return NULL;
		}
	}
	*q = '\0';
	return buf;
}

/* One code point's bytes (a valid sequence) or an escape. */
static void put_escaped(FILE *out, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) {	/* a C1 control, as \u0080-\u009f */
		fputs("\\u00", out);
		fputc(hex[p[1] >> 4], out);
		fputc(hex[p[1] & 15], out);
		return;
	}
	if (n > 1) {
		fwrite(p, 1, n, out);
		return;
	}
	switch (*p) {
	case '"':
		fputs("\\\"", out);
		break;
	case '\\':
		fputs("\\\\", out);
		break;
	case '\n':
		fputs("\\n", out);
		break;
	case '\t':
		fputs("\\t", out);
		break;
	default:
		if (*p < 0x20 || *p == 0x7f) {
			fputs("\\u00", out);
			fputc(hex[*p >> 4], out);
			fputc(hex[*p & 15], out);
		} else {
			fputc(*p, out);
		}
	}
}

int st_json__put(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s)
		return fputs("null", out) < 0 ? -EIO : 0;
	fputc('"', out);
	while (*p) {
		size_t n = seq_len(p);

		if (n) {
			put_escaped(out, p, n);
			p += n;
		} else {
			fputs("\xef\xbf\xbd", out);
			p++;
		}
	}
	return fputc('"', out) == EOF ? -EIO : 0;
}

int st_json__put_raw(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	for (; *p; p++) {
		unsigned char cp[2] = { (unsigned char)(0xc0 | *p >> 6),
					(unsigned char)(0x80 | (*p & 0x3f)) };

		put_escaped(out, *p < 0x80 ? p : cp, *p < 0x80 ? 1 : 2);	/* U+0000-U+00FF */
	}
	return fputc('"', out) == EOF ? -EIO : 0;
}

/* jsonstr.c - see jsonstr.h. */
#include "user/model/jsonstr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t seq_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
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
		if (*p < 0x20) {
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
		if (*p < 0x80) {
			put_escaped(out, p, 1);
		} else {
			fputc(0xc0 | *p >> 6, out);
			fputc(0x80 | (*p & 0x3f), out);
		}
	}
	return fputc('"', out) == EOF ? -EIO : 0;
}

/* textesc.c - the escape of names in text reports and the UTF-8 validity
 * rule; see textesc.h. */
#include "common/textesc.h"

#include <errno.h>
#include <string.h>

size_t st_utf8__seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c;
	size_t n;
	unsigned cp;

	if (!avail)
		return 0;
	c = s[0];
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
		return 0;	/* a continuation byte, c0/c1 (overlong) or f5-ff */
	}
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at a NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;	/* overlong, past U+10FFFF, a surrogate */
	return n;
}

size_t st_textesc__control(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	if (n >= 1 && (s[0] < 0x20 || s[0] == 0x7f))
		return 1;
	if (n >= 2 && s[0] == 0xc2 && s[1] >= 0x80 && s[1] < 0xa0)
		return 2;
	return 0;
}

size_t st_textesc__next(const char *str, size_t n, unsigned flags, char esc[ST_TEXTESC_UNIT])
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t len = st_utf8__seq_len(s, n);

	esc[0] = '\0';
	if (len && !st_textesc__control(str, len)) {	/* printable */
		if (s[0] == '\\' && !(flags & ST_TEXTESC_KEEP_BACKSLASH))
			memcpy(esc, "\\\\", 3);
		return len;
	}
	/* a control byte, the first byte of a C1 control, or a bad byte */
	esc[0] = '\\';
	esc[1] = 'x';
	esc[2] = hex[s[0] >> 4];
	esc[3] = hex[s[0] & 15];
	esc[4] = '\0';
	return 1;
}

bool st_textesc__plain(const char *s, size_t n, unsigned flags)
{
	char esc[ST_TEXTESC_UNIT];

	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\') {
			i++;	/* printable ASCII, the common case: no call */
			continue;
		}
		i += st_textesc__next(s + i, n - i, flags, esc);
		if (esc[0])
			return false;
	}
	return true;
}

size_t st_textesc__len(const char *s, size_t n, unsigned flags)
{
	char esc[ST_TEXTESC_UNIT];
	size_t out = 0;

	for (size_t i = 0; i < n;) {
		size_t k = st_textesc__next(s + i, n - i, flags, esc);

		out += esc[0] ? strlen(esc) : k;
		i += k;
	}
	return out;
}

size_t st_textesc__buf(char *dst, size_t cap, const char *s, size_t n, unsigned flags)
{
	char esc[ST_TEXTESC_UNIT];
	size_t out = 0;
	bool full = false;

	if (cap)
		dst[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t k = st_textesc__next(s + i, n - i, flags, esc);
		const char *unit = esc[0] ? esc : s + i;
		size_t ulen = esc[0] ? strlen(esc) : k;

		if (!full && out + ulen < cap)
			memcpy(dst + out, unit, ulen);
		else
			full = true;	/* nothing after a unit that did not fit */
		if (!full)
			dst[out + ulen] = '\0';
		out += ulen;
		i += k;
	}
	return out;
}

const char *st_textesc__str(const char *s, char *buf, size_t cap)
{
	size_t n = s ? strlen(s) : 0;

	if (st_textesc__buf(buf, cap, s ? s : "", n, 0) >= cap && cap >= 4) {
		st_textesc__buf(buf, cap - 3, s, n, 0);
		strcat(buf, "...");
	}
	return buf;
}

int st_textesc__putn(FILE *out, const char *s, size_t n, unsigned flags)
{
	char esc[ST_TEXTESC_UNIT];
	size_t run = 0;	/* kept bytes not yet written, ending at i */

	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t k;

		if (c >= 0x20 && c < 0x7f && (c != '\\' || flags & ST_TEXTESC_KEEP_BACKSLASH)) {
			run++;	/* printable ASCII, the common case: no call */
			i++;
			continue;
		}
		k = st_textesc__next(s + i, n - i, flags, esc);
		if (!esc[0]) {
			run += k;
		} else {
			if (run && fwrite(s + i - run, 1, run, out) != run)
				return -EIO;
			run = 0;
			if (fputs(esc, out) < 0)
				return -EIO;
		}
		i += k;
	}
	if (run && fwrite(s + n - run, 1, run, out) != run)
		return -EIO;
	return 0;
}

int st_textesc__put(FILE *out, const char *s)
{
	return s ? st_textesc__putn(out, s, strlen(s), 0) : 0;
}

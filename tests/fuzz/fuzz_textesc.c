/* fuzz_textesc.c - the escape of names in text reports (common/textesc.c)
 * on arbitrary bytes. Invariants: the output has no byte under 0x20, no
 * DEL, no C1 control and is valid UTF-8 (checked by a validator of its own,
 * not the one under test); it is at most ST_TEXTESC_GROWTH times the input;
 * it decodes back to the input exactly (\\ and \xNN, the rest literal); the
 * length, stream and buffer forms agree; a buffer of any size holds a
 * NUL-terminated prefix of the whole, cut between units, within its bound.
 * The first input byte picks the buffer size and the flags. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/textesc.h"

/* An independent UTF-8 check: every code point well formed, shortest
 * form, no surrogate, at most U+10FFFF, and none in C0, DEL or C1. */
static bool clean_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], cp, len;

		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return false;
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (i + len > n)
			return false;
		for (unsigned k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
		    (cp >= 0x80 && cp <= 0x9f))
			return false;
		i += len;
	}
	return true;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The escape undone; false when out is not one escape's output. */
static bool decode(const char *out, size_t n, bool keep_bs, unsigned char *dec, size_t *dn)
{
	size_t j = 0;

	for (size_t i = 0; i < n;) {
		if (out[i] != '\\') {
			dec[j++] = (unsigned char)out[i++];
		} else if (i + 1 < n && out[i + 1] == '\\' && !keep_bs) {
			dec[j++] = '\\';
			i += 2;
		} else if (i + 3 < n && out[i + 1] == 'x' && hexval(out[i + 2]) >= 0 &&
			   hexval(out[i + 3]) >= 0) {
			dec[j++] = (unsigned char)(hexval(out[i + 2]) << 4 | hexval(out[i + 3]));
			i += 4;
		} else if (keep_bs) {
			dec[j++] = '\\';
			i++;
		} else {
			return false;	/* a lone backslash */
		}
	}
	*dn = j;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned flags;
	size_t cap, need, n, dn = 0, mlen = 0;
	char *in, *full, *part, *mem = NULL;
	unsigned char *dec;
	FILE *f;

	if (!size)
		return 0;
	flags = data[0] & 1 ? ST_TEXTESC_KEEP_BACKSLASH : 0;
	n = size - 1;
	/* copies of exactly their size: ASan catches a read or write past them */
	in = malloc(n ? n : 1);
	memcpy(in, data + 1, n);
	need = st_textesc__len(in, n, flags);
	if (need > n * ST_TEXTESC_GROWTH)
		abort();
	full = malloc(need + 1);
	if (st_textesc__buf(full, need + 1, in, n, flags) != need || strlen(full) != need)
		abort();
	if (!clean_utf8((const unsigned char *)full, need))
		abort();
	if (st_textesc__plain(in, n, flags) != (need == n && !memcmp(full, in, n)))
		abort();
	/* lossless: a KEEP_BACKSLASH output is ambiguous by design (a literal
	 * "\x41" in the input), so only the input's own escape is decoded */
	dec = malloc(need + 1);
	if (!flags && (!decode(full, need, false, dec, &dn) || dn != n || memcmp(dec, in, n)))
		abort();
	/* the stream form writes the same bytes */
	f = open_memstream(&mem, &mlen);
	if (!f || st_textesc__putn(f, in, n, flags) || fclose(f) || mlen != need ||
	    memcmp(mem, full, need))
		abort();
	/* a smaller buffer: a prefix cut between units, within the bound */
	cap = 1 + (size_t)(data[0] >> 1) % (need + 1);
	part = malloc(cap);
	if (st_textesc__buf(part, cap, in, n, flags) != need)
		abort();
	{
		size_t pl = strlen(part), at = 0, i = 0;
		char esc[ST_TEXTESC_UNIT];

		if (pl >= cap || memcmp(part, full, pl))
			abort();	/* longer than the room, or not a prefix */
		while (at < pl) {	/* pl must fall between two units */
			size_t k = st_textesc__next(in + i, n - i, flags, esc);

			at += esc[0] ? strlen(esc) : k;
			i += k;
		}
		if (at != pl)
			abort();	/* cut inside a unit */
		if (i < n) {	/* and the next unit did not fit */
			size_t k = st_textesc__next(in + i, n - i, flags, esc);

			if (pl + (esc[0] ? strlen(esc) : k) < cap)
				abort();
		}
	}
	free(part);
	free(mem);
	free(dec);
	free(full);
	free(in);
	return 0;
}

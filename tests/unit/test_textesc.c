/* test_textesc.c - the escape of names in text reports (common/textesc.h):
 * C0, DEL and C1 controls and invalid UTF-8 (stray, overlong, surrogate,
 * past U+10FFFF, cut short) escaped byte by byte as \xNN, a backslash as
 * \\, valid printable UTF-8 kept; the buffer form's bound and cut; the
 * stream form equal to the buffer form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/textesc.h"

/* s[0, n) escaped, by the buffer form; checked against the stream form
 * and the length form. */
static const char *esc_n(const char *s, size_t n)
{
	static char buf[1024];
	char *mem = NULL;
	size_t len = 0, need;
	FILE *f = open_memstream(&mem, &len);

	assert_non_null(f);
	need = st_textesc__buf(buf, sizeof(buf), s, n, 0);
	assert_true(need < sizeof(buf));
	assert_int_equal(strlen(buf), need);
	assert_int_equal(st_textesc__len(s, n, 0), need);
	assert_int_equal(st_textesc__putn(f, s, n, 0), 0);
	fclose(f);
	assert_int_equal(len, need);
	assert_memory_equal(mem, buf, need);
	free(mem);
	assert_int_equal(st_textesc__plain(s, n, 0), need == n && !memcmp(buf, s, n));
	return buf;
}

static const char *esc(const char *s)
{
	return esc_n(s, strlen(s));
}

static void test_controls(void **state)
{
	(void)state;
	assert_string_equal(esc("plain_name(int) const"), "plain_name(int) const");
	assert_string_equal(esc("\x1b]0;pwned\x07\x1b[2J\r\nforged line"),
			    "\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\x0aforged line");
	assert_string_equal(esc("a\tb\x7f" "c\x01"), "a\\x09b\\x7fc\\x01");
	/* a NUL inside a counted string is a control as well */
	assert_string_equal(esc_n("a\0b", 3), "a\\x00b");
	assert_string_equal(esc(""), "");
}

static void test_backslash(void **state)
{
	char buf[32];

	(void)state;
	/* a literal "\x1b" in a name stays apart from an escaped ESC */
	assert_string_equal(esc("\\x1b"), "\\\\x1b");
	assert_string_equal(esc("C:\\dir"), "C:\\\\dir");
	st_textesc__buf(buf, sizeof(buf), "a\\b\x1b", 4, ST_TEXTESC_KEEP_BACKSLASH);
	assert_string_equal(buf, "a\\b\\x1b");
}

static void test_c1(void **state)
{
	(void)state;
	/* U+0085 (NEL), U+009B (CSI), U+009F: the bytes of the character */
	assert_string_equal(esc("a\xc2\x85z"), "a\\xc2\\x85z");
	assert_string_equal(esc("\xc2\x9b" "2J"), "\\xc2\\x9b2J");
	assert_string_equal(esc("\xc2\x9f"), "\\xc2\\x9f");
	/* U+00A0 and up are kept */
	assert_string_equal(esc("\xc2\xa0\xc2\xa9"), "\xc2\xa0\xc2\xa9");
	/* raw C1 bytes (not UTF-8) are bad bytes */
	assert_string_equal(esc("\x9b" "31m"), "\\x9b31m");
	/* the control rule alone (stacks.folded's '?') */
	assert_int_equal(st_textesc__control("\x1b[", 2), 1);
	assert_int_equal(st_textesc__control("\x7f", 1), 1);
	assert_int_equal(st_textesc__control("\xc2\x9b", 2), 2);
	assert_int_equal(st_textesc__control("\xc2\x9b", 1), 0);	/* cut: not C1 */
	assert_int_equal(st_textesc__control("\xc2\xa0", 2), 0);
	assert_int_equal(st_textesc__control("\x9b", 1), 0);	/* a bad byte */
	assert_int_equal(st_textesc__control("a", 1), 0);
}

static void test_utf8_kept(void **state)
{
	(void)state;
	assert_string_equal(esc("caf\xc3\xa9"), "caf\xc3\xa9");		/* é */
	assert_string_equal(esc("\xe4\xb8\xad\xe6\x96\x87"), "\xe4\xb8\xad\xe6\x96\x87");	/* 中文 */
	assert_string_equal(esc("\xf0\x9f\x94\xa5"), "\xf0\x9f\x94\xa5");	/* U+1F525 */
	assert_string_equal(esc("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf");	/* U+10FFFF */
	assert_string_equal(esc("\xef\xbf\xbd"), "\xef\xbf\xbd");		/* U+FFFD */
}

static void test_invalid_utf8(void **state)
{
	(void)state;
	/* stray continuation bytes, bytes that never start a sequence */
	assert_string_equal(esc("\x80x\xbf"), "\\x80x\\xbf");
	assert_string_equal(esc("\xfe\xff\xf8"), "\\xfe\\xff\\xf8");
	/* overlong: '/' in two and three bytes, NUL in two */
	assert_string_equal(esc("\xc0\xaf"), "\\xc0\\xaf");
	assert_string_equal(esc("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");
	assert_string_equal(esc("\xc0\x80"), "\\xc0\\x80");
	assert_string_equal(esc("\xf0\x80\x80\xaf"), "\\xf0\\x80\\x80\\xaf");
	/* a surrogate (U+D800), past U+10FFFF */
	assert_string_equal(esc("\xed\xa0\x80"), "\\xed\\xa0\\x80");
	assert_string_equal(esc("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
	/* cut short: at the end, before an ASCII byte, before a NUL */
	assert_string_equal(esc("ab\xe4\xb8"), "ab\\xe4\\xb8");
	assert_string_equal(esc("\xe4\xb8z"), "\\xe4\\xb8z");
	assert_string_equal(esc_n("\xf0\x9f\x94", 3), "\\xf0\\x9f\\x94");
	assert_string_equal(esc_n("\xe4\xb8\0", 3), "\\xe4\\xb8\\x00");
	/* a good character right after a bad byte is kept */
	assert_string_equal(esc("\xe4\xe4\xb8\xad"), "\\xe4\xe4\xb8\xad");
	/* the counted length bounds the read: a valid character past n is cut */
	assert_string_equal(esc_n("\xe4\xb8\xad", 2), "\\xe4\\xb8");
}

static void test_seq_len(void **state)
{
	const unsigned char *s = (const unsigned char *)"\xe4\xb8\xad";

	(void)state;
	assert_int_equal(st_utf8__seq_len(s, SIZE_MAX), 3);
	assert_int_equal(st_utf8__seq_len(s, 3), 3);
	assert_int_equal(st_utf8__seq_len(s, 2), 0);
	assert_int_equal(st_utf8__seq_len(s, 0), 0);
	assert_int_equal(st_utf8__seq_len((const unsigned char *)"\x1b", 1), 1);
}

/* The buffer form never writes past cap, always ends in a NUL, never cuts
 * an escape or a character, and reports the whole length. */
static void test_bounds(void **state)
{
	const char *s = "ab\x1b\xe4\xb8\xad\\z";	/* ab \x1b 中 \\ z */
	const char *full = "ab\\x1b\xe4\xb8\xad\\\\z";
	size_t need = strlen(full);
	char buf[64];

	(void)state;
	for (size_t cap = 1; cap <= need + 1; cap++) {
		size_t got;

		memset(buf, 'Q', sizeof(buf));
		got = st_textesc__buf(buf, cap, s, strlen(s), 0);
		assert_int_equal(got, need);
		assert_true(strlen(buf) < cap);
		assert_int_equal(buf[cap], 'Q');	/* nothing past the bound */
		assert_memory_equal(buf, full, strlen(buf));	/* a prefix */
		/* cut only between units */
		switch (strlen(buf)) {
		case 0: case 1: case 2: case 6: case 9: case 11: case 12:
			break;
		default:
			fail_msg("cap %zu: cut inside a unit at %zu", cap, strlen(buf));
		}
	}
	/* cap 0: nothing written, the length still told */
	assert_int_equal(st_textesc__buf(NULL, 0, s, strlen(s), 0), need);
	/* the growth bound: every byte a control */
	memset(buf, 0x1b, 16);
	assert_int_equal(st_textesc__len(buf, 16, 0), 16 * ST_TEXTESC_GROWTH);
}

static void test_str(void **state)
{
	char buf[12];

	(void)state;
	assert_string_equal(st_textesc__str("ok\n", buf, sizeof(buf)), "ok\\x0a");
	assert_string_equal(st_textesc__str(NULL, buf, sizeof(buf)), "");
	/* cut: "..." ends it, within the bound */
	assert_string_equal(st_textesc__str("\x1b\x1b\x1b\x1b", buf, sizeof(buf)),
			    "\\x1b\\x1b...");
}

static void test_put_null(void **state)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(st_textesc__put(f, NULL), 0);
	assert_int_equal(st_textesc__put(f, "x\x1b"), 0);
	fclose(f);
	assert_string_equal(mem, "x\\x1b");
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_backslash),
		cmocka_unit_test(test_c1),
		cmocka_unit_test(test_utf8_kept),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_seq_len),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_str),
		cmocka_unit_test(test_put_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

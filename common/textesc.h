/* textesc.h - names as data in text: the one escape of every name, file,
 * module, comm or cgroup that a text report or a terminal line shows
 * (docs/reports.md, "Escaped names"); and the one UTF-8 validity rule.
 * Owner: common/textesc.c.
 *
 * Kept as they are: printable ASCII (0x20-0x7e) and valid UTF-8 of U+00A0
 * and up. Everything else is escaped one byte at a time as \xNN, two
 * lowercase hex digits: C0 controls (0x00-0x1f), DEL (0x7f), the bytes of
 * C1 controls (U+0080-U+009F, c2 80 .. c2 9f) and every byte that is not
 * part of a valid UTF-8 sequence (stray continuation bytes, overlong forms,
 * surrogates, code points past U+10FFFF, sequences cut short). A backslash
 * is written \\, so that \xNN in the output always stands for one raw byte.
 * The output is valid UTF-8 without C0, DEL or C1 controls, and at most
 * ST_TEXTESC_GROWTH times as long as the input.
 *
 * Pure: no allocation, no state; every function reads at most the bytes it
 * is given and writes at most the room it is given. */
#ifndef STACKTREE_COMMON_TEXTESC_H
#define STACKTREE_COMMON_TEXTESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define ST_TEXTESC_GROWTH 4	/* output bytes per input byte, at most */
#define ST_TEXTESC_UNIT 5	/* one escape ("\xNN") and its NUL */

enum st_textesc_flags {
	/* a backslash stays one backslash: for a defence-in-depth pass over
	 * text whose names are escaped already (the terminal filter) */
	ST_TEXTESC_KEEP_BACKSLASH = 1,
};

/* Length (1-4) of the valid UTF-8 sequence at s, or 0: s has avail bytes,
 * and the scan also stops at a NUL (pass SIZE_MAX for a C string). U+0000
 * to U+007F are one byte, whatever their class. */
size_t st_utf8__seq_len(const unsigned char *s, size_t avail);

/* The length of the control character at s[0, n): 1 for C0 or DEL, 2 for
 * a C1 control (c2 80 .. c2 9f), 0 for anything else. For a format with
 * its own replacement (stacks.folded's '?'). */
size_t st_textesc__control(const char *s, size_t n);

/* One unit of s[0, n), n >= 1: returns how many bytes it takes (1-4).
 * esc receives its escape, NUL-terminated, or "" when the unit is kept as
 * it is (a printable character, written as its bytes). */
size_t st_textesc__next(const char *s, size_t n, unsigned flags, char esc[ST_TEXTESC_UNIT]);

/* Whether s[0, n) is kept whole (no byte needs an escape). */
bool st_textesc__plain(const char *s, size_t n, unsigned flags);

/* The length of s[0, n) escaped (without a NUL). */
size_t st_textesc__len(const char *s, size_t n, unsigned flags);

/* s[0, n) escaped into dst: at most cap bytes with the NUL (cap >= 1), cut
 * only between units, never inside a character or an escape. Returns the
 * length the whole escape takes, as snprintf: a value >= cap means cut. */
size_t st_textesc__buf(char *dst, size_t cap, const char *s, size_t n, unsigned flags);

/* The C string s (NULL: "") escaped into buf (cap >= 1), "..." ending it
 * when it was cut; returns buf. For a name inside a printf() line. */
const char *st_textesc__str(const char *s, char *buf, size_t cap);

/* Room for one escaped name in a diagnostic line: longer ones are cut,
 * "..." ending them. */
#define ST_TEXTESC_LINE 1024

/* The C string s escaped, for one argument of a printf() line: the buffer
 * lives until the end of the enclosing block. */
#define ST_TEXTESC(s) st_textesc__str((s), (char[ST_TEXTESC_LINE]){ 0 }, ST_TEXTESC_LINE)

/* s[0, n) escaped onto out, no allocation; 0 or -EIO. */
int st_textesc__putn(FILE *out, const char *s, size_t n, unsigned flags);

/* The C string s escaped onto out (NULL writes nothing); 0 or -EIO. */
int st_textesc__put(FILE *out, const char *s);

#endif

/* jsonpull.h - a pull tokenizer of JSON (RFC 8259) read from a file
 * descriptor in fixed chunks: one token at a time, with 64-bit offsets, so
 * that a reader builds what it wants without any document in memory.
 *
 * Owner: user/model/jsonpull.c (used by the profile.json reader,
 * user/model/profile_json.c). It checks the grammar as it goes (commas,
 * colons, keys only in objects, brackets matched, one value per file
 * followed by white space only: anything after it is an error), bounds the
 * nesting depth and the length of one string, and uses no recursion. Memory:
 * its read buffer, the longest string so far and one byte per open
 * container. Strings are decoded (escapes, surrogate pairs to UTF-8); a NUL
 * byte or \u0000 in a string is refused, so every string is a C string.
 * Integers (no fraction, no exponent) are exact in -2^63 .. 2^64-1, else
 * refused; other numbers are doubles. */
#ifndef STACKTREE_JSONPULL_H
#define STACKTREE_JSONPULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum st_jtok {
	ST_J_EOF,		/* after the document: the end of the file */
	ST_J_OBJ, ST_J_OBJ_END,	/* { } */
	ST_J_ARR, ST_J_ARR_END,	/* [ ] */
	ST_J_KEY,		/* an object's key (s, len); its value comes next */
	ST_J_STR,		/* a string value (s, len) */
	ST_J_INT,		/* an integer: neg ? i : u */
	ST_J_DBL,		/* a number with a fraction or an exponent: d */
	ST_J_TRUE, ST_J_FALSE, ST_J_NULL,
};

struct st_jval {
	enum st_jtok tok;
	const char *s;		/* ST_J_KEY, ST_J_STR: valid until the next call */
	size_t len;
	bool neg;		/* ST_J_INT: negative (in i), else in u */
	int64_t i;
	uint64_t u;
	double d;
};

struct st_jpull;

/* A tokenizer over fd (not closed by it), nesting at most max_depth
 * containers, strings of at most max_str bytes. NULL: out of memory. */
struct st_jpull *st_jpull__new(int fd, size_t max_depth, size_t max_str);
void st_jpull__free(struct st_jpull *j);
/* The next token into v: 0, or -EINVAL (bad JSON; st_jpull__error() says
 * what and where), -ENOMEM, or a read error (negative errno). */
int st_jpull__next(struct st_jpull *j, struct st_jval *v);
/* Skip the value whose first token v was (an object or array to its end;
 * nothing for a scalar). 0 or as st_jpull__next(). */
int st_jpull__skip(struct st_jpull *j, const struct st_jval *v);
/* Containers open now (1 inside the top-level value). */
size_t st_jpull__depth(const struct st_jpull *j);
/* The last error: "line N (byte B): not valid JSON: what". */
const char *st_jpull__error(const struct st_jpull *j);
/* The line of the last token (1-based). */
uint64_t st_jpull__line(const struct st_jpull *j);

#endif

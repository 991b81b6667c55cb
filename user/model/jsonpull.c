/* jsonpull.c - pull tokenizer of JSON over a file descriptor; see
 * jsonpull.h. */
#include "user/model/jsonpull.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JP_BUF (256 * 1024)

enum jp_state {
	JP_VALUE,	/* a value */
	JP_FIRST_VALUE,	/* after '[': a value or ']' */
	JP_FIRST_KEY,	/* after '{': a key or '}' */
	JP_KEY,		/* after ',' in an object: a key */
	JP_AFTER,	/* after a value in a container: ',' or its closer */
	JP_DONE,	/* the document is complete: white space, then the end */
};

struct st_jpull {
	int fd;
	unsigned char *buf;
	size_t pos, len;
	bool eof;
	uint64_t base;		/* file offset of buf[0] */
	uint64_t line, tok_line;
	char *str;
	size_t slen, scap, max_str;
	char *stack;		/* 'o' or 'a' per open container */
	size_t depth, max_depth;
	enum jp_state state;
	char err[192];
};

struct st_jpull *st_jpull__new(int fd, size_t max_depth, size_t max_str)
{
	struct st_jpull *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->fd = fd;
	j->line = 1;
	j->max_str = max_str;
	j->max_depth = max_depth;
	j->buf = malloc(JP_BUF);
	j->stack = malloc(max_depth ? max_depth : 1);
	j->scap = 256;
	j->str = malloc(j->scap);
	if (!j->buf || !j->stack || !j->str) {
		st_jpull__free(j);
		return NULL;
	}
	return j;
}

void st_jpull__free(struct st_jpull *j)
{
	if (!j)
		return;
	free(j->buf);
	free(j->stack);
	free(j->str);
	free(j);
}

static int fail(struct st_jpull *j, const char *fmt, ...)
{
	char msg[128];
	va_list ap;
	uint64_t at;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	at = j->base + j->pos;
	/* the byte that did not fit (consumed already), or the end */
	snprintf(j->err, sizeof(j->err), "line %" PRIu64 " (byte %" PRIu64 "): not valid JSON: %s",
		 j->line, at && !(j->eof && j->pos == j->len) ? at - 1 : at, msg);
	return -EINVAL;
}

const char *st_jpull__error(const struct st_jpull *j)
{
	return j->err;
}

uint64_t st_jpull__line(const struct st_jpull *j)
{
	return j->tok_line;
}

size_t st_jpull__depth(const struct st_jpull *j)
{
	return j->depth;
}

/* The next byte (consumed), -1 at the end, or < -1: a read error. */
static int get(struct st_jpull *j)
{
	if (j->pos == j->len) {
		ssize_t n;

		if (j->eof)
			return -1;
		j->base += j->len;
		j->pos = j->len = 0;
		do
			n = read(j->fd, j->buf, JP_BUF);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			snprintf(j->err, sizeof(j->err), "read: %s", strerror(errno));
			return -1 - errno;
		}
		if (n == 0) {
			j->eof = true;
			return -1;
		}
		j->len = (size_t)n;
	}
	return j->buf[j->pos++];
}

static void unget(struct st_jpull *j)
{
	j->pos--;	/* only right after a get() that returned a byte */
}

/* The next byte that is not white space. */
static int get_nonws(struct st_jpull *j)
{
	for (;;) {
		int c = get(j);

		if (c == '\n')
			j->line++;
		else if (c != ' ' && c != '\t' && c != '\r')
			return c;
	}
}

static int eof_or_err(struct st_jpull *j, int c)
{
	return c < -1 ? -(-c - 1) : fail(j, "unexpected end of file");
}

static int put_byte(struct st_jpull *j, unsigned char c)
{
	if (j->slen + 1 >= j->scap) {
		size_t cap = j->scap * 2;
		char *s;

		if (j->slen + 1 > j->max_str)
			return fail(j, "a string longer than %zu bytes", j->max_str);
		if (cap > j->max_str + 1)
			cap = j->max_str + 1;
		if (!(s = realloc(j->str, cap)))
			return -ENOMEM;
		j->str = s;
		j->scap = cap;
	}
	j->str[j->slen++] = (char)c;
	return 0;
}

static int put_utf8(struct st_jpull *j, uint32_t cp)
{
	unsigned char b[4];
	int n;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	for (int i = 0; i < n; i++) {
		int err = put_byte(j, b[i]);

		if (err)
			return err;
	}
	return 0;
}

static int hex4(struct st_jpull *j, uint32_t *out)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		int c = get(j);

		if (c < 0)
			return eof_or_err(j, c);
		if (c >= '0' && c <= '9')
			v = v * 16 + (uint32_t)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = v * 16 + (uint32_t)((c | 0x20) - 'a' + 10);
		else
			return fail(j, "bad \\u escape in a string");
	}
	*out = v;
	return 0;
}

/* A string after its opening quote, into j->str (NUL-terminated). */
static int lex_string(struct st_jpull *j)
{
	int err;

	j->slen = 0;
	for (;;) {
		int c = get(j);
		uint32_t cp, lo;

		if (c < 0)
			return eof_or_err(j, c);
		if (c == '"')
			break;
		if (c == 0)
			return fail(j, "a NUL byte in a string");
		if (c == '\n')
			j->line++;
		if (c != '\\') {
			if ((err = put_byte(j, (unsigned char)c)))
				return err;
			continue;
		}
		c = get(j);
		switch (c) {
		case '"': case '\\': case '/':
			break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 't': c = '\t'; break;
		case 'u':
			if ((err = hex4(j, &cp)))
				return err;
			if (cp == 0)
				return fail(j, "\\u0000 in a string");
			if (cp >= 0xd800 && cp < 0xdc00) {	/* a high surrogate: its pair */
				if (get(j) != '\\' || get(j) != 'u')
					return fail(j, "an unpaired surrogate in a string");
				if ((err = hex4(j, &lo)))
					return err;
				if (lo < 0xdc00 || lo > 0xdfff)
					return fail(j, "an unpaired surrogate in a string");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				return fail(j, "an unpaired surrogate in a string");
			}
			if ((err = put_utf8(j, cp)))
				return err;
			continue;
		default:
			return c < 0 ? eof_or_err(j, c) : fail(j, "bad escape in a string");
		}
		if ((err = put_byte(j, (unsigned char)c)))
			return err;
	}
	if ((err = put_byte(j, 0)))
		return err;
	j->slen--;
	return 0;
}

static bool digit(int c)
{
	return c >= '0' && c <= '9';
}

/* c into t[*n] and the next byte into *c; -EINVAL past t's room. */
static int push(struct st_jpull *j, char *t, size_t room, size_t *n, int *c)
{
	if (*n + 1 >= room)
		return fail(j, "a number longer than %zu characters", room - 2);
	t[(*n)++] = (char)*c;
	*c = get(j);
	return 0;
}

/* One or more digits from *c on (a fraction's, an exponent's). */
static int digits(struct st_jpull *j, char *t, size_t room, size_t *n, int *c)
{
	int err;

	if (!digit(*c))
		return *c < -1 ? eof_or_err(j, *c) : fail(j, "bad number");
	while (digit(*c))
		if ((err = push(j, t, room, n, c)))
			return err;
	return 0;
}

/* A number starting with c: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int lex_number(struct st_jpull *j, int c, struct st_jval *v)
{
	char t[72];
	size_t n = 0;
	bool neg = c == '-', real = false, over = false;
	uint64_t u = 0;
	int err;

	if (neg && (err = push(j, t, sizeof(t), &n, &c)))
		return err;
	if (!digit(c))
		return c < -1 ? eof_or_err(j, c) : fail(j, "bad number");
	if (c == '0') {
		if ((err = push(j, t, sizeof(t), &n, &c)))
			return err;
		if (digit(c))
			return fail(j, "bad number (a leading zero)");
	}
	while (digit(c)) {
		if (u > (UINT64_MAX - (uint64_t)(c - '0')) / 10)
			over = true;
		u = u * 10 + (uint64_t)(c - '0');
		if ((err = push(j, t, sizeof(t), &n, &c)))
			return err;
	}
	if (c == '.') {
		real = true;
		if ((err = push(j, t, sizeof(t), &n, &c)) || (err = digits(j, t, sizeof(t), &n, &c)))
			return err;
	}
	if (c == 'e' || c == 'E') {
		real = true;
		if ((err = push(j, t, sizeof(t), &n, &c)))
			return err;
		if ((c == '+' || c == '-') && (err = push(j, t, sizeof(t), &n, &c)))
			return err;
		if ((err = digits(j, t, sizeof(t), &n, &c)))
			return err;
	}
	if (c < -1)
		return eof_or_err(j, c);
	if (c >= 0)
		unget(j);
	t[n] = 0;
	if (real) {
		v->tok = ST_J_DBL;
		v->d = strtod(t, NULL);
		return 0;
	}
	if (over || (neg && u > (uint64_t)INT64_MAX + 1))
		return fail(j, "an integer out of range");
	v->tok = ST_J_INT;
	v->neg = neg;
	v->u = u;
	if (neg)
		v->i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
	else
		v->i = u > INT64_MAX ? INT64_MAX : (int64_t)u;
	return 0;
}

static int lex_literal(struct st_jpull *j, const char *word, enum st_jtok tok,
		       struct st_jval *v)
{
	for (size_t i = 1; word[i]; i++) {
		int c = get(j);

		if (c != word[i])
			return c < -1 ? eof_or_err(j, c) : fail(j, "not a JSON value");
	}
	v->tok = tok;
	return 0;
}

static void after_value(struct st_jpull *j)
{
	j->state = j->depth ? JP_AFTER : JP_DONE;
}

static int open_container(struct st_jpull *j, char kind, struct st_jval *v)
{
	if (j->depth == j->max_depth)
		return fail(j, "nested deeper than %zu", j->max_depth);
	j->stack[j->depth++] = kind;
	v->tok = kind == 'o' ? ST_J_OBJ : ST_J_ARR;
	j->state = kind == 'o' ? JP_FIRST_KEY : JP_FIRST_VALUE;
	return 0;
}

static int close_container(struct st_jpull *j, int c, struct st_jval *v)
{
	char kind = c == '}' ? 'o' : 'a';

	if (!j->depth || j->stack[j->depth - 1] != kind)
		return fail(j, "'%c' does not close what is open", c);
	j->depth--;
	v->tok = kind == 'o' ? ST_J_OBJ_END : ST_J_ARR_END;
	after_value(j);
	return 0;
}

static int lex_value(struct st_jpull *j, int c, struct st_jval *v)
{
	int err;

	switch (c) {
	case '{':
		return open_container(j, 'o', v);
	case '[':
		return open_container(j, 'a', v);
	case '"':
		if ((err = lex_string(j)))
			return err;
		v->tok = ST_J_STR;
		v->s = j->str;
		v->len = j->slen;
		break;
	case 't':
		err = lex_literal(j, "true", ST_J_TRUE, v);
		break;
	case 'f':
		err = lex_literal(j, "false", ST_J_FALSE, v);
		break;
	case 'n':
		err = lex_literal(j, "null", ST_J_NULL, v);
		break;
	default:
		if (c < 0)
			return eof_or_err(j, c);
		if (c != '-' && !digit(c))
			return fail(j, "not a JSON value");
		err = lex_number(j, c, v);
	}
	if (err)
		return err;
	after_value(j);
	return 0;
}

static int lex_key(struct st_jpull *j, int c, struct st_jval *v)
{
	int err;

	if (c != '"')
		return c < 0 ? eof_or_err(j, c) : fail(j, "expected a key (a string)");
	if ((err = lex_string(j)))
		return err;
	c = get_nonws(j);
	if (c != ':')
		return c < 0 ? eof_or_err(j, c) : fail(j, "expected ':' after a key");
	v->tok = ST_J_KEY;
	v->s = j->str;
	v->len = j->slen;
	j->state = JP_VALUE;
	return 0;
}

int st_jpull__next(struct st_jpull *j, struct st_jval *v)
{
	int c = get_nonws(j);

	j->tok_line = j->line;
	switch (j->state) {
	case JP_DONE:
		if (c == -1) {
			v->tok = ST_J_EOF;
			return 0;
		}
		return c < -1 ? eof_or_err(j, c) : fail(j, "garbage after the end of the document");
	case JP_AFTER:
		if (c == '}' || c == ']')
			return close_container(j, c, v);
		if (c != ',')
			return c < 0 ? eof_or_err(j, c) : fail(j, "expected ',' or '%c'",
								  j->stack[j->depth - 1] == 'o' ? '}' : ']');
		c = get_nonws(j);
		return j->stack[j->depth - 1] == 'o' ? lex_key(j, c, v) : lex_value(j, c, v);
	case JP_FIRST_KEY:
		if (c == '}')
			return close_container(j, c, v);
		/* fall through */
	case JP_KEY:
		return lex_key(j, c, v);
	case JP_FIRST_VALUE:
		if (c == ']')
			return close_container(j, c, v);
		/* fall through */
	case JP_VALUE:
		return lex_value(j, c, v);
	}
	return fail(j, "internal state");
}

int st_jpull__skip(struct st_jpull *j, const struct st_jval *v)
{
	size_t depth = j->depth;
	struct st_jval t;
	int err;

	if (v->tok != ST_J_OBJ && v->tok != ST_J_ARR)
		return 0;
	while (j->depth >= depth)
		if ((err = st_jpull__next(j, &t)))
			return err;
	return 0;
}

/* term.c - text reports on a terminal: cut to its width, coloured; see
 * term.h. */
#include "user/output/term.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/textesc.h"

#define LINE_MAX_BYTES (1u << 20)
#define MIN_WIDTH 20u
#define ELLIPSIS "\xe2\x80\xa6"	/* U+2026 */
#define SGR_BOLD "\033[1m"
#define SGR_DIM "\033[2m"
#define SGR_RED "\033[31m"
#define SGR_GREEN "\033[32m"
#define SGR_FG_OFF "\033[39m"
#define SGR_OFF "\033[0m"

void st_term__detect(int fd, bool wide, bool no_colour, struct st_term_opts *o)
{
	const char *nc = getenv("NO_COLOR"), *cols = getenv("COLUMNS");
	struct winsize ws;
	bool tty = isatty(fd) == 1;

	o->width = 0;
	o->colour = tty && !no_colour && !(nc && nc[0]);
	if (!tty || wide)
		return;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		o->width = ws.ws_col;
	else if (cols && atoi(cols) > 0)
		o->width = (unsigned)atoi(cols);
	else
		o->width = 80;
	if (o->width < MIN_WIDTH)
		o->width = MIN_WIDTH;
}

/* The nth (0-based) blank-separated token of line[0, len): [*s, *e). */
static bool token(const char *line, size_t len, unsigned nth, size_t *s, size_t *e)
{
	size_t i = 0;

	for (unsigned k = 0;; k++) {
		while (i < len && line[i] == ' ')
			i++;
		if (i == len)
			return false;
		*s = i;
		while (i < len && line[i] != ' ')
			i++;
		*e = i;
		if (k == nth)
			return true;
	}
}

/* A percentage token ("12.34%" or "12.34"): its colour, or NULL. */
static const char *pct_colour(const char *tok, size_t n)
{
	char buf[32];
	char *end;
	double v;

	if (n == 0 || n >= sizeof(buf))
		return NULL;
	memcpy(buf, tok, n);
	buf[n] = '\0';
	if (buf[n - 1] == '%')
		buf[n - 1] = '\0';
	v = strtod(buf, &end);
	if (end == buf || *end)
		return NULL;
	return v >= 5 ? SGR_RED : v >= 0.5 ? SGR_GREEN : NULL;
}

static bool starts(const char *line, size_t len, const char *word)
{
	size_t n = strlen(word);

	return len > n && !memcmp(line, word, n) && line[n] == ' ';
}

/* The line's style and its coloured span [*ps, *pe) (*pc NULL: none). */
static const char *style(const char *line, size_t len, size_t *ps, size_t *pe, const char **pc)
{
	size_t s, e;

	*pc = NULL;
	if (len && line[0] == '#')
		return SGR_DIM;
	if (len >= 3 && !memcmp(line, "===", 3))
		return SGR_BOLD;
	if (starts(line, len, "SELF") || starts(line, len, "PARENT") ||
	    starts(line, len, "CHILD") || starts(line, len, "rPARENT") ||
	    starts(line, len, "rCHILD")) {	/* arcflow: SOURCE CALLS BASE CUM %CUM */
		if (token(line, len, 4, &s, &e) && (*pc = pct_colour(line + s, e - s))) {
			*ps = s;
			*pe = e;
		}
		return starts(line, len, "SELF") ? SGR_BOLD : NULL;
	}
	/* xtree: BASE CUM %CUM ... */
	if (token(line, len, 2, &s, &e) && line[e - 1] == '%' &&
	    (*pc = pct_colour(line + s, e - s))) {
		*ps = s;
		*pe = e;
	}
	return NULL;
}

void st_term__line(FILE *out, const char *line, size_t len, const struct st_term_opts *o)
{
	size_t keep = len, ps = 0, pe = 0, cols = 0;
	const char *st = NULL, *pc = NULL;
	char *safe = NULL;
	bool cut = false;

	/* The reports escape their names (common/textesc.h); a control byte or
	 * bad UTF-8 reaching here all the same is escaped too, never sent to
	 * the terminal (backslashes stay: the report's own escapes). */
	if (!st_textesc__plain(line, len, ST_TEXTESC_KEEP_BACKSLASH)) {
		size_t n = st_textesc__len(line, len, ST_TEXTESC_KEEP_BACKSLASH);

		if (!(safe = malloc(n + 1))) {
			st_textesc__putn(out, line, len, ST_TEXTESC_KEEP_BACKSLASH);
			return;
		}
		st_textesc__buf(safe, n + 1, line, len, ST_TEXTESC_KEEP_BACKSLASH);
		line = safe;
		keep = len = n;
	}

	if (o->width) {
		unsigned w = o->width < MIN_WIDTH ? MIN_WIDTH : o->width;

		for (size_t i = 0; i < len; i++) {
			if (((unsigned char)line[i] & 0xc0) == 0x80)
				continue;	/* a UTF-8 continuation byte */
			if (cols == w - 1)
				keep = i;	/* where "…" would go */
			if (++cols > w) {
				cut = true;
				break;
			}
		}
		if (!cut)
			keep = len;
	}
	if (o->colour)
		st = style(line, keep, &ps, &pe, &pc);
	if (st)
		fputs(st, out);
	if (pc) {
		fwrite(line, 1, ps, out);
		fputs(pc, out);
		fwrite(line + ps, 1, pe - ps, out);
		fputs(SGR_FG_OFF, out);
		fwrite(line + pe, 1, keep - pe, out);
	} else {
		fwrite(line, 1, keep, out);
	}
	if (cut)
		fputs(ELLIPSIS, out);
	if (st)
		fputs(SGR_OFF, out);
	free(safe);
}

struct term {
	FILE *out;
	struct st_term_opts o;
	char *buf;
	size_t len, cap;
	bool overflow;	/* past the first LINE_MAX_BYTES of the current line */
};

static ssize_t term_write(void *cookie, const char *data, size_t n)
{
	struct term *t = cookie;

	for (size_t i = 0; i < n;) {
		const char *nl = memchr(data + i, '\n', n - i);
		size_t chunk = nl ? (size_t)(nl - (data + i)) : n - i;

		if (t->overflow) {	/* the rest of an overlong line */
			if (!t->o.width)
				st_textesc__putn(t->out, data + i, chunk,
						 ST_TEXTESC_KEEP_BACKSLASH);
		} else {
			if (t->len + chunk > LINE_MAX_BYTES)
				chunk = LINE_MAX_BYTES - t->len;
			if (t->len + chunk > t->cap) {
				size_t ncap = (t->len + chunk) * 2;
				char *nb = realloc(t->buf, ncap);

				if (!nb) {
					errno = ENOMEM;
					return -1;
				}
				t->buf = nb;
				t->cap = ncap;
			}
			memcpy(t->buf + t->len, data + i, chunk);
			t->len += chunk;
			if (t->len == LINE_MAX_BYTES && !(nl && data + i + chunk == nl)) {
				st_term__line(t->out, t->buf, t->len, &t->o);
				t->len = 0;
				t->overflow = true;
			}
		}
		i += chunk;
		if (i < n && data[i] == '\n') {
			if (!t->overflow)
				st_term__line(t->out, t->buf, t->len, &t->o);
			fputc('\n', t->out);
			t->len = 0;
			t->overflow = false;
			i++;
		}
	}
	return ferror(t->out) ? -1 : (ssize_t)n;
}

static int term_close(void *cookie)
{
	struct term *t = cookie;
	int err = 0;

	if (t->len)
		st_term__line(t->out, t->buf, t->len, &t->o);
	if (fflush(t->out) || ferror(t->out))
		err = EOF;
	free(t->buf);
	free(t);
	return err;
}

FILE *st_term__open(FILE *out, const struct st_term_opts *o)
{
	static const cookie_io_functions_t io = { .write = term_write, .close = term_close };
	struct term *t = calloc(1, sizeof(*t));
	FILE *f;

	if (!t)
		return NULL;
	t->out = out;
	t->o = *o;
	f = fopencookie(t, "w", io);
	if (!f)
		free(t);
	return f;
}

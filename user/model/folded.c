/* folded.c - folded stacks ("a;b;c N" per line) into a one-thread profile. */
#include "user/model/folded.h"
#include "common/grow.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "user/model/profile.h"
#include "common/strtab.h"
#include "common/tree.h"

struct reader {
	const char *name;
	size_t lineno;
	char *err;
	size_t errlen;
	struct st_frame *path;
	size_t cap;
};

static int fail(struct reader *r, int code, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (r->err && r->errlen) {
		if (r->lineno)
			n = snprintf(r->err, r->errlen, "%s:%zu: ", r->name, r->lineno);
		else
			n = snprintf(r->err, r->errlen, "%s: ", r->name);
		if (n >= 0 && (size_t)n < r->errlen) {
			va_start(ap, fmt);
			vsnprintf(r->err + n, r->errlen - n, fmt, ap);
			va_end(ap);
		}
	}
	return code;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Split off an optional trailing count: the token after the last blank,
 * when it starts like a number. *len is shortened to the stack part. */
static int parse_count(struct reader *r, const char *s, size_t *len, __u64 *count)
{
	size_t i = *len, tok;
	unsigned long long v;
	char *end;

	*count = 1;
	while (i > 0 && !is_blank(s[i - 1]))
		i--;
	if (i == 0)
		return 0;	/* no blank: the whole line is the stack */
	tok = i;
	if (!isdigit((unsigned char)s[tok]) && s[tok] != '-' && s[tok] != '+')
		return 0;	/* a frame name with a blank in it */
	errno = 0;
	v = strtoull(s + tok, &end, 10);
	if (!isdigit((unsigned char)s[tok]) || (size_t)(end - s) != *len || v == 0)
		return fail(r, -EINVAL, "count '%.*s' is not a positive integer",
			    (int)(*len - tok), s + tok);
	if (errno == ERANGE)
		return fail(r, -EINVAL, "count '%.*s' is too large", (int)(*len - tok), s + tok);
	*count = v;
	while (i > 0 && is_blank(s[i - 1]))
		i--;
	*len = i;
	return 0;
}

static int path_push(struct reader *r, size_t n, const struct st_frame *f)
{
	if (ST_GROW(r->path, r->cap, n, 64))
		return fail(r, -ENOMEM, "out of memory");
	r->path[n] = *f;
	return 0;
}

static bool all_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!is_blank(s[i]))
			return false;
	return true;
}

/* One non-blank line (no newline) of len bytes: fold it into thread t. */
static int parse_line(struct reader *r, struct st_profile *p, struct st_thread *t,
		      const char *s, size_t len)
{
	struct st_frame f = { .kind = ST_FRAME_FUNCTION };
	size_t n = 0, start = 0;
	__u64 count;
	int err;

	while (is_blank(*s)) {
		s++;
		len--;
	}
	err = parse_count(r, s, &len, &count);
	if (err)
		return err;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ';')
			continue;
		if (all_blank(s + start, i - start))
			return fail(r, -EINVAL, "empty frame %zu (frames are separated by ';')",
				    n + 1);
		f.function = st_strtab__intern_len(p->strs, s + start, i - start);
		if (!f.function)
			return fail(r, -ENOMEM, "out of memory");
		if (n == ST_TREE_MAX_DEPTH)
			return fail(r, -EINVAL, "a stack of more than %d frames (deeper stacks are "
				    "refused)", ST_TREE_MAX_DEPTH);
		err = path_push(r, n++, &f);
		if (err)
			return err;
		start = i + 1;
	}
	/* every node's count is at most the total: checking it bounds them
	 * all, within what pprof's signed 64-bit values hold */
	if (__builtin_add_overflow(p->samples, count, &p->samples) || p->samples > INT64_MAX)
		return fail(r, -EINVAL, "the counts add up to more than %" PRId64 " samples",
			    INT64_MAX);
	if (!st_tree__add_sample(t->tree, r->path, n, count, ST_CALLS_FUNCTION))
		return fail(r, -ENOMEM, "out of memory");
	return 0;
}

static int read_lines(struct reader *r, FILE *in, struct st_profile *p, struct st_thread *t)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;

	while ((len = getline(&line, &cap, in)) >= 0) {
		r->lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		line[len] = '\0';
		if (strlen(line) != (size_t)len) {
			err = fail(r, -EINVAL, "NUL byte in line");
			goto cleanup;
		}
		while (len > 0 && is_blank(line[len - 1]))
			len--;
		if (all_blank(line, len))
			continue;
		err = parse_line(r, p, t, line, (size_t)len);
		if (err)
			goto cleanup;
	}
	r->lineno = 0;
	if (ferror(in))
		err = fail(r, -EIO, "read error");
	else if (!p->samples)
		err = fail(r, -EINVAL, "no samples (no stack lines)");
cleanup:
	free(line);
	return err;
}

int st_folded__read(FILE *in, const char *name, struct st_profile **out, char *err,
		    size_t errlen)
{
	struct reader r = { .name = name ? name : "-", .err = err, .errlen = errlen };
	const char *base = strrchr(r.name, '/');
	struct st_profile *p = st_profile__new("folded");
	struct st_thread *t;
	int ret = -ENOMEM;

	*out = NULL;
	base = base ? base + 1 : r.name;
	if (!*base || !strcmp(r.name, "-"))
		base = "folded";
	if (!p || !(t = st_profile__add_thread(p, 0, 0, base)) ||
	    !(p->command = strdup(r.name))) {
		ret = fail(&r, -ENOMEM, "out of memory");
		goto cleanup;
	}
	ret = read_lines(&r, in, p, t);
	if (ret)
		goto cleanup;
	st_profile__finalize(p);
	*out = p;
	p = NULL;
cleanup:
	free(r.path);
	st_profile__free(p);
	return ret;
}

int st_folded__read_path(const char *path, struct st_profile **out, char *err, size_t errlen)
{
	FILE *in;
	int ret;

	*out = NULL;
	if (!strcmp(path, "-"))
		return st_folded__read(stdin, "-", out, err, errlen);
	in = fopen(path, "r");
	if (!in) {
		ret = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = st_folded__read(in, path, out, err, errlen);
	fclose(in);
	return ret;
}

/* test_escaped_reports.c - names are data in every text report: a
 * function, module, file and comm holding ESC sequences, BEL, CR, LF, a C1
 * control and a bad byte come out of xtree, arcflow, the flame graph (its
 * labels cut at every width) and the report header escaped as \xNN
 * (common/textesc.h), never as those bytes; profile.json keeps them
 * exactly (JSON escapes); stacks.folded keeps its own form ('?', now
 * for C1 controls too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strtab.h"
#include "common/textesc.h"
#include "profile_fx.h"
#include "user/model/profile.h"
#include "user/output/arcflow.h"
#include "user/output/flamegraph.h"
#include "user/output/json.h"
#include "user/output/out_folded.h"
#include "user/output/report.h"

#define FN "\x1b]0;pwned\x07\x1b[2J\r\nforged\xc2\x9b\xff"
#define FN_ESC "\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\x0aforged\\xc2\\x9b\\xff"
#define MOD "/bin/\x1b[31mprog"
#define MOD_ESC "\\x1b[31mprog"
#define FILE_NAME "/src/x\x1b[31m.c"
#define COMM "c\x1b[2J\r"
#define COMM_ESC "c\\x1b[2J\\x0d"

static struct st_profile *evil_profile_fn(const char *fn)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t = st_profile__add_thread(p, 7, 7, COMM);
	struct st_frame f[] = { cs(p, "main", 0x10, MOD), lf(p, fn, MOD) };

	f[1].file = st_strtab__intern(p->strs, FILE_NAME);
	f[1].line = 3;
	p->frequency_hz = 99;
	p->duration_s = 1;
	p->command = strdup("run \x1b[2J\rforged");
	st_tree__add_sample(t->tree, f, 2, 40, ST_CALLS_FRAME);
	st_profile__finalize(p);
	p->samples = 40;
	return p;
}

static struct st_profile *evil_profile(void)
{
	return evil_profile_fn(FN);
}

typedef int (*writer_fn)(const struct st_profile *, FILE *, const void *);

static char *written(const struct st_profile *p, writer_fn w, const void *arg, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(w(p, f, arg), 0);
	fclose(f);
	return buf;
}

static int w_xtree(const struct st_profile *p, FILE *f, const void *arg)
{
	(void)arg;
	return st_xtree__write_lines(p, f, 0, true);
}

static int w_arcflow(const struct st_profile *p, FILE *f, const void *arg)
{
	struct st_arcflow *a = st_arcflow__build(p);
	int err;

	(void)arg;
	assert_non_null(a);
	err = st_arcflow__write_text(a, p, f);
	st_arcflow__free(a);
	return err;
}

static int w_svg(const struct st_profile *p, FILE *f, const void *arg)
{
	return st_flamegraph__write(p, f, -1, arg);
}

static int w_json(const struct st_profile *p, FILE *f, const void *arg)
{
	(void)arg;
	return st_profile__write_json(p, f, false);
}

static int w_folded(const struct st_profile *p, FILE *f, const void *arg)
{
	(void)arg;
	return st_folded__write(p, f, false);
}

/* No C0 control but newline (and tab) in text, no DEL, no C1, valid UTF-8
 * (the escape leaves it as it is but for newlines and tabs), no line
 * starting with "forged". */
static void assert_clean(const char *what, const char *text, size_t len)
{
	size_t nl = 0;

	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n' || text[i] == '\t')
			nl++;
		if (text[i] == '\n' && !strncmp(text + i + 1, "forged", 6))
			fail_msg("%s: a forged line at %zu", what, i + 1);
	}
	if (st_textesc__len(text, len, ST_TEXTESC_KEEP_BACKSLASH) != len + 3 * nl)
		fail_msg("%s: a control byte, C1 control or bad UTF-8", what);
}

static void test_text_reports(void **state)
{
	struct st_profile *p = evil_profile();
	size_t len;
	char *x = written(p, w_xtree, NULL, &len), *a;

	(void)state;
	assert_clean("xtree", x, len);
	assert_non_null(strstr(x, FN_ESC " [" MOD_ESC "] x\\x1b[31m.c:3"));
	assert_non_null(strstr(x, "comm " COMM_ESC ": 40 samples"));
	assert_non_null(strstr(x, "[pid 7 tid 7 " COMM_ESC "]"));
	assert_non_null(strstr(x, "# target: run \\x1b[2J\\x0dforged\n"));
	a = written(p, w_arcflow, NULL, &len);
	assert_clean("arcflow", a, len);
	assert_non_null(strstr(a, "  [2] " FN_ESC "\n"));
	assert_non_null(strstr(a, "  " FN_ESC " [2]\n"));
	free(a);
	free(x);
	st_profile__free(p);
}

/* Every label, cut at every width, ends between two units of the escape. */
static void test_svg(void **state)
{
	/* 8 times the name: longer than the widest label (SVGs are 400 px
	 * wide and up) */
	struct st_profile *p = evil_profile_fn(FN FN FN FN FN FN FN FN);
	const char *name_esc = FN_ESC FN_ESC FN_ESC FN_ESC FN_ESC FN_ESC FN_ESC FN_ESC;
	size_t cuts = 0;

	(void)state;
	for (unsigned w = 400; w <= 1200; w += 7) {
		struct st_flamegraph_opts o = { .width = w };
		size_t len;
		char *s = written(p, w_svg, &o, &len);
		const char *at = s;

		assert_clean("svg", s, len);
		assert_non_null(strstr(s, name_esc));
		while ((at = strstr(at, "<text x="))) {
			const char *b = strchr(at, '>') + 1, *e = strstr(b, "</text>");
			size_t n = (size_t)(e - b);

			at = e;
			if (n >= 2 && !memcmp(e - 2, "..", 2))
				n -= 2;
			if (n && n < strlen(name_esc) && strncmp(b, name_esc, n) == 0)
				cuts++;
			if (n && strncmp(b, name_esc, n) == 0) {
				/* a cut prefix of the name: never inside "\xNN" */
				const char *bs = NULL;

				for (const char *q = b; q < b + n; q++)
					if (*q == '\\')
						bs = q;
				assert_true(!bs || bs + 4 <= b + n);
			}
		}
		free(s);
	}
	assert_true(cuts > 20);	/* labels cut at many places in the name */
	st_profile__free(p);
}

/* profile.json: the exact names; stacks.folded: its own '?' form. */
static void test_json_and_folded(void **state)
{
	struct st_profile *p = evil_profile();
	size_t len;
	char *j = written(p, w_json, NULL, &len), *f;

	(void)state;
	assert_clean("profile.json", j, len);
	assert_non_null(strstr(j, "{\"text\":\"\\u001b]0;pwned\\u0007\\u001b[2J\\u000d\\n"
				  "forged\\u009b\xef\xbf\xbd\""));
	assert_non_null(strstr(j, "\"raw\":\"\\u001b]0;pwned\\u0007\\u001b[2J"
				  "\\u000d\\nforged\xc3\x82\\u009b\xc3\xbf\""));
	f = written(p, w_folded, NULL, &len);
	/* C0, DEL and C1 controls one '?' each; a bad byte as it is */
	assert_non_null(strstr(f, "?]0:pwned??[2J??forged?\xff 40\n"));
	free(f);
	free(j);
	st_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_reports),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_json_and_folded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

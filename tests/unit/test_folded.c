/* test_folded.c - folded-stack reader: parsing, counts, CALLS, errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tests/fuzz/writers.h"
#include "user/model/folded.h"
#include "user/model/profile.h"
#include "user/output/json.h"
#include "common/tree.h"

static int read_buf(const char *text, size_t len, const char *name, struct st_profile **p,
		    char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)text, len, "r");
	int ret;

	assert_non_null(f);
	ret = st_folded__read(f, name, p, err, errlen);
	fclose(f);
	return ret;
}

static int read_str(const char *text, const char *name, struct st_profile **p, char *err,
		    size_t errlen)
{
	return text[0] ? read_buf(text, strlen(text), name, p, err, errlen)
		       : read_buf("\n", 0, name, p, err, errlen);
}

static struct st_profile *must_read(const char *text, const char *name)
{
	struct st_profile *p = NULL;
	char err[256] = "";

	if (read_str(text, name, &p, err, sizeof(err))) {
		print_error("unexpected error: %s\n", err);
		fail();
	}
	assert_non_null(p);
	return p;
}

/* The node at "a;b;c" (function names) of the only thread, or NULL. */
static const struct st_node *node_at(const struct st_profile *p, const char *stack)
{
	const struct st_node *n = st_tree__root(p->threads[0]->tree);
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *tok = strtok_r(buf, ";", &save); tok && n; tok = strtok_r(NULL, ";", &save)) {
		const struct st_node *c;

		for (c = n->first_child; c; c = c->next_sibling)
			if (c->f.kind == ST_FRAME_FUNCTION && !strcmp(c->f.function, tok))
				break;
		n = c;
	}
	return n;
}

static void check_node(const struct st_profile *p, const char *stack, __u64 base, __u64 cum,
		       __u64 calls)
{
	const struct st_node *n = node_at(p, stack);

	if (!n)
		fail_msg("no node %s", stack);
	assert_int_equal(n->base, base);
	assert_int_equal(n->cum, cum);
	assert_int_equal(n->calls, calls);
}

static void test_seed_vector(void **state)
{
	struct st_profile *p = must_read("C\nC;A\nC;A;B\nC;A\nC;A;B\nC;A;B;B\nC;A;B\nC;A\nC\nC;B\n"
					 "C;B;A\nC;B;A;B\nC;B;A;B;A\nC;B;A;B\nC;B;A\nC;B;A;X\n"
					 "C;B;A\nC;B\nC\n",
					 "some/dir/seed.folded");

	(void)state;
	assert_string_equal(p->event, "folded");
	assert_int_equal(p->samples, 19);
	assert_int_equal(p->nthreads, 1);
	assert_int_equal(p->threads[0]->pid, 0);
	assert_int_equal(p->threads[0]->tid, 0);
	assert_string_equal(p->threads[0]->comm, "seed.folded");
	assert_int_equal(st_thread__samples(p->threads[0]), 19);
	check_node(p, "C", 3, 19, 1);
	check_node(p, "C;A", 3, 7, 1);
	check_node(p, "C;A;B", 3, 4, 2);	/* re-entered after returning to A */
	check_node(p, "C;A;B;B", 1, 1, 1);
	check_node(p, "C;B", 2, 9, 1);
	check_node(p, "C;B;A;B;A", 1, 1, 1);
	check_node(p, "C;B;A;X", 1, 1, 1);
	assert_null(node_at(p, "A"));
	st_profile__free(p);
}

static void test_counts(void **state)
{
	struct st_profile *p = must_read("start 1\nstart;main 10\nstart;main;A 100\n"
					 "start;main;A;B 200\nstart;main;A;C 300\n"
					 "start;main;A;B;D 300\nstart;main;A;C;D 100\n",
					 "vec2.txt");

	(void)state;
	assert_int_equal(p->samples, 1011);
	check_node(p, "start", 1, 1011, 1);
	check_node(p, "start;main", 10, 1010, 1);
	check_node(p, "start;main;A", 100, 1000, 1);
	check_node(p, "start;main;A;B", 200, 500, 2);
	check_node(p, "start;main;A;C", 300, 400, 2);
	check_node(p, "start;main;A;B;D", 300, 300, 1);
	check_node(p, "start;main;A;C;D", 100, 100, 1);
	st_profile__free(p);
}

/* A count only starts a call once: N identical samples are one call. */
static void test_count_is_one_call(void **state)
{
	struct st_profile *p = must_read("a;b 5\na;b 7\na 1\na;b 2\n", "x");

	(void)state;
	check_node(p, "a", 1, 15, 1);
	check_node(p, "a;b", 14, 14, 2);
	st_profile__free(p);
}

static void test_whitespace_and_names(void **state)
{
	struct st_profile *p = must_read("\n  main;operator new(unsigned long) 3 \r\n"
					 "   \n"
					 "main;foo bar\n"
					 "main;x2;[k] do_sys_open\t4\n"
					 "main;7up 2\n",
					 "-");

	(void)state;
	assert_string_equal(p->threads[0]->comm, "folded");
	assert_int_equal(p->samples, 10);
	check_node(p, "main;operator new(unsigned long)", 3, 3, 1);
	check_node(p, "main;foo bar", 1, 1, 1);
	check_node(p, "main;x2;[k] do_sys_open", 4, 4, 1);
	check_node(p, "main;7up", 2, 2, 1);
	check_node(p, "main", 0, 10, 1);
	st_profile__free(p);
}

static void expect_error_len(const char *text, size_t len, const char *want)
{
	struct st_profile *p = (void *)1;
	char err[256] = "";
	int ret = len ? read_buf(text, len, "in.folded", &p, err, sizeof(err))
		      : read_str(text, "in.folded", &p, err, sizeof(err));

	assert_int_equal(ret, -EINVAL);
	assert_null(p);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
	assert_null(strchr(err, '\n'));
}

static void expect_error(const char *text, const char *want)
{
	expect_error_len(text, 0, want);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_error("a;b\na;;b\n", "in.folded:2: empty frame 2");
	expect_error(";a\n", "in.folded:1: empty frame 1");
	expect_error("a\na;b;\n", "in.folded:2: empty frame 3");
	expect_error("a; ;b 3\n", "in.folded:1: empty frame 2");
	expect_error("a\n\n\na;b 0\n", "in.folded:4: count '0' is not a positive integer");
	expect_error("a;b -3\n", "in.folded:1: count '-3' is not a positive integer");
	expect_error("a;b 12x\n", "in.folded:1: count '12x' is not a positive integer");
	expect_error("a;b 1.5\n", "in.folded:1: count '1.5' is not a positive integer");
	expect_error("a;b 99999999999999999999999\n", "in.folded:1: count '99999999999999999999999' is too large");
	expect_error("", "in.folded: no samples");
	expect_error("\n  \n", "in.folded: no samples");
	expect_error_len("a\nb\0c\n", 6, "in.folded:2: NUL byte");
}

static void test_read_path(void **state)
{
	char dir[] = "/tmp/test_folded.XXXXXX", path[128], err[256] = "";
	struct st_profile *p = NULL;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/app.folded", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("main;work 3\nmain;work;bad;;x\n", f);
	fclose(f);
	assert_int_equal(st_folded__read_path(path, &p, err, sizeof(err)), -EINVAL);
	assert_null(p);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, ":2: empty frame 4"));

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("main;work 3\n", f);
	fclose(f);
	assert_int_equal(st_folded__read_path(path, &p, err, sizeof(err)), 0);
	assert_string_equal(p->threads[0]->comm, "app.folded");
	assert_string_equal(p->command, path);
	assert_int_equal(p->samples, 3);
	st_profile__free(p);
	unlink(path);

	assert_int_equal(st_folded__read_path(path, &p, err, sizeof(err)), -ENOENT);
	assert_null(p);
	assert_non_null(strstr(err, path));
	rmdir(dir);
}

/* "f0;f1;...;f(n-1) 1\n" */
static char *deep_line(size_t n)
{
	char *buf = malloc(n * 8 + 8), *p = buf;

	assert_non_null(buf);
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%sf%zu", i ? ";" : "", i % 1000);
	strcpy(p, " 1\n");
	return buf;
}

/* Offline inputs are not bounded by the kernel: a stack deeper than
 * ST_TREE_MAX_DEPTH is refused with its line named; one of exactly that
 * depth goes through every writer and a profile.json round trip (run under
 * ASan by `make test SANITIZE=1`, whose frames are larger). */
static void test_depth_bound(void **state)
{
	char *over = deep_line(ST_TREE_MAX_DEPTH + 1), *max = deep_line(ST_TREE_MAX_DEPTH);
	char path[] = "/tmp/st-deep-XXXXXX", err[256];
	struct st_profile *p, *back = NULL;
	FILE *f;
	int fd;

	(void)state;
	expect_error(over, "in.folded:1: a stack of more than 2048 frames");
	p = must_read(max, "deep.folded");
	fuzz_write_all(p);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(st_profile__write_json(p, f, true), 0);
	fclose(f);
	assert_int_equal(st_profile__read_json(path, &back, err, sizeof(err)), 0);
	assert_int_equal(back->samples, 1);
	unlink(path);
	st_profile__free(back);
	st_profile__free(p);
	free(over);
	free(max);
}

/* Counts that would wrap the totals (or pass pprof's signed values) are
 * refused, not turned into "no samples" or negative numbers. */
static void test_count_overflow(void **state)
{
	(void)state;
	expect_error("a;b 9223372036854775807\na 1\n",
		     "in.folded:2: the counts add up to more than 9223372036854775807 samples");
	expect_error("a 18446744073709551615\n", "in.folded:1: the counts add up to more than");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_vector),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_count_is_one_call),
		cmocka_unit_test(test_whitespace_and_names),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_read_path),
		cmocka_unit_test(test_depth_bound),
		cmocka_unit_test(test_count_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_json_v4.c - profile.json version 4 (user/output/json.c,
 * user/model/profile_json.c): tables written once and nodes as flat rows;
 * a checked-in version 3 file (tests/fuzz/corpus/json/version3.json, from
 * the version 3 writer) still read, and written as version 4 to the same
 * report; a tree 1500 frames deep written without nesting and read back;
 * a Java leaf's offset kept; malformed rows refused naming where. */
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

#include "profile_fx.h"
#include "user/model/profile.h"
#include "user/output/json.h"
#include "user/output/report.h"
#include "common/strtab.h"
#include "fixtures/fx_util.h"

#define DEEP 1500
#define LIBPY "\"/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0\""

/* profile.json without its arcflow (which names functions again) */
static char *json_of(const struct st_profile *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(st_profile__write_json(p, f, false), 0);
	fclose(f);
	return text;
}

static char *xtree_of(const struct st_profile *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(st_xtree__write_lines(p, f, 0, true), 0);
	fclose(f);
	return text;
}

static char *tmpfile_with(const char *text)
{
	char *path = strdup("/tmp/st-unit-v4-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static struct st_profile *read_text(const char *text)
{
	char *path = tmpfile_with(text), err[512] = "";
	struct st_profile *q = NULL;

	if (st_profile__read_json(path, &q, err, sizeof(err)))
		fail_msg("%s", err);
	unlink(path);
	free(path);
	return q;
}

/* The deepest nesting of JSON containers in text (strings skipped). */
static size_t nesting(const char *text)
{
	size_t d = 0, max = 0;
	bool str = false;

	for (const char *s = text; *s; s++) {
		if (str) {
			if (*s == '\\')
				s++;
			else if (*s == '"')
				str = false;
		} else if (*s == '"') {
			str = true;
		} else if (*s == '{' || *s == '[') {
			max = ++d > max ? d : max;
		} else if (*s == '}' || *s == ']') {
			d--;
		}
	}
	return max;
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* The version 3 file reads as it did (the same xtree as read from it), is
 * written as version 4 (the tables and rows of version 5 too) with every
 * name once, and reads back the same. */
static void test_version3_file(void **state)
{
	struct st_profile *p = NULL, *q;
	char path[4096], err[512] = "", *x3, *x4, *text, *again, *path3;
	FILE *f;

	(void)state;
	fx_path(path, sizeof(path), "../../tests/fuzz/corpus/json/version3.json");
	path3 = calloc(1, 1 << 17);
	assert_non_null(path3);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(fread(path3, 1, (1 << 17) - 1, f) > 0);
	fclose(f);
	if (st_profile__read_json(path, &p, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(p->nthreads, 2);
	assert_int_equal(p->samples, 254);
	text = json_of(p);
	assert_non_null(strstr(text, "\"version\":5,"));
	assert_null(strstr(text, "\"children\""));
	assert_true(nesting(text) <= 6);	/* header objects, rows: not the tree's depth */
	/* a module's name once in the tables (and in "modules": name, path),
	 * where version 3 wrote it in every node */
	assert_true(count(path3, LIBPY) > 100);
	assert_int_equal(count(text, LIBPY), 3);
	q = read_text(text);
	x3 = xtree_of(p);
	x4 = xtree_of(q);
	assert_string_equal(x3, x4);
	again = json_of(q);
	assert_string_equal(text, again);
	free(x3);
	free(x4);
	free(text);
	free(again);
	free(path3);
	st_profile__free(p);
	st_profile__free(q);
}

/* A chain DEEP frames deep: rows, no nesting, read back whole; the
 * writer's and reader's memory do not follow the depth by recursion
 * (neither recurses: this runs in the test's default stack). */
static void test_deep_tree(void **state)
{
	struct st_profile *p = st_profile__new("cpu-clock"), *q;
	struct st_thread *t = st_profile__add_thread(p, 1, 1, "deep");
	struct st_frame *path = calloc(DEEP, sizeof(*path));
	const struct st_node *n;
	char name[32], *text;
	size_t d = 0;

	(void)state;
	assert_non_null(path);
	for (size_t i = 0; i < DEEP; i++) {
		snprintf(name, sizeof(name), "f%zu", i % 7);	/* names repeat, frames too */
		path[i] = i + 1 < DEEP ? cs(p, name, 0x10 + i % 7, "/bin/deep") :
					 lf(p, name, "/bin/deep");
	}
	st_tree__add_sample(t->tree, path, DEEP, 3, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, path, DEEP / 2, 2, ST_CALLS_FRAME);
	st_profile__finalize(p);
	p->samples = 5;
	text = json_of(p);
	assert_true(nesting(text) <= 6);
	assert_int_equal(count(text, "\"f3\""), 1);
	q = read_text(text);
	for (n = st_tree__root(q->threads[0]->tree); n->first_child; n = n->first_child, d++) {
		assert_null(n->first_child->next_sibling);
		assert_int_equal(n->cum, d < DEEP / 2 + 1 ? 5 : 3);
	}
	assert_int_equal(d, DEEP);
	assert_int_equal(n->base, 3);
	assert_int_equal(n->f.kind, ST_FRAME_LEAF);
	free(text);
	free(path);
	st_profile__free(p);
	st_profile__free(q);
}

/* Two leaves of one Java method on two lines (offset = line) stay two
 * nodes: version 3 left a leaf's offset out and could not read them back. */
static void test_java_leaves(void **state)
{
	struct st_profile *p = st_profile__new("cpu-clock"), *q;
	struct st_thread *t = st_profile__add_thread(p, 1, 1, "java");
	struct st_frame a[2] = { cs(p, "main", 4, "/bin/java"), lf(p, "Deflater.deflate", "[java]") };
	struct st_frame b[2];
	const struct st_node *n;
	char *text;

	(void)state;
	a[1].runtime = ST_RUNTIME_JAVA;
	a[1].offset = a[1].line = 568;
	a[1].file = st_strtab__intern(p->strs, "Deflater.java");
	memcpy(b, a, sizeof(a));
	b[1].offset = b[1].line = 586;
	st_tree__add_sample(t->tree, a, 2, 1, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, b, 2, 2, ST_CALLS_FRAME);
	st_profile__finalize(p);
	p->samples = 3;
	text = json_of(p);
	q = read_text(text);
	n = st_tree__root(q->threads[0]->tree)->first_child->first_child;
	assert_non_null(n->next_sibling);
	assert_int_equal(n->f.offset, 586);
	assert_int_equal(n->base, 2);
	assert_int_equal(n->next_sibling->f.offset, 568);
	assert_int_equal(n->f.runtime, ST_RUNTIME_JAVA);
	free(text);
	st_profile__free(p);
	st_profile__free(q);
}

static void expect_error(const char *threads, const char *want)
{
	char doc[2048], *path, err[512] = "";
	struct st_profile *q = NULL;

	snprintf(doc, sizeof(doc), "{\"event\":\"x\",\"samples\":1,\"strings\":[\"root\",\"native\","
		 "\"callsite\",\"f\",\"/bin/x\"],\"frames\":[[0,1],[2,1,3,4,16]],\"threads\":"
		 "[{\"pid\":1,\"tid\":1,\"comm\":\"x\",\"nodes\":%s}]}", threads);
	path = tmpfile_with(doc);
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), -EINVAL);
	assert_null(q);
	if (!strstr(err, want))
		fail_msg("error \"%s\" lacks \"%s\"", err, want);
	unlink(path);
	free(path);
}

static void test_errors(void **state)
{
	struct st_profile *q;

	(void)state;
	/* the document the errors below break */
	q = read_text("{\"event\":\"x\",\"samples\":1,\"strings\":[\"root\",\"native\",\"callsite\","
		      "\"f\",\"/bin/x\"],\"frames\":[[0,1],[2,1,3,4,16]],\"threads\":[{\"pid\":1,"
		      "\"tid\":1,\"comm\":\"x\",\"nodes\":[[null,0,0,1,0],[0,1,0,1,1],[1,1,1,1,0]]}]}");
	assert_int_equal(st_tree__root(q->threads[0]->tree)->cum, 1);
	st_profile__free(q);
	expect_error("[[0,0,0,1,0]]", "threads[0].nodes[0]: the first node is the root");
	expect_error("[[null,0,0,1,0],[null,1,1,1,0]]",
		     "threads[0].nodes[1]: only the first node (the root) has no parent");
	expect_error("[[null,0,0,1,0],[0,2,1,1,0]]", "threads[0].nodes[1]: frame 2 past \"frames\"");
	expect_error("[[null,0,0,2,0],[0,1,0,1,0],[1,1,1,1,0],[0,1,1,1,0]]",
		     "threads[0].nodes[3]: duplicate node");
	expect_error("[[null,0,0,2,0],[0,1,0,1,0],[1,1,1,1,0],[5,1,1,1,0]]",
		     "threads[0].nodes[3]: parent 5 is not on the path");
	expect_error("[[null,0,0,1,0],[0,1,1,2,0]]", "node 1: cum 2 != base + children's cum 1");
	expect_error("[[null,0,0,1,0],[0,1,1,1]]", "threads[0].nodes[1]: calls must be");
	expect_error("[[null,0,0,1,0],[0,1,1,1,0,7]]", "a node has 5 values");
	expect_error("[]", "no root node");
	expect_error("[[null,0,0,1,0],[0,1,-1,1,0]]", "base must be an integer >= 0");
}

static void test_table_errors(void **state)
{
	static const struct {
		const char *tables, *want;
	} bad[] = {
		{ "\"frames\":[[0,1]],\"strings\":[\"root\",\"native\"]", "\"frames\" before \"strings\"" },
		{ "\"strings\":[\"root\",\"native\"],\"frames\":[[0,7]]",
		  "frames[0]: runtime must be an index into \"strings\" (2 of them)" },
		{ "\"strings\":[\"root\",\"native\"],\"frames\":[[1,1]]", "frames[0]: unknown kind" },
		{ "\"strings\":[\"root\",\"native\"],\"frames\":[[0,0]]", "frames[0]: unknown runtime" },
		{ "\"strings\":[\"root\",\"native\"],\"frames\":[[0]]", "at least its kind and runtime" },
		{ "\"strings\":[\"root\",7],\"frames\":[]", "strings[1]: must be a string" },
		{ "\"strings\":[\"root\",\"native\"],\"frames\":[[0,1,null,null,null,null,null,"
		  "null,null,null,null,null]]", "frames[0]: more than 11 values" },
		{ "\"strings\":[\"root\",\"native\"],\"frames\":[[0,1,null,null,null,null,null,3]]",
		  "frames[0]: \"line\" without \"file\"" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char doc[1024], *path, err[512] = "";
		struct st_profile *q = NULL;

		snprintf(doc, sizeof(doc), "{\"event\":\"x\",\"samples\":0,%s,\"threads\":[]}",
			 bad[i].tables);
		path = tmpfile_with(doc);
		assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].want))
			fail_msg("error \"%s\" lacks \"%s\"", err, bad[i].want);
		unlink(path);
		free(path);
	}
	/* nodes before the tables */
	{
		char *path = tmpfile_with("{\"event\":\"x\",\"samples\":0,\"threads\":[{\"pid\":1,"
					  "\"tid\":1,\"nodes\":[]}]}"), err[512] = "";
		struct st_profile *q = NULL;

		assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "\"nodes\" before \"frames\""));
		unlink(path);
		free(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version3_file),
		cmocka_unit_test(test_deep_tree),
		cmocka_unit_test(test_java_leaves),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_table_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

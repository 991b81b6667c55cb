/* test_pyjson.c - CPython frames in profile.json (user/model/profile_json.c,
 * user/output/json.c): written with "kind": "python" (a call site's offset
 * its line, the leaf's null), read back as the same frames, so two leaves
 * of one function on two lines stay two nodes; "kind": "python" on another
 * module is refused. */
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

#include "user/model/profile.h"
#include "user/output/json.h"
#include "common/strtab.h"

static struct st_frame py(struct st_profile *p, enum st_frame_kind kind, const char *fn,
			  __u32 line, __u64 code)
{
	struct st_frame f = { .kind = kind, .addr = code, .offset = line, .line = line,
			      .function = st_strtab__intern(p->strs, fn),
			      .module = st_strtab__intern(p->strs, ST_PYTHON_MODULE),
			      .file = st_strtab__intern(p->strs, "/tmp/prog.py") };

	return f;
}

/* main -> <module>:10 -> fib, sampled on lines 2 and 3 */
static struct st_profile *python_profile(void)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t = st_profile__add_thread(p, 10, 10, "python3.11");
	struct st_frame main = { .kind = ST_FRAME_CALLSITE, .addr = 0x401000, .offset = 0x20,
				 .function = st_strtab__intern(p->strs, "main"),
				 .module = st_strtab__intern(p->strs, "/usr/bin/python3.11") };
	struct st_frame a[] = { main, py(p, ST_FRAME_CALLSITE, "<module>", 10, 0x7f0000),
				py(p, ST_FRAME_LEAF, "fib", 2, 0x7f1000) };
	struct st_frame b[] = { main, py(p, ST_FRAME_CALLSITE, "<module>", 10, 0x7f0000),
				py(p, ST_FRAME_LEAF, "fib", 3, 0x7f1000) };

	st_tree__add_sample(t->tree, a, 3, 5, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, b, 3, 7, ST_CALLS_FRAME);
	st_profile__finalize(p);
	p->samples = 12;
	return p;
}

static char *write_json(const struct st_profile *p)
{
	char *path = strdup("/tmp/st-unit-pyjson-XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	assert_non_null(f);
	assert_int_equal(st_profile__write_json(p, f, true), 0);
	fclose(f);
	return path;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_kind_python_round_trip(void **state)
{
	struct st_profile *p = python_profile(), *q = NULL;
	char *path = write_json(p), *text = slurp(path), *again, *text2, err[256] = "";
	const struct st_node *n, *leaf;

	(void)state;
	/* three Python nodes, each "kind":"python"; the leaves' offset null */
	assert_non_null(strstr(text, "\"offset\":10,\"module\":\"[python]\""));
	assert_non_null(strstr(text, "\"offset\":null,\"module\":\"[python]\""));
	assert_null(strstr(text, "\"module\":\"[python]\",\"address\":\"0x7f1000\",\"kind\":\"leaf\""));
	assert_non_null(strstr(text, "\"module\":\"[python]\",\"address\":\"0x7f1000\",\"kind\":\"python\""));
	assert_non_null(strstr(text, "\"address\":\"0x401000\",\"kind\":\"callsite\""));
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), 0);
	n = st_tree__root(q->threads[0]->tree)->first_child;	/* main */
	n = n->first_child;	/* <module> */
	assert_int_equal(n->f.kind, ST_FRAME_CALLSITE);
	assert_int_equal(n->f.offset, 10);
	assert_int_equal(n->f.line, 10);
	assert_string_equal(n->f.module, ST_PYTHON_MODULE);
	leaf = n->first_child;
	assert_non_null(leaf->next_sibling);	/* two leaves: lines 2 and 3 */
	for (; leaf; leaf = leaf->next_sibling) {
		assert_int_equal(leaf->f.kind, ST_FRAME_LEAF);
		assert_int_equal(leaf->f.offset, leaf->f.line);
		assert_int_equal(leaf->base, leaf->f.line == 2 ? 5 : 7);
		assert_string_equal(leaf->f.file, "/tmp/prog.py");
	}
	/* written again: the same file */
	again = write_json(q);
	text2 = slurp(again);
	assert_string_equal(text, text2);
	unlink(path);
	unlink(again);
	free(path);
	free(again);
	free(text);
	free(text2);
	st_profile__free(p);
	st_profile__free(q);
}

static void test_kind_python_needs_module(void **state)
{
	const char *doc = "{\"event\":\"cpu-clock\",\"samples\":1,\"threads\":[{\"pid\":1,\"tid\":1,"
			  "\"comm\":\"x\",\"root\":{\"function\":null,\"base\":0,\"cum\":1,\"calls\":0,"
			  "\"children\":[{\"function\":\"f\",\"offset\":null,\"module\":\"/bin/x\","
			  "\"kind\":\"python\",\"base\":1,\"cum\":1,\"calls\":1,\"children\":[]}]}}]}";
	char *path = strdup("/tmp/st-unit-pyjson-XXXXXX"), err[512] = "";
	struct st_profile *q = NULL;
	int fd = mkstemp(path);

	(void)state;
	assert_int_equal(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
	close(fd);
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), -EINVAL);
	assert_null(q);
	if (!strstr(err, "\"kind\": \"python\" needs \"module\": \"[python]\""))
		fail_msg("error: %s", err);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_python_round_trip),
		cmocka_unit_test(test_kind_python_needs_module),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

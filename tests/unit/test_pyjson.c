/* test_pyjson.c - a frame's runtime in profile.json (user/model/profile_json.c,
 * user/output/json.c): CPython frames written with "runtime": "python" and
 * "kind": "python" (a call site's offset its line, the leaf's null), read
 * back as the same frames, so two leaves of one function on two lines stay
 * two nodes; "kind": "python" on another module, an unknown runtime and a
 * runtime the old markers contradict are refused; files of version 2 and
 * older (the fuzz corpus's) get the runtime their markers give. */
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
#include "fixtures/fx_util.h"
#include "json_fx.h"

static struct st_frame py(struct st_profile *p, enum st_frame_kind kind, const char *fn,
			  __u32 line, __u64 code)
{
	struct st_frame f = { .kind = kind, .addr = code, .offset = line, .line = line,
			      .function = st_strtab__intern(p->strs, fn),
			      .module = st_strtab__intern(p->strs, ST_PYTHON_MODULE),
			      .runtime = ST_RUNTIME_PYTHON,
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
	char *path = write_json(p), *text = slurp(path), *again, *text2, err[256] = "", buf[256];
	const struct st_node *n, *leaf;

	(void)state;
	/* three Python frames, each runtime python and kind "python": the call
	 * site's offset its line, the leaves' null; the native frame and the
	 * root native */
	assert_string_equal(fx_frames_of(text, "<module>", buf, sizeof(buf)),
			    "python python 10 /tmp/prog.py:10;");
	assert_string_equal(fx_frames_of(text, "fib", buf, sizeof(buf)),
			    "python python null /tmp/prog.py:3;python python null /tmp/prog.py:2;");
	assert_string_equal(fx_frames_of(text, "main", buf, sizeof(buf)),
			    "callsite native 32 null:null;");
	assert_string_equal(fx_frames_of(text, "null", buf, sizeof(buf)),
			    "root native null null:null;");
	assert_non_null(strstr(text, "\"version\":5,"));
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), 0);
	n = st_tree__root(q->threads[0]->tree)->first_child;	/* main */
	assert_int_equal(n->f.runtime, ST_RUNTIME_NATIVE);
	n = n->first_child;	/* <module> */
	assert_int_equal(n->f.kind, ST_FRAME_CALLSITE);
	assert_int_equal(n->f.runtime, ST_RUNTIME_PYTHON);
	assert_int_equal(n->f.offset, 10);
	assert_int_equal(n->f.line, 10);
	leaf = n->first_child;
	assert_non_null(leaf->next_sibling);	/* two leaves: lines 2 and 3 */
	for (; leaf; leaf = leaf->next_sibling) {
		assert_int_equal(leaf->f.kind, ST_FRAME_LEAF);
		assert_int_equal(leaf->f.runtime, ST_RUNTIME_PYTHON);
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

/* Write doc to a temporary file, read it: the result, err filled. */
static int read_doc(const char *doc, struct st_profile **q, char *err, size_t errlen)
{
	char path[] = "/tmp/st-unit-pyjson-XXXXXX";
	int fd = mkstemp(path), ret;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
	close(fd);
	ret = st_profile__read_json(path, q, err, errlen);
	unlink(path);
	return ret;
}

#define ONE_NODE(keys) "{\"event\":\"cpu-clock\",\"samples\":1,\"threads\":[{\"pid\":1," \
	"\"tid\":1,\"comm\":\"x\",\"root\":{\"function\":null,\"base\":0,\"cum\":1," \
	"\"calls\":0,\"children\":[{\"function\":\"f\",\"offset\":null,\"base\":1," \
	"\"cum\":1,\"calls\":1," keys "\"children\":[]}]}}]}"

static void test_runtime_refused(void **state)
{
	static const struct {
		const char *doc, *err;
	} bad[] = {
		{ ONE_NODE("\"module\":\"/bin/x\",\"runtime\":\"ruby\","),
		  "unknown \"runtime\": \"ruby\"" },
		{ ONE_NODE("\"module\":\"[python]\",\"kind\":\"python\",\"runtime\":\"native\","),
		  "\"kind\": \"python\" with \"runtime\": \"native\"" },
		{ ONE_NODE("\"module\":\"x\",\"kind\":\"leaf\",\"kernel\":true,"
			   "\"runtime\":\"java\","),
		  "\"kernel\": true with \"runtime\": \"java\"" },
	};
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct st_profile *q = NULL;

		err[0] = '\0';
		assert_int_equal(read_doc(bad[i].doc, &q, err, sizeof(err)), -EINVAL);
		assert_null(q);
		if (!strstr(err, bad[i].err))
			fail_msg("case %zu: error: %s", i, err);
	}
}

/* A runtime the file names is kept whatever the module: a Java frame. */
static void test_runtime_java(void **state)
{
	struct st_profile *q = NULL;
	char err[512] = "";
	const struct st_node *n;

	(void)state;
	assert_int_equal(read_doc(ONE_NODE("\"module\":\"[java]\",\"kind\":\"leaf\","
					   "\"runtime\":\"java\","), &q, err, sizeof(err)), 0);
	n = st_tree__root(q->threads[0]->tree)->first_child;
	assert_int_equal(n->f.runtime, ST_RUNTIME_JAVA);
	st_profile__free(q);
}

struct derived {
	size_t npy, nkernel;
};

/* Every node: the runtime its version-2 markers give (st_tree__walk()). */
static int check_derived(const struct st_node *c, void *ctx)
{
	struct derived *d = ctx;
	bool py = c->f.module && !strcmp(c->f.module, ST_PYTHON_MODULE);

	if (!c->depth)
		return 0;
	assert_int_equal(c->f.runtime, py ? ST_RUNTIME_PYTHON :
				c->f.module && !strcmp(c->f.module, "[kernel.kallsyms]") ?
				ST_RUNTIME_KERNEL : ST_RUNTIME_NATIVE);
	d->npy += py;
	d->nkernel += c->f.runtime == ST_RUNTIME_KERNEL;
	return 0;
}

/* An old file (no "runtime", no version: the fuzz corpus's python.json):
 * its CPython frames ("kind": "python") python, the rest native; a version
 * 2 document's "kernel": true frames kernel. */
static void test_old_version(void **state)
{
	static const char v2[] = "{\"format\":\"stacktree-profile\",\"version\":2,"
		"\"event\":\"cpu-clock\",\"samples\":3,\"threads\":[{\"pid\":1,\"tid\":1,"
		"\"comm\":\"x\",\"root\":{\"function\":null,\"base\":0,\"cum\":3,\"calls\":0,"
		"\"children\":[{\"function\":\"main\",\"offset\":4,\"module\":\"/bin/x\","
		"\"address\":\"0x401004\",\"kind\":\"callsite\",\"base\":1,\"cum\":3,\"calls\":1,"
		"\"children\":[{\"function\":\"schedule\",\"offset\":null,"
		"\"module\":\"[kernel.kallsyms]\",\"address\":\"0xffffffff81000000\","
		"\"kind\":\"leaf\",\"kernel\":true,\"base\":2,\"cum\":2,\"calls\":1,"
		"\"children\":[]}]}]}}]}";
	struct st_profile *q = NULL;
	char path[4096], err[512] = "";
	struct derived d = { 0, 0 };

	(void)state;
	fx_path(path, sizeof(path), "../../tests/fuzz/corpus/json/python.json");
	if (st_profile__read_json(path, &q, err, sizeof(err)))
		fail_msg("%s", err);
	for (size_t i = 0; i < q->nthreads; i++)
		st_tree__walk(q->threads[i]->tree, check_derived, &d);
	assert_int_equal(d.npy, 34);	/* its "kind": "python" nodes */
	assert_int_equal(d.nkernel, 0);
	st_profile__free(q);
	q = NULL;
	d = (struct derived){ 0, 0 };
	assert_int_equal(read_doc(v2, &q, err, sizeof(err)), 0);
	st_tree__walk(q->threads[0]->tree, check_derived, &d);
	assert_int_equal(d.nkernel, 1);
	assert_int_equal(d.npy, 0);
	st_profile__free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_python_round_trip),
		cmocka_unit_test(test_kind_python_needs_module),
		cmocka_unit_test(test_runtime_refused),
		cmocka_unit_test(test_runtime_java),
		cmocka_unit_test(test_old_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_report.c - profile.json round trip and error messages, xtree
 * pruning into [other], thread merging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_fx.h"
#include "user/model/jsonstr.h"
#include "user/model/profile.h"
#include "user/output/json.h"
#include "user/output/report.h"
#include "common/strtab.h"

/* Two threads of pid 10: main 10 (main -> work 90 samples, main -> tiny 2),
 * worker 11 (start -> work 50); one thread of pid 20. */
static struct st_profile *sample_profile(void)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t;

	p->frequency_hz = 99;
	p->duration_s = 1.5;
	p->start_s = 1764091862.123456;
	p->end_s = p->start_s + 1.5;
	st_profile__add_lost(p, "node table full", 3);
	st_profile__add_note_id(p, "truncated", "stacks truncated at 127 frames", 1);
	t = st_profile__add_thread(p, 10, 10, "prog");
	{
		struct st_frame a[] = { cs(p, "main", 0x10, "/bin/prog"), lf(p, "work", "/bin/prog") };
		struct st_frame b[] = { cs(p, "main", 0x20, "/bin/prog"), lf(p, "tiny", "/bin/prog") };

		st_tree__add_sample(t->tree, a, 2, 90, ST_CALLS_FRAME);
		st_tree__add_sample(t->tree, b, 2, 2, ST_CALLS_FRAME);
	}
	t = st_profile__add_thread(p, 10, 11, "worker");
	{
		struct st_frame a[] = { cs(p, "start", 0x8, "/lib/libc.so.6"),
					lf(p, "work", "/bin/prog") };

		st_tree__add_sample(t->tree, a, 2, 50, ST_CALLS_FRAME);
	}
	t = st_profile__add_thread(p, 20, 20, "other");
	{
		struct st_frame k = { .kind = ST_FRAME_LEAF, .addr = 0xffffffff81000000ULL,
				      .function = st_strtab__intern(p->strs, "schedule"),
				      .module = st_strtab__intern(p->strs, "[kernel.kallsyms]"),
				      .runtime = ST_RUNTIME_KERNEL };

		st_tree__add_sample(t->tree, &k, 1, 7, ST_CALLS_FRAME);
	}
	st_profile__finalize(p);
	p->samples = 149;
	st_profile__add_module(p, "/bin/prog", "/bin/prog", "0123456789abcdef0123456789abcdef01234567");
	st_profile__add_module(p, "/lib/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
	return p;
}

static void assert_same_node(const struct st_node *a, const struct st_node *b)
{
	const struct st_node *x, *y;

	assert_int_equal(a->f.kind, b->f.kind);
	assert_int_equal(a->base, b->base);
	assert_int_equal(a->cum, b->cum);
	assert_int_equal(a->calls, b->calls);
	assert_int_equal(a->f.runtime, b->f.runtime);
	if (a->f.kind != ST_FRAME_ROOT) {
		assert_string_equal(a->f.function ? a->f.function : "-",
				    b->f.function ? b->f.function : "-");
		assert_int_equal(a->f.addr, b->f.addr);
		if (a->f.kind == ST_FRAME_CALLSITE)
			assert_int_equal(a->f.offset, b->f.offset);
	}
	for (x = a->first_child, y = b->first_child; x && y; x = x->next_sibling, y = y->next_sibling)
		assert_same_node(x, y);
	assert_null(x);
	assert_null(y);
}

static void assert_same_modules(const struct st_profile *p, const struct st_profile *q)
{
	const struct st_prof_module *m;

	assert_int_equal(q->nmodules, 2);
	for (size_t i = 0; i < p->nmodules; i++) {
		assert_string_equal(p->modules[i].name, q->modules[i].name);
		assert_string_equal(p->modules[i].path, q->modules[i].path);
		assert_string_equal(p->modules[i].build_id ? p->modules[i].build_id : "-",
				    q->modules[i].build_id ? q->modules[i].build_id : "-");
	}
	m = st_profile__module(q, "/bin/prog");
	assert_non_null(m);
	assert_string_equal(m->build_id, "0123456789abcdef0123456789abcdef01234567");
	m = st_profile__module(q, "/lib/libc.so.6");
	assert_non_null(m);
	assert_null(m->build_id);
	assert_string_equal(m->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_null(st_profile__module(q, "/bin/other"));
}

/* A module noted again: one entry; a build id fills one not known yet,
 * never replaces one. */
static void test_modules_once(void **state)
{
	struct st_profile *p = st_profile__new("cpu-clock");

	(void)state;
	assert_int_equal(st_profile__add_module(p, "/a", NULL, NULL), 0);
	assert_int_equal(st_profile__add_module(p, "/a", "/a", "aa"), 0);
	assert_int_equal(st_profile__add_module(p, "/a", "/a", "bb"), 0);
	assert_int_equal(st_profile__add_module(p, NULL, "/a", "bb"), -EINVAL);
	assert_int_equal(p->nmodules, 1);
	assert_string_equal(p->modules[0].path, "/a");
	assert_string_equal(st_profile__module(p, "/a")->build_id, "aa");
	st_profile__free(p);
}

static char *tmpfile_with(const char *text)
{
	char *path = strdup("/tmp/st-unit-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* A file written before "version": notes and lost_by as {"sentence": N},
 * no times; still read, ids derived from the sentences. */
static void test_json_version1(void **state)
{
	char *path = tmpfile_with(
		"{\"event\":\"cpu-clock\",\"frequency_hz\":99,\"samples\":2,\"lost\":3,"
		"\"lost_by\":{\"node table full\":3},"
		"\"notes\":{\"unwind stopped: no CFI\":7},"
		"\"threads\":[{\"pid\":1,\"tid\":1,\"comm\":\"a\",\"root\":{\"function\":null,"
		"\"kind\":\"root\",\"base\":2,\"cum\":2,\"calls\":0,\"children\":[]}}]}");
	struct st_profile *q = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), 0);
	assert_int_equal(q->lost, 3);
	assert_int_equal(q->nnotes, 1);
	assert_string_equal(q->notes[0].id, "unwind_stopped_no_cfi");
	assert_string_equal(q->notes[0].name, "unwind stopped: no CFI");
	assert_int_equal(q->notes[0].value, 7);
	assert_string_equal(q->lost_by[0].id, "node_table_full");
	assert_true(q->start_s == 0 && q->end_s == 0);
	unlink(path);
	free(path);
	st_profile__free(q);
}

static void test_json_round_trip(void **state)
{
	struct st_profile *p = sample_profile(), *q = NULL;
	char *path = tmpfile_with(""), err[256] = "";
	FILE *f = fopen(path, "w");

	(void)state;
	assert_int_equal(st_profile__write_json(p, f, true), 0);
	fclose(f);
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), 0);
	assert_string_equal(q->event, "cpu-clock");
	assert_int_equal(q->frequency_hz, 99);
	assert_int_equal(q->samples, 149);
	assert_int_equal(q->lost, 3);
	assert_int_equal(q->nthreads, 3);
	assert_int_equal(q->nnotes, 1);
	/* notes keep their id and sentence; times round to microseconds */
	assert_string_equal(q->notes[0].id, "truncated");
	assert_string_equal(q->notes[0].name, "stacks truncated at 127 frames");
	assert_string_equal(q->lost_by[0].id, "node_table_full");
	assert_true(fabs(q->start_s - p->start_s) < 2e-6);
	assert_true(fabs(q->end_s - p->end_s) < 2e-6);
	assert_same_modules(p, q);
	for (size_t i = 0; i < p->nthreads; i++) {
		assert_int_equal(p->threads[i]->tid, q->threads[i]->tid);
		assert_string_equal(p->threads[i]->comm, q->threads[i]->comm);
		assert_same_node(st_tree__root(p->threads[i]->tree),
				 st_tree__root(q->threads[i]->tree));
	}
	unlink(path);
	free(path);
	st_profile__free(p);
	st_profile__free(q);
}

static void expect_error(const char *json, const char *want)
{
	char *path = tmpfile_with(json), err[512] = "";
	struct st_profile *q = NULL;

	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), -EINVAL);
	assert_null(q);
	if (!strstr(err, want))
		fail_msg("error \"%s\" lacks \"%s\"", err, want);
	assert_non_null(strstr(err, path)); /* names the file */
	unlink(path);
	free(path);
}

static void test_json_errors(void **state)
{
	(void)state;
	expect_error("{\"event\": \"cpu-clock\",\n \"samples\": 1,\n \"threads\": [}", "line 3");
	expect_error("[]", "must be an object");
	/* nothing but white space after the document */
	expect_error("{\"event\":\"x\",\"samples\":1,\"threads\":[]}\n x",
		     "line 2 (byte 40): not valid JSON: garbage after the end of the document");
	expect_error("{\"event\":\"x\",\"samples\":1,\"threads\":[]}{}", "garbage after");
	expect_error("{\"event\":\"x\",\"samples\":1,\"threads\":[]", "unexpected end of file");
	expect_error("{\"event\":\"x\",\"samples\":1,\"threads\":[],}", "expected a key");
	expect_error("{\"event\":\"x\",\"samples\":01,\"threads\":[]}", "leading zero");
	expect_error("{\"event\":\"x\",\"samples\":18446744073709551616,\"threads\":[]}",
		     "an integer out of range");
	expect_error("{\"event\":\"x\\u0000y\",\"samples\":1,\"threads\":[]}", "\\u0000");
	expect_error("{\"event\":\"\\ud800\",\"samples\":1,\"threads\":[]}",
		     "an unpaired surrogate");
	expect_error("{\"event\":\"x\",\"samples\":1,\"threads\":[{\"pid\":1,\"tid\":1,"
		     "\"root\":{\"base\":0,\"cum\":1,\"children\":[{\"base\":1,\"cum\":1,"
		     "\"children\":[],\"function\":\"f\"}]}}]}",
		     "threads[0].root.children[0]: \"function\" after \"children\"");
	expect_error("{\"event\":\"x\",\"samples\":1,\"threads\":[{\"root\":{\"base\":0,"
		     "\"cum\":0},\"pid\":1,\"tid\":1}]}", "threads[0]: missing \"pid\"");
	expect_error("{\"event\":\"x\",\"samples\":1}", "\"threads\" must be an array");
	expect_error("{\"event\":\"x\",\"samples\":1,\"threads\":[{\"pid\":1,\"tid\":1,\"comm\":\"a\","
		     "\"root\":{\"base\":0,\"cum\":5,\"calls\":1,\"children\":[{\"function\":\"f\","
		     "\"base\":4,\"cum\":4,\"children\":[]}]}}]}",
		     "threads[0].root: cum 5 != base + children's cum 4");
	expect_error("{\"event\":\"x\",\"samples\":1,\"threads\":[{\"pid\":1,\"tid\":1,\"root\":{"
		     "\"base\":0,\"cum\":1,\"children\":[{\"function\":\"f\",\"base\":-1,\"cum\":1}]}}]}",
		     "threads[0].root.children[0]: \"base\" must not be negative");
	/* cum == base + children's cum must not hold by wrapping around 2^64 */
	expect_error("{\"event\":\"x\",\"samples\":1,\"threads\":[{\"pid\":1,\"tid\":1,\"root\":{"
		     "\"base\":0,\"cum\":0,\"children\":[{\"function\":\"f\",\"base\":"
		     "9223372036854775807,\"cum\":9223372036854775807},{\"function\":\"g\",\"base\":"
		     "9223372036854775807,\"cum\":9223372036854775807},{\"function\":\"h\","
		     "\"base\":2,\"cum\":2}]}}]}",
		     "threads[0].root.children[2]: the children's cum add up past 2^64");
	expect_error("{\"event\":\"x\",\"samples\":1,\"duration_s\":-1,\"threads\":[]}",
		     "\"duration_s\" must be a finite number >= 0");
	expect_error("{\"event\":\"x\",\"samples\":1,\"duration_s\":\"1\",\"threads\":[]}",
		     "\"duration_s\" must be a number");
	expect_error("{\"event\":\"x\",\"samples\":1,\"modules\":{},\"threads\":[]}",
		     "\"modules\" must be an array");
	expect_error("{\"event\":\"x\",\"samples\":1,\"modules\":[{\"path\":\"/a\"}],"
		     "\"threads\":[]}", "modules[0]: missing \"name\"");
	expect_error("{\"event\":\"x\",\"samples\":1,\"modules\":[{\"name\":\"/a\","
		     "\"build_id\":\"ABC\"}],\"threads\":[]}",
		     "modules[0]: \"build_id\" must be lower-case hex");
}

/* A profile.json nested deeper than ST_TREE_MAX_DEPTH is refused, naming
 * where (json-c's own depth limit sits above it). */
static void test_json_too_deep(void **state)
{
	size_t n = ST_TREE_MAX_DEPTH + 1, cap = n * 80 + 256, len = 0;
	char *json = malloc(cap);

	(void)state;
	assert_non_null(json);
	len += (size_t)sprintf(json, "{\"event\":\"x\",\"samples\":1,\"threads\":[{\"pid\":1,"
			       "\"tid\":1,\"root\":{\"base\":0,\"cum\":1,\"children\":[");
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(json + len, "{\"function\":\"f\",\"base\":%d,\"cum\":1,"
				       "\"children\":[", i + 1 == n);
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(json + len, "]}");
	strcpy(json + len, "]}}]}");
	expect_error(json, ": threads[0].root: a tree deeper than 2048 frames");
	free(json);
}

static size_t count_lines(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_xtree_min_pct(void **state)
{
	struct st_profile *p = sample_profile();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(st_xtree__write(p, f, 5.0), 0);
	fclose(f);
	/* main+0x20 -> tiny (2 of 92 samples, 2.2%) is folded into [other] */
	assert_null(strstr(buf, "tiny"));
	assert_int_equal(count_lines(buf, "[other] (1 subtrees under the threshold)"), 1);
	assert_non_null(strstr(buf, "        2         2   2.17%        0    [other]"));
	assert_non_null(strstr(buf, "=== pid 10 tid 10 comm prog: 92 samples"));
	assert_non_null(strstr(buf, "main+0x10 [prog]"));
	assert_non_null(strstr(buf, "# samples: 149, lost: 3 (node table full 3)"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(st_xtree__write(p, f, 0), 0);
	fclose(f);
	assert_non_null(strstr(buf, "tiny [prog]"));
	assert_null(strstr(buf, "[other]"));
	free(buf);
	st_profile__free(p);
}

/* Time profiles (offcpu, wall): BASE and CUM are ns, shown as ms, and
 * profile.json says so ("unit"), read back as such. */
static void test_time_unit(void **state)
{
	struct st_profile *p = sample_profile(), *q = NULL;
	char *buf = NULL, *path = tmpfile_with(""), err[256] = "";
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(p->unit, ST_UNIT_COUNT);
	free(p->event);
	p->event = strdup("offcpu");
	p->unit = st_unit__of(p->event);
	assert_int_equal(p->unit, ST_UNIT_NS);
	f = open_memstream(&buf, &len);
	assert_int_equal(st_xtree__write(p, f, 0), 0);
	fclose(f);
	assert_non_null(strstr(buf, "# unit: ms (BASE and CUM are ms off the CPU"));
	assert_non_null(strstr(buf, "# time: 0.000 ms, lost: 3"));
	assert_non_null(strstr(buf, "=== pid 10 tid 10 comm prog: 0.000 ms off the CPU"));
	assert_non_null(strstr(buf, "    BASE ms      CUM ms"));
	free(buf);
	f = fopen(path, "w");
	assert_int_equal(st_profile__write_json(p, f, true), 0);
	fclose(f);
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), 0);
	assert_string_equal(st_profile__unit_name(q), "nanoseconds");
	assert_int_equal(q->unit, ST_UNIT_NS);
	st_profile__free(q);
	free(path);
	st_profile__free(p);
}

static void test_merge_threads(void **state)
{
	struct st_profile *p = sample_profile(), *m;

	(void)state;
	m = st_profile__merge_threads(p);
	assert_non_null(m);
	assert_int_equal(m->nthreads, 2);
	assert_int_equal(m->threads[0]->pid, 10);
	assert_int_equal(m->threads[0]->tid, 10);
	assert_string_equal(m->threads[0]->comm, "prog");
	assert_int_equal(st_thread__samples(m->threads[0]), 142);
	assert_int_equal(st_thread__samples(m->threads[1]), 7);
	assert_int_equal(m->lost, 3);
	assert_same_modules(p, m);
	st_profile__free(m);
	st_profile__free(p);
}

/* Symbols and paths are bytes: profile.json stays valid UTF-8 (invalid
 * sequences become U+FFFD) and keeps the bytes in function_raw/module_raw,
 * which the reader turns back into the same bytes. */
static void test_json_utf8(void **state)
{
	static const char fn[] = "f\xff\xc3" "abc", mod[] = "/tmp/\xe9t\xe9.so";
	struct st_profile *p = st_profile__new("cpu-clock"), *q = NULL;
	struct st_thread *t = st_profile__add_thread(p, 1, 1, "ok\xfe");
	struct st_frame a[] = { cs(p, "main", 0x10, "/bin/prog"), lf(p, fn, mod) };
	char *path = tmpfile_with(""), err[256] = "", *text = NULL;
	const struct st_node *leaf;
	size_t len = 0;
	FILE *f;

	(void)state;
	/* the validator itself: overlong, surrogate, past U+10FFFF, truncated */
	assert_true(st_json__valid_utf8("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
	assert_false(st_json__valid_utf8("\xc0\xaf"));
	assert_false(st_json__valid_utf8("\xed\xa0\x80"));
	assert_false(st_json__valid_utf8("\xf4\x90\x80\x80"));
	assert_false(st_json__valid_utf8("\xe2\x82"));
	st_tree__add_sample(t->tree, a, 2, 5, ST_CALLS_FRAME);
	st_profile__finalize(p);
	f = open_memstream(&text, &len);
	assert_int_equal(st_profile__write_json(p, f, true), 0);
	fclose(f);
	assert_true(st_json__valid_utf8(text));
	/* in the string table: the text (two U+FFFD) and the raw bytes */
	assert_non_null(strstr(text, "{\"text\":\"f\xef\xbf\xbd\xef\xbf\xbd" "abc\",\"raw\":"));
	assert_non_null(strstr(text, "{\"text\":\"/tmp/\xef\xbf\xbdt\xef\xbf\xbd.so\",\"raw\":"));
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), 0);
	leaf = st_tree__root(q->threads[0]->tree)->first_child->first_child;
	assert_string_equal(leaf->f.function, fn);
	assert_string_equal(leaf->f.module, mod);
	unlink(path);
	free(path);
	free(text);
	st_profile__free(p);
	st_profile__free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_json_version1),
		cmocka_unit_test(test_modules_once),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_json_too_deep),
		cmocka_unit_test(test_json_utf8),
		cmocka_unit_test(test_xtree_min_pct),
		cmocka_unit_test(test_time_unit),
		cmocka_unit_test(test_merge_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

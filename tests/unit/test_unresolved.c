/* test_unresolved.c - samples with frames that have no symbol, per module
 * (user/model/unresolved.c), on a hand-built profile: counted once per
 * sample and module, interior samples, pseudo and data frames left out, the
 * header line (top 5, file names), and profile.json's field read back (or
 * counted from the trees of a file without it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_fx.h"
#include "user/model/profile.h"
#include "user/output/json.h"
#include "common/strtab.h"

/* A frame without symbol in mod (NULL: no mapping covered it). */
static struct st_frame un(struct st_profile *p, enum st_frame_kind kind, __u64 addr,
			  const char *mod)
{
	return (struct st_frame){ .kind = kind, .addr = addr, .offset = addr & 0xfff,
				  .module = mod ? st_strtab__intern(p->strs, mod) : NULL };
}

static struct st_profile *sample_profile(void)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t = st_profile__add_thread(p, 10, 10, "prog");
	struct st_thread *t2 = st_profile__add_thread(p, 10, 11, "worker");
	const char *foo = "/usr/lib/libfoo.so", *bar = "/usr/lib/libbar.so.1";
	struct st_frame main_cs = cs(p, "main", 0x10, "/bin/prog");
	/* two unresolved frames of libfoo: one sample counts once */
	struct st_frame a[] = { main_cs, un(p, ST_FRAME_CALLSITE, 0x7000, foo),
				un(p, ST_FRAME_LEAF, 0x7100, foo) };
	/* libfoo and libbar on one path: counted for both */
	struct st_frame b[] = { main_cs, un(p, ST_FRAME_CALLSITE, 0x7000, foo),
				cs(p, "bar_api", 0x4, bar), un(p, ST_FRAME_LEAF, 0x9100, bar) };
	/* no mapping at all */
	struct st_frame c[] = { main_cs, un(p, ST_FRAME_LEAF, 0x1234, NULL) };
	struct st_frame d[] = { main_cs, lf(p, "work", "/bin/prog") };
	/* a sample on an interior node (its path ends at a call site) */
	struct st_frame e[] = { main_cs, un(p, ST_FRAME_CALLSITE, 0xa000, "/opt/libbaz.so") };
	/* not code frames: a pseudo frame and a data leaf without names */
	struct st_frame f[] = { { .kind = ST_FRAME_SPECIAL,
				  .function = st_strtab__intern(p->strs, "[truncated]") },
				{ .kind = ST_FRAME_DATA, .data_class = ST_DATA_HEAP,
				  .module = st_strtab__intern(p->strs, "[anon]") } };

	st_tree__add_sample(t->tree, a, 3, 30, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, b, 4, 20, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, c, 2, 5, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, d, 2, 45, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, e, 2, 3, ST_CALLS_FRAME);
	st_tree__add_sample(t->tree, f, 2, 7, ST_CALLS_FRAME);
	/* three more modules, one sample each, in another thread */
	for (int i = 0; i < 3; i++) {
		char mod[32];
		struct st_frame g;

		snprintf(mod, sizeof(mod), "/lib/libm%d.so", i);
		g = un(p, ST_FRAME_LEAF, 0x100 + (__u64)i, mod);
		st_tree__add_sample(t2->tree, &g, 1, 1, ST_CALLS_FRAME);
	}
	st_profile__finalize(p);
	p->samples = 113;
	return p;
}

static void test_count(void **state)
{
	struct st_profile *p = sample_profile();
	static const struct {
		const char *name;
		__u64 n;
	} want[] = {
		{ "/usr/lib/libfoo.so", 50 }, { "/usr/lib/libbar.so.1", 20 }, { "[unknown]", 5 },
		{ "/opt/libbaz.so", 3 },      { "/lib/libm0.so", 1 },	      { "/lib/libm1.so", 1 },
		{ "/lib/libm2.so", 1 },
	};
	char line[512];

	(void)state;
	assert_int_equal(st_profile__count_unresolved(p), 0);
	assert_int_equal(p->unresolved, 30 + 20 + 5 + 3 + 3);
	assert_int_equal(p->nunresolved_by, 7);
	for (size_t i = 0; i < 7; i++) {
		assert_string_equal(p->unresolved_by[i].name, want[i].name);
		assert_int_equal(p->unresolved_by[i].value, want[i].n);
	}
	/* counting again replaces, never adds */
	assert_int_equal(st_profile__count_unresolved(p), 0);
	assert_int_equal(p->unresolved, 61);
	assert_int_equal(p->nunresolved_by, 7);
	assert_string_equal(st_profile__unresolved_line(p, line, sizeof(line)),
			    "unresolved frames: 54.0% of samples; top modules: libfoo.so (44.2%), "
			    "libbar.so.1 (17.7%), [unknown] (4.4%), libbaz.so (2.7%), "
			    "libm0.so (0.9%)");
	/* a short buffer is cut, never overrun */
	assert_non_null(st_profile__unresolved_line(p, line, 20));
	assert_int_equal(strlen(line), 19);
	st_profile__free(p);
}

static void test_none(void **state)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t = st_profile__add_thread(p, 1, 1, "x");
	struct st_frame d[] = { cs(p, "main", 0x10, "/bin/prog"), lf(p, "work", "/bin/prog") };
	char line[128];

	(void)state;
	assert_null(st_profile__unresolved_line(p, line, sizeof(line)));	/* no samples */
	st_tree__add_sample(t->tree, d, 2, 4, ST_CALLS_FRAME);
	st_profile__finalize(p);
	p->samples = 4;
	assert_int_equal(st_profile__count_unresolved(p), 0);
	assert_int_equal(p->unresolved, 0);
	assert_int_equal(p->nunresolved_by, 0);
	assert_string_equal(st_profile__unresolved_line(p, line, sizeof(line)),
			    "unresolved frames: 0.0% of samples");
	st_profile__free(p);
}

static char *json_file(const struct st_profile *p)
{
	char *path = strdup("/tmp/st-unit-XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	assert_non_null(f);
	assert_int_equal(st_profile__write_json(p, f, false), 0);
	fclose(f);
	return path;
}

static void test_json(void **state)
{
	struct st_profile *p = sample_profile(), *q = NULL;
	char err[256] = "", *path;

	(void)state;
	assert_int_equal(st_profile__count_unresolved(p), 0);
	/* the field as written, even when it disagrees with the trees */
	p->unresolved = 77;
	path = json_file(p);
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), 0);
	assert_int_equal(q->unresolved, 77);
	assert_int_equal(q->nunresolved_by, 7);
	assert_string_equal(q->unresolved_by[0].name, "/usr/lib/libfoo.so");
	assert_int_equal(q->unresolved_by[0].value, 50);
	assert_string_equal(q->unresolved_by[6].name, "/lib/libm2.so");
	unlink(path);
	free(path);
	st_profile__free(q);
	q = NULL;
	st_profile__free(p);

	/* a file from before the field: counted from its trees */
	path = strdup("/tmp/st-unit-XXXXXX");
	{
		int fd = mkstemp(path);
		static const char old[] =
			"{\"event\":\"cpu-clock\",\"samples\":4,\"threads\":[{\"pid\":1,\"tid\":1,"
			"\"comm\":\"x\",\"root\":{\"function\":null,\"kind\":\"root\",\"base\":0,"
			"\"cum\":4,\"calls\":0,\"children\":[{\"function\":null,\"module\":"
			"\"/lib/liby.so\",\"kind\":\"leaf\",\"address\":\"0x1000\",\"base\":3,"
			"\"cum\":3,\"calls\":1,\"children\":[]},{\"function\":\"f\",\"module\":"
			"\"/bin/x\",\"kind\":\"leaf\",\"address\":\"0x2000\",\"base\":1,\"cum\":1,"
			"\"calls\":1,\"children\":[]}]}}]}";

		assert_int_equal(write(fd, old, sizeof(old) - 1), (ssize_t)(sizeof(old) - 1));
		close(fd);
	}
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), 0);
	assert_int_equal(q->unresolved, 3);
	assert_int_equal(q->nunresolved_by, 1);
	assert_string_equal(q->unresolved_by[0].name, "/lib/liby.so");
	unlink(path);
	free(path);
	st_profile__free(q);
}

static void expect_error(const char *json, const char *want)
{
	char *path = strdup("/tmp/st-unit-XXXXXX"), err[512] = "";
	int fd = mkstemp(path);
	struct st_profile *q = NULL;

	assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
	close(fd);
	assert_int_equal(st_profile__read_json(path, &q, err, sizeof(err)), -22);
	assert_non_null(strstr(err, want));
	assert_null(q);
	unlink(path);
	free(path);
}

/* counts that cannot be */
static void test_json_errors(void **state)
{
	(void)state;
	expect_error("{\"event\":\"x\",\"samples\":1,\"unresolved\":2,\"threads\":[]}",
		     "\"unresolved\" past \"samples\"");
	expect_error("{\"event\":\"x\",\"samples\":5,\"unresolved\":2,"
		     "\"unresolved_by\":{\"/lib/a.so\":3},\"threads\":[]}",
		     "unresolved_by: \"/lib/a.so\" past \"unresolved\"");
	expect_error("{\"event\":\"x\",\"samples\":5,\"unresolved_by\":{\"a\":-1},"
		     "\"threads\":[]}", "must be a non-negative integer");
}

/* --merge-threads keeps the counts */
static void test_merge_threads(void **state)
{
	struct st_profile *p = sample_profile(), *m;

	(void)state;
	assert_int_equal(st_profile__count_unresolved(p), 0);
	m = st_profile__merge_threads(p);
	assert_non_null(m);
	assert_int_equal(m->unresolved, p->unresolved);
	assert_int_equal(m->nunresolved_by, p->nunresolved_by);
	st_profile__free(m);
	st_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_merge_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

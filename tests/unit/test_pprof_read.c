/* test_pprof_read.c - the pprof reader (user/model/pprof_read.c): the
 * profile stacktreed writes read back (plain and gzipped) with the same
 * functions and shares; ids that do not exist, a bad string_table and
 * bytes that are not a profile refused with a reason. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto/profile.pb-c.h"
#include "user/model/folded.h"
#include "user/model/functab.h"
#include "user/model/pprof_read.h"
#include "user/model/profile.h"
#include "user/output/pprof.h"

static const char stacks[] = "main;parse;lex 30\nmain;parse 10\nmain;eval;eval;eval 50\nmain 10\n";

static struct st_profile *folded(void)
{
	FILE *f = fmemopen((void *)stacks, strlen(stacks), "r");
	struct st_profile *p = NULL;
	char err[256];

	assert_non_null(f);
	assert_int_equal(st_folded__read(f, "x", &p, err, sizeof(err)), 0);
	fclose(f);
	return p;
}

/* The function table of p as "name self total;" text, by self. */
static void table(const struct st_profile *p, char *buf, size_t len)
{
	struct st_functab *t = st_functab__new(p, 0);
	size_t off = 0;

	assert_non_null(t);
	for (size_t i = 0; i < t->n; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s %llu %llu;", t->rows[i].f.function,
					(unsigned long long)t->rows[i].self,
					(unsigned long long)t->rows[i].total);
	st_functab__free(t);
}

static void test_round_trip(void **state)
{
	struct st_profile *p = folded(), *q = NULL, *g = NULL;
	unsigned char *buf = NULL;
	char *gz = NULL, want[512], got[512], err[256];
	size_t len = 0, gzlen = 0;
	FILE *f;

	(void)state;
	assert_int_equal(st_pprof__encode(p, &buf, &len), 0);
	assert_int_equal(st_pprof__read(buf, len, "dir/a.pprof", &q, err, sizeof(err)), 0);
	assert_int_equal(q->samples, 100);
	assert_string_equal(q->threads[0]->comm, "a.pprof");
	table(p, want, sizeof(want));
	table(q, got, sizeof(got));
	assert_string_equal(got, want);
	assert_string_equal(want, "eval 50 50;lex 30 30;main 10 100;parse 10 40;");

	f = open_memstream(&gz, &gzlen);
	assert_non_null(f);
	assert_int_equal(st_pprof__write(p, f), 0);
	fclose(f);
	assert_true(st_pprof__looks_like((unsigned char *)gz, gzlen, "x"));
	assert_int_equal(st_pprof__read((unsigned char *)gz, gzlen, "b", &g, err, sizeof(err)), 0);
	table(g, got, sizeof(got));
	assert_string_equal(got, want);
	free(buf);
	free(gz);
	st_profile__free(p);
	st_profile__free(q);
	st_profile__free(g);
}

static int read_packed(Perftools__Profiles__Profile *m, char *err, size_t errlen)
{
	size_t len = perftools__profiles__profile__get_packed_size(m);
	unsigned char *buf = malloc(len + 1);
	struct st_profile *p = NULL;
	int ret;

	assert_non_null(buf);
	perftools__profiles__profile__pack(m, buf);
	ret = st_pprof__read(buf, len, "t", &p, err, errlen);
	st_profile__free(p);
	free(buf);
	return ret;
}

static void test_refused(void **state)
{
	Perftools__Profiles__Profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__ValueType *vts[] = { &vt };
	Perftools__Profiles__Sample *ss[] = { &s };
	char *strs[] = { (char *)"", (char *)"samples" }, *bad[] = { (char *)"x" };
	uint64_t loc = 7;
	int64_t val = 3;
	struct st_profile *p = NULL;
	char err[256];

	(void)state;
	m.n_string_table = 2;
	m.string_table = strs;
	m.n_sample_type = 1;
	m.sample_type = vts;
	vt.type = 1;
	m.n_sample = 1;
	m.sample = ss;
	s.n_location_id = 1;
	s.location_id = &loc;
	s.n_value = 1;
	s.value = &val;
	assert_int_equal(read_packed(&m, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "a sample names a location that does not exist");
	m.string_table = bad;
	m.n_string_table = 1;
	assert_int_equal(read_packed(&m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "string_table[0]"));
	assert_int_equal(st_pprof__read((const unsigned char *)"\x1f\x8bzz", 4, "g", &p, err,
					sizeof(err)), -EINVAL);
	assert_string_equal(err, "not valid gzip data");
	assert_null(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

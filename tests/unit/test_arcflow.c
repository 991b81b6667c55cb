/* test_arcflow.c - arcflow on the two vectors, on random trees
 * against a brute-force count over the samples, and its JSON shape
 * (profile.json version 5), read back into version 4's and compared with
 * what the version 4 writer wrote for the same profiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "user/output/arcflow.h"
#include "user/output/json.h"
#include "user/model/profile.h"
#include "common/strtab.h"
#include "common/tree.h"
#include "fixtures/fx_util.h"

/* ---- helpers -------------------------------------------------------------- */

/* Add one sample "a;b;c" (function frames) with count to thread t. */
static void add_folded(struct st_profile *p, struct st_thread *t, const char *stack,
		       __u64 count)
{
	struct st_frame path[64];
	size_t n = 0;
	const char *s = stack;

	while (*s) {
		const char *e = strchr(s, ';');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		assert_true(n < 64);
		path[n] = (struct st_frame){ .kind = ST_FRAME_FUNCTION };
		path[n].function = st_strtab__intern_len(p->strs, s, len);
		assert_non_null(path[n].function);
		n++;
		s += len + (e ? 1 : 0);
	}
	assert_non_null(st_tree__add_sample(t->tree, path, n, count, ST_CALLS_FUNCTION));
	p->samples += count;
}

/* Entry e's name in "strings" (the text of a name that is not UTF-8). */
static const char *string_at(struct json_object *strs, struct json_object *i)
{
	struct json_object *s;

	assert_true(json_object_is_type(i, json_type_int));
	assert_true(json_object_get_int64(i) >= 0 &&
		    (size_t)json_object_get_int64(i) < json_object_array_length(strs));
	s = json_object_array_get_idx(strs, (size_t)json_object_get_int64(i));
	if (json_object_is_type(s, json_type_object))
		assert_true(json_object_object_get_ex(s, "text", &s));
	assert_true(json_object_is_type(s, json_type_string));
	return json_object_get_string(s);
}

/* Item k of a row or an entry of version 5: a count. */
static struct json_object *count_at(struct json_object *a, size_t k)
{
	struct json_object *v = json_object_array_get_idx(a, k);

	assert_true(json_object_is_type(v, json_type_int));
	assert_true(json_object_get_int64(v) >= 0);
	return json_object_new_int64(json_object_get_int64(v));
}

/* Rows of version 5 ([entry, calls, base, cum, recursive]) as version 4's
 * objects, the other function by name. */
static struct json_object *v4_rows(struct json_object *rows, struct json_object *arc,
				   struct json_object *strs)
{
	static const char *const keys[] = { "calls", "base", "cum" };
	struct json_object *out = json_object_new_array();

	assert_true(json_object_is_type(rows, json_type_array));
	for (size_t k = 0; k < json_object_array_length(rows); k++) {
		struct json_object *r = json_object_array_get_idx(rows, k), *o, *rec, *ent;
		int64_t e;

		assert_true(json_object_is_type(r, json_type_array));
		assert_int_equal(json_object_array_length(r), 5);
		ent = json_object_array_get_idx(r, 0);
		assert_true(json_object_is_type(ent, json_type_int));
		e = json_object_get_int64(ent);
		assert_true(e >= 0 && (size_t)e < json_object_array_length(arc));
		rec = json_object_array_get_idx(r, 4);
		assert_true(json_object_is_type(rec, json_type_int));
		assert_true(json_object_get_int64(rec) == 0 || json_object_get_int64(rec) == 1);
		o = json_object_new_object();
		json_object_object_add(o, "function", json_object_new_string(string_at(
			strs, json_object_array_get_idx(json_object_array_get_idx(arc, (size_t)e), 0))));
		for (size_t q = 0; q < 3; q++)
			json_object_object_add(o, keys[q], count_at(r, q + 1));
		json_object_object_add(o, "recursive",
				       json_object_new_boolean(json_object_get_int64(rec) == 1));
		json_object_array_add(out, o);
	}
	return out;
}

/* A version 5 "arcflow" (arc, names in strs) in version 4's shape: entries
 * {"index", "function", "calls", "base", "cum", "cum_all", "parents",
 * "children"}, rows {"function", "calls", "base", "cum", "recursive"}. The
 * shape of version 5 is checked on the way: 7 items an entry, 5 a row,
 * indexes in range, recursive 0 or 1. */
static struct json_object *v4_form(struct json_object *arc, struct json_object *strs)
{
	static const char *const keys[] = { "calls", "base", "cum", "cum_all" };
	struct json_object *out = json_object_new_array();

	assert_true(json_object_is_type(arc, json_type_array));
	for (size_t i = 0; i < json_object_array_length(arc); i++) {
		struct json_object *e = json_object_array_get_idx(arc, i);
		struct json_object *o = json_object_new_object();

		assert_true(json_object_is_type(e, json_type_array));
		assert_int_equal(json_object_array_length(e), 7);
		json_object_object_add(o, "index", json_object_new_int64((int64_t)i));
		json_object_object_add(o, "function", json_object_new_string(
			string_at(strs, json_object_array_get_idx(e, 0))));
		for (size_t q = 0; q < 4; q++)
			json_object_object_add(o, keys[q], count_at(e, q + 1));
		json_object_object_add(o, "parents",
				       v4_rows(json_object_array_get_idx(e, 5), arc, strs));
		json_object_object_add(o, "children",
				       v4_rows(json_object_array_get_idx(e, 6), arc, strs));
		json_object_array_add(out, o);
	}
	return out;
}

/* The "arcflow" array as streamed into profile.json (version 5), parsed
 * by json-c; its names in *strs (a table of the entries' names: entry i's
 * function is string i). */
static struct json_object *streamed_compact(const struct st_arcflow *a, struct json_object **strs)
{
	size_t n = st_arcflow__count(a);
	int64_t *strid = calloc(n ? n : 1, sizeof(*strid));
	struct json_object *j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_non_null(strid);
	*strs = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		strid[i] = (int64_t)i;
		json_object_array_add(*strs, json_object_new_string(st_arcflow__name(a, i)));
	}
	assert_null(st_arcflow__name(a, n));
	assert_int_equal(st_arcflow__write_json(a, strid, f), 0);
	fclose(f);
	j = json_tokener_parse(buf);
	free(buf);
	free(strid);
	return j;
}

/* The same in version 4's shape (v4_form()). */
static struct json_object *streamed_json(const struct st_arcflow *a)
{
	struct json_object *strs, *c = streamed_compact(a, &strs), *j;

	assert_non_null(c);
	j = v4_form(c, strs);
	json_object_put(c);
	json_object_put(strs);
	return j;
}

static struct json_object *arcflow_json(const struct st_profile *p)
{
	struct st_arcflow *a = st_arcflow__build(p);
	struct json_object *j;

	assert_non_null(a);
	j = streamed_json(a);
	assert_non_null(j);
	st_arcflow__free(a);
	return j;
}

static __u64 u64_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	assert_true(json_object_is_type(v, json_type_int));
	return json_object_get_uint64(v);
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static struct json_object *arr_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	assert_true(json_object_is_type(v, json_type_array));
	return v;
}

static bool rec_of(struct json_object *o)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, "recursive", &v));
	assert_true(json_object_is_type(v, json_type_boolean));
	return json_object_get_boolean(v);
}

static struct json_object *find_entry(struct json_object *arr, const char *fn)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		if (!strcmp(str_of(e, "function"), fn))
			return e;
	}
	print_error("no arcflow entry for %s\n", fn);
	fail();
	return NULL;
}

struct xrow {
	const char *fn;
	bool rec;
	__u64 calls, base, cum;
};

static void check_self(struct json_object *e, __u64 calls, __u64 base, __u64 cum, __u64 cum_all)
{
	assert_int_equal(u64_of(e, "calls"), calls);
	assert_int_equal(u64_of(e, "base"), base);
	assert_int_equal(u64_of(e, "cum"), cum);
	assert_int_equal(u64_of(e, "cum_all"), cum_all);
}

/* The rows under key are exactly the n expected ones (any order). */
static void check_rows(struct json_object *e, const char *key, const struct xrow *x, size_t n)
{
	struct json_object *rows = arr_of(e, key);

	assert_int_equal(json_object_array_length(rows), n);
	for (size_t i = 0; i < n; i++) {
		size_t found = 0;

		for (size_t j = 0; j < n; j++) {
			struct json_object *r = json_object_array_get_idx(rows, j);

			if (strcmp(str_of(r, "function"), x[i].fn) || rec_of(r) != x[i].rec)
				continue;
			found++;
			assert_int_equal(u64_of(r, "calls"), x[i].calls);
			assert_int_equal(u64_of(r, "base"), x[i].base);
			assert_int_equal(u64_of(r, "cum"), x[i].cum);
		}
		if (found != 1)
			print_error("%s row %s%s found %zu times\n", key, x[i].rec ? "r" : "",
				    x[i].fn, found);
		assert_int_equal(found, 1);
	}
}

#define ROWS(...) ((const struct xrow[]){ __VA_ARGS__ }), \
	(sizeof((const struct xrow[]){ __VA_ARGS__ }) / sizeof(struct xrow))

/* ---- the seed's 19-sample vector ---------------------------------------- */

static const char *const seed_stacks[] = {
	"C", "C;A", "C;A;B", "C;A", "C;A;B", "C;A;B;B", "C;A;B", "C;A", "C", "C;B",
	"C;B;A", "C;B;A;B", "C;B;A;B;A", "C;B;A;B", "C;B;A", "C;B;A;X", "C;B;A", "C;B", "C",
};
#define SEED_ROOT "[pid 7 tid 7 seed]"

static struct st_profile *seed_profile(void)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_thread *t;

	assert_non_null(p);
	p->frequency_hz = 100;
	t = st_profile__add_thread(p, 7, 7, "seed");
	assert_non_null(t);
	for (size_t i = 0; i < sizeof(seed_stacks) / sizeof(seed_stacks[0]); i++)
		add_folded(p, t, seed_stacks[i], 1);
	st_profile__finalize(p);
	return p;
}

static void test_seed_vector(void **state)
{
	struct st_profile *p = seed_profile();
	struct json_object *j = arcflow_json(p), *e;

	(void)state;
	assert_int_equal(json_object_array_length(j), 5);

	e = find_entry(j, SEED_ROOT);
	check_self(e, 1, 0, 19, 19);
	check_rows(e, "parents", NULL, 0);
	check_rows(e, "children", ROWS({ "C", false, 1, 3, 19 }));

	e = find_entry(j, "C");
	check_self(e, 1, 3, 19, 19);
	check_rows(e, "parents", ROWS({ SEED_ROOT, false, 1, 3, 19 }));
	check_rows(e, "children", ROWS({ "B", false, 1, 2, 9 }, { "A", false, 1, 3, 7 }));

	e = find_entry(j, "A");
	check_self(e, 3, 7, 14, 15);
	check_rows(e, "parents", ROWS({ "C", false, 1, 3, 7 }, { "B", false, 1, 3, 7 },
				      { "B", true, 1, 1, 1 }));
	check_rows(e, "children", ROWS({ "B", false, 3, 5, 7 }, { "X", false, 1, 1, 1 }));

	e = find_entry(j, "B");
	check_self(e, 5, 8, 13, 17);
	check_rows(e, "parents", ROWS({ "A", false, 2, 3, 4 }, { "A", true, 1, 2, 3 },
				      { "B", true, 1, 1, 1 }, { "C", false, 1, 2, 9 }));
	check_rows(e, "children", ROWS({ "A", false, 1, 3, 7 }, { "A", true, 1, 1, 1 },
				       { "B", false, 1, 1, 1 }));

	e = find_entry(j, "X");
	check_self(e, 1, 1, 1, 1);
	check_rows(e, "parents", ROWS({ "A", false, 1, 1, 1 }));
	check_rows(e, "children", NULL, 0);

	json_object_put(j);
	st_profile__free(p);
}

/* ---- the folded start/main/A/B/C/D vector: exact attribution of D ----- */

static void test_exact_attribution_vector(void **state)
{
	static const struct {
		const char *stack;
		__u64 n;
	} lines[] = {
		{ "start", 1 }, { "start;main", 10 }, { "start;main;A", 100 },
		{ "start;main;A;B", 200 }, { "start;main;A;C", 300 },
		{ "start;main;A;B;D", 300 }, { "start;main;A;C;D", 100 },
	};
	struct st_profile *p = st_profile__new("folded");
	struct st_thread *t = st_profile__add_thread(p, 0, 0, "vec2");
	struct json_object *j, *e;

	(void)state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		add_folded(p, t, lines[i].stack, lines[i].n);
	st_profile__finalize(p);
	j = arcflow_json(p);
	assert_int_equal(json_object_array_length(j), 7);

	check_self(find_entry(j, "start"), 1, 1, 1011, 1011);
	check_self(find_entry(j, "main"), 1, 10, 1010, 1010);
	check_self(find_entry(j, "A"), 1, 100, 1000, 1000);
	check_self(find_entry(j, "B"), 2, 200, 500, 500);
	check_self(find_entry(j, "C"), 2, 300, 400, 400);
	e = find_entry(j, "D");
	check_self(e, 2, 400, 400, 400);
	check_rows(e, "parents", ROWS({ "B", false, 1, 300, 300 }, { "C", false, 1, 100, 100 }));
	check_rows(e, "children", NULL, 0);
	e = find_entry(j, "A");
	check_rows(e, "parents", ROWS({ "main", false, 1, 100, 1000 }));
	check_rows(e, "children", ROWS({ "B", false, 2, 200, 500 }, { "C", false, 2, 300, 400 }));
	check_rows(find_entry(j, "B"), "children", ROWS({ "D", false, 1, 300, 300 }));
	check_rows(find_entry(j, "C"), "children", ROWS({ "D", false, 1, 100, 100 }));
	check_rows(find_entry(j, "[pid 0 tid 0 vec2]"), "children",
		   ROWS({ "start", false, 1, 1, 1011 }));

	json_object_put(j);
	st_profile__free(p);
}

/* ---- invariants, on any arcflow ------------------------------------------ */

static void check_invariants(struct json_object *arr)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct json_object *par = arr_of(e, "parents"), *chi = arr_of(e, "children");
		__u64 pc = 0, pb = 0, pcum = 0, pcum_all = 0, ccum = 0;
		bool root = str_of(e, "function")[0] == '[' &&
			    !strncmp(str_of(e, "function"), "[pid ", 5);

		for (size_t k = 0; k < json_object_array_length(par); k++) {
			struct json_object *r = json_object_array_get_idx(par, k);

			pc += u64_of(r, "calls");
			pb += u64_of(r, "base");
			pcum_all += u64_of(r, "cum");
			if (!rec_of(r))
				pcum += u64_of(r, "cum");
		}
		for (size_t k = 0; k < json_object_array_length(chi); k++)
			ccum += u64_of(json_object_array_get_idx(chi, k), "cum");
		assert_int_equal(ccum, u64_of(e, "cum_all") - u64_of(e, "base"));
		if (root) {
			assert_int_equal(json_object_array_length(par), 0);
			continue;
		}
		assert_int_equal(pc, u64_of(e, "calls"));
		assert_int_equal(pb, u64_of(e, "base"));
		assert_int_equal(pcum, u64_of(e, "cum"));
		assert_int_equal(pcum_all, u64_of(e, "cum_all"));
		assert_true(u64_of(e, "cum_all") >= u64_of(e, "cum"));
	}
}

/* ---- random trees against brute force ----------------------------------- */

#define NFN 6		/* functions f0..f5 */
#define NTHR 3
#define NID (NFN + NTHR)	/* ids: functions, then thread roots */
#define MAXD 9

struct bcount {
	__u64 calls, base, cum, cum_all;
};

struct brute {
	struct bcount self[NID];
	struct bcount row[2][NID][NID][2];	/* [dir][self][other][recursive] */
};

/* xorshift64*: deterministic across libcs */
static __u64 rnd(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static void brute_sample(struct brute *b, int root, const int *path, size_t n, size_t k,
			 __u64 c)
{
	bool rec[MAXD];

	b->self[root].cum += c;
	b->self[root].cum_all += c;
	if (!n)
		b->self[root].base += c;
	for (size_t i = 0; i < n; i++) {
		int f = path[i], par = i ? path[i - 1] : root;
		bool prec = i ? rec[i - 1] : false;
		struct bcount *pr, *cr;

		rec[i] = false;
		for (size_t j = 0; j < i; j++)
			rec[i] |= path[j] == f;
		pr = &b->row[0][f][par][rec[i]];
		cr = &b->row[1][par][f][prec];
		b->self[f].cum_all += c;
		if (!rec[i])
			b->self[f].cum += c;
		pr->cum += c;
		cr->cum += c;
		if (i == n - 1) {
			b->self[f].base += c;
			pr->base += c;
			cr->base += c;
		}
		if (i >= k) {
			b->self[f].calls++;
			pr->calls++;
			cr->calls++;
		}
	}
}

static void id_name(int id, char *buf, size_t len)
{
	if (id < NFN)
		snprintf(buf, len, "f%d", id);
	else
		snprintf(buf, len, "[pid 1 tid %d t%d]", id - NFN + 10, id - NFN);
}

static int name_id(const char *s)
{
	char buf[64];

	for (int i = 0; i < NID; i++) {
		id_name(i, buf, sizeof(buf));
		if (!strcmp(buf, s))
			return i;
	}
	fail_msg("unexpected function %s", s);
	return -1;
}

/* Compare arcflow JSON with the brute-force counts; calls only if with_calls. */
static void brute_compare(struct json_object *arr, const struct brute *b, bool with_calls)
{
	size_t nexp = 0;

	/* one entry per function seen and per thread (each has samples) */
	for (int i = 0; i < NID; i++)
		nexp += b->self[i].cum_all > 0;
	assert_int_equal(json_object_array_length(arr), nexp);
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		int id = name_id(str_of(e, "function"));
		size_t nrows[2] = { 0, 0 }, want[2] = { 0, 0 };

		assert_int_equal(u64_of(e, "base"), b->self[id].base);
		assert_int_equal(u64_of(e, "cum"), b->self[id].cum);
		assert_int_equal(u64_of(e, "cum_all"), b->self[id].cum_all);
		if (with_calls)
			assert_int_equal(u64_of(e, "calls"), id >= NFN ? 1 : b->self[id].calls);
		for (int d = 0; d < 2; d++) {
			struct json_object *rows = arr_of(e, d ? "children" : "parents");

			for (int o = 0; o < NID; o++)
				for (int r = 0; r < 2; r++)
					want[d] += b->row[d][id][o][r].cum > 0;
			nrows[d] = json_object_array_length(rows);
			for (size_t k = 0; k < nrows[d]; k++) {
				struct json_object *row = json_object_array_get_idx(rows, k);
				int o = name_id(str_of(row, "function"));
				const struct bcount *x = &b->row[d][id][o][rec_of(row)];

				assert_true(x->cum > 0);
				assert_int_equal(u64_of(row, "base"), x->base);
				assert_int_equal(u64_of(row, "cum"), x->cum);
				if (with_calls)
					assert_int_equal(u64_of(row, "calls"), x->calls);
			}
			/* as many rows as distinct keys: no duplicates, none missing */
			assert_int_equal(nrows[d], want[d]);
		}
	}
}

/* One random profile. callsites: frames are call sites at one of two
 * offsets plus a leaf (daemon-like, ST_CALLS_FRAME); else function frames. */
static void random_profile(__u64 *seed, bool callsites)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct brute *b = calloc(1, sizeof(*b));
	const char *fn[NFN];
	int nthreads = 1 + (int)(rnd(seed) % NTHR);
	int nfn = 2 + (int)(rnd(seed) % (NFN - 1));
	struct json_object *j;

	assert_non_null(p);
	assert_non_null(b);
	for (int i = 0; i < NFN; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		fn[i] = st_strtab__intern(p->strs, name);
	}
	for (int th = 0; th < nthreads; th++) {
		char comm[16];
		struct st_thread *t;
		int prev[MAXD], prevn = 0;
		size_t nsamples = 1 + rnd(seed) % 60;

		snprintf(comm, sizeof(comm), "t%d", th);
		t = st_profile__add_thread(p, 1, 10 + th, comm);
		assert_non_null(t);
		for (size_t s = 0; s < nsamples; s++) {
			struct st_frame path[MAXD];
			int ids[MAXD];
			size_t n = rnd(seed) % MAXD, k = 0;
			__u64 c = 1 + rnd(seed) % 3;

			/* often stay close to the previous path, as real samples do */
			if (prevn && rnd(seed) % 2) {
				n = (size_t)prevn;
				memcpy(ids, prev, sizeof(prev));
				if (n && rnd(seed) % 2)
					ids[rnd(seed) % n] = (int)(rnd(seed) % nfn);
			} else {
				for (size_t i = 0; i < n; i++)
					ids[i] = (int)(rnd(seed) % nfn);
			}
			for (size_t i = 0; i < n; i++) {
				path[i] = (struct st_frame){ .kind = ST_FRAME_FUNCTION,
							     .function = fn[ids[i]] };
				if (callsites) {
					path[i].kind = i + 1 < n ? ST_FRAME_CALLSITE : ST_FRAME_LEAF;
					path[i].offset = i + 1 < n ? 0x10 + 0x10 * (rnd(seed) % 2) : 0;
				}
			}
			while (k < n && k < (size_t)prevn && ids[k] == prev[k])
				k++;
			assert_non_null(st_tree__add_sample(t->tree, path, n, c,
							    callsites ? ST_CALLS_FRAME
								      : ST_CALLS_FUNCTION));
			p->samples += c;
			brute_sample(b, NFN + th, ids, n, k, c);
			memcpy(prev, ids, sizeof(ids));
			prevn = (int)n;
		}
	}
	st_profile__finalize(p);
	j = arcflow_json(p);
	check_invariants(j);
	brute_compare(j, b, !callsites);
	/* sorted by CUM, indexes in order */
	for (size_t i = 0; i < json_object_array_length(j); i++) {
		struct json_object *e = json_object_array_get_idx(j, i);

		assert_int_equal(u64_of(e, "index"), i);
		if (i)
			assert_true(u64_of(json_object_array_get_idx(j, i - 1), "cum") >=
				    u64_of(e, "cum"));
	}
	json_object_put(j);
	free(b);
	st_profile__free(p);
}

static void test_random_function_trees(void **state)
{
	__u64 seed = 0x5eed1234abcdULL;

	(void)state;
	for (int i = 0; i < 400; i++)
		random_profile(&seed, false);
}

static void test_random_callsite_trees(void **state)
{
	__u64 seed = 0xc0ffee77ULL;

	(void)state;
	for (int i = 0; i < 300; i++)
		random_profile(&seed, true);
}

/* ---- frames without a function; merged threads --------------------------- */

static void test_unknown_frames_and_threads(void **state)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	const char *mod = st_strtab__intern(p->strs, "/usr/lib/libfoo.so");
	const char *work = st_strtab__intern(p->strs, "work");
	struct st_frame path[3] = {
		{ .kind = ST_FRAME_CALLSITE, .function = work, .offset = 0x10 },
		{ .kind = ST_FRAME_CALLSITE, .module = mod, .offset = 0x1234 },
		{ .kind = ST_FRAME_LEAF, .function = work },
	};
	struct json_object *j, *e;

	(void)state;
	for (int th = 0; th < 2; th++) {
		struct st_thread *t = st_profile__add_thread(p, 5, 5 + th, "w");

		assert_non_null(st_tree__add_sample(t->tree, path, 3, 2, ST_CALLS_FRAME));
		assert_non_null(st_tree__add_sample(t->tree, path, 2, 1, ST_CALLS_FRAME));
	}
	st_profile__finalize(p);
	j = arcflow_json(p);
	check_invariants(j);
	/* two thread roots + work + the module frame */
	assert_int_equal(json_object_array_length(j), 4);
	e = find_entry(j, "work");
	check_self(e, 4, 4, 6, 10);
	check_rows(e, "parents", ROWS({ "[pid 5 tid 5 w]", false, 1, 0, 3 },
				      { "[pid 5 tid 6 w]", false, 1, 0, 3 },
				      { "libfoo.so+0x1234", true, 2, 4, 4 }));
	check_rows(e, "children", ROWS({ "libfoo.so+0x1234", false, 2, 2, 6 }));
	e = find_entry(j, "libfoo.so+0x1234");
	check_self(e, 2, 2, 6, 6);
	/* the work node under it is recursive, but rCHILD marks recursive parents */
	check_rows(e, "children", ROWS({ "work", false, 2, 4, 4 }));
	json_object_put(j);

	/* merged: one root, same function totals */
	{
		struct st_profile *m = st_profile__merge_threads(p);

		assert_non_null(m);
		j = arcflow_json(m);
		check_invariants(j);
		assert_int_equal(json_object_array_length(j), 3);
		check_self(find_entry(j, "[pid 5 tid 5 w]"), 1, 0, 6, 6);
		check_self(find_entry(j, "work"), 4, 4, 6, 10);
		json_object_put(j);
		st_profile__free(m);
	}
	st_profile__free(p);
}

static void test_empty_profile(void **state)
{
	struct st_profile *p = st_profile__new("cpu-clock");
	struct st_arcflow *a = st_arcflow__build(p);
	struct json_object *j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(a);
	j = streamed_json(a);
	assert_int_equal(json_object_array_length(j), 0);
	assert_int_equal(st_arcflow__write_text(a, p, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "SOURCE"));
	free(buf);
	json_object_put(j);
	st_arcflow__free(a);
	st_profile__free(p);
	st_arcflow__free(NULL);
}

/* ---- JSON shape and text report ------------------------------------------ */

static void test_json_shape_matches_text(void **state)
{
	struct st_profile *p = seed_profile();
	struct st_arcflow *a = st_arcflow__build(p);
	struct json_object *strs, *c = streamed_compact(a, &strs), *j = v4_form(c, strs);
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, selfs = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(st_arcflow__write_text(a, p, f), 0);
	fclose(f);
	/* version 5: [function, calls, base, cum, cum_all, parents, children],
	 * rows [entry, calls, base, cum, recursive], numbers only */
	for (size_t i = 0; i < json_object_array_length(c); i++) {
		struct json_object *e = json_object_array_get_idx(c, i);

		assert_int_equal(json_object_get_int64(json_object_array_get_idx(e, 0)), i);
		for (size_t k = 0; k < 5; k++)
			assert_true(json_object_is_type(json_object_array_get_idx(e, k),
							json_type_int));
		for (int d = 0; d < 2; d++) {
			struct json_object *rows = json_object_array_get_idx(e, 5 + d);

			for (size_t k = 0; k < json_object_array_length(rows); k++) {
				struct json_object *r = json_object_array_get_idx(rows, k);

				for (size_t q = 0; q < 5; q++)
					assert_true(json_object_is_type(
						json_object_array_get_idx(r, q), json_type_int));
				/* rows sorted by CUM descending */
				if (k)
					assert_true(json_object_get_int64(json_object_array_get_idx(
						json_object_array_get_idx(rows, k - 1), 3)) >=
						    json_object_get_int64(json_object_array_get_idx(r, 3)));
			}
		}
	}
	/* the seed's order: [0] root, [1] C, [2] A, [3] B, [4] X */
	assert_string_equal(str_of(json_object_array_get_idx(j, 0), "function"), SEED_ROOT);
	assert_string_equal(str_of(json_object_array_get_idx(j, 1), "function"), "C");
	assert_string_equal(str_of(json_object_array_get_idx(j, 2), "function"), "A");
	assert_string_equal(str_of(json_object_array_get_idx(j, 3), "function"), "B");
	assert_string_equal(str_of(json_object_array_get_idx(j, 4), "function"), "X");

	/* every SELF line of arcflow.txt carries the JSON entry's numbers */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long c, b, cum;
		size_t idx;
		char name[64];
		double pct;

		if (strncmp(line, "SELF ", 5))
			continue;
		assert_int_equal(sscanf(line, "SELF %llu %llu %llu %lf [%zu] %63[^\n]", &c, &b,
					&cum, &pct, &idx, name), 6);
		assert_int_equal(idx, selfs);
		{
			struct json_object *e = json_object_array_get_idx(j, idx);

			assert_string_equal(name, str_of(e, "function"));
			assert_int_equal(c, u64_of(e, "calls"));
			assert_int_equal(b, u64_of(e, "base"));
			assert_int_equal(cum, u64_of(e, "cum"));
		}
		selfs++;
	}
	assert_int_equal(selfs, 5);
	free(buf);
	json_object_put(c);
	json_object_put(strs);

	/* text layout details: PARENT rows, SELF, CUM_ALL line, CHILD rows */
	f = open_memstream(&buf, &len);
	assert_int_equal(st_arcflow__write_text(a, p, f), 0);
	fclose(f);
	assert_non_null(strstr(buf,
		"PARENT            1          3          7   36.84  C [1]\n"
		"PARENT            1          3          7   36.84  B [3]\n"
		"rPARENT           1          1          1    5.26  B [3]\n"
		"SELF              3          7         14   73.68  [2] A\n"
		"                                       15   78.95  (CUM_ALL)\n"
		"CHILD             3          5          7   36.84  B [3]\n"
		"CHILD             1          1          1    5.26  X [4]\n"));
	assert_non_null(strstr(buf, "rCHILD            1          1          1    5.26  A [2]\n"));
	assert_non_null(strstr(buf, "cpu-clock at 100 Hz"));
	free(buf);
	json_object_put(j);
	st_arcflow__free(a);
	st_profile__free(p);
}

/* ---- version 5 against version 4 ----------------------------------------- */

/* A profile.json written by the version 4 writer (its arcflow with names),
 * read (the reader skips "arcflow") and written as version 5: version 5's
 * arcflow, turned back into version 4's shape, is version 4's, entry by
 * entry and row by row, in the same order. The files: the fuzz corpus's
 * v4-*.json written again by the version 4 build with its arcflow
 * (recursion, a data leaf, an unnamed frame, two threads), and folded
 * stacks with a name that is not UTF-8. */
static void check_as_version4(const char *name)
{
	struct json_object *doc4, *doc5, *af4, *af5, *strs, *back;
	struct st_profile *p = NULL;
	char path[4096], err[512] = "", *text = NULL;
	size_t len = 0;
	FILE *f;

	fx_path(path, sizeof(path), name);
	doc4 = json_object_from_file(path);
	if (!doc4)
		fail_msg("%s: not read", path);
	assert_true(json_object_object_get_ex(doc4, "arcflow", &af4));
	assert_true(json_object_array_length(af4) > 0);
	if (st_profile__read_json(path, &p, err, sizeof(err)))
		fail_msg("%s", err);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(st_profile__write_json(p, f, true), 0);
	fclose(f);
	assert_non_null(strstr(text, "\"version\":5,"));
	doc5 = json_tokener_parse(text);
	assert_non_null(doc5);
	assert_true(json_object_object_get_ex(doc5, "arcflow", &af5));
	assert_true(json_object_object_get_ex(doc5, "strings", &strs));
	back = v4_form(af5, strs);
	for (size_t i = 0; i < json_object_array_length(af4); i++)
		if (!json_object_equal(json_object_array_get_idx(af4, i),
				       json_object_array_get_idx(back, i)))
			fail_msg("%s: entry %zu: version 4 %s, version 5 %s", name, i,
				 json_object_to_json_string(json_object_array_get_idx(af4, i)),
				 json_object_to_json_string(json_object_array_get_idx(back, i)));
	assert_int_equal(json_object_array_length(back), json_object_array_length(af4));
	/* and it is smaller: names once, in "strings" */
	assert_true(strlen(json_object_to_json_string_ext(af5, JSON_C_TO_STRING_PLAIN)) * 2 <
		    strlen(json_object_to_json_string_ext(af4, JSON_C_TO_STRING_PLAIN)));
	json_object_put(back);
	json_object_put(doc5);
	json_object_put(doc4);
	free(text);
	st_profile__free(p);
}

static void test_version4_rows(void **state)
{
	static const char *const files[] = { "faults", "unresolved", "python", "version3",
					     "escaped" };
	char name[128];

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(name, sizeof(name), "../../tests/fuzz/corpus/json/v4-arcflow-%s.json",
			 files[i]);
		check_as_version4(name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_vector),
		cmocka_unit_test(test_exact_attribution_vector),
		cmocka_unit_test(test_random_function_trees),
		cmocka_unit_test(test_random_callsite_trees),
		cmocka_unit_test(test_unknown_frames_and_threads),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_json_shape_matches_text),
		cmocka_unit_test(test_version4_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

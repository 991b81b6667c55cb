/* test_pathhash.c - bpf/pathhash.h: the hash of every prefix of a path,
 * derived from its leaf-first sums, equals Horner's root first; equal
 * prefixes of two paths have equal hashes and the first differing frame
 * makes them differ; and the sums the BPF walk adds up frame by frame
 * (bpf/walk.bpf.h) are st_ph_from_path()'s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "bpf/pathhash.h"

static __u64 pinv[ST_PATH_SLOTS];

/* Horner's hash of the first i + 1 frames, root first. */
static __u64 horner(const __u64 *a, const __u16 *f, __u32 i)
{
	__u64 h = 0;

	for (__u32 j = 0; j <= i; j++)
		h = h * ST_PH_P + st_ph_mix(a[j], f[j]);
	return h;
}

static __u64 rnd(void)
{
	return ((__u64)rand() << 33) ^ ((__u64)rand() << 11) ^ (__u64)rand();
}

/* A path: [truncated]?, un user frames (the leaf LEAF when kn == 0), kn
 * kernel frames (the last LEAF). */
static __u32 make_path(__u64 *a, __u16 *f, __u32 t, __u32 un, __u32 kn)
{
	__u32 n = 0;

	if (t) {
		a[n] = 0;
		f[n++] = ST_NODE_TRUNCATED;
	}
	for (__u32 j = 0; j < un; j++) {
		a[n] = 0x400000 + rnd() % 0x100000;
		f[n++] = (j == un - 1 && !kn) ? ST_NODE_LEAF : (j % 7 == 3 ? ST_NODE_PYTHON : 0);
	}
	for (__u32 j = 0; j < kn; j++) {
		a[n] = 0xffffffff81000000ull + rnd() % 0x100000;
		f[n++] = ST_NODE_KERNEL | (j == kn - 1 ? ST_NODE_LEAF : 0);
	}
	return n;
}

static void test_every_prefix(void **state)
{
	static __u64 a[ST_PATH_SLOTS];
	static __u16 f[ST_PATH_SLOTS];
	static struct st_path_sums s;
	const __u32 shapes[][3] = { { 0, 1, 0 }, { 0, 35, 0 }, { 1, 20, 0 }, { 0, 10, 12 },
				    { 1, 300, 64 }, { 0, 0, 5 }, { 1, 0, 3 }, { 0, 767, 65 } };

	(void)state;
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		__u32 n = make_path(a, f, shapes[k][0], shapes[k][1], shapes[k][2]);

		assert_int_equal(st_ph_from_path(&s, a, f, n), 0);
		assert_int_equal(s.n, n);
		for (__u32 i = 0; i < n; i++)
			assert_true(st_ph_at(&s, pinv, i) == horner(a, f, i));
	}
}

/* The CALLS prefix: equal up to the first frame that differs, then not. */
static void test_prefix_compare(void **state)
{
	static __u64 a[ST_PATH_SLOTS], b[ST_PATH_SLOTS];
	static __u16 fa[ST_PATH_SLOTS], fb[ST_PATH_SLOTS];
	static struct st_path_sums sa, sb;
	__u32 na = make_path(a, fa, 0, 30, 4), nb;

	(void)state;
	for (__u32 j = 0; j < na; j++) {
		b[j] = a[j];
		fb[j] = fa[j];
	}
	/* b: the same first 17 frames, then 10 others, no kernel frames */
	for (__u32 j = 17; j < 27; j++) {
		b[j] = a[j] + 16;
		fb[j] = j == 26 ? ST_NODE_LEAF : 0;
	}
	nb = 27;
	assert_int_equal(st_ph_from_path(&sa, a, fa, na), 0);
	assert_int_equal(st_ph_from_path(&sb, b, fb, nb), 0);
	for (__u32 i = 0; i < nb; i++) {
		if (i < 17)
			assert_true(st_ph_at(&sa, pinv, i) == st_ph_at(&sb, pinv, i));
		else
			assert_true(st_ph_at(&sa, pinv, i) != st_ph_at(&sb, pinv, i));
	}
	/* the binary search's compare (bpf/fold.bpf.h, prefix_step()): the
	 * unnormalized hashes, the deeper path's times P^-(its extra depth) */
	for (__u32 i = 0; i < nb; i++) {
		__u64 l = pinv[na - nb] * st_ph_raw(&sa, i), r = st_ph_raw(&sb, i);

		assert_true((l == r) == (i < 17));
	}
	/* a leaf with and without LEAF are different frames */
	fb[26] = 0;
	assert_int_equal(st_ph_from_path(&sb, b, fb, nb), 0);
	assert_true(st_ph_at(&sb, pinv, 25) == horner(b, fb, 25));
	assert_true(st_ph_at(&sb, pinv, 26) != horner(b, fb, 25) * ST_PH_P +
						     st_ph_mix(b[26], ST_NODE_LEAF));
}

/* The walk's way (bpf/walk.bpf.h, fp_walk_step(); bpf/fold.bpf.h): the user
 * frames leaf first, m * P^f from frame 1 on, the leaf's value and the
 * kernel part added at the fold. */
static void test_walk_order(void **state)
{
	static __u64 a[ST_PATH_SLOTS];
	static __u16 f[ST_PATH_SLOTS];
	static struct st_path_sums s, w;
	__u32 n = make_path(a, f, 1, 40, 6), un = 40, kn = 6;
	__u64 pw = 1;

	(void)state;
	for (__u32 j = 0; j < n; j++)	/* the fp walk has no tagged frames */
		if (f[j] == ST_NODE_PYTHON)
			f[j] = 0;
	assert_int_equal(st_ph_from_path(&s, a, f, n), 0);
	w.u[0] = 0;
	for (__u32 k = 1; k < un; k++) {	/* leaf first: path index 1 + un - 1 - k */
		pw *= ST_PH_P;
		w.u[k] = w.u[k - 1] + st_ph_mix(a[1 + un - 1 - k], 0) * pw;
	}
	w.pu = pw * ST_PH_P;
	w.un = un;
	w.kn = kn;
	w.m0 = st_ph_mix(a[un], 0);	/* a kernel frame below: not LEAF */
	w.k[0] = 0;
	pw = 1;
	for (__u32 g = 0; g < kn; g++) {
		w.k[g + 1] = w.k[g] + st_ph_mix(a[n - 1 - g], f[n - 1 - g]) * pw;
		pw *= ST_PH_P;
	}
	w.pk = pw;
	st_ph_finish(&w, true);
	assert_int_equal(w.n, n);
	assert_true(w.total == s.total);
	for (__u32 i = 0; i < n; i++)
		assert_true(st_ph_at(&w, pinv, i) == st_ph_at(&s, pinv, i));
}

static void test_powers(void **state)
{
	__u64 p = 1;

	(void)state;
	assert_true(ST_PH_P * ST_PH_PINV == 1);
	for (__u32 e = 0; e < ST_PATH_SLOTS; e++) {
		assert_true(st_ph_pow(ST_PH_P, e) == p);
		assert_true(st_ph_pow(ST_PH_PINV, e) * p == 1);
		assert_true(pinv[e] * p == 1);
		p *= ST_PH_P;
	}
}

static void test_too_many_below(void **state)
{
	static __u64 a[ST_PATH_SLOTS];
	static __u16 f[ST_PATH_SLOTS];
	static struct st_path_sums s;
	__u32 n = make_path(a, f, 0, 3, ST_PH_KSLOTS);

	(void)state;
	assert_int_equal(st_ph_from_path(&s, a, f, n), -22);
	assert_int_equal(st_ph_from_path(&s, a, f, ST_PATH_SLOTS), -22);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_prefix),
		cmocka_unit_test(test_prefix_compare),
		cmocka_unit_test(test_walk_order),
		cmocka_unit_test(test_powers),
		cmocka_unit_test(test_too_many_below),
	};

	st_ph_pinv_fill(pinv, ST_PATH_SLOTS);
	srand(7);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

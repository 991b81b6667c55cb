/* test_calls.c - the CALLS rule of bpf/calls.h (the one the BPF fold, the
 * daemon's late fold and the tree apply), on a thread's consecutive paths,
 * and through st_tree__add_sample(ST_CALLS_FRAME). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bpf/calls.h"
#include "common/tree.h"

/* main -> f (leaf) then main -> f -> g: g is new, f moved on (same call). */
static void test_deeper(void **state)
{
	(void)state;
	/* previous path [main, f], now [main, f', g]: prefix 1 (main) */
	assert_false(st_calls_is_new(0, 1, 2));	/* main: inside the prefix */
	assert_false(st_calls_is_new(1, 1, 2));	/* f': f moved on */
	assert_true(st_calls_is_new(2, 1, 2));	/* g: past the prefix */
}

/* main -> f -> g then main -> f (g returned): f is the same call. */
static void test_return(void **state)
{
	(void)state;
	/* previous [main, f, g], now [main, f']: prefix 1 */
	assert_false(st_calls_is_new(1, 1, 3));
	/* identical paths: nothing new */
	assert_false(st_calls_is_new(0, 2, 2));
	assert_false(st_calls_is_new(1, 2, 2));
}

/* The previous path ended before the prefix frame: a new call there. */
static void test_previous_shorter(void **state)
{
	(void)state;
	/* previous [main], now [main, f]: prefix 1, previous depth 1 */
	assert_true(st_calls_is_new(1, 1, 1));
	/* first sample of a thread: every frame is new */
	assert_true(st_calls_is_new(0, 0, 0));
	assert_true(st_calls_is_new(3, 0, 0));
}

/* The tree applies it: calls counted over a sequence of samples. */
static void test_tree_frame_rule(void **state)
{
	struct st_tree *t = st_tree__new();
	struct st_frame p[3] = {
		{ .kind = ST_FRAME_CALLSITE, .addr = 0x10 },
		{ .kind = ST_FRAME_CALLSITE, .addr = 0x20 },
		{ .kind = ST_FRAME_LEAF, .addr = 0x30 },
	};
	struct st_node *main_, *f;

	(void)state;
	assert_non_null(t);
	assert_non_null(st_tree__add_sample(t, p, 2, 1, ST_CALLS_FRAME));	/* main, f */
	assert_non_null(st_tree__add_sample(t, p, 3, 1, ST_CALLS_FRAME));	/* f calls g */
	assert_non_null(st_tree__add_sample(t, p, 2, 1, ST_CALLS_FRAME));	/* g returned */
	assert_non_null(st_tree__add_sample(t, p, 1, 1, ST_CALLS_FRAME));	/* f returned */
	assert_non_null(st_tree__add_sample(t, p, 2, 1, ST_CALLS_FRAME));	/* f again */
	main_ = st_tree__child(t, st_tree__root(t), &p[0], false);
	f = st_tree__child(t, main_, &p[1], false);
	assert_int_equal(main_->calls, 1);
	assert_int_equal(f->calls, 2);
	assert_int_equal(st_tree__child(t, f, &p[2], false)->calls, 1);
	st_tree__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deeper),
		cmocka_unit_test(test_return),
		cmocka_unit_test(test_previous_shorter),
		cmocka_unit_test(test_tree_frame_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

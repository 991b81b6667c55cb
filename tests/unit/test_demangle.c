/* test_demangle.c - readable C++ and Rust names (user/symbolize/demangle.c, libiberty):
 * Itanium C++ (namespaces, templates, lambdas, operators), Rust legacy and
 * v0, C names and garbage left alone, answers remembered. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "user/symbolize/demangle.h"

static void test_cpp(void **state)
{
	struct st_demangler *d = st_demangler__new();

	(void)state;
	assert_string_equal(st_demangler__name(d, "_ZN12symbol_table25finalize_compilation_unitEv"),
			    "symbol_table::finalize_compilation_unit()");
	assert_string_equal(st_demangler__name(d, "_ZN3app3BoxIiE3getEv"), "app::Box<int>::get()");
	assert_string_equal(st_demangler__name(d, "_ZNSt6vectorIiSaIiEE9push_backERKi"),
			    "std::vector<int, std::allocator<int> >::push_back(int const&)");
	assert_string_equal(st_demangler__name(d, "_ZZ4mainENKUlvE_clEv"),
			    "main::{lambda()#1}::operator()() const");
	assert_string_equal(st_demangler__name(d, "_Znwm"), "operator new(unsigned long)");
	/* a PLT stub (binsym/elf.c) by its target */
	assert_string_equal(st_demangler__name(d, "_Znwm@plt"), "operator new(unsigned long)@plt");
	assert_string_equal(st_demangler__name(d, "_ZdlPvm@plt"),
			    "operator delete(void*, unsigned long)@plt");
	/* asked again: the same answer, the same string */
	const char *a = st_demangler__name(d, "_ZN3app3BoxIiE3getEv");
	assert_ptr_equal(a, st_demangler__name(d, "_ZN3app3BoxIiE3getEv"));
	st_demangler__free(d);
	st_demangler__free(NULL);
}

static void test_rust(void **state)
{
	struct st_demangler *d = st_demangler__new();
	const char *v0;

	(void)state;
	/* legacy: Itanium-like with a hash */
	assert_string_equal(st_demangler__name(d, "_ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
			    "core::ptr::drop_in_place");
	/* v0 */
	v0 = st_demangler__name(d, "_RNvCs1234_7mycrate3foo");
	assert_non_null(v0);
	assert_non_null(strstr(v0, "mycrate"));
	assert_non_null(strstr(v0, "foo"));
	st_demangler__free(d);
}

static void test_left_alone(void **state)
{
	struct st_demangler *d = st_demangler__new();

	(void)state;
	assert_null(st_demangler__name(d, "main"));
	assert_null(st_demangler__name(d, "__libc_start_main"));
	assert_null(st_demangler__name(d, "_start"));
	assert_null(st_demangler__name(d, "_Z"));
	assert_null(st_demangler__name(d, "_Zgarbage((("));
	assert_null(st_demangler__name(d, "_Zgarbage(((@plt"));
	assert_null(st_demangler__name(d, "_Z@plt"));
	assert_null(st_demangler__name(d, "malloc@plt"));
	assert_null(st_demangler__name(d, NULL));
	st_demangler__free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpp),
		cmocka_unit_test(test_rust),
		cmocka_unit_test(test_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

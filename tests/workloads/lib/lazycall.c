/* lazycall.c - liblazycall.so: lazy_run() calls each function of
 * liblazyfns.so once through the PLT, linked -z lazy: in a fresh dlopen()
 * every call is a first one, through ld.so's _dl_runtime_resolve and
 * _dl_fixup (tests/workloads/lazybind.c). */
#include "lazyfns.h"

#define LAZY_CALL(n) x = lazy_fn_##n(x);

unsigned long lazy_run(unsigned long x)
{
	LAZY4096(LAZY_CALL)
	return x;
}

/* lazyfns.h - 4096 functions lazy_fn_0000 .. lazy_fn_7777 (octal digits) that
 * liblazyfns.so defines and liblazycall.so calls through its PLT (issue 35,
 * item 5: ld.so's lazy-binding resolver made hot; tests/workloads/lazybind.c). */
#ifndef STACKTREE_LAZYFNS_H
#define STACKTREE_LAZYFNS_H

#define LAZY8(F, n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7)
#define LAZY64(F, n) LAZY8(F, n##0) LAZY8(F, n##1) LAZY8(F, n##2) LAZY8(F, n##3) \
		     LAZY8(F, n##4) LAZY8(F, n##5) LAZY8(F, n##6) LAZY8(F, n##7)
#define LAZY512(F, n) LAZY64(F, n##0) LAZY64(F, n##1) LAZY64(F, n##2) LAZY64(F, n##3) \
			LAZY64(F, n##4) LAZY64(F, n##5) LAZY64(F, n##6) LAZY64(F, n##7)
#define LAZY4096(F) LAZY512(F, 0) LAZY512(F, 1) LAZY512(F, 2) LAZY512(F, 3) \
		    LAZY512(F, 4) LAZY512(F, 5) LAZY512(F, 6) LAZY512(F, 7)

#define LAZY_DECL(n) unsigned long lazy_fn_##n(unsigned long x);
LAZY4096(LAZY_DECL)

#endif

/* garbage.c - an assembly leaf without CFI whose rbp points at stack
 * garbage with bit 63 set in every word (0xeb bytes, as the pixel data
 * x264's assembly leaves where a frame-pointer walk looks; issue 35,
 * item 1):
 *   main -> phase_garbage -> garbage_spin (no CFI, rbp = a 0xeb buffer) 0.6 s
 *   main -> phase_c       -> c_spin                                    0.4 s
 * A frame-pointer step from garbage_spin reads 0xebebebebebebebeb as its
 * return address: no such value may become a frame (it is no user
 * address, and bit 63 tags a Python frame in the fold); the stack is cut
 * there, under [truncated], counted as a bad frame. */
#include <string.h>

#include "workload.h"

void garbage_spin(unsigned long n, unsigned long *buf);	/* n iterations */

__asm__(".text\n"
	".globl garbage_spin\n"
	".type garbage_spin, @function\n"
	"garbage_spin:\n"
	"	push %rbp\n"
	"	mov %rsi, %rbp\n"	/* rbp: the garbage, as a register it uses */
	"	xor %eax, %eax\n"
	"1:	add $1, %rax\n"
	"	cmp %rdi, %rax\n"
	"	jb 1b\n"
	"	pop %rbp\n"
	"	ret\n"
	".size garbage_spin, .-garbage_spin\n");

__attribute__((noinline)) void phase_garbage(double s)
{
	unsigned long buf[64];
	double t0 = wl_cpu_now(), end = t0 + s;

	memset(buf, 0xeb, sizeof(buf));
	while (wl_cpu_now() < end)
		garbage_spin(20000000, buf + 16);
	wl_report("phase_garbage", wl_cpu_now() - t0);
}

__attribute__((noinline)) void c_spin(double s)
{
	WL_SPIN_BODY(s);
}

__attribute__((noinline)) void phase_c(double s)
{
	double t0 = wl_cpu_now();

	c_spin(s);
	wl_report("phase_c", wl_cpu_now() - t0);
}

int main(void)
{
	wl_wait_start();
	phase_garbage(0.6 * wl_scale());
	phase_c(0.4 * wl_scale());
	return 0;
}

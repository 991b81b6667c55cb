/* asmleaf.c - an assembly function without CFI that does not keep frame
 * pointers (it uses rbp as a register, zero while it runs, as hand-written
 * SIMD code such as x264's does), called from C (issue 20, item 2):
 *   main -> phase_asm -> asm_spin (no CFI, rbp = 0)   0.5 s
 *   main -> phase_c   -> c_spin                      0.5 s
 * Under --unwind auto neither CFI nor frame pointers pass asm_spin: its
 * samples must be under [truncated], counted, never a lone leaf under the
 * thread as if complete; c_spin's reach main. */
#include "workload.h"

void asm_spin(unsigned long n);	/* n iterations */

__asm__(".text\n"
	".globl asm_spin\n"
	".type asm_spin, @function\n"
	"asm_spin:\n"
	"	push %rbp\n"
	"	xor %ebp, %ebp\n"	/* rbp: a register it zeroes, e.g. a sum */
	"	xor %eax, %eax\n"
	"1:	add $1, %rax\n"
	"	add %rbp, %rbp\n"
	"	cmp %rdi, %rax\n"
	"	jb 1b\n"
	"	pop %rbp\n"
	"	ret\n"
	".size asm_spin, .-asm_spin\n");

__attribute__((noinline)) void phase_asm(double s)
{
	double t0 = wl_cpu_now(), end = t0 + s;

	while (wl_cpu_now() < end)
		asm_spin(20000000);
	wl_report("phase_asm", wl_cpu_now() - t0);
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
	phase_asm(0.5 * wl_scale());
	phase_c(0.5 * wl_scale());
	return 0;
}

/* ia32.c - a 32-bit (ia32 compat) process for --unwind fp's 32-bit path
 * (bpf/walk.bpf.h, fp_stack_compat(): the kernel's walk of 4-byte
 * frames). No libc, so that no 32-bit libc development files are needed:
 * built by clang -m32 -nostdlib -static (tests/workloads/extra.mk), with
 * frame pointers. _start -> top -> mid -> leaf, leaf spinning; exits
 * after SECONDS (argv-less: the count below, ~3 s on a 2020s core). */
static volatile unsigned long sink;

__attribute__((noinline)) static void leaf(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) static void mid(unsigned long n)
{
	leaf(n);
	sink++;
}

__attribute__((noinline)) static void top(unsigned long n)
{
	for (int k = 0; k < 120; k++)
		mid(n);
	sink++;
}

void _start(void)
{
	top(50000000);
	__asm__ volatile("movl $1, %%eax; xorl %%ebx, %%ebx; int $0x80" ::: "eax", "ebx");
	for (;;)
		;
}

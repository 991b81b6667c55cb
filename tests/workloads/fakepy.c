/* fakepy.c - a process that fakes CPython's state (issue 19, item 7): it
 * exports _PyRuntime, _PyEval_EvalFrameDefault, PyCode_Type and Py_Version
 * = 3.11.7 like an interpreter, and its "interpreter state" is hostile: a
 * thread list that leads to the thread, then a frame chain that loops (A ->
 * B -> A), whose code object names itself with a str of absurd length. It
 * spins in _PyEval_EvalFrameDefault for argv[1] CPU seconds (default 2).
 * Copied to a name starting with "python" by tests/integration/
 * test_python.py, it must get bounded walks, counted stops, no name, and
 * no crash or hang of the daemon. Offsets: CPython 3.11's. */
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "workload.h"

#ifndef FAKE_VERSION
#define FAKE_VERSION 0x030b07f0	/* 3.11.7; fakepy314 (extra.mk): 3.14.0 */
#endif
const unsigned long Py_Version = FAKE_VERSION;
uint64_t PyCode_Type[32];
uint64_t _PyRuntime[64];
static uint64_t interp[8], tstate[32], cframe[4], frame_a[16], frame_b[16], code[32],
	name[16];

__attribute__((noinline)) void _PyEval_EvalFrameDefault(double seconds)
{
	WL_SPIN_BODY(seconds);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;

	_PyRuntime[40 / 8] = (uintptr_t)interp;		/* interpreters.head */
	interp[16 / 8] = (uintptr_t)tstate;		/* threads.head */
	tstate[8 / 8] = (uintptr_t)tstate;		/* next: itself */
	tstate[160 / 8] = (uint64_t)syscall(SYS_gettid);	/* native_thread_id */
	tstate[56 / 8] = (uintptr_t)cframe;		/* cframe */
	cframe[8 / 8] = (uintptr_t)frame_a;		/* current_frame */
	frame_a[32 / 8] = frame_b[32 / 8] = (uintptr_t)code;	/* f_code */
	frame_a[48 / 8] = (uintptr_t)frame_b;		/* previous: a loop */
	frame_b[48 / 8] = (uintptr_t)frame_a;
	code[8 / 8] = (uintptr_t)PyCode_Type;		/* ob_type */
	code[128 / 8] = code[112 / 8] = (uintptr_t)name;	/* co_qualname, co_filename */
	name[16 / 8] = 1ULL << 40;			/* length */
	name[32 / 8] = (1u << 2) | (1u << 5) | (1u << 6);	/* compact ASCII */
	_PyEval_EvalFrameDefault(secs * wl_scale());
	return 0;
}

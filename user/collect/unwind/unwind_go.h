/* unwind_go.h - a Go binary's unwinding rules from its .gopclntab, for a
 * module without CFI (Go emits none for its own code: a stripped Go
 * program, Debian's `go` and `compile` among them, has no .eh_frame and no
 * .debug_frame).
 *
 * Go's function table says, for every pc, how many bytes the function has
 * pushed below its return address (the pcsp table, which Go's own
 * tracebacks use): CFA = rsp + sp + 8, the return address at CFA - 8, and a
 * function with a frame keeps its caller's rbp at CFA - 16 (amd64's frame
 * pointer, saved by every prologue that makes a frame). Frame pointers alone
 * skip the caller of a frameless leaf (its rbp is still the caller's): the
 * rows do not. The functions where a goroutine's or thread's stack begins,
 * or where the runtime switches stacks, are outermost frames (kind
 * ST_UNW_END): runtime.goexit, runtime.mstart, runtime.rt0_go,
 * runtime.systemstack, runtime.mcall, runtime.morestack,
 * runtime.asmcgocall; the walk ends there complete, as Go's own traceback
 * does. The functions that call the vDSO (time.now, runtime.nanotime1,
 * runtime.walltime) move rsp to another stack inside their frame: past
 * their prologue their CFA is rbp + 16.
 * Owner: user/collect/unwind/unwind_go.c. x86-64 only. */
#ifndef STACKTREE_UNWIND_GO_H
#define STACKTREE_UNWIND_GO_H

#include <stddef.h>
#include <linux/types.h>

#include "binsym/gopclntab.h"	/* the section names */

/* A rule from pc on: kind (enum st_unw_kind) with CFA offset off and saved
 * rbp slot rbp (CFA + 8 * rbp, or ST_UNW_RBP_SAME); 0 or -errno to stop. */
typedef int (*st_unwind_go_fn)(void *ctx, __u64 pc, __u8 kind, int rbp, __s64 off);

/* Call fn for the rules of every function of the .gopclntab bytes (text:
 * the ELF address of .text, see st_gopcln__parse()), in ascending pc
 * order, a NONE rule over each gap between functions and after the last.
 * *funcs: the functions read. 0, -ENOENT (no Go table: a layout that is
 * not read, or malformed), -ENOMEM, or fn's error. */
int st_unwind_go__rules(const void *pclntab, size_t size, __u64 text, st_unwind_go_fn fn,
			void *ctx, size_t *funcs);

#endif

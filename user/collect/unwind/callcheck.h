/* callcheck.h - whether the bytes before an address end in a call
 * instruction (x86-64): the check that makes a word found on the stack a
 * return address, for the scan through code without CFI
 * (user/collect/unwind/unwind_native.h, st_unw_scan()). Pure: decodes the
 * bytes it is given, nothing else. The rule is bpf/call_insn.h's (BPF's
 * HotSpot stub leaves use it too). Owner: user/collect/unwind/callcheck.c. */
#ifndef STACKTREE_CALLCHECK_H
#define STACKTREE_CALLCHECK_H

#include <stddef.h>
#include <linux/types.h>

#include "call_insn.h"

/* code: the n bytes just before ret (code[n - 1] is the byte at ret - 1;
 * at most ST_CALL_MAX_LEN are read, fewer when the code starts later).
 * bpf/call_insn.h's st_call_insn_before() on them. */
enum st_call_kind st_call_before(const __u8 *code, size_t n, __u64 ret, __u64 *target);

#endif

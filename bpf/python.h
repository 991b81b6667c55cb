/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * python.h - CPython's own stack, walked at sampling time and merged into
 * the native one. Compiled into the BPF program (bpf/sample.bpf.c: memory
 * is read with bpf_probe_read_user, loops are bpf_loop) and natively (the
 * daemon's unit tests walk a live interpreter through a reader callback,
 * loops are plain for loops): one source for both.
 *
 * What is walked (kernel-notes/python.md): the daemon finds, for each
 * process running CPython, the address of `_PyRuntime`, the text range of
 * `_PyEval_EvalFrameDefault` and the version's structure layout (a table
 * keyed by the version the binary exports, user/collect/runtimes/python/pyoffsets.c), and
 * pushes them into `py_procs` (struct st_py_proc, key tgid). A sample of
 * such a process:
 *   1. finds its thread's PyThreadState: guessed per CPU (st_py_tguess)
 *      or cached per thread (py_tstates), a guess revalidated by
 *      re-reading native_thread_id, else by walking
 *      _PyRuntime.interpreters.head->threads.head->next... for the one whose
 *      native_thread_id is the thread's id (at most ST_PY_MAX_THREADS; 3.10:
 *      tstate_head, and thread_id, pthread_self(), the thread's fs base);
 *   2. walks tstate->cframe->current_frame and its `previous` chain (at most
 *      ST_PY_MAX_FRAMES; deeper stacks are cut and counted), recording per
 *      frame the code object and the instruction index, and where an
 *      evaluation loop's run of frames ends (3.11: `is_entry`; 3.12+: the
 *      frame below a C-stack-owned shim frame); 3.10: tstate->frame and
 *      its f_back chain of PyFrameObjects, f_lasti the index, one
 *      evaluation call per frame;
 *      a code object not in the CPU's memo of those reported
 *      (struct st_py_memo) is looked up in py_codes, and reported to the
 *      daemon when new at its address (its location table then decoded
 *      into runs of one line, pylines.h);
 *   3. merges: the native walk is leaf first; each native frame inside
 *      _PyEval_EvalFrameDefault is replaced by the Python frames that call
 *      runs (from the next unused Python frame up to the end of its run);
 *      3.10: the interpreter's own frames between two runs (one Python
 *      frame calling the next through C) are dropped.
 *      A Python frame goes into the native frame array tagged with
 *      ST_PY_TAG; path_at() turns the tag into flag ST_NODE_PYTHON.
 *      A sample deferred to the daemon (bpf/defer.bpf.h) carries what
 *      steps 1-2 found (struct st_py_frames, bpf/stacktree.h); the daemon
 *      runs step 3 after its unwind, with st_py_merge() built natively
 *      (user/collect/runtimes/python/pymerge.c).
 * Every read is checked; a failed read or an absurd value ends the walk,
 * counted by reason (enum st_py_stat). Reads go through the current task's
 * own memory only: a process that fakes its interpreter state fools only
 * its own profile.
 *
 * Python node address (ST_NODE_PYTHON): code key << 16 | min(index,
 * 0xffff), the index being the first code unit of the instruction's run
 * of one line when the runs have it (st_py_addr_key(); else the
 * instruction's own), the code key being the code object's address with its
 * generation in the low 4 bits, which are zero in a 16-byte aligned object
 * (obmalloc and glibc's malloc align them so): a code object freed and its
 * address reused for another one is another key (st_py_code_gen()). User
 * addresses are below 2^47, so this stays below 2^63, and bit 63 is free
 * for ST_PY_TAG in the frame array.
 */
#ifndef STACKTREE_PYTHON_H
#define STACKTREE_PYTHON_H

#include "stacktree.h"
#include "pylines.h"
#include "common/hash.h"

#define ST_PY_MAX_THREADS 64	/* thread states searched for a thread */
#define ST_PY_FRAME_BUF 128	/* bytes of a frame's header */
#define ST_PY_WIN 1024		/* bytes read at once: a frame's header and what
				 * is below it in its page (st_py_frame_at()) */
#define ST_PY_PAGE 4096
#define ST_PY_TSTATE_BUF 192	/* bytes of a thread state read at once (its
				 * native_thread_id and cframe are in them) */
#define ST_PY_CODE_BUF 160	/* ... of a code object's (its type and st_py_ident()'s fields) */
#define ST_PY_CODE_ROOM 256	/* room for them (a power of two: masked index) */
#define ST_PY_GENS 16		/* generations of a code address (its 4 aligned bits) */
#define ST_PY_TAG (1ULL << 63)	/* frame array entry: a Python frame's node address */
#define ST_PY_IDX_MAX 0xffffULL
#define ST_PY_NO_OFF 0xffff	/* st_py_layout: the field does not exist */
#define ST_PY_USER_MAX (1ULL << 47)	/* x86-64 user addresses are below this */

#define ST_PY_ADDR(code, idx) (((__u64)(code) << 16) | ((idx) > ST_PY_IDX_MAX ? ST_PY_IDX_MAX : (idx)))
#define ST_PY_CODE(addr) ((addr) >> 16)
#define ST_PY_INDEX(addr) ((__u32)((addr) & 0xffff))

/* Byte offsets of the fields walked, per CPython version
 * (user/collect/runtimes/python/pyoffsets.c). */
struct st_py_layout {
	__u16 runtime_interp_head;	/* _PyRuntimeState.interpreters.head */
	__u16 interp_threads_head;	/* PyInterpreterState.threads.head */
	__u16 tstate_next;		/* PyThreadState.next */
	__u16 tstate_native_tid;	/* PyThreadState.native_thread_id */
	__u16 tstate_cframe;		/* PyThreadState.cframe (3.11, 3.12) */
	__u16 cframe_current_frame;	/* _PyCFrame.current_frame (ST_PY_NO_OFF: the
					 * thread state's own field at tstate_cframe, 3.13) */
	__u16 frame_code;		/* _PyInterpreterFrame.f_code (3.13: f_executable) */
	__u16 frame_previous;
	__u16 frame_prev_instr;		/* prev_instr (3.13: instr_ptr) */
	__u16 frame_is_entry;		/* bool is_entry (3.11), or ST_PY_NO_OFF */
	__u16 frame_owner;		/* char owner */
	__u16 owner_cstack;		/* owner value of C-stack shim frames (3.12+) or
					 * ST_PY_NO_OFF */
	__u16 code_adaptive;		/* PyCodeObject.co_code_adaptive */
	__u16 code_qualname, code_filename, code_firstlineno, code_linetable;
	__u16 object_type;		/* PyObject.ob_type */
	__u16 unicode_length;		/* PyASCIIObject.length */
	__u16 unicode_state;		/* PyASCIIObject.state (32-bit bit field) */
	__u16 unicode_ascii_data;	/* sizeof(PyASCIIObject): a compact ASCII string's data */
	__u16 unicode_compact_data;	/* sizeof(PyCompactUnicodeObject) */
	__u16 bytes_size;		/* PyVarObject.ob_size */
	__u16 bytes_data;		/* PyBytesObject.ob_sval */
	__u16 version;			/* 0x030b: 3.11 ... 0x030d: 3.13 */
	__u16 code_consts;		/* PyCodeObject.co_consts, then co_names and
					 * co_exceptiontable (st_py_ident()) */
	__u16 frame_lasti;		/* 3.10: PyFrameObject.f_lasti, the index of the
					 * code unit running (an int; -1: not started), or
					 * ST_PY_NO_OFF: the index from frame_prev_instr */
	__u16 tstate_pthread;		/* 1: tstate_native_tid is 3.10's thread_id,
					 * pthread_self(): the thread's fs base */
};

/* py_procs value (key: tgid), pushed by the daemon (user/collect/runtimes/python/pyproc.c). */
struct st_py_proc {
	__u64 runtime;			/* address of _PyRuntime */
	__u64 eval_start, eval_end;	/* _PyEval_EvalFrameDefault's text */
	__u64 cold_start, cold_end;	/* ... its .cold part (GCC's hot/cold split), or 0 */
	__u64 code_type;		/* address of PyCode_Type (0: unknown) */
	__u64 text_start, text_end;	/* the interpreter's executable mapping when its
					 * frames between two runs are its call plumbing
					 * (3.10: every Python call is a C call), else 0 */
	__u32 image;			/* the image (self_exec_id) it was found in */
	__u32 pad;
	struct st_py_layout l;
};

/* py_codes key: a code address the process was sampled in */
struct st_py_code_key {
	__u32 tgid;
	__u32 image;	/* an exec's new program reports its code objects anew */
	__u64 code;
};

/* py_codes value: the object last reported at that address. */
struct st_py_code_seen {
	__u64 ident;	/* st_py_ident() of the object */
	struct st_py_runs runs;	/* its runs of one line (pylines.h), */
	__u32 gen;	/* its generation (0 .. ST_PY_GENS - 1) */
	__u16 cover;	/* ... of its first `cover` code units (0: none known) */
	__u16 pad;
};

/* What a report copies of a code object's memory at the sample, while it
 * is alive (struct st_py_event): its header, and the first bytes of the
 * objects holding its qualified name, file name and location table, each
 * room for the header and the text the daemon keeps (ST_PY_NAME_MAX,
 * ST_PY_FILE_MAX of user/collect/runtimes/python/pycode.h in an ASCII str, 3.11) or a
 * table of 990 bytes. The daemon reads the object from these copies
 * (user/collect/runtimes/python/python.c), the process's memory only for what they miss:
 * a code object freed (or its process gone) before the daemon reads it
 * keeps its name. */
#define ST_PY_SNAP_NAME 320
#define ST_PY_SNAP_FILE 576
#define ST_PY_SNAP_TABLE 1024
#define ST_PY_SNAP_SMALL 64	/* read when a whole copy fails (the object at
				 * the end of its mapping) */
enum { ST_PY_SNAP_CODE, ST_PY_SNAP_QUAL, ST_PY_SNAP_FNAME, ST_PY_SNAP_LT, ST_PY_SNAPS };

/* py_events ring buffer: a code object not seen before at its address. */
struct st_py_event {
	__u32 pid;
	__u32 image;
	__u64 code;	/* the object's address (read there) */
	__u64 key;	/* ST_PY_CODE() of its frames: the address and generation */
	__u64 ident;	/* st_py_ident(): a second report of one key with another
			 * ident is an address reused past ST_PY_GENS generations */
	__u64 at[ST_PY_SNAPS];	/* where each copy was read from */
	__u32 len[ST_PY_SNAPS];	/* its bytes (0: none) */
	__u64 hdr[ST_PY_CODE_ROOM / 8];	/* ST_PY_CODE_BUF of it read */
	__u8 qual[ST_PY_SNAP_NAME];
	__u8 file[ST_PY_SNAP_FILE];
	__u8 table[ST_PY_SNAP_TABLE];
};

_Static_assert(sizeof(struct st_py_event) == 2256, "py_events' sizing (1 MiB) counts on it");

/* Per-CPU counters, index of the `py_stats` per-CPU array. */
enum st_py_stat {
	ST_PY_STAT_SAMPLES,	/* samples of processes running a known CPython */
	ST_PY_STAT_WALKED,	/* ... with at least one Python frame */
	ST_PY_STAT_FRAMES,	/* Python frames folded */
	ST_PY_STAT_NO_THREAD,	/* the thread has no thread state (not running Python) */
	ST_PY_STAT_NO_FRAME,	/* a thread state without a current frame */
	ST_PY_STAT_READ_FAULT,	/* a read of interpreter state failed: walk stopped */
	ST_PY_STAT_BAD_VALUE,	/* an absurd pointer (kernel, unaligned, self loop): stopped */
	ST_PY_STAT_TRUNCATED,	/* more than ST_PY_MAX_FRAMES frames: cut */
	ST_PY_STAT_UNMATCHED,	/* evaluation frames without Python frames, or the reverse */
	ST_PY_STAT_MERGE_CUT,	/* merged stack over the frame array: cut at the root */
	ST_PY_STAT_CODE_EVENTS,	/* new code objects reported to the daemon */
	ST_PY_STAT_CODE_LOST,	/* ... lost: the ring buffer was full */
	ST_PY_STAT_DEFERRED,	/* samples unwound late by the daemon (Python frames merged there) */
	ST_PY_STAT__MAX,
};

/* py_stats' one per-CPU value: one lookup a sample for all its counts. */
struct st_py_counts {
	__u64 n[ST_PY_STAT__MAX];
};

/* A CPU's memo of py_codes (py_memo): a code object whose report was
 * made, by address and identity, with the generation it got and its runs
 * of one line. Two ways per set: a new object takes its address's entry,
 * else an empty one, else the set's older one. Direct-mapped, two objects
 * of one stack that hashed to one slot missed on every sample (a py_codes
 * lookup and the report loop each time: +0.3 to +1.1 us a sample, as
 * addresses fell from run to run). An entry stays right for as long as its
 * object lives (its identity is the object's), so it is never invalidated:
 * a hit is what a py_codes lookup would say, without one
 * (kernel-notes/python.md, "Costs"). */
#define ST_PY_MEMO_SLOTS 512	/* 256 sets of 2: 32 KiB, a per-CPU value's most */
struct st_py_memo {
	__u64 code;	/* the object's address */
	__u64 ident;	/* st_py_ident() */
	struct st_py_runs runs;	/* st_py_code_seen's */
	__u32 tgid, image;
	__u16 gen1;	/* its generation + 1 (0: an empty slot) */
	__u16 cover;	/* st_py_code_seen's */
	__u32 pad;
};

struct st_py_memos {
	struct st_py_memo e[ST_PY_MEMO_SLOTS];
};

/* A CPU's guesses of threads' PyThreadState (struct st_py_scratch), before
 * py_tstates: direct-mapped by thread, each checked by the read that
 * checks any guess (st_py_tstate_is()), so a wrong or torn one only costs
 * the lookup it was to save. */
#define ST_PY_TGUESS 64
struct st_py_tguess {
	__u64 pid_tgid;
	__u64 tstate;
};

/* One walk's output, and the frame array merge's scratch. */
struct st_py_scratch {
	__u64 win[ST_PY_WIN / 8];		/* memory read around frames: */
	__u64 win_lo;				/* [win_lo, win_lo + win_len) (in map
						 * memory, not the walk's context on the
						 * stack: the verifier tracks a value
						 * there exactly, and each of a loop's
						 * values was one more state to check) */
	__u32 win_len;
	__u32 win_below;			/* 1: read below a frame too (its callers
						 * are there) */
	__u64 code[ST_PY_CODE_ROOM / 8];	/* the code object's header (its first
						 * ST_PY_CODE_BUF bytes read) */
	__u64 addr[ST_PY_MAX_FRAMES];		/* ST_PY_ADDR, leaf first */
	__u64 ident[ST_PY_MAX_FRAMES];		/* st_py_ident() of addr[]'s code objects */
	__u8 ends[ST_PY_MAX_FRAMES];		/* last frame of an evaluation call's run */
	__u64 native[ST_PY_MAX_FRAMES * 2];	/* copy of the native frames */
	__u32 n;				/* frames in addr[] */
	__u32 stop;				/* enum st_py_stat (ST_PY_STAT__MAX: complete) */
	__u64 unknown;				/* bit i: addr[i]'s generation is not in
						 * the memo (a py_codes lookup, perhaps a
						 * report, gives it; addr[i]'s index is
						 * then the instruction's) */
	struct st_py_runs runs;			/* the runs of the code object of the
						 * frame walked last (memo hit), */
	__u32 cover;				/* ... of its first `cover` units */
	__u32 pad2;
	struct st_py_runs_at rd;		/* a report's table decoded into runs */
	struct st_py_merge_at {			/* the merge's position (st_py_merge_step) */
		__u32 i, j, o;
		__u32 mark;			/* out[] after the last run (text_end set) */
		__u8 in_run, cut, unmatched;
		__u8 keep;			/* a frame since then outside the interpreter */
		__u8 again;			/* 1: this is the second pass */
		__u32 extra;			/* evaluation frames past the last run */
		__u32 skip;			/* leaf evaluation frames left native */
	} at;
	struct st_py_tguess tguess[ST_PY_TGUESS];
	struct st_py_proc proc;			/* py_procs' value for process proc_tgid
						 * (the walk's and the merge's: n > 0
						 * says this sample walked that process), */
	__u64 proc_epoch;			/* ... as of py_procs_epoch's value then */
	__u32 proc_tgid;
	__u32 proc_state;			/* enum st_py_proc_state */
};

/* What st_py_scratch.proc holds. */
enum st_py_proc_state {
	ST_PY_PROC_UNREAD,	/* nothing yet */
	ST_PY_PROC_NONE,	/* proc_tgid has no py_procs entry */
	ST_PY_PROC_COPIED,	/* proc is proc_tgid's entry */
};
_Static_assert(ST_PY_MAX_FRAMES <= 64, "st_py_scratch.unknown has a bit per frame");

_Static_assert(ST_PY_MAX_FRAMES * 2 >= ST_MAX_USER, "native copy holds a user walk");

/* Memory reads, loops and how the walker is told the task's identity. */
#ifdef __bpf__
#define ST_PY_READ(w, dst, n, a) bpf_probe_read_user((dst), (n), (const void *)(long)(a))
#define ST_PY_LOOP(n, fn, ctx) bpf_loop((n), (fn), (ctx), 0)
#define ST_PY_CB_CTX void
#else
#include <stdbool.h>
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
/* Natively: the reader returns 0 or a negative errno. */
typedef long (*st_py_read_fn)(void *arg, void *dst, __u32 n, __u64 addr);
#define ST_PY_READ(w, dst, n, a) ((w)->read((w)->read_arg, (dst), (n), (a)))
#define ST_PY_LOOP(n, fn, ctx)                                                                    \
	({                                                                                        \
		__u32 _i;                                                                         \
		for (_i = 0; _i < (__u32)(n); _i++)                                               \
			if ((fn)(_i, (ctx)))                                                      \
				break;                                                            \
		(long)_i;                                                                         \
	})
#define ST_PY_CB_CTX void
#endif

/* The walker's context (on the caller's stack). */
struct st_py_walk {
	const struct st_py_proc *p;
	struct st_py_scratch *s;
	struct st_py_memos *memos;	/* this CPU's memo */
#ifndef __bpf__
	st_py_read_fn read;
	void *read_arg;
#endif
	__u64 tid;		/* thread id sought */
	__u32 tgid, image;	/* the process (the code memo's key) */
	__u64 tstate;		/* found */
	__u64 frame;		/* next frame to read */
	__u64 hdr_tstate;	/* st_py_tstate_is() read this thread state, */
	__u64 hdr_cframe;	/* ... whose cframe this is */
	__u64 last_code;	/* the code object of the frame walked before */
	__u64 last_ident;	/* ... its st_py_ident() */
	__u32 last_gen1;	/* ... its generation + 1 from the memo (0: not there) */
	__u32 stop;		/* enum st_py_stat */
};

static __always_inline bool st_py_ptr_ok(__u64 a)
{
	return a && a < ST_PY_USER_MAX && !(a & 7);
}

/* A field of the frame whose header is at byte `at` of s->win (offsets
 * masked into the buffer; at + off is within it, st_py_frame_at()). */
static __always_inline __u64 st_py_f64(const struct st_py_scratch *s, __u32 at, __u16 off)
{
	return s->win[((at + off) >> 3) & (ST_PY_WIN / 8 - 1)];
}

static __always_inline __u8 st_py_f8(const struct st_py_scratch *s, __u32 at, __u16 off)
{
	return ((const __u8 *)s->win)[(at + off) & (ST_PY_WIN - 1)];
}

static __always_inline __u32 st_py_f32(const struct st_py_scratch *s, __u32 at, __u16 off)
{
	return ((const __u32 *)s->win)[((at + off) >> 2) & (ST_PY_WIN / 4 - 1)];
}

/* Where frame w->frame's header is in s->win, read when it is not there:
 * its offset, or -1 (a read fault). 3.11+ frames are pushed on a data
 * stack that grows up, a caller's below its callee: one read of the frame
 * and up to ST_PY_WIN bytes below it, never past the start of its page
 * (a page below need not be mapped), holds the headers of the next few
 * frames walked (kernel-notes/python.md, "Costs"). */
static __always_inline int st_py_frame_at(struct st_py_walk *w)
{
	struct st_py_scratch *s = w->s;
	__u64 f = w->frame, lo = f, len;

	if (f >= s->win_lo && f - s->win_lo + ST_PY_FRAME_BUF <= s->win_len)
		return (int)(f - s->win_lo);
	if (s->win_below) {
		lo = f + ST_PY_FRAME_BUF - ST_PY_WIN;
		if (f < ST_PY_WIN || lo < (f & ~(__u64)(ST_PY_PAGE - 1)))
			lo = f & ~(__u64)(ST_PY_PAGE - 1);
	}
	len = f + ST_PY_FRAME_BUF - lo;
	if (len < ST_PY_FRAME_BUF || len > ST_PY_WIN)
		return -1;
	if (ST_PY_READ(w, s->win, len, lo)) {
		s->win_len = 0;
		return -1;
	}
	s->win_lo = lo;
	s->win_len = len;
	return (int)(f - lo);
}

/* A field of the code object's header in s->code (the layouts' fields
 * are within the ST_PY_CODE_BUF bytes read, tests/unit/test_pyoffsets.c;
 * the index masked into the array: a compare clang may move where the
 * verifier loses it, as it did). */
static __always_inline __u64 st_py_hdr64(const __u64 *hdr, __u16 off)
{
	return hdr[(off >> 3) & (ST_PY_CODE_ROOM / 8 - 1)];
}

static __always_inline __u64 st_py_c64(const struct st_py_scratch *s, __u16 off)
{
	return st_py_hdr64(s->code, off);
}

static __always_inline __u32 st_py_c32(const struct st_py_scratch *s, __u16 off)
{
	return ((const __u32 *)s->code)[(off >> 2) & (ST_PY_CODE_ROOM / 4 - 1)];
}

/* What tells two code objects at one address apart (after the first was
 * freed), from the header in s->code: the addresses of the objects it
 * owns (constants, names, exception table, file name, qualified name,
 * location table) and its first line. A new object has them all again
 * only if each was freed and handed out again in the same place, and none
 * of them changes in an object's life. */
static __always_inline __u64 st_py_ident(const struct st_py_scratch *s, const struct st_py_layout *l)
{
	__u64 h = st_hash_mix(0, st_py_c64(s, l->code_consts));

	h = st_hash_mix(h, st_py_c64(s, l->code_consts + 8));
	h = st_hash_mix(h, st_py_c64(s, l->code_consts + 16));
	h = st_hash_mix(h, st_py_c64(s, l->code_filename));
	h = st_hash_mix(h, st_py_c64(s, l->code_qualname));
	h = st_hash_mix(h, st_py_c64(s, l->code_linetable));
	return st_hash_mix(h, st_py_c32(s, l->code_firstlineno));
}

/* The generation of code object `ident` at an address whose last report
 * is *seen (NULL: none) into *gen: true when it is to be reported (new at
 * the address, or another object than the one reported there). */
static __always_inline bool st_py_code_gen(const struct st_py_code_seen *seen, __u64 ident,
					   __u32 *gen)
{
	if (!seen) {
		*gen = 0;
		return true;
	}
	if (seen->ident == ident) {
		*gen = seen->gen & (ST_PY_GENS - 1);
		return false;
	}
	*gen = (seen->gen + 1) & (ST_PY_GENS - 1);
	return true;
}

/* A frame's node address (ST_PY_ADDR) keyed by its code object's
 * generation; an object not 16-byte aligned keeps its address (all its
 * generations are one key, named by the last report). */
static __always_inline __u64 st_py_addr_gen(__u64 addr, __u32 gen)
{
	if (ST_PY_CODE(addr) & (ST_PY_GENS - 1))
		return addr;
	return addr | (__u64)(gen & (ST_PY_GENS - 1)) << 16;
}

/* The first of the two memo slots of code object `code` of process tgid. */
static __always_inline __u32 st_py_memo_set(__u32 tgid, __u64 code)
{
	return (__u32)st_hash_u64(code ^ ((__u64)tgid << 48)) & (ST_PY_MEMO_SLOTS - 2);
}

/* Whether memo entry m holds (whatever object) address code of (tgid, image). */
static __always_inline bool st_py_memo_at(const struct st_py_memo *m, __u32 tgid, __u32 image,
					  __u64 code)
{
	return m->gen1 && m->code == code && m->tgid == tgid && m->image == image;
}

/* Whether memo entry m is object (code, ident) of process (tgid, image). */
static __always_inline bool st_py_memo_is(const struct st_py_memo *m, __u32 tgid, __u32 image,
					  __u64 code, __u64 ident)
{
	return st_py_memo_at(m, tgid, image, code) && m->ident == ident;
}

/* The memo's entry of object (code, ident) of process (tgid, image), or
 * NULL: its generation is gen1 - 1. */
static __always_inline const struct st_py_memo *
st_py_memo_get(const struct st_py_memos *ms, __u32 tgid, __u32 image, __u64 code, __u64 ident)
{
	__u32 k = st_py_memo_set(tgid, code);
	const struct st_py_memo *m = &ms->e[k & (ST_PY_MEMO_SLOTS - 1)];

	if (st_py_memo_is(m, tgid, image, code, ident))
		return m;
	m = &ms->e[(k + 1) & (ST_PY_MEMO_SLOTS - 1)];
	return st_py_memo_is(m, tgid, image, code, ident) ? m : NULL;
}

/* Remember object (code, ident) of process (tgid, image): its py_codes
 * value *seen. */
static __always_inline void st_py_memo_put(struct st_py_memos *ms, __u32 tgid, __u32 image,
					   __u64 code, const struct st_py_code_seen *seen)
{
	__u32 k = st_py_memo_set(tgid, code);
	struct st_py_memo *m = &ms->e[k & (ST_PY_MEMO_SLOTS - 1)];
	struct st_py_memo *o = &ms->e[(k + 1) & (ST_PY_MEMO_SLOTS - 1)];

	if (!st_py_memo_at(m, tgid, image, code)) {
		if (st_py_memo_at(o, tgid, image, code) || !o->gen1) {
			m = o;		/* its address's entry, or an empty one */
		} else if (m->gen1) {
			*o = *m;	/* the older one goes */
		}
	}
	m->code = code;
	m->ident = seen->ident;
	m->runs = seen->runs;
	m->tgid = tgid;
	m->image = image;
	m->gen1 = (__u16)((seen->gen & (ST_PY_GENS - 1)) + 1);
	m->cover = seen->cover;
}

/* A frame's node address: its code object's key (generation gen) and, for
 * the index, the first code unit of the index's run of one line when the
 * runs have it (pylines.h): two instructions of one line are one node. */
static __always_inline __u64 st_py_addr_key(__u64 addr, __u32 gen, const struct st_py_runs *runs,
					    __u32 cover)
{
	addr = st_py_addr_gen(addr, gen);
	return ST_PY_ADDR(ST_PY_CODE(addr), st_py_canon(runs, cover, ST_PY_INDEX(addr)));
}

/* Thread-state search: one thread state per step. */
static inline long st_py_thread_step(__u32 i, ST_PY_CB_CTX *ctx)
{
	struct st_py_walk *w = ctx;
	__u64 tid = 0, next = 0;

	(void)i;
	if (!st_py_ptr_ok(w->tstate)) {
		w->stop = w->tstate ? ST_PY_STAT_BAD_VALUE : ST_PY_STAT_NO_THREAD;
		return 1;
	}
	if (ST_PY_READ(w, &tid, sizeof(tid), w->tstate + w->p->l.tstate_native_tid)) {
		w->stop = ST_PY_STAT_READ_FAULT;
		return 1;
	}
	if (tid == w->tid)
		return 1;	/* found: w->stop stays ST_PY_STAT__MAX */
	if (ST_PY_READ(w, &next, sizeof(next), w->tstate + w->p->l.tstate_next)) {
		w->stop = ST_PY_STAT_READ_FAULT;
		return 1;
	}
	if (next == w->tstate) {
		w->stop = ST_PY_STAT_BAD_VALUE;
		return 1;
	}
	w->tstate = next;
	return 0;
}

/* Whether tstate (a cached guess) is the thread's: its native_thread_id,
 * read with its cframe in one read (kept for st_py_walk_frames()). */
static __always_inline bool st_py_tstate_is(struct st_py_walk *w, __u64 tstate)
{
	const struct st_py_layout *l = &w->p->l;
	const __u64 *hdr = w->s->win;

	w->hdr_tstate = 0;
	if (!st_py_ptr_ok(tstate) || ST_PY_READ(w, w->s->win, ST_PY_TSTATE_BUF, tstate) ||
	    hdr[(l->tstate_native_tid >> 3) & (ST_PY_WIN / 8 - 1)] != w->tid)
		return false;
	w->hdr_tstate = tstate;
	w->hdr_cframe = hdr[(l->tstate_cframe >> 3) & (ST_PY_WIN / 8 - 1)];
	return true;
}

/* Find the thread's PyThreadState by walking the main interpreter's list:
 * its address, or 0 (w->stop says why). */
static __always_inline __u64 st_py_find_tstate(struct st_py_walk *w)
{
	__u64 interp = 0;

	w->stop = ST_PY_STAT__MAX;
	w->tstate = 0;
	if (ST_PY_READ(w, &interp, sizeof(interp), w->p->runtime + w->p->l.runtime_interp_head) ||
	    !st_py_ptr_ok(interp)) {
		w->stop = ST_PY_STAT_READ_FAULT;
		return 0;
	}
	if (ST_PY_READ(w, &w->tstate, sizeof(w->tstate), interp + w->p->l.interp_threads_head)) {
		w->stop = ST_PY_STAT_READ_FAULT;
		return 0;
	}
	if ((__u32)ST_PY_LOOP(ST_PY_MAX_THREADS, st_py_thread_step, w) >= ST_PY_MAX_THREADS &&
	    w->stop == ST_PY_STAT__MAX)
		w->stop = ST_PY_STAT_NO_THREAD;	/* more threads than searched */
	return w->stop == ST_PY_STAT__MAX ? w->tstate : 0;
}

/* Frame walk: one _PyInterpreterFrame. */
static __always_inline long st_py_frame_one(struct st_py_walk *w)
{
	const struct st_py_layout *l = &w->p->l;
	struct st_py_scratch *s = w->s;
	__u64 code, prev, instr, base, idx = 0, ident, addr;
	const struct st_py_memo *m;
	__u32 n = s->n;
	int at;
	__u8 ends;

	if (!w->frame)
		return 1;	/* the outermost frame was read: complete */
	if (!st_py_ptr_ok(w->frame)) {
		w->stop = ST_PY_STAT_BAD_VALUE;
		return 1;
	}
	if (n >= ST_PY_MAX_FRAMES) {
		w->stop = ST_PY_STAT_TRUNCATED;
		return 1;
	}
	at = st_py_frame_at(w);
	if (at < 0) {
		w->stop = ST_PY_STAT_READ_FAULT;
		return 1;
	}
	code = st_py_f64(s, at, l->frame_code);
	prev = st_py_f64(s, at, l->frame_previous);
	if (prev == w->frame || !st_py_ptr_ok(code)) {
		w->stop = ST_PY_STAT_BAD_VALUE;
		return 1;
	}
	if (l->owner_cstack != ST_PY_NO_OFF && st_py_f8(s, at, l->frame_owner) == l->owner_cstack) {
		/* a C-stack shim (3.12+): not a Python frame; the run below it
		 * ends with the frame walked before */
		if (n > 0)
			s->ends[(n - 1) & (ST_PY_MAX_FRAMES - 1)] = 1;
		w->frame = prev;
		return 0;
	}
	if (code != w->last_code) {
		/* (else recursion: the object its caller runs, live, both
		 * frames holding it: its type, identity and memo entry
		 * are the caller's) */
		ident = 0;
		if (w->p->code_type) {
			/* one read for the type and the identity (cost measured
			 * in kernel-notes/python.md, "An address reused ...") */
			if (ST_PY_READ(w, s->code, ST_PY_CODE_BUF, code)) {
				w->stop = ST_PY_STAT_READ_FAULT;
				return 1;
			}
			if (st_py_c64(s, l->object_type) != w->p->code_type) {
				w->stop = ST_PY_STAT_BAD_VALUE;
				return 1;
			}
			ident = st_py_ident(s, l);
		}
		w->last_code = code;
		w->last_ident = ident;
		m = w->memos ? st_py_memo_get(w->memos, w->tgid, w->image, code, ident) : NULL;
		w->last_gen1 = m ? m->gen1 : 0;
		s->cover = m ? m->cover : 0;
		if (m)
			s->runs = m->runs;
	}
	ident = w->last_ident;
	if (l->frame_lasti != ST_PY_NO_OFF) {
		/* 3.10: f_lasti, the index of the instruction running (or
		 * the call being made), -1 before the first; and one
		 * evaluation call per frame: each frame ends its run */
		__s32 lasti = (__s32)st_py_f32(s, at, l->frame_lasti);

		idx = lasti > 0 ? (__u64)lasti : 0;
		ends = 1;
	} else {
		/* 3.11, 3.12: prev_instr is the instruction running (or the
		 * call being made; 3.12: its last inline cache unit, which
		 * the location table gives the call's line); a frame not
		 * started yet points one before the first. 3.13's
		 * instr_ptr: the same unit while it runs (CPython's own
		 * lasti is instr_ptr - code in 3.13, prev_instr - code
		 * before), the first one in a frame not started. */
		instr = st_py_f64(s, at, l->frame_prev_instr);
		base = code + l->code_adaptive;
		if (instr >= base)
			idx = (instr - base) >> 1;
		ends = l->frame_is_entry != ST_PY_NO_OFF && st_py_f8(s, at, l->frame_is_entry) != 0;
	}
	addr = ST_PY_ADDR(code, idx);
	if (w->last_gen1)
		addr = st_py_addr_key(addr, w->last_gen1 - 1, &s->runs, s->cover);
	else
		s->unknown |= 1ULL << (n & (ST_PY_MAX_FRAMES - 1));
	s->addr[n & (ST_PY_MAX_FRAMES - 1)] = addr;
	s->ident[n & (ST_PY_MAX_FRAMES - 1)] = ident;
	s->ends[n & (ST_PY_MAX_FRAMES - 1)] = ends;
	s->n = n + 1;
	w->frame = prev;
	return 0;
}

/* Two frames a loop step: a step's call and return cost about as much as
 * a frame's work here (kernel-notes/python.md, "Costs"). */
static inline long st_py_frame_step(__u32 i, ST_PY_CB_CTX *ctx)
{
	(void)i;
	return st_py_frame_one(ctx) || st_py_frame_one(ctx);
}

/* Walk the Python stack of the thread whose state is tstate into w->s
 * (addr[], ends[], n; stop = why it ended, ST_PY_STAT__MAX: complete). */
static __always_inline void st_py_walk_frames(struct st_py_walk *w, __u64 tstate)
{
	const struct st_py_layout *l = &w->p->l;
	__u64 cf = 0;

	w->s->n = 0;
	w->s->unknown = 0;
	w->stop = ST_PY_STAT__MAX;
	w->frame = 0;
	w->s->win_len = 0;
	/* 3.10's PyFrameObjects are objects of their own, anywhere */
	w->s->win_below = l->frame_lasti == ST_PY_NO_OFF;
	w->last_code = 0;
	w->last_ident = 0;
	w->last_gen1 = 0;
	if (w->hdr_tstate == tstate && tstate)
		cf = w->hdr_cframe;
	else if (ST_PY_READ(w, &cf, sizeof(cf), tstate + l->tstate_cframe)) {
		w->stop = ST_PY_STAT_READ_FAULT;
		goto out;
	}
	if (l->cframe_current_frame != ST_PY_NO_OFF) {
		if (!st_py_ptr_ok(cf)) {
			w->stop = cf ? ST_PY_STAT_BAD_VALUE : ST_PY_STAT_NO_FRAME;
			goto out;
		}
		if (ST_PY_READ(w, &w->frame, sizeof(w->frame), cf + l->cframe_current_frame)) {
			w->stop = ST_PY_STAT_READ_FAULT;
			goto out;
		}
	} else {
		w->frame = cf;
	}
	if (!w->frame) {
		w->stop = ST_PY_STAT_NO_FRAME;
		goto out;
	}
	/* one more step than frames: the step after the last sees frame 0;
	 * a frame left when the steps ran out: more than the walk takes (the
	 * step itself stops at ST_PY_MAX_FRAMES, a 3.12+ shim takes a step) */
	ST_PY_LOOP(ST_PY_MAX_FRAMES / 2 + 1, st_py_frame_step, w);
	if (w->frame && w->stop == ST_PY_STAT__MAX)
		w->stop = ST_PY_STAT_TRUNCATED;
out:
	w->s->stop = w->stop;
}

/* The merge: native frames (leaf first, s->native[0..un)) and Python
 * frames (s->addr[0..n)) into out[0..max), leaf first. Its position (where
 * it is in each array) is kept in the scratch map's value, not in this
 * context on the stack: the verifier knows a counter on the stack exactly,
 * so each of the callback's 193 possible runs was another state to verify
 * (on_timer_fp: ~100,000 of its 142,000 instructions); read from map
 * memory it is any value, the first run's state covers all the others
 * (kernel-notes/README.md, "Start-up and verifier budgets"). */
struct st_py_merge {
	struct st_py_scratch *s;
	__u64 *out;
	__u64 eval_start, eval_end, cold_start, cold_end;
	__u64 text_start, text_end;	/* (st_py_proc) 0: keep every native frame */
	__u32 un, max;
};

/* Whether native frame a is in the evaluation loop (a return address may
 * be the function's end, a call as its last instruction: end inclusive). */
static __always_inline bool st_py_is_eval(const struct st_py_merge *m, __u64 a)
{
	return (a >= m->eval_start && a <= m->eval_end) || (a >= m->cold_start && a <= m->cold_end);
}

/* Put v at the merged stack's next place: 1 when the merge is to stop
 * (the stack is full). A full first pass of a whole Python stack goes on
 * without writing, to count the evaluation frames left over at the root
 * (at->extra). */
static __always_inline long st_py_merge_put(struct st_py_merge *m, __u64 v)
{
	struct st_py_merge_at *at = &m->s->at;

	if (at->o < m->max) {
		m->out[at->o & (ST_PY_MAX_FRAMES * 2 - 1)] = v;
		at->o++;
		return 0;
	}
	at->cut = 1;
	return at->again || m->s->stop != ST_PY_STAT__MAX;
}

/* A merge pass from the leaf, its first leaf evaluation frames (skip)
 * left native: 0 in the first pass, the evaluation frames the first
 * left over in the second (the only one that starts with some). */
static __always_inline void st_py_merge_begin(struct st_py_merge_at *at, __u32 skip)
{
	at->i = at->j = at->o = at->mark = 0;
	at->in_run = at->cut = at->unmatched = 0;
	at->keep = 1;		/* the native frames before the first run stay */
	at->again = skip != 0;
	at->extra = 0;
	at->skip = skip;
}

static __always_inline long st_py_merge_one(struct st_py_merge *m)
{
	struct st_py_scratch *s = m->s;
	struct st_py_merge_at *at = &s->at;
	__u64 a;

	if (at->in_run) {
		__u32 j = at->j & (ST_PY_MAX_FRAMES - 1);

		if (st_py_merge_put(m, s->addr[j] | ST_PY_TAG))
			return 1;
		at->j++;
		if (s->ends[j] || at->j >= s->n) {
			at->in_run = 0;
			at->mark = at->o;
			at->keep = 0;
		}
		return 0;
	}
	if (at->i >= m->un) {
		/* A whole Python stack with evaluation frames left over at
		 * the root: the sample was inside an evaluation call that
		 * had not made its frame current yet (or no longer had: its
		 * prologue and epilogue), at the leaf. Merged again with
		 * that many leaf evaluation frames left native, so that the
		 * runs pair from the root (before, every run went one
		 * evaluation frame too deep: pyphases.py's <module> under a
		 * generator's gen_send_ex2). A Python stack cut at its root
		 * (a stopped walk) keeps pairing from the leaf, its leaf's
		 * frames in place. */
		if (at->extra && !at->again && s->stop == ST_PY_STAT__MAX) {
			st_py_merge_begin(at, at->extra);
			return 0;
		}
		return 1;
	}
	a = s->native[at->i & (ST_PY_MAX_FRAMES * 2 - 1)];
	at->i++;
	if (st_py_is_eval(m, a)) {
		if (at->skip) {
			at->skip--;	/* an evaluation call not running its frame yet */
		} else if (at->j < s->n) {
			/* 3.10: the interpreter's frames since the last run were
			 * the call from one Python frame into the next (not
			 * once full: the first pass only counts from there) */
			if (!at->keep && at->mark <= at->o && !at->cut)
				at->o = at->mark;
			at->in_run = 1;
			return 0;
		} else {
			at->extra++;	/* no run left for it */
		}
		at->unmatched = 1;	/* kept as the native frame */
	}
	if (a < m->text_start || a >= m->text_end)
		at->keep = 1;		/* C code of its own (an extension, ctypes) */
	return st_py_merge_put(m, a);
}

/* Two frames a loop step (as st_py_frame_step()). */
static inline long st_py_merge_step(__u32 k, ST_PY_CB_CTX *ctx)
{
	(void)k;
	return st_py_merge_one(ctx) || st_py_merge_one(ctx);
}

/* Merge w->s's Python frames into frames[0..un) (leaf first, at most max
 * entries, max <= ST_PY_MAX_FRAMES * 2): the new count. *cut: frames at the
 * root did not fit; *unmatched: evaluation frames and Python runs did not
 * pair up (left-over Python frames are dropped, left-over evaluation
 * frames stay native). */
static __always_inline __u32 st_py_merge(struct st_py_scratch *s, const struct st_py_proc *p,
					 __u64 *frames, __u32 un, __u32 max, bool *cut,
					 bool *unmatched)
{
	struct st_py_merge m = {
		.s = s, .out = frames, .eval_start = p->eval_start, .eval_end = p->eval_end,
		.cold_start = p->cold_start ? p->cold_start : 1, .cold_end = p->cold_end,
		.text_start = p->text_start, .text_end = p->text_end,
		.max = max > ST_PY_MAX_FRAMES * 2 ? ST_PY_MAX_FRAMES * 2 : max,
	};
	__u32 k, o;

	if (un > ST_PY_MAX_FRAMES * 2)
		un = ST_PY_MAX_FRAMES * 2;
	for (k = 0; k < ST_PY_MAX_FRAMES * 2; k++) {
		if (k >= un)
			break;
		s->native[k] = frames[k];
	}
	m.un = un;
	/* runs pair with evaluation frames from the leaf; a second pass
	 * when the first left evaluation frames over (st_py_merge_one()):
	 * cheaper than counting both first (a count loop cost ~400 ns a
	 * sample, where the second pass runs in ~1% of them) */
	st_py_merge_begin(&s->at, 0);
	ST_PY_LOOP(ST_PY_MAX_FRAMES * 3 + 2, st_py_merge_step, &m);
	*cut = s->at.cut;
	*unmatched = s->at.unmatched || (s->at.j < s->n && !s->at.cut);
	o = s->at.o;
	return o <= m.max ? o : m.max;
}

/* A location table into runs of one line, one entry a step (s->rd, over
 * the table's bytes object in s->win). */
struct st_py_runs_ctx {
	struct st_py_scratch *s;	/* (a loop's context is on the stack) */
};

static inline long st_py_runs_cb(__u32 i, ST_PY_CB_CTX *ctx)
{
	struct st_py_scratch *s = ((struct st_py_runs_ctx *)ctx)->s;

	(void)i;
	return st_py_runs_step(&s->rd, (const __u8 *)s->win);
}

_Static_assert(ST_PY_WIN >= ST_PY_LT_BUF, "a location table is decoded in s->win");

/* The runs of one line (pylines.h) of a code object whose first line is
 * firstlineno and whose location table's bytes object (its first len
 * bytes, a copy) is in s->win, into *seen (cover 0: none; 3.10's table is
 * not a location table). */
static __always_inline void st_py_runs_decode(struct st_py_scratch *s,
					      const struct st_py_layout *l, __u32 len,
					      __u32 firstlineno, struct st_py_code_seen *seen)
{
	struct st_py_runs_ctx c = { .s = s };
	__u64 size;
	__u32 n;

	seen->cover = 0;
	if (l->version < 0x030b || l->bytes_data >= len || len > ST_PY_LT_BUF)
		return;
	size = s->win[(l->bytes_size >> 3) & (ST_PY_WIN / 8 - 1)];
	n = len - l->bytes_data;
	if (size < n)
		n = (__u32)size;
	st_py_runs_begin(&s->rd, l->bytes_data, n, size > n, firstlineno);
	ST_PY_LOOP(ST_PY_RUN_UNITS, st_py_runs_cb, &c);
	seen->runs = s->rd.runs;
	seen->cover = (__u16)st_py_runs_cover(&s->rd);
}

#ifdef __bpf__
/* ---- the BPF program's side: maps and the per-sample entry point ---- */

#define ST_PY_PROCS 4096	/* processes running CPython */
#define ST_PY_TSTATES 16384	/* threads' cached thread states */
#define ST_PY_CODES 65536	/* (process, code object) pairs reported */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_PY_PROCS);
	__type(key, __u32);
	__type(value, struct st_py_proc);
} py_procs SEC(".maps");

/* Moved on by the daemon after each change to py_procs (an update or a
 * delete, user/collect/runtimes/python/python.c): a CPU's copy of an entry read at another
 * value is read again (st_py_walk_sample()). */
__u64 py_procs_epoch = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_PY_TSTATES);
	__type(key, __u64);	/* pid_tgid */
	__type(value, __u64);	/* PyThreadState address */
} py_tstates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_PY_CODES);
	__type(key, struct st_py_code_key);
	__type(value, struct st_py_code_seen);
} py_codes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);	/* 460 reports (2,256 bytes + 8) */
} py_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_py_scratch);
	__uint(max_entries, 1);
} py_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_py_memos);
	__uint(max_entries, 1);
} py_memo SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_py_counts);
	__uint(max_entries, 1);
} py_stats SEC(".maps");

/* This CPU's counts (NULL: none; st_py_add() takes it). */
static __always_inline struct st_py_counts *st_py_counts(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&py_stats, &zero);
}

static __always_inline void st_py_add(struct st_py_counts *c, __u32 which, __u64 n)
{
	if (c && which < ST_PY_STAT__MAX)
		c->n[which] += n;
}

static __always_inline void st_py_count(__u32 which, __u64 n)
{
	st_py_add(st_py_counts(), which, n);
}

/* Report the code objects not seen before in this process. */
struct st_py_report {
	struct st_py_scratch *s;
	struct st_py_memos *memos;
	const struct st_py_layout *l;
	__u32 tgid, image;
};

/* Copy n bytes at user address a into dst (or, that failing, the first
 * ST_PY_SNAP_SMALL): the bytes copied, 0 if none. */
#define ST_PY_SNAP(dst, n, a)                                                                      \
	(!(a) ? 0 : !bpf_probe_read_user((dst), (n), (const void *)(long)(a)) ? (n) :              \
	 !bpf_probe_read_user((dst), ST_PY_SNAP_SMALL, (const void *)(long)(a)) ? ST_PY_SNAP_SMALL : 0)

/* Fill a report's copies of code object e->code's memory. */
static __always_inline void st_py_snap_code(struct st_py_event *e, const struct st_py_layout *l)
{
	__u64 a;

	e->at[ST_PY_SNAP_CODE] = e->code;
	e->len[ST_PY_SNAP_CODE] =
		bpf_probe_read_user(e->hdr, ST_PY_CODE_BUF, (const void *)(long)e->code) ? 0 :
											 ST_PY_CODE_BUF;
	if (!e->len[ST_PY_SNAP_CODE])
		return;
	a = st_py_hdr64(e->hdr, l->code_qualname);
	e->at[ST_PY_SNAP_QUAL] = a;
	e->len[ST_PY_SNAP_QUAL] = ST_PY_SNAP(e->qual, ST_PY_SNAP_NAME, a);
	a = st_py_hdr64(e->hdr, l->code_filename);
	e->at[ST_PY_SNAP_FNAME] = a;
	e->len[ST_PY_SNAP_FNAME] = ST_PY_SNAP(e->file, ST_PY_SNAP_FILE, a);
	a = st_py_hdr64(e->hdr, l->code_linetable);
	e->at[ST_PY_SNAP_LT] = a;
	e->len[ST_PY_SNAP_LT] = ST_PY_SNAP(e->table, ST_PY_SNAP_TABLE, a);
}

static long st_py_report_step(__u32 i, void *ctx)
{
	struct st_py_report *r = ctx;
	struct st_py_scratch *s = r->s;
	struct st_py_code_key k = { .tgid = r->tgid, .image = r->image };
	struct st_py_code_seen *seen, now = {};
	struct st_py_event *e;
	__u32 j = i & (ST_PY_MAX_FRAMES - 1), first, lt;
	bool report;
	__u64 addr;

	if (i >= s->n)
		return 1;
	if (!(s->unknown & (1ULL << j)))
		return 0;	/* the walk found its generation in the memo */
	addr = s->addr[j];
	k.code = ST_PY_CODE(addr);
	now.ident = s->ident[j];
	seen = bpf_map_lookup_elem(&py_codes, &k);
	report = st_py_code_gen(seen, now.ident, &now.gen);
	if (!report && seen) {
		/* the object py_codes has: its runs of one line too */
		now.runs = seen->runs;
		now.cover = seen->cover;
		s->addr[j] = st_py_addr_key(addr, now.gen, &now.runs, now.cover);
		st_py_memo_put(r->memos, r->tgid, r->image, k.code, &now);
		return 0;
	}
	/* a new object takes the new key even when its report is lost
	 * (then unnamed, never another object's name; keyed by its
	 * instruction until it is reported) */
	s->addr[j] = st_py_addr_gen(addr, now.gen);
	e = bpf_ringbuf_reserve(&py_events, sizeof(*e), 0);
	if (!e) {
		st_py_count(ST_PY_STAT_CODE_LOST, 1);
		return 0;	/* not marked seen: reported by a later sample */
	}
	e->pid = r->tgid;
	e->image = r->image;
	e->code = k.code;
	e->key = ST_PY_CODE(s->addr[j]);
	e->ident = now.ident;
	st_py_snap_code(e, r->l);
	/* its location table, copied, is decoded after the submit */
	first = e->len[ST_PY_SNAP_CODE] ?
		((const __u32 *)e->hdr)[(r->l->code_firstlineno >> 2) & (ST_PY_CODE_ROOM / 4 - 1)] : 0;
	lt = e->len[ST_PY_SNAP_CODE] ? e->len[ST_PY_SNAP_LT] : 0;
	if (lt && (lt > ST_PY_LT_BUF || bpf_probe_read_kernel(s->win, ST_PY_LT_BUF, e->table)))
		lt = 0;
	bpf_ringbuf_submit(e, 0);
	if (lt)
		st_py_runs_decode(s, r->l, lt, first, &now);
	s->addr[j] = st_py_addr_key(addr, now.gen, &now.runs, now.cover);
	bpf_map_update_elem(&py_codes, &k, &now, BPF_ANY);
	st_py_memo_put(r->memos, r->tgid, r->image, k.code, &now);
	st_py_count(ST_PY_STAT_CODE_EVENTS, 1);
	return 0;
}

/* A sample the daemon unwinds later (deferred): its Python frames, walked
 * by st_py_walk_sample() now, go with it (st_py_defer()) and the daemon
 * merges them after its unwind (user/collect/runtimes/python/pymerge.c). */
static __always_inline void st_py_deferred(__u32 tgid)
{
	if ((interpreters & ST_INTERP_PYTHON) && bpf_map_lookup_elem(&py_procs, &tgid))
		st_py_count(ST_PY_STAT_DEFERRED, 1);
}

/*
 * The walk and the merge are global functions (not static): the verifier
 * checks each once, on its own, whatever the number of callers and of
 * their states, where a static one is checked again for every state that
 * reaches its call. With the walk before the deferral's branch and the
 * merge after it (a deferred sample is walked here and merged by the
 * daemon), static functions cost on_timer_dwarf 728,260 instructions
 * verified (72.8% of the limit, over its budget of 60%); global ones: see
 * kernel-notes/README.md, "Start-up and verifier budgets". Their price:
 * arguments are scalars or pointers to a type of known size
 * (struct st_py_ustack), and the caller bounds what they return.
 */

/* A sample's user frames as the merge sees them: the walkers' frame
 * array (at least ST_PY_MAX_FRAMES * 2 entries, leaf first). */
struct st_py_ustack {
	__u64 f[ST_PY_MAX_FRAMES * 2];
};

/* Walk the Python stack of the current thread into py_scratch (reporting
 * its code objects not seen before) when its process runs a CPython the
 * daemon found: the frames walked (0: none). They are read at the sample,
 * while they are live, whether the sample is folded here or deferred. */
__noinline int st_py_walk_sample(__u64 pid_tgid, __u32 image)
{
	__u32 tgid = pid_tgid >> 32, zero = 0;
	struct st_py_walk w = { .tid = (__u32)pid_tgid, .tgid = tgid, .image = image };
	struct st_py_report rep = {};
	struct st_py_scratch *s;
	struct st_py_memos *memos;
	struct st_py_counts *c;
	struct st_py_tguess *g;
	struct st_py_proc *p;
	__u64 *cached, ts = 0, epoch;

	/* read-only: without Python the rest is dead code, as in every
	 * function here that uses the py_* maps, which are then not created
	 * (user/collect/session.c) */
	if (!(interpreters & ST_INTERP_PYTHON))
		return 0;
	s = bpf_map_lookup_elem(&py_scratch, &zero);
	memos = bpf_map_lookup_elem(&py_memo, &zero);
	if (!s || !memos)
		return 0;
	s->n = 0;	/* read by st_py_merge_sample() and st_py_defer() */
	/* the process's py_procs entry: the CPU's copy while the daemon has
	 * changed no entry since (its epoch read first: an entry changed
	 * after the read makes the next sample look again), else looked up
	 * and copied, or its absence noted (a hash lookup and a copy of
	 * 120 bytes saved on a CPU's run of samples of one process) */
	epoch = py_procs_epoch;
	if (s->proc_state == ST_PY_PROC_UNREAD || s->proc_tgid != tgid || s->proc_epoch != epoch) {
		p = bpf_map_lookup_elem(&py_procs, &tgid);
		if (p)
			s->proc = *p;
		s->proc_tgid = tgid;
		s->proc_epoch = epoch;
		s->proc_state = p ? ST_PY_PROC_COPIED : ST_PY_PROC_NONE;
	}
	if (s->proc_state != ST_PY_PROC_COPIED)
		return 0;
	p = &s->proc;
	if (p->image != image && p->image != ST_UNWIND_ANY_IMAGE)
		return 0;
	c = st_py_counts();
	st_py_add(c, ST_PY_STAT_SAMPLES, 1);
	w.p = p;
	w.s = s;
	w.memos = memos;
	if (p->l.tstate_pthread) {
		/* 3.10 knows a thread by pthread_self(), glibc's thread
		 * pointer: the fs base the kernel set for it (arch_prctl at
		 * start-up, CLONE_SETTLS for a thread) */
		struct task_struct *task = bpf_get_current_task_btf();

		w.tid = BPF_CORE_READ(task, thread.fsbase);
	}
	/* the thread's state: this CPU's guess, else py_tstates', else found */
	g = &s->tguess[st_hash_u64(pid_tgid) & (ST_PY_TGUESS - 1)];
	ts = g->tstate;
	if (g->pid_tgid != pid_tgid || !st_py_tstate_is(&w, ts)) {
		cached = bpf_map_lookup_elem(&py_tstates, &pid_tgid);
		ts = cached ? *cached : 0;
		if (!cached || !st_py_tstate_is(&w, ts)) {
			ts = st_py_find_tstate(&w);
			if (!ts) {
				st_py_add(c, w.stop < ST_PY_STAT__MAX ? w.stop : ST_PY_STAT_NO_THREAD,
					  1);
				return 0;
			}
			bpf_map_update_elem(&py_tstates, &pid_tgid, &ts, BPF_ANY);
		}
		g->pid_tgid = pid_tgid;
		g->tstate = ts;
	}
	st_py_walk_frames(&w, ts);
	if (w.stop < ST_PY_STAT__MAX)
		st_py_add(c, w.stop, 1);
	if (!s->n || bench_py_stop == 1)
		return 0;
	if (s->unknown) {
		/* code objects the memo has not got: py_codes, or a report */
		rep.s = s;
		rep.memos = memos;
		rep.l = &p->l;
		rep.tgid = tgid;
		rep.image = image;
		bpf_loop(ST_PY_MAX_FRAMES, st_py_report_step, &rep, 0);
	}
	if (bench_py_stop == 2)
		return 0;
	st_py_add(c, ST_PY_STAT_WALKED, 1);
	st_py_add(c, ST_PY_STAT_FRAMES, s->n);
	return s->n;
}

/* Merge the frames st_py_walk_sample() walked last on this CPU (py_scratch)
 * into a sample's user frames (leaf first, u->f[0..un), room for max <=
 * ST_MAX_USER): the new count, at most max, | ST_PY_MERGE_CUT when the
 * merged stack did not fit and lost its outermost frames (the caller puts
 * it under [truncated], as a native walk cut short). */
#define ST_PY_MERGE_CUT (1 << 30)
__noinline int st_py_merge_sample(struct st_py_ustack *u, __u32 un, __u32 max, __u32 tgid)
{
	struct st_py_scratch *s;
	bool cut = false, unmatched = false;
	__u32 zero = 0, n;

	if (!u || !un || !(interpreters & ST_INTERP_PYTHON))
		return un;
	s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s || !s->n || s->proc_tgid != tgid)
		return un;
	n = st_py_merge(s, &s->proc, u->f, un, max, &cut, &unmatched);
	if (bench_py_stop == 3) {
		/* bench: the merge made, the native frames folded */
		for (n = 0; n < ST_PY_MAX_FRAMES * 2 && n < un; n++)
			u->f[n] = s->native[n];
		return un;
	}
	if (cut)
		st_py_count(ST_PY_STAT_MERGE_CUT, 1);
	if (unmatched)
		st_py_count(ST_PY_STAT_UNMATCHED, 1);
	return cut ? (int)(n | ST_PY_MERGE_CUT) : (int)n;
}

/* Copy the frames st_py_walk_sample() walked (n of them) into a deferred
 * sample's record, with the evaluation loop's text they replace. */
static __always_inline void st_py_defer(struct st_py_frames *out, __u32 tgid, __u32 n)
{
	const struct st_py_proc *p;
	struct st_py_scratch *s;
	__u32 zero = 0;

	out->n = 0;
	if (!n || !(interpreters & ST_INTERP_PYTHON))
		return;
	s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s || !s->n || s->n > ST_PY_MAX_FRAMES || s->proc_tgid != tgid)
		return;
	p = &s->proc;
	out->eval_start = p->eval_start;
	out->eval_end = p->eval_end;
	out->cold_start = p->cold_start;
	out->cold_end = p->cold_end;
	out->text_start = p->text_start;
	out->text_end = p->text_end;
	__builtin_memcpy(out->addr, s->addr, sizeof(out->addr));
	__builtin_memcpy(out->ends, s->ends, sizeof(out->ends));
	out->n = s->n;
	out->whole = s->stop == ST_PY_STAT__MAX;
}

/* A sample's user frames (leaf first, u->f[0..un), room for max <=
 * ST_MAX_USER): the Python frames merged in when the process runs a
 * CPython the daemon found; returns the new count, and sets *cut when the
 * merged stack lost its outermost frames. */
static __always_inline __u32 st_py_sample(struct st_py_ustack *u, __u32 un, __u32 max,
					  __u64 pid_tgid, __u32 image, bool *cut)
{
	int n;

	if (st_py_walk_sample(pid_tgid, image) <= 0)
		return un;
	n = st_py_merge_sample(u, un, max, pid_tgid >> 32);
	if (n >= 0 && (n & ST_PY_MERGE_CUT)) {
		*cut = true;
		n &= ~ST_PY_MERGE_CUT;
	}
	return n >= 0 && (__u32)n <= max ? (__u32)n : un;
}
#endif

#endif

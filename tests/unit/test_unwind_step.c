/* test_unwind_step.c - the stack walk of bpf/unwind_step.h (the one BPF
 * runs), built natively (user/collect/unwind/unwind_native.h) on the inputs BPF
 * gets: a process's mapping table, rows in a shard with their pc index, and
 * a stack image. Each row kind, the saved-rbp forms, the frame-pointer
 * fallback, signal frames, the pc index, and every way a walk ends. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "user/collect/unwind/unwind_index.h"
#include "user/collect/unwind/unwind_native.h"

#define BASE 0x400000ull	/* the module's mapping; module vaddr 0 */
#define SP 0x7ffd0000ull	/* the sampled stack pointer */

static struct st_unwind_row rows[] = {
	{ .pc = 0x1000, .kind = ST_UNW_RSP, .rbp = ST_UNW_RBP_SAME, .off = 8 },	/* A: entry */
	{ .pc = 0x1001, .kind = ST_UNW_RSP, .rbp = -2, .off = 16 },	/* A: after push rbp */
	{ .pc = 0x1004, .kind = ST_UNW_RBP, .rbp = -2, .off = 16 },	/* A: rbp set */
	{ .pc = 0x1050, .kind = ST_UNW_RSP, .rbp = -2, .off = 8 },	/* A: ret, after pop rbp */
	{ .pc = 0x1051, .kind = ST_UNW_RSP, .rbp = -3, .off = 8 },	/* (a slot lower still) */
	{ .pc = 0x1100, .kind = ST_UNW_NONE },
	{ .pc = 0x2000, .kind = ST_UNW_RSP, .rbp = ST_UNW_RBP_SAME, .off = 32 }, /* B */
	{ .pc = 0x2100, .kind = ST_UNW_NONE },
	{ .pc = 0x3000, .kind = ST_UNW_END },					/* _start */
	{ .pc = 0x3100, .kind = ST_UNW_NONE },
	{ .pc = 0x4000, .kind = ST_UNW_SIGNAL },				/* __restore_rt */
	{ .pc = 0x4010, .kind = ST_UNW_NONE },
	{ .pc = 0x5000, .kind = ST_UNW_RSP, .rbp = ST_UNW_RBP_SAME, .off = 0 },	/* broken */
	{ .pc = 0x5010, .kind = ST_UNW_NONE },
	{ .pc = 0x6000, .kind = ST_UNW_RSP, .rbp = ST_UNW_RBP_SAME, .off = 8 },	/* loops on itself */
	{ .pc = 0x6100, .kind = ST_UNW_NONE },
	{ .pc = 0x7000, .kind = ST_UNW_RBX, .rbp = ST_UNW_RBP_SAME, .off = 24 }, /* resolver */
	{ .pc = 0x7100, .kind = ST_UNW_NONE },
	/* .plt: CFA = rsp + 8, + 8 from byte 11 of each 16-byte entry on */
	{ .pc = 0x8000, .kind = ST_UNW_PLT, .rbp = 11, .off = 8 },
	{ .pc = 0x8100, .kind = ST_UNW_NONE },
	/* realigned stack: CFA = *(rbp - 8), saved rbp at rbp + 0 */
	{ .pc = 0x9000, .kind = ST_UNW_DEREF_RBP | ST_UNW_F_RBP_AT_RBP, .rbp = 0, .off = -8 },
	{ .pc = 0x9100, .kind = ST_UNW_NONE },
	/* DRAP: CFA = r10 + 0 */
	{ .pc = 0xa000, .kind = ST_UNW_R10, .rbp = ST_UNW_RBP_SAME, .off = 0 },
	{ .pc = 0xa100, .kind = ST_UNW_NONE },
	/* a big frame: CFA = rsp + 8 * 5, rbp not recoverable */
	{ .pc = 0xb000, .kind = ST_UNW_RSP | ST_UNW_F_OFF8, .rbp = ST_UNW_RBP_UNKNOWN, .off = 5 },
	{ .pc = 0xb100, .kind = ST_UNW_NONE },
	/* saved rbp at CFA - 24 (not the usual push right after the call) */
	{ .pc = 0xc000, .kind = ST_UNW_RSP, .rbp = -3, .off = 24 },
	{ .pc = 0xc100, .kind = ST_UNW_UNSUPPORTED },
	{ .pc = 0xc200, .kind = ST_UNW_NONE },
	/* frames that keep their caller's rbx: below the saved rbp (CFA - 24) */
	{ .pc = 0xd000, .kind = ST_UNW_RSP | ST_UNW_RBX_BELOW_RBP << ST_UNW_RBX_SHIFT,
	  .rbp = -2, .off = 32 },
	/* at CFA - 16 (rbx pushed first, rbp kept) */
	{ .pc = 0xd100, .kind = ST_UNW_RSP | ST_UNW_RBX_CFA16 << ST_UNW_RBX_SHIFT,
	  .rbp = ST_UNW_RBP_SAME, .off = 24 },
	/* somewhere no rule says */
	{ .pc = 0xd200, .kind = ST_UNW_RSP | ST_UNW_RBX_LOST << ST_UNW_RBX_SHIFT,
	  .rbp = ST_UNW_RBP_SAME, .off = 16 },
	{ .pc = 0xd300, .kind = ST_UNW_NONE },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* shard 5: a module of many rows and its pc index after them */
#define BIG 200
static struct st_unwind_row big[BIG + 4096];
static size_t nbig;

static const struct st_unwind_row *get_rows(void *ctx, __u32 shard, size_t *n)
{
	(void)ctx;
	if (shard == 3) {
		*n = NROWS;
		return rows;
	}
	if (shard == 5) {
		*n = nbig;
		return big;
	}
	return NULL;
}

static struct st_unwind_proc proc;
static __u8 stack[8 * (ST_MAX_USER + 64)];	/* room for a walk to the depth limit */

static void put(__u64 addr, __u64 v)
{
	memcpy(stack + (addr - SP), &v, sizeof(v));
}

static struct st_unw_native_in input(__u64 ip, __u64 bp, size_t len, bool fallback)
{
	struct st_unw_native_in in = {
		.ip = ip, .sp = SP, .bp = bp, .stack = stack, .stack_len = len,
		.proc = &proc, .rows = get_rows, .fallback = fallback,
	};
	return in;
}

static size_t walk(const struct st_unw_native_in *in, __u64 *out, __u32 max, __u32 *stop)
{
	struct st_unw_native_out res;
	size_t n = st_unw_walk_native(in, out, max, &res);

	*stop = res.stop;
	return n;
}

static int setup(void **state)
{
	(void)state;
	memset(&proc, 0, sizeof(proc));
	memset(stack, 0, sizeof(stack));
	proc.nmaps = 2;
	proc.maps[0] = (struct st_unwind_map){ .start = BASE, .len = 0x10000, .vaddr = 0,
					       .shard = 3, .first = 0, .nrows = NROWS };
	/* a module without rows: frame pointers there in auto mode */
	proc.maps[1] = (struct st_unwind_map){ .start = 0x500000, .len = 0x1000 };
	return 0;
}

/* A (rbp pushed) <- B (CFA = rsp + 32) <- _start: a complete walk. */
static void test_complete(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;

	(void)state;
	put(SP + 0, 0x1111);		/* A's saved rbp */
	put(SP + 8, BASE + 0x2010);	/* A returns into B */
	put(SP + 16 + 24, BASE + 0x3005); /* B's CFA = SP + 16 + 32: RA at CFA - 8 */
	struct st_unw_native_in in = input(BASE + 0x1002, 0x9999, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 3);
	assert_int_equal(stop, ST_UNW_STOP_END);
	assert_int_equal(out[0], BASE + 0x1002);
	assert_int_equal(out[1], BASE + 0x2010);
	assert_int_equal(out[2], BASE + 0x3005);
}

/* At the ret of an epilogue, after its pop rbp, GCC's rows still put the
 * saved rbp at CFA - 16, below sp: the register holds the caller's rbp
 * again, and the stack below sp is not read (the daemon's copy starts at
 * sp: reading there ended late walks with a read fault). */
static void test_epilogue_after_pop_rbp(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;

	(void)state;
	for (__u64 ip = BASE + 0x1050; ip <= BASE + 0x1051; ip++) {
		put(SP + 0, BASE + 0x2010);	/* A returns into B */
		put(SP + 8 + 24, BASE + 0x3005); /* B's CFA = SP + 8 + 32 */
		struct st_unw_native_in in = input(ip, 0x7777, sizeof(stack), false);
		n = walk(&in, out, 8, &stop);
		assert_int_equal(n, 3);
		assert_int_equal(stop, ST_UNW_STOP_END);
		assert_int_equal(out[1], BASE + 0x2010);
		assert_int_equal(out[2], BASE + 0x3005);
	}
}

/* The CFA from rbp, and the caller's rbp restored from the frame. */
static void test_rbp_rule(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;
	__u64 bp = SP + 64;		/* A's frame: CFA = rbp + 16 */

	(void)state;
	put(bp, SP + 256);		/* saved rbp at CFA - 16 */
	put(bp + 8, BASE + 0x9004);	/* into the realigned function */
	put(SP + 256 - 8, SP + 512);	/* its CFA at *(rbp - 8): the restored rbp's */
	put(SP + 256, 0x2222);		/* its saved rbp, at rbp + 0 */
	put(SP + 512 - 8, BASE + 0x3001); /* its return address into _start */
	struct st_unw_native_in in = input(BASE + 0x1010, bp, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 3);
	assert_int_equal(stop, ST_UNW_STOP_END);
	assert_int_equal(out[1], BASE + 0x9004);
	assert_int_equal(out[2], BASE + 0x3001);
}

/* A return address is looked up as ip - 1: a call at the very end of B
 * (0x2100 is past B) still finds B's row. */
static void test_return_address_minus_one(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;

	(void)state;
	put(SP + 8, BASE + 0x2100);	/* A returns just past B's last byte */
	put(SP + 16 + 24, BASE + 0x3005);
	struct st_unw_native_in in = input(BASE + 0x1002, 0, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 3);
	assert_int_equal(stop, ST_UNW_STOP_END);
}

/* CFA = rbx + off (ld.so's _dl_runtime_resolve after mov %rsp,%rbx) and
 * r10 + off (DRAP): the leaf's registers are known; above it r10 is not
 * (no frame saves it), rbx is while the frames below keep it (B: unchanged)
 * or save it where their rows say (test_rbx_restored). */
static void test_rbx_r10_in_the_leaf(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;

	(void)state;
	put(SP + 56, BASE + 0x3005);	/* CFA = rbx + 24 = SP + 64 */
	struct st_unw_native_in in = input(BASE + 0x7010, 0, sizeof(stack), false);
	in.rbx = SP + 40;
	in.r10 = SP + 1000;		/* not r10's kind: unused */
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UNW_STOP_END);
	assert_int_equal(out[1], BASE + 0x3005);
	/* r10 */
	in = input(BASE + 0xa010, 0, sizeof(stack), false);
	in.r10 = SP + 64;
	in.rbx = SP + 1000;
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UNW_STOP_END);
	assert_int_equal(out[1], BASE + 0x3005);
	/* B (CFA = rsp + 32, rbx unchanged) returns into the resolver:
	 * its CFA from the leaf's rbx (SP + 96 + 24) */
	put(SP + 24, BASE + 0x7010);
	put(SP + 112, BASE + 0x3005);
	in = input(BASE + 0x2010, 0, sizeof(stack), false);
	in.rbx = SP + 96;
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 3);
	assert_int_equal(stop, ST_UNW_STOP_END);
	assert_int_equal(out[1], BASE + 0x7010);
	assert_int_equal(out[2], BASE + 0x3005);
	/* r10 above the leaf: A (rbp pushed) returns into the DRAP code */
	put(SP + 8, BASE + 0xa010);
	in = input(BASE + 0x1002, 0, sizeof(stack), false);
	in.r10 = SP + 64;
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UNW_STOP_UNSUPPORTED);
	/* auto mode too: no frame pointers where there is CFI (a zero rbp,
	 * a register the program's code uses, made it look complete) */
	in.fallback = true;
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UNW_STOP_UNSUPPORTED);
	/* and an unsupported row in dwarf mode */
	in = input(BASE + 0xc100, 0, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_UNSUPPORTED);
}

/* A sample in _dl_fixup (and below it) under the resolver: the caller's
 * rbx, the resolver's CFA base, restored from where each frame saved it;
 * where a frame kept it where no rule says, the walk stops at the resolver
 * (unsupported); a signal frame's registers make it known again. */
static void test_rbx_restored(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;

	(void)state;
	/* the resolver's frame: CFA = rbx + 24 = SP + 120, RA into _start */
	put(SP + 112, BASE + 0x3005);
	/* C: CFA = SP + 32, rbp at SP + 16, rbx at SP + 8 */
	put(SP + 24, BASE + 0x7010);
	put(SP + 16, 0x5555);
	put(SP + 8, SP + 96);
	struct st_unw_native_in in = input(BASE + 0xd010, 0x9999, sizeof(stack), false);
	in.rbx = 0x1234;		/* C's own: not the resolver's */
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 3);
	assert_int_equal(stop, ST_UNW_STOP_END);
	assert_int_equal(out[1], BASE + 0x7010);
	assert_int_equal(out[2], BASE + 0x3005);
	/* D: CFA = SP + 24, rbx at SP + 8 */
	memset(stack, 0, 112);
	put(SP + 16, BASE + 0x7010);
	put(SP + 8, SP + 96);
	in = input(BASE + 0xd110, 0, sizeof(stack), false);
	in.rbx = 0x1234;
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 3);
	assert_int_equal(stop, ST_UNW_STOP_END);
	assert_int_equal(out[2], BASE + 0x3005);
	/* E: rbx not known above it; auto mode takes no frame pointers */
	memset(stack, 0, 112);
	put(SP + 8, BASE + 0x7010);
	in = input(BASE + 0xd210, 0, sizeof(stack), true);
	in.rbx = SP + 96;
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UNW_STOP_UNSUPPORTED);
	/* E interrupted by a signal: the handler's frames lose rbx, the
	 * ucontext has the resolver's (gregs at SP + 16 + 40: rbp, rbx, ...
	 * rsp, rip) */
	memset(stack, 0, sizeof(stack));
	put(SP + 8, BASE + 0x4001);	/* E returns into __restore_rt */
	put(SP + 136 + 8, SP + 296);	/* rbx (a stack address: aligned) */
	put(SP + 136 + 40, SP + 200);	/* rsp */
	put(SP + 136 + 48, BASE + 0x7010); /* rip: in the resolver */
	put(SP + 312, BASE + 0x3005);	/* its CFA = rbx + 24 */
	in = input(BASE + 0xd210, 0, sizeof(stack), false);
	in.rbx = 0x1234;
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 4);
	assert_int_equal(stop, ST_UNW_STOP_END);
	assert_int_equal(out[2], BASE + 0x7010);
	assert_int_equal(out[3], BASE + 0x3005);
	/* an rbx no stack address (unaligned: a corrupt frame's): its CFA's
	 * slot is unreadable, as in BPF's walk (bpf/unwind.h's
	 * st_unw_read8()), which stops at the resolver */
	put(SP + 136 + 8, SP + 300);
	put(SP + 316, BASE + 0x3005);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 3);
	assert_int_equal(stop, ST_UNW_STOP_READ_FAULT);
	assert_int_equal(out[2], BASE + 0x7010);
}

/* .plt entries: 8 more from the push of the entry's second half. */
static void test_plt(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;

	(void)state;
	put(SP, BASE + 0x3001);		/* before byte 11: CFA = SP + 8 */
	put(SP + 8, BASE + 0x3002);	/* from byte 11: CFA = SP + 16 */
	struct st_unw_native_in in = input(BASE + 0x8020, 0, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(out[1], BASE + 0x3001);
	in = input(BASE + 0x802b, 0, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(out[1], BASE + 0x3002);
	assert_int_equal(stop, ST_UNW_STOP_END);
}

/* Offsets in units of 8, an unrecoverable rbp, a saved rbp away from the
 * return address. */
static void test_off8_and_saved_rbp_forms(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;

	(void)state;
	put(SP + 32, BASE + 0xc010);	/* CFA = SP + 40: into C */
	put(SP + 40, 0x7777);		/* C: saved rbp at CFA - 24 = SP + 40 */
	put(SP + 40 + 16, BASE + 0x3001); /* C's CFA = SP + 40 + 24 */
	struct st_unw_native_in in = input(BASE + 0xb010, 0x5555, sizeof(stack), true);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 3);
	assert_int_equal(out[1], BASE + 0xc010);
	assert_int_equal(out[2], BASE + 0x3001);
	assert_int_equal(stop, ST_UNW_STOP_END);
	/* after an unrecoverable rbp, an rbp-based frame has nothing to go by */
	put(SP + 32, BASE + 0x1010);
	in = input(BASE + 0xb010, 0x5555, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UNW_STOP_BAD_FRAME);	/* CFA = 0 + 16 */
}

/* No CFI: dwarf mode stops; auto mode follows the frame pointers. */
static void test_no_cfi_and_fallback(void **state)
{
	__u64 out[8];
	struct st_unw_native_out res;
	__u32 stop;
	size_t n;
	__u64 bp = SP + 32;

	(void)state;
	put(bp, 0);			/* outermost by convention */
	put(bp + 8, BASE + 0x3001);
	struct st_unw_native_in in = input(0x500010, bp, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_NO_TABLE);
	in.fallback = true;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 2);
	assert_int_equal(out[1], BASE + 0x3001);
	assert_int_equal(res.fp_frames, 1);
	assert_int_equal(res.stop, ST_UNW_STOP_END);
	assert_false(res.miss);
	/* a frame-pointer step that fails: bp below sp */
	in.bp = SP - 16;
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_NO_TABLE);
	/* an address no mapping covers: a miss (BPF asks for the maps) */
	in = input(0x900000, 0, sizeof(stack), false);
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_int_equal(res.stop, ST_UNW_STOP_NO_TABLE);
	assert_true(res.miss);
	/* no table at all */
	in.proc = NULL;
	in.ip = BASE + 0x1002;
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_NO_TABLE);
	/* a zero frame pointer in a frame without CFI (an assembly leaf
	 * called from code without frame pointers): no proof of the root */
	in = input(0x500010, 0, sizeof(stack), true);
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_int_equal(res.fp_frames, 0);
	assert_int_equal(res.stop, ST_UNW_STOP_NO_TABLE);
	/* but one a call saved ends the stack: B (CFI, rbp kept) returns
	 * into the module without rows with rbp 0 */
	put(SP + 24, 0x500020);
	in = input(BASE + 0x2010, 0, sizeof(stack), true);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UNW_STOP_END);
	/* not when B returns where no mapping is */
	put(SP + 24, 0x900020);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UNW_STOP_NO_TABLE);
}

/* A module without rows: why (the budget, or not compiled yet) is told. */
static void test_over_budget_and_pending(void **state)
{
	__u64 out[8];
	struct st_unw_native_out res;

	(void)state;
	proc.maps[1].flags = ST_UNWIND_MAP_OVER_BUDGET;
	struct st_unw_native_in in = input(0x500010, 0, sizeof(stack), false);
	st_unw_walk_native(&in, out, 8, &res);
	assert_true(res.over_budget);
	assert_false(res.pending);
	proc.maps[1].flags = ST_UNWIND_MAP_PENDING;
	st_unw_walk_native(&in, out, 8, &res);
	assert_false(res.over_budget);
	assert_true(res.pending);
	assert_int_equal(res.stop, ST_UNW_STOP_NO_TABLE);
}

/* Reads past the copied stack end the walk: a read fault. */
static void test_short_copy(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;

	(void)state;
	put(SP + 8, BASE + 0x2010);
	put(SP + 16 + 24, BASE + 0x3005);
	struct st_unw_native_in in = input(BASE + 0x1002, 0, 16, false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, ST_UNW_STOP_READ_FAULT);
	in.stack_len = 0;
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_READ_FAULT);
	/* a realigned frame whose CFA pointer is outside */
	in = input(BASE + 0x9010, SP + 8192, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_READ_FAULT);
	/* a signal frame cut short */
	in = input(BASE + 0x4002, 0, 64, false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_READ_FAULT);
}

/* A signal frame: the interrupted registers from the ucontext at sp. */
static void test_signal_frame(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;
	__u64 g = SP + 40 + 10 * 8;	/* gregs[REG_RBP] */

	(void)state;
	put(g + 0, 0);			/* rbp */
	put(g + 5 * 8, SP + 512);	/* rsp */
	put(g + 6 * 8, BASE + 0x1000);	/* rip: A's first instruction */
	put(SP + 512, BASE + 0x3001);	/* A's return address, at its CFA - 8 */
	struct st_unw_native_in in = input(BASE + 0x4002, 0, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 3);
	assert_int_equal(out[1], BASE + 0x1000);	/* exact: not ip - 1 */
	assert_int_equal(out[2], BASE + 0x3001);
	assert_int_equal(stop, ST_UNW_STOP_END);
}

/* A CFA that does not move up, a zero return address, and the depth limit. */
static void test_bad_frame_and_depth(void **state)
{
	__u64 out[ST_MAX_USER];
	__u32 stop;
	size_t n;

	(void)state;
	struct st_unw_native_in in = input(BASE + 0x5000, 0, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_BAD_FRAME);
	/* a zero return address ends a stack */
	in = input(BASE + 0x6000, 0, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_END);
	/* a function returning into itself, frame after frame */
	for (__u64 a = SP; a + 8 <= SP + sizeof(stack); a += 8)
		put(a, BASE + 0x6001);
	n = walk(&in, out, 5, &stop);
	assert_int_equal(n, 5);
	assert_int_equal(stop, ST_UNW_STOP_DEPTH);
	n = walk(&in, out, ST_MAX_USER, &stop);
	assert_int_equal(n, ST_MAX_USER);
	assert_int_equal(stop, ST_UNW_STOP_DEPTH);
	assert_int_equal(st_unwind_stop_stat(stop), ST_STAT_TRUNCATED);
	assert_int_equal(st_unwind_stop_stat(ST_UNW_STOP_END), ST_STAT__MAX);
}

/* Stack garbage read as a return address (0xeb bytes, bit 63 set: pixel
 * data where a frame-pointer step looked; an address in the null page) is
 * no frame, whatever step read it: the walk stops before it, a bad frame. */
static void test_garbage_return_address(void **state)
{
	const __u64 garbage = 0xebebebebebebebebULL;
	__u64 out[8], bp = SP + 32;
	struct st_unw_native_out res;
	__u32 stop;
	size_t n;

	(void)state;
	/* the frame-pointer fallback from a leaf without CFI */
	put(bp, garbage);
	put(bp + 8, garbage);
	struct st_unw_native_in in = input(0x500010, bp, sizeof(stack), true);
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 0x500010);
	assert_int_equal(res.stop, ST_UNW_STOP_BAD_FRAME);
	assert_int_equal(st_unwind_stop_stat(res.stop), ST_STAT_UNW_BAD_FRAME);
	/* a CFI step (B: CFA = sp + 32) that returns into it, and into the
	 * first address past user space */
	put(SP + 24, garbage);
	in = input(BASE + 0x2010, 0, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_BAD_FRAME);
	put(SP + 24, ST_USER_END);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_BAD_FRAME);
	for (size_t i = 0; i < n; i++)
		assert_true(out[i] < ST_USER_END);
	/* in the null page (a frame-pointer step through code without
	 * them read a counter or a flag): 0, 1, the page's last byte */
	for (__u64 v = 0; v < 3; v++) {
		put(bp, SP + 64);
		put(bp + 8, v == 2 ? ST_USER_MIN - 1 : v);
		in = input(0x500010, bp, sizeof(stack), true);
		n = walk(&in, out, 8, &stop);
		assert_int_equal(n, 1);
		assert_int_equal(stop, ST_UNW_STOP_BAD_FRAME);
	}
	/* the first page past it is an address like any */
	put(bp + 8, ST_USER_MIN);
	n = walk(&in, out, 8, &stop);
	assert_true(n >= 2);
	assert_int_equal(out[1], ST_USER_MIN);
}

/* Rows a table points at but the shard does not have are "no CFI". */
static void test_rows_out_of_range(void **state)
{
	__u64 out[8];
	__u32 stop;
	size_t n;

	(void)state;
	proc.maps[0].first = 10;	/* 10 + NROWS rows > the shard's */
	struct st_unw_native_in in = input(BASE + 0x1002, 0, sizeof(stack), false);
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_NO_TABLE);
	proc.maps[0].first = 0;
	proc.maps[0].shard = 4;		/* no such shard */
	n = walk(&in, out, 8, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_NO_TABLE);
}

/* The pc index (user/collect/unwind/unwind_index.c builds it, the walk reads it):
 * every pc of a module finds the row a plain search finds. */
static void test_pc_index(void **state)
{
	struct st_unwind_index ix;
	struct st_unw_env e = { .rows = get_rows };
	struct st_unwind_map m = { .shard = 5, .first = 0, .nrows = BIG };

	(void)state;
	for (size_t i = 0; i < BIG; i++)	/* uneven row lengths */
		big[i] = (struct st_unwind_row){ .pc = (__u32)(0x1000 + i * 16 + (i % 7) * 4 + i * i),
						 .kind = ST_UNW_RSP, .off = (__s16)i };
	st_unwind_index__plan(big, BIG, &ix);
	assert_true(ix.nbuckets > 0 && ix.nbuckets <= 4096);
	st_unwind_index__build(big, BIG, &ix, big + BIG);
	nbig = BIG + ix.nbuckets;
	m.nbuckets = ix.nbuckets;
	m.ishift = ix.shift;
	m.ibase = ix.base;
	for (__u32 pc = 0; pc < big[BIG - 1].pc + 100; pc += 3) {
		const struct st_unwind_row *r = st_unw_find_row(&e, &m, pc);
		size_t want = BIG;

		for (size_t i = 0; i < BIG && big[i].pc <= pc; i++)
			want = i;
		if (pc < big[0].pc) {
			assert_null(r);
		} else {
			assert_non_null(r);
			assert_int_equal(r->off, big[want].off);
		}
	}
}

/* A process with more mappings than a table holds: the table indexes
 * chunks (unwinder.c lays them out so); a walk through a mapping of the
 * second chunk is complete. */
static struct st_unwind_proc chunks[2];

static __u64 chunked(void)
{
	__u64 at = 0;

	memset(chunks, 0, sizeof(chunks));
	for (__u32 i = 0; i < 300; i++) {
		struct st_unwind_proc *c = &chunks[i / ST_UNWIND_MAX_MAPS];
		struct st_unwind_map *m = &c->maps[c->nmaps++];

		*m = (struct st_unwind_map){ .start = 0x1000000ull * (i + 1), .len = 0x10000 };
		if (i == 280) {		/* the module with rows */
			m->shard = 3;
			m->nrows = NROWS;
			at = m->start;
		}
	}
	proc.nmaps = 2;
	proc.gen = 7;
	for (__u32 k = 0; k < 2; k++)
		proc.maps[k] = (struct st_unwind_map){ .start = chunks[k].maps[0].start, .shard = k,
						       .flags = ST_UNWIND_MAP_CHUNK };
	return at;
}

static void test_chunked_table(void **state)
{
	__u64 out[8], at = chunked();
	struct st_unw_native_out res;
	size_t n;

	(void)state;
	put(SP + 8, at + 0x2010);	/* A returns into B */
	put(SP + 16 + 24, at + 0x3005);	/* B into _start */
	struct st_unw_native_in in = input(at + 0x1002, 0, sizeof(stack), false);
	in.chunks = chunks;
	in.nchunks = 2;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 3);
	assert_int_equal(res.stop, ST_UNW_STOP_END);
	assert_int_equal(out[2], at + 0x3005);
	/* a mapping of the first chunk, and an address between two mappings */
	in.ip = 0x1000000ull * 3 + 0x10;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(res.stop, ST_UNW_STOP_NO_TABLE);	/* no rows there */
	assert_false(res.miss);
	in.ip = 0x1000000ull * 3 + 0x20000;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_true(res.miss);
	/* the second chunk missing (not in the kernel): a miss, not a wrong walk */
	in.ip = at + 0x1002;
	in.nchunks = 1;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_true(res.miss);
}

/* A table that left mappings out: a walk that stops outside it is counted
 * under its own reason, and asks for no new table. */
static void test_truncated_table(void **state)
{
	__u64 out[8], at = chunked();
	struct st_unw_native_out res;
	size_t n;

	(void)state;
	proc.flags = ST_UNWIND_PROC_TRUNCATED;
	struct st_unw_native_in in = input(0x1000000ull * 400 + 0x10, 0, sizeof(stack), false);
	in.chunks = chunks;
	in.nchunks = 2;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_int_equal(res.stop, ST_UNW_STOP_TOO_MANY_MAPS);
	assert_false(res.miss);
	assert_int_equal(st_unwind_stop_stat(res.stop), ST_STAT_UNW_TOO_MANY_MAPS);
	/* inside the table, the walk is what it is */
	put(SP + 8, at + 0x2010);
	put(SP + 16 + 24, at + 0x3005);
	in.ip = at + 0x1002;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 3);
	assert_int_equal(res.stop, ST_UNW_STOP_END);
}

/* The module's code for st_unw_scan(): nops but where a test puts a call. */
static __u8 image[0x10000];

/* another module with CFI (the same rows and code): a library */
#define LIB 0x700000ull

/* JIT code: memory no mapping of the table covers */
#define JIT 0x600000ull
static __u8 jit[0x1000];

static long code_at(void *ctx, const struct st_unwind_map *m, __u64 addr, void *dst, __u32 n)
{
	(void)ctx;
	if (addr < m->start || addr - m->start + n > m->len)
		return -1;	/* outside the mapping it names */
	if (m->start >= JIT && m->start < JIT + sizeof(jit)) {	/* made of the bytes read */
		if (m->nrows || addr - JIT + n > sizeof(jit))
			return -1;
		memcpy(dst, jit + (addr - JIT), n);
		return 0;
	}
	if ((m->start != BASE && m->start != LIB) || addr - m->start + n > sizeof(image))
		return -1;	/* (both modules' code is image's) */
	memcpy(dst, image + (addr - m->start), n);
	return 0;
}

/* the bytes of a call ending at module offset end */
static void call_at(__u32 end, const __u8 *b, size_t n)
{
	memcpy(image + end - n, b, n);
}

static void direct_call_at(__u32 end, __u32 target)
{
	__s32 rel = (__s32)(target - end);
	__u8 b[5] = { 0xe8 };

	memcpy(b + 1, &rel, 4);
	call_at(end, b, 5);
}

static const __u8 call_rax[] = { 0xff, 0xd0 };

/* nops (no call anywhere), but B's call *%rax returning to 0x2010 and
 * one in the stretch without CFI returning to 0x1180 */
static void code_with_calls(void)
{
	memset(image, 0x90, sizeof(image));
	memset(jit, 0x90, sizeof(jit));
	call_at(0x2010, call_rax, sizeof(call_rax));
	call_at(0x1180, call_rax, sizeof(call_rax));
}

/* An assembly leaf without CFI or frame pointer (module offset 0x1234, in
 * the stretch 0x1100-0x2000 that no FDE covers) in a module with CFI: its
 * return address is the first word above sp that follows a call reaching
 * it (the checked scan), then its caller B walks by its rows to _start. */
static void test_scan_past_assembly(void **state)
{
	struct st_unw_native_out res;
	__u64 out[8];
	size_t n;

	(void)state;
	code_with_calls();
	direct_call_at(0x2020, 0x1200);			/* B: call the leaf's function */
	direct_call_at(0x2030, 0x1300);			/* a call above the leaf's pc */
	direct_call_at(0x2050, 0x2000);			/* a call into B (CFI) */
	put(SP + 0, 0x1111);			/* no address */
	put(SP + 8, BASE + 0x2040);		/* code, but no call before it */
	put(SP + 16, BASE + 0x1180);		/* an indirect call in code without CFI */
	put(SP + 24, BASE + 0x2010);		/* B's indirect call: the return address */
	put(SP + 32 + 24, BASE + 0x3005);	/* B: CFA = SP + 32 + 32 */
	struct st_unw_native_in in = input(BASE + 0x1234, 0, sizeof(stack), false);

	/* without code to check, as before: cut */
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_int_equal(res.stop, ST_UNW_STOP_NO_TABLE);
	assert_int_equal(res.scanned, 0);
	in.code = code_at;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 3);
	assert_int_equal(res.stop, ST_UNW_STOP_END);
	assert_true(out[1] == BASE + 0x2010);
	assert_true(out[2] == BASE + 0x3005);
	assert_int_equal(res.scanned, 1);
	assert_int_equal(res.scan_failed, 0);
	/* direct calls: into another function (B), above the leaf's pc:
	 * passed over; into the leaf's stretch below its pc: taken */
	put(SP + 8, BASE + 0x2050);
	put(SP + 16, BASE + 0x2030);
	put(SP + 24, BASE + 0x2020);
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 3);
	assert_true(out[1] == BASE + 0x2020);
	assert_int_equal(res.stop, ST_UNW_STOP_END);
	/* a frame-pointer walk (auto) is not tried first in such a stretch:
	 * the same frames with a frame pointer that would lead elsewhere */
	put(SP + 128, 0);
	put(SP + 136, BASE + 0x3001);
	in.bp = SP + 128;
	in.fallback = true;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 3);
	assert_true(out[1] == BASE + 0x2020);
	assert_int_equal(res.fp_frames, 0);
	/* no candidate: counted, and cut (no frame-pointer guess, auto too) */
	for (__u64 a = SP; a < SP + 8 * ST_UNW_SCAN_WORDS + 64; a += 8)
		if (a != SP + 128 && a != SP + 136)
			put(a, 0x1111);
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(res.scanned, 0);
	assert_int_equal(res.scan_failed, 1);
	assert_int_equal(n, 1);
	assert_int_equal(res.stop, ST_UNW_STOP_NO_TABLE);
	assert_int_equal(res.fp_frames, 0);
	/* dwarf: cut, as before */
	in.fallback = false;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_int_equal(res.stop, ST_UNW_STOP_NO_TABLE);
	assert_int_equal(res.scan_failed, 1);
}

/* A comparator without CFI in a module with some (qsort_nocfi: _start's),
 * sampled in its prologue (its frame pointer not yet its frame's), called
 * by a library's indirect call (qsort's): that return address, from
 * another module, is not taken by the scan, nor passed over for an outer
 * frame's call of this module that checks (_start's call of
 * __libc_start_main, as main's caller): the walk is cut there. */
static void test_scan_stops_at_another_modules_call(void **state)
{
	struct st_unw_native_out res;
	__u64 out[8];
	size_t n;

	(void)state;
	code_with_calls();
	call_at(0x3005, call_rax, sizeof(call_rax));	/* _start's indirect call */
	proc.nmaps = 3;
	proc.maps[2] = proc.maps[0];
	proc.maps[2].start = LIB;
	put(SP + 0, LIB + 0x2010);		/* the library's call: the caller */
	put(SP + 8 + 24, LIB + 0x3001);		/* its walk holds up */
	put(SP + 64, BASE + 0x3005);		/* this module's _start, further up */
	struct st_unw_native_in in = input(BASE + 0x1234, 0, sizeof(stack), true);

	in.code = code_at;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_int_equal(res.stop, ST_UNW_STOP_NO_TABLE);
	assert_int_equal(res.scanned, 0);
	assert_int_equal(res.scan_failed, 1);
	/* the same call from this module's code: taken */
	put(SP + 0, BASE + 0x2010);
	put(SP + 8 + 24, BASE + 0x3001);
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 3);
	assert_true(out[1] == BASE + 0x2010);
	assert_int_equal(res.stop, ST_UNW_STOP_END);
	assert_int_equal(res.scanned, 1);
}

/* Code without CFI that keeps frame pointers (V8's builtins in node's
 * .text, a comparator qsort calls): in auto mode its frame-pointer step
 * is taken before any scan where the word above the saved rbp checks: a
 * call in code with CFI whose walk holds up; in code without CFI or JIT
 * code (no mapping) a call instruction, with the saved rbp further up. */
static void test_fp_past_code_without_cfi(void **state)
{
	static const struct {
		__u64 slot, val;	/* a word of the chain below made so */
		__u32 fp;		/* frame-pointer steps before the refused one */
	} refused[] = {
		{ SP + 16, SP + 8, 0 },			/* the saved rbp below its own */
		{ SP + 24, BASE + 0x1170, 0 },		/* no call before the word */
		{ SP + 24, BASE + 0x1190, 0 },		/* a direct call into B (CFI) */
		{ SP + 56, JIT + 0x200, 1 },		/* JIT code, no call there */
		{ SP + 56, JIT + sizeof(jit) + 0x100, 1 },	/* JIT code gone */
	};
	struct st_unw_native_out res;
	__u64 out[8];
	size_t n;

	(void)state;
	code_with_calls();
	memcpy(jit + 0x100 - 2, call_rax, 2);		/* JIT code: call *%rax */
	direct_call_at(0x1190, 0x2000);			/* the stretch calls B (CFI) */
	/* a comparator: its frame pointer's return address is B's indirect
	 * call, B's caller found by its rows (B keeps the caller's rbp) */
	put(SP + 64, 0x1111);
	put(SP + 72, BASE + 0x2010);
	put(SP + 80 + 24, BASE + 0x3005);	/* B: CFA = SP + 80 + 32 */
	struct st_unw_native_in in = input(BASE + 0x1234, SP + 64, sizeof(stack), true);

	in.code = code_at;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 3);
	assert_int_equal(res.stop, ST_UNW_STOP_END);
	assert_true(out[1] == BASE + 0x2010);
	assert_int_equal(res.fp_frames, 1);
	assert_int_equal(res.scanned + res.scan_failed, 0);
	/* V8's: a builtin called by a builtin (an indirect call in the
	 * stretch), called by JIT code, called by B */
	memset(stack, 0, sizeof(stack));
	put(SP + 16, SP + 48);
	put(SP + 24, BASE + 0x1180);
	put(SP + 48, SP + 96);
	put(SP + 56, JIT + 0x100);
	put(SP + 96, 0x2222);
	put(SP + 104, BASE + 0x2010);
	put(SP + 112 + 24, BASE + 0x3005);
	in.bp = SP + 16;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 5);
	assert_int_equal(res.stop, ST_UNW_STOP_END);
	assert_true(out[1] == BASE + 0x1180);
	assert_true(out[2] == JIT + 0x100);
	assert_true(out[3] == BASE + 0x2010);
	assert_int_equal(res.fp_frames, 3);
	assert_int_equal(res.scanned + res.scan_failed, 0);
	/* frame pointers that do not check: no step there; the scan finds
	 * B's call (the first word that follows a checked call) */
	for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
		__u64 was;

		memcpy(&was, stack + (refused[k].slot - SP), sizeof(was));
		put(refused[k].slot, refused[k].val);
		n = st_unw_walk_native(&in, out, 8, &res);
		assert_int_equal(n, 3 + refused[k].fp);
		assert_int_equal(res.fp_frames, refused[k].fp);
		assert_true(out[1 + refused[k].fp] == BASE + 0x2010);
		assert_int_equal(res.scanned, 1);
		put(refused[k].slot, was);
	}
	/* nothing checks: cut, "no CFI" */
	put(SP + 24, BASE + 0x1170);
	put(SP + 104, BASE + 0x2040);
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_int_equal(res.stop, ST_UNW_STOP_NO_TABLE);
	assert_int_equal(res.scan_failed, 1);
	put(SP + 24, BASE + 0x1180);
	put(SP + 104, BASE + 0x2010);
	/* dwarf (whose walks get no code reader: no scan): cut */
	in.fallback = false;
	in.code = NULL;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_int_equal(res.stop, ST_UNW_STOP_NO_TABLE);
	assert_int_equal(res.fp_frames, 0);
}

/* Pages of a deferred copy that were not there (holes) are not read:
 * the return address in one is no candidate, and a walk that needs it
 * stops with a read fault. */
static void test_stack_holes(void **state)
{
	struct st_unw_native_out res;
	__u64 out[8], first = 4096 - (SP & 4095);	/* SP's page: copy 0 */
	size_t n;

	(void)state;
	code_with_calls();
	put(SP + 24, BASE + 0x2010);
	put(SP + 32 + 24, BASE + 0x3005);
	struct st_unw_native_in in = input(BASE + 0x1234, 0, sizeof(stack), false);

	in.code = code_at;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 3);
	in.holes = 1;	/* SP's own page */
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 1);
	assert_int_equal(res.scan_failed, 1);
	in.holes = 2;	/* the page above: not read here */
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 3);
	assert_true(st_deferred_hole(2, SP, first, 8));
	assert_false(st_deferred_hole(2, SP, first - 8, 8));
	assert_true(st_deferred_hole(2, SP, first - 4, 8));	/* straddles */
	assert_false(st_deferred_hole(0, SP, 0, 8));
	/* SP's page a hole under a leaf with a big frame whose CFA is rbp's,
	 * on the page above (bpf/defer.bpf.h copies such a stack since sp's
	 * page missing in its mapping is a hole): walked past it */
	memset(stack, 0, sizeof(stack));
	put(SP + first + 16, 0);			/* A's saved rbp: the chain's end */
	put(SP + first + 24, BASE + 0x3005);		/* ... its return address */
	in = input(BASE + 0x1010, SP + first + 16, sizeof(stack), false);
	in.holes = 1;
	n = st_unw_walk_native(&in, out, 8, &res);
	assert_int_equal(n, 2);
	assert_true(out[1] == BASE + 0x3005);
	assert_int_equal(res.stop, ST_UNW_STOP_END);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_complete, setup),
		cmocka_unit_test_setup(test_rbp_rule, setup),
		cmocka_unit_test_setup(test_epilogue_after_pop_rbp, setup),
		cmocka_unit_test_setup(test_return_address_minus_one, setup),
		cmocka_unit_test_setup(test_rbx_r10_in_the_leaf, setup),
		cmocka_unit_test_setup(test_rbx_restored, setup),
		cmocka_unit_test_setup(test_plt, setup),
		cmocka_unit_test_setup(test_off8_and_saved_rbp_forms, setup),
		cmocka_unit_test_setup(test_no_cfi_and_fallback, setup),
		cmocka_unit_test_setup(test_over_budget_and_pending, setup),
		cmocka_unit_test_setup(test_short_copy, setup),
		cmocka_unit_test_setup(test_signal_frame, setup),
		cmocka_unit_test_setup(test_bad_frame_and_depth, setup),
		cmocka_unit_test_setup(test_garbage_return_address, setup),
		cmocka_unit_test_setup(test_rows_out_of_range, setup),
		cmocka_unit_test_setup(test_pc_index, setup),
		cmocka_unit_test_setup(test_chunked_table, setup),
		cmocka_unit_test_setup(test_truncated_table, setup),
		cmocka_unit_test_setup(test_scan_past_assembly, setup),
		cmocka_unit_test_setup(test_stack_holes, setup),
		cmocka_unit_test_setup(test_scan_stops_at_another_modules_call, setup),
		cmocka_unit_test_setup(test_fp_past_code_without_cfi, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_pywalk.c - bpf/pywalk.h's walker, natively: on LIVE python3.11
 * processes (Debian's static /usr/bin/python3.11 and pyenv's build on
 * libpython3.11.so) and live python3.10, 3.12 and 3.13 (pyenv's, on
 * libpython3.1x.so; 3.10: PyFrameObjects, one evaluation call each, the
 * thread found by pthread_self(); 3.12+: runs ended by C-stack shim
 * frames instead of is_entry; 3.13: no _PyCFrame, f_executable,
 * instr_ptr), each skipped when absent, read through process_vm_readv, compared with the stack the
 * script prints of itself; on fake memory (loops, bad pointers, 3.12 and
 * 3.13 shim frames); and the merge with a native stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/collect/runtimes/python/pywalk_native.h"
#include "user/collect/runtimes/python/pycode.h"
#include "user/collect/runtimes/python/pyoffsets.h"
#include "user/collect/runtimes/python/pyproc.h"

#define PY_DEBIAN "/usr/bin/python3.11"
#define PY_PYENV "/root/.pyenv/versions/3.11.7/bin/python3.11"
#define PY_PYENV310 "/root/.pyenv/versions/3.10.13/bin/python3.10"
#define PY_PYENV312 "/root/.pyenv/versions/3.12.1/bin/python3.12"
#define PY_PYENV313 "/root/.pyenv/versions/3.13.0/bin/python3.13"

/* A known stack: <module> -> K.meth -> <listcomp> -> (map, C) -> rec x6 ->
 * leaf, which prints its own stack (leaf first, "qualname:line|...";
 * 3.10: the name, it has no qualname), then its thread's id
 * (pthread_self(), which 3.10 finds a thread by), and sleeps on the same
 * line. 3.12+ run the comprehension inside K.meth's frame (PEP 709): no
 * <listcomp> there. */
static const char script[] =
	"import sys, time, threading\n"
	"def stack():\n"
	"    f = sys._getframe(1); out = []\n"
	"    while f:\n"
	"        c = f.f_code; q = getattr(c, 'co_qualname', c.co_name)\n"
	"        out.append('%s:%d' % (q, f.f_lineno)); f = f.f_back\n"
	"    return '|'.join(out)\n"
	"def leaf():\n"
	"    print(stack(), threading.get_ident(), sep='\\n', flush=True); time.sleep(30)\n"
	"def rec(n):\n"
	"    if n == 0:\n"
	"        return leaf()\n"
	"    return rec(n - 1)\n"
	"class K:\n"
	"    def meth(self):\n"
	"        return [x for x in map(rec, [5])]\n"
	"K().meth()\n";

static void walk_live(const char *python, __u16 want_version)
{
	char path[] = "/tmp/st_pywalk_XXXXXX", expect[4096], got[4096] = "", ident[64];
	struct st_py_scratch s = {};
	struct st_py_proc p;
	struct st_py_walk w = {};
	int fds[2], fd, nends = 0;
	__u32 version;
	__u64 ts;
	pid_t pid;
	FILE *out;

	if (access(python, X_OK)) {
		skip();
		return;
	}
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, script, sizeof(script) - 1), (ssize_t)sizeof(script) - 1);
	close(fd);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(python, python, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	assert_non_null(fgets(expect, sizeof(expect), out));
	expect[strcspn(expect, "\n")] = '\0';
	assert_non_null(fgets(ident, sizeof(ident), out));
	usleep(200 * 1000);	/* into time.sleep, on the same line */

	assert_int_equal(st_py_proc__probe(pid, &p, &version, NULL), ST_PY_PROBE_OK);
	assert_int_equal(version >> 16, want_version);
	w.p = &p;
	w.s = &s;
	w.read = st_py_read_pid;
	w.read_arg = &pid;
	w.tid = p.l.tstate_pthread ? strtoull(ident, NULL, 10) : (__u64)pid;
	ts = st_py_find_tstate(&w);
	assert_true(ts != 0);
	assert_true(st_py_tstate_is(&w, ts));
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.stop, ST_PY_STAT__MAX);
	for (__u32 i = 0; i < s.n; i++) {
		struct st_py_code c;
		char one[600];

		__u64 code = ST_PY_CODE(s.addr[i]), own[3] = {}, file = 0, qual = 0, table = 0, h;
		__u32 first = 0;

		assert_int_equal(st_py_code__read(&p.l, p.code_type, st_py_read_pid, &pid, code,
						  &c), 0);
		/* the identity taken from the walk's one read of the header */
		assert_int_equal(st_py_read_pid(&pid, own, sizeof(own), code + p.l.code_consts), 0);
		assert_int_equal(st_py_read_pid(&pid, &file, 8, code + p.l.code_filename), 0);
		assert_int_equal(st_py_read_pid(&pid, &qual, 8, code + p.l.code_qualname), 0);
		assert_int_equal(st_py_read_pid(&pid, &table, 8, code + p.l.code_linetable), 0);
		assert_int_equal(st_py_read_pid(&pid, &first, 4, code + p.l.code_firstlineno), 0);
		assert_int_equal(first, c.firstlineno);
		h = st_hash_mix(st_hash_mix(st_hash_mix(0, own[0]), own[1]), own[2]);
		h = st_hash_mix(st_hash_mix(st_hash_mix(h, file), qual), table);
		assert_int_equal(s.ident[i], st_hash_mix(h, first));
		/* recursion: one object, one identity; others differ */
		for (__u32 j = 0; j < i; j++)
			assert_true((ST_PY_CODE(s.addr[j]) == code) == (s.ident[j] == s.ident[i]));
		snprintf(one, sizeof(one), "%s%s:%u", i ? "|" : "", c.qualname,
			 st_py_code__line(&p.l, c.linetable, c.linetable_len, c.firstlineno,
					  ST_PY_INDEX(s.addr[i])));
		strncat(got, one, sizeof(got) - strlen(got) - 1);
		if (s.ends[i] && p.l.frame_lasti != ST_PY_NO_OFF) {
			nends++;	/* 3.10: every frame */
		} else if (s.ends[i]) {
			nends++;
			/* runs end where C called in: map() -> rec, and <module> */
			assert_true(!strcmp(c.qualname, "rec") || !strcmp(c.qualname, "<module>"));
		}
		st_py_code__release(&c);
	}
	print_message("%s\n", got);
	assert_int_equal(nends, p.l.frame_lasti != ST_PY_NO_OFF ? s.n : 2);
	assert_string_equal(got, expect);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fclose(out);
	unlink(path);
}

static void test_live_debian_static(void **state)
{
	(void)state;
	walk_live(PY_DEBIAN, 0x030b);
}

static void test_live_pyenv_libpython(void **state)
{
	(void)state;
	walk_live(PY_PYENV, 0x030b);
}

static void test_live_pyenv_310(void **state)
{
	(void)state;
	walk_live(PY_PYENV310, 0x030a);
}

static void test_live_pyenv_312(void **state)
{
	(void)state;
	walk_live(PY_PYENV312, 0x030c);
}

static void test_live_pyenv_313(void **state)
{
	(void)state;
	walk_live(PY_PYENV313, 0x030d);
}

/* fake memory: a buffer mapped at FAKE */
#define FAKE 0x10000000ULL
static __u8 mem[0x1000 + (ST_PY_MAX_FRAMES + 2) * 0x80];	/* test_fake_depth_limit()'s frames */

static long read_fake(void *arg, void *dst, __u32 n, __u64 addr)
{
	(void)arg;
	if (addr < FAKE || addr + n > FAKE + sizeof(mem))
		return -EFAULT;
	memcpy(dst, mem + (addr - FAKE), n);
	return 0;
}

static void put64(__u64 at, __u64 v)
{
	memcpy(mem + (at - FAKE), &v, 8);
}

static void fake_walk(struct st_py_walk *w, struct st_py_proc *p, struct st_py_scratch *s,
		      __u16 version)
{
	memset(p, 0, sizeof(*p));
	p->l = *st_py_layout__find(version);
	p->runtime = FAKE;
	w->p = p;
	w->s = s;
	w->read = read_fake;
	w->tid = 42;
	/* runtime (interpreters.head within the first 0x100 bytes) -> interp
	 * at +0x100 -> tstate at +0x200 (tid 42) -> cframe +0x400 -> frame
	 * +0x500 (3.13: tstate -> frame); 3.13's threads.head is at 7344,
	 * outside mem: the thread state is given, not searched */
	if (p->l.runtime_interp_head < 0x100 && p->l.interp_threads_head < 0x100) {
		put64(FAKE + p->l.runtime_interp_head, FAKE + 0x100);
		put64(FAKE + 0x100 + p->l.interp_threads_head, FAKE + 0x200);
	}
	put64(FAKE + 0x200 + p->l.tstate_native_tid, 42);
	if (p->l.cframe_current_frame != ST_PY_NO_OFF) {
		put64(FAKE + 0x200 + p->l.tstate_cframe, FAKE + 0x400);
		put64(FAKE + 0x400 + p->l.cframe_current_frame, FAKE + 0x500);
	} else {
		put64(FAKE + 0x200 + p->l.tstate_cframe, FAKE + 0x500);
	}
}

static void test_fake_loop_is_bounded(void **state)
{
	struct st_py_scratch s = {};
	struct st_py_proc p;
	struct st_py_walk w = {};
	__u64 ts;

	(void)state;
	memset(mem, 0, sizeof(mem));
	fake_walk(&w, &p, &s, 0x030b);
	/* two frames pointing at each other, code objects at +0x800 */
	put64(FAKE + 0x500 + p.l.frame_code, FAKE + 0x800);
	put64(FAKE + 0x500 + p.l.frame_previous, FAKE + 0x600);
	put64(FAKE + 0x600 + p.l.frame_code, FAKE + 0x800);
	put64(FAKE + 0x600 + p.l.frame_previous, FAKE + 0x500);
	ts = st_py_find_tstate(&w);
	assert_int_equal(ts, FAKE + 0x200);
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.n, ST_PY_MAX_FRAMES);
	assert_int_equal(s.stop, ST_PY_STAT_TRUNCATED);
	/* a self loop is an absurd value */
	put64(FAKE + 0x600 + p.l.frame_previous, FAKE + 0x600);
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.stop, ST_PY_STAT_BAD_VALUE);
	/* a kernel pointer, an unreadable one */
	put64(FAKE + 0x500 + p.l.frame_previous, 0xffff888000000000ULL);
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.stop, ST_PY_STAT_BAD_VALUE);
	put64(FAKE + 0x500 + p.l.frame_previous, 0x20000000ULL);
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.stop, ST_PY_STAT_READ_FAULT);
	/* a wrong code type (a fake _PyRuntime in a non-Python binary) */
	p.code_type = 0x12345678;
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.n, 0);
	assert_int_equal(s.stop, ST_PY_STAT_BAD_VALUE);
	/* a thread list that loops without our thread */
	put64(FAKE + 0x200 + p.l.tstate_native_tid, 7);
	put64(FAKE + 0x200 + p.l.tstate_next, FAKE + 0x300);
	put64(FAKE + 0x300 + p.l.tstate_next, FAKE + 0x200);
	assert_int_equal(st_py_find_tstate(&w), 0);
	assert_int_equal(w.stop, ST_PY_STAT_NO_THREAD);
}

/* A stack of exactly ST_PY_MAX_FRAMES frames is whole; one more is cut
 * (and counted so), whatever the loop's steps per frame. */
static void test_fake_depth_limit(void **state)
{
	struct st_py_scratch s = {};
	struct st_py_proc p;
	struct st_py_walk w = {};
	__u64 ts;

	(void)state;
	for (int extra = 0; extra < 2; extra++) {
		int frames = ST_PY_MAX_FRAMES + extra;

		memset(mem, 0, sizeof(mem));
		fake_walk(&w, &p, &s, 0x030b);
		put64(FAKE + 0x500 + p.l.frame_code, FAKE + 0x800);
		put64(FAKE + 0x500 + p.l.frame_previous, FAKE + 0x1000);
		for (int k = 1; k < frames; k++) {
			__u64 f = FAKE + 0x1000 + (__u64)(k - 1) * 0x80;

			put64(f + p.l.frame_code, FAKE + 0x800);
			put64(f + p.l.frame_previous, k + 1 < frames ? f + 0x80 : 0);
		}
		ts = st_py_find_tstate(&w);
		st_py_walk_frames(&w, ts);
		assert_int_equal(s.n, ST_PY_MAX_FRAMES);
		assert_int_equal(s.stop, extra ? ST_PY_STAT_TRUNCATED : ST_PY_STAT__MAX);
		/* no memo: every frame's generation is left to py_codes, past
		 * the 64 a word holds too */
		assert_true(s.any_unknown);
		for (__u32 k = 0; k < ST_PY_MAX_FRAMES; k++)
			assert_true(st_py_unknown_is(&s, k));
	}
	/* the next walk starts with none */
	put64(FAKE + 0x500 + p.l.frame_previous, 0);
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.n, 1);
	assert_true(st_py_unknown_is(&s, 0) && !st_py_unknown_is(&s, 1) &&
		    !st_py_unknown_is(&s, ST_PY_MAX_FRAMES - 1));
}

/* 3.12+: the C-stack shim frames (owner 3) under each evaluation call's
 * run are not Python frames; each ends the run walked before it. */
static void shim_frames(__u16 version)
{
	struct st_py_scratch s = {};
	struct st_py_proc p;
	struct st_py_walk w = {};
	__u64 ts;

	memset(mem, 0, sizeof(mem));
	fake_walk(&w, &p, &s, version);
	/* leaf +0x500 -> f +0x580 -> shim +0x600 -> g +0x680 -> shim +0x700 -> 0;
	 * a shim's f_code is the interpreter's trampoline code object */
	put64(FAKE + 0x500 + p.l.frame_code, FAKE + 0x800);
	put64(FAKE + 0x500 + p.l.frame_previous, FAKE + 0x580);
	put64(FAKE + 0x580 + p.l.frame_code, FAKE + 0x900);
	put64(FAKE + 0x580 + p.l.frame_previous, FAKE + 0x600);
	put64(FAKE + 0x600 + p.l.frame_code, FAKE + 0xa00);
	put64(FAKE + 0x600 + p.l.frame_previous, FAKE + 0x680);
	mem[0x600 + p.l.frame_owner] = 3;
	put64(FAKE + 0x680 + p.l.frame_code, FAKE + 0x900);
	put64(FAKE + 0x680 + p.l.frame_previous, FAKE + 0x700);
	put64(FAKE + 0x700 + p.l.frame_code, FAKE + 0xa00);
	mem[0x700 + p.l.frame_owner] = 3;
	ts = FAKE + 0x200;
	if (p.l.interp_threads_head < 0x100)
		assert_int_equal(st_py_find_tstate(&w), ts);
	assert_true(st_py_tstate_is(&w, ts));
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.stop, ST_PY_STAT__MAX);
	assert_int_equal(s.n, 3);
	assert_int_equal(ST_PY_CODE(s.addr[0]), FAKE + 0x800);
	assert_int_equal(ST_PY_CODE(s.addr[1]), FAKE + 0x900);
	assert_int_equal(ST_PY_CODE(s.addr[2]), FAKE + 0x900);
	assert_int_equal(s.ends[0], 0);
	assert_int_equal(s.ends[1], 1);
	assert_int_equal(s.ends[2], 1);
	/* an owner of another kind (a generator's frame, 1) is a Python frame */
	mem[0x600 + p.l.frame_owner] = 1;
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.ends[1], 0);
	assert_int_equal(s.ends[3], 1);
}

static void test_fake_312_shim_frames(void **state)
{
	(void)state;
	shim_frames(0x030c);
}

/* 3.13: the same chain from the thread state's own current_frame */
static void test_fake_313_shim_frames(void **state)
{
	(void)state;
	shim_frames(0x030d);
}

/* 3.10: PyFrameObjects by f_back, the index from f_lasti (-1: not
 * started, index 0), every frame the end of its evaluation call's run;
 * the thread found by its pthread_self() value (the fs base BPF reads). */
static void test_fake_310_frames(void **state)
{
	struct st_py_scratch s = {};
	struct st_py_proc p;
	struct st_py_walk w = {};
	__s32 lasti[2] = { 7, -1 };
	__u64 ts;

	(void)state;
	memset(mem, 0, sizeof(mem));
	fake_walk(&w, &p, &s, 0x030a);
	assert_true(p.l.tstate_pthread);
	w.tid = 0x7f0000001000ULL;	/* a thread pointer, not a tid */
	put64(FAKE + 0x200 + p.l.tstate_native_tid, w.tid);
	put64(FAKE + 0x500 + p.l.frame_code, FAKE + 0x800);
	put64(FAKE + 0x500 + p.l.frame_previous, FAKE + 0x600);
	memcpy(mem + 0x500 + p.l.frame_lasti, &lasti[0], 4);
	put64(FAKE + 0x600 + p.l.frame_code, FAKE + 0x900);
	memcpy(mem + 0x600 + p.l.frame_lasti, &lasti[1], 4);
	ts = st_py_find_tstate(&w);
	assert_int_equal(ts, FAKE + 0x200);
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.stop, ST_PY_STAT__MAX);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.addr[0], ST_PY_ADDR(FAKE + 0x800, 7));
	assert_int_equal(s.addr[1], ST_PY_ADDR(FAKE + 0x900, 0));
	assert_int_equal(s.ends[0], 1);
	assert_int_equal(s.ends[1], 1);
	/* a native tid is not its thread id */
	w.tid = 42;
	assert_int_equal(st_py_find_tstate(&w), 0);
}

/* Reads counted (read_counted(): read_fake() and one more). */
static long read_counted(void *arg, void *dst, __u32 n, __u64 addr)
{
	++*(int *)arg;
	return read_fake(NULL, dst, n, addr);
}

/* 3.11+: frames are stacked on one data stack, a caller below its callee:
 * one read holds a frame and the few below it (never past the start of
 * its page, which may be the first mapped); 3.10's PyFrameObjects are
 * read one by one. A cached thread state's native_thread_id and cframe
 * are one read. */
static void test_fake_frames_read_by_window(void **state)
{
	static const __u64 at[] = { 0x900, 0x880, 0x800, 0x780, 0x700, 0x680 };
	struct st_py_scratch s = {};
	struct st_py_proc p;
	struct st_py_walk w = {};
	int reads = 0;
	__u64 ts;

	(void)state;
	memset(mem, 0, sizeof(mem));
	fake_walk(&w, &p, &s, 0x030b);
	w.read = read_counted;
	w.read_arg = &reads;
	put64(FAKE + 0x400 + p.l.cframe_current_frame, FAKE + at[0]);
	for (unsigned i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		put64(FAKE + at[i] + p.l.frame_code, FAKE + 0xc00 + 0x10 * i);
		put64(FAKE + at[i] + p.l.frame_previous,
		      i + 1 < sizeof(at) / sizeof(at[0]) ? FAKE + at[i + 1] : 0);
	}
	ts = st_py_find_tstate(&w);
	assert_int_equal(ts, FAKE + 0x200);
	reads = 0;
	assert_true(st_py_tstate_is(&w, ts));
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.stop, ST_PY_STAT__MAX);
	assert_int_equal(s.n, 6);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(ST_PY_CODE(s.addr[i]), FAKE + 0xc00 + 0x10 * i);
	/* the thread state, the cframe's current_frame, one window */
	assert_int_equal(reads, 3);
	/* a leaf 0x100 bytes into its page: the window starts at the page
	 * (a read from below it fails here, as an unmapped page would) */
	put64(FAKE + 0x400 + p.l.cframe_current_frame, FAKE + 0x100);
	put64(FAKE + 0x100 + p.l.frame_code, FAKE + 0xc00);
	put64(FAKE + 0x100 + p.l.frame_previous, FAKE + 0x80);
	put64(FAKE + 0x80 + p.l.frame_code, FAKE + 0xc10);
	put64(FAKE + 0x80 + p.l.frame_previous, 0);
	reads = 0;
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.stop, ST_PY_STAT__MAX);
	assert_int_equal(s.n, 2);
	assert_int_equal(reads, 2);	/* current_frame (cframe kept), one window */
}

/* The CPU's memo of reported code objects: a hit gives the generation
 * py_codes gave (no lookup), for that process, image and identity only. */
static void test_code_memo(void **state)
{
	static struct st_py_memos ms;
	struct st_py_scratch s = {};
	struct st_py_code_seen seen = { .ident = 0xabc, .gen = 3 };
	const struct st_py_memo *m;
	struct st_py_proc p;
	struct st_py_walk w = {};
	__u64 ts, same[3], c;
	int k = 0;

	(void)state;
	memset(&ms, 0, sizeof(ms));
	assert_null(st_py_memo_get(&ms, 7, 1, 0x5000, 0xabc, 0));
	st_py_memo_put(&ms, 7, 1, 0x5000, &seen, 0);
	m = st_py_memo_get(&ms, 7, 1, 0x5000, 0xabc, 0);
	assert_non_null(m);
	assert_int_equal(m->gen1, 4);	/* generation 3 */
	assert_null(st_py_memo_get(&ms, 7, 1, 0x5000, 0xabd, 0));	/* another object */
	assert_null(st_py_memo_get(&ms, 8, 1, 0x5000, 0xabc, 0));	/* another process */
	assert_null(st_py_memo_get(&ms, 7, 2, 0x5000, 0xabc, 0));	/* another image */
	seen.ident = 0xabd;	/* the address's next object takes its entry */
	seen.gen = 4;
	st_py_memo_put(&ms, 7, 1, 0x5000, &seen, 0);
	assert_null(st_py_memo_get(&ms, 7, 1, 0x5000, 0xabc, 0));
	assert_non_null(st_py_memo_get(&ms, 7, 1, 0x5000, 0xabd, 0));
	/* an address reused since (the epoch moved): not a hit, though the
	 * identity is the same (a later object whose owned objects came back
	 * at the same addresses); filled again in the new epoch, it is */
	assert_null(st_py_memo_get(&ms, 7, 1, 0x5000, 0xabd, 1));
	st_py_memo_put(&ms, 7, 1, 0x5000, &seen, 1);
	assert_non_null(st_py_memo_get(&ms, 7, 1, 0x5000, 0xabd, 1));
	st_py_memo_put(&ms, 7, 1, 0x5000, &seen, 0);

	/* two ways: three objects of one set, the third pushes the oldest out */
	for (c = 0x10000; k < 3; c += 16)
		if (st_py_memo_set(9, c) == st_py_memo_set(9, 0x10000))
			same[k++] = c;
	for (k = 0; k < 3; k++) {
		seen.ident = same[k];
		st_py_memo_put(&ms, 9, 1, same[k], &seen, 0);
		if (k == 1) {
			assert_non_null(st_py_memo_get(&ms, 9, 1, same[0], same[0], 0));
			assert_non_null(st_py_memo_get(&ms, 9, 1, same[1], same[1], 0));
		}
	}
	assert_null(st_py_memo_get(&ms, 9, 1, same[0], same[0], 0));
	assert_non_null(st_py_memo_get(&ms, 9, 1, same[1], same[1], 0));
	assert_non_null(st_py_memo_get(&ms, 9, 1, same[2], same[2], 0));

	/* the walk: a frame whose object the memo has gets its generation,
	 * and its index the first unit of its line's run; the others are
	 * left to py_codes (s.unknown) */
	memset(mem, 0, sizeof(mem));
	fake_walk(&w, &p, &s, 0x030b);
	w.tgid = 7;
	w.image = 1;
	w.memos = &ms;
	put64(FAKE + 0x500 + p.l.frame_code, FAKE + 0x800);
	put64(FAKE + 0x500 + p.l.frame_previous, FAKE + 0x600);
	put64(FAKE + 0x600 + p.l.frame_code, FAKE + 0x900);
	put64(FAKE + 0x600 + p.l.frame_prev_instr, FAKE + 0x900 + p.l.code_adaptive + 2 * 6);
	seen = (struct st_py_code_seen){ .ident = 0, .gen = 5, .cover = 8 };	/* ident 0: code_type unknown */
	seen.runs.starts[0] = 1 | 1 << 4;	/* runs: units 0-3, 4-7 */
	st_py_memo_put(&ms, 7, 1, FAKE + 0x900, &seen, 0);
	ts = st_py_find_tstate(&w);
	st_py_walk_frames(&w, ts);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.addr[0], ST_PY_ADDR(FAKE + 0x800, 0));
	assert_int_equal(s.addr[1], ST_PY_ADDR(FAKE + 0x900, 4) | 5ULL << 16);
	assert_int_equal(s.unknown[0], 1);
}

static void test_merge(void **state)
{
	struct st_py_scratch s = {};
	struct st_py_proc p = { .eval_start = 0x1000, .eval_end = 0x2000 };
	/* leaf first: zlib (0x9000), eval (run A), PyObject_Call (0x3000),
	 * eval (run B), Py_RunMain (0x4000), main (0x5000) */
	__u64 f[ST_PY_MAX_FRAMES * 2] = { 0x9000, 0x1100, 0x3000, 0x1200, 0x4000, 0x5000 };
	__u64 want[] = { 0x9000, 1 | ST_PY_TAG, 2 | ST_PY_TAG, 0x3000, 3 | ST_PY_TAG,
			 4 | ST_PY_TAG, 5 | ST_PY_TAG, 0x4000, 0x5000 };
	bool cut, unmatched;
	__u32 n;

	(void)state;
	s.n = 5;
	for (int i = 0; i < 5; i++)
		s.addr[i] = (__u64)i + 1;
	s.ends[1] = 1;	/* run A: frames 1, 2; run B: 3, 4, 5 */
	s.ends[4] = 1;
	n = st_py_merge(&s, &p, f, 6, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(n, 9);
	assert_false(cut);
	assert_false(unmatched);
	for (__u32 i = 0; i < n; i++)
		assert_int_equal(f[i], want[i]);
	/* an evaluation frame with no Python frame left stays native */
	__u64 g[ST_PY_MAX_FRAMES * 2] = { 0x1100, 0x1200 };

	s.n = 1;
	s.ends[0] = 1;
	n = st_py_merge(&s, &p, g, 2, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(n, 2);
	assert_int_equal(g[0], 1 | ST_PY_TAG);
	assert_int_equal(g[1], 0x1200);
	assert_true(unmatched);
	/* cut at max */
	__u64 h[ST_PY_MAX_FRAMES * 2] = { 0x1100, 0x4000, 0x5000 };

	s.n = 3;
	memset(s.ends, 0, sizeof(s.ends));
	s.ends[2] = 1;
	n = st_py_merge(&s, &p, h, 3, 4, &cut, &unmatched);
	assert_int_equal(n, 4);
	assert_true(cut);
	/* a frame in the function's cold part is an evaluation frame too */
	__u64 k[ST_PY_MAX_FRAMES * 2] = { 0x7050, 0x5000 };

	p.cold_start = 0x7000;
	p.cold_end = 0x7100;
	n = st_py_merge(&s, &p, k, 2, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(n, 4);
	assert_int_equal(k[0], 1 | ST_PY_TAG);
	assert_int_equal(k[2], 3 | ST_PY_TAG);
	assert_int_equal(k[3], 0x5000);
}

/* 3.10 (text range set): each Python frame is its own run, and the
 * interpreter's frames between two runs (the call from one into the next)
 * are dropped; C code of its own between them (an extension calling back)
 * keeps them all; those before the first run (zlib, time.sleep's C) and
 * after the last (Py_RunMain, main) stay. */
/* A sample inside an evaluation call that has not made its frame current
 * yet (a generator resumed from C: sum() -> gen_send_ex2 -> eval): one
 * evaluation frame more than runs, at the leaf. A whole Python stack pairs
 * from the root, that leaf evaluation frame left native; a stack cut at its
 * root (the walk stopped) still pairs from the leaf. */
static void test_merge_eval_not_started(void **state)
{
	struct st_py_scratch s = {};
	struct st_py_proc p = { .eval_start = 0x1000, .eval_end = 0x2000 };
	/* leaf first: eval (the generator's, starting), gen_send_ex2 (0x3000),
	 * eval (<module> ... total), Py_RunMain (0x4000) */
	__u64 f[ST_PY_MAX_FRAMES * 2] = { 0x1300, 0x3000, 0x1100, 0x4000 };
	__u64 whole[] = { 0x1300, 0x3000, 1 | ST_PY_TAG, 2 | ST_PY_TAG, 3 | ST_PY_TAG, 0x4000 };
	__u64 stopped[] = { 1 | ST_PY_TAG, 2 | ST_PY_TAG, 3 | ST_PY_TAG, 0x3000, 0x1100, 0x4000 };
	bool cut, unmatched;
	__u32 n;

	(void)state;
	for (int round = 0; round < 2; round++) {
		__u64 g[ST_PY_MAX_FRAMES * 2];
		const __u64 *want = round ? stopped : whole;

		memcpy(g, f, sizeof(g));
		s.n = 3;
		for (int i = 0; i < 3; i++)
			s.addr[i] = (__u64)i + 1;
		memset(s.ends, 0, sizeof(s.ends));
		s.ends[2] = 1;
		s.stop = round ? ST_PY_STAT_READ_FAULT : ST_PY_STAT__MAX;
		n = st_py_merge(&s, &p, g, 4, ST_MAX_USER, &cut, &unmatched);
		assert_int_equal(n, 6);
		assert_false(cut);
		assert_true(unmatched);
		for (__u32 i = 0; i < n; i++)
			assert_int_equal(g[i], want[i]);
	}
	/* as many runs as evaluation frames: paired from the leaf as ever */
	__u64 h[ST_PY_MAX_FRAMES * 2] = { 0x1300, 0x3000, 0x1100, 0x4000 };

	s.n = 2;
	memset(s.ends, 0, sizeof(s.ends));
	s.ends[0] = s.ends[1] = 1;
	s.stop = ST_PY_STAT__MAX;
	n = st_py_merge(&s, &p, h, 4, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(n, 4);
	assert_false(unmatched);
	assert_int_equal(h[0], 1 | ST_PY_TAG);
	assert_int_equal(h[2], 2 | ST_PY_TAG);
	/* two leaf evaluation calls not running their frames yet, two runs:
	 * the runs pair with the two at the root (the merge's second pass) */
	__u64 k[ST_PY_MAX_FRAMES * 2] = { 0x1300, 0x1400, 0x3000, 0x1100, 0x1200, 0x4000 };
	__u64 paired[] = { 0x1300, 0x1400, 0x3000, 1 | ST_PY_TAG, 2 | ST_PY_TAG, 0x4000 };

	n = st_py_merge(&s, &p, k, 6, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(n, 6);
	assert_true(unmatched);
	for (__u32 i = 0; i < n; i++)
		assert_int_equal(k[i], paired[i]);
	/* ... and with room for five frames: cut at the root, leaf kept */
	__u64 c5[ST_PY_MAX_FRAMES * 2] = { 0x1300, 0x1400, 0x3000, 0x1100, 0x1200, 0x4000 };

	n = st_py_merge(&s, &p, c5, 6, 5, &cut, &unmatched);
	assert_int_equal(n, 5);
	assert_true(cut);
	assert_int_equal(c5[0], 0x1300);
	assert_int_equal(c5[4], 2 | ST_PY_TAG);
}

static void test_merge_310_drops_the_call_plumbing(void **state)
{
	struct st_py_scratch s = {};
	struct st_py_proc p = { .eval_start = 0x1000, .eval_end = 0x2000,
				.text_start = 0x1000, .text_end = 0x4800 };
	/* leaf first: sleep's C (0x3500, interpreter), eval (fib), plumbing
	 * 0x3000 0x3100, eval (fib), plumbing 0x3200, ext 0x9000, 0x3300, eval
	 * (<module>), Py_RunMain 0x4000, main 0x5000 */
	__u64 f[ST_PY_MAX_FRAMES * 2] = { 0x3500, 0x1100, 0x3000, 0x3100, 0x1200, 0x3200,
					  0x9000, 0x3300, 0x1300, 0x4000, 0x5000 };
	__u64 want[] = { 0x3500, 1 | ST_PY_TAG, 2 | ST_PY_TAG, 0x3200, 0x9000, 0x3300,
			 3 | ST_PY_TAG, 0x4000, 0x5000 };
	bool cut, unmatched;
	__u32 n;

	(void)state;
	s.n = 3;
	for (int i = 0; i < 3; i++) {
		s.addr[i] = (__u64)i + 1;
		s.ends[i] = 1;
	}
	n = st_py_merge(&s, &p, f, 11, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	assert_false(cut);
	assert_false(unmatched);
	for (__u32 i = 0; i < n; i++)
		assert_int_equal(f[i], want[i]);
	/* without the range (3.11+) every native frame stays */
	__u64 g[ST_PY_MAX_FRAMES * 2] = { 0x1100, 0x3000, 0x1200, 0x4000 };

	p.text_start = p.text_end = 0;
	s.n = 2;
	n = st_py_merge(&s, &p, g, 4, ST_MAX_USER, &cut, &unmatched);
	assert_int_equal(n, 4);
	assert_int_equal(g[1], 0x3000);
}

/* A code address's generations (bpf/python.bpf.h's report step): a new
 * object at the address is reported with the next generation and keyed by
 * it; the same object again is not reported; 16 generations wrap; an
 * object not 16-byte aligned keeps its address as its key. */
static void test_code_generations(void **state)
{
	struct st_py_code_seen seen = {};
	__u64 a = ST_PY_ADDR(0x7f0000001230ULL, 7);
	__u32 gen = 99;

	(void)state;
	assert_true(st_py_code_gen(NULL, 0xabc, &gen));
	assert_int_equal(gen, 0);
	seen.ident = 0xabc;
	seen.gen = gen;
	assert_false(st_py_code_gen(&seen, 0xabc, &gen));
	assert_int_equal(gen, 0);
	assert_int_equal(st_py_addr_gen(a, gen), a);
	/* freed, the address reused: generation 1, another key, same index */
	assert_true(st_py_code_gen(&seen, 0xdef, &gen));
	assert_int_equal(gen, 1);
	assert_int_equal(ST_PY_CODE(st_py_addr_gen(a, gen)), 0x7f0000001231ULL);
	assert_int_equal(ST_PY_INDEX(st_py_addr_gen(a, gen)), 7);
	seen.gen = ST_PY_GENS - 1;
	assert_true(st_py_code_gen(&seen, 0x123, &gen));
	assert_int_equal(gen, 0);
	/* unaligned: no generation in the key */
	a = ST_PY_ADDR(0x7f0000001238ULL, 7);
	assert_int_equal(st_py_addr_gen(a, 5), a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_debian_static),
		cmocka_unit_test(test_live_pyenv_libpython),
		cmocka_unit_test(test_live_pyenv_310),
		cmocka_unit_test(test_fake_310_frames),
		cmocka_unit_test(test_live_pyenv_312),
		cmocka_unit_test(test_live_pyenv_313),
		cmocka_unit_test(test_fake_loop_is_bounded),
		cmocka_unit_test(test_fake_312_shim_frames),
		cmocka_unit_test(test_fake_313_shim_frames),
		cmocka_unit_test(test_fake_frames_read_by_window),
		cmocka_unit_test(test_code_memo),
		cmocka_unit_test(test_fake_depth_limit),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_eval_not_started),
		cmocka_unit_test(test_merge_310_drops_the_call_plumbing),
		cmocka_unit_test(test_code_generations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

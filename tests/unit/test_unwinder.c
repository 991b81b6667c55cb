/* test_unwinder.c - the per-process bookkeeping of DWARF unwinding
 * (user/collect/unwind/unwinder.c) without a BPF program: the start-up preloads
 * and the empty table, a live child's table read from its /proc maps
 * (mappings, rows of a fixture library, the loader's text, the image; not
 * pushed again unchanged; not pushed across an exec), the chunked table of
 * a child with 300 more mappings (index, chunks, truncation when a chunk
 * finds no room), st_unwinder__forget (table, chunks and references
 * dropped, rows released by the next sweep), and st_unwinder__walk of a
 * deferred sample taken in this process, walked with the child's table
 * (a fork: the same code at the same addresses) to the return addresses
 * the compiler recorded; samples of other images wait or are forced; a
 * child that exited (a zombie reads no maps) walked with the mappings BPF
 * kept at its end (st_unwinder__update_ended()).
 *
 * Link seams: this file defines the session functions the unwinder calls
 * (user/collect/session.h: the kernel's maps are arrays here, which the
 * test reads), and the rows store is tests/unit/fake_ustore.h (in memory):
 * no root, no BPF object. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "tests/unit/fake_ustore.h"
#include "tests/unit/fixtures/fx_util.h"
#include "user/collect/procmaps.h"
#include "user/collect/session.h"
#include "user/collect/unwind/unwind_native.h"
#include "user/collect/unwind/unwind_tables.h"
#include "user/collect/unwind/unwinder.h"

#define PAGE 4096ul
#define NCHUNK_SLOTS 128

/* ---- the session seams ------------------------------------------------- */

static struct fake_sess {
	__u32 mode;
	int image_ret;			/* st_session__proc_image()'s return, */
	__u32 image;			/* ... and image */
	__u32 fail_chunk_from;		/* chunk numbers from this one: -ENOSPC (0: none) */
	__u32 pid;			/* the one process whose table is kept: */
	struct st_unwind_proc tab;	/* its table as last set, */
	bool has_tab;
	unsigned sets, dels;
	struct {
		__u32 key;
		bool live;
		struct st_unwind_proc tab;
	} chunks[NCHUNK_SLOTS];		/* chunks as set (live: not deleted) */
	struct st_unwind_proc empty;	/* the table at key 0 */
	bool has_empty;
} fs;

static struct st_session *sess = (struct st_session *)&fs;

__u32 st_session__unwind_mode(const struct st_session *s)
{
	(void)s;
	return fs.mode;
}

int st_session__unwind_shards_fd(struct st_session *s, __u32 *slots)
{
	(void)s;
	*slots = 64;
	return 1000;	/* not used by the fake store */
}

int st_session__unwind_proc_pids(struct st_session *s, __u32 *pids, size_t cap, size_t *n)
{
	(void)s;
	(void)pids;
	(void)cap;
	*n = 0;
	return 0;
}

int st_session__unwind_set_proc(struct st_session *s, __u32 pid, const struct st_unwind_proc *p)
{
	(void)s;
	fs.sets++;
	if (pid & 0x80000000u) {	/* a chunk */
		size_t i, free_i = NCHUNK_SLOTS;

		if (fs.fail_chunk_from && (pid & 63) >= fs.fail_chunk_from)
			return -ENOSPC;
		for (i = 0; i < NCHUNK_SLOTS; i++) {
			if (fs.chunks[i].live && fs.chunks[i].key == pid)
				break;
			if (!fs.chunks[i].live && free_i == NCHUNK_SLOTS)
				free_i = i;
		}
		if (i == NCHUNK_SLOTS)
			i = free_i;
		assert_true(i < NCHUNK_SLOTS);
		fs.chunks[i].key = pid;
		fs.chunks[i].live = true;
		fs.chunks[i].tab = *p;
	} else if (pid == 0) {
		fs.empty = *p;
		fs.has_empty = true;
	} else if (pid == fs.pid) {
		fs.tab = *p;
		fs.has_tab = true;
	}
	return 0;
}

int st_session__unwind_del_proc(struct st_session *s, __u32 pid)
{
	(void)s;
	fs.dels++;
	if (pid == fs.pid)
		fs.has_tab = false;
	for (size_t i = 0; i < NCHUNK_SLOTS; i++)
		if (fs.chunks[i].live && fs.chunks[i].key == pid)
			fs.chunks[i].live = false;
	return 0;
}

int st_session__proc_image(struct st_session *s, __u32 pid, __u32 *image)
{
	(void)s;
	(void)pid;
	*image = fs.image;
	return fs.image_ret;
}

/* The live chunk at key, or NULL. */
static const struct st_unwind_proc *chunk_at(__u32 key)
{
	for (size_t i = 0; i < NCHUNK_SLOTS; i++)
		if (fs.chunks[i].live && fs.chunks[i].key == key)
			return &fs.chunks[i].tab;
	return NULL;
}

static size_t live_chunks(void)
{
	size_t n = 0;

	for (size_t i = 0; i < NCHUNK_SLOTS; i++)
		n += fs.chunks[i].live;
	return n;
}

/* ---- a child with known mappings ------------------------------------------ */

static pid_t child = -1;
static struct st_unwinder *u;

/* Fork a child that maps libfx.so as the loader does (its first page
 * read-only at R, its text page executable at R + 0x1000), then `extra`
 * more executable mappings of the text page with gaps between, then waits.
 * *r gets R. */
static pid_t spawn(size_t extra, __u64 *r)
{
	char path[PATH_MAX], c;
	int p[2], fd;
	void *at = mmap(NULL, (4 + 2 * extra) * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t pid;

	assert_true(at != MAP_FAILED);
	*r = (__u64)(uintptr_t)at;
	fx_path(path, sizeof(path), "libfx.so");
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *b = at;
		bool ok = mmap(b, PAGE, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) != MAP_FAILED &&
			  mmap(b + PAGE, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd,
			       0x1000) != MAP_FAILED;

		for (size_t i = 0; ok && i < extra; i++)
			ok = mmap(b + (4 + 2 * i) * PAGE, PAGE, PROT_READ | PROT_EXEC,
				  MAP_PRIVATE | MAP_FIXED, fd, 0x1000) != MAP_FAILED;
		c = ok ? 'y' : 'n';
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fd);
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	assert_int_equal(c, 'y');
	munmap(at, (4 + 2 * extra) * PAGE);
	child = pid;
	fs.pid = (__u32)pid;
	return pid;
}

struct want {
	__u64 start[ST_UNWIND_MAX_PROC_MAPS];
	__u32 len[ST_UNWIND_MAX_PROC_MAPS];
	size_t n, files;	/* mappings; distinct files and the vDSO among them */
	__u64 ld_text;		/* the loader's executable mapping */
};

/* The mappings the unwinder puts in pid's table, read here from its maps
 * (executable file mappings and [vdso]; no anonymous ones in these
 * children). */
static void want_of(pid_t pid, struct want *w)
{
	char path[64], line[1024];
	__u64 seen_dev[256], seen_ino[256];
	size_t nseen = 0;
	struct st_maps_line l;
	FILE *f;

	memset(w, 0, sizeof(*w));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		bool seen = false;

		if (st_procmaps__parse_line(line, &l) || !l.executable)
			continue;
		assert_non_null(l.path);	/* no JIT code here */
		if (l.path[0] != '/' && strcmp(l.path, "[vdso]"))
			continue;
		if (strstr(l.path, "/ld-linux") && !w->ld_text)
			w->ld_text = l.start;
		w->start[w->n] = l.start;
		w->len[w->n] = (__u32)(l.end - l.start);
		w->n++;
		for (size_t i = 0; i < nseen; i++)
			seen = seen || (seen_dev[i] == l.dev && seen_ino[i] == l.ino);
		if (!seen && nseen < 256) {
			seen_dev[nseen] = l.dev;
			seen_ino[nseen++] = l.ino;
		}
	}
	fclose(f);
	w->files = nseen;
}

static int setup(void **state)
{
	/* every module compiled within its update, however slow the build
	 * (the sanitized one left modules pending past the 40 ms budget and
	 * failed: 7 of 16 compiled again, a mapping without rows) */
	struct st_unwinder_opts o = { .budget_bytes = 64 << 20, .compile_s = 1000 };

	(void)state;
	memset(&fs, 0, sizeof(fs));
	fs.mode = ST_UNWIND_DWARF;
	fs.image = 7;
	u = st_unwinder__new(sess, &o);
	return u ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	st_unwinder__free(u);
	u = NULL;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	child = -1;
	return 0;
}

static void stats(struct st_unwinder_stats *st)
{
	memset(st, 0, sizeof(*st));
	st_unwinder__stats(u, st);
}

/* ---- tests ----------------------------------------------------------------- */

static void test_start_up(void **state)
{
	struct st_unwinder_stats st;

	(void)state;
	/* the empty table at key 0; libc, the loader and the vDSO compiled */
	assert_true(fs.has_empty);
	assert_int_equal(fs.empty.nmaps, 0);
	stats(&st);
	assert_int_equal(st.loaded, 3);
	assert_int_equal(st.modules, 3);
	assert_int_equal(st.procs, 0);
	assert_int_equal(st.pushes, 0);
	assert_false(st_unwinder__pending(u));
	/* a command found in PATH, or not */
	assert_int_equal(st_unwinder__preload(u, "no-such-command-st"), -ENOENT);
	assert_int_equal(st_unwinder__preload(u, "/nonexistent/x"), -ENOENT);
}

static void test_table_of_a_child(void **state)
{
	static struct want w;
	struct st_unwind_table *t = NULL;
	struct st_unwinder_stats st;
	const struct st_unwind_map *fx = NULL;
	char path[PATH_MAX];
	size_t nrows = 0;
	pid_t pid;
	__u64 r;

	(void)state;
	fx_path(path, sizeof(path), "libfx.so");
	assert_int_equal(st_unwind_table__from_file(path, &t), 0);
	assert_non_null(st_unwind_table__rows(t, &nrows));
	st_unwind_table__free(t);
	pid = spawn(0, &r);
	/* inside an exec: not read */
	fs.image_ret = -EBUSY;
	assert_int_equal(st_unwinder__update(u, (__u32)pid), -EAGAIN);
	stats(&st);
	assert_int_equal(st.other_image, 1);
	assert_int_equal(st.pushes, 0);
	fs.image_ret = 0;
	assert_int_equal(st_unwinder__update(u, (__u32)pid), 0);
	want_of(pid, &w);
	assert_true(fs.has_tab);
	assert_true(w.n > 4 && w.n <= ST_UNWIND_MAX_MAPS);
	assert_int_equal(fs.tab.nmaps, w.n);
	assert_int_equal(fs.tab.image, 7);
	assert_int_equal(fs.tab.flags, 0);
	assert_true(fs.tab.gen > 0);
	assert_true(w.ld_text != 0);
	assert_int_equal(fs.tab.interp_start, w.ld_text);
	for (size_t i = 0; i < w.n; i++) {
		const struct st_unwind_map *mp = &fs.tab.maps[i];

		assert_int_equal(mp->start, w.start[i]);
		assert_int_equal(mp->len, w.len[i]);
		assert_int_equal(mp->flags, 0);
		assert_true(mp->nrows > 0);	/* every module here has CFI */
		if (mp->start == r + PAGE)
			fx = mp;
	}
	/* libfx.so's text, mapped by the child as the loader would */
	assert_non_null(fx);
	assert_int_equal(fx->vaddr, 0x1000);
	assert_int_equal(fx->nrows, nrows);
	assert_int_equal(fx->first, 0);
	stats(&st);
	assert_int_equal(st.procs, 1);
	assert_int_equal(st.pushes, 1);
	assert_int_equal(st.modules, w.files);	/* libc, ld and the vDSO among them */
	/* unchanged: not pushed again */
	assert_int_equal(st_unwinder__update(u, (__u32)pid), 0);
	stats(&st);
	assert_int_equal(st.pushes, 1);
	/* an image the kernel does not know: pushed as any image */
	fs.image_ret = -ENOENT;
	assert_int_equal(st_unwinder__update(u, (__u32)pid), 0);
	assert_int_equal(fs.tab.image, ST_UNWIND_ANY_IMAGE);
	stats(&st);
	assert_int_equal(st.pushes, 2);
	assert_int_equal(st.procs, 1);
	/* gone: -ENOENT */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	child = -1;
	assert_int_equal(st_unwinder__update(u, (__u32)pid), -ENOENT);
}

static void test_chunked_table_and_forget(void **state)
{
	static struct want w;
	struct st_unwinder_stats st;
	size_t k, nchunks, before;
	__u32 gen;
	pid_t pid;
	__u64 r;

	(void)state;
	pid = spawn(300, &r);
	assert_int_equal(st_unwinder__update(u, (__u32)pid), 0);
	want_of(pid, &w);
	assert_true(w.n > 300 + 4);
	nchunks = (w.n + ST_UNWIND_MAX_MAPS - 1) / ST_UNWIND_MAX_MAPS;
	assert_int_equal(nchunks, 2);
	/* the table: an index of the chunks */
	assert_int_equal(fs.tab.nmaps, nchunks);
	gen = fs.tab.gen;
	assert_int_equal(live_chunks(), nchunks);
	for (k = 0; k < nchunks; k++) {
		const struct st_unwind_proc *c = chunk_at(ST_UNWIND_CHUNK_KEY(gen, (__u32)k));
		size_t first = k * ST_UNWIND_MAX_MAPS;
		size_t cn = w.n - first < ST_UNWIND_MAX_MAPS ? w.n - first : ST_UNWIND_MAX_MAPS;

		assert_int_equal(fs.tab.maps[k].flags, ST_UNWIND_MAP_CHUNK);
		assert_int_equal(fs.tab.maps[k].shard, k);
		assert_int_equal(fs.tab.maps[k].start, w.start[first]);
		assert_non_null(c);
		assert_int_equal(c->nmaps, cn);
		for (size_t i = 0; i < cn; i++) {
			assert_int_equal(c->maps[i].start, w.start[first + i]);
			assert_int_equal(c->maps[i].len, w.len[first + i]);
			assert_true(c->maps[i].nrows > 0);
		}
	}
	stats(&st);
	assert_int_equal(st.too_many_maps, 0);
	/* a new version whose second chunk finds no room: truncated before it,
	 * the old version's chunks deleted */
	fs.image = 8;
	fs.fail_chunk_from = 1;
	assert_int_equal(st_unwinder__update(u, (__u32)pid), 0);
	assert_true(fs.tab.gen != gen);
	gen = fs.tab.gen;
	assert_int_equal(fs.tab.nmaps, 1);
	assert_int_equal(fs.tab.flags, ST_UNWIND_PROC_TRUNCATED);
	assert_int_equal(live_chunks(), 1);
	assert_non_null(chunk_at(ST_UNWIND_CHUNK_KEY(gen, 0)));
	stats(&st);
	assert_int_equal(st.too_many_maps, 1);
	assert_int_equal(st.pushes, 2);
	/* forgotten: its table and chunks out of the kernel, its modules
	 * unreferenced and released by the next sweep (the child lives on) */
	stats(&st);
	before = st.released;
	assert_int_equal(before, 0);
	st_unwinder__forget(u, (__u32)pid);
	assert_false(fs.has_tab);
	assert_int_equal(live_chunks(), 0);
	st_unwinder__forget(u, (__u32)pid);	/* once */
	st_unwinder__sweep(u);
	stats(&st);
	assert_int_equal(st.released, w.files);
	assert_int_equal(st.modules, 0);
	assert_int_equal(fus.bytes, 0);
	/* read again: a new table, every module compiled again */
	fs.fail_chunk_from = 0;
	assert_int_equal(st_unwinder__update(u, (__u32)pid), 0);
	assert_int_equal(fs.tab.nmaps, 2);
	stats(&st);
	assert_int_equal(st.modules, w.files);
	assert_int_equal(st.procs, 2);	/* a forgotten pid is a new process */
}

/* ---- a deferred sample of this process ------------------------------------ */

static struct st_deferred ds;
static __u64 ras[3];
static __u64 stack_top;

/* Copy the stack from sp up, byte by byte (ASan poisons parts of it). */
__attribute__((no_sanitize("address"), noinline)) static void copy_stack(__u64 sp)
{
	const volatile __u8 *from = (const volatile __u8 *)(uintptr_t)sp;
	size_t n = stack_top - sp < ST_DEFER_STACK ? stack_top - sp : ST_DEFER_STACK;

	for (size_t i = 0; i < n; i++)
		ds.stack[i] = from[i];
	ds.stack_len = (__u32)n;
}

__attribute__((noinline)) static void capture(void)
{
	__u64 ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	ds.ip = ip;
	ds.sp = sp;
	ds.bp = bp;
	copy_stack(sp);
	ras[0] = (__u64)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void level1(void)
{
	capture();
	ras[1] = (__u64)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void level2(void)
{
	level1();
	ras[2] = (__u64)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static void find_stack_top(void)
{
	char line[512];
	struct st_maps_line l;
	FILE *f = fopen("/proc/self/maps", "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!st_procmaps__parse_line(line, &l) && l.path && !strcmp(l.path, "[stack]"))
			stack_top = l.end;
	}
	fclose(f);
	assert_true(stack_top != 0);
}

/* A deferred sample taken here by taken (ds, its return addresses in
 * ras) and a child (a fork: the same code at the same addresses) it is
 * said to be of, running image 7. */
static pid_t sample_of_a_child(void (*taken)(void), __u64 *r)
{
	pid_t pid;

	find_stack_top();
	memset(&ds, 0, offsetof(struct st_deferred, stack));
	taken();
	assert_true(ds.stack_len > 256);
	pid = spawn(0, r);
	ds.pid = ds.tid = (__u32)pid;
	ds.image = 7;
	return pid;
}

static void test_walk_a_deferred_sample(void **state)
{
	__u64 out[ST_MAX_USER], r;
	unsigned stop = 99;
	size_t fp = 9;
	pid_t pid;
	int n;

	(void)state;
	pid = sample_of_a_child(level2, &r);
	/* no table yet: waits, or walks with none */
	assert_int_equal(st_unwinder__walk(u, &ds, false, out, ST_MAX_USER, &stop, &fp), -EAGAIN);
	n = st_unwinder__walk(u, &ds, true, out, ST_MAX_USER, &stop, &fp);
	assert_int_equal(stop, ST_UNW_STOP_NO_PROC);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], ds.ip);
	/* with the child's table: the same code, so this process's frames */
	assert_int_equal(st_unwinder__update(u, (__u32)pid), 0);
	n = st_unwinder__walk(u, &ds, false, out, ST_MAX_USER, &stop, &fp);
	assert_true(n >= 5);
	assert_int_equal(out[0], ds.ip);
	assert_int_equal(out[1], ras[0]);
	assert_int_equal(out[2], ras[1]);
	assert_int_equal(out[3], ras[2]);
	assert_int_equal(fp, 0);
	/* through cmocka, main and libc to _start's outermost row */
	assert_int_equal(stop, ST_UNW_STOP_END);
	/* cut at max */
	assert_int_equal(st_unwinder__walk(u, &ds, false, out, 3, &stop, &fp), 3);
	assert_int_equal(stop, ST_UNW_STOP_DEPTH);
	/* a sample of a later image than the table: waits for its table */
	ds.image = 8;
	assert_int_equal(st_unwinder__walk(u, &ds, false, out, ST_MAX_USER, &stop, &fp), -EAGAIN);
	/* of an earlier one: its table never comes, walked without */
	ds.image = 6;
	n = st_unwinder__walk(u, &ds, false, out, ST_MAX_USER, &stop, &fp);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_NO_PROC);
	/* forgotten: no table kept for it any more */
	ds.image = 7;
	st_unwinder__forget(u, (__u32)pid);
	assert_int_equal(st_unwinder__walk(u, &ds, false, out, ST_MAX_USER, &stop, &fp), -EAGAIN);
	n = st_unwinder__walk(u, &ds, true, out, ST_MAX_USER, &stop, &fp);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_NO_PROC);
}

/* ---- code without CFI, read after the process exited ------------------- */

/* Calls fn from a frame of its own, with a frame pointer and no CFI, in
 * this binary, which has CFI elsewhere: a stretch without CFI in a module
 * with CFI (hand-written assembly), which auto mode walks past only after
 * reading the code before the return address (unwind_native.h,
 * st_unw_fp_checked(): the call in hop_level2 that reaches it). */
__asm__(".text\n"
	".globl st_test_nocfi_hop\n"
	".type st_test_nocfi_hop, @function\n"
	"st_test_nocfi_hop:\n"
	"\tpush %rbp\n"
	"\tmov %rsp, %rbp\n"
	"\tcall *%rdi\n"
	"\tpop %rbp\n"
	"\tret\n"
	".size st_test_nocfi_hop, .-st_test_nocfi_hop\n");
void st_test_nocfi_hop(void (*fn)(void));

__attribute__((noinline)) static void hop_level1(void)
{
	capture();
	ras[1] = (__u64)(uintptr_t)__builtin_return_address(0);	/* in the hop */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void hop_level2(void)
{
	st_test_nocfi_hop(hop_level1);
	ras[2] = (__u64)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

/* Issue 37: a deferred sample walked after its process exited (its last
 * ones always are; under load, when the daemon is behind, many more)
 * read the code of its frames without CFI from the process's memory,
 * which reads nothing then: the walk was cut at the hop ("[truncated] ->
 * wl_report -> fprintf -> ..." in qsort_nocfi at load 7). The code is
 * read from the mapped file, as it was while the child lived. */
static void test_code_read_after_the_exit(void **state)
{
	struct st_unwinder_stats st;
	__u64 out[ST_MAX_USER], r, scanned = 0, failed = 0;
	unsigned stop = 99;
	size_t fp = 9;
	pid_t pid;
	int n, alive;

	(void)state;
	fs.mode = ST_UNWIND_AUTO;
	pid = sample_of_a_child(hop_level2, &r);
	assert_int_equal(st_unwinder__update(u, (__u32)pid), 0);
	/* alive: through the hop by its frame pointer, checked by its caller's call */
	alive = st_unwinder__walk(u, &ds, false, out, ST_MAX_USER, &stop, &fp);
	assert_true(alive >= 6);
	assert_int_equal(out[1], ras[0]);
	assert_int_equal(out[2], ras[1]);
	assert_int_equal(out[4], ras[2]);
	assert_int_equal(stop, ST_UNW_STOP_END);
	assert_int_equal(fp, 1);
	stats(&st);
	assert_true(st.code_file_reads > 0);
	assert_int_equal(st.code_failed, 0);
	assert_true(st.code_files >= 1);
	/* gone, reaped (its memory and map_files gone; the pid free): the same walk */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	child = -1;
	n = st_unwinder__walk(u, &ds, false, out, ST_MAX_USER, &stop, &fp);
	assert_int_equal(n, alive);	/* (the old code: 3, cut at the hop, "no CFI") */
	assert_int_equal(out[2], ras[1]);
	assert_int_equal(out[4], ras[2]);
	assert_int_equal(stop, ST_UNW_STOP_END);
	st_unwinder__scan_stats(u, &scanned, &failed);
	assert_int_equal(failed, 0);
	stats(&st);
	assert_int_equal(st.code_failed, 0);
	assert_int_equal(st.code_mem_reads, 0);
	/* forgotten and swept: its files' descriptors closed */
	st_unwinder__forget(u, (__u32)pid);
	st_unwinder__sweep(u);
	stats(&st);
	assert_int_equal(st.code_files, 0);
	assert_true(st.code_files_peak >= 1);
}

/* ---- the mappings kept at a process's end --------------------------------- */

static struct {
	struct st_exec_maps em;
	struct st_file_key keys[ST_EXEC_MAPS];
	char paths[ST_EXEC_MAPS][ST_MAP_PATH_END];
	unsigned lookups;
} kept;

static int kept_maps(void *ctx, __u32 pid, __u32 image, struct st_exec_maps *out)
{
	(void)ctx;
	if (pid != fs.pid || image != kept.em.image)
		return -ENOENT;
	*out = kept.em;
	return 0;
}

static int kept_path(void *ctx, const struct st_file_key *key, struct st_file_path *out)
{
	(void)ctx;
	kept.lookups++;
	for (__u32 i = 0; i < kept.em.n && i < ST_EXEC_MAPS; i++)
		if (kept.keys[i].dev == key->dev && kept.keys[i].ino == key->ino) {
			memset(out, 0, sizeof(*out));
			snprintf(out->path, ST_MAP_PATH_END, "%s", kept.paths[i]);
			return 0;
		}
	return -ENOENT;
}

/* pid's executable mappings as bpf/endmaps.bpf.h keeps them (the kernel's
 * dev encoding, the vDSO by its tag, paths by file). */
static void keep_maps_of(pid_t pid, __u32 image)
{
	char path[64], line[1024];
	struct st_maps_line l;
	FILE *f;

	memset(&kept, 0, sizeof(kept));
	kept.em.image = image;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		struct st_exec_map *m = &kept.em.m[kept.em.n];

		if (st_procmaps__parse_line(line, &l) || !l.executable || !l.path ||
		    (l.path[0] != '/' && strcmp(l.path, "[vdso]")))
			continue;
		assert_true(kept.em.n < ST_EXEC_MAPS);
		m->start = l.start;
		m->end = l.end;
		m->pgoff = l.pgoff;
		m->dev = l.path[0] == '/' ? ((__u64)major(l.dev) << 20) | minor(l.dev) : ST_MAP_VDSO;
		m->ino = l.ino;
		kept.keys[kept.em.n] = (struct st_file_key){ .dev = m->dev, .ino = m->ino };
		snprintf(kept.paths[kept.em.n], ST_MAP_PATH_END, "%s", l.path);
		kept.em.n++;
	}
	fclose(f);
}

static void test_walk_after_the_end(void **state)
{
	const struct st_exec_source src = { .maps = kept_maps, .path = kept_path };
	struct st_unwinder_stats st;
	__u64 out[ST_MAX_USER], r;
	unsigned stop = 99;
	size_t fp = 9;
	pid_t pid;
	int n;

	(void)state;
	pid = sample_of_a_child(level2, &r);
	keep_maps_of(pid, 7);
	/* exited, not reaped: its maps read empty, which is no table */
	kill(pid, SIGKILL);
	assert_int_equal(waitid(P_PID, (id_t)pid, NULL, WEXITED | WNOWAIT), 0);
	assert_int_equal(st_unwinder__update(u, (__u32)pid), -ENOENT);
	assert_false(fs.has_tab);
	/* nothing kept (no source yet): walked without a table */
	assert_int_equal(st_unwinder__update_ended(u, (__u32)pid, 7), -ENOENT);
	n = st_unwinder__walk(u, &ds, true, out, ST_MAX_USER, &stop, &fp);
	assert_int_equal(n, 1);
	assert_int_equal(stop, ST_UNW_STOP_NO_PROC);
	/* kept for another image: the same */
	st_unwinder__on_exec_maps(u, &src);
	assert_int_equal(st_unwinder__update_ended(u, (__u32)pid, 8), -ENOENT);
	stats(&st);
	assert_int_equal(st.ended, 0);
	assert_int_equal(st.ended_none, 2);
	/* with what BPF kept: every mapping back, the sample walked whole */
	waitpid(pid, NULL, 0);
	child = -1;
	assert_int_equal(st_unwinder__update_ended(u, (__u32)pid, 7), 0);
	assert_true(fs.has_tab);
	assert_int_equal(fs.tab.nmaps, kept.em.n);
	assert_int_equal(fs.tab.image, 7);
	for (__u32 i = 0; i < kept.em.n; i++) {
		assert_int_equal(fs.tab.maps[i].start, kept.em.m[i].start);
		assert_true(fs.tab.maps[i].nrows > 0);
	}
	assert_true(kept.lookups >= kept.em.n - 1);	/* all but the vDSO's */
	n = st_unwinder__walk(u, &ds, true, out, ST_MAX_USER, &stop, &fp);
	assert_true(n >= 5);
	assert_int_equal(out[1], ras[0]);
	assert_int_equal(out[2], ras[1]);
	assert_int_equal(out[3], ras[2]);
	assert_int_equal(stop, ST_UNW_STOP_END);
	stats(&st);
	assert_int_equal(st.ended, 1);
	/* the same list again: the same table (not pushed again) */
	assert_int_equal(st_unwinder__update_ended(u, (__u32)pid, 7), 0);
	stats(&st);
	assert_int_equal(st.ended, 2);
	/* a kept list that lacks a mapping the table has (BPF keeps 32 at
	 * most, no JIT code): that table stays */
	kept.em.n--;
	assert_int_equal(st_unwinder__update_ended(u, (__u32)pid, 7), -ENOENT);
	stats(&st);
	assert_int_equal(st.ended, 2);
	assert_int_equal(st.ended_none, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_start_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_of_a_child, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunked_table_and_forget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_a_deferred_sample, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_after_the_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_code_read_after_the_exit, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

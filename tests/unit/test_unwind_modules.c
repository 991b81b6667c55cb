/* test_unwind_modules.c - the module bookkeeping of DWARF unwinding
 * (user/collect/unwind/unwind_modules.c) on the ELF fixtures (fixtures.mk) and the
 * system's libc and vDSO: one module per file, found by path or by a
 * mapping of this process; its rows are the file's compiled CFI; shared by
 * build id only between root's files (a copy others may write is a module
 * of its own, counted unshared; two layouts with one build id are two);
 * where a mapping finds its rows from its file offset and its file's first
 * mapping (GNU ld, lld's two executable segments in one file page);
 * references and the release of unused rows, rows again when mapped
 * again; the memory budget (no room, named in the stats); the compile-time
 * budget (pending modules, compiled on demand or by st_umods__work()).
 *
 * Link seams: the rows store is tests/unit/fake_ustore.h (in memory, no
 * BPF map, no root); clock_gettime(CLOCK_MONOTONIC) is this file's, set by
 * the pending test only (each call then advances by a set step), else the
 * kernel's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <gelf.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include "binsym/safeopen.h"
#include "tests/unit/fake_ustore.h"
#include "tests/unit/fixtures/fx_util.h"
#include "user/collect/procmaps.h"
#include "user/collect/unwind/unwind_index.h"
#include "user/collect/unwind/unwind_modules.h"
#include "user/collect/unwind/unwind_tables.h"
#include "user/collect/unwind/unwinder.h"

#define PAGE 4096ull
#define BIAS 0x7f0000000000ull	/* where the tests say a file is loaded */

/* ---- the clock seam -------------------------------------------------------- */

static bool clock_fake;
static double clock_now, clock_step;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (!clock_fake || id != CLOCK_MONOTONIC)
		return (int)syscall(SYS_clock_gettime, id, ts);
	ts->tv_sec = (time_t)clock_now;
	ts->tv_nsec = (long)((clock_now - (double)ts->tv_sec) * 1e9);
	clock_now += clock_step;
	return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static struct st_umods *ms;

static int setup(void **state)
{
	(void)state;
	ms = st_umods__new(-1, 64, 64 << 20, false);
	return ms ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	st_umods__free(ms);
	ms = NULL;
	clock_fake = false;
	return 0;
}

static struct st_umod *of_fixture(const char *name)
{
	char path[PATH_MAX];

	fx_path(path, sizeof(path), name);
	return st_umods__of_path(ms, path);
}

/* The file's compiled rows, as unwind_tables.c makes them (*t to free). */
static const struct st_unwind_row *table_of(const char *path, struct st_unwind_table **t,
					    size_t *n, __u64 *base)
{
	struct st_unwind_table_info info;

	assert_int_equal(st_unwind_table__from_file(path, t), 0);
	st_unwind_table__info(*t, &info);
	*base = info.base;
	return st_unwind_table__rows(*t, n);
}

/* The file's executable PT_LOAD (the first): its offset and vaddr. */
static void exec_load(const char *path, __u64 *offset, __u64 *vaddr)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	GElf_Phdr ph;
	size_t n = 0;
	bool found = false;

	assert_true(fd >= 0);
	assert_true(elf_version(EV_CURRENT) != EV_NONE);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getphdrnum(e, &n), 0);
	for (size_t i = 0; i < n && !found; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			*offset = ph.p_offset;
			*vaddr = ph.p_vaddr;
			found = true;
		}
	assert_true(found);
	elf_end(e);
	close(fd);
}

/* The row covering pc in rows[0, n) (sorted by pc), or NULL. */
static const struct st_unwind_row *row_at(const struct st_unwind_row *rows, size_t n, __u64 pc)
{
	const struct st_unwind_row *r = NULL;

	for (size_t i = 0; i < n && rows[i].pc <= pc; i++)
		r = &rows[i];
	return r;
}

/* A mapping of this process, as its /proc/self/maps line says. */
struct mapped {
	void *addr;
	size_t len;
	char line[512];
	struct st_maps_line l;
};

/* The line of /proc/self/maps: the one starting at addr, else (addr 0) the
 * first executable one whose path ends in suffix. */
static void maps_line(__u64 addr, const char *suffix, struct mapped *out)
{
	FILE *f = fopen("/proc/self/maps", "re");
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(out->line, sizeof(out->line), f)) {
		size_t len;

		out->line[strcspn(out->line, "\n")] = '\0';
		if (st_procmaps__parse_line(out->line, &out->l))
			continue;
		if (addr) {
			found = out->l.start == addr;
		} else if (out->l.executable && out->l.path &&
			   (len = strlen(out->l.path)) >= strlen(suffix)) {
			found = !strcmp(out->l.path + len - strlen(suffix), suffix);
		}
	}
	fclose(f);
	assert_true(found);
}

/* Map the first page of fixture name executable into this process. */
static void map_fixture(const char *name, struct mapped *m)
{
	char path[PATH_MAX];
	int fd;

	fx_path(path, sizeof(path), name);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	m->len = PAGE;
	m->addr = mmap(NULL, m->len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(m->addr != MAP_FAILED);
	maps_line((__u64)(uintptr_t)m->addr, NULL, m);
	assert_true(m->l.executable);
}

static void stats(struct st_unwinder_stats *st)
{
	memset(st, 0, sizeof(*st));
	st_umods__stats(ms, st);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_rows_of_a_library(void **state)
{
	struct st_unwind_table *t = NULL;
	struct st_unwinder_stats st;
	struct st_unwind_index ix;
	struct st_unwind_map mp = { 0 };
	const struct st_unwind_row *ref, *r;
	char path[PATH_MAX];
	__u64 base, off = 0, va = 0, start;
	struct fx_nm fn;
	struct st_umod *m;
	size_t n = 0, sn = 0;

	(void)state;
	fx_path(path, sizeof(path), "libfx.so");
	ref = table_of(path, &t, &n, &base);
	assert_true(n > 4);
	assert_int_equal(base, 0x10000);	/* linked at 0x10000 (fixtures.mk) */
	m = of_fixture("libfx.so");
	assert_non_null(m);
	stats(&st);
	assert_int_equal(st.loaded, 1);
	assert_int_equal(st.rows_loaded, n);
	assert_int_equal(st.modules, 1);
	assert_int_equal(st.no_cfi, 0);
	/* its rows in the store, then its pc index */
	st_unwind_index__plan(ref, n, &ix);
	assert_int_equal(fus.puts, 1);
	assert_non_null(st_umods__shard_rows(ms, fus.last_put.slot, &sn));
	assert_int_equal(sn, n + ix.nbuckets);
	assert_memory_equal(st_umods__shard_rows(ms, fus.last_put.slot, &sn), ref,
			    n * sizeof(*ref));
	/* the executable mapping, loaded at BIAS */
	exec_load(path, &off, &va);
	start = BIAS + (va & ~(PAGE - 1));
	mp.start = start;
	assert_int_equal(st_umod__rows(m, off & ~(PAGE - 1), BIAS + base, &mp), 0);
	assert_int_equal(mp.vaddr, (va & ~(PAGE - 1)) - base);
	assert_int_equal(mp.shard, fus.last_put.slot);
	assert_int_equal(mp.first, 0);
	assert_int_equal(mp.nrows, n);
	assert_int_equal(mp.nbuckets, ix.nbuckets);
	assert_int_equal(mp.ishift, ix.shift);
	assert_int_equal(mp.ibase, ix.base);
	/* fx_lib_func's entry, found as BPF finds it: CFA = rsp + 8 */
	assert_true(fx_nm("libfx.so.nm", "fx_lib_func", &fn));
	r = row_at(ref, n, BIAS + fn.addr - start + mp.vaddr);
	assert_non_null(r);
	assert_int_equal(r->kind & ST_UNW_KIND_MASK, ST_UNW_RSP);
	assert_int_equal(r->off, 8);
	/* the same file again: the same module, nothing compiled */
	assert_ptr_equal(of_fixture("libfx.so"), m);
	stats(&st);
	assert_int_equal(st.loaded, 1);
	assert_int_equal(fus.puts, 1);
	/* an offset past the file: no rows there */
	assert_int_equal(st_umod__rows(m, 0x100000, 0, &mp), -ENOENT);
	st_unwind_table__free(t);
}

static void test_lld_segments_in_one_page(void **state)
{
	struct st_unwind_map mp = { 0 };
	struct fx_nm far, near;
	struct st_umod *m = of_fixture("fx_lld2x");

	(void)state;
	assert_non_null(m);
	assert_true(fx_nm("fx_lld2x.nm", "fx_far", &far));
	assert_true(fx_nm("fx_lld2x.nm", "fx_near", &near));
	assert_int_equal(far.addr, 0x400000);
	/* both executable segments map file page 0x1000: the file's first
	 * mapping (at BIAS, offset 0) tells which */
	mp.start = BIAS + 0x400000;
	assert_int_equal(st_umod__rows(m, 0x1000, BIAS, &mp), 0);
	assert_int_equal(mp.vaddr, 0x400000);
	mp.start = BIAS + (near.addr & ~(PAGE - 1));
	assert_int_equal(st_umod__rows(m, 0x1000, BIAS, &mp), 0);
	assert_int_equal(mp.vaddr, near.addr & ~(PAGE - 1));
	/* without it: the later segment */
	mp.start = BIAS + 0x400000;
	assert_int_equal(st_umod__rows(m, 0x1000, 0, &mp), 0);
	assert_int_equal(mp.vaddr, near.addr & ~(PAGE - 1));
	/* fx_lld: .text a page above its file offset */
	m = of_fixture("fx_lld");
	assert_non_null(m);
	mp.start = BIAS + 0x1000;
	assert_int_equal(st_umod__rows(m, 0, BIAS, &mp), 0);
	assert_int_equal(mp.vaddr, 0x1000);
}

static void test_shared_by_build_id_for_root_only(void **state)
{
	char dir[] = "/tmp/st-umods-XXXXXX", orig[PATH_MAX], a[PATH_MAX + 8], b[PATH_MAX + 8];
	struct st_unwinder_stats st;
	struct st_umod *m, *ma, *mb, *sa, *sb;
	struct stat sbuf;

	(void)state;
	fx_path(orig, sizeof(orig), "libfx.so");
	assert_int_equal(stat(orig, &sbuf), 0);
	if (geteuid() != 0 || !st_file_trusted(&sbuf)) {
		printf("needs root: copies of a root-owned fixture\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.so", dir);
	snprintf(b, sizeof(b), "%s/b.so", dir);
	assert_int_equal(fx_copy(orig, a), 0);
	assert_int_equal(fx_copy(orig, b), 0);
	assert_int_equal(chmod(a, 0755), 0);
	assert_int_equal(chmod(b, 0775), 0);	/* group-writable: not root's alone */
	m = of_fixture("libfx.so");
	ma = st_umods__of_path(ms, a);
	mb = st_umods__of_path(ms, b);
	assert_non_null(m);
	assert_ptr_equal(ma, m);	/* root's copy: shared by build id */
	assert_non_null(mb);
	assert_ptr_not_equal(mb, m);
	stats(&st);
	assert_int_equal(st.loaded, 2);
	assert_int_equal(st.unshared, 1);
	assert_int_equal(st.modules, 2);
	/* one build id, two layouts (fixtures.mk fx_same_a/b): two modules,
	 * each with its own file's rows */
	sa = of_fixture("fx_same_a");
	sb = of_fixture("fx_same_b");
	assert_non_null(sa);
	assert_non_null(sb);
	assert_ptr_not_equal(sa, sb);
	stats(&st);
	assert_int_equal(st.loaded, 4);
	assert_int_equal(st.unshared, 1);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

static void test_mappings(void **state)
{
	struct st_unwind_map mp = { 0 };
	struct st_unwinder_stats st;
	const struct st_unwind_row *rows, *r;
	struct mapped fx, libc, first, vdso;
	struct st_umod *m, *lc, *vd;
	struct st_ufile *code = NULL;
	struct st_maps_line other;
	__u8 buf[16];
	void *h, *fn;
	bool found = false;
	size_t n = 0;
	FILE *f;

	(void)state;
	/* a fixture mapped here: the module of its path */
	map_fixture("libfx.so", &fx);
	m = st_umods__of_mapping(ms, (__u32)getpid(), &fx.l, NULL);
	assert_non_null(m);
	assert_ptr_equal(st_umods__of_mapping(ms, (__u32)getpid(), &fx.l, NULL), m);
	assert_ptr_equal(of_fixture("libfx.so"), m);
	stats(&st);
	assert_int_equal(st.loaded, 1);
	munmap(fx.addr, fx.len);
	/* libc's text: getpid's entry found from the mapping as BPF would */
	maps_line(0, "/libc.so.6", &libc);
	lc = st_umods__of_mapping(ms, (__u32)getpid(), &libc.l, NULL);
	assert_non_null(lc);
	assert_ptr_equal(st_umods__of_path(ms, libc.l.path), lc);
	h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	fn = dlsym(h, "getpid");
	assert_non_null(fn);
	assert_true((__u64)(uintptr_t)fn >= libc.l.start && (__u64)(uintptr_t)fn < libc.l.end);
	/* libc's first mapping, at offset 0 */
	f = fopen("/proc/self/maps", "re");
	assert_non_null(f);
	while (!found && fgets(first.line, sizeof(first.line), f))
		found = !st_procmaps__parse_line(first.line, &first.l) && first.l.path &&
			!first.l.pgoff && first.l.ino == libc.l.ino && first.l.dev == libc.l.dev;
	fclose(f);
	assert_true(found);
	mp.start = libc.l.start;
	assert_int_equal(st_umod__rows(lc, libc.l.pgoff, first.l.start, &mp), 0);
	rows = st_umods__shard_rows(ms, mp.shard, &n);
	assert_non_null(rows);
	assert_true(n >= mp.first + mp.nrows);
	r = row_at(rows + mp.first, mp.nrows, (__u64)(uintptr_t)fn - mp.start + mp.vaddr);
	assert_non_null(r);
	assert_int_equal(r->kind & ST_UNW_KIND_MASK, ST_UNW_RSP);
	assert_int_equal(r->off, 8);
	/* its code, for the walks, from the file (pgoff: as mapped), bounded */
	assert_ptr_equal(st_umods__of_mapping(ms, (__u32)getpid(), &libc.l, &code), lc);
	assert_non_null(code);
	assert_int_equal(st_ufile__read(code, (__u64)(uintptr_t)fn - libc.l.start + libc.l.pgoff,
					buf, sizeof(buf)), 0);
	assert_memory_equal(buf, fn, sizeof(buf));
	assert_int_equal(st_ufile__read(code, 1ull << 40, buf, sizeof(buf)), -EIO);
	assert_int_equal(st_ufile__read(code, ~0ull - 4, buf, sizeof(buf)), -EIO);
	stats(&st);
	assert_int_equal(st.code_files, 2);	/* libfx.so's and libc's */
	dlclose(h);
	/* the vDSO: the daemon's own image, with rows */
	maps_line(0, "[vdso]", &vdso);
	vd = st_umods__of_mapping(ms, (__u32)getpid(), &vdso.l, NULL);
	assert_non_null(vd);
	mp.start = vdso.l.start;
	assert_int_equal(st_umod__rows(vd, 0, vdso.l.start, &mp), 0);
	assert_true(mp.nrows > 0);
	assert_ptr_equal(st_umods__of_mapping(ms, (__u32)getpid(), &vdso.l, NULL), vd);
	stats(&st);
	assert_int_equal(st.loaded, 3);
	assert_int_equal(st.modules, 3);
	/* its code: the daemon's image, no file, bounded by its mapping */
	assert_ptr_equal(st_umods__of_mapping(ms, (__u32)getpid(), &vdso.l, &code), vd);
	assert_non_null(code);
	assert_int_equal(st_ufile__read(code, 0x10, buf, sizeof(buf)), 0);
	assert_memory_equal(buf, (const void *)(uintptr_t)(vdso.l.start + 0x10), sizeof(buf));
	assert_int_equal(st_ufile__read(code, vdso.l.end - vdso.l.start - 8, buf, sizeof(buf)),
			 -EIO);
	/* another image (a 32-bit process's is not as long): none */
	other = vdso.l;
	other.end += 4096;
	assert_ptr_equal(st_umods__of_mapping(ms, (__u32)getpid(), &other, &code), vd);
	assert_null(code);
	stats(&st);
	assert_int_equal(st.code_not_kept, 1);
	/* no table refers to their files: their descriptors closed by the sweep */
	st_umods__release_unused(ms);
	stats(&st);
	assert_int_equal(st.code_files, 0);
	assert_int_equal(st.code_files_peak, 2);
}

static void test_references_and_release(void **state)
{
	struct st_unwind_map mp = { .start = BIAS + 0x11000 };
	struct st_unwinder_stats st;
	struct st_uextent put;
	struct st_umod *m = of_fixture("libfx.so"), *p = of_fixture("fx_pie");

	(void)state;
	assert_non_null(m);
	assert_non_null(p);
	put = fus.last_put;	/* fx_pie's */
	/* never referenced: kept (the start-up preloads) */
	assert_int_equal(st_umods__release_unused(ms), 0);
	st_umod__ref(m);
	st_umod__ref(m);
	st_umod__ref(p);
	assert_int_equal(st_umods__release_unused(ms), 0);
	st_umod__unref(m);
	st_umod__unref(p);
	assert_int_equal(st_umods__release_unused(ms), 1);	/* fx_pie's only */
	assert_int_equal(fus.drops, 1);
	assert_int_equal(fus.last_drop.slot, put.slot);
	assert_int_equal(fus.last_drop.n, put.n);
	assert_int_equal(st_umod__rows(p, 0x1000, BIAS, &mp), -ENOENT);
	assert_int_equal(st_umod__rows(m, 0x1000, BIAS + 0x10000, &mp), 0);
	stats(&st);
	assert_int_equal(st.released, 1);
	assert_int_equal(st.modules, 1);
	assert_int_equal(fus.ticks, 3);	/* one per sweep */
	st_umod__unref(m);
	st_umod__unref(m);	/* below zero: stays at zero */
	assert_int_equal(st_umods__release_unused(ms), 1);
	assert_int_equal(st_umods__release_unused(ms), 0);	/* once */
	stats(&st);
	assert_int_equal(st.released, 2);
	assert_int_equal(st.modules, 0);
	assert_int_equal(fus.bytes, 0);
	/* mapped again: the same module, compiled again */
	assert_ptr_equal(of_fixture("libfx.so"), m);
	assert_int_equal(st_umod__rows(m, 0x1000, BIAS + 0x10000, &mp), 0);
	stats(&st);
	assert_int_equal(st.loaded, 3);
	assert_int_equal(st.modules, 1);
}

static void test_over_the_memory_budget(void **state)
{
	struct st_unwind_map mp = { .start = BIAS + 0x11000 };
	struct st_unwinder_stats st;
	struct st_umod *m, *p;

	(void)state;
	st_umods__free(ms);
	ms = st_umods__new(-1, 64, 8, false);	/* one row's bytes */
	assert_non_null(ms);
	m = of_fixture("libfx.so");
	p = of_fixture("fx_pie");
	assert_non_null(m);
	assert_non_null(p);
	assert_int_equal(st_umod__rows(m, 0x1000, BIAS + 0x10000, &mp), -ENOSPC);
	assert_int_equal(st_umod__rows(p, 0x1000, BIAS, &mp), -ENOSPC);
	stats(&st);
	assert_int_equal(st.no_room, 2);
	assert_int_equal(st.loaded, 0);
	assert_int_equal(st.modules, 0);
	assert_string_equal(st.no_room_names, "libfx.so, fx_pie");
	/* unmapped: released like the others, and tried again when mapped */
	st_umod__ref(m);
	st_umod__unref(m);
	assert_int_equal(st_umods__release_unused(ms), 1);
	assert_int_equal(st_umod__rows(m, 0x1000, BIAS + 0x10000, &mp), -ENOENT);
	assert_ptr_equal(of_fixture("libfx.so"), m);
	assert_int_equal(st_umod__rows(m, 0x1000, BIAS + 0x10000, &mp), -ENOSPC);
	stats(&st);
	assert_int_equal(st.no_room, 3);
	assert_int_equal(st.released, 1);
}

static void test_pending_over_the_time_budget(void **state)
{
	struct st_unwind_map mp = { 0 };
	struct st_unwinder_stats st;
	struct mapped a, b, c, d;
	struct st_umod *ma, *mb, *mc;

	(void)state;
	map_fixture("libfx.so", &a);
	map_fixture("fx_pie", &b);
	map_fixture("fx_lld", &c);
	/* every clock read 45 ms later: a compile costs 45 ms of the 40 ms
	 * each 200 ms window allows */
	clock_fake = true;
	clock_now = 1000.0;
	clock_step = 0.045;
	ma = st_umods__of_mapping(ms, (__u32)getpid(), &a.l, NULL);
	mb = st_umods__of_mapping(ms, (__u32)getpid(), &b.l, NULL);
	mc = st_umods__of_mapping(ms, (__u32)getpid(), &c.l, NULL);
	assert_non_null(ma);
	assert_non_null(mb);
	assert_non_null(mc);
	mp.start = BIAS + 0x11000;
	assert_int_equal(st_umod__rows(ma, 0x1000, BIAS + 0x10000, &mp), 0);
	mp.start = BIAS + 0x1000;
	assert_int_equal(st_umod__rows(mb, 0x1000, BIAS, &mp), -EAGAIN);
	assert_int_equal(st_umod__rows(mc, 0, BIAS, &mp), -EAGAIN);
	stats(&st);
	assert_int_equal(st.loaded, 1);
	/* the same mapping again: still pending, not compiled twice */
	assert_ptr_equal(st_umods__of_mapping(ms, (__u32)getpid(), &b.l, NULL), mb);
	/* pending modules are not released */
	st_umod__ref(mb);
	st_umod__unref(mb);
	assert_int_equal(st_umods__release_unused(ms), 0);
	/* one compiled on demand, whatever the budget */
	assert_true(st_umods__compile_now(ms, mc));
	assert_false(st_umods__compile_now(ms, mc));
	assert_false(st_umods__compile_now(ms, ma));
	mp.start = BIAS + 0x1000;
	assert_int_equal(st_umod__rows(mc, 0, BIAS, &mp), 0);
	assert_int_equal(mp.vaddr, 0x1000);
	/* the rest by the loop's work, in a new window */
	clock_now += 1.0;
	assert_int_equal(st_umods__work(ms, false), 1);
	assert_int_equal(st_umods__work(ms, false), 0);
	assert_int_equal(st_umod__rows(mb, 0x1000, BIAS, &mp), 0);
	stats(&st);
	assert_int_equal(st.loaded, 3);
	assert_int_equal(st.modules, 3);
	/* released, mapped again over the budget: pending again, then all */
	assert_int_equal(st_umods__release_unused(ms), 1);
	clock_now += 1.0;
	map_fixture("fx_lld2x", &d);
	assert_non_null(st_umods__of_mapping(ms, (__u32)getpid(), &d.l, NULL));	/* compiled */
	assert_ptr_equal(st_umods__of_mapping(ms, (__u32)getpid(), &b.l, NULL), mb);	/* pending */
	assert_int_equal(st_umod__rows(mb, 0x1000, BIAS, &mp), -EAGAIN);
	assert_int_equal(st_umods__work(ms, true), 1);
	assert_int_equal(st_umod__rows(mb, 0x1000, BIAS, &mp), 0);
	clock_fake = false;
	munmap(a.addr, a.len);
	munmap(b.addr, b.len);
	munmap(c.addr, c.len);
	munmap(d.addr, d.len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rows_of_a_library, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lld_segments_in_one_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_by_build_id_for_root_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mappings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_references_and_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_over_the_memory_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_over_the_time_budget, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

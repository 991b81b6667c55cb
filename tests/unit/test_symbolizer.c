/* test_symbolizer.c - st_symbolizer against the ELF fixtures of
 * fixtures.mk (addresses from nm) and a fake kallsyms file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <gelf.h>
#include <sys/auxv.h>

#include "common/budget.h"
#include "binsym/elf.h"
#include "binsym/entry.h"
#include "common/strtab.h"
#include "binsym/symbolizer.h"
#include "binsym/symtab.h"
#include "tests/unit/fixtures/fx_util.h"
#include "tests/unit/fixtures/fx_map.h"

#define PIE_BIAS 0x555555554000ull
#define LIB_BIAS 0x7f1234500000ull

static struct st_symbolizer *new_sym(const char *debug_dir)
{
	struct st_symbolizer_opts opts = { .debug_dir = debug_dir };
	struct st_symbolizer *s = st_symbolizer__new(&opts);

	assert_non_null(s);
	return s;
}

/* Resolve vaddr + delta of nm symbol `name` in fixture `file` at `bias`. */
static void resolve_nm(struct st_symbolizer *s, struct st_module *m, const char *path,
		       const struct fx_map *map, const char *nm, const char *name,
		       __u64 delta, bool is_return, struct st_sym *out)
{
	struct fx_nm sym;

	assert_true(fx_nm(nm, name, &sym));
	assert_int_equal(st_symbolizer__resolve(s, m, path, map->start, map->pgoff,
						map->bias + sym.addr + delta, is_return, out), 0);
}

static void assert_func(const struct st_sym *r, const char *name, __u64 func_addr,
			__u64 offset)
{
	assert_non_null(r->function);
	assert_string_equal(r->function, name);
	assert_int_equal(r->func_addr, func_addr);
	assert_int_equal(r->offset, offset);
}

static void test_pie_functions(void **state)
{
	static const char *const names[] = {
		"fx_die", "fx_add", "fx_tail", "fx_after_tail", "fx_before_gap",
		"fx_after_gap", "fx_after_nosize", "fx_static", "main",
	};
	char path[PATH_MAX];
	struct fx_map map;
	struct st_symbolizer *s;
	struct st_module *m;
	struct fx_nm nm;
	struct st_sym r;
	size_t i;

	(void)state;
	fx_path(path, sizeof(path), "fx_pie");
	fx_exec_mapping(path, PIE_BIAS, &map);
	s = new_sym("/nonexistent");
	m = st_symbolizer__module(s, path, NULL);
	assert_non_null(m);
	assert_string_equal(st_module__path(m), path);

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_true(fx_nm("fx_pie.nm", names[i], &nm));
		assert_true(nm.sized && nm.size > 1);

		resolve_nm(s, m, path, &map, "fx_pie.nm", names[i], 0, false, &r);
		assert_func(&r, names[i], PIE_BIAS + nm.addr, 0);
		assert_int_equal(r.module_offset, nm.addr);
		assert_string_equal(r.module, path);

		/* last byte of the function */
		resolve_nm(s, m, path, &map, "fx_pie.nm", names[i], nm.size - 1, false, &r);
		assert_func(&r, names[i], PIE_BIAS + nm.addr, nm.size - 1);
		assert_int_equal(r.module_offset, nm.addr + nm.size - 1);
	}
	st_symbolizer__free(s);
}

static void test_is_return(void **state)
{
	struct fx_nm tail, after;
	char path[PATH_MAX];
	struct fx_map map;
	struct st_symbolizer *s;
	struct st_module *m;
	struct st_sym r;

	(void)state;
	fx_path(path, sizeof(path), "fx_pie");
	fx_exec_mapping(path, PIE_BIAS, &map);
	assert_true(fx_nm("fx_pie.nm", "fx_tail", &tail));
	assert_true(fx_nm("fx_pie.nm", "fx_after_tail", &after));
	/* the fixture is laid out so: fx_tail ends with a call, no padding */
	assert_int_equal(tail.addr + tail.size, after.addr);

	s = new_sym("/nonexistent");
	m = st_symbolizer__module(s, path, NULL);
	assert_non_null(m);

	/* the return address of fx_tail's last call is fx_after_tail's start */
	resolve_nm(s, m, path, &map, "fx_pie.nm", "fx_tail", tail.size, true, &r);
	assert_func(&r, "fx_tail", PIE_BIAS + tail.addr, tail.size);
	assert_int_equal(r.module_offset, after.addr);

	/* the same address as a sampled instruction pointer */
	resolve_nm(s, m, path, &map, "fx_pie.nm", "fx_tail", tail.size, false, &r);
	assert_func(&r, "fx_after_tail", PIE_BIAS + after.addr, 0);

	/* a return address in the middle reports the offset from addr */
	resolve_nm(s, m, path, &map, "fx_pie.nm", "fx_after_tail", 3, true, &r);
	assert_func(&r, "fx_after_tail", PIE_BIAS + after.addr, 3);
	st_symbolizer__free(s);
}

static void test_gap_and_nosize(void **state)
{
	struct fx_nm before, after, nosize, next, label;
	char path[PATH_MAX];
	struct fx_map map;
	struct st_symbolizer *s;
	struct st_module *m;
	struct st_sym r;

	(void)state;
	fx_path(path, sizeof(path), "fx_pie");
	fx_exec_mapping(path, PIE_BIAS, &map);
	assert_true(fx_nm("fx_pie.nm", "fx_before_gap", &before));
	assert_true(fx_nm("fx_pie.nm", "fx_after_gap", &after));
	assert_true(fx_nm("fx_pie.nm", "fx_nosize", &nosize));
	assert_true(fx_nm("fx_pie.nm", "fx_after_nosize", &next));
	assert_true(after.addr >= before.addr + before.size + 64);
	assert_false(nosize.sized);
	assert_int_equal(next.addr, nosize.addr + 32);

	s = new_sym("/nonexistent");
	m = st_symbolizer__module(s, path, NULL);
	assert_non_null(m);

	/* in the 64 bytes between fx_before_gap and fx_after_gap */
	resolve_nm(s, m, path, &map, "fx_pie.nm", "fx_before_gap", before.size + 8, false, &r);
	assert_null(r.function);
	assert_int_equal(r.module_offset, before.addr + before.size + 8);
	assert_int_equal(r.func_addr, 0);
	assert_string_equal(r.module, path);

	/* a zero-size symbol covers up to the next one */
	resolve_nm(s, m, path, &map, "fx_pie.nm", "fx_nosize", 5, false, &r);
	assert_func(&r, "fx_nosize", PIE_BIAS + nosize.addr, 5);
	resolve_nm(s, m, path, &map, "fx_pie.nm", "fx_nosize", 31, false, &r);
	assert_func(&r, "fx_nosize", PIE_BIAS + nosize.addr, 31);
	resolve_nm(s, m, path, &map, "fx_pie.nm", "fx_nosize", 32, false, &r);
	assert_func(&r, "fx_after_nosize", PIE_BIAS + next.addr, 0);

	/* labels without a type (assembly entry points) name their code, up
	 * to the next symbol; one inside a sized function does not split it */
	assert_true(fx_nm("fx_pie.nm", "fx_label_start", &label));
	/* the return address of its call is the next label's first byte */
	resolve_nm(s, m, path, &map, "fx_pie.nm", "fx_label_start", 8, true, &r);
	assert_func(&r, "fx_label_start", PIE_BIAS + label.addr, 8);
	assert_true(fx_nm("fx_pie.nm", "fx_label_user", &label));
	resolve_nm(s, m, path, &map, "fx_pie.nm", "fx_label_user", 3, false, &r);
	assert_func(&r, "fx_label_user", PIE_BIAS + label.addr, 3);
	assert_true(fx_nm("fx_pie.nm", "fx_sized_asm", &label));
	resolve_nm(s, m, path, &map, "fx_pie.nm", "fx_sized_asm", 20, false, &r);
	assert_func(&r, "fx_sized_asm", PIE_BIAS + label.addr, 20);
	st_symbolizer__free(s);
}

static void test_shared_lib(void **state)
{
	static const char *const names[] = { "fx_lib_func", "fx_lib_other", "fx_lib_static" };
	char path[PATH_MAX];
	struct fx_map map, nonpie;
	struct st_symbolizer *s;
	struct st_module *m;
	struct fx_nm nm;
	struct st_sym r;
	size_t i;

	(void)state;
	fx_path(path, sizeof(path), "libfx.so");
	fx_exec_mapping(path, LIB_BIAS, &map);
	/* linked at 0x10000: vaddrs are not file offsets */
	assert_int_not_equal(map.p_vaddr, map.p_offset);
	fx_exec_mapping(path, 0, &nonpie);	/* as if loaded where linked */

	s = new_sym("/nonexistent");
	m = st_symbolizer__module(s, path, NULL);
	assert_non_null(m);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_true(fx_nm("libfx.so.nm", names[i], &nm));
		assert_true(nm.addr >= 0x10000);

		resolve_nm(s, m, path, &map, "libfx.so.nm", names[i], 2, false, &r);
		assert_func(&r, names[i], LIB_BIAS + nm.addr, 2);
		assert_int_equal(r.module_offset, nm.addr + 2);

		resolve_nm(s, m, path, &nonpie, "libfx.so.nm", names[i], 1, false, &r);
		assert_func(&r, names[i], nm.addr, 1);
		assert_int_equal(r.module_offset, nm.addr + 1);
	}
	st_symbolizer__free(s);
}

static void test_modules(void **state)
{
	char path[PATH_MAX], nmpath[PATH_MAX], deleted[PATH_MAX + 16];
	char tmp[] = "/tmp/st-test-modXXXXXX", copy[PATH_MAX];
	struct st_module *m, *m2;
	struct st_symbolizer *s;
	struct fx_map map;
	struct st_symbolizer_stats ss;
	struct fx_nm nm;
	struct st_sym r;
	struct stat sb;
	size_t before;

	(void)state;
	fx_path(path, sizeof(path), "fx_pie");
	fx_path(nmpath, sizeof(nmpath), "fx_pie.nm");
	fx_exec_mapping(path, PIE_BIAS, &map);
	s = new_sym("/nonexistent");

	errno = 0;
	assert_null(st_symbolizer__module(s, "/nonexistent/libnothing.so", NULL));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(st_symbolizer__module(s, nmpath, NULL));
	assert_int_equal(errno, ENOEXEC);

	m = st_symbolizer__module(s, path, NULL);
	assert_non_null(m);
	assert_ptr_equal(st_symbolizer__module(s, path, NULL), m);
	assert_non_null(st_module__build_id(m));
	before = st_symbolizer__memory(s);
	assert_true(before > 0);

	/* the maps line names another inode (issue 23): refused and counted */
	assert_int_equal(stat(path, &sb), 0);
	errno = 0;
	assert_null(st_symbolizer__module_mapped(s, path, NULL, sb.st_dev, sb.st_ino + 1));
	assert_int_equal(errno, ESTALE);
	assert_ptr_equal(st_symbolizer__module_mapped(s, path, NULL, sb.st_dev, sb.st_ino), m);
	st_symbolizer__stats(s, &ss);
	assert_int_equal(ss.not_mapped, 1);

	/* " (deleted)" is stripped; open_path is what is read */
	snprintf(deleted, sizeof(deleted), "%s (deleted)", path);
	assert_ptr_equal(st_symbolizer__module(s, deleted, path), m);
	assert_int_equal(st_symbolizer__resolve(s, m, deleted, map.start, map.pgoff,
						map.start, false, &r), 0);
	assert_string_equal(r.module, path);
	assert_string_equal(r.build_id, st_module__build_id(m));

	/* the same image elsewhere: one module, found by build id */
	assert_non_null(mkdtemp(tmp));
	snprintf(copy, sizeof(copy), "%s/fx_pie", tmp);
	assert_int_equal(fx_copy(path, copy), 0);
	m2 = st_symbolizer__module(s, copy, NULL);
	fx_rmtree(tmp);
	if (geteuid() == 0)
		assert_ptr_equal(m2, m);
	else	/* the copy is not root's: not shared by build id (needs root) */
		assert_ptr_not_equal(m2, m);

	/* unreadable module: module + offset in mapping + pgoff */
	assert_int_equal(st_symbolizer__resolve(s, NULL, "/gone/lib.so", 0x7f0000001000ull,
						0x3000, 0x7f0000001234ull, true, &r), 0);
	assert_null(r.function);
	assert_null(r.build_id);
	assert_string_equal(r.module, "/gone/lib.so");
	assert_int_equal(r.module_offset, 0x3234);
	assert_int_equal(st_symbolizer__resolve(NULL, NULL, "x", 0, 0, 0, false, &r), -EINVAL);
	assert_int_equal(st_symbolizer__resolve(s, NULL, "x", 0, 0, 0, false, NULL), -EINVAL);

	/* symbols were loaded lazily (on the first resolve) and are counted */
	assert_true(fx_nm("fx_pie.nm", "fx_add", &nm));
	assert_int_equal(st_symbolizer__resolve(s, m, path, map.start, map.pgoff,
						PIE_BIAS + nm.addr, false, &r), 0);
	assert_string_equal(r.function, "fx_add");
	assert_true(st_symbolizer__memory(s) > before);
	st_symbolizer__free(s);
	st_symbolizer__free(NULL);
}

/* Resolve fx_static (a local symbol, only in .symtab) in a stripped image. */
static const char *stripped_static(struct st_symbolizer *s, const char *path, const char *nmf,
				   struct st_sym *r)
{
	struct fx_map map;
	struct st_module *m;
	struct fx_nm nm;

	fx_exec_mapping(path, PIE_BIAS, &map);
	m = st_symbolizer__module(s, path, NULL);
	assert_non_null(m);
	assert_true(fx_nm(nmf, "fx_static", &nm));
	assert_int_equal(st_symbolizer__resolve(s, m, path, map.start, map.pgoff,
						PIE_BIAS + nm.addr + 1, false, r), 0);
	assert_int_equal(r->module_offset, nm.addr + 1);
	if (r->function) {
		assert_int_equal(r->offset, 1);
		assert_int_equal(r->func_addr, PIE_BIAS + nm.addr);
	}
	if (r->function && r->function[0] == '[') {
		/* no symbol: named by its FDE, "[module+0xOFF]" */
		char want[PATH_MAX + 32];

		snprintf(want, sizeof(want), "[%s+0x%llx]", strrchr(path, '/') + 1,
			 (unsigned long long)nm.addr);
		assert_string_equal(r->function, want);
		return NULL;
	}
	return r->function;
}

static void test_debug_build_id(void **state)
{
	char tmp[] = "/tmp/st-test-bidXXXXXX", path[PATH_MAX], debug[PATH_MAX];
	char idfile[PATH_MAX], id[256] = "", dir[PATH_MAX], dst[PATH_MAX * 2];
	struct st_symbolizer *s;
	struct st_sym r;
	FILE *f;

	(void)state;
	fx_path(path, sizeof(path), "fx_bid");
	fx_path(debug, sizeof(debug), "fx_bid.debug");
	fx_path(idfile, sizeof(idfile), "fx_bid.buildid");
	f = fopen(idfile, "r");
	assert_non_null(f);
	assert_non_null(fgets(id, sizeof(id), f));
	fclose(f);
	id[strcspn(id, "\n")] = '\0';
	assert_true(strlen(id) > 8);

	/* without the debug file: stripped, fx_static is unknown */
	s = new_sym("/nonexistent");
	assert_null(stripped_static(s, path, "fx_bid.nm", &r));
	assert_string_equal(r.build_id, id);
	st_symbolizer__free(s);

	assert_non_null(mkdtemp(tmp));
	snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", tmp, id);
	assert_int_equal(fx_mkdirs(dir), 0);
	snprintf(dst, sizeof(dst), "%s/%s.debug", dir, id + 2);
	assert_int_equal(fx_copy(debug, dst), 0);

	s = new_sym(tmp);
	stripped_static(s, path, "fx_bid.nm", &r);
	assert_non_null(r.function);
	assert_string_equal(r.function, "fx_static");
	st_symbolizer__free(s);
	fx_rmtree(tmp);
}

/* Copy fx_dl to BIN/fx_dl and fx_dl.debug (or `debug`) to DBGDIR/fx_dl.debug,
 * then resolve fx_static in it with debug_dir ROOT. */
static const char *debuglink_case(const char *tmp, const char *bin, const char *dbgdir,
				  const char *root, const char *debug, struct st_sym *r)
{
	char src[PATH_MAX * 2], dst[PATH_MAX * 2], dsrc[PATH_MAX], dir[PATH_MAX];
	struct st_symbolizer *s;
	const char *fn;

	snprintf(dir, sizeof(dir), "%s/%s", tmp, bin);
	assert_int_equal(fx_mkdirs(dir), 0);
	fx_path(src, sizeof(src), "fx_dl");
	snprintf(dst, sizeof(dst), "%s/fx_dl", dir);
	assert_int_equal(fx_copy(src, dst), 0);

	snprintf(dir, sizeof(dir), "%s", dbgdir);
	assert_int_equal(fx_mkdirs(dir), 0);
	fx_path(dsrc, sizeof(dsrc), debug);
	snprintf(src, sizeof(src), "%s/fx_dl.debug", dir);
	assert_int_equal(fx_copy(dsrc, src), 0);

	s = new_sym(root);
	fn = stripped_static(s, dst, "fx_dl.nm", r);
	assert_null(r->build_id);
	fn = fn && strcmp(fn, "fx_static") == 0 ? "fx_static" : fn ? "other" : NULL;
	st_symbolizer__free(s);
	return fn;
}

static void test_debuglink(void **state)
{
	char tmp[] = "/tmp/st-test-dlXXXXXX", dbg[PATH_MAX * 2], root[PATH_MAX];
	struct st_symbolizer *s;
	struct st_sym r;
	char path[PATH_MAX];

	(void)state;
	/* build/fixtures/fx_dl.debug sits next to fx_dl */
	fx_path(path, sizeof(path), "fx_dl");
	s = new_sym("/nonexistent");
	assert_string_equal(stripped_static(s, path, "fx_dl.nm", &r), "fx_static");
	st_symbolizer__free(s);

	assert_non_null(mkdtemp(tmp));
	snprintf(root, sizeof(root), "%s/root", tmp);

	/* DIR/.debug/NAME */
	snprintf(dbg, sizeof(dbg), "%s/a/.debug", tmp);
	assert_string_equal(debuglink_case(tmp, "a", dbg, root, "fx_dl.debug", &r),
			    "fx_static");
	/* DEBUG_DIR/DIR/NAME */
	snprintf(dbg, sizeof(dbg), "%s%s/b", root, tmp);
	assert_string_equal(debuglink_case(tmp, "b", dbg, root, "fx_dl.debug", &r),
			    "fx_static");
	/* DIR/NAME with the wrong CRC (another image's debug file): not used */
	snprintf(dbg, sizeof(dbg), "%s/c", tmp);
	assert_null(debuglink_case(tmp, "c", dbg, root, "fx_bid.debug", &r));
	/* nothing at all */
	snprintf(dbg, sizeof(dbg), "%s/elsewhere", tmp);
	assert_null(debuglink_case(tmp, "d", dbg, root, "fx_dl.debug", &r));
	fx_rmtree(tmp);
}

static void test_kallsyms(void **state)
{
	static const char text[] =
		"0000000000000000 A fixed_percpu_data\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 T startup_64\n"
		"ffffffff81000100 t helper_local\n"
		"ffffffff81000200 D some_data\n"
		"ffffffff81000300 W weak_fn\n"
		"ffffffff81000400 T _etext\n"
		"garbage line\n"
		"ffffffffc0001000 t mod_fn\t[mymod]\n"
		"ffffffffc0001080 T mod_fn2\t[mymod]\n"
		"ffffffffc0002000 t other_fn\t[other]\n"
		"ffffffffc0002040 b other_bss\t[other]";	/* no final newline */
	char tmp[] = "/tmp/st-test-ksymsXXXXXX";
	struct st_symbolizer_opts opts = { .kallsyms = tmp };
	struct st_symbolizer_stats ss;
	struct st_symbolizer *s;
	struct st_sym r;
	int fd;

	(void)state;
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	s = st_symbolizer__new(&opts);
	assert_non_null(s);

	assert_int_equal(st_symbolizer__resolve_kernel(s, 0xffffffff81000150ull, false, &r), 0);
	unlink(tmp);	/* loaded once, on first use */
	assert_func(&r, "helper_local", 0xffffffff81000100ull, 0x50);
	assert_string_equal(r.module, "[kernel.kallsyms]");
	assert_null(r.build_id);
	assert_int_equal(r.module_offset, 0xffffffff81000150ull);

	/* aliases: one name, deterministic */
	st_symbolizer__resolve_kernel(s, 0xffffffff81000010ull, false, &r);
	assert_func(&r, "startup_64", 0xffffffff81000000ull, 0x10);
	/* return address at a symbol start belongs to the previous one */
	st_symbolizer__resolve_kernel(s, 0xffffffff81000100ull, true, &r);
	assert_func(&r, "startup_64", 0xffffffff81000000ull, 0x100);
	/* data ends the text symbol before it */
	st_symbolizer__resolve_kernel(s, 0xffffffff81000250ull, false, &r);
	assert_null(r.function);
	assert_string_equal(r.module, "[kernel.kallsyms]");
	assert_int_equal(r.module_offset, 0xffffffff81000250ull);
	st_symbolizer__resolve_kernel(s, 0xffffffff81000300ull, false, &r);
	assert_func(&r, "weak_fn", 0xffffffff81000300ull, 0);
	/* below everything */
	st_symbolizer__resolve_kernel(s, 0xffffffff80000000ull, false, &r);
	assert_null(r.function);
	/* modules */
	st_symbolizer__resolve_kernel(s, 0xffffffffc0001084ull, false, &r);
	assert_func(&r, "mod_fn2", 0xffffffffc0001080ull, 4);
	assert_string_equal(r.module, "[mymod]");
	st_symbolizer__resolve_kernel(s, 0xffffffffc0001004ull, false, &r);
	assert_func(&r, "mod_fn", 0xffffffffc0001000ull, 4);
	assert_string_equal(r.module, "[mymod]");
	st_symbolizer__resolve_kernel(s, 0xffffffffc0002010ull, false, &r);
	assert_func(&r, "other_fn", 0xffffffffc0002000ull, 0x10);
	assert_string_equal(r.module, "[other]");
	st_symbolizer__resolve_kernel(s, 0xffffffffc0002040ull, false, &r);
	assert_null(r.function);
	/* the unnamed ones are counted: 0x...250, below everything, the bss */
	st_symbolizer__stats(s, &ss);
	assert_int_equal(ss.kernel_unnamed, 3);
	assert_int_equal(ss.kernel_symbols, 7);	/* text symbols, one per address */
	assert_int_equal(ss.kernel_read_error, 0);
	st_symbolizer__free(s);
}

/* A kallsyms whose read fails (here a directory: EISDIR) is tried three
 * times, then counted as incomplete; its addresses stay unnamed. */
static void test_kallsyms_read_fails(void **state)
{
	char tmp[] = "/tmp/st-test-ksymdirXXXXXX";
	struct st_symbolizer_opts opts = { .kallsyms = tmp };
	struct st_symbolizer_stats ss;
	struct st_symbolizer *s;
	struct st_sym r;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	s = st_symbolizer__new(&opts);
	assert_non_null(s);
	assert_int_equal(st_symbolizer__resolve_kernel(s, 0xffffffff81000000ull, false, &r), 0);
	assert_null(r.function);
	st_symbolizer__stats(s, &ss);
	assert_int_equal(ss.kernel_read_error, EIO);
	assert_int_equal(ss.kernel_unnamed, 1);
	st_symbolizer__free(s);
	rmdir(tmp);
}

static void test_kallsyms_missing(void **state)
{
	struct st_symbolizer_opts opts = { .kallsyms = "/nonexistent/kallsyms" };
	struct st_symbolizer *s = st_symbolizer__new(&opts);
	struct st_sym r;

	(void)state;
	assert_non_null(s);
	assert_int_equal(st_symbolizer__resolve_kernel(s, 0xffffffff81000000ull, false, &r), 0);
	assert_null(r.function);
	assert_string_equal(r.module, "[kernel.kallsyms]");
	st_symbolizer__free(s);
}

/* The runtime address of the vDSO's clock_gettime, read independently. */
static __u64 vdso_clock_gettime(__u64 base)
{
	const Elf64_Ehdr *raw = (const void *)(uintptr_t)base;
	__u64 addr = 0, adj = 0;
	Elf_Scn *scn = NULL;
	bool have_adj = false;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t i, n;
	Elf *elf;

	assert_int_equal(raw->e_ident[EI_CLASS], ELFCLASS64);
	elf = elf_memory((char *)(uintptr_t)base, raw->e_shoff + raw->e_shnum * raw->e_shentsize);
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &n), 0);
	for (i = 0; i < n && !have_adj; i++) {
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD) {
			adj = ph.p_vaddr - ph.p_offset;
			have_adj = true;
		}
	}
	assert_true(have_adj);
	while ((scn = elf_nextscn(elf, scn)) && !addr) {
		Elf_Data *d;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			if (!gelf_getsym(d, i, &sym))
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && strstr(name, "clock_gettime") && !strstr(name, "64"))
				addr = base + sym.st_value - adj;
		}
	}
	elf_end(elf);
	return addr;
}

static void test_vdso(void **state)
{
	__u64 base = getauxval(AT_SYSINFO_EHDR), fn;
	struct st_symbolizer *s;
	struct st_module *m;
	struct st_sym r;
	size_t len;

	(void)state;
	if (!base) {	/* e.g. under valgrind */
		printf("    skipped: no vDSO in this process\n");
		skip();
	}
	s = new_sym("/nonexistent");
	m = st_symbolizer__module(s, "[vdso]", "/proc/self/map_files/0-0");
	assert_non_null(m);
	assert_string_equal(st_module__path(m), "[vdso]");
	assert_ptr_equal(st_symbolizer__module(s, "[vdso]", NULL), m);

	fn = vdso_clock_gettime(base);
	assert_true(fn > base);
	assert_int_equal(st_symbolizer__resolve(s, m, "[vdso]", base, 0, fn + 1, false, &r), 0);
	assert_non_null(r.function);
	len = strlen(r.function);
	assert_true(len >= 13);
	assert_string_equal(r.function + len - 13, "clock_gettime");
	assert_int_equal(r.offset, 1);
	assert_int_equal(r.func_addr, fn);
	assert_string_equal(r.module, "[vdso]");
	st_symbolizer__free(s);
}

/* ---- reference counting and the bounded cache ---------------------------- */

static struct st_symbolizer *new_capped(int cap)
{
	struct st_symbolizer_opts opts = { .debug_dir = "/nonexistent", .max_unused_modules = cap };
	struct st_symbolizer *s = st_symbolizer__new(&opts);

	assert_non_null(s);
	return s;
}

static void assert_modules(const struct st_symbolizer *s, size_t total, size_t unused)
{
	size_t u = 12345;

	assert_int_equal(st_symbolizer__modules(s, &u), total);
	assert_int_equal(u, unused);
}

/* tmp/fx_dl (no build id: a module per file name) with its debug file next
 * to it, and n hard links tmp/lNN to it: n distinct modules, each with
 * fx_static found through .gnu_debuglink. */
static void make_links(const char *tmp, int n)
{
	char src[PATH_MAX], dst[PATH_MAX], link_path[PATH_MAX];
	int i;

	fx_path(src, sizeof(src), "fx_dl");
	snprintf(dst, sizeof(dst), "%s/fx_dl", tmp);
	assert_int_equal(fx_copy(src, dst), 0);
	fx_path(src, sizeof(src), "fx_dl.debug");
	snprintf(link_path, sizeof(link_path), "%s/fx_dl.debug", tmp);
	assert_int_equal(fx_copy(src, link_path), 0);
	for (i = 0; i < n; i++) {
		snprintf(link_path, sizeof(link_path), "%s/l%02d", tmp, i);
		assert_int_equal(link(dst, link_path), 0);
	}
}

static void link_path(char *buf, size_t size, const char *tmp, int i)
{
	snprintf(buf, size, "%s/l%02d", tmp, i);
}

/* Resolve fx_static in module m (an image built from fx_main.c at path). */
static void assert_static(struct st_symbolizer *s, struct st_module *m, const char *path,
			  const char *nmf)
{
	struct fx_map map;
	struct fx_nm nm;
	struct st_sym r;

	fx_exec_mapping(path, PIE_BIAS, &map);
	assert_true(fx_nm(nmf, "fx_static", &nm));
	assert_int_equal(st_symbolizer__resolve(s, m, path, map.start, map.pgoff,
						PIE_BIAS + nm.addr + 1, false, &r), 0);
	assert_non_null(r.function);
	assert_string_equal(r.function, "fx_static");
	assert_int_equal(r.offset, 1);
}

/* The paths of three distinct modules (each PATH_MAX): fx_pie, libfx.so and
 * a link to fx_dl in tmp (a mkdtemp() template, made here). */
static void three_modules(char *tmp, char *pie, char *lib, char *l0)
{
	fx_path(pie, PATH_MAX, "fx_pie");
	fx_path(lib, PATH_MAX, "libfx.so");
	assert_non_null(mkdtemp(tmp));
	make_links(tmp, 1);
	link_path(l0, PATH_MAX, tmp, 0);
}

static void test_refcount(void **state)
{
	char pie[PATH_MAX], lib[PATH_MAX], tmp[] = "/tmp/st-test-refXXXXXX", l0[PATH_MAX];
	struct st_module *a, *b, *c;
	struct st_symbolizer *s;

	(void)state;
	three_modules(tmp, pie, lib, l0);
	s = new_capped(2);
	assert_modules(s, 0, 0);

	a = st_symbolizer__module(s, pie, NULL);
	b = st_symbolizer__module(s, lib, NULL);
	c = st_symbolizer__module(s, l0, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_modules(s, 3, 0);

	/* two references: the first release keeps it in use */
	assert_ptr_equal(st_symbolizer__module(s, pie, NULL), a);
	st_symbolizer__release(s, a);
	assert_modules(s, 3, 0);
	st_symbolizer__release(s, a);
	assert_modules(s, 3, 1);
	st_symbolizer__release(NULL, a);
	st_symbolizer__release(s, NULL);
	assert_modules(s, 3, 1);

	/* revived: the same module, found by its file identity; its symbols,
	 * never read, are read from the file that revived it */
	assert_ptr_equal(st_symbolizer__module(s, pie, NULL), a);
	assert_modules(s, 3, 0);
	assert_static(s, a, pie, "fx_pie.nm");

	/* LRU order: release b, then a; c beyond the cap of 2 evicts b */
	st_symbolizer__release(s, b);
	st_symbolizer__release(s, a);
	assert_modules(s, 3, 2);
	st_symbolizer__release(s, c);
	assert_modules(s, 2, 2);
	/* a and c are cached (revived: nothing new), b is not (a new module) */
	assert_ptr_equal(st_symbolizer__module(s, l0, NULL), c);
	assert_modules(s, 2, 1);
	assert_ptr_equal(st_symbolizer__module(s, pie, NULL), a);
	assert_modules(s, 2, 0);
	b = st_symbolizer__module(s, lib, NULL);
	assert_non_null(b);
	assert_modules(s, 3, 0);
	assert_static(s, c, l0, "fx_dl.nm");

	/* a revival refreshes: c, a, b released; a revived and released again
	 * is the newest, so the next eviction takes c */
	st_symbolizer__release(s, c);
	st_symbolizer__release(s, a);
	assert_modules(s, 3, 2);
	assert_ptr_equal(st_symbolizer__module(s, pie, NULL), a);
	st_symbolizer__release(s, a);	/* LRU: a, c */
	st_symbolizer__release(s, b);	/* evicts c */
	assert_modules(s, 2, 2);
	assert_ptr_equal(st_symbolizer__module(s, pie, NULL), a);
	assert_ptr_equal(st_symbolizer__module(s, lib, NULL), b);
	assert_modules(s, 2, 0);
	/* st_symbolizer__free() frees referenced modules too */
	st_symbolizer__free(s);
	fx_rmtree(tmp);

	assert_int_equal(st_symbolizer__modules(NULL, NULL), 0);
	assert_int_equal(st_symbolizer__memory(NULL), 0);
}

/* An unreferenced module unused longer than idle_s is freed at the next
 * release, whatever the count and byte bounds allow; one released since
 * stays. */
static void test_idle_modules_expire(void **state)
{
	struct st_symbolizer_opts opts = { .debug_dir = "/nonexistent", .max_unused_modules = 8,
					   .idle_s = 0.2 };
	char pie[PATH_MAX], lib[PATH_MAX], tmp[] = "/tmp/st-test-idleXXXXXX", l0[PATH_MAX];
	struct st_symbolizer_stats st;
	struct st_module *a, *b, *c;
	struct st_symbolizer *s;

	(void)state;
	three_modules(tmp, pie, lib, l0);
	s = st_symbolizer__new(&opts);
	assert_non_null(s);
	a = st_symbolizer__module(s, pie, NULL);
	b = st_symbolizer__module(s, lib, NULL);
	c = st_symbolizer__module(s, l0, NULL);
	assert_true(a && b && c);
	st_symbolizer__release(s, a);
	st_symbolizer__release(s, b);
	assert_modules(s, 3, 2);
	usleep(300 * 1000);	/* a and b idle past 0.2 s */
	assert_ptr_equal(st_symbolizer__module(s, lib, NULL), b);	/* b used again */
	assert_modules(s, 3, 1);
	st_symbolizer__release(s, c);	/* the release that looks: a goes, c stays */
	assert_modules(s, 2, 1);
	st_symbolizer__release(s, b);	/* b's idle time starts again */
	assert_modules(s, 2, 2);
	assert_ptr_equal(st_symbolizer__module(s, l0, NULL), c);
	st_symbolizer__stats(s, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.expired, 1);
	st_symbolizer__release(s, c);
	st_symbolizer__free(s);

	/* < 0: kept as before, the count and bytes allowing */
	opts.idle_s = -1;
	s = st_symbolizer__new(&opts);
	assert_non_null(s);
	a = st_symbolizer__module(s, pie, NULL);
	st_symbolizer__release(s, a);
	usleep(10 * 1000);
	b = st_symbolizer__module(s, lib, NULL);
	st_symbolizer__release(s, b);
	assert_modules(s, 2, 2);
	st_symbolizer__free(s);
	fx_rmtree(tmp);
}

/* A cached module found by build id under another name: revived, and it
 * reads its symbols from that other file. */
static void test_revive_by_build_id(void **state)
{
	char pie[PATH_MAX], tmp[] = "/tmp/st-test-rbidXXXXXX", copy[PATH_MAX];
	struct st_symbolizer *s;
	struct st_module *m;

	(void)state;
	if (geteuid() != 0) {
		printf("    skipped: needs root (only root's files are shared by build id)\n");
		skip();
	}
	fx_path(pie, sizeof(pie), "fx_pie");
	assert_non_null(mkdtemp(tmp));
	snprintf(copy, sizeof(copy), "%s/fx_pie", tmp);
	assert_int_equal(fx_copy(pie, copy), 0);
	s = new_capped(2);

	m = st_symbolizer__module(s, pie, NULL);
	assert_non_null(m);
	st_symbolizer__release(s, m);
	assert_modules(s, 1, 1);
	assert_ptr_equal(st_symbolizer__module(s, copy, NULL), m);
	assert_modules(s, 1, 0);
	unlink(copy);	/* what it needs is open */
	assert_static(s, m, pie, "fx_pie.nm");
	st_symbolizer__release(s, m);
	st_symbolizer__free(s);
	fx_rmtree(tmp);
}

/* Resolve function `name` of fixture `file` (nm file nmf) in module m. */
static void assert_own(struct st_symbolizer *s, struct st_module *m, const char *path,
		       const char *nmf, const char *name)
{
	struct fx_map map;
	struct fx_nm nm;
	struct st_sym r;

	fx_exec_mapping(path, PIE_BIAS, &map);
	assert_true(fx_nm(nmf, name, &nm));
	assert_int_equal(st_symbolizer__resolve(s, m, path, map.start, map.pgoff,
						PIE_BIAS + nm.addr, false, &r), 0);
	assert_non_null(r.function);
	assert_string_equal(r.function, name);
}

/* fx_same_a (root's) and fx_same_b (nobody's) carry the same build id with
 * different code: whichever comes first, each keeps its own symbols, and
 * the collision is counted; two root-owned copies of one file are shared. */
static void test_build_id_impostor(void **state)
{
	char a[PATH_MAX], b[PATH_MAX], tmp[] = "/tmp/st-test-impXXXXXX";
	char real[PATH_MAX], imp[PATH_MAX], copy[PATH_MAX];
	struct st_symbolizer_stats ss;
	struct st_module *mr, *mi, *mc;
	struct st_symbolizer *s;

	(void)state;
	if (geteuid() != 0) {
		printf("    skipped: needs root (files owned by root and by another user)\n");
		skip();
	}
	fx_path(a, sizeof(a), "fx_same_a");
	fx_path(b, sizeof(b), "fx_same_b");
	assert_non_null(mkdtemp(tmp));
	snprintf(real, sizeof(real), "%s/real", tmp);
	snprintf(imp, sizeof(imp), "%s/impostor", tmp);
	snprintf(copy, sizeof(copy), "%s/copy", tmp);
	assert_int_equal(fx_copy(a, real), 0);
	assert_int_equal(fx_copy(a, copy), 0);
	assert_int_equal(fx_copy(b, imp), 0);
	assert_int_equal(chmod(real, 0755) | chmod(copy, 0755), 0);
	assert_int_equal(chown(imp, 65534, 65534), 0);

	for (int order = 0; order < 2; order++) {
		s = new_sym("/nonexistent");
		if (order == 0) {
			mi = st_symbolizer__module(s, imp, NULL);
			mr = st_symbolizer__module(s, real, NULL);
		} else {
			mr = st_symbolizer__module(s, real, NULL);
			mi = st_symbolizer__module(s, imp, NULL);
		}
		assert_non_null(mi);
		assert_non_null(mr);
		assert_ptr_not_equal(mi, mr);
		assert_string_equal(st_module__build_id(mi), st_module__build_id(mr));
		assert_own(s, mr, real, "fx_same_a.nm", "fx_add");
		assert_own(s, mi, imp, "fx_same_b.nm", "fx_stack");
		st_symbolizer__stats(s, &ss);
		assert_int_equal(ss.unshared, 1);
		/* root's copy of the same file: shared by build id */
		mc = st_symbolizer__module(s, copy, NULL);
		assert_ptr_equal(mc, mr);
		st_symbolizer__release(s, mc);
		st_symbolizer__release(s, mi);
		st_symbolizer__release(s, mr);
		st_symbolizer__free(s);
	}
	fx_rmtree(tmp);
}

/* Memory goes back down when a module is evicted, and stays flat while
 * modules come and go. */
static void test_eviction_memory(void **state)
{
	enum { N = 12, CAP = 2 };
	char tmp[] = "/tmp/st-test-evXXXXXX", path[PATH_MAX];
	size_t base, held[N], after[N], one;
	struct st_symbolizer *s;
	struct st_module *m;
	int i;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	make_links(tmp, N);
	s = new_capped(CAP);
	base = st_symbolizer__memory(s);
	for (i = 0; i < N; i++) {
		link_path(path, sizeof(path), tmp, i);
		m = st_symbolizer__module(s, path, NULL);
		assert_non_null(m);
		assert_static(s, m, path, "fx_dl.nm");
		held[i] = st_symbolizer__memory(s);
		st_symbolizer__release(s, m);
		after[i] = st_symbolizer__memory(s);
		assert_modules(s, i < CAP ? (size_t)i + 1 : CAP, i < CAP ? (size_t)i + 1 : CAP);
		assert_true(held[i] > (i ? after[i - 1] : base));
	}
	one = held[0] - base;	/* about one module, with its symbols */
	assert_true(one > 1000);
	/* cached: nothing freed */
	assert_int_equal(after[0], held[0]);
	assert_int_equal(after[1], held[1]);
	/* beyond the cap: one module freed per module added */
	for (i = CAP; i < N; i++) {
		assert_true(after[i] < held[i]);
		assert_true(held[i] - after[i] > one / 2);
		assert_true(after[i] < after[CAP - 1] + one / 4);
		assert_true(after[i] + one / 4 > after[CAP - 1]);
	}
	st_symbolizer__free(s);

	/* no cache at all: released means freed */
	s = new_capped(-1);
	for (i = 0; i < 3; i++) {
		link_path(path, sizeof(path), tmp, i);
		m = st_symbolizer__module(s, path, NULL);
		assert_non_null(m);
		assert_static(s, m, path, "fx_dl.nm");
		assert_modules(s, 1, 0);
		held[i] = st_symbolizer__memory(s);
		st_symbolizer__release(s, m);
		assert_modules(s, 0, 0);
		after[i] = st_symbolizer__memory(s);
		assert_true(held[i] - after[i] > one / 2);
	}
	assert_true(after[2] < after[0] + one / 4);
	st_symbolizer__free(s);
	fx_rmtree(tmp);
}

/* The daemon's memory budget: unused modules are evicted (LRU) to keep
 * the caches within it, also when another part charges it; a module whose
 * symbols do not fit even then keeps none (module+offset), counted and
 * named. */
static void test_memory_budget(void **state)
{
	enum { N = 6 };
	char tmp[] = "/tmp/st-test-budgetXXXXXX", path[PATH_MAX];
	struct st_symbolizer_opts opts = { .debug_dir = "/nonexistent", .max_unused_modules = 64 };
	struct st_symbolizer_stats ss;
	struct st_budget_stats bs;
	struct st_module *m, *held[3];
	struct st_symbolizer *s;
	struct st_budget *b;
	size_t base, one;
	struct fx_map map;
	struct st_sym r;
	int i;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	make_links(tmp, N);
	/* one module's bytes, without a budget */
	s = new_capped(64);
	base = st_symbolizer__memory(s);
	link_path(path, sizeof(path), tmp, 0);
	m = st_symbolizer__module(s, path, NULL);
	assert_static(s, m, path, "fx_dl.nm");
	one = st_symbolizer__memory(s) - base;
	st_symbolizer__free(s);

	b = st_budget__new(base + 2 * one + one / 2);
	opts.budget = b;
	s = st_symbolizer__new(&opts);
	assert_non_null(s);
	for (i = 0; i < N; i++) {	/* used and released: two stay cached */
		link_path(path, sizeof(path), tmp, i);
		m = st_symbolizer__module(s, path, NULL);
		assert_static(s, m, path, "fx_dl.nm");
		st_symbolizer__release(s, m);
		st_budget__stats(b, &bs);
		assert_true(bs.part[ST_BUDGET_SYMBOLS] <= bs.limit);
	}
	assert_modules(s, 2, 2);
	st_symbolizer__stats(s, &ss);
	assert_int_equal(ss.evicted, N - 2);
	assert_int_equal(ss.over_budget, 0);
	/* another part's charge: the cached modules make room */
	assert_int_equal(st_budget__charge(b, ST_BUDGET_MAPS, one), 0);
	assert_modules(s, 1, 1);
	st_budget__uncharge(b, ST_BUDGET_MAPS, one);
	/* three held at once: the third's symbols do not fit */
	for (i = 0; i < 3; i++) {
		link_path(path, sizeof(path), tmp, i);
		held[i] = st_symbolizer__module(s, path, NULL);
		assert_non_null(held[i]);
		if (i < 2)
			assert_static(s, held[i], path, "fx_dl.nm");
	}
	fx_exec_mapping(path, PIE_BIAS, &map);
	assert_int_equal(st_symbolizer__resolve(s, held[2], path, map.start, map.pgoff,
						map.start + 0x10, false, &r), 0);
	assert_null(r.function);
	assert_non_null(r.module);
	st_symbolizer__stats(s, &ss);
	assert_int_equal(ss.over_budget, 1);
	assert_string_equal(ss.over_budget_path, path);
	st_budget__stats(b, &bs);
	assert_true(bs.part[ST_BUDGET_SYMBOLS] <= bs.limit);
	for (i = 0; i < 3; i++)
		st_symbolizer__release(s, held[i]);
	st_symbolizer__free(s);
	st_budget__stats(b, &bs);
	assert_int_equal(bs.used, 0);
	st_budget__free(b);
	fx_rmtree(tmp);
}

/* Many modules coming and going through the key map (deletions in the
 * middle of probe chains): the cached ones are always found again. */
static void test_many_modules(void **state)
{
	enum { N = 60, CAP = 8 };
	char tmp[] = "/tmp/st-test-manyXXXXXX", path[PATH_MAX];
	struct st_module *mods[N];
	struct st_symbolizer *s;
	int i, round;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	make_links(tmp, N);
	s = new_capped(CAP);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < N; i++) {
			link_path(path, sizeof(path), tmp, i);
			mods[i] = st_symbolizer__module(s, path, NULL);
			assert_non_null(mods[i]);
		}
		assert_modules(s, N, 0);
		/* release odd ones first, then even ones: the last CAP even
		 * ones stay cached */
		for (i = 1; i < N; i += 2)
			st_symbolizer__release(s, mods[i]);
		for (i = 0; i < N; i += 2)
			st_symbolizer__release(s, mods[i]);
		assert_modules(s, CAP, CAP);
		for (i = N - 2 * CAP; i < N; i += 2) {
			link_path(path, sizeof(path), tmp, i);
			assert_ptr_equal(st_symbolizer__module(s, path, NULL), mods[i]);
			st_symbolizer__release(s, mods[i]);
		}
		assert_modules(s, CAP, CAP);
	}
	st_symbolizer__free(s);
	fx_rmtree(tmp);
}

static void test_vdso_pinned(void **state)
{
	struct st_symbolizer *s;
	struct st_module *m;

	(void)state;
	if (!getauxval(AT_SYSINFO_EHDR)) {
		printf("    skipped: no vDSO in this process\n");
		skip();
	}
	s = new_capped(-1);
	m = st_symbolizer__module(s, "[vdso]", NULL);
	assert_non_null(m);
	assert_modules(s, 1, 0);
	st_symbolizer__release(s, m);
	st_symbolizer__release(s, m);	/* one too many: still the symbolizer's */
	assert_modules(s, 1, 0);
	assert_ptr_equal(st_symbolizer__module(s, "[vdso]", NULL), m);
	st_symbolizer__free(s);
}

/* Without a module, the module name is the path without " (deleted)". */
/* The PLT's entries are named as objdump names them ("NAME@plt"), the
 * lazy-binding trampoline before them ".plt": this test program's own
 * .plt, entry by entry. */
static void test_plt_names(void **state)
{
	struct st_strtab *names = st_strtab__new();
	struct st_symtab *t = st_symtab__new();
	const struct st_symbol *sym;
	char exe[4096], cmd[4200], line[512], name[400];
	unsigned long long addr;
	struct st_elf *e;
	size_t checked = 0;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f;

	(void)state;
	assert_true(len > 0);
	exe[len] = '\0';
	assert_non_null(names);
	assert_non_null(t);
	assert_int_equal(st_elf__open(exe, &e), 0);
	assert_true(st_elf__load_plt_symbols(e, t, names) > 1);
	st_symtab__finish(t);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec '%s'", exe);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx <%399[^>]>:", &addr, name) != 2)
			continue;
		sym = st_symtab__find(t, addr + 4);
		assert_non_null(sym);
		assert_int_equal(sym->start, addr);
		if (strstr(name, "@plt-0x"))	/* objdump's name for the first entry */
			assert_string_equal(sym->name, ".plt");
		else
			assert_string_equal(sym->name, name);
		checked++;
	}
	assert_int_equal(pclose(f), 0);
	assert_true(checked >= 5);
	st_elf__free(e);
	st_symtab__free(t);
	st_strtab__free(names);
}

/* The fixture (or absolute path) file, which has no symbol table. */
static struct st_elf *open_stripped(const char *file)
{
	char path[PATH_MAX];
	struct st_elf *e;

	if (file[0] == '/')
		snprintf(path, sizeof(path), "%s", file);
	else
		fx_path(path, sizeof(path), file);
	assert_int_equal(st_elf__open(path, &e), 0);
	assert_false(st_elf__has_section_type(e, SHT_SYMTAB));
	return e;
}

/* A stripped program's _start and main, found without symbols, have the
 * addresses and sizes nm gives for the unstripped file; a library gets
 * none, and real symbols win over them. */
static void check_entry_names(const char *file, const char *nmfile)
{
	static const char *const names[] = { "_start", "main" };
	struct st_strtab *strs = st_strtab__new();
	struct st_symtab *t = st_symtab__new();
	const struct st_symbol *sym;
	struct st_elf *e;
	struct fx_nm nm;
	size_t i;

	assert_non_null(strs);
	assert_non_null(t);
	e = open_stripped(file);
	assert_int_equal(st_entry__load_symbols(e, t, strs), 2);
	st_symtab__finish(t);
	for (i = 0; i < 2; i++) {
		assert_true(fx_nm(nmfile, names[i], &nm));
		sym = st_symtab__find(t, nm.addr + 1);
		assert_non_null(sym);
		assert_string_equal(sym->name, names[i]);
		assert_int_equal(sym->start, nm.addr);
		if (nm.sized)
			assert_int_equal(sym->size, nm.size);
	}
	st_elf__free(e);
	st_symtab__free(t);
	st_strtab__free(strs);
}

/* _start alone, at the ELF header's entry point (and at nm's _start when
 * nmfile is given) in an image with no symbol table. */
static void check_self_started(const char *file, const char *nmfile)
{
	struct st_strtab *strs = st_strtab__new();
	struct st_symtab *t = st_symtab__new();
	const struct st_symbol *sym;
	struct st_elf *e;
	struct fx_nm nm;
	GElf_Ehdr eh;

	assert_non_null(strs);
	assert_non_null(t);
	e = open_stripped(file);
	assert_non_null(gelf_getehdr(st_elf__elf(e), &eh));
	assert_int_equal(st_entry__load_symbols(e, t, strs), 1);
	st_symtab__finish(t);
	sym = st_symtab__find(t, eh.e_entry);
	assert_non_null(sym);
	assert_string_equal(sym->name, "_start");
	assert_int_equal(sym->start, eh.e_entry);
	if (nmfile) {
		assert_true(fx_nm(nmfile, "_start", &nm));
		assert_int_equal(sym->start, nm.addr);
	}
	st_elf__free(e);
	st_symtab__free(t);
	st_strtab__free(strs);
}

static void test_entry_names(void **state)
{
	struct st_strtab *strs = st_strtab__new();
	struct st_symtab *t = st_symtab__new();
	const struct st_symbol *sym;
	char path[PATH_MAX];
	struct st_elf *e;
	struct fx_nm nm;

	(void)state;
	check_entry_names("fx_pie_strip", "fx_pie.nm");
	check_entry_names("fx_nopie_strip", "fx_nopie.nm");
	/* a static-pie program and the dynamic loader: entered by the kernel
	 * at e_entry, _start (its main is not looked for) */
	check_self_started("fx_spie_strip", "fx_spie.nm");
	check_self_started("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", NULL);
	/* a shared library is no program */
	fx_path(path, sizeof(path), "libfx.so");
	assert_int_equal(st_elf__open(path, &e), 0);
	assert_int_equal(st_entry__load_symbols(e, t, strs), 0);
	st_elf__free(e);
	/* with .symtab, the real names win at the same addresses */
	fx_path(path, sizeof(path), "fx_pie");
	assert_int_equal(st_elf__open(path, &e), 0);
	assert_int_equal(st_entry__load_symbols(e, t, strs), 2);
	assert_true(st_elf__load_symbols(e, SHT_SYMTAB, t, strs, NULL) > 0);
	st_symtab__finish(t);
	assert_true(fx_nm("fx_pie.nm", "main", &nm));
	sym = st_symtab__find(t, nm.addr);
	assert_non_null(sym);
	assert_string_equal(sym->name, "main");
	assert_int_equal(sym->bind, ST_BIND_GLOBAL);
	st_elf__free(e);
	st_symtab__free(t);
	st_strtab__free(strs);
}

static void test_no_module_name(void **state)
{
	struct st_symbolizer *s = new_sym("/nonexistent");
	struct st_sym r;

	(void)state;
	assert_int_equal(st_symbolizer__resolve(s, NULL, "/a/b.so (deleted)", 0x1000, 0,
						0x1010, false, &r), 0);
	assert_string_equal(r.module, "/a/b.so");
	assert_int_equal(r.module_offset, 0x10);
	assert_int_equal(st_symbolizer__resolve(s, NULL, NULL, 0x1000, 0, 0x1010, false, &r), 0);
	assert_null(r.module);
	st_symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie_functions),
		cmocka_unit_test(test_is_return),
		cmocka_unit_test(test_gap_and_nosize),
		cmocka_unit_test(test_shared_lib),
		cmocka_unit_test(test_modules),
		cmocka_unit_test(test_debug_build_id),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_kallsyms_read_fails),
		cmocka_unit_test(test_kallsyms_missing),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_refcount),
		cmocka_unit_test(test_idle_modules_expire),
		cmocka_unit_test(test_revive_by_build_id),
		cmocka_unit_test(test_build_id_impostor),
		cmocka_unit_test(test_eviction_memory),
		cmocka_unit_test(test_many_modules),
		cmocka_unit_test(test_memory_budget),
		cmocka_unit_test(test_vdso_pinned),
		cmocka_unit_test(test_no_module_name),
		cmocka_unit_test(test_plt_names),
		cmocka_unit_test(test_entry_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

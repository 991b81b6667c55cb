/* test_datasym.c - st_symbolizer__resolve_data() and
 * st_symbolizer__stack_var() against the data fixtures of fixtures.mk:
 * data addresses through fake mappings built from the PT_LOAD headers
 * (read here with gelf) and nm; stack variables from real runs of the
 * fixture library (dlopen()ed: its functions record the addresses of their
 * locals and parameters and their frame address; CFA = frame + 16). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <gelf.h>

#include "binsym/symbolizer.h"
#include "tests/unit/fixtures/fx_util.h"
#include "tests/unit/fixtures/fx_map.h"

#define PAGE 0x1000ull
#define PIE_BIAS 0x555555554000ull
#define LIB_BIAS 0x7f1234500000ull
#define MAX_LOADS 16

struct loads {
	GElf_Phdr ph[MAX_LOADS];
	size_t n;
	int exec;	/* index of the executable one */
	int rw;		/* index of the writable one (with .bss) */
};

static void read_loads(const char *path, struct loads *out)
{
	size_t i, n = 0;
	GElf_Phdr ph;
	int fd;
	Elf *elf = fx_elf_open(path, &fd, &n);

	memset(out, 0, sizeof(*out));
	out->exec = out->rw = -1;
	for (i = 0; i < n; i++) {
		assert_non_null(gelf_getphdr(elf, i, &ph));
		if (ph.p_type != PT_LOAD)
			continue;
		assert_true(out->n < MAX_LOADS);
		if (ph.p_flags & PF_X)
			out->exec = (int)out->n;
		if (ph.p_flags & PF_W)
			out->rw = (int)out->n;
		out->ph[out->n++] = ph;
	}
	elf_end(elf);
	close(fd);
	assert_true(out->exec >= 0 && out->rw >= 0);
}

/* The mapping of PT_LOAD i at load bias `bias`, as /proc/PID/maps shows it. */
static void seg_mapping(const struct loads *l, int i, __u64 bias, __u64 *start, __u64 *pgoff)
{
	*start = bias + (l->ph[i].p_vaddr & ~(PAGE - 1));
	*pgoff = l->ph[i].p_offset & ~(PAGE - 1);
}

static __u64 extent_end(const struct loads *l)
{
	__u64 end = 0;
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (l->ph[i].p_vaddr + l->ph[i].p_memsz > end)
			end = l->ph[i].p_vaddr + l->ph[i].p_memsz;
	}
	return end;
}

static struct st_symbolizer *new_sym(int max_unused)
{
	struct st_symbolizer_opts opts = { .debug_dir = "/nonexistent",
					   .max_unused_modules = max_unused };
	struct st_symbolizer *s = st_symbolizer__new(&opts);

	assert_non_null(s);
	return s;
}

/* Expect addr (nm symbol `name` + delta, at bias) to be `name` + delta. */
static void expect_data(struct st_symbolizer *s, struct st_module *m, const char *path,
			__u64 map_start, __u64 map_pgoff, __u64 bias, const char *nmf,
			const char *name, __u64 delta)
{
	struct fx_nm nm;
	struct st_sym r;

	assert_true(fx_nm(nmf, name, &nm));
	assert_int_equal(st_symbolizer__resolve_data(s, m, path, map_start, map_pgoff,
						     bias + nm.addr + delta, &r), 0);
	assert_non_null(r.function);
	assert_string_equal(r.function, name);
	assert_int_equal(r.offset, delta);
	assert_int_equal(r.module_offset, nm.addr + delta);
	assert_int_equal(r.func_addr, bias + nm.addr);
	assert_string_equal(r.module, path);
}

/* The data symbols of an image built from fx_data.c (nm file nmf), through
 * its executable mapping at bias. */
static void check_data(const char *file, const char *nmf, __u64 bias)
{
	char path[PATH_MAX], calls[256];
	struct fx_nm bss, nosize, after, fcalls;
	__u64 start, pgoff, file_end, idx, end;
	struct st_symbolizer *s;
	struct st_module *m;
	struct loads l;
	struct st_sym r;
	size_t before;

	fx_path(path, sizeof(path), file);
	read_loads(path, &l);
	seg_mapping(&l, l.exec, bias, &start, &pgoff);
	s = new_sym(0);
	m = st_symbolizer__module(s, path, NULL);
	assert_non_null(m);
	before = st_symbolizer__memory(s);

	/* .data, .rodata, .bss, first and last byte */
	expect_data(s, m, path, start, pgoff, bias, nmf, "data_arr", 0);
	assert_true(st_symbolizer__memory(s) > before);	/* loaded, counted */
	expect_data(s, m, path, start, pgoff, bias, nmf, "data_arr", 3999);
	expect_data(s, m, path, start, pgoff, bias, nmf, "ro_str", 0);
	expect_data(s, m, path, start, pgoff, bias, nmf, "ro_str", 17);
	expect_data(s, m, path, start, pgoff, bias, nmf, "big_bss", 0);
	expect_data(s, m, path, start, pgoff, bias, nmf, "big_bss", 100000 * 4 - 1);

	/* deep in .bss: a page past the file-backed part of the segment */
	assert_true(fx_nm(nmf, "big_bss", &bss));
	file_end = l.ph[l.rw].p_vaddr + l.ph[l.rw].p_filesz;
	assert_true(bss.addr < file_end + 0x10000);
	idx = ((file_end + PAGE - 1) / PAGE * PAGE + 0x10000 - bss.addr) / 4;
	assert_true(idx < 100000);
	assert_true(bss.addr + idx * 4 >= (file_end + PAGE - 1) / PAGE * PAGE + PAGE);
	expect_data(s, m, path, start, pgoff, bias, nmf, "big_bss", idx * 4 + 2);

	/* a static local */
	assert_true(fx_nm_find(nmf, "fx_calls", true, calls, sizeof(calls), &fcalls));
	expect_data(s, m, path, start, pgoff, bias, nmf, calls, 0);

	/* a zero-size symbol covers up to the next one */
	assert_true(fx_nm(nmf, "fx_nosize_data", &nosize));
	assert_true(fx_nm(nmf, "fx_after_nosize", &after));
	assert_false(nosize.sized);
	assert_int_equal(after.addr, nosize.addr + 24);
	expect_data(s, m, path, start, pgoff, bias, nmf, "fx_nosize_data", 0);
	expect_data(s, m, path, start, pgoff, bias, nmf, "fx_nosize_data", 23);
	expect_data(s, m, path, start, pgoff, bias, nmf, "fx_after_nosize", 0);

	/* the writable segment's own mapping gives the same bias */
	seg_mapping(&l, l.rw, bias, &start, &pgoff);
	expect_data(s, m, path, start, pgoff, bias, nmf, "big_bss", idx * 4);
	expect_data(s, m, path, start, pgoff, bias, nmf, "data_arr", 8);
	seg_mapping(&l, l.exec, bias, &start, &pgoff);

	/* the module's extent: inside but between segments, and outside */
	end = extent_end(&l);
	assert_int_equal(st_symbolizer__resolve_data(s, m, path, start, pgoff, bias + end, &r),
			 -ERANGE);
	assert_int_equal(r.module_offset, end);
	assert_null(r.function);
	assert_string_equal(r.module, path);
	assert_int_equal(st_symbolizer__resolve_data(s, m, path, start, pgoff,
						     bias + l.ph[0].p_vaddr - 1, &r), -ERANGE);
	assert_int_equal(st_symbolizer__resolve_data(s, m, path, start, pgoff, bias + end - 1,
						     &r), 0);
	assert_int_equal(st_symbolizer__resolve_data(s, m, path, start, pgoff,
						     bias + l.ph[0].p_vaddr, &r), 0);
	assert_null(r.function);	/* the ELF header */

	/* bad arguments */
	assert_int_equal(st_symbolizer__resolve_data(NULL, m, path, start, pgoff, bias, &r),
			 -EINVAL);
	assert_int_equal(st_symbolizer__resolve_data(s, NULL, path, start, pgoff, bias, &r),
			 -EINVAL);
	assert_int_equal(st_symbolizer__resolve_data(s, m, path, start, pgoff, bias, NULL),
			 -EINVAL);
	assert_int_equal(st_symbolizer__resolve_data(s, m, path, start, end + 0x100000, bias, &r),
			 -EINVAL);	/* no PT_LOAD at that file offset */

	/* function symbols are a separate table: still functions */
	assert_true(fx_nm(nmf, "fx_stack", &bss));
	assert_int_equal(st_symbolizer__resolve(s, m, path, start, pgoff, bias + bss.addr + 1,
						false, &r), 0);
	assert_string_equal(r.function, "fx_stack");
	assert_int_equal(st_symbolizer__resolve_data(s, m, path, start, pgoff,
						     bias + bss.addr + 1, &r), 0);
	assert_null(r.function);
	st_symbolizer__release(s, m);
	st_symbolizer__free(s);
}

static void test_pie_data(void **state)
{
	(void)state;
	check_data("fx_data", "fx_data.nm", PIE_BIAS);
}

static void test_pie_data_nog(void **state)
{
	(void)state;
	check_data("fx_data_nog", "fx_data_nog.nm", PIE_BIAS);
}

static void test_lib_data(void **state)
{
	(void)state;
	check_data("libfxdata.so", "libfxdata.so.nm", LIB_BIAS);
	check_data("libfxdata.so", "libfxdata.so.nm", 0);	/* loaded where linked */
	check_data("libfxdata_strip.so", "libfxdata.so.nm", LIB_BIAS);	/* debug file */
}

/* ---- real runs ------------------------------------------------------------ */

struct run {
	void *handle;
	char path[PATH_MAX];	/* canonical */
	__u64 start, pgoff;	/* its executable mapping in this process */
};

static void *sym_of(struct run *r, const char *name)
{
	void *p = dlsym(r->handle, name);

	assert_non_null(p);
	return p;
}

static __u64 recorded(struct run *r, const char *name)
{
	return (__u64)(uintptr_t) * (void *volatile *)sym_of(r, name);
}

static void open_run(const char *file, struct run *r)
{
	char rel[PATH_MAX], line[PATH_MAX + 256];
	bool found = false;
	FILE *f;

	fx_path(rel, sizeof(rel), file);
	assert_non_null(realpath(rel, r->path));
	r->handle = dlopen(r->path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(r->handle);
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];
		int pos = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off,
			   &pos) < 4 || !pos)
			continue;
		if (strcmp(line + pos, r->path) != 0 || perms[2] != 'x')
			continue;
		r->start = start;
		r->pgoff = off;
		found = true;
	}
	fclose(f);
	assert_true(found);
}

static void close_run(struct run *r)
{
	dlclose(r->handle);
}

/* Expect the variable at runtime address var (+ delta) in the frame whose
 * frame address (rbp) is frame, at pc, to be name + delta. */
static void expect_var(struct st_symbolizer *s, struct st_module *m, struct run *r, __u64 pc,
		       __u64 frame, __u64 var, __u64 delta, const char *name)
{
	__s64 cfa_off = (__s64)(var + delta - (frame + 16));
	const char *got = NULL;
	__u64 off = 12345;

	assert_int_equal(st_symbolizer__stack_var(s, m, r->path, r->start, r->pgoff, pc, cfa_off,
						  &got, &off), 0);
	assert_non_null(got);
	assert_string_equal(got, name);
	assert_int_equal(off, delta);
}

static void check_stack(const char *file, bool gcc)
{
	struct { long v[8]; } big = { { 1, 2, 3, 4, 5, 6, 7, 8 } };
	long (*byval)(typeof(big), int);
	struct st_symbolizer *s;
	__u64 pc, frame, stack_fn;
	struct st_module *m;
	int (*fn)(int);
	const char *name;
	struct run r;
	__u64 off;
	size_t held;

	open_run(file, &r);
	s = new_sym(-1);	/* released means freed */
	m = st_symbolizer__module(s, r.path, NULL);
	assert_non_null(m);

	fn = (int (*)(int))sym_of(&r, "fx_stack");
	fn(3);
	stack_fn = (__u64)(uintptr_t)fn;
	frame = recorded(&r, "fx_frame_addr");
	pc = recorded(&r, "fx_inner_pc") - 1;	/* the call in the inner block */
	assert_true(pc > stack_fn);

	/* the local array, anywhere in the function */
	expect_var(s, m, &r, pc, frame, recorded(&r, "fx_local_addr"), 0, "local");
	expect_var(s, m, &r, pc, frame, recorded(&r, "fx_local_addr"), 63, "local");
	expect_var(s, m, &r, stack_fn + 1, frame, recorded(&r, "fx_local_addr"), 10, "local");
	/* the inner block's array, in the inner block only */
	expect_var(s, m, &r, pc, frame, recorded(&r, "fx_inner_addr"), 0, "inner");
	expect_var(s, m, &r, pc, frame, recorded(&r, "fx_inner_addr"), 63, "inner");
	if (gcc)	/* clang has no lexical block for it */
		assert_int_equal(st_symbolizer__stack_var(
					 s, m, r.path, r.start, r.pgoff, stack_fn + 1,
					 (__s64)(recorded(&r, "fx_inner_addr") - frame - 16),
					 &name, &off), -ENOENT);
	/* the return address and saved rbp are no variable */
	assert_int_equal(st_symbolizer__stack_var(s, m, r.path, r.start, r.pgoff, pc, -8, &name,
						  &off), -ENOENT);
	assert_int_equal(st_symbolizer__stack_var(s, m, r.path, r.start, r.pgoff, pc, -16, &name,
						  &off), -ENOENT);
	if (gcc)	/* gcc -O1 describes param in rdi only, not its copy */
		assert_int_equal(st_symbolizer__stack_var(
					 s, m, r.path, r.start, r.pgoff, pc,
					 (__s64)(recorded(&r, "fx_param_addr") - frame - 16),
					 &name, &off), -ENOENT);

	/* a parameter passed in memory: at the CFA */
	byval = (long (*)(typeof(big), int))sym_of(&r, "fx_byval");
	assert_int_equal(byval(big, 2), 3);
	pc = (__u64)(uintptr_t)byval + 1;
	frame = recorded(&r, "fx_byval_frame");
	assert_int_equal(recorded(&r, "fx_byval_addr"), frame + 16);
	expect_var(s, m, &r, pc, frame, recorded(&r, "fx_byval_addr"), 0, "big");
	expect_var(s, m, &r, pc, frame, recorded(&r, "fx_byval_addr"), 60, "big");

	/* unoptimized: scalar parameter and local in the frame */
	fn = (int (*)(int))sym_of(&r, "fx_o0");
	fn(5);
	pc = (__u64)(uintptr_t)fn + 4;
	frame = recorded(&r, "fx_o0_frame");
	expect_var(s, m, &r, pc, frame, recorded(&r, "fx_o0_param_addr"), 0, "param");
	expect_var(s, m, &r, pc, frame, recorded(&r, "fx_o0_param_addr"), 3, "param");
	expect_var(s, m, &r, pc, frame, recorded(&r, "fx_o0_local_addr"), 15, "buf");

	/* a function without frame variables */
	pc = (__u64)(uintptr_t)sym_of(&r, "fx_probe") + 1;
	assert_int_equal(st_symbolizer__stack_var(s, m, r.path, r.start, r.pgoff, pc, -96, &name,
						  &off), -ENOENT);
	/* bad arguments */
	assert_int_equal(st_symbolizer__stack_var(NULL, m, r.path, r.start, r.pgoff, pc, 0, &name,
						  &off), -EINVAL);
	assert_int_equal(st_symbolizer__stack_var(s, NULL, r.path, r.start, r.pgoff, pc, 0, &name,
						  &off), -EINVAL);
	assert_int_equal(st_symbolizer__stack_var(s, m, r.path, r.start, r.pgoff, pc, 0, NULL,
						  &off), -EINVAL);

	/* the real data too */
	{
		struct st_sym d;
		__u64 bss = (__u64)(uintptr_t)sym_of(&r, "big_bss");

		assert_int_equal(st_symbolizer__resolve_data(s, m, r.path, r.start, r.pgoff,
							     bss + 4 * 90000 + 1, &d), 0);
		assert_string_equal(d.function, "big_bss");
		assert_int_equal(d.offset, 4 * 90000 + 1);
	}

	/* the tables are counted, and freed with the module */
	held = st_symbolizer__memory(s);
	st_symbolizer__release(s, m);
	assert_true(st_symbolizer__memory(s) < held);
	assert_int_equal(st_symbolizer__modules(s, NULL), 0);
	st_symbolizer__free(s);
	close_run(&r);
}

static void test_stack_gcc(void **state)
{
	(void)state;
	check_stack("libfxdata.so", true);
}

static void test_stack_clang(void **state)
{
	(void)state;
	check_stack("libfxdata_clang.so", false);
}

static void test_stack_debuglink(void **state)
{
	(void)state;
	check_stack("libfxdata_strip.so", true);	/* DWARF from libfxdata_strip.so.debug */
}

/* Without DWARF: no variables; data symbols from .symtab or .dynsym. */
static void test_no_dwarf(void **state)
{
	char tmp[] = "/tmp/st-test-dsXXXXXX", src[PATH_MAX], copy[PATH_MAX], calls[256];
	struct st_symbolizer *s;
	struct fx_nm nm, fcalls;
	__u64 start, pgoff;
	struct st_module *m;
	const char *name;
	struct loads l;
	struct st_sym r;
	__u64 off;

	(void)state;
	/* PIE without -g: .symtab, no DWARF */
	fx_path(src, sizeof(src), "fx_data_nog");
	read_loads(src, &l);
	seg_mapping(&l, l.exec, PIE_BIAS, &start, &pgoff);
	s = new_sym(0);
	m = st_symbolizer__module(s, src, NULL);
	assert_non_null(m);
	assert_true(fx_nm("fx_data_nog.nm", "fx_stack", &nm));
	assert_int_equal(st_symbolizer__stack_var(s, m, src, start, pgoff, PIE_BIAS + nm.addr + 1,
						  -96, &name, &off), -ENOENT);
	st_symbolizer__free(s);

	/* the stripped library alone: .dynsym has the global data only */
	assert_non_null(mkdtemp(tmp));
	fx_path(src, sizeof(src), "libfxdata_strip.so");
	snprintf(copy, sizeof(copy), "%s/libfxdata_strip.so", tmp);
	assert_int_equal(fx_copy(src, copy), 0);
	read_loads(copy, &l);
	seg_mapping(&l, l.exec, LIB_BIAS, &start, &pgoff);
	s = new_sym(0);
	m = st_symbolizer__module(s, copy, NULL);
	assert_non_null(m);
	expect_data(s, m, copy, start, pgoff, LIB_BIAS, "libfxdata.so.nm", "big_bss", 4000);
	expect_data(s, m, copy, start, pgoff, LIB_BIAS, "libfxdata.so.nm", "data_arr", 4);
	assert_true(fx_nm_find("libfxdata.so.nm", "fx_calls", true, calls, sizeof(calls), &fcalls));
	assert_int_equal(st_symbolizer__resolve_data(s, m, copy, start, pgoff,
						     LIB_BIAS + fcalls.addr, &r), 0);
	assert_true(!r.function || strcmp(r.function, calls) != 0);
	assert_true(fx_nm("libfxdata.so.nm", "fx_stack", &nm));
	assert_int_equal(st_symbolizer__stack_var(s, m, copy, start, pgoff,
						  LIB_BIAS + nm.addr + 1, -96, &name, &off),
			 -ENOENT);
	st_symbolizer__free(s);
	fx_rmtree(tmp);
}

/* The module's file closed (function symbols read) and opened again for
 * data: through the open_path given, only if it is the same image. */
static void test_reopen(void **state)
{
	char tmp[] = "/tmp/st-test-roXXXXXX", src[PATH_MAX], copy[PATH_MAX], other[PATH_MAX];
	char ghost[PATH_MAX];
	struct st_symbolizer *s;
	struct st_module *m;
	__u64 start, pgoff;
	struct fx_nm fn;
	struct loads l;
	struct st_sym r;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	fx_path(src, sizeof(src), "libfxdata.so");
	snprintf(copy, sizeof(copy), "%s/libfxdata.so", tmp);
	assert_int_equal(fx_copy(src, copy), 0);
	read_loads(copy, &l);
	seg_mapping(&l, l.exec, LIB_BIAS, &start, &pgoff);
	assert_true(fx_nm("libfxdata.so.nm", "fx_stack", &fn));

	/* shown under a path that does not exist here (another mount
	 * namespace), read through open_path */
	snprintf(ghost, sizeof(ghost), "%s/elsewhere/libfxdata.so", tmp);
	s = new_sym(0);
	m = st_symbolizer__module(s, ghost, copy);
	assert_non_null(m);
	assert_int_equal(st_symbolizer__resolve(s, m, ghost, start, pgoff, LIB_BIAS + fn.addr,
						false, &r), 0);
	assert_string_equal(r.function, "fx_stack");	/* file closed now */
	expect_data(s, m, ghost, start, pgoff, LIB_BIAS, "libfxdata.so.nm", "data_arr", 4);
	st_symbolizer__free(s);

	/* replaced by another image: not taken */
	s = new_sym(0);
	m = st_symbolizer__module(s, copy, NULL);
	assert_non_null(m);
	assert_int_equal(st_symbolizer__resolve(s, m, copy, start, pgoff, LIB_BIAS + fn.addr,
						false, &r), 0);
	fx_path(other, sizeof(other), "libfx.so");
	assert_int_equal(fx_copy(other, copy), 0);
	assert_int_equal(st_symbolizer__resolve_data(s, m, copy, start, pgoff,
						     LIB_BIAS + fn.addr + 0x3000, &r), 0);
	assert_null(r.function);
	assert_int_equal(r.module_offset, fn.addr + 0x3000);
	/* gone: nothing, until the module is found again with its file */
	unlink(copy);
	assert_int_equal(st_symbolizer__resolve_data(s, m, copy, start, pgoff,
						     LIB_BIAS + fn.addr + 0x3000, &r), 0);
	assert_null(r.function);
	assert_ptr_equal(st_symbolizer__module(s, src, NULL), m);	/* by build id */
	st_symbolizer__release(s, m);
	expect_data(s, m, src, start, pgoff, LIB_BIAS, "libfxdata.so.nm", "big_bss", 40);
	st_symbolizer__free(s);

	/* without a build id: the same file (device, inode, size, mtime) */
	fx_path(src, sizeof(src), "fx_data_nobid");
	snprintf(copy, sizeof(copy), "%s/fx_data_nobid", tmp);
	assert_int_equal(fx_copy(src, copy), 0);
	read_loads(copy, &l);
	seg_mapping(&l, l.exec, PIE_BIAS, &start, &pgoff);
	assert_true(fx_nm("fx_data_nobid.nm", "fx_stack", &fn));
	s = new_sym(0);
	m = st_symbolizer__module(s, copy, NULL);
	assert_non_null(m);
	assert_null(st_module__build_id(m));
	assert_int_equal(st_symbolizer__resolve(s, m, copy, start, pgoff, PIE_BIAS + fn.addr,
						false, &r), 0);
	assert_string_equal(r.function, "fx_stack");
	expect_data(s, m, copy, start, pgoff, PIE_BIAS, "fx_data_nobid.nm", "data_arr", 4);
	st_symbolizer__free(s);
	s = new_sym(0);
	m = st_symbolizer__module(s, copy, NULL);
	assert_non_null(m);
	assert_int_equal(st_symbolizer__resolve(s, m, copy, start, pgoff, PIE_BIAS + fn.addr,
						false, &r), 0);
	{
		struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, { 1000, 0 } };

		assert_int_equal(utimensat(AT_FDCWD, copy, times, 0), 0);	/* touched */
	}
	assert_true(fx_nm("fx_data_nobid.nm", "data_arr", &fn));
	assert_int_equal(st_symbolizer__resolve_data(s, m, copy, start, pgoff,
						     PIE_BIAS + fn.addr, &r), 0);
	assert_null(r.function);
	assert_int_equal(r.module_offset, fn.addr);
	st_symbolizer__free(s);
	fx_rmtree(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie_data),
		cmocka_unit_test(test_pie_data_nog),
		cmocka_unit_test(test_lib_data),
		cmocka_unit_test(test_stack_gcc),
		cmocka_unit_test(test_stack_clang),
		cmocka_unit_test(test_stack_debuglink),
		cmocka_unit_test(test_no_dwarf),
		cmocka_unit_test(test_reopen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_procmaps.c - /proc/PID/maps parsing, and snapshots of this very
 * process resolved through the symbolizer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "binsym/symbolizer.h"
#include "user/collect/procmaps.h"
#include "tests/unit/fixtures/fx_util.h"

/* A function of this test binary, to be found in its own mappings. */
__attribute__((noinline, used)) int tpm_marker(int x)
{
	return x * 13 + 1;
}

static void test_parse_line(void **state)
{
	char l1[] = "55d0c8a00000-55d0c8a21000 r-xp 00002000 fd:01 1234                       /usr/bin/foo\n";
	char l2[] = "7f0000001000-7f0000005000 r-xp 0001f000 08:12 99 /tmp/my dir/lib x.so\n";
	char l3[] = "7f0000001000-7f0000005000 r-xp 00000000 08:12 99    /usr/lib/libfoo.so (deleted)";
	char l4[] = "7ffd10000000-7ffd10021000 rw-p 00000000 00:00 0 \n";
	char l5[] = "7ffd10021000-7ffd10023000 r-xp 00000000 00:00 0                  [vdso]\n";
	char l6[] = "7ffd10021000-7ffd10023000 rw-p 00000000 00:00 0\n";
	char bad1[] = "", bad2[] = "garbage here\n", bad3[] = "1000-2000 r-xp\n";
	char bad4[] = "2000-1000 r-xp 00000000 00:00 0\n", bad5[] = "1000-2000 r-xp 0 zz:00 0\n";
	/* the permissions end the line: nothing may be read past it (fuzz_procmaps) */
	char *bad6 = strndup("1000-2000 r-xp", 14);
	struct st_maps_line l;

	(void)state;
	assert_int_equal(st_procmaps__parse_line(l1, &l), 0);
	assert_int_equal(l.start, 0x55d0c8a00000ull);
	assert_int_equal(l.end, 0x55d0c8a21000ull);
	assert_int_equal(l.pgoff, 0x2000);
	assert_int_equal(l.dev, makedev(0xfd, 0x01));
	assert_int_equal(l.ino, 1234);
	assert_true(l.executable);
	assert_string_equal(l.path, "/usr/bin/foo");

	assert_int_equal(st_procmaps__parse_line(l2, &l), 0);
	assert_int_equal(l.pgoff, 0x1f000);
	assert_int_equal(l.dev, makedev(8, 0x12));
	assert_int_equal(l.ino, 99);
	assert_string_equal(l.path, "/tmp/my dir/lib x.so");

	assert_int_equal(st_procmaps__parse_line(l3, &l), 0);
	assert_string_equal(l.path, "/usr/lib/libfoo.so (deleted)");

	assert_int_equal(st_procmaps__parse_line(l4, &l), 0);
	assert_null(l.path);
	assert_false(l.executable);
	assert_int_equal(l.end, 0x7ffd10021000ull);

	assert_int_equal(st_procmaps__parse_line(l5, &l), 0);
	assert_string_equal(l.path, "[vdso]");
	assert_true(l.executable);

	assert_int_equal(st_procmaps__parse_line(l6, &l), 0);
	assert_null(l.path);

	assert_int_equal(st_procmaps__parse_line(bad1, &l), -EINVAL);
	assert_int_equal(st_procmaps__parse_line(bad2, &l), -EINVAL);
	assert_int_equal(st_procmaps__parse_line(bad3, &l), -EINVAL);
	assert_int_equal(st_procmaps__parse_line(bad4, &l), -EINVAL);
	assert_int_equal(st_procmaps__parse_line(bad5, &l), -EINVAL);
	assert_int_equal(st_procmaps__parse_line(bad6, &l), -EINVAL);
	free(bad6);
	assert_int_equal(st_procmaps__parse_line(NULL, &l), -EINVAL);
}

static void resolve(struct st_symbolizer *s, const struct st_mapping *m, __u64 addr,
		    bool is_return, struct st_sym *r)
{
	assert_int_equal(st_symbolizer__resolve(s, m->module, m->path, m->start, m->pgoff,
						addr, is_return, r), 0);
}

static void test_self(void **state)
{
	char exe[PATH_MAX];
	const struct st_mapping *m;
	struct st_procmaps *pm;
	struct st_symbolizer *s;
	__u64 addr, vdso;
	struct st_sym r;
	ssize_t n;
	size_t count;

	(void)state;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';

	s = st_symbolizer__new(NULL);
	assert_non_null(s);
	pm = st_procmaps__new(getpid());
	assert_non_null(pm);
	assert_int_equal(st_procmaps__pid(pm), getpid());
	assert_int_equal(st_procmaps__count(pm), 0);
	assert_true(st_procmaps__refresh(pm, s) >= 2);
	count = st_procmaps__count(pm);
	assert_true(count >= 2);

	/* this binary */
	addr = (uintptr_t)&tpm_marker;
	m = st_procmaps__find(pm, addr);
	assert_non_null(m);
	assert_string_equal(m->path, exe);
	assert_true(m->start <= addr && addr < m->end);
	assert_non_null(m->module);
	assert_int_equal(m->generation, 1);
	resolve(s, m, addr, false, &r);
	assert_string_equal(r.function, "tpm_marker");
	assert_int_equal(r.offset, 0);
	assert_int_equal(r.func_addr, addr);
	assert_string_equal(r.module, exe);
	resolve(s, m, addr + 2, true, &r);
	assert_string_equal(r.function, "tpm_marker");
	assert_int_equal(r.offset, 2);

	/* libc */
	addr = (uintptr_t)&getpid;
	m = st_procmaps__find(pm, addr);
	assert_non_null(m);
	assert_non_null(strstr(m->path, "libc"));
	assert_non_null(m->module);
	resolve(s, m, addr, false, &r);
	assert_non_null(r.function);
	assert_string_equal(r.function + strspn(r.function, "_"), "getpid");
	assert_int_equal(r.offset, 0);
	assert_non_null(r.build_id);
	assert_string_equal(r.build_id, st_module__build_id(m->module));

	/* the vDSO, when there is one (valgrind hides it) */
	vdso = getauxval(AT_SYSINFO_EHDR);
	if (vdso) {
		m = st_procmaps__find(pm, vdso);
		assert_non_null(m);
		assert_string_equal(m->path, "[vdso]");
		assert_non_null(m->module);
	}

	/* not executable, not mapped */
	assert_null(st_procmaps__find(pm, (uintptr_t)&count));
	assert_null(st_procmaps__find(pm, 0));
	assert_null(st_procmaps__find(NULL, addr));

	/* nothing new */
	assert_int_equal(st_procmaps__refresh(pm, s), 0);
	assert_int_equal(st_procmaps__count(pm), count);
	m = st_procmaps__find(pm, (uintptr_t)&tpm_marker);
	assert_non_null(m);
	assert_int_equal(m->generation, 2);

	st_procmaps__free(pm);
	st_procmaps__free(NULL);
	st_symbolizer__free(s);
}

/* This process's maps, read once with a new symbolizer: their count. */
static size_t read_self(struct st_symbolizer **s, struct st_procmaps **pm)
{
	*s = st_symbolizer__new(NULL);
	*pm = st_procmaps__new(getpid());
	assert_non_null(*s);
	assert_non_null(*pm);
	assert_true(st_procmaps__refresh(*pm, *s) > 0);
	return st_procmaps__count(*pm);
}

static void test_dlopen(void **state)
{
	char lib[PATH_MAX], real[PATH_MAX];
	const struct st_mapping *m;
	struct st_procmaps *pm;
	struct st_symbolizer *s;
	struct st_sym r;
	size_t count;
	__u64 addr;
	void *h;

	(void)state;
	fx_path(lib, sizeof(lib), "libfx.so");
	assert_non_null(realpath(lib, real));
	count = read_self(&s, &pm);

	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	addr = (uintptr_t)dlsym(h, "fx_lib_other");
	assert_int_not_equal(addr, 0);
	assert_null(st_procmaps__find(pm, addr));
	assert_int_equal(st_procmaps__refresh(pm, s), 1);
	assert_int_equal(st_procmaps__count(pm), count + 1);
	m = st_procmaps__find(pm, addr);
	assert_non_null(m);
	assert_string_equal(m->path, real);
	resolve(s, m, addr + 4, false, &r);
	assert_string_equal(r.function, "fx_lib_other");
	assert_int_equal(r.offset, 4);
	assert_int_equal(r.func_addr, addr);

	/* unloaded: the old mapping is kept, and still resolves */
	assert_int_equal(dlclose(h), 0);
	assert_int_equal(st_procmaps__refresh(pm, s), 0);
	assert_int_equal(st_procmaps__count(pm), count + 1);
	m = st_procmaps__find(pm, addr);
	assert_non_null(m);
	assert_string_equal(m->path, real);
	assert_int_equal(m->generation, 2);
	resolve(s, m, addr, false, &r);
	assert_string_equal(r.function, "fx_lib_other");

	st_procmaps__free(pm);
	st_symbolizer__free(s);
}

/* A refresh that read another image's maps is taken back: what it added
 * goes, what earlier refreshes found stays (collector.c, after an exec). */
static void test_drop_added(void **state)
{
	char lib[PATH_MAX];
	struct st_procmaps *pm;
	struct st_symbolizer *s;
	size_t count;
	__u64 addr;
	void *h;

	(void)state;
	fx_path(lib, sizeof(lib), "libfx.so");
	count = read_self(&s, &pm);
	assert_non_null(st_procmaps__find(pm, (uintptr_t)test_drop_added));

	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	addr = (uintptr_t)dlsym(h, "fx_lib_other");
	assert_int_equal(st_procmaps__refresh(pm, s), 1);
	assert_non_null(st_procmaps__find(pm, addr));
	assert_int_equal(st_procmaps__drop_added(pm), 0);
	assert_int_equal(st_procmaps__count(pm), count);
	assert_null(st_procmaps__find(pm, addr));
	assert_non_null(st_procmaps__find(pm, (uintptr_t)test_drop_added));
	/* nothing new: nothing to take back */
	assert_int_equal(st_procmaps__refresh(pm, s), 1);
	assert_int_equal(st_procmaps__refresh(pm, s), 0);
	assert_int_equal(st_procmaps__drop_added(pm), 0);
	assert_int_equal(st_procmaps__count(pm), count + 1);
	assert_non_null(st_procmaps__find(pm, addr));
	assert_int_equal(st_procmaps__drop_added(NULL), 0);

	assert_int_equal(dlclose(h), 0);
	st_procmaps__free(pm);
	st_symbolizer__free(s);
}

/* A child that exec'd before its maps were read gets its parent's
 * (collector.c): the same mappings and modules, each with its own
 * reference; its own reads win and are not duplicated, and taking back a
 * foreign read keeps what was lent. */
static void test_inherit(void **state)
{
	struct st_procmaps *child, *other;
	struct st_symbolizer *s, *s2;
	struct st_procmaps *pm;
	const struct st_mapping *m;
	size_t count, total, unused;

	(void)state;
	count = read_self(&s, &pm);
	total = st_symbolizer__modules(s, &unused);
	child = st_procmaps__new(0x7ffffff0);	/* no such process: nothing of its own */
	assert_non_null(child);
	assert_int_equal(st_procmaps__inherit(child, pm), (int)count);
	assert_int_equal(st_procmaps__count(child), count);
	m = st_procmaps__find(child, (uintptr_t)test_inherit);
	assert_non_null(m);
	assert_non_null(m->module);
	assert_ptr_equal(m->module, st_procmaps__find(pm, (uintptr_t)test_inherit)->module);
	assert_int_equal(st_procmaps__inherit(child, pm), 0);	/* nothing twice */
	assert_int_equal(st_procmaps__refresh(child, s), -ENOENT);
	assert_int_equal(st_procmaps__count(child), count);
	/* the parent goes: the child's references keep the modules in use */
	st_procmaps__free(pm);
	assert_int_equal(st_symbolizer__modules(s, &unused), total);
	assert_int_equal(unused, 0);
	assert_non_null(st_procmaps__find(child, (uintptr_t)test_inherit));

	/* lent, then read: same mappings, no duplicates; a dropped read keeps
	 * the lent ones */
	other = st_procmaps__new(getpid());
	assert_non_null(other);
	assert_int_equal(st_procmaps__inherit(other, child), (int)count);
	assert_int_equal(st_procmaps__refresh(other, s), 0);
	assert_int_equal(st_procmaps__count(other), count);
	assert_int_equal(st_procmaps__drop_added(other), 0);
	assert_int_equal(st_procmaps__count(other), count);
	assert_non_null(st_procmaps__find(other, (uintptr_t)test_inherit));

	/* another symbolizer's maps are refused */
	s2 = st_symbolizer__new(NULL);
	assert_non_null(s2);
	pm = st_procmaps__new(getpid());
	assert_non_null(pm);
	assert_true(st_procmaps__refresh(pm, s2) > 0);
	assert_int_equal(st_procmaps__inherit(child, pm), -EINVAL);
	assert_int_equal(st_procmaps__inherit(NULL, pm), -EINVAL);
	st_procmaps__free(pm);
	st_symbolizer__free(s2);

	st_procmaps__free(other);
	st_procmaps__free(child);
	assert_int_equal(st_symbolizer__modules(s, &unused), total);
	st_symbolizer__free(s);
}

static void map_file_at(void *where, const char *path)
{
	int fd = open(path, O_RDONLY);
	void *p;

	assert_true(fd >= 0);
	p = mmap(where, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0);
	close(fd);
	assert_ptr_equal(p, where);
}

static void test_overlap(void **state)
{
	char a[PATH_MAX], b[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
	const struct st_mapping *m;
	struct st_procmaps *pm;
	struct st_symbolizer *s;
	char *region;

	(void)state;
	fx_path(a, sizeof(a), "fx_pie");
	fx_path(b, sizeof(b), "libfx.so");
	assert_non_null(realpath(a, ra));
	assert_non_null(realpath(b, rb));
	region = mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_ptr_not_equal(region, MAP_FAILED);
	s = st_symbolizer__new(NULL);
	pm = st_procmaps__new(getpid());
	assert_non_null(s);
	assert_non_null(pm);

	map_file_at(region + 4096, a);
	assert_true(st_procmaps__refresh(pm, s) > 0);
	m = st_procmaps__find(pm, (uintptr_t)region + 4096 + 10);
	assert_non_null(m);
	assert_string_equal(m->path, ra);
	assert_non_null(m->module);
	assert_null(st_procmaps__find(pm, (uintptr_t)region + 4095));
	assert_null(st_procmaps__find(pm, (uintptr_t)region + 2 * 4096));

	/* the same range now holds another file: the newer snapshot wins */
	map_file_at(region + 4096, b);
	assert_int_equal(st_procmaps__refresh(pm, s), 1);
	m = st_procmaps__find(pm, (uintptr_t)region + 4096 + 10);
	assert_non_null(m);
	assert_string_equal(m->path, rb);
	assert_int_equal(m->generation, 2);

	/* and back again: that mapping was seen before, it is marked current */
	map_file_at(region + 4096, a);
	assert_int_equal(st_procmaps__refresh(pm, s), 0);
	m = st_procmaps__find(pm, (uintptr_t)region + 4096);
	assert_non_null(m);
	assert_string_equal(m->path, ra);
	assert_int_equal(m->generation, 3);

	munmap(region, 3 * 4096);
	st_procmaps__free(pm);
	st_symbolizer__free(s);
}

static void test_gone(void **state)
{
	struct st_procmaps *pm = st_procmaps__new(0x7ffffff0);

	(void)state;
	assert_non_null(pm);
	assert_int_equal(st_procmaps__refresh(pm, NULL), -ENOENT);
	assert_int_equal(st_procmaps__count(pm), 0);
	assert_null(st_procmaps__find(pm, 0x1000));
	st_procmaps__free(pm);
}

/* A mapping whose file was not opened when its line was read (here: read
 * without a symbolizer; in the daemon, its process went between the line
 * and the open) is opened when the same line is placed later (BPF's list
 * of the process's mappings at its end), and only once. */
static void test_place_opens_late(void **state)
{
	const struct st_mapping *m;
	struct st_maps_line l = { .executable = true };
	struct st_procmaps *pm;
	struct st_symbolizer *s;
	char path[PATH_MAX];
	size_t before;

	(void)state;
	s = st_symbolizer__new(NULL);
	pm = st_procmaps__new(getpid());
	assert_non_null(s);
	assert_non_null(pm);
	assert_true(st_procmaps__refresh(pm, NULL) > 0);
	assert_int_equal(st_procmaps__unopened(pm), 0);	/* (no symbolizer: none to open) */
	m = st_procmaps__find(pm, (uintptr_t)&tpm_marker);
	assert_non_null(m);
	assert_null(m->module);
	snprintf(path, sizeof(path), "%s", m->path);
	l.start = m->start;
	l.end = m->end;
	l.pgoff = m->pgoff;
	l.dev = m->dev;
	l.ino = m->ino;
	l.path = path;
	before = st_procmaps__count(pm);
	assert_int_equal(st_procmaps__place(pm, &l, s), 1);
	assert_int_equal(st_procmaps__count(pm), before);	/* opened, not added */
	m = st_procmaps__find(pm, (uintptr_t)&tpm_marker);
	assert_non_null(m);
	assert_non_null(m->module);
	assert_true(st_procmaps__unopened(pm) < before);
	assert_int_equal(st_procmaps__place(pm, &l, s), 0);	/* there, with its file */
	st_procmaps__free(pm);
	st_symbolizer__free(s);
}

/* Each mapping's module is a reference, given back by st_procmaps__free(). */
static void test_release(void **state)
{
	struct st_procmaps *pm, *pm2, *pm3;
	struct st_symbolizer *s, *other;
	const struct st_mapping *m;
	size_t total, unused, pinned = 0;
	__u64 vdso = getauxval(AT_SYSINFO_EHDR);

	(void)state;
	s = st_symbolizer__new(NULL);
	other = st_symbolizer__new(NULL);
	pm = st_procmaps__new(getpid());
	pm2 = st_procmaps__new(getpid());
	assert_non_null(s);
	assert_non_null(other);
	assert_non_null(pm);
	assert_non_null(pm2);
	assert_int_equal(st_symbolizer__modules(s, &unused), 0);

	assert_true(st_procmaps__refresh(pm, s) >= 2);
	total = st_symbolizer__modules(s, &unused);
	assert_true(total >= 2);
	assert_int_equal(unused, 0);
	m = st_procmaps__find(pm, (uintptr_t)&tpm_marker);
	assert_non_null(m);
	assert_non_null(m->module);
	if (vdso && (m = st_procmaps__find(pm, vdso)) && m->module)
		pinned = 1;	/* the vDSO module is the symbolizer's own too */

	/* refreshing takes no more references; another symbolizer is refused */
	assert_int_equal(st_procmaps__refresh(pm, s), 0);
	assert_int_equal(st_procmaps__refresh(pm, other), -EINVAL);
	assert_true(st_procmaps__refresh(pm, NULL) >= 0);

	/* a second process view shares the modules */
	assert_true(st_procmaps__refresh(pm2, s) >= 2);
	assert_int_equal(st_symbolizer__modules(s, &unused), total);
	assert_int_equal(unused, 0);

	st_procmaps__free(pm);
	assert_int_equal(st_symbolizer__modules(s, &unused), total);
	assert_int_equal(unused, 0);
	st_procmaps__free(pm2);
	assert_int_equal(st_symbolizer__modules(s, &unused), total);
	assert_int_equal(unused, total - pinned);

	/* the same images again: revived from the cache, nothing new */
	pm3 = st_procmaps__new(getpid());
	assert_non_null(pm3);
	assert_true(st_procmaps__refresh(pm3, s) >= 2);
	assert_int_equal(st_symbolizer__modules(s, &unused), total);
	assert_int_equal(unused, 0);
	st_procmaps__free(pm3);
	assert_int_equal(st_symbolizer__modules(s, &unused), total);
	assert_int_equal(unused, total - pinned);

	st_symbolizer__free(s);
	st_symbolizer__free(other);
}

/* With a cache of none, freeing the last procmaps frees the modules. */
static void test_release_uncached(void **state)
{
	struct st_symbolizer_opts opts = { .max_unused_modules = -1 };
	struct st_symbolizer *s = st_symbolizer__new(&opts);
	struct st_procmaps *pm = st_procmaps__new(getpid());
	size_t total, unused, before;

	(void)state;
	assert_non_null(s);
	assert_non_null(pm);
	before = st_symbolizer__memory(s);
	assert_true(st_procmaps__refresh(pm, s) >= 2);
	total = st_symbolizer__modules(s, &unused);
	assert_true(total >= 2);
	st_procmaps__free(pm);
	/* at most the vDSO is left */
	assert_true(st_symbolizer__modules(s, &unused) <= 1);
	assert_int_equal(unused, 0);
	assert_true(st_symbolizer__memory(s) < before + 64 * 1024);
	st_symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_dlopen),
		cmocka_unit_test(test_drop_added),
		cmocka_unit_test(test_inherit),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_place_opens_late),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_release_uncached),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

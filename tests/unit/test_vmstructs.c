/* test_vmstructs.c - the VMStructs reader (user/collect/runtimes/java/
 * vmstructs.c) on synthetic tables built in memory (lookups, static
 * addresses relative to the bias, every refusal: strides, offsets, tables
 * without an end, names unreadable or too long, duplicates); the layout
 * (jvmlayout.c) filled from captures of real tables (tests/fuzz/corpus/
 * vmstructs/: JDK 17 and Temurin 25), each member found exactly where that
 * JDK describes it; and, when ST_TEST_JVM_PID names a running JVM
 * (tests/integration/test_java.py sets it, with ST_TEST_JVM_MAJOR), the
 * whole discovery (jvmproc.c) and the session's count (java.c) on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/fixtures/fx_util.h"
#include "user/collect/runtimes/java/java.h"
#include "user/collect/runtimes/java/jvmlayout.h"
#include "user/collect/runtimes/java/jvmproc.h"
#include "user/collect/runtimes/java/vmstructs.h"

#define MEM 0x10000000ULL
#define IMG_MAX (1 << 18)

/* ---- a compact image (vmstructs.h) built by hand ---------------------- */

struct img {
	uint8_t b[IMG_MAX];
	size_t n;
};

static long rd(void *arg, void *dst, __u32 n, __u64 addr)
{
	const struct img *m = arg;

	if (addr < MEM || addr - MEM > m->n || n > m->n - (addr - MEM))
		return -EFAULT;
	memcpy(dst, m->b + (addr - MEM), n);
	return 0;
}

static __u64 put(struct img *m, const void *p, size_t n)
{
	__u64 at = MEM + m->n;

	assert_true(m->n + n <= sizeof(m->b));
	memcpy(m->b + m->n, p, n);
	m->n += n;
	return at;
}

static __u64 str(struct img *m, const char *s)
{
	return s ? put(m, s, strlen(s) + 1) : 0;
}

static void set64(struct img *m, __u64 at, __u64 v)
{
	memcpy(m->b + (at - MEM), &v, 8);
}

struct sfield {
	const char *type, *field;
	int is_static;
	__u64 value;	/* offset, or address */
};
struct stype {
	const char *name;
	__u64 size;
};
struct sconst {
	const char *name;
	__s64 value;
};

/* The entry layouts of JDK 17 and 25 (x86-64): struct entries of 48
 * bytes, type entries of 40, constants of 16; the symbol slots, then the
 * names, then each table. */
static void build_tables(struct img *m, const struct sfield *f, const struct stype *t,
			 const struct sconst *ic, const struct sconst *lc)
{
	const __u64 slots[ST_VM_NSYMS] = {
		[ST_VM_SE_TYPE_NAME] = 0, [ST_VM_SE_FIELD_NAME] = 8, [ST_VM_SE_TYPE_STRING] = 16,
		[ST_VM_SE_IS_STATIC] = 24, [ST_VM_SE_OFFSET] = 32, [ST_VM_SE_ADDRESS] = 40,
		[ST_VM_SE_STRIDE] = 48,
		[ST_VM_TE_TYPE_NAME] = 0, [ST_VM_TE_SUPERCLASS_NAME] = 8, [ST_VM_TE_IS_OOP] = 16,
		[ST_VM_TE_IS_INTEGER] = 20, [ST_VM_TE_IS_UNSIGNED] = 24, [ST_VM_TE_SIZE] = 32,
		[ST_VM_TE_STRIDE] = 40,
		[ST_VM_IC_NAME] = 0, [ST_VM_IC_VALUE] = 8, [ST_VM_IC_STRIDE] = 16,
		[ST_VM_LC_NAME] = 0, [ST_VM_LC_VALUE] = 8, [ST_VM_LC_STRIDE] = 16,
	};
	__u64 names[4][64][2];
	size_t nf = 0, nt = 0, ni = 0, nl = 0;
	__u8 e[48];

	m->n = 0;
	put(m, slots, sizeof(slots));
	for (; f[nf].type; nf++) {
		names[0][nf][0] = str(m, f[nf].type);
		names[0][nf][1] = str(m, f[nf].field);
	}
	for (; t[nt].name; nt++)
		names[1][nt][0] = str(m, t[nt].name);
	for (; ic[ni].name; ni++)
		names[2][ni][0] = str(m, ic[ni].name);
	for (; lc[nl].name; nl++)
		names[3][nl][0] = str(m, lc[nl].name);
	while (m->n % 8)
		put(m, "", 1);
	set64(m, MEM + 8 * ST_VM_STRUCTS, MEM + m->n);
	for (size_t i = 0; i <= nf; i++) {
		memset(e, 0, sizeof(e));
		if (i < nf) {
			__s32 st = f[i].is_static;

			memcpy(e, &names[0][i][0], 8);
			memcpy(e + 8, &names[0][i][1], 8);
			memcpy(e + 24, &st, 4);
			memcpy(e + (st ? 40 : 32), &f[i].value, 8);
		}
		put(m, e, 48);
	}
	set64(m, MEM + 8 * ST_VM_TYPES, MEM + m->n);
	for (size_t i = 0; i <= nt; i++) {
		memset(e, 0, sizeof(e));
		if (i < nt) {
			memcpy(e, &names[1][i][0], 8);
			memcpy(e + 32, &t[i].size, 8);
		}
		put(m, e, 40);
	}
	set64(m, MEM + 8 * ST_VM_INT_CONSTS, MEM + m->n);
	for (size_t i = 0; i <= ni; i++) {
		memset(e, 0, 16);
		if (i < ni) {
			__s32 v = (__s32)ic[i].value;

			memcpy(e, &names[2][i][0], 8);
			memcpy(e + 8, &v, 4);
		}
		put(m, e, 16);
	}
	set64(m, MEM + 8 * ST_VM_LONG_CONSTS, MEM + m->n);
	for (size_t i = 0; i <= nl; i++) {
		memset(e, 0, 16);
		if (i < nl) {
			memcpy(e, &names[3][i][0], 8);
			memcpy(e + 8, &lc[i].value, 8);
		}
		put(m, e, 16);
	}
}

#define BIAS 0x7f0000000000ULL

static const struct sfield fields[] = {
	{ "Method", "_constMethod", 0, 8 },
	{ "ConstMethod", "_constants", 0, 8 },
	{ "ConstMethod", "_flags._flags", 0, 0x1c },
	{ "CodeCache", "_heaps", 1, BIAS + 0x1234 },
	{ "Abstract_VM_Version", "_s_vm_release", 1, BIAS + 0x2000 },
	{ "Abstract_VM_Version", "_vm_major_version", 1, BIAS + 0x3000 },
	{ "Symbol", "_length", 0, 4 },
	{ "Symbol", "_length", 0, 99 },		/* a duplicate: the first wins */
	{ NULL, NULL, 0, 0 },
};
static const struct stype types[] = { { "Method", 88 }, { "GrowableArray<CodeHeap*>", 16 },
				      { NULL, 0 } };
static const struct sconst ints[] = { { "oopSize", 8 }, { "frame::interpreter_frame_last_sp_offset", -2 },
				      { NULL, 0 } };
static const struct sconst longs[] = { { "markWord::hash_mask", 0x7fffffffLL }, { "neg", -5 },
				       { NULL, 0 } };

static struct img m;

static void test_synthetic(void **state)
{
	struct st_vmstructs *v = NULL;
	struct st_vm_counts c;
	struct st_jvm_layout l;
	__u64 syms[ST_VM_NSYMS], val = 0;
	bool is_static = false;
	__s32 i = 0;
	__s64 q = 0;
	int missing;

	(void)state;
	build_tables(&m, fields, types, ints, longs);
	st_vm_syms__image(MEM, syms);
	assert_int_equal(st_vmstructs__read(syms, BIAS, rd, &m, &v), 0);
	st_vmstructs__counts(v, &c);
	assert_int_equal(c.structs, 7);
	assert_int_equal(c.skipped, 1);
	assert_int_equal(c.types, 2);
	assert_int_equal(c.ints, 2);
	assert_int_equal(c.longs, 2);
	assert_int_equal(st_vmstructs__field(v, "Method", "_constMethod", &val, &is_static), 0);
	assert_int_equal(val, 8);
	assert_false(is_static);
	assert_int_equal(st_vmstructs__field(v, "Symbol", "_length", &val, NULL), 0);
	assert_int_equal(val, 4);
	assert_int_equal(st_vmstructs__field(v, "CodeCache", "_heaps", &val, &is_static), 0);
	assert_true(is_static);
	assert_int_equal(val, 0x1234);
	assert_int_equal(st_vmstructs__field(v, "Method", "_nope", &val, NULL), -ENOENT);
	assert_int_equal(st_vmstructs__field(v, "Method", NULL, &val, NULL), -ENOENT);
	/* a type's size is no field, a field no type */
	assert_int_equal(st_vmstructs__type_size(v, "Method", &val), 0);
	assert_int_equal(val, 88);
	assert_int_equal(st_vmstructs__type_size(v, "Symbol", &val), -ENOENT);
	assert_int_equal(st_vmstructs__type_size(v, "GrowableArray<CodeHeap*>", &val), 0);
	assert_int_equal(val, 16);
	assert_int_equal(st_vmstructs__int(v, "oopSize", &i), 0);
	assert_int_equal(i, 8);
	assert_int_equal(st_vmstructs__int(v, "frame::interpreter_frame_last_sp_offset", &i), 0);
	assert_int_equal(i, -2);
	assert_int_equal(st_vmstructs__int(v, "markWord::hash_mask", &i), -ENOENT);
	assert_int_equal(st_vmstructs__long(v, "markWord::hash_mask", &q), 0);
	assert_int_equal(q, 0x7fffffff);
	assert_int_equal(st_vmstructs__long(v, "neg", &q), 0);
	assert_int_equal(q, -5);
	assert_true(st_vmstructs__memory(v) > sizeof(fields));

	/* the layout: what the table has, at the process's addresses; the
	 * rest missing, each with its bit */
	missing = st_jvm_layout__fill(v, BIAS + 0x1000, &l);
	assert_int_equal(l.method_constmethod, 8);
	assert_int_equal(l.constmethod_flags, 0x1c);	/* JDK 21+'s name */
	assert_int_equal(l.codecache_heaps, BIAS + 0x1000 + 0x1234);
	assert_int_equal(l.method_size, 88);
	assert_int_equal(l.oop_size, 8);
	assert_int_equal(l.frame_interpreter_last_sp_offset, -2);
	assert_true(st_jvm_layout__has(&l, ST_JF_symbol_length));
	assert_false(st_jvm_layout__has(&l, ST_JF_klass_name));
	assert_int_equal(l.klass_name, ST_JVM_NO_OFF);
	assert_false(st_jvm_layout__has(&l, ST_JF_codecache_low_bound));
	assert_int_equal(l.codecache_low_bound, 0);
	assert_int_equal(missing, ST_JF_COUNT - 10);
	st_vmstructs__free(v);
}

static void test_version(void **state)
{
	struct st_vmstructs *v = NULL;
	struct st_jvm_version ver;
	struct st_jvm_layout l;
	__u64 syms[ST_VM_NSYMS], rel, text = 0;
	__s32 major = 17;
	size_t end;

	(void)state;
	build_tables(&m, fields, types, ints, longs);
	/* the release text and the major, where the statics would say */
	rel = put(&m, &text, 8);
	put(&m, &major, 4);
	end = m.n;
	text = str(&m, "17.0.15+6-Debian-1deb12u1");
	set64(&m, rel, text);
	st_vm_syms__image(MEM, syms);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), 0);
	st_jvm_layout__fill(v, 0, &l);
	l.vm_release = rel;
	l.vm_major_version = rel + 8;
	assert_int_equal(st_jvm_version__read(&l, rd, &m, &ver), 0);
	assert_string_equal(ver.release, "17.0.15+6-Debian-1deb12u1");
	assert_int_equal(ver.major, 17);
	/* the major unreadable: from the text */
	l.vm_major_version = 8;
	assert_int_equal(st_jvm_version__read(&l, rd, &m, &ver), 0);
	assert_int_equal(ver.major, 17);
	/* the text cut by unreadable memory: what was read */
	m.n = end + 10;
	l.vm_major_version = rel + 8;
	assert_int_equal(st_jvm_version__read(&l, rd, &m, &ver), 0);
	assert_string_equal(ver.release, "17.0.15+6-");
	assert_int_equal(ver.major, 17);
	/* the text unreadable: the major alone */
	m.n = end;
	assert_int_equal(st_jvm_version__read(&l, rd, &m, &ver), 0);
	assert_string_equal(ver.release, "");
	assert_int_equal(ver.major, 17);
	/* neither readable */
	l.vm_major_version = 8;
	assert_int_equal(st_jvm_version__read(&l, rd, &m, &ver), -EFAULT);
	/* neither described */
	l.missing[ST_JF_vm_release / 64] |= 1ull << (ST_JF_vm_release % 64);
	l.missing[ST_JF_vm_major_version / 64] |= 1ull << (ST_JF_vm_major_version % 64);
	assert_int_equal(st_jvm_version__read(&l, rd, &m, &ver), -ENOENT);
	st_vmstructs__free(v);
}

/* Every refusal of a table that cannot be real. */
static void test_refusals(void **state)
{
	struct st_vmstructs *v = NULL;
	__u64 syms[ST_VM_NSYMS], first, save;
	size_t end;

	(void)state;
	build_tables(&m, fields, types, ints, longs);
	st_vm_syms__image(MEM, syms);
	/* the JVM not started: a stride or a table still 0 */
	set64(&m, MEM + 8 * ST_VM_SE_STRIDE, 0);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -EAGAIN);
	set64(&m, MEM + 8 * ST_VM_SE_STRIDE, 48);
	memcpy(&save, m.b + 8 * ST_VM_TYPES, 8);
	set64(&m, MEM + 8 * ST_VM_TYPES, 0);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -EAGAIN);
	set64(&m, MEM + 8 * ST_VM_TYPES, save);
	/* strides and offsets beyond bounds */
	set64(&m, MEM + 8 * ST_VM_TE_STRIDE, ST_VM_MAX_STRIDE + 8);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -EINVAL);
	set64(&m, MEM + 8 * ST_VM_TE_STRIDE, 4);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -EINVAL);
	set64(&m, MEM + 8 * ST_VM_TE_STRIDE, 40);
	set64(&m, MEM + 8 * ST_VM_SE_IS_STATIC, 45);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -EINVAL);
	set64(&m, MEM + 8 * ST_VM_SE_IS_STATIC, 44);	/* an int32 at 44 fits */
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), 0);
	st_vmstructs__free(v);
	set64(&m, MEM + 8 * ST_VM_SE_IS_STATIC, 24);
	set64(&m, MEM + 8 * ST_VM_IC_VALUE, ~0ULL);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -EINVAL);
	set64(&m, MEM + 8 * ST_VM_IC_VALUE, 8);
	/* a symbol not found, a symbol unreadable */
	syms[ST_VM_LC_NAME] = 0;
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -EINVAL);
	syms[ST_VM_LC_NAME] = MEM + IMG_MAX;
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -EFAULT);
	st_vm_syms__image(MEM, syms);
	/* a table without its end: cut the image inside the last table */
	end = m.n;
	m.n -= 8;
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -EFAULT);
	m.n = end;
	/* a table pointing where nothing is readable */
	memcpy(&first, m.b + 8 * ST_VM_STRUCTS, 8);
	set64(&m, MEM + 8 * ST_VM_STRUCTS, MEM + IMG_MAX * 2);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -EFAULT);
	/* a table of more than ST_VM_MAX_ENTRIES entries: an entry that
	 * points at itself as its name, over and over (stride 8) */
	set64(&m, MEM + 8 * ST_VM_IC_STRIDE, 8);
	set64(&m, MEM + 8 * ST_VM_IC_VALUE, 0);
	set64(&m, MEM + 8 * ST_VM_STRUCTS, first);
	{
		__u64 name = str(&m, "x"), at;

		while (m.n % 8)
			put(&m, "", 1);
		at = MEM + m.n;
		for (int i = 0; i < ST_VM_MAX_ENTRIES + 1; i++)
			put(&m, &name, 8);
		set64(&m, MEM + 8 * ST_VM_INT_CONSTS, at);
	}
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), -E2BIG);
}

/* Names that cannot be read, or run on past ST_VM_NAME_MAX: skipped and
 * counted; the rest kept. */
static void test_bad_names(void **state)
{
	struct st_vmstructs *v = NULL;
	__u64 syms[ST_VM_NSYMS], val, first;
	struct st_vm_counts c;
	char longname[ST_VM_NAME_MAX + 10];
	__u64 lp;

	(void)state;
	build_tables(&m, fields, types, ints, longs);
	st_vm_syms__image(MEM, syms);
	memset(longname, 'a', sizeof(longname));
	lp = put(&m, longname, sizeof(longname));	/* no NUL */
	memcpy(&first, m.b + 8 * ST_VM_STRUCTS, 8);
	/* the first entry's type name: too long; the second's field name:
	 * unreadable */
	set64(&m, first, lp);
	set64(&m, first + 48 + 8, MEM + IMG_MAX * 4);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), 0);
	st_vmstructs__counts(v, &c);
	assert_int_equal(c.structs, 5);
	assert_int_equal(c.skipped, 3);
	assert_int_equal(st_vmstructs__field(v, "Method", "_constMethod", &val, NULL), -ENOENT);
	assert_int_equal(st_vmstructs__field(v, "ConstMethod", "_constants", &val, NULL), -ENOENT);
	assert_int_equal(st_vmstructs__field(v, "Symbol", "_length", &val, NULL), 0);
	st_vmstructs__free(v);
	/* a name of ST_VM_NAME_MAX - 1 bytes and its NUL: kept */
	longname[ST_VM_NAME_MAX - 1] = '\0';
	lp = put(&m, longname, ST_VM_NAME_MAX);
	set64(&m, first, lp);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), 0);
	assert_int_equal(st_vmstructs__field(v, longname, "_constMethod", &val, NULL), 0);
	st_vmstructs__free(v);
}

/* ---- real tables --------------------------------------------------------- */

/* The members each JDK does not describe (everything else is found). */
static const int missing17[] = {
	ST_JF_codeblob_code_offset, ST_JF_nmethod_scopes_data_offset, ST_JF_nmethod_immutable_data,
	ST_JF_nmethod_deopt_handler_offset, ST_JF_frame_interpreter_method_offset,
	ST_JF_frame_interpreter_bcp_offset, ST_JF_codeblob_relocation_size, ST_JF_codeblob_mutable_data,
	ST_JF_codeblob_mutable_data_size, ST_JF_nmethod_immutable_data_size, -1,
};
static const int missing25[] = {
	ST_JF_codeblob_code_begin, ST_JF_nmethod_scopes_data_begin, ST_JF_nmethod_metadata_offset,
	ST_JF_nmethod_deopt_handler_begin, ST_JF_method_flags, ST_JF_frame_interpreter_method_offset,
	ST_JF_frame_interpreter_bcp_offset, ST_JF_nmethod_dependencies_offset, -1,
};

/* l has every member but those of expect, and the facts of any JVM. */
static void check_layout(const struct st_jvm_layout *l, const int *expect, int missing)
{
	int n = 0;
	char what[128];

	for (int f = 0; f < ST_JF_COUNT; f++) {
		bool want = true;

		for (const int *x = expect; *x >= 0; x++)
			if (*x == f)
				want = false;
		if (want != st_jvm_layout__has(l, f))
			fail_msg("%s (%s): %s", st_jvm_field__name(f), st_jvm_field__what(f, what, sizeof(what)),
				 want ? "missing" : "found, but this JDK has it not");
	}
	for (const int *x = expect; *x >= 0; x++)
		n++;
	assert_int_equal(missing, n);
	assert_int_equal(l->oop_size, 8);
	assert_true(l->method_size > 0);
	assert_true(l->constantpool_size > 0);
	assert_true(l->codecache_heaps != 0);
	assert_true(l->javathread_anchor < 4096);
}

static size_t load_capture(const char *name, struct img *out)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	FILE *f;

	/* the source tree's, from this binary's build/tests/ */
	ssize_t k = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

	dir[k > 0 ? k : 0] = '\0';
	snprintf(path, sizeof(path), "%s/../../tests/fuzz/corpus/vmstructs/%s", dirname(dir), name);
	f = fopen(path, "rb");
	if (!f)
		return 0;
	out->n = fread(out->b, 1, sizeof(out->b), f);
	fclose(f);
	return out->n;
}

static void capture(const char *name, const int *expect, __u32 log2_seg_at)
{
	struct st_vmstructs *v = NULL;
	struct st_jvm_layout l;
	__u64 syms[ST_VM_NSYMS];
	struct st_vm_counts c;

	if (!load_capture(name, &m)) {
		printf("    skipped (absent): tests/fuzz/corpus/vmstructs/%s\n", name);
		skip();
	}
	st_vm_syms__image(MEM, syms);
	assert_int_equal(st_vmstructs__read(syms, 0, rd, &m, &v), 0);
	st_vmstructs__counts(v, &c);
	assert_int_equal(c.skipped, 0);
	check_layout(&l, expect, st_jvm_layout__fill(v, 0, &l));
	/* facts of this build, as its own tables said at capture */
	assert_int_equal(l.codeheap_log2_segment_size, log2_seg_at);
	assert_int_equal(l.method_constmethod, 8);
	assert_int_equal(l.symbol_length, 4);
	assert_int_equal(l.symbol_body, 6);
	assert_int_equal(l.frame_interpreter_sender_sp_offset, -1);
	assert_int_equal(l.frame_interpreter_last_sp_offset, -2);
	st_vmstructs__free(v);
}

static void test_capture_jdk17(void **state)
{
	(void)state;
	capture("jdk17", missing17, 0x100);
}

static void test_capture_temurin25(void **state)
{
	(void)state;
	capture("temurin25", missing25, 0xf8);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The discovery on a live JVM (tests/integration/test_java.py). */
static void test_live_jvm(void **state)
{
	const char *pid_s = getenv("ST_TEST_JVM_PID"), *major_s = getenv("ST_TEST_JVM_MAJOR");
	struct st_jvm_cache *c = st_jvm_cache__new();
	struct st_jvm_proc *p = calloc(1, sizeof(*p)), *p2 = calloc(1, sizeof(*p2));
	size_t reads, hits;
	double t0, t1, t2;
	char want[16];
	int major;

	(void)state;
	if (!pid_s || !major_s) {
		printf("    needs a running JVM: ST_TEST_JVM_PID and ST_TEST_JVM_MAJOR "
		       "(tests/integration/test_java.py)\n");
		free(p), free(p2), st_jvm_cache__free(c);
		skip();
	}
	major = atoi(major_s);
	assert_non_null(c);
	assert_non_null(p);
	t0 = now_ms();
	assert_int_equal(st_jvm_proc__probe(c, atoi(pid_s), p), ST_JVM_PROBE_OK);
	t1 = now_ms();
	printf("    pid %s: %s, bias %#llx, release %s, major %d, build id %s%s; "
	       "structs %zu, types %zu, ints %zu, longs %zu; %d of %d layout members missing:",
	       pid_s, p->path, (unsigned long long)p->bias, p->version.release, p->version.major,
	       p->elf.build_id, p->elf.trusted ? " (trusted)" : "", p->counts.structs, p->counts.types,
	       p->counts.ints, p->counts.longs, p->missing, ST_JF_COUNT);
	for (int f = 0; f < ST_JF_COUNT; f++)
		if (!st_jvm_layout__has(&p->l, f))
			printf(" %s", st_jvm_field__name(f));
	printf("\n");
	assert_int_equal(p->version.major, major);
	snprintf(want, sizeof(want), "%d", major);
	assert_memory_equal(p->version.release, want, strlen(want));
	assert_int_equal(p->counts.skipped, 0);
	assert_true(p->bias != 0 && p->bias % 4096 == 0);
	check_layout(&p->l, major == 17 ? missing17 : missing25, p->missing);
	/* the code cache's bounds: around the heaps' table, in the process */
	assert_true(p->l.codecache_low_bound > p->bias);
	/* again: from the cache when libjvm is root's, the same layout */
	t2 = now_ms();
	assert_int_equal(st_jvm_proc__probe(c, atoi(pid_s), p2), ST_JVM_PROBE_OK);
	printf("    probe %.1f ms, again (tables cached) %.1f ms\n", t1 - t0, now_ms() - t2);
	st_jvm_cache__stats(c, &reads, &hits);
	assert_int_equal(reads, 1);
	assert_int_equal(hits, p->elf.trusted ? 1 : 0);
	assert_memory_equal(&p->l, &p2->l, sizeof(p->l));
	assert_string_equal(p->version.release, p2->version.release);
	/* the session's count (java.c): once per pid, anew after an exit or
	 * exec; the tables read once */
	{
		struct st_java *j = st_java__new(NULL);
		struct st_java_stats js;

		assert_non_null(j);
		st_java__probe(j, (__u32)atoi(pid_s));
		st_java__probe(j, (__u32)atoi(pid_s));
		st_java__stats(j, &js);
		assert_int_equal(js.jvms, 1);
		assert_int_equal(js.failed, 0);
		st_java__exited(j, (__u32)atoi(pid_s), NULL);
		st_java__probe(j, (__u32)atoi(pid_s));
		st_java__stats(j, &js);
		assert_int_equal(js.jvms, 2);
		assert_int_equal(js.table_reads, p->elf.trusted ? 1 : 2);
		st_java__free(j);
	}
	free(p);
	free(p2);
	st_jvm_cache__free(c);
}

/* A process without a JVM: this one. */
static void test_no_jvm(void **state)
{
	struct st_jvm_proc *p = calloc(1, sizeof(*p));

	(void)state;
	assert_non_null(p);
	assert_int_equal(st_jvm_proc__probe(NULL, getpid(), p), ST_JVM_PROBE_NONE);
	assert_true(st_jvm_proc__probe(NULL, -1, p) < 0);
	{
		struct st_java *j = st_java__new(NULL);
		struct st_java_stats js;

		assert_non_null(j);
		st_java__probe(j, (__u32)getpid());
		st_java__exited(j, (__u32)getpid(), NULL);
		st_java__stats(j, &js);
		assert_int_equal(js.jvms + js.failed + js.table_reads, 0);
		st_java__free(j);
		st_java__probe(NULL, 1);
	}
	assert_true(st_jvm_elf__candidate("/usr/lib/jvm/x/lib/server/libjvm.so"));
	assert_false(st_jvm_elf__candidate("/usr/lib/libjvm.so.1"));
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_capture_jdk17),
		cmocka_unit_test(test_capture_temurin25),
		cmocka_unit_test(test_no_jvm),
		cmocka_unit_test(test_live_jvm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

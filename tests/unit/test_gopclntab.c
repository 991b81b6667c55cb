/* test_gopclntab.c - Go's function table read from a stripped Go program
 * (binsym/gopclntab.c) against Go's own tools on the unstripped build,
 * and the unwinding rows made from it (user/collect/unwind/unwind_go.c).
 *
 * tests/workloads/gospin is built here with Debian's Go (golang-go;
 * standard library only, no network, its cache in the test's directory),
 * then a copy is stripped: its function names, sizes, files and lines must
 * be those `go tool nm` and `go tool addr2line` give for the unstripped
 * build; without `go` every test prints why and skips. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strtab.h"
#include "stacktree.h"
#include "binsym/elf.h"
#include "binsym/gopclntab.h"
#include "binsym/symbolizer.h"
#include "binsym/symtab.h"
#include "user/collect/unwind/unwind_go.h"

#define TMPDIR_PREFIX "st-gopcl-"
#include "tmpdir_fx.h"

#define SRC "tests/workloads/gospin"
#define MAX_FUNCS 8192

struct nm_func {
	__u64 addr, size;
	char name[160];
};

static struct tmpdir_fx *fx;
static bool built;
static char plain[300], stripped[300];
static struct nm_func *funcs;	/* `go tool nm -size` text symbols of the unstripped build */
static size_t nfuncs;

static int build(void **state)
{
	char cmd[4096], line[512];
	FILE *p;

	if (tmpdir_setup(state))
		return -1;
	fx = *state;
	snprintf(plain, sizeof(plain), "%s/gospin", fx->dir);
	snprintf(stripped, sizeof(stripped), "%s/gospin.stripped", fx->dir);
	if (system("command -v go >/dev/null 2>&1"))
		return 0;
	snprintf(cmd, sizeof(cmd),
		 "cd " SRC " && GOCACHE=%s/cache GOPATH=%s/gopath GOFLAGS=-mod=mod GOPROXY=off "
		 "GO111MODULE=on go build -o %s . && cp %s %s && strip %s && "
		 "go build -buildmode=pie -o %s-pie . && cp %s-pie %s-pie && strip %s-pie",
		 fx->dir, fx->dir, plain, plain, stripped, stripped, plain, plain, stripped,
		 stripped);
	if (system(cmd))
		return -1;
	snprintf(cmd, sizeof(cmd), "go tool nm -size %s", plain);
	funcs = calloc(MAX_FUNCS, sizeof(*funcs));
	if (!funcs || !(p = popen(cmd, "r")))
		return -1;
	while (fgets(line, sizeof(line), p) && nfuncs < MAX_FUNCS) {
		struct nm_func *f = &funcs[nfuncs];
		char type[4];
		size_t len;

		if (sscanf(line, "%llx %llu %3s %159s", (unsigned long long *)&f->addr,
			   (unsigned long long *)&f->size, type, f->name) != 4 ||
		    (strcmp(type, "T") && strcmp(type, "t")))
			continue;
		len = strlen(f->name);	/* ABI wrappers' ELF names; the table's have none */
		if (len > 5 && !strcmp(f->name + len - 5, ".abi0"))
			f->name[len - 5] = '\0';
		nfuncs++;
	}
	built = pclose(p) == 0 && nfuncs > 100;
	return built ? 0 : -1;
}

static int unbuild(void **state)
{
	free(funcs);
	return tmpdir_teardown(state);
}

#define NEED_GO()                                                                 \
	do {                                                                      \
		if (!built) {                                                     \
			printf("no `go` on PATH (golang-go, scripts/deps.sh): skipped\n"); \
			skip();                                                   \
		}                                                                 \
	} while (0)

static const struct nm_func *nm_find(const char *name)
{
	for (size_t i = 0; i < nfuncs; i++)
		if (!strcmp(funcs[i].name, name))
			return &funcs[i];
	return NULL;
}

/* The stripped copy's table (and its .text address). */
static struct st_gopcln *open_table(struct st_elf **e, const void **bytes, size_t *size)
{
	struct st_gopcln *g = NULL;
	GElf_Shdr sh, text;
	Elf_Scn *scn;
	Elf_Data *d;

	assert_int_equal(st_elf__open(stripped, e), 0);
	assert_false(st_elf__has_section_type(*e, SHT_SYMTAB));
	scn = st_elf__section_named(*e, ".gopclntab", &sh);
	assert_non_null(scn);
	d = elf_getdata(scn, NULL);
	assert_non_null(d);
	assert_non_null(st_elf__section_named(*e, ".text", &text));
	assert_int_equal(st_gopcln__parse(d->d_buf, d->d_size, text.sh_addr, &g), 0);
	*bytes = d->d_buf;
	*size = d->d_size;
	return g;
}

/* Every text symbol of the unstripped build is a function of the stripped
 * one's table at the same address, with the same name, and at least its
 * size (the table's functions reach to the next one: alignment padding). */
static void test_names_equal_go_nm(void **state)
{
	struct st_symtab *t = st_symtab__new();
	struct st_strtab *names = st_strtab__new();
	struct st_gopcln *g = NULL;
	struct st_elf *e = NULL;
	size_t same = 0, mains = 0;
	int n;

	(void)state;
	NEED_GO();
	assert_int_equal(st_elf__open(stripped, &e), 0);
	n = st_gopcln__load_symbols(e, t, names, &g);
	assert_true(n > 1000);
	assert_int_equal((size_t)n, st_gopcln__count(g));
	st_symtab__finish(t);
	for (size_t i = 0; i < nfuncs; i++) {
		const struct st_symbol *s = st_symtab__find(t, funcs[i].addr);

		if (!s || s->start != funcs[i].addr || strcmp(s->name, funcs[i].name))
			continue;
		assert_true(s->size >= funcs[i].size);
		same++;
		mains += !strncmp(s->name, "main.", 5);
	}
	/* main.leaf, middle, work, other, main, main.func1 */
	assert_int_equal(mains, 6);
	/* go tool nm lists symbols no function has (runtime.text, .etext),
	 * and names a few equality functions otherwise ("type..eq.[2]T" for
	 * the table's "type..eq.[...]T"): every other one is the table's */
	assert_true(same + 8 >= nfuncs);
	st_gopcln__free(g);
	st_elf__free(e);
	st_symtab__free(t);
	st_strtab__free(names);
}

/* A position-independent build keeps its table in .data.rel.ro.gopclntab:
 * main's functions are found there at go tool nm's addresses. */
static void test_pie(void **state)
{
	struct st_symtab *t = st_symtab__new();
	struct st_strtab *names = st_strtab__new();
	struct st_gopcln *g = NULL;
	struct st_elf *e = NULL;
	char cmd[400], line[300], path[310];
	size_t mains = 0;
	FILE *p;

	(void)state;
	NEED_GO();
	snprintf(path, sizeof(path), "%s-pie", stripped);
	assert_int_equal(st_elf__open(path, &e), 0);
	assert_null(st_elf__section_named(e, ".gopclntab", NULL));
	assert_true(st_gopcln__load_symbols(e, t, names, &g) > 1000);
	st_symtab__finish(t);
	snprintf(cmd, sizeof(cmd), "go tool nm %s-pie", plain);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char type[4], name[200];
		const struct st_symbol *s;

		if (sscanf(line, "%llx %3s %199s", &a, type, name) != 3 || strcmp(type, "T") ||
		    strncmp(name, "main.", 5))
			continue;
		s = st_symtab__find(t, a);
		assert_non_null(s);
		assert_int_equal(s->start, a);
		assert_string_equal(s->name, name);
		mains++;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(mains, 6);
	st_gopcln__free(g);
	st_elf__free(e);
	st_symtab__free(t);
	st_strtab__free(names);
}

/* Function, file and line of addresses in main's functions through the
 * symbolizer (resolve + source) on the stripped copy equal `go tool
 * addr2line` on the unstripped build. */
static void test_lines_equal_go_addr2line(void **state)
{
	struct st_symbolizer *s = st_symbolizer__new(&(struct st_symbolizer_opts){ 0 });
	static const char *const fns[] = { "main.leaf", "main.middle", "main.work", "main.other",
					   "main.main", "runtime.mallocgc" };
	__u64 addrs[6 * 4];
	size_t na = 0;
	char cmd[400], func[256], where[600];
	struct st_module *m;
	FILE *in, *out;

	(void)state;
	NEED_GO();
	for (size_t i = 0; i < 6; i++) {
		const struct nm_func *f = nm_find(fns[i]);

		assert_non_null(f);
		for (unsigned k = 0; k < 4; k++)
			addrs[na++] = f->addr + f->size * k / 4;
	}
	snprintf(cmd, sizeof(cmd), "%s/addrs", fx->dir);
	in = fopen(cmd, "w");
	assert_non_null(in);
	for (size_t i = 0; i < na; i++)
		fprintf(in, "0x%llx\n", (unsigned long long)addrs[i]);
	fclose(in);
	snprintf(cmd, sizeof(cmd), "go tool addr2line %s < %s/addrs", plain, fx->dir);
	out = popen(cmd, "r");
	assert_non_null(out);

	m = st_symbolizer__module(s, stripped, NULL);
	assert_non_null(m);
	for (size_t i = 0; i < na; i++) {
		const struct st_src_frame *fr;
		struct st_sym sym;
		size_t n;
		char want[700];

		assert_non_null(fgets(func, sizeof(func), out));
		assert_non_null(fgets(where, sizeof(where), out));
		func[strcspn(func, "\n")] = '\0';
		where[strcspn(where, "\n")] = '\0';
		/* not PIE: the first PT_LOAD maps file offset 0 at 0x400000 */
		assert_int_equal(st_symbolizer__resolve(s, m, NULL, 0x400000, 0, addrs[i], false,
							&sym), 0);
		assert_non_null(sym.function);
		assert_string_equal(sym.function, func);
		assert_int_equal(st_symbolizer__source(s, m, NULL, 0x400000, 0, addrs[i], false,
						       &fr, &n), 0);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].function, func);
		assert_non_null(fr[0].file);
		snprintf(want, sizeof(want), "%s:%u", fr[0].file, fr[0].line);
		assert_string_equal(want, where);
	}
	pclose(out);
	st_symbolizer__release(s, m);
	st_symbolizer__free(s);
}

struct rows {
	__u64 pc[1 << 16];
	__u8 kind[1 << 16];
	int rbp[1 << 16];
	__s64 off[1 << 16];
	size_t n;
};

static int take_row(void *ctx, __u64 pc, __u8 kind, int rbp, __s64 off)
{
	struct rows *r = ctx;

	if (r->n && pc < r->pc[r->n - 1])
		return -EDOM;
	if (r->n == sizeof(r->pc) / sizeof(r->pc[0]))
		return -E2BIG;
	r->pc[r->n] = pc;
	r->kind[r->n] = kind;
	r->rbp[r->n] = rbp;
	r->off[r->n++] = off;
	return 0;
}

/* The rule at pc: the last row at or before it. */
static size_t rule_at(const struct rows *r, __u64 pc)
{
	size_t i = 0;

	while (i + 1 < r->n && r->pc[i + 1] <= pc)
		i++;
	return i;
}

/* Rows ascend; a frameless leaf's entry is CFA = rsp + 8, a function with
 * a frame has CFA = rsp + frame + 8 at its call sites with rbp at CFA-16,
 * and the goroutine's root is an outermost row. */
static void test_unwind_rows(void **state)
{
	struct rows *r = calloc(1, sizeof(*r));
	const struct nm_func *leaf = nm_find("main.leaf"), *work = nm_find("main.work"),
			     *goexit = nm_find("runtime.goexit");
	struct st_elf *e = NULL;
	struct st_gopcln *g;
	const void *bytes;
	size_t size, nf = 0, i;
	GElf_Shdr text;

	(void)state;
	NEED_GO();
	assert_non_null(r);
	g = open_table(&e, &bytes, &size);
	assert_non_null(st_elf__section_named(e, ".text", &text));
	assert_int_equal(st_unwind_go__rules(bytes, size, text.sh_addr, take_row, r, &nf), 0);
	assert_int_equal(nf, st_gopcln__count(g));
	assert_non_null(leaf);
	i = rule_at(r, leaf->addr);
	assert_int_equal(r->pc[i], leaf->addr);
	assert_int_equal(r->kind[i], ST_UNW_RSP);
	assert_int_equal(r->off[i], 8);
	assert_int_equal(r->rbp[i], ST_UNW_RBP_SAME);
	i = rule_at(r, work->addr + work->size / 2);	/* inside its loop */
	assert_int_equal(r->kind[i], ST_UNW_RSP);
	assert_true(r->off[i] > 16);
	assert_int_equal(r->rbp[i], -2);
	i = rule_at(r, goexit->addr + 1);
	assert_int_equal(r->kind[i], ST_UNW_END);
	assert_int_equal(r->kind[r->n - 1], ST_UNW_NONE);	/* past the last function */
	/* code without a stack depth is code without CFI (frame pointers in
	 * auto mode), never a form auto mode stops at */
	for (i = 0; i < r->n; i++)
		assert_int_not_equal(r->kind[i], ST_UNW_UNSUPPORTED);
	st_gopcln__free(g);
	st_elf__free(e);
	free(r);
}

/* Damaged copies of the real table: refused or read within bounds. */
static void test_hostile_tables(void **state)
{
	struct st_elf *e = NULL;
	struct st_gopcln *g, *h = NULL;
	const void *bytes;
	size_t size;
	__u8 *copy;

	(void)state;
	NEED_GO();
	g = open_table(&e, &bytes, &size);
	copy = malloc(size);
	assert_non_null(copy);

	memcpy(copy, bytes, size);	/* Go 1.2-1.15's magic */
	memcpy(copy, "\xfb\xff\xff\xff", 4);
	assert_int_equal(st_gopcln__parse(copy, size, 0, &h), -EPROTONOSUPPORT);
	memcpy(copy, bytes, 64);	/* cut inside the function table */
	assert_int_equal(st_gopcln__parse(copy, 64, 0, &h), -EINVAL);
	memcpy(copy, bytes, size);	/* nfunc past the section */
	memset(copy + 8, 0xff, 8);
	assert_int_equal(st_gopcln__parse(copy, size, 0, &h), -EINVAL);
	memcpy(copy, bytes, size);	/* an offset past the end */
	memset(copy + 8 + 8 * 7, 0x7f, 8);
	assert_int_equal(st_gopcln__parse(copy, size, 0, &h), -EINVAL);
	/* the pc tables and names cut off: every lookup stays inside */
	memcpy(copy, bytes, size);
	memset(copy + size / 2, 0xff, size - size / 2);
	if (!st_gopcln__parse(copy, size, 0, &h)) {
		for (size_t i = 0; i < st_gopcln__count(h); i += 7) {
			__u64 a, b;
			const char *name, *file;
			__u32 line;

			assert_int_equal(st_gopcln__func(h, i, &a, &b, &name), 0);
			(void)st_gopcln__line(h, i, a + (b - a) / 2, &file, &line);
		}
		st_gopcln__free(h);
	}
	free(copy);
	st_gopcln__free(g);
	st_elf__free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_equal_go_nm),
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_lines_equal_go_addr2line),
		cmocka_unit_test(test_unwind_rows),
		cmocka_unit_test(test_hostile_tables),
	};

	return cmocka_run_group_tests(tests, build, unbuild);
}

/* fuzz_gopclntab.c - Go's function table reader (binsym/gopclntab.c)
 * and the unwinding rules made from it (user/collect/unwind/unwind_go.c) on
 * arbitrary bytes: refused or read, never a crash, a read past the input
 * or a leak. What is read holds: functions ascend and do not overlap,
 * find() gives back each function's own start, line and pcsp lookups stay
 * inside their function, source() caches the same answer, and the rules
 * ascend. The seed is a real Go 1.19 table cut to a few functions
 * (tests/fuzz/gopclntab_seed.py). The first 8 bytes also give the text
 * start used when the table's is 0. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "binsym/gopclntab.h"
#include "user/collect/unwind/unwind_go.h"

#define MAX_FUNCS 2048

struct walk {
	__u64 start, end, last;
	size_t n;
};

static int run(void *ctx, __u64 start, __u64 end, __s32 sp)
{
	struct walk *w = ctx;

	(void)sp;
	if (start < w->start || end > w->end || start >= end || start < w->last)
		abort();
	w->last = end;
	return ++w->n > 100000 ? -E2BIG : 0;
}

static int rule(void *ctx, __u64 pc, __u8 kind, int rbp, __s64 off)
{
	__u64 *last = ctx;

	(void)kind;
	(void)rbp;
	(void)off;
	if (pc < *last)
		abort();
	*last = pc;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_gopcln *g = NULL;
	__u64 text = 0, prev_end = 0, last = 0;
	uint8_t *copy;
	size_t nf = 0;

	if (size >= 8) {
		memcpy(&text, data, 8);
		data += 8;
		size -= 8;
	}
	copy = malloc(size ? size : 1);	/* exactly its size: ASan sees a read past it */
	if (!copy)
		abort();
	memcpy(copy, data, size);
	if (!st_gopcln__parse(copy, size, text, &g)) {
		size_t n = st_gopcln__count(g);

		for (size_t i = 0; i < n && i < MAX_FUNCS; i++) {
			struct walk w = { 0 };
			const struct st_src_frame *f, *f2;
			const char *name, *file;
			size_t at, k, k2;
			__u32 line;

			if (st_gopcln__func(g, i, &w.start, &w.end, &name) || w.end < w.start ||
			    w.start < prev_end)
				abort();
			prev_end = w.start;
			if (name && strlen(name) >= ST_GOPCLN_MAX_NAME)
				abort();
			if (w.end == w.start)
				continue;
			if (st_gopcln__find(g, w.start, &at))
				abort();
			if (at != i) {	/* an empty function before it shares the start */
				__u64 s, e;
				const char *nm;

				if (st_gopcln__func(g, at, &s, &e, &nm) || s != w.start || e != w.end)
					abort();
			}
			if (!st_gopcln__line(g, i, w.end - 1, &file, &line) && !file && !line)
				abort();
			if (file && strlen(file) >= ST_GOPCLN_MAX_NAME)
				abort();
			w.last = w.start;
			(void)st_gopcln__pcsp(g, i, run, &w);
			if (st_gopcln__source(g, w.start, &f, &k) ||
			    st_gopcln__source(g, w.start, &f2, &k2) || k != 1 || k2 != 1 || f != f2)
				abort();
		}
		(void)st_gopcln__find(g, text, &nf);
		st_gopcln__free(g);
	}
	(void)st_unwind_go__rules(copy, size, text, rule, &last, &nf);
	free(copy);
	return 0;
}

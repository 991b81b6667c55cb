/* unwind_go.c - a Go module's unwinding rules from the pcsp runs of its
 * .gopclntab (see unwind_go.h); the table is read by
 * binsym/gopclntab.c, which bounds every offset in it. */
#include "user/collect/unwind/unwind_go.h"

#include <errno.h>
#include <string.h>

#include "stacktree.h"
#include "binsym/gopclntab.h"

static const char *const roots[] = {
	"runtime.goexit", "runtime.mstart", "runtime.rt0_go", "runtime.systemstack",
	"runtime.mcall", "runtime.morestack", "runtime.asmcgocall",
};

/* Calls into the vDSO move rsp to the thread's g0 stack, in the middle of
 * a frame: their caller is found from rbp, which they set as every Go
 * frame does (CFA = rbp + 16 past the prologue). */
static const char *const rbp_framed[] = {
	"time.now", "runtime.nanotime1", "runtime.walltime",
};

static bool among(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

struct go_ctx {
	st_unwind_go_fn fn;
	void *ctx;
	bool rbp;	/* the function's frame is found from rbp */
};

static int run(void *p, __u64 start, __u64 end, __s32 sp)
{
	struct go_ctx *c = p;

	(void)end;
	if (sp < 0)	/* no table says so: as code without CFI (frame pointers
			 * in auto mode, which Go keeps; a stop in dwarf mode).
			 * Not ST_UNW_UNSUPPORTED: auto stops at that (a form of
			 * CFI not evaluated, where rbp is no frame pointer) */
		return c->fn(c->ctx, start, ST_UNW_NONE, ST_UNW_RBP_SAME, 0);
	if (c->rbp && sp > 8)
		return c->fn(c->ctx, start, ST_UNW_RBP, -2, 16);
	return c->fn(c->ctx, start, ST_UNW_RSP, sp > 0 ? -2 : ST_UNW_RBP_SAME, (__s64)sp + 8);
}

int st_unwind_go__rules(const void *pclntab, size_t size, __u64 text, st_unwind_go_fn fn,
			void *ctx, size_t *funcs)
{
	struct go_ctx c = { .fn = fn, .ctx = ctx };
	struct st_gopcln *g = NULL;
	__u64 covered = 0, start, end;
	const char *name;
	int err;

	*funcs = 0;
	err = st_gopcln__parse(pclntab, size, text, &g);
	if (err)
		return err == -ENOMEM ? err : -ENOENT;
	for (size_t i = 0; i < st_gopcln__count(g) && !err; i++) {
		if (st_gopcln__func(g, i, &start, &end, &name) || end <= start)
			continue;
		if (covered && start > covered)		/* a gap: no rule */
			err = fn(ctx, covered, ST_UNW_NONE, ST_UNW_RBP_SAME, 0);
		c.rbp = among(name, rbp_framed, sizeof(rbp_framed) / sizeof(rbp_framed[0]));
		if (!err && among(name, roots, sizeof(roots) / sizeof(roots[0])))
			err = fn(ctx, start, ST_UNW_END, ST_UNW_RBP_SAME, 0);
		else if (!err && st_gopcln__pcsp(g, i, run, &c) == -ENOENT)
			err = fn(ctx, start, ST_UNW_NONE, ST_UNW_RBP_SAME, 0);
		covered = end;
		++*funcs;
	}
	if (!err && covered)
		err = fn(ctx, covered, ST_UNW_NONE, ST_UNW_RBP_SAME, 0);
	st_gopcln__free(g);
	return err;
}

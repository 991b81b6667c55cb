/* out_diff.c - text, folded and SVG reports of two profiles compared, see
 * out_diff.h. */
#include "user/output/out_diff.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/textesc.h"
#include "common/tree.h"
#include "common/u64map.h"
#include "user/model/diff.h"
#include "user/model/profile.h"
#include "user/output/flamegraph.h"

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* ---- text ---------------------------------------------------------------- */

struct text_ctx {
	const struct st_diff *d;
	FILE *out;
	double threshold;
	struct st_u64map *shown;	/* nodes on a branch that moved */
	int err;
};

static bool moved(double delta, double threshold)
{
	return fabs(delta) >= threshold && delta != 0.0;
}

/* A node that moved, and its callers, are shown. */
static int mark(const struct st_node *n, void *ctx)
{
	struct text_ctx *c = ctx;

	if (!n->depth || !moved(st_diff__dcum(c->d, n), c->threshold))
		return 0;
	for (const struct st_node *up = n; up && up->depth; up = up->parent) {
		if (st_u64map__get(c->shown, (uintptr_t)up))
			break;
		if (st_u64map__put(c->shown, (uintptr_t)up, (void *)up)) {
			c->err = -ENOMEM;
			return 1;
		}
	}
	return 0;
}

static int put_path(const struct st_node *n, void *ctx)
{
	struct text_ctx *c = ctx;
	struct st_diff_counts k;
	char name[512];

	if (!n->depth || !st_u64map__get(c->shown, (uintptr_t)n))
		return 0;
	st_diff__node(c->d, n, &k);
	fprintf(c->out, "%7.2f%% %7.2f%% %+8.2f  %*s", st_diff__pct(c->d, ST_DIFF_A, k.cum[0]),
		st_diff__pct(c->d, ST_DIFF_B, k.cum[1]), st_diff__dcum(c->d, n),
		(int)(2 * (n->depth - 1)), "");
	st_textesc__put(c->out, st_frame__name(&n->f, name, sizeof(name)));
	fputc('\n', c->out);
	return 0;
}

static void put_function(FILE *out, const struct st_node *n)
{
	char name[512];

	st_textesc__put(out, st_frame__name(&n->f, name, sizeof(name)));
	if (n->f.function && n->f.module && n->f.kind != ST_FRAME_SPECIAL) {
		fputs(" [", out);
		st_textesc__put(out, base_name(n->f.module));
		fputc(']', out);
	}
}

int st_diff__write_text(const struct st_diff *d, FILE *out, const struct st_diff_out_opts *o)
{
	struct text_ctx c = { .d = d, .out = out, .threshold = o->threshold };
	const struct st_diff_fn *fns;
	size_t n, shown = 0;

	fputs("# stacktree diff: ", out);
	st_textesc__put(out, o->name_a ? o->name_a : "A");
	fprintf(out, " (A, %" PRIu64 " samples) -> ", (uint64_t)st_diff__samples(d, ST_DIFF_A));
	st_textesc__put(out, o->name_b ? o->name_b : "B");
	fprintf(out, " (B, %" PRIu64 " samples)\n", (uint64_t)st_diff__samples(d, ST_DIFF_B));
	fprintf(out, "# shares of each profile's own samples; delta: B's less A's, in points "
		     "of %%; changes under %.2f points not listed (--threshold)\n#\n",
		o->threshold);
	fputs("# functions, most moved first (self: the leaf, as perf diff's Delta and pprof's "
	      "flat; total: on the stack, pprof's cum)\n", out);
	fputs("#  self A   self B     delta   total A  total B     delta  function\n", out);
	fns = st_diff__functions(d, &n);
	for (size_t i = 0; i < n; i++) {
		const struct st_diff_fn *f = &fns[i];

		if (!moved(f->dself, o->threshold) && !moved(f->dtotal, o->threshold))
			continue;
		fprintf(out, "%7.2f%% %7.2f%% %+9.2f  %7.2f%% %7.2f%% %+9.2f  ",
			st_diff__pct(d, ST_DIFF_A, f->self[0]), st_diff__pct(d, ST_DIFF_B, f->self[1]),
			f->dself, st_diff__pct(d, ST_DIFF_A, f->total[0]),
			st_diff__pct(d, ST_DIFF_B, f->total[1]), f->dtotal);
		put_function(out, f->node);
		fputc('\n', out);
		shown++;
	}
	fprintf(out, "# %zu of %zu functions moved by %.2f points or more\n#\n", shown, n,
		o->threshold);
	fputs("# paths: the call tree by function, each frame's total share in A and B and the "
	      "delta; only branches holding a frame that moved\n", out);
	fputs("# total A  total B    delta  frame\n", out);
	c.shown = st_u64map__new();
	if (!c.shown)
		return -ENOMEM;
	st_tree__walk(st_diff__profile(d)->threads[0]->tree, mark, &c);
	if (!c.err)
		st_tree__walk(st_diff__profile(d)->threads[0]->tree, put_path, &c);
	st_u64map__free(c.shown);
	if (c.err)
		return c.err;
	return ferror(out) ? -EIO : 0;
}

/* ---- folded -------------------------------------------------------------- */

struct fold_ctx {
	const struct st_diff *d;
	FILE *out;
	char *buf;		/* the current stack */
	size_t len, cap;
	size_t *ends;		/* ends[depth]: length of buf up to that node */
	size_t nends;
	int err;
};

/* Append ";name" ("name" at the start): ';' as ':', controls as '?' (the
 * format has no escapes, as stacks.folded). */
static int append(struct fold_ctx *c, const char *name, unsigned depth)
{
	size_t n = strlen(name);

	while (c->len + n + 2 > c->cap)
		if (ST_GROW(c->buf, c->cap, c->cap, 256))
			return -ENOMEM;
	while (depth >= c->nends)
		if (ST_GROW(c->ends, c->nends, c->nends, 64))
			return -ENOMEM;
	if (c->len)
		c->buf[c->len++] = ';';
	for (size_t i = 0; i < n;) {
		size_t k = st_textesc__control(name + i, n - i);

		c->buf[c->len++] = k ? '?' : name[i] == ';' ? ':' : name[i];
		i += k ? k : 1;
	}
	c->buf[c->len] = '\0';
	c->ends[depth] = c->len;
	return 0;
}

static int fold_visit(const struct st_node *n, void *ctx)
{
	struct fold_ctx *c = ctx;
	struct st_diff_counts k;
	__u64 sa = st_diff__samples(c->d, ST_DIFF_A), sb = st_diff__samples(c->d, ST_DIFF_B);
	uint64_t a;
	char name[512];

	if (!n->depth)
		return 0;
	c->len = n->depth > 1 ? c->ends[n->depth - 1] : 0;
	if (append(c, st_frame__name(&n->f, name, sizeof(name)), n->depth)) {
		c->err = -ENOMEM;
		return 1;
	}
	st_diff__node(c->d, n, &k);
	/* A's count at B's scale (difffolded.pl -n) */
	a = sa ? (uint64_t)llround((double)k.base[0] * (double)sb / (double)sa) : 0;
	if ((a || k.base[1]) &&
	    fprintf(c->out, "%s %" PRIu64 " %" PRIu64 "\n", c->buf, a, (uint64_t)k.base[1]) < 0) {
		c->err = -EIO;
		return 1;
	}
	return 0;
}

int st_diff__write_folded(const struct st_diff *d, FILE *out)
{
	struct fold_ctx c = { .d = d, .out = out };

	st_tree__walk(st_diff__profile(d)->threads[0]->tree, fold_visit, &c);
	free(c.buf);
	free(c.ends);
	if (c.err)
		return c.err;
	return ferror(out) ? -EIO : 0;
}

/* ---- svg ----------------------------------------------------------------- */

struct svg_ctx {
	const struct st_diff *d;
	double max;		/* the largest |delta| of a frame, points of % */
};

static int find_max(const struct st_node *n, void *ctx)
{
	struct svg_ctx *c = ctx;
	double v = fabs(st_diff__dcum(c->d, n));

	if (n->depth && v > c->max)
		c->max = v;
	return 0;
}

/* FlameGraph's differential colours: red grew, blue shrank, white the
 * same; the deeper the larger the change against the largest one. */
static unsigned diff_colour(const struct st_node *n, void *ctx)
{
	const struct svg_ctx *c = ctx;
	double v = st_diff__dcum(c->d, n);
	unsigned light = c->max > 0 ? (unsigned)lround(210.0 * (1.0 - fabs(v) / c->max)) : 210;

	if (light > 210)
		light = 210;
	if (v > 0)
		return 0xff0000u | light << 8 | light;
	if (v < 0)
		return light << 16 | light << 8 | 0xffu;
	return 0xd2d2d2u;
}

static void diff_describe(const struct st_node *n, char *buf, size_t len, void *ctx)
{
	const struct svg_ctx *c = ctx;
	struct st_diff_counts k;

	st_diff__node(c->d, n, &k);
	snprintf(buf, len, "A %.2f%% -> B %.2f%% of the samples (%+.2f points); self A %.2f%% -> "
		 "B %.2f%%", st_diff__pct(c->d, ST_DIFF_A, k.cum[0]),
		 st_diff__pct(c->d, ST_DIFF_B, k.cum[1]), st_diff__dcum(c->d, n),
		 st_diff__pct(c->d, ST_DIFF_A, k.base[0]), st_diff__pct(c->d, ST_DIFF_B, k.base[1]));
}

int st_diff__write_svg(const struct st_diff *d, FILE *out, const struct st_diff_out_opts *o)
{
	struct svg_ctx c = { .d = d };
	struct st_flamegraph_opts fo = {
		.width = o->svg_width, .offsets = true, .colour = diff_colour,
		.describe = diff_describe, .ctx = &c, .title = "Differential flame graph",
		.legend = "Widths: B's samples. Red: a larger share of B than of A, blue: a "
			  "smaller one; paths only A has are not drawn (swap A and B to see them)",
	};

	st_tree__walk(st_diff__profile(d)->threads[0]->tree, find_max, &c);
	return st_flamegraph__write(st_diff__profile(d), out, -1, &fo);
}

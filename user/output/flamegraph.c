/* flamegraph.c - flamegraph.svg writer, see flamegraph.h.
 *
 * Two passes over the same layout: the first measures (deepest level,
 * the runtimes present for the legend), the second writes the boxes. Code
 * frames are coloured by runtime (common/tree.h), one hue family each. A
 * box is a <g class="f"> with data-l (level), data-n (frame name), data-m
 * (module), data-b/-c/-k (BASE, CUM, CALLS), a <title> tooltip, a <rect>
 * and a <text> label; the inline script zooms and searches by rewriting
 * rect x/width.
 */
#include "user/output/flamegraph.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/model/profile.h"
#include "common/hash.h"
#include "common/textesc.h"
#include "common/tree.h"

#define FG_PAD 10
#define FG_SITES 10		/* call sites listed in a box's tooltip */
#define FG_TOP 52		/* y of level 0 */
#define FG_ROW 17		/* a level: 16 px box + 1 px gap */
#define FG_BOX_H 16
#define FG_MIN_W 0.1		/* narrower boxes are left out */
#define FG_CHAR_W 7.08		/* 12 px Verdana, as the script assumes */
#define GREY_SYNTH 0xd2d2d2u	/* all, process, thread boxes */
#define GREY_SPECIAL 0xb4b4b4u	/* [truncated], [other], [unknown] */

struct fg_box {
	const char *name;
	const char *module;	/* path or NULL */
	__u64 base, cum, calls;
	unsigned rgb;
	const char *cls;	/* data class of a fault profile's data leaf, "inline" for
				 * an inline frame, or NULL */
	const char *file;	/* source position, or NULL */
	__u32 line;
	const struct st_node *node;	/* the tree's node, NULL for synthetic boxes */
};

/* A frame of the thread's tree and the by-function box it went into. */
struct fg_site {
	const struct st_node *dst, *src;
	size_t seq;		/* pre-order position: ties keep tree order */
};

struct fg {
	FILE *out;
	const struct st_profile *p;
	long pid;		/* < 0: every process */
	int width;		/* of the document, px */
	bool offsets;		/* a box per call site, not per function */
	const struct st_flamegraph_opts *o;	/* its hooks (differential graph), or NULL */
	struct fg_site *sites;	/* by function: of the tree walked, by dst */
	size_t nsites, sites_cap;
	int site_err;
	__u64 total;
	double scale;		/* px per sample */
	bool emit;		/* false: the measuring pass */
	unsigned max_level;
	/* the tree being walked */
	unsigned level0;	/* level of its root */
	double x0;		/* x of its root */
	const char *root_name;
	double *start, *next;	/* per depth: x of the last box, x of the next sibling */
	size_t cap;
	bool runtimes[ST_RUNTIME_COUNT];	/* code frames of each runtime drawn */
	int err;
};

struct fg_proc {
	__u32 pid;
	const char *comm;
	__u64 cum;
	size_t nthreads;
};

/* ---- text ---------------------------------------------------------------- */

/* At most max bytes of s as text (common/textesc.h: controls, C1 and
 * invalid UTF-8 as \xNN, a backslash as \\), then XML-escaped; cut only
 * between characters. */
static void xml_putn(FILE *out, const char *s, size_t max)
{
	size_t n = strlen(s), used = 0;
	char esc[ST_TEXTESC_UNIT];

	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t k, len;

		if (c >= 0x20 && c < 0x7f && c != '\\') {	/* printable ASCII: no call */
			k = len = 1;
			esc[0] = '\0';
		} else {
			k = st_textesc__next(s + i, n - i, 0, esc);
			len = esc[0] ? strlen(esc) : k;
		}
		if (used + len > max)
			break;
		used += len;
		if (esc[0]) {
			fputs(esc, out);	/* no XML-special byte in an escape */
		} else if (k > 1) {
			fwrite(s + i, 1, k, out);
		} else {
			switch (s[i]) {
			case '&': fputs("&amp;", out); break;
			case '<': fputs("&lt;", out); break;
			case '>': fputs("&gt;", out); break;
			case '"': fputs("&quot;", out); break;
			case '\'': fputs("&apos;", out); break;
			default: fputc(s[i], out);
			}
		}
		i += k;
	}
}

static void xml_put(FILE *out, const char *s)
{
	xml_putn(out, s, SIZE_MAX);
}

/* The label that fits in w px (the script's fit() does the same, on the
 * name as data-n holds it: escaped). */
static void put_label(FILE *out, const char *name, double w)
{
	double chars = (w - 6) / FG_CHAR_W;	/* NaN and huge widths too */
	size_t n = !(chars >= 3) ? 0 : chars > 1e6 ? 1000000 : (size_t)chars;

	if (n == 0)
		return;
	if (st_textesc__len(name, strlen(name), 0) <= n) {
		xml_put(out, name);
		return;
	}
	xml_putn(out, name, n - 2);	/* never inside a character */
	fputs("..", out);
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path;
}

/* ---- colours ------------------------------------------------------------- */

/* A name's colour seed: the tree's one string hash (common/hash.h), folded
 * to 32 bits; stable across runs and machines. */
static uint32_t colour_seed(const char *s)
{
	__u64 h = st_hash_str(s ? s : "");

	return (uint32_t)(h ^ (h >> 32));
}

static unsigned hsl(double h, double s, double l)
{
	double c = (1 - fabs(2 * l - 1)) * s, hp = h / 60, x = c * (1 - fabs(fmod(hp, 2) - 1));
	double r = 0, g = 0, b = 0, m = l - c / 2;

	switch ((int)hp) {
	case 0: r = c; g = x; break;
	case 1: r = x; g = c; break;
	case 2: g = c; b = x; break;
	case 3: g = x; b = c; break;
	case 4: r = x; b = c; break;
	default: r = c; b = x; break;
	}
	return (unsigned)((r + m) * 255 + 0.5) << 16 | (unsigned)((g + m) * 255 + 0.5) << 8 |
	       (unsigned)((b + m) * 255 + 0.5);
}

/* The data class of a fault profile's data leaf ("module", "stack", "heap"),
 * "inline" for an inline frame (coloured as its module), NULL for other
 * code frames. */
static const char *frame_class(const struct st_node *n)
{
	static const char *const names[] = { [ST_DATA_MODULE] = "module",
					     [ST_DATA_STACK] = "stack", [ST_DATA_HEAP] = "heap" };

	unsigned cls = n->f.data_class & ST_DATA_CLASS_MASK;

	if (n->f.kind == ST_FRAME_INLINE)
		return "inline";
	if (n->f.kind != ST_FRAME_DATA || cls >= sizeof(names) / sizeof(names[0]))
		return NULL;
	return names[cls];
}

static unsigned class_colour(const char *cls)
{
	static const struct {
		const char *cls;
		unsigned rgb;
	} colours[] = { { "module", 0x6f9fd8u }, { "stack", 0x7fc97fu }, { "heap", 0xe07b6au } };

	for (size_t i = 0; i < sizeof(colours) / sizeof(colours[0]); i++)
		if (!strcmp(cls, colours[i].cls))
			return colours[i].rgb;
	return 0xc0a0e0u;
}

/* A hue family per runtime (enum st_runtime): native red to orange, kernel
 * cyan-blue, python yellow, java green. Native code takes one of 6 hues of
 * its family and one of 2 lightnesses from its module's file name (stable
 * across runs and machines), ordered so that near indexes look far apart;
 * the function shades every box a little so neighbours stay apart. */
static unsigned runtime_colour(unsigned runtime, const char *module, const char *function)
{
	static const short native_hues[6] = { 4, 30, 14, 36, 22, 0 };
	static const struct {
		short hue;
		double sat, light;
	} family[ST_RUNTIME_COUNT] = {
		[ST_RUNTIME_NATIVE] = { 0, 0.70, 0.66 },
		[ST_RUNTIME_KERNEL] = { 195, 0.55, 0.66 },
		[ST_RUNTIME_PYTHON] = { 52, 0.80, 0.62 },
		[ST_RUNTIME_JAVA] = { 110, 0.50, 0.62 },
	};
	uint32_t hm = colour_seed(base_name(module)), hf = colour_seed(function);
	double light, shade = function ? ((double)(hf % 7) - 3) * 0.012 : 0;

	if (runtime >= ST_RUNTIME_COUNT)
		runtime = ST_RUNTIME_NATIVE;
	light = family[runtime].light + shade;
	if (runtime != ST_RUNTIME_NATIVE)
		return hsl(family[runtime].hue, family[runtime].sat, light);
	return hsl(native_hues[hm % 6], family[runtime].sat, light + (hm / 6 % 2 ? 0.06 : 0));
}

static unsigned node_colour(const struct st_node *n)
{
	const char *cls = frame_class(n);

	if (cls && n->f.kind == ST_FRAME_DATA)
		return class_colour(cls);
	if (n->f.kind == ST_FRAME_SPECIAL || (!n->f.module && !n->f.function))
		return GREY_SPECIAL;	/* pseudo frames, [unknown] addresses */
	return runtime_colour(n->f.runtime, n->f.module, n->f.function);
}

/* ---- boxes --------------------------------------------------------------- */

static int cmp_site(const void *a, const void *b)
{
	const struct fg_site *x = a, *y = b;

	if (x->dst != y->dst)
		return (uintptr_t)x->dst < (uintptr_t)y->dst ? -1 : 1;
	if (x->src->cum != y->src->cum)
		return x->src->cum > y->src->cum ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void note_site(const struct st_node *src, struct st_node *dst, void *ctx)
{
	struct fg *g = ctx;

	if (!src->depth || g->site_err)
		return;
	if (g->nsites == g->sites_cap) {
		size_t ncap = g->sites_cap ? g->sites_cap * 2 : 64;
		struct fg_site *ns = realloc(g->sites, ncap * sizeof(*ns));

		if (!ns) {
			g->site_err = -ENOMEM;
			return;
		}
		g->sites = ns;
		g->sites_cap = ncap;
	}
	g->sites[g->nsites] = (struct fg_site){ .dst = dst, .src = src, .seq = g->nsites };
	g->nsites++;
}

/* The tooltip's list of the frames merged into a by-function box (its call
 * sites, leaf, inline frames), most samples first; nothing when the box is
 * one frame of the same name. */
static void put_sites(struct fg *g, const struct st_node *node)
{
	size_t lo = 0, hi = g->nsites, n;
	char name[512], bname[512];

	if (!node || !g->nsites)
		return;
	while (lo < hi) {	/* the first site of node */
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)g->sites[mid].dst < (uintptr_t)node)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (n = 0; lo + n < g->nsites && g->sites[lo + n].dst == node; n++)
		;
	if (!n || (n == 1 && !strcmp(st_frame__name(&g->sites[lo].src->f, name, sizeof(name)),
				     st_frame__name(&node->f, bname, sizeof(bname)))))
		return;
	fprintf(g->out, "\ncall sites (%zu):", n);
	for (size_t i = 0; i < n && i < FG_SITES; i++) {
		const struct st_node *s = g->sites[lo + i].src;

		fputs("\n  ", g->out);
		xml_put(g->out, st_frame__name(&s->f, name, sizeof(name)));
		if (s->f.file) {
			fputs(" (", g->out);
			xml_put(g->out, base_name(s->f.file));
			fprintf(g->out, ":%u)", (unsigned)s->f.line);
		}
		fprintf(g->out, ": CUM %" PRIu64, (uint64_t)s->cum);
	}
	if (n > FG_SITES)
		fprintf(g->out, "\n  and %zu more", n - FG_SITES);
}

static void box(struct fg *g, unsigned level, double x, const struct fg_box *b)
{
	double w = (double)b->cum * g->scale, y = FG_TOP + (double)level * FG_ROW;
	FILE *out = g->out;

	if (w < FG_MIN_W || g->err)
		return;
	if (!g->emit) {
		if (level > g->max_level)
			g->max_level = level;
		if (b->node && b->node->f.kind != ST_FRAME_SPECIAL &&
		    b->node->f.kind != ST_FRAME_DATA && b->node->f.runtime < ST_RUNTIME_COUNT)
			g->runtimes[b->node->f.runtime] = true;	/* for the legend */
		return;
	}
	fprintf(out, "<g class=\"f\" data-l=\"%u\" data-n=\"", level);
	xml_put(out, b->name);
	fputs("\" data-m=\"", out);
	xml_put(out, b->module ? b->module : "");
	if (b->cls) {
		fputs("\" data-class=\"", out);
		xml_put(out, b->cls);
	}
	fprintf(out, "\" data-b=\"%" PRIu64 "\" data-c=\"%" PRIu64 "\" data-k=\"%" PRIu64
		     "\"><title>", (uint64_t)b->base, (uint64_t)b->cum, (uint64_t)b->calls);
	xml_put(out, b->name);
	if (b->module) {
		fputs(" [", out);
		xml_put(out, base_name(b->module));
		fputs("]\nmodule: ", out);
		xml_put(out, b->module);
	}
	if (b->cls) {
		fputs("\nclass: ", out);
		xml_put(out, b->cls);
	}
	if (b->file) {
		fputs("\nsource: ", out);
		xml_put(out, b->file);
		fprintf(out, ":%u", (unsigned)b->line);
	}
	put_sites(g, b->node);
	if (b->node && g->o && g->o->describe) {
		char line[256];

		g->o->describe(b->node, line, sizeof(line), g->o->ctx);
		fputc('\n', out);
		xml_put(out, line);
	}
	if (g->p->unit == ST_UNIT_NS)	/* the width is time: ms in the title */
		fprintf(out, "\nBASE %.3f ms, CUM %.3f ms (%.2f%%), CALLS %" PRIu64,
			(double)b->base / 1e6, (double)b->cum / 1e6,
			g->total ? 100.0 * (double)b->cum / (double)g->total : 0.0,
			(uint64_t)b->calls);
	else
		fprintf(out, "\nBASE %" PRIu64 ", CUM %" PRIu64 " (%.2f%%), CALLS %" PRIu64,
			(uint64_t)b->base, (uint64_t)b->cum,
			g->total ? 100.0 * (double)b->cum / (double)g->total : 0.0,
			(uint64_t)b->calls);
	fprintf(out, "</title><rect x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" height=\"%d\" "
		     "fill=\"#%06x\"/><text x=\"%.3f\" y=\"%.1f\">",
		x, y, w, FG_BOX_H, b->rgb, x + 3, y + 12);
	put_label(out, b->name, w);
	fputs("</text></g>\n", out);
}

static int grow_depth(struct fg *g, unsigned depth)
{
	size_t ncap = (depth + 1) * 2;
	double *ns, *nn;

	if (depth < g->cap)
		return 0;
	ns = realloc(g->start, ncap * sizeof(*ns));
	if (ns)
		g->start = ns;
	nn = ns ? realloc(g->next, ncap * sizeof(*nn)) : NULL;
	if (nn)
		g->next = nn;
	if (!ns || !nn)
		return -ENOMEM;
	g->cap = ncap;
	return 0;
}

static int visit(const struct st_node *n, void *ctx)
{
	struct fg *g = ctx;
	struct fg_box b = { .base = n->base, .cum = n->cum, .calls = n->calls };
	char name[512];
	double x;

	if (grow_depth(g, n->depth)) {
		g->err = -ENOMEM;
		return 1;
	}
	if (n->depth == 0) {
		x = g->x0;
		b.name = g->root_name;
		b.rgb = GREY_SYNTH;
	} else {
		x = n == n->parent->first_child ? g->start[n->depth - 1] : g->next[n->depth];
		b.name = st_frame__name(&n->f, name, sizeof(name));
		b.module = n->f.module;
		b.rgb = g->o && g->o->colour ? g->o->colour(n, g->o->ctx) : node_colour(n);
		b.cls = frame_class(n);
		b.file = n->f.file;
		b.line = n->f.line;
		b.node = n;
	}
	g->start[n->depth] = x;
	g->next[n->depth] = x + (double)n->cum * g->scale;
	box(g, g->level0 + n->depth, x, &b);
	return g->err ? 1 : 0;
}

static void walk_thread(struct fg *g, const struct st_thread *t, unsigned level, double x,
			const char *name)
{
	struct st_tree *fn = NULL;

	g->level0 = level;
	g->x0 = x;
	g->root_name = name;
	g->nsites = 0;
	if (!g->offsets) {
		fn = st_tree__by_function(t->tree, g->emit ? note_site : NULL, g);
		if (!fn || g->site_err) {
			g->err = -ENOMEM;
			st_tree__free(fn);
			return;
		}
		if (g->nsites)
			qsort(g->sites, g->nsites, sizeof(*g->sites), cmp_site);
	}
	st_tree__walk(fn ? fn : t->tree, visit, g);
	st_tree__free(fn);
	g->nsites = 0;
}

static bool in_scope(const struct fg *g, const struct st_thread *t)
{
	return g->pid < 0 || (long)t->pid == g->pid;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct fg_proc *x = a, *y = b;

	if (x->cum != y->cum)
		return x->cum > y->cum ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The processes in scope, by samples (threads are already by samples). */
static struct fg_proc *processes(struct fg *g, size_t *n)
{
	struct fg_proc *ps = calloc(g->p->nthreads + 1, sizeof(*ps));

	*n = 0;
	for (size_t i = 0; ps && i < g->p->nthreads; i++) {
		const struct st_thread *t = g->p->threads[i];
		size_t j;

		if (!in_scope(g, t))
			continue;
		for (j = 0; j < *n && ps[j].pid != t->pid; j++)
			;
		if (j == *n)
			ps[(*n)++] = (struct fg_proc){ .pid = t->pid, .comm = t->comm };
		if (t->tid == t->pid)
			ps[j].comm = t->comm;
		ps[j].cum += st_thread__samples(t);
		ps[j].nthreads++;
		g->total += st_thread__samples(t);
	}
	if (ps)
		qsort(ps, *n, sizeof(*ps), cmp_proc);
	return ps;
}

/* Every box of the graph, in pre-order. */
static void layout(struct fg *g, const struct fg_proc *ps, size_t nps)
{
	unsigned level = 0;
	double x = FG_PAD;
	char name[160];

	if (nps > 1) {
		struct fg_box all = { .name = name, .cum = g->total, .rgb = GREY_SYNTH };

		snprintf(name, sizeof(name), "all (%zu processes)", nps);
		box(g, 0, FG_PAD, &all);
		level = 1;
	}
	for (size_t i = 0; i < nps && !g->err; i++) {
		const struct fg_proc *pr = &ps[i];
		double tx = x;

		snprintf(name, sizeof(name), "%s (pid %u)", pr->comm ? pr->comm : "", pr->pid);
		if (pr->nthreads > 1) {
			struct fg_box pb = { .name = name, .cum = pr->cum, .rgb = GREY_SYNTH };

			box(g, level, x, &pb);
		}
		for (size_t j = 0; j < g->p->nthreads && !g->err; j++) {
			const struct st_thread *t = g->p->threads[j];

			if (t->pid != pr->pid || !in_scope(g, t))
				continue;
			if (pr->nthreads > 1) {
				snprintf(name, sizeof(name), "%s (tid %u)", t->comm ? t->comm : "",
					 t->tid);
				walk_thread(g, t, level + 1, tx, name);
			} else {
				walk_thread(g, t, level, tx, name);
			}
			tx += (double)st_thread__samples(t) * g->scale;
		}
		x += (double)pr->cum * g->scale;
	}
}

/* ---- document ------------------------------------------------------------ */

static const char css[] =
	"text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}\n"
	"#title{font-size:16px;font-weight:bold}\n"
	"#subtitle,#hint{fill:#555}\n"
	".f{cursor:pointer}\n"
	".f text{pointer-events:none}\n"
	".f:hover rect{stroke:#000;stroke-width:0.8}\n"
	".hide{display:none}\n"
	".parent{opacity:0.55}\n"
	".m rect{fill:#e637e6}\n"
	"#unzoom{cursor:pointer;fill:#14c}\n"
	"#unzoom.off{fill:#aaa;cursor:default}\n";

static const char js[] =
	"'use strict';\n"
	"var W, PAD, TOTAL, CW = 7.08, frames = [], details, unzoomBtn, matched, input, hint;\n"
	"function init() {\n"
	"  var svg = document.documentElement, gs = document.getElementsByClassName('f');\n"
	"  W = +svg.getAttribute('data-width'); PAD = +svg.getAttribute('data-pad');\n"
	"  TOTAL = +svg.getAttribute('data-total');\n"
	"  details = document.getElementById('details'); hint = details.textContent;\n"
	"  unzoomBtn = document.getElementById('unzoom');\n"
	"  matched = document.getElementById('matched'); input = document.getElementById('search');\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var g = gs[i], r = g.getElementsByTagName('rect')[0];\n"
	"    g.fx = +r.getAttribute('x'); g.fw = +r.getAttribute('width');\n"
	"    g.fl = +g.getAttribute('data-l');\n"
	"    g.addEventListener('mouseover', function () { details.textContent = info(this); });\n"
	"    g.addEventListener('mouseout', function () { details.textContent = hint; });\n"
	"    g.addEventListener('click', function () { zoom(this); });\n"
	"    frames.push(g);\n"
	"  }\n"
	"  unzoomBtn.addEventListener('click', unzoom);\n"
	"  if (input) input.addEventListener('input', function () { search(input.value); });\n"
	"  try {\n"
	"    var q = new URLSearchParams(location.search).get('s');\n"
	"    if (q && input) { input.value = q; search(q); }\n"
	"  } catch (err) { }\n"
	"  document.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey || e.metaKey) && e.key === 'f' && input) { e.preventDefault(); input.focus(); }\n"
	"    else if (e.key === 'Escape') { unzoom(); if (input) { input.value = ''; search(''); } }\n"
	"  });\n"
	"}\n"
	"function pct(c) { return TOTAL ? (100 * c / TOTAL).toFixed(2) + '%' : '-'; }\n"
	"function info(g) {\n"
	"  var m = g.getAttribute('data-m'), s = g.getAttribute('data-n'), c = +g.getAttribute('data-c');\n"
	"  if (m) s += ' [' + m.substring(m.lastIndexOf('/') + 1) + ']';\n"
	"  return s + '   BASE ' + g.getAttribute('data-b') + '   CUM ' + c + ' (' + pct(c) +\n"
	"    ')   CALLS ' + g.getAttribute('data-k');\n"
	"}\n"
	"function fit(s, w) {\n"
	"  var n = Math.floor((w - 6) / CW);\n"
	"  if (n < 3) return '';\n"
	"  return s.length <= n ? s : s.substring(0, n - 2) + '..';\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  var r = g.getElementsByTagName('rect')[0], t = g.getElementsByTagName('text')[0];\n"
	"  r.setAttribute('x', x.toFixed(3)); r.setAttribute('width', w.toFixed(3));\n"
	"  t.setAttribute('x', (x + 3).toFixed(3)); t.textContent = fit(g.getAttribute('data-n'), w);\n"
	"}\n"
	"function zoom(z) {\n"
	"  var x0 = z.fx, w0 = z.fw, l0 = z.fl, k = W / w0, e = 0.002;\n"
	"  frames.forEach(function (g) {\n"
	"    if (g.fl >= l0 && g.fx >= x0 - e && g.fx + g.fw <= x0 + w0 + e) {\n"
	"      g.classList.remove('hide', 'parent'); place(g, PAD + (g.fx - x0) * k, g.fw * k);\n"
	"    } else if (g.fl < l0 && g.fx <= x0 + e && g.fx + g.fw >= x0 + w0 - e) {\n"
	"      g.classList.remove('hide'); g.classList.add('parent'); place(g, PAD, W);\n"
	"    } else {\n"
	"      g.classList.add('hide');\n"
	"    }\n"
	"  });\n"
	"  unzoomBtn.classList.remove('off');\n"
	"}\n"
	"function unzoom() {\n"
	"  frames.forEach(function (g) { g.classList.remove('hide', 'parent'); place(g, g.fx, g.fw); });\n"
	"  unzoomBtn.classList.add('off');\n"
	"}\n"
	"function search(term) {\n"
	"  var test = null, sum = 0, path = [];\n"
	"  if (term) {\n"
	"    try { var re = new RegExp(term, 'i'); test = function (s) { return re.test(s); }; }\n"
	"    catch (err) {\n"
	"      var lc = term.toLowerCase();\n"
	"      test = function (s) { return s.toLowerCase().indexOf(lc) >= 0; };\n"
	"    }\n"
	"  }\n"
	"  frames.forEach(function (g) {\n"
	"    var hit = !!test && test(g.getAttribute('data-n')), l = g.fl, above = l > 0 && path[l - 1];\n"
	"    path[l] = hit || above;\n"
	"    g.classList.toggle('m', hit);\n"
	"    if (hit && !above) sum += +g.getAttribute('data-c');\n"
	"  });\n"
	"  matched.textContent = test ? 'Matched: ' + pct(sum) + ' (' + sum + ' samples)' : ' ';\n"
	"}\n";

static void header(struct fg *g, const struct fg_proc *ps, size_t nps, double height)
{
	const struct st_profile *p = g->p;
	FILE *out = g->out;
	char what[200];

	if (nps == 1)
		snprintf(what, sizeof(what), "%s (pid %u)", ps[0].comm ? ps[0].comm : "", ps[0].pid);
	else
		snprintf(what, sizeof(what), "%zu processes", nps);
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		     "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" onload=\"init()\" data-total=\"%" PRIu64
		     "\" data-width=\"%d\" data-pad=\"%d\">\n",
		g->width, height, g->width, height, (uint64_t)g->total, g->width - 2 * FG_PAD,
		FG_PAD);
	fprintf(out, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", css);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", js);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#fafaf5\"/>\n",
		g->width, height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">%s: ",
		g->width / 2, g->o && g->o->title ? g->o->title : "Flame graph");
	xml_put(out, what);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"40\" text-anchor=\"middle\">",
		g->width / 2);
	xml_put(out, p->event);
	if (p->frequency_hz)
		fprintf(out, " at %u Hz, %.1f s", p->frequency_hz, p->duration_s);
	if (p->unit == ST_UNIT_NS)	/* a box's width is time, not samples */
		fprintf(out, ", %.3f %s (a box's width: its time)", (double)g->total / 1e6,
			st_profile__what(p));
	else
		fprintf(out, ", %" PRIu64 " samples", (uint64_t)g->total);
	if (p->command) {
		fputs(" - ", out);
		xml_putn(out, p->command, 100);
	}
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"unzoom\" class=\"off\" x=\"%d\" y=\"22\">Reset zoom</text>\n", FG_PAD);
	fprintf(out, "<foreignObject x=\"%d\" y=\"6\" width=\"250\" height=\"26\">"
		     "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" "
		     "placeholder=\"Search (regexp)\" style=\"width:240px;font:12px Verdana,sans-serif\"/>"
		     "</foreignObject>\n",
		g->width - FG_PAD - 250);
	fputs("<g id=\"frames\">\n", out);
}

static void footer(struct fg *g, double y)
{
	FILE *out = g->out;
	double x = FG_PAD + 60;

	fputs("</g>\n", out);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%.0f\">%s</text>\n", FG_PAD, y + 18,
		g->total ? "Hover a frame for details, click to zoom; Esc resets"
			 : "No samples");
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%.0f\" text-anchor=\"end\"> </text>\n",
		g->width - FG_PAD, y + 18);
	if (g->o && g->o->legend) {
		fprintf(out, "<text id=\"hint\" x=\"%d\" y=\"%.0f\">", FG_PAD, y + 40);
		xml_put(out, g->o->legend);
		fputs("</text>\n</svg>\n", out);
		return;
	}
	fprintf(out, "<text id=\"hint\" x=\"%d\" y=\"%.0f\">Colour by runtime:</text>\n",
		FG_PAD, y + 40);
	x += 70;
	for (unsigned r = 0; r < ST_RUNTIME_COUNT; r++) {
		const char *name = st_runtime__name(r);
		double w = 22 + FG_CHAR_W * (double)strlen(name);

		if (!g->runtimes[r] || x + w > g->width - FG_PAD)
			continue;
		fprintf(out, "<rect class=\"legend\" data-runtime=\"%s\" x=\"%.0f\" y=\"%.0f\" "
			     "width=\"12\" height=\"12\" fill=\"#%06x\"/>"
			     "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
			name, x, y + 30, runtime_colour(r, NULL, NULL), x + 16, y + 40, name);
		x += w + 14;
	}
	fputs("</svg>\n", out);
}

int st_flamegraph__write(const struct st_profile *p, FILE *out, long pid,
			 const struct st_flamegraph_opts *o)
{
	struct fg g = { .out = out, .p = p, .pid = pid, .width = ST_FLAMEGRAPH_WIDTH };
	struct fg_proc *ps = NULL;
	size_t nps = 0;
	double bottom;
	int err = -ENOMEM;

	if (o && o->width)
		g.width = o->width < ST_FLAMEGRAPH_MIN_WIDTH   ? ST_FLAMEGRAPH_MIN_WIDTH
			  : o->width > ST_FLAMEGRAPH_MAX_WIDTH ? ST_FLAMEGRAPH_MAX_WIDTH
							       : (int)o->width;
	g.offsets = o && o->offsets;
	g.o = o;
	if (!(ps = processes(&g, &nps)))
		goto cleanup;
	g.scale = g.total ? (double)(g.width - 2 * FG_PAD) / (double)g.total : 0;
	layout(&g, ps, nps);	/* measure */
	if ((err = g.err))
		goto cleanup;
	bottom = FG_TOP + (double)(g.max_level + 1) * FG_ROW;
	g.emit = true;
	header(&g, ps, nps, bottom + 50);
	layout(&g, ps, nps);
	if ((err = g.err))
		goto cleanup;
	footer(&g, bottom);
	err = ferror(out) ? -EIO : 0;
cleanup:
	free(g.sites);
	free(g.start);
	free(g.next);
	free(ps);
	return err;
}

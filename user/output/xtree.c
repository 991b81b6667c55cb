/* xtree.c - xtree.txt: each thread's call-stack tree, indented, with
 * BASE / CUM / CALLS per node (seed Figures 14, 15). */
#include "user/output/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/textesc.h"
#include "user/model/faultsum.h"
#include "user/model/profile.h"

#define MAX_INDENT 256
#define XTREE_DATA_GROUPS 10	/* data-leaf groups shown per frame (JSON keeps all) */

struct xtree_ctx {
	FILE *out;
	__u64 total;	/* the thread's samples */
	__u64 min_cum;	/* nodes under this are folded into [other] */
	bool lines;	/* file:line after frames */
	bool ms;	/* counts are ns, shown as ms (offcpu, wall) */
};

static const char *short_module(const char *m)
{
	const char *b = m ? strrchr(m, '/') : NULL;

	return b ? b + 1 : m;
}

static void line(struct xtree_ctx *x, unsigned depth, __u64 base, __u64 cum, __u64 calls,
		 const char *name, const char *module, const struct st_frame *f)
{
	double pct = x->total ? 100.0 * (double)cum / (double)x->total : 0.0;
	unsigned indent = depth > MAX_INDENT ? MAX_INDENT : depth;

	/* names, modules and files are data: escaped (common/textesc.h) */
	if (x->ms)
		fprintf(x->out, "%11.3f %11.3f %6.2f%% %8" PRIu64 "  %*s", (double)base / 1e6,
			(double)cum / 1e6, pct, (uint64_t)calls, (int)(2 * indent), "");
	else
		fprintf(x->out, "%9" PRIu64 " %9" PRIu64 " %6.2f%% %8" PRIu64 "  %*s",
			(uint64_t)base, (uint64_t)cum, pct, (uint64_t)calls, (int)(2 * indent), "");
	st_textesc__put(x->out, name);
	/* an interpreted runtime's frame: its file and line, as Python and Java
	 * users read them */
	if (f && f->file && st_runtime__module(f->runtime)) {
		fputs(" [", x->out);
		st_textesc__put(x->out, short_module(f->file));
		fprintf(x->out, ":%u]", (unsigned)f->line);
	} else if (module && module[0] == '[') {
		fputc(' ', x->out); /* [kernel.kallsyms], [vdso] */
		st_textesc__put(x->out, module);
	} else if (module) {
		fputs(" [", x->out);
		st_textesc__put(x->out, short_module(module));
		fputc(']', x->out);
	}
	if (f && f->kind == ST_FRAME_INLINE)
		fputs(" (inline)", x->out);
	if (f && x->lines && f->file) {
		fputc(' ', x->out);
		st_textesc__put(x->out, short_module(f->file));
		fprintf(x->out, ":%u", (unsigned)f->line);
	}
	fputc('\n', x->out);
}

/* Page-fault data leaves of one frame, grouped by what was touched (the
 * symbol, or the mapping): one line per group, the biggest first. */
struct data_group {
	const struct st_node *first;
	__u64 base, cum, calls, leaves;
};

static int group_cmp(const void *a, const void *b)
{
	const struct data_group *x = a, *y = b;

	return x->cum != y->cum ? (x->cum > y->cum ? -1 : 1) : 0;
}

static bool same_group(const struct st_frame *a, const struct st_frame *b)
{
	return a->data_class == b->data_class && a->function == b->function &&
	       a->module == b->module;
}

static void print_data(struct xtree_ctx *x, const struct st_node *n)
{
	struct data_group g[XTREE_DATA_GROUPS + 1] = {};
	size_t ng = 0;
	char name[512];

	for (const struct st_node *c = n->first_child; c; c = c->next_sibling) {
		size_t i;

		if (c->f.kind != ST_FRAME_DATA)
			continue;
		for (i = 0; i < ng && !same_group(&g[i].first->f, &c->f); i++)
			;
		if (i == ng && ng < XTREE_DATA_GROUPS)
			g[ng++].first = c;
		else if (i == ng)
			i = XTREE_DATA_GROUPS; /* the rest */
		g[i].base += c->base;
		g[i].cum += c->cum;
		g[i].calls += c->calls;
		g[i].leaves++;
	}
	qsort(g, ng, sizeof(g[0]), group_cmp);
	for (size_t i = 0; i < ng; i++) {
		const struct st_frame *f = &g[i].first->f;
		const char *what = f->function ? f->function : f->module ? f->module : "frame";
		unsigned c = f->data_class & ST_DATA_CLASS_MASK;
		bool forced = f->data_class & ST_DATA_FORCED;
		const char *cls = c == ST_DATA_STACK ? (forced ? "(s*)" : "(s)") :
				  c == ST_DATA_HEAP  ? (forced ? "(h*)" : "(h)") :
						       (forced ? "(m*)" : "(m)");

		if (g[i].leaves == 1)
			st_frame__name(f, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%s %s (%" PRIu64 " offsets)", cls, what,
				 (uint64_t)g[i].leaves);
		line(x, n->depth + 1, g[i].base, g[i].cum, g[i].calls, name,
		     f->function && c == ST_DATA_MODULE ? f->module : NULL, NULL);
	}
	if (g[XTREE_DATA_GROUPS].leaves) {
		snprintf(name, sizeof(name), "(...) %" PRIu64 " more data leaves",
			 (uint64_t)g[XTREE_DATA_GROUPS].leaves);
		line(x, n->depth + 1, g[XTREE_DATA_GROUPS].base, g[XTREE_DATA_GROUPS].cum,
		     g[XTREE_DATA_GROUPS].calls, name, NULL, NULL);
	}
}

/* A node's own lines, before its children's. */
static void node_open(struct xtree_ctx *x, const struct st_node *n, const char *root_name)
{
	char name[512];

	if (root_name)
		line(x, n->depth, n->base, n->cum, n->calls, root_name, NULL, NULL);
	else
		line(x, n->depth, n->base, n->cum, n->calls,
		     st_frame__name(&n->f, name, sizeof(name)), n->f.function ? n->f.module : NULL,
		     &n->f);
	print_data(x, n);
}

/* Whether child c gets lines of its own (pruned subtrees count as leaf
 * samples of [other]; data leaves are print_data()'s). */
static bool shown(const struct xtree_ctx *x, const struct st_node *c)
{
	return c->f.kind != ST_FRAME_DATA && c->cum >= x->min_cum;
}

static const struct st_node *first_shown(const struct xtree_ctx *x, const struct st_node *c)
{
	while (c && !shown(x, c))
		c = c->next_sibling;
	return c;
}

/* After a node's children: its pruned ones, as one [other] line. */
static void node_close(struct xtree_ctx *x, const struct st_node *n)
{
	__u64 obase = 0, ocum = 0, ocalls = 0, onodes = 0;
	char name[512];

	for (const struct st_node *c = n->first_child; c; c = c->next_sibling) {
		if (c->f.kind == ST_FRAME_DATA || shown(x, c))
			continue;
		obase += c->cum;
		ocum += c->cum;
		ocalls += c->calls;
		onodes++;
	}
	if (onodes) {
		snprintf(name, sizeof(name), "[other] (%" PRIu64 " subtrees under the threshold)",
			 (uint64_t)onodes);
		line(x, n->depth + 1, obase, ocum, ocalls, name, NULL, NULL);
	}
}

/* The subtree at top, depth first by its links: no recursion, whatever
 * the tree's depth. */
static void print_tree(struct xtree_ctx *x, const struct st_node *top, const char *root_name)
{
	const struct st_node *n = top, *c;

	node_open(x, n, root_name);
	for (;;) {
		c = first_shown(x, n->first_child);
		if (c) {
			n = c;
			node_open(x, n, NULL);
			continue;
		}
		for (;;) {	/* n and its subtree are done */
			node_close(x, n);
			if (n == top)
				return;
			c = first_shown(x, n->next_sibling);
			if (c) {
				n = c;
				node_open(x, n, NULL);
				break;
			}
			n = n->parent;
		}
	}
}

void st_report__header(const struct st_profile *p, FILE *out, const char *title)
{
	char line[1024];
	char event[128];

	/* the command line and the event name (a folded file's name) are data */
	st_textesc__str(p->event, event, sizeof(event));
	fprintf(out, "# stacktree %s (stacktreed %s)\n", title, ST_VERSION);
	if (p->command) {
		fputs("# target: ", out);
		st_textesc__put(out, p->command);
		fputc('\n', out);
	}
	if (p->frequency_hz)
		fprintf(out, "# event: %s, sampled at %u Hz per CPU, %.1f s\n", event,
			p->frequency_hz, p->duration_s);
	else
		fprintf(out, "# event: %s\n", event);
	if (p->unit == ST_UNIT_NS) {
		char v[64];

		fprintf(out, "# unit: ms (BASE and CUM are %s: %s)\n", st_profile__what(p),
			st_profile__how(p));
		fprintf(out, "# BASE: %s where the frame is the leaf;"
			     " CUM: %s where it is on the stack\n", st_profile__what(p),
			st_profile__what(p));
		fprintf(out, "# CALLS: calls seen starting between consecutive samples or "
			     "switches of a thread\n");
		fprintf(out, "# time: %s ms, lost: %" PRIu64,
			st_profile__value(p, p->samples, v, sizeof(v)), (uint64_t)p->lost);
	} else {
		fprintf(out, "# BASE: %s samples where the frame is the leaf;"
			     " CUM: samples where it is on the stack\n", event);
		fprintf(out, "# CALLS: calls seen starting between consecutive samples of a "
			     "thread\n");
		fprintf(out, "# samples: %" PRIu64 ", lost: %" PRIu64, (uint64_t)p->samples,
			(uint64_t)p->lost);
	}
	/* the sentences are ours, unless read back from another's profile.json */
	for (size_t i = 0; i < p->nlost_by; i++) {
		fputs(i ? ", " : " (", out);
		st_textesc__put(out, p->lost_by[i].name);
		fprintf(out, " %" PRIu64, (uint64_t)p->lost_by[i].value);
	}
	fprintf(out, "%s\n", p->nlost_by ? ")" : "");
	for (size_t i = 0; i < p->nnotes; i++) {
		fputs("# ", out);
		st_textesc__put(out, p->notes[i].name);
		fprintf(out, ": %" PRIu64 "\n", (uint64_t)p->notes[i].value);
	}
	if (st_profile__unresolved_line(p, line, sizeof(line))) {
		fputs("# ", out);
		st_textesc__put(out, line);
		fputc('\n', out);
	}
	if (p->bpf_ns_per_sample > 0)
		fprintf(out, "# BPF run time: %.0f ns per sample\n", p->bpf_ns_per_sample);
}

int st_xtree__write(const struct st_profile *p, FILE *out, double min_pct)
{
	return st_xtree__write_lines(p, out, min_pct, false);
}

int st_xtree__write_lines(const struct st_profile *p, FILE *out, double min_pct, bool lines)
{
	__u64 all = 0;

	for (size_t i = 0; i < p->nthreads; i++)
		all += st_thread__samples(p->threads[i]);
	st_report__header(p, out, "xtree");
	if (min_pct > 0)
		fprintf(out, "# nodes under %.2f%% of their thread's samples are folded into [other]\n",
			min_pct);
	fprintf(out, "# threads: %zu\n", p->nthreads);
	if (st_faultsum__applies(p)) {
		struct st_faultsum *fs = st_faultsum__build(p);

		if (fs)
			st_faultsum__write_text(fs, out);
		st_faultsum__free(fs);
	}
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct st_thread *t = p->threads[i];
		struct xtree_ctx x = { .out = out, .total = st_thread__samples(t), .lines = lines,
				       .ms = p->unit == ST_UNIT_NS };
		char root[128], comm[ST_TEXTESC_GROWTH * 64], v[64];

		x.min_cum = min_pct > 0 ? (__u64)((double)x.total * min_pct / 100.0 + 0.999999) : 0;
		fprintf(out, "\n=== pid %u tid %u comm %s: %s %s (%.1f%% of all)\n",
			t->pid, t->tid, st_textesc__str(t->comm, comm, sizeof(comm)),
			st_profile__value(p, x.total, v, sizeof(v)),
			x.ms ? st_profile__what(p) : "samples",
			all ? 100.0 * (double)x.total / (double)all : 0.0);
		if (x.ms)
			fprintf(out, "%11s %11s %7s %8s  %s\n", "BASE ms", "CUM ms", "%CUM", "CALLS",
				"FRAME");
		else
			fprintf(out, "%9s %9s %7s %8s  %s\n", "BASE", "CUM", "%CUM", "CALLS",
				"FRAME");
		snprintf(root, sizeof(root), "[pid %u tid %u %s]", t->pid, t->tid, t->comm);
		print_tree(&x, st_tree__root(t->tree), root);
	}
	return ferror(out) ? -EIO : 0;
}

/* out_stacks.c - each thread's one stack, leaf first, see out_stacks.h. */
#include "user/output/out_stacks.h"

#include <errno.h>
#include <string.h>

#include "common/textesc.h"
#include "common/tree.h"
#include "user/model/profile.h"

static const char *state_name(char s)
{
	switch (s) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "in an uninterruptible sleep";
	case 'T': return "stopped";
	case 't': return "stopped by a tracer";
	case 'Z': return "a zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	default: return "in an unknown state";
	}
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The deepest node of the thread's one path (the leaf of its sample). */
static const struct st_node *leaf_of(const struct st_thread *t)
{
	const struct st_node *n = st_tree__root(t->tree);

	for (;;) {
		const struct st_node *next = NULL;

		for (const struct st_node *c = n->first_child; c && !next; c = c->next_sibling)
			if (c->cum)
				next = c;
		if (!next)
			return n;
		n = next;
	}
}

static void put_frame(FILE *out, const struct st_node *n)
{
	char name[512];

	fputs("    ", out);
	st_textesc__put(out, n->f.function ? n->f.function
					   : st_frame__name(&n->f, name, sizeof(name)));
	if (n->f.kind == ST_FRAME_INLINE)
		fputs(" (inlined)", out);
	if (n->f.module && n->f.kind != ST_FRAME_SPECIAL) {
		fputs(" (", out);
		st_textesc__put(out, base_name(n->f.module));
		fputc(')', out);
	}
	if (n->f.file && n->f.line) {
		fputc(' ', out);
		st_textesc__put(out, base_name(n->f.file));
		fprintf(out, ":%u", (unsigned)n->f.line);
	}
	fputc('\n', out);
}

int st_stacks__write(const struct st_profile *p, const struct st_stack_note *notes, size_t n,
		     FILE *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct st_stack_note *k = &notes[i];
		const struct st_thread *t = NULL;

		for (size_t j = 0; j < p->nthreads && !t; j++)
			if (p->threads[j]->tid == k->tid)
				t = p->threads[j];
		fprintf(out, "Thread %u", (unsigned)k->tid);
		if (t && t->comm) {
			fputs(" (", out);
			st_textesc__put(out, t->comm);
			fputc(')', out);
		}
		fprintf(out, ", %s", state_name(k->state));
		if (k->wchan && k->wchan[0]) {
			fputs(", in ", out);
			st_textesc__put(out, k->wchan);
		}
		if (k->why || !t) {
			fprintf(out, ": no stack: %s\n\n", k->why ? k->why : "none walked");
			continue;
		}
		fputs(":\n", out);
		for (const struct st_node *f = leaf_of(t); f && f->depth; f = f->parent)
			put_frame(out, f);
		if (k->cut)
			fprintf(out, "    (the walk stopped here: %s)\n", k->cut);
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

/* roots.c - stacks that end short of an entry go under [truncated] (see
 * roots.h). */
#include "user/model/roots.h"

#include <errno.h>
#include <string.h>

#include "common/strtab.h"
#include "common/tree.h"
#include "user/model/profile.h"

/* Exact names; Go's also with the ".abi0" suffix of assembly functions. */
static const char *const entries[] = {
	"_start", "__libc_start_main", "__libc_start_call_main",	/* a process */
	"start_thread", "clone", "__clone", "clone3", "__clone3",	/* a thread */
	"runtime.goexit", "runtime.mstart", "runtime.rt0_go",		/* Go */
	"runtime.systemstack", "runtime.mcall", "runtime.morestack", "runtime.asmcgocall",
};

bool st_roots__is_entry(const char *function)
{
	size_t len;

	if (!function)
		return false;
	len = strlen(function);
	if (len > 5 && !strcmp(function + len - 5, ".abi0"))
		len -= 5;
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (strlen(entries[i]) == len && !strncmp(function, entries[i], len))
			return true;
	return false;
}

/* Whether a child of a thread's root ends its stack short. */
static bool short_stack(const struct st_node *c)
{
	if (c->f.kind == ST_FRAME_SPECIAL || c->f.kind == ST_FRAME_DATA ||
	    c->f.runtime == ST_RUNTIME_KERNEL)
		return false;	/* [truncated], [kernel]; a data leaf; kernel frames alone */
	return !st_roots__is_entry(c->f.function);
}

/* The counts of t's short stacks; whether it has any. */
static bool count_short(const struct st_tree *t, struct st_short_counts *n)
{
	bool any = false;

	for (const struct st_node *c = st_tree__root(t)->first_child; c; c = c->next_sibling) {
		if (!short_stack(c))
			continue;
		any = true;
		if (c->f.function)
			n->named += c->cum;
		else
			n->unnamed += c->cum;
	}
	return any;
}

/* t's short stacks moved under its [truncated] node (interned trunc). */
static int move_short(struct st_tree *t, const char *trunc)
{
	struct st_frame tf = { .kind = ST_FRAME_SPECIAL, .function = trunc };
	struct st_node *root = st_tree__root(t), *under = NULL, *c, *next;

	for (c = root->first_child; c; c = c->next_sibling)
		if (c->f.kind == ST_FRAME_SPECIAL && c->f.function == trunc)
			tf = c->f;	/* the walk's own [truncated]: one node */
	for (c = root->first_child; c; c = next) {
		int err;

		next = c->next_sibling;	/* (a new [truncated] goes last) */
		if (!short_stack(c))
			continue;
		if (!under && !(under = st_tree__child(t, root, &tf, true)))
			return -ENOMEM;
		if ((err = st_tree__adopt(t, under, c)))
			return err;
	}
	return 0;
}

int st_roots__mark_short(struct st_profile *p, struct st_short_counts *out)
{
	const char *trunc = NULL;

	for (size_t i = 0; i < p->nthreads; i++) {
		struct st_thread *th = p->threads[i];
		struct st_short_counts n = { 0, 0 };
		int err;

		if (!count_short(th->tree, &n))
			continue;
		if (!trunc && !(trunc = st_strtab__intern(p->strs, ST_TRUNCATED_NAME)))
			return -ENOMEM;
		err = move_short(th->tree, trunc);
		if (err)
			return err;
		st_tree__finalize(th->tree);	/* [truncated]'s cum, with what it got */
		out->named += n.named;
		out->unnamed += n.unnamed;
	}
	return 0;
}

/* faultsum.c - per-process summary of a page-fault profile. */
#include "user/model/faultsum.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "common/textesc.h"
#include "user/model/jsonstr.h"
#include "user/model/profile.h"

static const char *const class_label[] = { "instruction", "module", "stack", "heap" };

bool st_faultsum__applies(const struct st_profile *p)
{
	return p && p->event && strcmp(p->event, "page-faults") == 0;
}

/* Add n to the entry named (name, module), appending it if new. */
static int tally(struct st_faultsum_entry **arr, size_t *len, const char *name,
		 const char *module, __u64 n)
{
	struct st_faultsum_entry *na;

	for (size_t i = 0; i < *len; i++) {
		if ((*arr)[i].name == name && (*arr)[i].module == module) {
			(*arr)[i].faults += n;
			return 0;
		}
	}
	na = realloc(*arr, (*len + 1) * sizeof(*na));
	if (!na)
		return -ENOMEM;
	*arr = na;
	na[(*len)++] = (struct st_faultsum_entry){ .name = name, .module = module, .faults = n };
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct st_faultsum_entry *x = a, *y = b;

	return x->faults != y->faults ? (x->faults > y->faults ? -1 : 1) : 0;
}

static struct st_faultsum_proc *proc_of(struct st_faultsum *s, const struct st_thread *t)
{
	struct st_faultsum_proc *np;

	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == t->pid)
			return &s->procs[i];
	np = realloc(s->procs, (s->nprocs + 1) * sizeof(*np));
	if (!np)
		return NULL;
	s->procs = np;
	memset(&np[s->nprocs], 0, sizeof(*np));
	np[s->nprocs].pid = t->pid;
	np[s->nprocs].comm = t->comm;
	return &np[s->nprocs++];
}

static int add_node(struct st_faultsum_proc *pp, const struct st_node *n)
{
	const char *mod = n->f.module;
	int err = 0;

	if (n->f.kind == ST_FRAME_DATA) {
		unsigned cls = n->f.data_class & ST_DATA_CLASS_MASK;

		pp->by_class[cls] += n->base;
		if (cls == ST_DATA_STACK)
			mod = "[stack]";
		err = tally(&pp->modules, &pp->nmodules, mod ? mod : "[unknown]", NULL, n->base);
		if (!err && n->f.function && cls != ST_DATA_STACK)
			err = tally(&pp->symbols, &pp->nsymbols, n->f.function, n->f.module,
				    n->base);
	} else {
		pp->instr += n->base; /* a fault that ended at a function: instruction */
	}
	pp->total += n->base;
	return err;
}

/* add_node() on every node of the subtree at top, in pre-order by its
 * links: no recursion, whatever the tree's depth. */
static int add_tree(struct st_faultsum_proc *pp, const struct st_node *top)
{
	const struct st_node *n = top;
	int err;

	for (;;) {
		err = add_node(pp, n);
		if (err)
			return err;
		if (n->first_child) {
			n = n->first_child;
			continue;
		}
		while (n != top && !n->next_sibling)
			n = n->parent;
		if (n == top)
			return 0;
		n = n->next_sibling;
	}
}

void st_faultsum__free(struct st_faultsum *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++) {
		free(s->procs[i].modules);
		free(s->procs[i].symbols);
	}
	free(s->procs);
	free(s);
}

struct st_faultsum *st_faultsum__build(const struct st_profile *p)
{
	struct st_faultsum *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	for (size_t i = 0; i < p->nthreads; i++) {
		struct st_faultsum_proc *pp = proc_of(s, p->threads[i]);

		if (!pp || add_tree(pp, st_tree__root(p->threads[i]->tree)))
			goto cleanup;
	}
	for (size_t i = 0; i < s->nprocs; i++) {
		struct st_faultsum_proc *pp = &s->procs[i];

		if (pp->nmodules)
			qsort(pp->modules, pp->nmodules, sizeof(*pp->modules), entry_cmp);
		if (pp->nsymbols)
			qsort(pp->symbols, pp->nsymbols, sizeof(*pp->symbols), entry_cmp);
		if (pp->nsymbols > ST_FAULTSUM_TOP)
			pp->nsymbols = ST_FAULTSUM_TOP;
	}
	return s;
cleanup:
	st_faultsum__free(s);
	errno = ENOMEM;
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path;
}

void st_faultsum__write_text(const struct st_faultsum *s, FILE *out)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct st_faultsum_proc *pp = &s->procs[i];

		char comm[ST_TEXTESC_GROWTH * 64];

		/* names are data: escaped (common/textesc.h) */
		fprintf(out, "# faults of pid %u (%s): %" PRIu64 ": instruction %" PRIu64
			", module (m) %" PRIu64 ", stack (s) %" PRIu64 ", heap (h) %" PRIu64 "\n",
			pp->pid, st_textesc__str(pp->comm, comm, sizeof(comm)), (uint64_t)pp->total,
			(uint64_t)pp->instr,
			(uint64_t)pp->by_class[ST_DATA_MODULE], (uint64_t)pp->by_class[ST_DATA_STACK],
			(uint64_t)pp->by_class[ST_DATA_HEAP]);
		fprintf(out, "#   data faults by mapping:");
		for (size_t j = 0; j < pp->nmodules; j++) {
			fputs(j ? ", " : " ", out);
			st_textesc__put(out, base_name(pp->modules[j].name));
			fprintf(out, " %" PRIu64, (uint64_t)pp->modules[j].faults);
		}
		fprintf(out, "\n#   top data symbols:");
		for (size_t j = 0; j < pp->nsymbols; j++) {
			fputs(j ? ", " : " ", out);
			st_textesc__put(out, pp->symbols[j].name);
			fputs(" [", out);
			st_textesc__put(out, base_name(pp->symbols[j].module));
			fprintf(out, "] %" PRIu64, (uint64_t)pp->symbols[j].faults);
		}
		fprintf(out, "%s\n", pp->nsymbols ? "" : " none");
	}
}

static json_object *entries_json(const struct st_faultsum_entry *e, size_t n, bool symbols)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++) {
		json_object *o = json_object_new_object();

		if (!o)
			break;
		json_object_object_add(o, symbols ? "symbol" : "mapping",
				       st_json__string(e[i].name));
		if (symbols)
			json_object_object_add(o, "module",
					       e[i].module ? st_json__string(e[i].module)
							   : NULL);
		json_object_object_add(o, "faults", json_object_new_int64((int64_t)e[i].faults));
		json_object_array_add(a, o);
	}
	return a;
}

struct json_object *st_faultsum__to_json(const struct st_faultsum *s)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < s->nprocs; i++) {
		const struct st_faultsum_proc *pp = &s->procs[i];
		json_object *o = json_object_new_object(), *cls = json_object_new_object();

		if (!o || !cls) {
			json_object_put(o);
			json_object_put(cls);
			break;
		}
		json_object_object_add(o, "pid", json_object_new_int64(pp->pid));
		json_object_object_add(o, "comm", st_json__string(pp->comm));
		json_object_object_add(o, "faults", json_object_new_int64((int64_t)pp->total));
		json_object_object_add(cls, class_label[0], json_object_new_int64((int64_t)pp->instr));
		for (int c = ST_DATA_MODULE; c <= ST_DATA_HEAP; c++)
			json_object_object_add(cls, class_label[c],
					       json_object_new_int64((int64_t)pp->by_class[c]));
		json_object_object_add(o, "by_class", cls);
		json_object_object_add(o, "by_mapping", entries_json(pp->modules, pp->nmodules, false));
		json_object_object_add(o, "top_symbols",
				       entries_json(pp->symbols, pp->nsymbols, true));
		json_object_array_add(a, o);
	}
	return a;
}

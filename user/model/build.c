/* build.c - a profile from the collector's raw trees, named (see build.h). */
#include "user/model/build.h"

#include <errno.h>

#include "common/tree.h"
#include "user/collect/collector.h"
#include "user/model/profile.h"
#include "user/model/roots.h"
#include "user/symbolize/namer.h"

int st_build__add_module(void *p, const char *name, const char *path, const char *build_id)
{
	return st_profile__add_module(p, name, path, build_id);
}

int st_build__note_invented(struct st_profile *p, __u64 n)
{
	return n ? st_profile__add_note_id(p, "invented_outermost",
					   "outermost frames in no mapping, left out (a frame-pointer "
					   "walk through code without frame pointers)", n) : 0;
}

int st_build__finish(struct st_profile *p)
{
	st_profile__finalize(p);
	for (size_t i = 0; i < p->nthreads; i++)
		p->samples += st_thread__samples(p->threads[i]);
	return st_profile__count_unresolved(p);
}

struct st_profile *st_profile__build(struct st_collector *c, const struct st_namer *n,
				     const char *event, __u32 ev)
{
	struct st_profile *p = st_profile__new(event);
	struct st_short_counts cut = { 0, 0 };
	struct st_raw_thread t;
	size_t pos = 0;
	__u64 invented = 0;

	if (!p)
		return NULL;
	st_collector__read_perfmaps(c);	/* the drain's reading */
	while (st_collector__next_thread(c, &pos, &t)) {
		struct st_thread *pt;

		if (t.ev != ev)
			continue;
		pt = st_profile__add_thread(p, t.pid, t.tid, t.comm);
		if (!pt || st_thread__set_cgroup(pt, t.cgroup) ||
		    st_namer__tree(n, &t, pt->tree, p->strs, st_build__add_module, p,
				   &invented))
			goto cleanup;
	}
	if (st_build__note_invented(p, invented) || st_build__finish(p) ||
	    st_roots__mark_short(p, &cut) ||
	    (cut.named && st_profile__add_note_id(p, "short_of_entry",
			"stacks ending short of a thread entry (at a named frame)", cut.named)) ||
	    (cut.unnamed && st_profile__add_note_id(p, "short_unnamed",
			"stacks ending short of a thread entry (at an unnamed frame)", cut.unnamed)))
		goto cleanup;
	return p;
cleanup:
	st_profile__free(p);
	errno = ENOMEM;
	return NULL;
}

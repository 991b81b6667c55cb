/* build.h - the daemon's profile: the collected raw trees, named.
 *
 * Owner: user/model/build.c. Takes each raw thread of the collect stage
 * (user/collect/collector.h), has the symbolize stage name its tree
 * (user/symbolize/namer.h) into a thread of a new profile, and finishes the
 * profile (CUM, order, sample and unresolved counts).
 */
#ifndef STACKTREE_BUILD_H
#define STACKTREE_BUILD_H

#include <stdbool.h>
#include <linux/types.h>

struct st_collector;
struct st_namer;
struct st_profile;

/* The named profile (finalized) of the collector's trees of event ev
 * (ST_EVENT_*: the timer's, the page faults', off-CPU); event names it. The collector keeps
 * its trees. NULL with errno ENOMEM. */
struct st_profile *st_profile__build(struct st_collector *c, const struct st_namer *n,
				     const char *event, __u32 ev);

/* st_module_fn (user/symbolize/namer.h) adding to profile p's modules
 * (JSON "modules", pprof mappings with their build ids). */
int st_build__add_module(void *p, const char *name, const char *path, const char *build_id);

/* Count n outermost frames the namer left out (st_namer__tree()'s
 * *invented) in p's notes. 0 or -ENOMEM. */
int st_build__note_invented(struct st_profile *p, __u64 n);

/* Finish a profile whose trees were named: finalize, count its samples and
 * its unresolved frames. 0 or -ENOMEM. */
int st_build__finish(struct st_profile *p);

#endif

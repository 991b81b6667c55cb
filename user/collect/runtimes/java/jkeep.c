/* jkeep.c - a JVM's walks' reads kept for their replay after it exited
 * (see jkeep.h). */
#include <stdlib.h>
#include <string.h>

#include "bpf/stacktree.h"
#include "common/u64map.h"
#include "user/collect/runtimes/java/jkeep.h"

/* The key of a read: its address (below 2^47) and size (1 to 256) in the
 * bits above; never 0. */
#define KEY(addr, n) ((addr) | (__u64)(n) << 47)

struct st_jkeep {
	struct st_u64map *reads;	/* KEY -> n bytes (malloc'd) */
};

struct st_jkeep *st_jkeep__new(void)
{
	struct st_jkeep *k = calloc(1, sizeof(*k));

	if (k && !(k->reads = st_u64map__new())) {
		free(k);
		k = NULL;
	}
	return k;
}

void st_jkeep__free(struct st_jkeep *k)
{
	size_t pos = 0;
	void *v;

	if (!k)
		return;
	while ((v = st_u64map__next(k->reads, &pos, NULL)))
		free(v);
	st_u64map__free(k->reads);
	free(k);
}

long st_jkeep__read(struct st_jkeep *k, bool keep, st_vm_read_fn rd, void *arg, void *dst,
		    __u32 n, __u64 addr, enum st_jkeep_how *how)
{
	enum st_jkeep_how h = ST_JKEEP_LIVE;
	long r = rd(arg, dst, n, addr);
	bool keepable = k && n && n <= ST_JKEEP_READ_MAX && addr < ST_USER_END;
	void *kept;

	if (r) {
		h = ST_JKEEP_FAILED;
		if (keepable && (kept = st_u64map__get(k->reads, KEY(addr, n)))) {
			memcpy(dst, kept, n);
			h = ST_JKEEP_REPLAYED;
			r = 0;
		}
	} else if (keep && keepable && !st_u64map__get(k->reads, KEY(addr, n)) &&
		   st_u64map__count(k->reads) < ST_JKEEP_MAX && (kept = malloc(n))) {
		memcpy(kept, dst, n);
		if (st_u64map__put(k->reads, KEY(addr, n), kept))
			free(kept);
		else
			h = ST_JKEEP_KEPT;
	}
	if (how)
		*how = h;
	return r;
}

size_t st_jkeep__count(const struct st_jkeep *k)
{
	return k ? st_u64map__count(k->reads) : 0;
}

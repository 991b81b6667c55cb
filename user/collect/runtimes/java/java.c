/* java.c - the JVMs a session meets, found and counted (see java.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/u64map.h"
#include "user/collect/runtimes/java/java.h"
#include "user/collect/runtimes/java/jvmproc.h"

/* What is known of a pid (the map's values; none: look again): found,
 * failed, or TRIES times the probes that found a libjvm but could not
 * read its tables yet. While a JVM loads libjvm its tables are still zero,
 * or cannot be read, for a moment (a probe then failed once in 9 runs of
 * test_java.py's -- java under the sanitized daemon): they are read at a
 * later read of its maps, up to MAX_TRIES probes in all. */
enum { FOUND = 1, FAILED = 2, TRIES = 4 };
#define MAX_TRIES 8

struct st_java {
	struct st_jvm_cache *cache;
	struct st_u64map *done;		/* pid + 1 -> FOUND or FAILED */
	struct st_java_stats stats;
};

struct st_java *st_java__new(void)
{
	struct st_java *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->cache = st_jvm_cache__new();
	j->done = st_u64map__new();
	if (!j->cache || !j->done) {
		st_java__free(j);
		return NULL;
	}
	return j;
}

void st_java__free(struct st_java *j)
{
	if (!j)
		return;
	st_jvm_cache__free(j->cache);
	st_u64map__free(j->done);
	free(j);
}

void st_java__probe(struct st_java *j, __u32 pid)
{
	struct st_jvm_proc *p;
	uintptr_t state;
	int r;

	if (!j)
		return;
	state = (uintptr_t)st_u64map__get(j->done, (__u64)pid + 1);
	if (state == FOUND || state == FAILED)
		return;
	p = malloc(sizeof(*p));	/* 1.5 KiB: off the stack of the drain */
	if (!p)
		return;
	r = st_jvm_proc__probe(j->cache, (int)pid, p);
	free(p);
	if (r == ST_JVM_PROBE_NONE || r == -ENOENT || r == -ESRCH)
		return;		/* none (yet), or the process is gone */
	if (r == ST_JVM_PROBE_OK) {
		state = FOUND;
		j->stats.jvms++;
	} else if (state / TRIES + 1 < MAX_TRIES) {
		state += TRIES;	/* starting, or unreadable for now */
	} else {
		state = FAILED;
		j->stats.failed++;
	}
	/* untracked (no memory): probed again at the next read (and a JVM
	 * found counted again: better than one not counted) */
	(void)st_u64map__put(j->done, (__u64)pid + 1, (void *)state);
}

void st_java__exited(struct st_java *j, __u32 pid)
{
	/* only a pid known: the slot stays (a pid reused finds it), so
	 * slots are bounded by the JVM processes seen, not all exits */
	if (j && st_u64map__get(j->done, (__u64)pid + 1))
		st_u64map__put(j->done, (__u64)pid + 1, NULL);
}

void st_java__stats(const struct st_java *j, struct st_java_stats *out)
{
	size_t hits = 0, reads = 0;

	*out = j->stats;
	st_jvm_cache__stats(j->cache, &reads, &hits);
	out->table_reads = reads;
}

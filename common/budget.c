/* budget.c - the daemon's one memory budget: per-part charges against one
 * limit, evictors asked in part order before a charge is refused (see
 * budget.h). */
#include "common/budget.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const st_budget_part_names[ST_BUDGET__N] = {
	[ST_BUDGET_SYMBOLS] = "symbols", [ST_BUDGET_MAPS] = "maps",
	[ST_BUDGET_PYCODE] = "python code", [ST_BUDGET_UNWIND] = "unwind tables",
	[ST_BUDGET_DEFER] = "deferred queue", [ST_BUDGET_TREES] = "trees",
};

struct st_budget {
	size_t limit, used, peak;
	size_t part[ST_BUDGET__N], part_peak[ST_BUDGET__N];
	__u64 refused[ST_BUDGET__N], evicted_bytes;
	struct {
		st_budget_evict_fn fn;
		void *ctx;
	} evict[ST_BUDGET__N];
	bool evicting;	/* an evictor's own charges evict nothing more */
};

struct st_budget *st_budget__new(size_t limit)
{
	struct st_budget *b;

	if (!limit) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->limit = limit;
	return b;
}

void st_budget__free(struct st_budget *b)
{
	free(b);
}

void st_budget__on_evict(struct st_budget *b, enum st_budget_part part, st_budget_evict_fn fn,
			 void *ctx)
{
	if (!b || part >= ST_BUDGET__N)
		return;
	b->evict[part].fn = fn;
	b->evict[part].ctx = ctx;
}

static void account(struct st_budget *b, enum st_budget_part part, size_t bytes)
{
	b->used = b->used - b->part[part] + bytes;
	b->part[part] = bytes;
	if (bytes > b->part_peak[part])
		b->part_peak[part] = bytes;
	if (b->used > b->peak)
		b->peak = b->used;
}

/* Ask the evictors, in part order, until total + extra fits. */
static void make_room(struct st_budget *b, size_t extra)
{
	if (b->evicting)
		return;
	b->evicting = true;
	for (int p = 0; p < ST_BUDGET__N && b->used + extra > b->limit; p++) {
		size_t before = b->used;

		if (!b->evict[p].fn || !b->part[p])
			continue;
		b->evict[p].fn(b->evict[p].ctx, b->used + extra - b->limit);
		if (b->used < before)
			b->evicted_bytes += before - b->used;
	}
	b->evicting = false;
}

int st_budget__charge(struct st_budget *b, enum st_budget_part part, size_t bytes)
{
	if (!b)
		return 0;
	if (part >= ST_BUDGET__N)
		return -EINVAL;
	if (bytes > b->limit || b->used + bytes > b->limit)
		make_room(b, bytes > b->limit ? 0 : bytes);
	if (bytes > b->limit || b->used + bytes > b->limit) {
		b->refused[part]++;
		return -ENOSPC;
	}
	account(b, part, b->part[part] + bytes);
	return 0;
}

void st_budget__uncharge(struct st_budget *b, enum st_budget_part part, size_t bytes)
{
	if (!b || part >= ST_BUDGET__N)
		return;
	account(b, part, bytes < b->part[part] ? b->part[part] - bytes : 0);
}

bool st_budget__set(struct st_budget *b, enum st_budget_part part, size_t bytes)
{
	if (!b || part >= ST_BUDGET__N)
		return false;
	account(b, part, bytes);
	if (b->used > b->limit)
		make_room(b, 0);
	return b->used > b->limit;
}

void st_budget__refused(struct st_budget *b, enum st_budget_part part)
{
	if (b && part < ST_BUDGET__N)
		b->refused[part]++;
}

bool st_budget__fits(const struct st_budget *b, size_t bytes)
{
	return !b || (bytes <= b->limit && b->used + bytes <= b->limit);
}

void st_budget__stats(const struct st_budget *b, struct st_budget_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!b)
		return;
	out->limit = b->limit;
	out->used = b->used;
	out->peak = b->peak;
	memcpy(out->part, b->part, sizeof(out->part));
	memcpy(out->part_peak, b->part_peak, sizeof(out->part_peak));
	memcpy(out->refused, b->refused, sizeof(out->refused));
	out->evicted_bytes = b->evicted_bytes;
}

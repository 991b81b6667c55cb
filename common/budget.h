/* budget.h - the daemon's one memory budget (--memory-mb): every large
 * consumer (symbol cache, processes' maps, Python code caches, unwind
 * tables, the deferred queue, the pending trees) charges what it holds to
 * its part, and a charge that would take the total over the limit first
 * asks the evictors (registered per part, called in part order: the symbol
 * cache's unused modules first) to free memory, and is refused (counted
 * per part, the caller counts what it did not keep) if that was not
 * enough. A NULL budget accepts every charge (tools and tests without one).
 * Not thread-safe: the daemon's main loop owns it.
 * Owner: common/budget.c. */
#ifndef STACKTREE_BUDGET_H
#define STACKTREE_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* The consumers, in eviction order (what is cheapest to rebuild first). */
enum st_budget_part {
	ST_BUDGET_SYMBOLS,	/* symbolizer: modules' symbol tables, names, lines */
	ST_BUDGET_MAPS,		/* collector: processes' maps tables, perf maps */
	ST_BUDGET_PYCODE,	/* CPython code-object caches */
	ST_BUDGET_UNWIND,	/* CFI rows (BPF maps charged to the daemon's cgroup) */
	ST_BUDGET_DEFER,	/* samples waiting for their unwind tables */
	ST_BUDGET_TREES,	/* call trees, including intervals not yet written */
	ST_BUDGET__N
};

/* Short names for the summary and /metrics ("symbols", "maps", ...). */
extern const char *const st_budget_part_names[ST_BUDGET__N];

struct st_budget;

/* A budget of limit bytes (> 0); NULL and errno ENOMEM/EINVAL. */
struct st_budget *st_budget__new(size_t limit);
void st_budget__free(struct st_budget *b);

/* Free at least need bytes of part's memory if it can (uncharging them
 * with st_budget__uncharge() or __set()); returns the bytes freed. It may
 * charge nothing itself. */
typedef size_t (*st_budget_evict_fn)(void *ctx, size_t need);
/* One evictor per part (a second replaces the first; fn NULL removes). */
void st_budget__on_evict(struct st_budget *b, enum st_budget_part part, st_budget_evict_fn fn,
			 void *ctx);

/* Take bytes more for part: 0, or -ENOSPC (counted as one refusal of
 * part) when the total would exceed the limit even after the evictors of
 * every part (part's own included) ran. */
int st_budget__charge(struct st_budget *b, enum st_budget_part part, size_t bytes);
/* Give bytes of part back (at most what it holds). */
void st_budget__uncharge(struct st_budget *b, enum st_budget_part part, size_t bytes);
/* Consumers that measure rather than count: part holds bytes now. Never
 * refused (the memory is held already); when the total is over the limit
 * the evictors run (part's own included: call it where an eviction of
 * part's unused memory is safe); returns whether it is still over. */
bool st_budget__set(struct st_budget *b, enum st_budget_part part, size_t bytes);
/* Count one refusal of part made by its owner (a thing not kept because
 * the budget was full, decided without a charge). */
void st_budget__refused(struct st_budget *b, enum st_budget_part part);
/* Whether bytes more would fit now without evicting anything. */
bool st_budget__fits(const struct st_budget *b, size_t bytes);

struct st_budget_stats {
	size_t limit, used, peak;
	size_t part[ST_BUDGET__N];		/* held now */
	size_t part_peak[ST_BUDGET__N];
	__u64 refused[ST_BUDGET__N];		/* charges refused */
	__u64 evicted_bytes;			/* freed by evictors for others */
};
/* Zeros for a NULL budget. */
void st_budget__stats(const struct st_budget *b, struct st_budget_stats *out);

#endif

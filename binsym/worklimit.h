/* worklimit.h - how long one module's loading may take, how many symbols
 * it may add, and whether the daemon was asked to stop (private).
 *
 * A st_work is filled for one module's symbol loading (and the CRC of its
 * debug file candidates); the loops that depend on a file's size or
 * contents poll st_work__over() every few thousand steps and stop when it
 * says so; the caller then counts the reason (out_of_time, cancelled,
 * too_many) in the symbolizer's statistics. */
#ifndef STACKTREE_SYMBOLIZER_WORKLIMIT_H
#define STACKTREE_SYMBOLIZER_WORKLIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct st_work {
	double deadline;		/* CLOCK_MONOTONIC seconds; 0: none */
	size_t max_symbols;		/* per symbol table read; 0: none */
	bool (*cancel)(void *ctx);	/* the daemon is stopping, or NULL */
	void *cancel_ctx;
	bool out_of_time, cancelled, too_many;	/* what stopped the work */
};

static inline double st_work__now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Whether to stop now (notes why). w may be NULL: never. */
static inline bool st_work__over(struct st_work *w)
{
	if (!w)
		return false;
	if (w->cancel && w->cancel(w->cancel_ctx))
		w->cancelled = true;
	else if (w->deadline > 0 && st_work__now() > w->deadline)
		w->out_of_time = true;
	return w->cancelled || w->out_of_time;
}

#endif

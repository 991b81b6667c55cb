/* fake_ustore.h - a link seam for the unit tests of the module
 * bookkeeping and the unwinder (test_unwind_modules.c, test_unwinder.c):
 * the functions of user/collect/unwind/unwind_store.h defined in memory, so that
 * the linker takes these and not the real ones (which create BPF maps and
 * need root; test_unwind_store.c tests those). Every put gets a slot of
 * its own, rows from 0; the budget counts rows' bytes exactly. Include it
 * in one test file only (it defines the functions). */
#ifndef STACKTREE_TESTS_FAKE_USTORE_H
#define STACKTREE_TESTS_FAKE_USTORE_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "user/collect/unwind/unwind_store.h"

#define FAKE_SLOTS 256

static struct fake_ustore {
	size_t budget, bytes, peak;
	struct st_unwind_row *rows[FAKE_SLOTS];
	size_t n[FAKE_SLOTS];
	unsigned puts, drops, ticks;
	struct st_uextent last_put, last_drop;
} fus;

struct st_ustore *st_ustore__new(int modules_fd, __u32 slots, size_t budget)
{
	(void)modules_fd;
	(void)slots;
	memset(&fus, 0, sizeof(fus));
	fus.budget = budget;
	return (struct st_ustore *)&fus;
}

void st_ustore__free(struct st_ustore *s)
{
	(void)s;
	for (size_t i = 0; i < FAKE_SLOTS; i++)
		free(fus.rows[i]);
	memset(&fus, 0, sizeof(fus));
}

int st_ustore__put(struct st_ustore *s, const struct st_unwind_row *rows, size_t n,
		   struct st_uextent *where)
{
	__u32 slot = 0;

	(void)s;
	if (!n || fus.bytes + n * sizeof(*rows) > fus.budget)
		return -ENOSPC;
	while (slot < FAKE_SLOTS && fus.rows[slot])
		slot++;
	if (slot == FAKE_SLOTS || !(fus.rows[slot] = malloc(n * sizeof(*rows))))
		return -ENOSPC;
	memcpy(fus.rows[slot], rows, n * sizeof(*rows));
	fus.n[slot] = n;
	fus.bytes += n * sizeof(*rows);
	if (fus.bytes > fus.peak)
		fus.peak = fus.bytes;
	*where = (struct st_uextent){ .slot = slot, .first = 0, .n = (__u32)n };
	fus.last_put = *where;
	fus.puts++;
	return 0;
}

void st_ustore__drop(struct st_ustore *s, const struct st_uextent *where)
{
	(void)s;
	if (where->slot >= FAKE_SLOTS || !fus.rows[where->slot])
		return;
	free(fus.rows[where->slot]);
	fus.rows[where->slot] = NULL;
	fus.bytes -= fus.n[where->slot] * sizeof(struct st_unwind_row);
	fus.n[where->slot] = 0;
	fus.last_drop = *where;
	fus.drops++;
}

void st_ustore__tick(struct st_ustore *s)
{
	(void)s;
	fus.ticks++;
}

const struct st_unwind_row *st_ustore__rows(const struct st_ustore *s, __u32 slot, size_t *n)
{
	(void)s;
	if (slot >= FAKE_SLOTS || !fus.rows[slot])
		return NULL;
	*n = fus.n[slot];
	return fus.rows[slot];
}

void st_ustore__stats(const struct st_ustore *s, struct st_ustore_stats *out)
{
	(void)s;
	memset(out, 0, sizeof(*out));
	out->bytes = fus.bytes;
	out->peak_bytes = fus.peak;
	out->budget = fus.budget;
	for (size_t i = 0; i < FAKE_SLOTS; i++)
		if (fus.rows[i]) {
			out->shards++;
			out->rows += fus.n[i];
		}
}

#endif

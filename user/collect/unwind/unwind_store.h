/* unwind_store.h - where the modules' CFI rows live in the kernel: shards,
 * BPF array maps of rows sized by use (st_ustore__shard_rows(): the first
 * 512 KiB, each next one as big as all held, up to 8 MiB, or one module's
 * rows when it has more), each in a slot of the `unwind_shards` array of
 * maps (BPF_F_INNER_MAP: sizes may differ) and mapped writable in the
 * daemon. A module's rows take an extent of a shard.
 * The shards' memory is bounded (--unwind-memory); a shard is added only
 * when no extent is free (adding one makes the kernel wait for an RCU grace
 * period: per shard, never per module), and deleted once empty (the last
 * one left is kept, whichever it is). Released extents and slots are reused two ticks (the
 * unwinder's sweeps) later. Private to user/collect/unwind/unwind_modules.c; owner:
 * user/collect/unwind/unwind_store.c. */
#ifndef STACKTREE_UNWIND_STORE_H
#define STACKTREE_UNWIND_STORE_H

#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

struct st_ustore;

/* Rows of one module: shard slot, first row in it, count. */
struct st_uextent {
	__u32 slot, first, n;
};

struct st_ustore_stats {
	size_t bytes, peak_bytes, budget;	/* shards' kernel memory */
	size_t shards, rows;			/* shards and rows held now */
};

/* modules_fd: the `unwind_shards` map, of slots entries; budget in bytes.
 * NULL with errno set. */
struct st_ustore *st_ustore__new(int modules_fd, __u32 slots, size_t budget);
void st_ustore__free(struct st_ustore *s);

/* Copy n rows in, into the fullest shard with room (the emptier ones may
 * then empty and go), else a new one: 0 and *where, -ENOSPC over the
 * budget (or out of slots), -ENOMEM, or the kernel's error. */
int st_ustore__put(struct st_ustore *s, const struct st_unwind_row *rows, size_t n,
		   struct st_uextent *where);
/* Give an extent back (its shard goes when empty). */
void st_ustore__drop(struct st_ustore *s, const struct st_uextent *where);
/* One tick of the reuse clock (call once per sweep). */
void st_ustore__tick(struct st_ustore *s);

/* Rows of the shard to add for a module of n rows when the shards held
 * have room for held_rows: held_rows (the shards double as they fill)
 * within 65,536 and 1,048,576 (512 KiB to 8 MiB), n if more. */
size_t st_ustore__shard_rows(size_t held_rows, size_t n);

/* The rows of shard slot (*n of them), NULL when there is none. */
const struct st_unwind_row *st_ustore__rows(const struct st_ustore *s, __u32 slot, size_t *n);

void st_ustore__stats(const struct st_ustore *s, struct st_ustore_stats *out);

#endif

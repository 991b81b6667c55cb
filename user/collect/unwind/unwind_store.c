/* unwind_store.c - the modules' CFI rows in BPF shard maps (see
 * unwind_store.h). */
#include "user/collect/unwind/unwind_store.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "user/collect/unwind/extents.h"

#define SHARD_ROWS (1u << 20)	/* 8 MiB, the most a shard grows to (libLLVM-14: 948,864
				 * rows and a pc index of up to 237,216 entries, a
				 * shard of its own) */
#define MIN_SHARD_ROWS (1u << 16)	/* 512 KiB, the first shard's size */
#define QUARANTINE 2		/* ticks before a released extent or slot is reused */

struct shard {
	struct st_unwind_row *rows;	/* mapped writable */
	size_t bytes;
	struct st_extents *ext;		/* its rows */
};

struct st_ustore {
	int modules_fd;
	__u32 nslots;
	struct shard *shards;		/* by slot; rows == NULL: empty slot */
	struct st_extents *slots;
	size_t budget, bytes, peak_bytes, nshards;
	__u64 tick;
};

struct st_ustore *st_ustore__new(int modules_fd, __u32 slots, size_t budget)
{
	struct st_ustore *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->modules_fd = modules_fd;
	s->nslots = slots;
	s->budget = budget;
	s->tick = QUARANTINE;	/* extents released at tick 0 wait like any */
	s->shards = calloc(slots, sizeof(*s->shards));
	s->slots = st_extents__new(slots, QUARANTINE);
	if (!s->shards || !s->slots) {
		st_ustore__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

static void unmap_shard(struct shard *sh)
{
	if (sh->rows)
		munmap(sh->rows, sh->bytes);
	st_extents__free(sh->ext);
	memset(sh, 0, sizeof(*sh));
}

void st_ustore__free(struct st_ustore *s)
{
	if (!s)
		return;
	for (__u32 i = 0; s->shards && i < s->nslots; i++)
		unmap_shard(&s->shards[i]);
	free(s->shards);
	st_extents__free(s->slots);
	free(s);
}

size_t st_ustore__shard_rows(size_t held_rows, size_t n)
{
	size_t rows = held_rows;

	if (rows < MIN_SHARD_ROWS)
		rows = MIN_SHARD_ROWS;
	if (rows > SHARD_ROWS)
		rows = SHARD_ROWS;
	return rows < n ? n : rows;
}

static size_t page_round(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (bytes + page - 1) / page * page;
}

/* A new shard for at least n rows: its slot, or -ENOSPC / the kernel's error. */
static int add_shard(struct st_ustore *s, size_t n, __u32 *slot)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	size_t room = s->budget - s->bytes, rows, bytes;
	struct shard sh = { 0 };
	int fd = -1, err;

	if (page_round(n * sizeof(*sh.rows)) > room)
		return -ENOSPC;
	rows = st_ustore__shard_rows(s->bytes / sizeof(*sh.rows), n);
	if (page_round(rows * sizeof(*sh.rows)) > room)	/* the rest of the budget */
		rows = room / sizeof(*sh.rows);
	bytes = page_round(rows * sizeof(*sh.rows));
	err = st_extents__alloc(s->slots, 1, s->tick, slot);
	if (err)
		return err;
	sh.bytes = bytes;
	sh.ext = st_extents__new((__u32)rows, QUARANTINE);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "st_unw_rows", sizeof(__u32), sizeof(*sh.rows),
			    (__u32)rows, &opts);
	if (!sh.ext || fd < 0) {
		err = sh.ext ? -errno : -ENOMEM;
		goto cleanup;
	}
	sh.rows = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh.rows == MAP_FAILED) {
		sh.rows = NULL;
		err = -errno;
		goto cleanup;
	}
	if (bpf_map_update_elem(s->modules_fd, slot, &fd, BPF_ANY)) {
		err = -errno;
		goto cleanup;
	}
	s->shards[*slot] = sh;
	s->bytes += bytes;
	if (s->bytes > s->peak_bytes)
		s->peak_bytes = s->bytes;
	s->nshards++;
cleanup:
	if (fd >= 0)
		close(fd);	/* unwind_shards and the mapping hold it */
	if (err) {
		unmap_shard(&sh);
		st_extents__release(s->slots, *slot, 1, s->tick);
	}
	return err;
}

struct fill {
	double f;	/* rows used over the shard's rows */
	__u32 slot;
};

static int fuller_first(const void *a, const void *b)
{
	const struct fill *x = a, *y = b;

	if (x->f != y->f)
		return x->f > y->f ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The shards held, the fullest first (ties: the lower slot), in by[]
 * (room for nshards); their count. */
static size_t by_fill(const struct st_ustore *s, struct fill *by)
{
	size_t k = 0;

	for (__u32 i = 0; i < s->nslots && k < s->nshards; i++) {
		const struct shard *sh = &s->shards[i];

		if (sh->rows)
			by[k++] = (struct fill){
				.f = (double)st_extents__used(sh->ext) /
				     (double)(sh->bytes / sizeof(*sh->rows)),
				.slot = i };
	}
	qsort(by, k, sizeof(*by), fuller_first);
	return k;
}

int st_ustore__put(struct st_ustore *s, const struct st_unwind_row *rows, size_t n,
		   struct st_uextent *where)
{
	__u32 slot, first;
	int err;

	if (!n || n > ST_UNWIND_MAX_MODULE_ROWS)
		return -ENOSPC;
	/* the fullest shard first, so that the emptier ones may empty and go */
	if (s->nshards) {
		struct fill *by = malloc(s->nshards * sizeof(*by));
		size_t k;

		if (!by)
			return -ENOMEM;
		k = by_fill(s, by);
		for (size_t i = 0; i < k; i++)
			if (!st_extents__alloc(s->shards[by[i].slot].ext, (__u32)n, s->tick,
					       &first)) {
				slot = by[i].slot;
				free(by);
				goto found;
			}
		free(by);
	}
	err = add_shard(s, n, &slot);
	if (err)
		return err;
	err = st_extents__alloc(s->shards[slot].ext, (__u32)n, s->tick, &first);
	if (err)
		return err;
found:
	memcpy(s->shards[slot].rows + first, rows, n * sizeof(*rows));
	where->slot = slot;
	where->first = first;
	where->n = (__u32)n;
	return 0;
}

void st_ustore__drop(struct st_ustore *s, const struct st_uextent *where)
{
	struct shard *sh;

	if (where->slot >= s->nslots || !s->shards[where->slot].rows)
		return;
	sh = &s->shards[where->slot];
	st_extents__release(sh->ext, where->first, where->n, s->tick);
	if (st_extents__used(sh->ext) || s->nshards == 1)
		return;
	/* empty: out of the kernel (a walk that found it keeps it until the
	 * end of its RCU section; later ones find no rows, never others') */
	bpf_map_delete_elem(s->modules_fd, &where->slot);
	s->bytes -= sh->bytes;
	s->nshards--;
	unmap_shard(sh);
	st_extents__release(s->slots, where->slot, 1, s->tick);
}

void st_ustore__tick(struct st_ustore *s)
{
	s->tick++;
}

const struct st_unwind_row *st_ustore__rows(const struct st_ustore *s, __u32 slot, size_t *n)
{
	if (slot >= s->nslots || !s->shards[slot].rows)
		return NULL;
	*n = s->shards[slot].bytes / sizeof(struct st_unwind_row);
	return s->shards[slot].rows;
}

void st_ustore__stats(const struct st_ustore *s, struct st_ustore_stats *out)
{
	out->bytes = s->bytes;
	out->peak_bytes = s->peak_bytes;
	out->budget = s->budget;
	out->shards = s->nshards;
	out->rows = 0;
	for (__u32 i = 0; i < s->nslots; i++)
		if (s->shards[i].rows)
			out->rows += st_extents__used(s->shards[i].ext);
}

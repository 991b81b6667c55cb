/* pprof_read.c - a pprof profile read into a profile, see pprof_read.h. */
#include "user/model/pprof_read.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/strtab.h"
#include "common/tree.h"
#include "common/u64map.h"
#include "proto/profile.pb-c.h"
#include "user/model/profile.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;

#define FILE_MAX_BYTES ST_PPROF_MAX_BYTES	/* compressed input, too */

bool st_pprof__looks_like(const unsigned char *head, size_t n, const char *name)
{
	size_t l = name ? strlen(name) : 0;

	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		return true;
	return (l > 6 && !strcmp(name + l - 6, ".pprof")) || (l > 3 && !strcmp(name + l - 3, ".pb"));
}

/* gunzip data into *out (malloc'd), at most ST_PPROF_MAX_BYTES. */
static int gunzip(const unsigned char *data, size_t len, unsigned char **out, size_t *olen)
{
	z_stream zs = { .next_in = (unsigned char *)data };
	size_t cap = len * 4 + 4096, n = 0;
	unsigned char *buf = NULL;
	int ret, err = 0;

	if (len > UINT32_MAX || inflateInit2(&zs, 15 + 32) != Z_OK)
		return -EINVAL;
	zs.avail_in = (uInt)len;
	do {
		if (n == cap || !buf) {
			unsigned char *nb;

			if (buf)
				cap *= 2;
			if (cap > ST_PPROF_MAX_BYTES)
				cap = ST_PPROF_MAX_BYTES;
			if (buf && n == cap) {
				err = -EFBIG;
				break;
			}
			if (!(nb = realloc(buf, cap))) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
		}
		zs.next_out = buf + n;
		zs.avail_out = (uInt)(cap - n > UINT32_MAX ? UINT32_MAX : cap - n);
		ret = inflate(&zs, Z_NO_FLUSH);
		n = zs.total_out;
		if (ret != Z_OK && ret != Z_STREAM_END)
			err = -EINVAL;
	} while (!err && ret != Z_STREAM_END);
	inflateEnd(&zs);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*olen = n;
	return 0;
}

struct reader {
	const Profile *pb;
	struct st_profile *p;
	struct st_u64map *fns, *locs, *maps;	/* id -> message */
	char *err;
	size_t errlen;
};

static int fail(struct reader *r, const char *what)
{
	snprintf(r->err, r->errlen, "%s", what);
	return -EINVAL;
}

/* string_table[i] interned in the profile; NULL for "" or a bad index. */
static const char *string(struct reader *r, int64_t i)
{
	if (i <= 0 || (uint64_t)i >= r->pb->n_string_table || !r->pb->string_table[i][0])
		return NULL;
	return st_strtab__intern(r->p->strs, r->pb->string_table[i]);
}

static int index_ids(struct reader *r)
{
	const Profile *pb = r->pb;

	for (size_t i = 0; i < pb->n_function; i++)
		if (!pb->function[i]->id || st_u64map__put(r->fns, pb->function[i]->id, pb->function[i]))
			return pb->function[i]->id ? -ENOMEM : fail(r, "a function with id 0");
	for (size_t i = 0; i < pb->n_location; i++)
		if (!pb->location[i]->id || st_u64map__put(r->locs, pb->location[i]->id, pb->location[i]))
			return pb->location[i]->id ? -ENOMEM : fail(r, "a location with id 0");
	for (size_t i = 0; i < pb->n_mapping; i++)
		if (!pb->mapping[i]->id || st_u64map__put(r->maps, pb->mapping[i]->id, pb->mapping[i]))
			return pb->mapping[i]->id ? -ENOMEM : fail(r, "a mapping with id 0");
	return 0;
}

/* The value index to count: "samples", else "count", else 0. */
static size_t value_index(const struct reader *r)
{
	const Profile *pb = r->pb;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < pb->n_sample_type; i++) {
			int64_t t = pb->sample_type[i]->type;
			const char *s = t > 0 && (uint64_t)t < pb->n_string_table ?
					pb->string_table[t] : "";

			if (!strcmp(s, pass ? "count" : "samples"))
				return i;
		}
	return 0;
}

_Static_assert(ST_TREE_MAX_DEPTH == 2048, "add_frame() says 2048");

static int add_frame(struct reader *r, struct st_frame *path, size_t *n, const struct st_frame *f)
{
	if (*n == ST_TREE_MAX_DEPTH)
		return fail(r, "a sample deeper than 2048 frames (ST_TREE_MAX_DEPTH)");
	path[(*n)++] = *f;
	return 0;
}

/* One sample's frames, root first. */
static int sample_path(struct reader *r, const Perftools__Profiles__Sample *s,
		       struct st_frame *path, size_t *n)
{
	*n = 0;
	for (size_t i = s->n_location_id; i-- > 0;) {
		const Location *l = st_u64map__get(r->locs, s->location_id[i]);
		const Mapping *m;
		const char *module = NULL;
		int err;

		if (!l)
			return fail(r, "a sample names a location that does not exist");
		if (l->mapping_id && (m = st_u64map__get(r->maps, l->mapping_id)))
			module = string(r, m->filename);
		if (!l->n_line) {
			struct st_frame f = { .kind = ST_FRAME_FUNCTION, .addr = l->address,
					      .module = module };

			if ((err = add_frame(r, path, n, &f)))
				return err;
			continue;
		}
		for (size_t j = l->n_line; j-- > 0;) {	/* the caller is the last line */
			const Function *fn = st_u64map__get(r->fns, l->line[j]->function_id);
			struct st_frame f = { .kind = ST_FRAME_FUNCTION, .module = module };

			if (!fn)
				return fail(r, "a line names a function that does not exist");
			f.function = string(r, fn->name);
			if (!f.function)
				f.addr = l->address;
			for (unsigned rt = 0; module && rt < ST_RUNTIME_COUNT; rt++)
				if (st_runtime__module(rt) && !strcmp(module, st_runtime__module(rt)))
					f.runtime = (__u8)rt;
			if ((err = add_frame(r, path, n, &f)))
				return err;
		}
	}
	return 0;
}

int st_pprof__read(const unsigned char *data, size_t len, const char *name,
		   struct st_profile **out, char *err, size_t errlen)
{
	struct reader r = { .err = err, .errlen = errlen };
	unsigned char *plain = NULL;
	struct st_frame *path = NULL;
	const char *base = name ? strrchr(name, '/') : NULL;
	struct st_thread *t;
	Profile *pb = NULL;
	size_t vi;
	int ret;

	*out = NULL;
	err[0] = '\0';
	if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		if ((ret = gunzip(data, len, &plain, &len))) {
			snprintf(err, errlen, "%s", ret == -EFBIG ? "over 1 GiB once decompressed"
						  : ret == -ENOMEM ? "out of memory"
								   : "not valid gzip data");
			return ret;
		}
		data = plain;
	}
	pb = perftools__profiles__profile__unpack(NULL, len, data);
	if (!pb) {
		ret = fail(&r, "not a pprof profile (profile.proto)");
		goto cleanup;
	}
	r.pb = pb;
	ret = -ENOMEM;
	r.p = st_profile__new("pprof");
	r.fns = st_u64map__new();
	r.locs = st_u64map__new();
	r.maps = st_u64map__new();
	path = malloc(ST_TREE_MAX_DEPTH * sizeof(*path));
	if (!r.p || !r.fns || !r.locs || !r.maps || !path)
		goto cleanup;
	if (!pb->n_sample_type) {
		ret = fail(&r, "no sample type");
		goto cleanup;
	}
	if (pb->n_string_table == 0 || pb->string_table[0][0]) {
		ret = fail(&r, "string_table[0] is not \"\"");
		goto cleanup;
	}
	if ((ret = index_ids(&r)))
		goto cleanup;
	vi = value_index(&r);
	t = st_profile__add_thread(r.p, 0, 0, base ? base + 1 : name ? name : "pprof");
	if (!t) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		int64_t v = vi < s->n_value ? s->value[vi] : 0;
		size_t n;

		if (v <= 0)
			continue;
		if ((ret = sample_path(&r, s, path, &n)))
			goto cleanup;
		if (r.p->samples + (uint64_t)v < r.p->samples) {
			ret = fail(&r, "the sample counts overflow");
			goto cleanup;
		}
		if (!st_tree__add_sample(t->tree, path, n, (__u64)v, ST_CALLS_FUNCTION)) {
			ret = -ENOMEM;
			goto cleanup;
		}
		r.p->samples += (uint64_t)v;
	}
	st_profile__finalize(r.p);
	*out = r.p;
	r.p = NULL;
	ret = 0;
cleanup:
	if (ret == -ENOMEM && !err[0])
		snprintf(err, errlen, "out of memory");
	st_profile__free(r.p);
	st_u64map__free(r.fns);
	st_u64map__free(r.locs);
	st_u64map__free(r.maps);
	free(path);
	if (pb)
		perftools__profiles__profile__free_unpacked(pb, NULL);
	free(plain);
	return ret;
}

int st_pprof__read_path(const char *path, struct st_profile **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	int ret = 0;

	*out = NULL;
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(-ret));
		return ret;
	}
	for (;;) {
		size_t got;

		if (len == cap) {
			unsigned char *nb;

			cap = cap ? cap * 2 : 1 << 16;
			if (cap > FILE_MAX_BYTES + 1 || !(nb = realloc(buf, cap))) {
				ret = cap > FILE_MAX_BYTES + 1 ? -EFBIG : -ENOMEM;
				snprintf(err, errlen, "%s: %s", path,
					 ret == -EFBIG ? "over 1 GiB" : "out of memory");
				goto cleanup;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: cannot read", path);
		goto cleanup;
	}
	ret = st_pprof__read(buf, len, path, out, err, errlen);
	if (ret && err[0]) {	/* the file's name first */
		char why[512];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", path, why);
	}
cleanup:
	fclose(f);
	free(buf);
	return ret;
}

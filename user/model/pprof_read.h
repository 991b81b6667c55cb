/* pprof_read.h - read a pprof profile (profile.proto, gzip-compressed or
 * not: go tool pprof's, Pyroscope's, stacktreed's profile.pb.gz) into a
 * profile, for `stacktree diff`. Owner: user/model/pprof_read.c.
 *
 * Every sample's locations (leaf first) become a path of ST_FRAME_FUNCTION
 * frames, root first: a location's lines (inlined functions, the caller
 * last) each a frame named by its function, the module by the location's
 * mapping; a location without lines is its address. The value counted is
 * the sample type named "samples" or "count" (else the first one). One
 * thread (pid 0) named after the file; event "pprof"; finalized. Bounded:
 * at most ST_PPROF_MAX_BYTES decompressed, ST_TREE_MAX_DEPTH frames a
 * sample, ids and string indices checked; protobuf-c checks the encoding.
 */
#ifndef STACKTREE_PPROF_READ_H
#define STACKTREE_PPROF_READ_H

#include <stdbool.h>
#include <stddef.h>

struct st_profile;

#define ST_PPROF_MAX_BYTES (1ul << 30)	/* decompressed */

/* Whether the first bytes look like a pprof file: gzip's magic (a
 * profile.pb.gz), or a name ending in .pprof or .pb. */
bool st_pprof__looks_like(const unsigned char *head, size_t n, const char *name);

/* Read data (len bytes); name for messages and the thread's name. 0, or
 * -EINVAL (err: what is wrong), -ENOMEM, -EFBIG (over the bound). */
int st_pprof__read(const unsigned char *data, size_t len, const char *name,
		   struct st_profile **out, char *err, size_t errlen);
/* The same from a file. -errno when it cannot be read. */
int st_pprof__read_path(const char *path, struct st_profile **out, char *err, size_t errlen);

#endif

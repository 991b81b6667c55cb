/* pprof.h - profile.pb.gz: the profile as a gzip-compressed pprof
 * profile.proto (proto/profile.proto), read by `go tool pprof`, Pyroscope and
 * Parca. Owner: user/output/pprof.c.
 *
 *   sample_type   samples/count, and cpu/nanoseconds (count x period) for
 *                 timer profiles (frequency_hz > 0)
 *   Sample        one per tree node with BASE > 0: location ids leaf first
 *                 (the node, its parent, ... up to the first frame), labels
 *                 pid and tid (numbers), comm, cgroup and container when
 *                 known, plus per-frame string labels: "class" (module,
 *                 stack, heap) on the data leaves of fault profiles
 *   Location      one per distinct (module, runtime address, function); one
 *                 Line -> Function; frames without a symbol get a function
 *                 named as in xtree ("module+0xoff"), so pprof never tries to
 *                 symbolize addresses itself
 *   Function      name = system_name = the symbol, filename = module path
 *   Mapping       one per module, build_id empty (profiles carry none yet),
 *                 memory range = the sampled addresses, has_functions set
 *   period_type   cpu/nanoseconds, period 1e9/frequency_hz (samples/count, 1
 *                 for other events); duration_nanos; time_nanos = when the
 *                 file was written minus the duration
 */
#ifndef STACKTREE_PPROF_H
#define STACKTREE_PPROF_H

#include <stddef.h>
#include <stdio.h>

struct st_profile;

/* Encode a finalized profile (uncompressed protobuf, malloc'd into *buf). */
int st_pprof__encode(const struct st_profile *p, unsigned char **buf, size_t *len);

/* Write it gzip-compressed. 0, -ENOMEM or -EIO. */
int st_pprof__write(const struct st_profile *p, FILE *out);

#endif

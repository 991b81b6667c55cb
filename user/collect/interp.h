/* interp.h - the interpreted runtimes whose own stacks stacktreed walks
 * (--interpreters), by name: one table, one bit each (ST_INTERP_*,
 * bpf/stacktree.h), which BPF gets as one read-only bitmask. A new runtime
 * is one more entry here, one more bit and its walker beside
 * bpf/python.bpf.h (docs/design.md, "Adding a runtime"). Owner: user/collect/interp.c. */
#ifndef STACKTREE_INTERP_H
#define STACKTREE_INTERP_H

#include <stddef.h>

#include "stacktree.h"

/* Parse a comma-separated LIST of runtime names ("python"), or "all"
 * (every supported one) or "none", into *mask (ST_INTERP_*). 0, or
 * -EINVAL with the first unknown name copied to bad (bad_len bytes, may
 * be NULL); an empty list or an empty name is unknown. */
int st_interp__parse(const char *list, unsigned *mask, char *bad, size_t bad_len);

/* The supported names, comma-separated ("python"), into buf (len bytes,
 * cut if short), for messages: buf. */
const char *st_interp__names(char *buf, size_t len);

#endif

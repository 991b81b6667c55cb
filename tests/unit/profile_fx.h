/* profile_fx.h - frames for the unit tests' hand-built profiles. */
#ifndef STACKTREE_TEST_PROFILE_FX_H
#define STACKTREE_TEST_PROFILE_FX_H

#include <string.h>

#include "user/model/profile.h"
#include "common/strtab.h"

/* A call site fn+off in mod. */
static inline struct st_frame cs(struct st_profile *p, const char *fn, __u64 off, const char *mod)
{
	return (struct st_frame){ .kind = ST_FRAME_CALLSITE, .addr = 0x400000 + off * 16,
				  .function = st_strtab__intern(p->strs, fn), .offset = off,
				  .module = st_strtab__intern(p->strs, mod) };
}

/* The sampled function fn in mod (an address of its own). */
static inline struct st_frame lf(struct st_profile *p, const char *fn, const char *mod)
{
	return (struct st_frame){ .kind = ST_FRAME_LEAF, .addr = 0x500000 + strlen(fn),
				  .function = st_strtab__intern(p->strs, fn),
				  .module = st_strtab__intern(p->strs, mod) };
}

#endif

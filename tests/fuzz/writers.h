/* writers.h - for the fuzz targets of the offline readers: every report
 * writer on what was read (the outputs go to /dev/null; a writer may fail,
 * never crash). */
#ifndef STACKTREE_FUZZ_WRITERS_H
#define STACKTREE_FUZZ_WRITERS_H

#include <stdio.h>
#include <stdlib.h>

#include "user/output/arcflow.h"
#include "user/output/flamegraph.h"
#include "user/output/out_folded.h"
#include "user/output/pprof.h"
#include "user/model/profile.h"
#include "user/output/json.h"
#include "user/output/report.h"

static inline void fuzz_write_all(const struct st_profile *p)
{
	static FILE *null;
	struct st_arcflow *a;

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	st_xtree__write(p, null, 0);
	st_xtree__write(p, null, 5.0);
	a = st_arcflow__build(p);
	if (a)
		st_arcflow__write_text(a, p, null);
	st_arcflow__free(a);
	st_folded__write(p, null, false);
	st_folded__write(p, null, true);
	st_pprof__write(p, null);
	st_flamegraph__write(p, null, -1, NULL);
	st_flamegraph__write(p, null, -1, &(struct st_flamegraph_opts){ .offsets = true });
	st_profile__write_json(p, null, true);
}

#endif

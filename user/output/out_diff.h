/* out_diff.h - the reports of `stacktree diff` (user/model/diff.h): text,
 * differential folded stacks and a differential flame graph.
 * Owner: user/output/out_diff.c.
 *
 * Text: the functions whose self or total share moved by at least the
 * threshold (points of %), most moved first (perf diff's Delta, pprof
 * -diff_base's flat and cum), then the call tree by function with each
 * node's CUM share in A and B and the delta, only the branches holding a
 * node that moved by at least the threshold. Folded: FlameGraph's
 * difffolded.pl format, "frame;...;frame A B" per stack, A's count scaled
 * to B's samples (difffolded.pl -n) so that flamegraph.pl colours the
 * change of share. SVG: flamegraph.svg's layout sized by B, each frame
 * red where its share grew and blue where it shrank, the deeper the
 * colour the larger the change (FlameGraph's differential flame graph).
 */
#ifndef STACKTREE_OUT_DIFF_H
#define STACKTREE_OUT_DIFF_H

#include <stdio.h>

struct st_diff;

struct st_diff_out_opts {
	const char *name_a, *name_b;	/* the inputs, for the headers */
	double threshold;		/* points of %: smaller changes not listed */
	unsigned svg_width;		/* px, 0: the default */
};

/* Each 0, -ENOMEM or -EIO. */
int st_diff__write_text(const struct st_diff *d, FILE *out, const struct st_diff_out_opts *o);
int st_diff__write_folded(const struct st_diff *d, FILE *out);
int st_diff__write_svg(const struct st_diff *d, FILE *out, const struct st_diff_out_opts *o);

#endif

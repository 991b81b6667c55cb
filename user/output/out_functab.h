/* out_functab.h - a function table (user/model/functab.h) as text, the
 * rows perf top and perf report --stdio --sort sym print:
 * "  self%  total%  function [module]". Owner: user/output/out_functab.c.
 * Used by stacktreed top and `stacktree report --sort sym`. Names escaped
 * (common/textesc.h). */
#ifndef STACKTREE_OUT_FUNCTAB_H
#define STACKTREE_OUT_FUNCTAB_H

#include <stddef.h>
#include <stdio.h>

struct st_functab;

/* The column header line, then at most rows rows (0: all), then "# and N
 * more functions" when some were left out. 0 or -EIO. */
int st_functab__write(const struct st_functab *t, FILE *out, size_t rows);

#endif

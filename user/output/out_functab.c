/* out_functab.c - a function table as text, see out_functab.h. */
#include "user/output/out_functab.h"

#include <errno.h>
#include <string.h>

#include "common/textesc.h"
#include "common/tree.h"
#include "user/model/functab.h"

static double pct(__u64 n, __u64 total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

int st_functab__write(const struct st_functab *t, FILE *out, size_t rows)
{
	char name[512];

	fputs("#  self   total  function [module]\n", out);
	for (size_t i = 0; i < t->n && (!rows || i < rows); i++) {
		const struct st_functab_row *r = &t->rows[i];
		const char *m = r->f.module ? strrchr(r->f.module, '/') : NULL;

		fprintf(out, "%6.2f%% %6.2f%%  ", pct(r->self, t->samples), pct(r->total, t->samples));
		st_textesc__put(out, st_frame__name(&r->f, name, sizeof(name)));
		if (r->f.function && r->f.module && r->f.kind != ST_FRAME_SPECIAL) {
			fputs(" [", out);
			st_textesc__put(out, m ? m + 1 : r->f.module);
			fputc(']', out);
		}
		fputc('\n', out);
	}
	if (rows && t->n > rows)
		fprintf(out, "# and %zu more functions\n", t->n - rows);
	return ferror(out) ? -EIO : 0;
}

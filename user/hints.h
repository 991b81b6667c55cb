/* hints.h - options a perf or py-spy user types that these programs do not
 * have: refused before argp with one line naming the nearest option, or
 * the way to get what the option does here. Owner: user/hints.c.
 *
 * A long option is known when it is one of the table's names or an
 * abbreviation of one (argp accepts those); an unknown one is said with
 * the table's known option nearest to it (edit distance at most a third of
 * its length, at least 2), or with the hint written for it (--stdio,
 * --sort, py-spy's --rate, ...). "-h" is --help, as in perf. Stops at
 * "--" (a command's own arguments follow).
 */
#ifndef STACKTREE_HINTS_H
#define STACKTREE_HINTS_H

#include <argp.h>

/* A foreign option and what to do instead. */
struct st_hint {
	const char *option;	/* without the dashes */
	const char *hint;	/* the sentence after "PROG: --OPTION: " */
};

/* Check argv[1..argc) against opts (argp's table). "-h" becomes "--help"
 * in place. 0, or 64 (EXIT_USAGE) after one line on stderr:
 * "PROG: unknown option '--X'; did you mean --Y?" or "PROG: --X: HINT". */
int st_hints__check(const char *prog, const struct argp_option *opts,
		    const struct st_hint *hints, int argc, char **argv);

/* The nearest of names[0..n) to word (edit distance, ties: the first),
 * or NULL when none is within a third of word's length (at least 2). */
const char *st_hints__nearest(const char *word, const char *const *names, int n);

#endif

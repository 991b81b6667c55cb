/* hints.c - unknown options said with the nearest one, see hints.h. */
#include "user/hints.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_LEN 64		/* longer words are compared by their first 64 bytes */
#define EXIT_USAGE 64

/* Levenshtein distance of the first NAME_MAX_LEN bytes of a and b. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strnlen(a, NAME_MAX_LEN), lb = strnlen(b, NAME_MAX_LEN);
	size_t row[NAME_MAX_LEN + 1];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

const char *st_hints__nearest(const char *word, const char *const *names, int n)
{
	size_t len = strnlen(word, NAME_MAX_LEN), limit = len / 3 < 2 ? 2 : len / 3;
	size_t best = limit + 1;
	const char *found = NULL;

	for (int i = 0; i < n; i++) {
		size_t d = distance(word, names[i]);

		if (d < best) {
			best = d;
			found = names[i];
		}
	}
	return found;
}

static bool is_long_name(const struct argp_option *o)
{
	return o->name && !(o->flags & OPTION_DOC);
}

/* The option opts names name (or abbreviates: argp takes a prefix), or NULL. */
static const struct argp_option *find_long(const struct argp_option *opts, const char *name,
					   size_t len)
{
	const struct argp_option *prefix = NULL;

	for (const struct argp_option *o = opts; o->name || o->key || o->doc; o++) {
		if (!is_long_name(o) || strncmp(o->name, name, len))
			continue;
		if (!o->name[len])
			return o;
		prefix = prefix ? prefix : o;
	}
	return prefix;
}

static const struct argp_option *find_short(const struct argp_option *opts, int key)
{
	for (const struct argp_option *o = opts; o->name || o->key || o->doc; o++)
		if (o->key == key && !(o->flags & OPTION_DOC))
			return o;
	return NULL;
}

static bool takes_arg(const struct argp_option *o)
{
	return o && o->arg && !(o->flags & OPTION_ARG_OPTIONAL);
}

static int unknown(const char *prog, const struct argp_option *opts, const struct st_hint *hints,
		   const char *name, size_t len)
{
	const char *names[256], *near;
	char word[NAME_MAX_LEN + 1];
	int n = 0;

	snprintf(word, sizeof(word), "%.*s", (int)(len < NAME_MAX_LEN ? len : NAME_MAX_LEN), name);
	for (const struct st_hint *h = hints; h && h->option; h++)
		if (!strcmp(h->option, word)) {
			fprintf(stderr, "%s: --%s: %s\n", prog, word, h->hint);
			return EXIT_USAGE;
		}
	for (const struct argp_option *o = opts; (o->name || o->key || o->doc) && n < 253; o++)
		if (is_long_name(o) && !(o->flags & OPTION_HIDDEN))
			names[n++] = o->name;
	names[n++] = "help";
	names[n++] = "usage";
	names[n++] = "version";
	near = st_hints__nearest(word, names, n);
	if (near)
		fprintf(stderr, "%s: unknown option '--%s'; did you mean --%s? (%s --help lists "
			"them)\n", prog, word, near, prog);
	else
		fprintf(stderr, "%s: unknown option '--%s' (%s --help lists the options)\n", prog,
			word, prog);
	return EXIT_USAGE;
}

int st_hints__check(const char *prog, const struct argp_option *opts,
		    const struct st_hint *hints, int argc, char **argv)
{
	static char help[] = "--help";

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return 0;
		if (!strcmp(a, "-h")) {
			argv[i] = help;
			continue;
		}
		if (!strncmp(a, "--", 2)) {
			size_t len = strcspn(a + 2, "=");
			const struct argp_option *o = find_long(opts, a + 2, len);

			if (!o && (!strncmp(a + 2, "help", len) || !strncmp(a + 2, "usage", len) ||
				   !strncmp(a + 2, "version", len)))
				continue;
			if (!o)
				return unknown(prog, opts, hints, a + 2, len);
			if (takes_arg(o) && !a[2 + len])
				i++;	/* its value is the next word */
			continue;
		}
		if (a[0] == '-' && a[1]) {	/* short options, perhaps clustered */
			for (const char *c = a + 1; *c; c++) {
				const struct argp_option *o = find_short(opts, (unsigned char)*c);

				if (takes_arg(o)) {
					if (!c[1])
						i++;
					break;
				}
			}
		}
	}
	return 0;
}

/* arcflow.h - per-function PARENT / SELF / CHILD report computed from the
 * call-stack trees (seed Figure 10), with exact recursion handling.
 * Owner: user/output/arcflow.c. See issue "arcflow report" and
 * docs/reports.md. */
#ifndef STACKTREE_ARCFLOW_H
#define STACKTREE_ARCFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

struct st_profile;
struct json_object;

struct st_arcflow;

/* Build from a finalized profile (every thread's tree). NULL + errno on error. */
struct st_arcflow *st_arcflow__build(const struct st_profile *p);
void st_arcflow__free(struct st_arcflow *a);

/* arcflow.txt */
int st_arcflow__write_text(const struct st_arcflow *a, const struct st_profile *p, FILE *out);

/* The entries in the report's order: count, and entry i's function name
 * (thread roots "[pid P tid T COMM]", unnamed frames as printed). */
size_t st_arcflow__count(const struct st_arcflow *a);
const char *st_arcflow__name(const struct st_arcflow *a, size_t i);

/* The "arcflow" array of profile.json (version 5), streamed: entry i as
 * [function, calls, base, cum, cum_all, parents, children], its function
 * strid[i] (the index of st_arcflow__name(a, i) in the document's
 * "strings"); each row [entry, calls, base, cum, recursive], entry the
 * other function's index in the array, recursive 0 or 1. 0 or -EIO. */
int st_arcflow__write_json(const struct st_arcflow *a, const int64_t *strid, FILE *out);

#endif

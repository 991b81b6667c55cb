/* arcflow.h - per-function PARENT / SELF / CHILD report computed from the
 * call-stack trees (seed Figure 10), with exact recursion handling.
 * Owner: user/output/arcflow.c. See issue "arcflow report" and
 * docs/reports.md. */
#ifndef STACKTREE_ARCFLOW_H
#define STACKTREE_ARCFLOW_H

#include <stdbool.h>
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

/* The "arcflow" array of profile.json, streamed. 0 or -EIO. */
int st_arcflow__write_json(const struct st_arcflow *a, FILE *out);

#endif

/* json.h - profile.json writer. Owner: user/output/json.c. */
#ifndef STACKTREE_OUTPUT_JSON_H
#define STACKTREE_OUTPUT_JSON_H

#include <stdbool.h>
#include <stdio.h>

struct st_profile;

/* profile.json, see docs/reports.md ("profile.json") and its JSON Schema
 * schema/profile.schema.json (format ST_PROFILE_JSON_FORMAT, version
 * ST_PROFILE_JSON_VERSION, user/model/profile.h), streamed: the string and
 * frame tables (one pass over the trees, memory a row per distinct frame
 * and 4 bytes per node), then every thread's nodes row by row, without
 * recursion. with_arcflow adds "arcflow" (rows of numbers, its names in
 * the string table, so built before it). 0, -ENOMEM or -EIO. */
int st_profile__write_json(const struct st_profile *p, FILE *out, bool with_arcflow);

#endif

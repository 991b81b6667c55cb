/* faultsum.h - per-process summary of a page-fault profile: faults by class,
 * by module, and the most touched data symbols. Owner: user/model/faultsum.c. */
#ifndef STACKTREE_FAULTSUM_H
#define STACKTREE_FAULTSUM_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct st_profile;
struct json_object;

#define ST_FAULTSUM_TOP 10

struct st_faultsum_entry {
	const char *name;	/* symbol or module (interned in the profile) */
	const char *module;
	__u64 faults;
};

struct st_faultsum_proc {
	__u32 pid;
	const char *comm;
	__u64 total, instr, by_class[4];	/* by_class[enum st_data_class] */
	struct st_faultsum_entry *modules, *symbols;
	size_t nmodules, nsymbols;		/* symbols: the top ST_FAULTSUM_TOP */
};

struct st_faultsum {
	struct st_faultsum_proc *procs;
	size_t nprocs;
};

/* Whether p is a page-fault profile (it has data leaves, or says so). */
bool st_faultsum__applies(const struct st_profile *p);
struct st_faultsum *st_faultsum__build(const struct st_profile *p);
void st_faultsum__free(struct st_faultsum *s);
void st_faultsum__write_text(const struct st_faultsum *s, FILE *out);
struct json_object *st_faultsum__to_json(const struct st_faultsum *s);

#endif

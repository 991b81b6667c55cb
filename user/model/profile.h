/* profile.h - a finished profile: session header + one tree per thread.
 *
 * Owner: user/model/profile.c (model) and user/model/profile_json.c (reading
 * profile.json; user/output/json.c writes it).
 * The daemon builds a profile from the kernel trees after symbolization;
 * `stacktree report` loads one from profile.json or folded stacks. Report
 * writers (xtree, arcflow, ...) only read it.
 */
#ifndef STACKTREE_PROFILE_H
#define STACKTREE_PROFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "common/tree.h"

struct st_strtab;
struct st_u64map;

/* A loaded image the profile's frames name: node "module" == name. For
 * profile stores and pprof mappings, which fetch symbols by build id. */
struct st_prof_module {
	const char *name;	/* as the nodes name it (interned in the profile) */
	const char *path;	/* the file's path (interned; often the same as name) */
	const char *build_id;	/* lower-case hex, or NULL (interned) */
};

struct st_thread {
	__u32 pid, tid;
	char *comm;
	char *cgroup;		/* cgroup v2 path of the process, or NULL */
	struct st_tree *tree;	/* root cum = the thread's sample count after finalize */
};

/* A counted reason, e.g. {"node_table_full", "node table full", 12}:
 * printed in report headers. id is a stable key (lower-case letters, digits
 * and '_': profile.json's key, kept when the sentence is reworded); NULL for
 * unresolved_by, keyed by module name. */
struct st_count {
	char *name;		/* the sentence shown */
	char *id;
	__u64 value;
};
#define ST_COUNT_ID_MAX 64

/* What a profile's BASE and CUM count (profile.json's "unit"): samples
 * (page faults: faults), one each; or nanoseconds (--event offcpu: time off
 * the CPU; wall: the timer's samples weigh their period, the off-CPU time
 * its own). */
enum st_unit { ST_UNIT_COUNT, ST_UNIT_NS };

struct st_profile {
	char *event;		/* "cpu-clock", "page-faults", "offcpu", "wall", "folded" */
	enum st_unit unit;	/* set from the event (st_unit__of()), or read */
	__u32 frequency_hz;	/* 0 when not timer based */
	double duration_s;
	double start_s, end_s;	/* wall clock (Unix time, s) of the first and last sample
				 * period; 0 when not known (folded input, older files) */
	__u64 samples;		/* samples folded into trees */
	__u64 lost;		/* samples lost, sum of lost_by */
	struct st_count *lost_by;
	size_t nlost_by;
	struct st_count *notes;	/* other counters for the header (truncated stacks, ...) */
	size_t nnotes;
	double bpf_ns_per_sample; /* kernel BPF stats, 0 when unknown */
	/* samples with at least one code frame that has no symbol, and the
	 * same per module of such frames, most first (user/model/unresolved.c) */
	__u64 unresolved;
	struct st_count *unresolved_by;
	size_t nunresolved_by;
	char *command;		/* what was profiled, free text; may be NULL */
	struct st_thread **threads;
	size_t nthreads;
	struct st_strtab *strs;	/* interned node strings */
	struct st_prof_module *modules;	/* in order of first appearance */
	size_t nmodules, modules_cap;
	struct st_u64map *module_index;	/* interned name pointer -> index + 1 */
};

/* A new empty profile of event (NULL: "cpu-clock"), its unit the event's. */
struct st_profile *st_profile__new(const char *event);
/* The unit of an event's counts: ST_UNIT_NS for "offcpu" and "wall". */
enum st_unit st_unit__of(const char *event);
/* profile.json's "unit": "nanoseconds", "faults" (page-faults) or "samples". */
const char *st_profile__unit_name(const struct st_profile *p);
/* A count as reports show it: the number, or (ST_UNIT_NS) milliseconds with
 * three decimals, into buf. */
const char *st_profile__value(const struct st_profile *p, __u64 v, char *buf, size_t len);
/* What a count is, in a sentence's words: "samples", "page faults" or "ms
 * off the CPU" / "ms of wall time" (the value st_profile__value() shows). */
const char *st_profile__what(const struct st_profile *p);
/* How a time profile's counts were made, for report headers: "each period
 * off the CPU its length" (offcpu), "on-CPU samples weigh their period,
 * off-CPU periods their length" (wall); "" for counts. */
const char *st_profile__how(const struct st_profile *p);
void st_profile__free(struct st_profile *p);

/* Add a thread (comm copied); the profile owns the new empty tree. */
struct st_thread *st_profile__add_thread(struct st_profile *p, __u32 pid, __u32 tid,
					 const char *comm);
struct st_thread *st_profile__find_thread(const struct st_profile *p, __u32 pid, __u32 tid);
/* Count n under id with the sentence text (counts of one id add up). id
 * NULL: st_count__id_of(text), for callers without an id of their own
 * (older profile.json files, tests). 0 or -ENOMEM. */
int st_profile__add_lost_id(struct st_profile *p, const char *id, const char *reason, __u64 n);
int st_profile__add_note_id(struct st_profile *p, const char *id, const char *text, __u64 n);
int st_profile__add_lost(struct st_profile *p, const char *reason, __u64 n);
int st_profile__add_note(struct st_profile *p, const char *name, __u64 n);
/* The key derived from a sentence: its ASCII letters (lower-cased) and
 * digits, each run of anything else one '_' ("unwind stopped: no CFI" ->
 * "unwind_stopped_no_cfi"), at most len - 1 bytes. Writes into buf. */
const char *st_count__id_of(const char *text, char *buf, size_t len);
int st_profile__add_unresolved(struct st_profile *p, const char *module, __u64 n);

/* Unresolved frames (user/model/unresolved.c): set p->unresolved and
 * p->unresolved_by from the trees (after finalize). A code frame (call
 * site or leaf) is unresolved when it has no function name (or only its
 * FDE's, "[module+0xOFF]"); it counts for
 * its module (or "[unknown]" when no mapping covered its address). 0 or
 * -ENOMEM. */
int st_profile__count_unresolved(struct st_profile *p);
/* The header line "unresolved frames: 3.2% of samples; top modules:
 * libfoo.so (2.9%), [unknown] (0.3%)" (at most ST_UNRESOLVED_TOP modules,
 * by file name) into buf; NULL when the profile has no samples or was
 * read from folded stacks (names only: whether they were resolved is not
 * known). */
#define ST_UNRESOLVED_TOP 5
const char *st_profile__unresolved_line(const struct st_profile *p, char *buf, size_t len);

/* Note a module (strings interned in p): once per name; a later call with a
 * build id fills one not known yet (the first build id of a name wins: two
 * files of one path, e.g. in two containers, keep the first's). 0 or
 * -ENOMEM; -EINVAL without a name. */
int st_profile__add_module(struct st_profile *p, const char *name, const char *path,
			   const char *build_id);
/* The module named name (a node's "module"), or NULL. */
const struct st_prof_module *st_profile__module(const struct st_profile *p, const char *name);

/* Finalize every tree, sort threads by samples (descending, then pid/tid). */
void st_profile__finalize(struct st_profile *p);

/* A new profile with one tree per process: the threads of each pid merged
 * (comm of the main thread, tid = pid). Finalized. NULL on ENOMEM. */
struct st_profile *st_profile__merge_threads(const struct st_profile *p);

/* Merge the subtree src (whose strings may belong to another profile) under
 * dst_parent of tree t, interning its strings in p. 0 or -ENOMEM. */
int st_profile__merge_tree(struct st_profile *p, struct st_tree *t, struct st_node *dst_parent,
			   const struct st_node *src);

/* Fold every inline frame (ST_FRAME_INLINE) into the frame it is inlined
 * into (st_tree__without_inline(), finalized): totals are unchanged. 0 or
 * -ENOMEM (the threads done so far stay folded). */
int st_profile__drop_inline(struct st_profile *p);

/* Set the thread's cgroup path (copied; NULL clears). 0 or -ENOMEM. */
int st_thread__set_cgroup(struct st_thread *t, const char *cgroup);
/* The container id in a cgroup path (64 hex digits, as docker, containerd
 * and podman name their scopes), copied into buf; NULL when none. */
const char *st_cgroup__container(const char *cgroup, char *buf, size_t len);

/* Samples in one thread (root cum; valid after finalize). */
__u64 st_thread__samples(const struct st_thread *t);

/* profile.json's names of a frame kind and of a data leaf's class (forced
 * bit ignored), shared by the reader and the writer (user/output/json.h);
 * NULL when out of range. */
const char *st_frame__kind_name(enum st_frame_kind k);
/* The "kind" profile.json gives frame f: st_frame__kind_name(f->kind), but
 * "python" for a CPython frame (runtime ST_RUNTIME_PYTHON, a call site or the
 * leaf: offset = its line for a call site, null for the leaf, which the
 * reader tells apart by it). */
const char *st_frame__json_kind(const struct st_frame *f);
const char *st_frame__class_name(unsigned data_class);
/* profile.json's "format" and "version" (schema/profile.schema.json).
 * Version 5: version 4 with "arcflow" as rows of numbers (an entry
 * [function, calls, base, cum, cum_all, parents, children], function an
 * index into "strings"; a row [entry, calls, base, cum, recursive], entry
 * an index into "arcflow"). Version 4: "strings" and "frames" tables, each written once, and each
 * thread's "nodes" as flat rows [parent, frame, base, cum, calls] in
 * pre-order (no nesting to the tree's depth; a leaf's offset kept but
 * CPython's). Version 3: nested nodes, every node has "runtime" (st_runtime__name(), common/tree.h).
 * Version 2: "format", "version", "start"/"end", notes and lost_by keyed
 * by stable ids ({"id": {"value": N, "text": "sentence"}}). Files without
 * a version (1) have notes and lost_by as {"sentence": N}. All are read: a
 * node without "runtime" is python when its "kind" is "python" (or its
 * module [python]), kernel when it has "kernel": true, else native. */
#define ST_PROFILE_JSON_FORMAT "stacktree-profile"
#define ST_PROFILE_JSON_VERSION 5
/* Load profile.json (docs/reports.md, "profile.json"). On a malformed file returns -EINVAL and writes one line
 * (what is wrong and where) into err. */
int st_profile__read_json(const char *path, struct st_profile **out, char *err, size_t errlen);

#endif

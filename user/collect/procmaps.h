/* procmaps.h - a process's executable mappings, captured while it lives.
 *
 * Owner: user/collect/procmaps.c. st_procmaps__refresh() parses /proc/PID/maps,
 * keeps the executable (r-x) file mappings and [vdso], and opens each module
 * in the symbolizer at once (through /proc/PID/map_files/) so that it can be
 * symbolized after the process exits. Snapshots of one process are merged:
 * re-reading adds new mappings (dlopen) and keeps the old ones.
 *
 * Module references: every mapping with a module holds one reference to it
 * (see symbolizer.h). The procmaps remembers the symbolizer of its first
 * refresh with a non-NULL one, and st_procmaps__free() gives all the
 * references back to it: so free the procmaps before the symbolizer, and
 * nothing else is needed (no leak, no double release). Once freed, the
 * modules stay cached in the symbolizer's LRU until evicted. Strings from
 * st_symbolizer__resolve() on a mapping's module are valid only until the
 * procmaps is freed (unless another reference keeps the module): copy them
 * before.
 */
#ifndef STACKTREE_PROCMAPS_H
#define STACKTREE_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct st_symbolizer;
struct st_module;

struct st_mapping {
	__u64 start, end, pgoff;
	__u64 dev, ino;
	char *path;			/* as in /proc/PID/maps, owned */
	struct st_module *module;	/* a reference held by the procmaps; NULL if unreadable */
	__u64 generation;		/* snapshot in which it was last seen */
	__u64 first_generation;		/* snapshot that added it */
};

struct st_procmaps;

struct st_procmaps *st_procmaps__new(int pid);
/* Frees the mappings and releases their modules (the symbolizer must still
 * exist). */
void st_procmaps__free(struct st_procmaps *pm);

/* (Re-)read /proc/PID/maps and merge it in. Returns the number of new
 * executable mappings, or negative errno (-ENOENT: the process is gone;
 * -EINVAL: sym is not the symbolizer of the earlier refreshes). sym may be
 * NULL: mappings are then added without modules. */
int st_procmaps__refresh(struct st_procmaps *pm, struct st_symbolizer *sym);

/* Lend pm the mappings of from (the process that forked pm's, whose image
 * pm's still ran then: the same mappings), as the oldest snapshot: any
 * mapping pm reads itself wins over them, and st_procmaps__drop_added()
 * does not take them back. Mappings pm has already are skipped. Returns
 * the number added, -EINVAL when the two have different symbolizers, or
 * -ENOMEM. */
int st_procmaps__inherit(struct st_procmaps *pm, const struct st_procmaps *from);

/* Add one executable file mapping BPF kept (bpf/endmaps.bpf.h),
 * as a snapshot of its own (the newest on overlap); its file is opened
 * through the process's map_files link, or by its path in our root when
 * the process is gone, the inode checked either way. A mapping already
 * there whose file could not be opened (read as its process went) is
 * opened so now. 1 added or opened, 0 already there, -EINVAL (not an
 * executable file mapping, or another symbolizer), -ENOMEM. */
struct st_maps_line;
int st_procmaps__place(struct st_procmaps *pm, const struct st_maps_line *l,
		       struct st_symbolizer *sym);

/* The executable file mappings a process had running an image, as BPF
 * kept them at its end (bpf/endmaps.bpf.h), and a file's path (both 0 or
 * a negative errno): read for a process found gone before its maps could
 * be read (a build's cc1, as, sh), whose samples are then symbolized
 * (user/collect/collector.c) and unwound (unwind/unwinder.c) with them. */
struct st_exec_maps;
struct st_exec_map;
struct st_file_key;
struct st_file_path;
struct st_exec_source {
	int (*maps)(void *ctx, __u32 pid, __u32 image, struct st_exec_maps *out);
	int (*path)(void *ctx, const struct st_file_key *key, struct st_file_path *out);
	void *ctx;
};

/* One kept mapping m as a maps line *l (executable; the [vdso] by name),
 * its file's path looked up through src into *fp (l->path points into
 * it): 0; -ENOENT, an empty entry; -ENAMETOOLONG, no whole path kept for
 * the file (too long, or evicted: the caller counts it). */
int st_procmaps__kept_line(const struct st_exec_source *src, const struct st_exec_map *m,
			   struct st_file_path *fp, struct st_maps_line *l);

/* Take back the mappings the last refresh added (it read /proc/PID/maps
 * while the process ran another image): 0 or -ENOMEM. */
int st_procmaps__drop_added(struct st_procmaps *pm);

/* The mapping covering addr (newest snapshot wins on overlap), or NULL. */
const struct st_mapping *st_procmaps__find(const struct st_procmaps *pm, __u64 addr);

/* Parse one /proc/PID/maps line; exposed for unit tests. Returns 0 and fills
 * *out (path points into line, not copied; executable set for "r-xp"-like
 * permissions), or -EINVAL. */
struct st_maps_line {
	__u64 start, end, pgoff, dev, ino;
	bool executable;
	const char *path; /* NULL for anonymous */
};
int st_procmaps__parse_line(char *line, struct st_maps_line *out);

/* The load bias of ELF file `file` (a path the caller may open: the
 * process's map_files link) mapped by line m: runtime address = vaddr +
 * *bias. 0, or -ENOENT (unreadable, no PT_LOAD holds m's offset). For the
 * runtimes' discovery (user/collect/runtimes/). */
int st_procmaps__load_bias(const char *file, const struct st_maps_line *m, __u64 *bias);

size_t st_procmaps__count(const struct st_procmaps *pm);
/* Mappings whose file could not be opened (0 without a symbolizer). */
size_t st_procmaps__unopened(const struct st_procmaps *pm);
/* Mappings placed from a list that may have been cut (BPF keeps at most
 * ST_EXEC_MAPS of a process's: user/collect/collector.c place_exec_maps()):
 * an address in none of them may still be code. complete: some mappings,
 * and none known to be missing. */
void st_procmaps__set_partial(struct st_procmaps *pm);
bool st_procmaps__complete(const struct st_procmaps *pm);

/* Test hook (tests/integration/test_hardening.py makes the race of issue 23
 * deterministic): with env (STACKTREED_TEST_STOP_BEFORE_OPEN for the
 * symbolizer's open, ..._CFI_OPEN for the unwinder's) set to TEXT, the
 * daemon stops itself (SIGSTOP) after reading a maps line whose path
 * contains TEXT and before opening its file; the test changes the file,
 * then sends SIGCONT. */
void st_procmaps__test_stop(const char *env, const char *path);
/* Bytes pm holds (its mappings, paths and index; not the modules). */
size_t st_procmaps__memory(const struct st_procmaps *pm);
/* The i-th mapping (any order; valid until the next refresh), or NULL. */
const struct st_mapping *st_procmaps__at(const struct st_procmaps *pm, size_t i);
int st_procmaps__pid(const struct st_procmaps *pm);

#endif

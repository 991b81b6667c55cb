/* module.h - the module and symbolizer structures, shared by the
 * symbolizer's own files (private; see symbolizer.h for the contract).
 *
 * symbolizer.c: the module cache, function symbols, resolve().
 * reopen.c:     the module's file again once it was closed.
 * datasym.c:    data symbols (resolve_data) and the stack_var() entry point.
 * stackvars.c:  the per-module table of frame-based DWARF variables.
 * srcinfo.c:    inlined frames and source lines (st_symbolizer__source).
 */
#ifndef STACKTREE_SYMBOLIZER_MODULE_H
#define STACKTREE_SYMBOLIZER_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "binsym/safeopen.h"
#include "binsym/symbolizer.h"

struct st_dbgd;
struct st_elf;
struct st_load;
struct st_symtab;
struct st_strtab;
struct st_stackvars;
struct st_srcinfo;
struct st_gopcln;
struct st_work;
struct stat;

/* What identifies a file whose content is known to be the module's: the
 * file it was first read from, and root's files with its build id found
 * later (a reopened file must be one of them, see reopen.c). */
struct st_file_id {
	__u64 dev, ino, size;
	__s64 mtime_sec, mtime_nsec;
};

struct st_module {
	struct st_strtab *strs;		/* path, build id, other display paths */
	const char *path;		/* display path (in strs) */
	const char *build_id;		/* hex (in strs) or NULL */
	struct st_elf *elf;		/* until the symbols are loaded, while referenced */
	int root_fd;			/* with elf: the root of the process it is from
					 * (its debug links resolve there); -1: ours */
	bool trusted;			/* read from a root-only file (st_file_trusted()):
					 * found by its build id too */
	struct st_load *loads;
	size_t nloads;
	struct st_symtab *symtab;	/* NULL until loaded */
	struct st_strtab *names;	/* symbol names, with symtab */
	size_t refs;
	const char **keys;		/* this module's keys (strings owned by the map) */
	size_t nkeys, keys_cap;
	size_t nfile_keys;
	struct st_module *prev, *next;		/* s->modules */
	struct st_module *lru_prev, *lru_next;	/* s->lru_head, while refs == 0 */
	double unused_since;			/* CLOCK_MONOTONIC s, while refs == 0 */

	/* data symbols (datasym.c): NULL until loaded, then possibly empty */
	struct st_symtab *data;
	struct st_strtab *data_names;
	/* frame-based variables (stackvars.c); vars_done: built or given up
	 * (vars stays NULL when the module has no usable DWARF) */
	struct st_stackvars *vars;
	bool vars_done;
	/* inlined frames and source lines (srcinfo.c): NULL until asked */
	struct st_srcinfo *src;
	/* a stripped Go binary's .gopclntab (gopclntab.c): its names were the
	 * symbols; it gives their files and lines too. NULL: not used */
	struct st_gopcln *gopcln;
	/* reopening (reopen.c) */
	char *open_path;		/* the last open_path given to module(), or NULL */
	struct st_file_id *ids;		/* verified files, at most MAX_FILE_KEYS */
	size_t nids, ids_cap;
	bool reopen_failed;		/* no file found since the last module() call */
};

/* Key ("b:BUILDID" for modules of root-only files, "f:PATH:DEV:INO:SIZE:MTIME",
 * "u:BUILDID" for another user's file, found by nothing but counted when
 * the build id meets another's) -> module; key == NULL: empty slot. */
/* An entry of the symbolizer's key map: a key (a file's identity or its
 * build id) and the module it names. */
struct st_modkey {
	struct st_module *module;
	char key[];
};

struct st_symbolizer {
	const char *debug_dir;		/* interned */
	const char *kallsyms;		/* interned */
	bool verbose;
	size_t max_unused;
	double idle_s;			/* unused modules older than this are freed (< 0: never) */
	size_t cache_budget;		/* bytes of symbol caches before evicting unused modules */
	struct st_budget *budget;	/* the daemon's, or NULL */
	size_t over_budget;		/* modules whose symbols did not fit budget */
	char over_budget_path[160];
	double module_time_s;		/* per module's symbol loading */
	size_t max_symbols;		/* per module's symbol table */
	bool (*cancel)(void *ctx);	/* the daemon is stopping */
	void *cancel_ctx;
	struct st_safe_open open;	/* size bound, refusals counted in safe */
	struct st_safe_stats safe;
	struct st_dbgd *dbgd;		/* debuginfod client, or NULL: off */
	size_t evicted, expired, out_of_time, cancelled, too_many, unshared;
	size_t not_mapped;		/* files that were not the mapping's inode */
	size_t src_cut;			/* modules whose source lookups were cut */
	/* source lookups in service mode (st_symbolizer__source_budget()) */
	bool src_defer;			/* never open DWARF in source(): warm() does */
	bool src_gather;		/* source() notes for settle(), opens no DWARF */
	double src_deadline;		/* CLOCK_MONOTONIC s; past it, lookups wait; 0: none */
	size_t src_deferred;		/* lookups left for later */
	__u64 root_dev, root_ino;	/* our own root directory */
	struct st_strtab *strs;		/* options and kernel symbols only */
	struct st_u64map *keys;		/* hash of a key -> st_modkey, or NULL */
	size_t key_bytes;
	struct st_module *modules;	/* all of them */
	size_t nmodules;
	struct st_module *lru_head, *lru_tail;	/* unreferenced, head = newest */
	size_t nunused;
	struct st_module *vdso;
	struct st_symtab *kernel;	/* NULL until loaded */
	const char *kernel_module;	/* "[kernel.kallsyms]", interned */
	size_t kernel_symbols;		/* read from kallsyms */
	int kernel_read_error;		/* errno of a read that failed 3 times, or 0 */
	size_t kernel_unnamed;		/* kernel addresses with no symbol */
	char *scratch;			/* module name when resolving without a module */
	size_t scratch_cap;
};

/* ---- symbolizer.c --------------------------------------------------------- */

/* Length of path without a " (deleted)" suffix. */
size_t st_mod__display_len(const char *path);

/* File offset -> ELF vaddr through the PT_LOAD holding it (executable
 * segments first); the offset itself when none does. */
__u64 st_mod__to_vaddr(const struct st_module *m, __u64 off);

/* The display name of the mapping path (see st_symbolizer__resolve()). */
const char *st_mod__name(struct st_symbolizer *s, const struct st_module *m, const char *path);

/* The separate debug file of module m, whose image e is (build id and
 * .gnu_debuglink, see debuginfo.h; DIR/... looked up inside root_fd, -1:
 * ours; the CRC bounded by w): 0 with *debug opened, or -ENOENT. */
int st_mod__debug_file(struct st_symbolizer *s, const struct st_module *m, struct st_elf *e,
		       int root_fd, struct st_work *w, struct st_elf **debug);

/* A work limit for one module's loading (deadline, symbols, stop request),
 * and, after the work, the count of what stopped it. */
void st_mod__work_begin(const struct st_symbolizer *s, struct st_work *w);
void st_mod__work_end(struct st_symbolizer *s, const struct st_module *m,
		      const struct st_work *w);

/* ---- datasym.c ------------------------------------------------------------ */

/* A file with the module's DWARF (.debug_info), for the caller to free: the
 * module's image (a handle of its own when it is the module's open file) or
 * its separate debug file (found within the module's work limit). 0 with
 * *out, or with *out NULL when neither has DWARF; -ENOENT when no image of
 * the module can be read now (st_mod__image()), -ENOMEM. */
int st_mod__dwarf_elf(struct st_symbolizer *s, struct st_module *m, const char *path,
		      struct st_elf **out);

/* ---- reopen.c ------------------------------------------------------------- */

/* The module's image: its open file (*owned = false: the module's, don't
 * free it) or, once that was closed, the file opened again (*owned = true:
 * the caller frees it). Reopening tries the last open_path given to
 * st_symbolizer__module(), then `path` (the mapping's, may be NULL) and the
 * module's path, and only takes a file that is the module's image (same
 * build id; without one, same device, inode, size and mtime). -ENOENT when
 * none is; then it is not tried again before the module is found again by
 * st_symbolizer__module(). */
int st_mod__image(struct st_symbolizer *s, struct st_module *m, const char *path,
		  struct st_elf **out, bool *owned);

/* Remember what module() opened m from (open_path may be NULL). */
void st_mod__note_open(struct st_module *m, const char *open_path);
/* Note st as a file with m's content (at most MAX_FILE_KEYS; -ENOMEM);
 * whether it is one. */
int st_mod__add_id(struct st_module *m, const struct stat *st);
bool st_mod__known_file(const struct st_module *m, const struct stat *st);

/* The root directory of the process whose file open_path is
 * ("/proc/PID/map_files/..."), as an O_PATH fd, or -1 when it is ours (or
 * open_path names no process); -ENOENT (...) when the process is gone. */
int st_mod__proc_root(const struct st_symbolizer *s, const char *open_path);

#define MAX_FILE_KEYS 32

#endif

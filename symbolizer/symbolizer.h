/* symbolizer.h - addresses to module + function + offset (libelf/libdw).
 *
 * Owner: symbolizer/. Modules are cached by build id (or by path+dev+inode
 * when an image has no build id); a module is opened once, while the process
 * that maps it is alive (through /proc/PID/map_files/), and kept open so that
 * processes that have exited, and deleted binaries, still symbolize.
 *
 * Modules are reference counted, and the cache is bounded: every module
 * returned by st_symbolizer__module() is one reference, given back with
 * st_symbolizer__release(). A module nobody references stays cached (the same
 * image may be mapped again) on an LRU list of at most max_unused_modules;
 * beyond that the least recently released one is freed with everything it
 * owns (symbol table, names, keys). Found again while cached, it is revived.
 * An unreferenced module also closes its file (if its symbols were not read
 * yet, they are read from the file that revives it).
 *
 * Returned strings: st_sym.function, .module and .build_id, and
 * st_module__path()/st_module__build_id(), belong to the module and stay
 * valid while the module is referenced (or cached), never longer than
 * st_symbolizer__free(); copy them (the collector interns them into the
 * profile's string table at once). Kernel names stay valid until
 * st_symbolizer__free(). When resolve() is given no module (m == NULL), the
 * module name is valid only until the next st_symbolizer__resolve() call.
 *
 * Not thread-safe: one symbolizer is used by one thread.
 */
#ifndef STACKTREE_SYMBOLIZER_H
#define STACKTREE_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct st_symbolizer;
struct st_module;

struct st_symbolizer_opts {
	const char *debug_dir;	 /* default "/usr/lib/debug" (build-id and debuglink lookups) */
	const char *kallsyms;	 /* default "/proc/kallsyms" */
	bool verbose;		 /* progress messages on stderr */
	int max_unused_modules;	 /* unreferenced modules kept cached (LRU): 0 = default
				  * (ST_SYMBOLIZER_MAX_UNUSED), < 0 = none */
};

#define ST_SYMBOLIZER_MAX_UNUSED 256

struct st_sym {
	const char *function;	/* NULL when no symbol covers the address */
	__u64 offset;		/* address - start of function (when function != NULL) */
	const char *module;	/* path of the module ("[kernel.kallsyms]", "[vdso]", ...) or NULL */
	const char *build_id;	/* lower-case hex, NULL when unknown */
	__u64 module_offset;	/* ELF virtual address of the looked-up address in the module:
				 * printed as module+0x... when function is NULL */
	__u64 func_addr;	/* runtime address of the function start (address - offset) */
};

struct st_symbolizer *st_symbolizer__new(const struct st_symbolizer_opts *opts);
void st_symbolizer__free(struct st_symbolizer *s);

/*
 * Find or open the module mapped at [start, end) with file offset pgoff in
 * process pid. `path` is the path from /proc/PID/maps ("(deleted)" suffix
 * allowed; "[vdso]" uses the daemon's own vDSO image, which is the same
 * kernel's). `open_path` is where to read the file now (normally
 * /proc/PID/map_files/START-END); NULL means `path`. Returns a new reference
 * to a module owned by the symbolizer (give it back with
 * st_symbolizer__release()), or NULL with errno set when the file cannot be
 * read as ELF (the caller still gets module+offset names).
 */
struct st_module *st_symbolizer__module(struct st_symbolizer *s, const char *path,
					const char *open_path);
/* Give back one reference (m may be NULL). At zero the module is cached and
 * may be freed at any later call that adds to the cache. The symbolizer must
 * still exist; st_symbolizer__free() frees every module, referenced or not. */
void st_symbolizer__release(struct st_symbolizer *s, struct st_module *m);
const char *st_module__build_id(const struct st_module *m); /* hex or NULL */
const char *st_module__path(const struct st_module *m);

/*
 * Resolve a runtime address inside a mapping of module m (mapping start and
 * pgoff from /proc/PID/maps; the caller holds a reference to m). is_return:
 * addr is a return address, look up addr - 1 (the call instruction) but
 * report offset from addr. m may be NULL
 * (unreadable module): then function is NULL and module_offset is the offset
 * in the mapping plus pgoff. Always fills out; returns 0, or negative errno
 * only on invalid arguments.
 */
int st_symbolizer__resolve(struct st_symbolizer *s, struct st_module *m, const char *path,
			   __u64 map_start, __u64 map_pgoff, __u64 addr, bool is_return,
			   struct st_sym *out);

/* Kernel addresses through kallsyms (module name "[kernel.kallsyms]" or the
 * kernel module's name in brackets). */
int st_symbolizer__resolve_kernel(struct st_symbolizer *s, __u64 addr, bool is_return,
				  struct st_sym *out);

/* Memory held (symbol tables, strings, module keys, caches), for the
 * summary. */
size_t st_symbolizer__memory(const struct st_symbolizer *s);

/* Modules held (referenced or cached); *unused (if not NULL): how many of
 * them nobody references (the LRU cache). */
size_t st_symbolizer__modules(const struct st_symbolizer *s, size_t *unused);

#endif

/* symbolizer.h - addresses to module + function + offset (libelf/libdw).
 *
 * Owner: symbolizer/. Modules are cached by build id (or by path+dev+inode
 * when an image has no build id); a module is opened once, while the process
 * that maps it is alive (through /proc/PID/map_files/), and kept open so that
 * processes that have exited, and deleted binaries, still symbolize.
 * All strings returned are owned by the symbolizer and stay valid until
 * st_symbolizer__free().
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
};

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
 * /proc/PID/map_files/START-END); NULL means `path`. Returns a module handle
 * owned by the symbolizer, or NULL with errno set when the file cannot be
 * read as ELF (the caller still gets module+offset names).
 */
struct st_module *st_symbolizer__module(struct st_symbolizer *s, const char *path,
					const char *open_path);
const char *st_module__build_id(const struct st_module *m); /* hex or NULL */
const char *st_module__path(const struct st_module *m);

/*
 * Resolve a runtime address inside a mapping of module m (mapping start and
 * pgoff from /proc/PID/maps). is_return: addr is a return address, look up
 * addr - 1 (the call instruction) but report offset from addr. m may be NULL
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

/* Memory held by caches, for the summary. */
size_t st_symbolizer__memory(const struct st_symbolizer *s);

#endif

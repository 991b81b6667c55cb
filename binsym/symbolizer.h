/* symbolizer.h - addresses to module + function + offset (libelf/libdw).
 *
 * Owner: binsym/. Modules are cached by build id (or by path+dev+inode
 * when an image has no build id); a module is opened once, while the process
 * that maps it is alive (through /proc/PID/map_files/), and kept open so that
 * processes that have exited, and deleted binaries, still symbolize.
 *
 * Modules are reference counted, and the cache is bounded: every module
 * returned by st_symbolizer__module() is one reference, given back with
 * st_symbolizer__release(). A module nobody references stays cached (the same
 * image may be mapped again) on an LRU list of at most max_unused_modules,
 * and only while all caches hold at most cache_mb; beyond that the least
 * recently released one is freed with everything it owns (symbol table,
 * names, keys). Found again while cached, it is revived.
 *
 * Trust: the daemon runs as root and reads files any user made. Only files
 * that only root can have made (st_file_trusted(): owned by uid 0, not
 * group/other-writable) are shared by build id; any other file gets a
 * module of its own, found again only by its identity (path, device,
 * inode, size, mtime), so that a file claiming another's build id never
 * gives its symbols to another file's processes. Files are opened with
 * st_safe_open() (regular files within max_file_mb only), a process's
 * other files (debug links, its path when map_files fails) inside its own
 * root (/proc/PID/root).
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
struct st_budget;

struct st_symbolizer_opts {
	const char *debug_dir;	 /* default "/usr/lib/debug" (build-id and debuglink lookups) */
	const char *kallsyms;	 /* default "/proc/kallsyms" */
	bool verbose;		 /* progress messages on stderr */
	int max_unused_modules;	 /* unreferenced modules kept cached (LRU): 0 = default
				  * (ST_SYMBOLIZER_MAX_UNUSED), < 0 = none */
	double idle_s;		 /* an unreferenced module unused this long is freed at the
				  * next release: 0 = default (ST_SYMBOLIZER_IDLE_S), < 0 =
				  * kept while the count and bytes allow */
	size_t cache_mb;	 /* symbol cache budget in MiB: unreferenced modules are
				  * freed (LRU) while the caches hold more; 0 = default
				  * (ST_SYMBOLIZER_CACHE_MB) */
	__u64 max_file_mb;	 /* largest file parsed (binary or debug file), MiB;
				  * 0 = default (ST_SAFE_OPEN_MAX_MB, 2048) */
	double module_time_s;	 /* per module's symbol loading (with its debug file's
				  * CRC); 0 = default 2 s */
	size_t max_symbols;	 /* per module symbol table; 0 = default 4000000 */
	bool (*cancel)(void *ctx); /* true: the daemon is stopping, cut long work short */
	void *cancel_ctx;
	/* debuginfod (binsym/debuginfod.h): debug files not found locally
	 * are fetched by build id from DEBUGINFOD_URLS */
	bool debuginfod;	 /* on */
	bool debuginfod_required; /* new() fails (errno ENOSYS: no DEBUGINFOD_URLS, EPERM:
				  * the cache is not ours) rather than going on without */
	double debuginfod_timeout_s; /* per fetch; 0: DEBUGINFOD_TIMEOUT or 5 s */
	const char *debuginfod_cache; /* NULL: DEBUGINFOD_CACHE_PATH, or as root
				  * /var/cache/stacktreed/debuginfod */
	struct st_budget *budget; /* the daemon's memory budget (common/budget.h), or
				  * NULL: the caches' bytes are its ST_BUDGET_SYMBOLS part;
				  * its evictor frees unused modules (LRU); a module whose
				  * symbols take the total over it keeps none (counted,
				  * over_budget) */
};

#define ST_SYMBOLIZER_MAX_UNUSED 256
#define ST_SYMBOLIZER_CACHE_MB 256
#define ST_SYMBOLIZER_IDLE_S 300

/* Limits hit and refusals, since st_symbolizer__new(). */
struct st_symbolizer_stats {
	size_t not_regular;	/* files refused: FIFO, device, directory, socket */
	size_t too_large;	/* files refused: over max_file_mb */
	size_t symlink;		/* debug links that were symlinks in the process's root */
	size_t implausible;	/* ELF files whose header tables cannot be real
				 * (elflayout.h: sparse, beyond the end, over budget) */
	char implausible_path[160]; /* the last of them, as opened */
	size_t not_mapped;	/* files refused: not the inode the process mapped
				 * (mapping gone, the path names another file) */
	size_t out_of_time;	/* modules whose symbols were cut by the time limit */
	size_t cancelled;	/* ... by the daemon stopping */
	size_t too_many;	/* ... by max_symbols */
	size_t evicted;		/* unreferenced modules freed (count, byte budget or idle) */
	size_t expired;		/* of them, freed for being unused over idle_s */
	double idle_s;		/* that bound (< 0: none) */
	size_t unshared;	/* non-root files claiming a cached module's build id */
	size_t cache_budget;	/* bytes */
	size_t over_budget;	/* modules left without symbols: the memory budget was full */
	char over_budget_path[160]; /* the last of them */
	size_t src_cut;		/* modules whose source lookups (inlined frames, lines)
				 * stopped at their time or address limit */
	size_t src_deferred;	/* source lookups left for a later profile
				 * (st_symbolizer__source_budget()) */
	size_t kernel_symbols;	/* text addresses named by /proc/kallsyms (0: kptr_restrict) */
	int kernel_read_error;	/* errno of a kallsyms read that failed 3 times
				 * (the symbols read before it are kept), or 0 */
	size_t kernel_unnamed;	/* kernel addresses resolved without a symbol */
	bool debuginfod;	/* fetching is on */
	size_t dbgd_found, dbgd_not_found, dbgd_failed, dbgd_rejected, dbgd_skipped;
	double dbgd_seconds;	/* time spent fetching */
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
 * /proc/PID/map_files/START-END: then PID's root also resolves `path` if
 * the link cannot be opened, and the module's debug links); NULL means
 * `path`, in our own root. Returns a new reference
 * to a module owned by the symbolizer (give it back with
 * st_symbolizer__release()), or NULL with errno set when the file cannot be
 * read as ELF (the caller still gets module+offset names).
 */
struct st_module *st_symbolizer__module(struct st_symbolizer *s, const char *path,
					const char *open_path);
/* The same for a mapping whose /proc/PID/maps line names the inode: the
 * file opened (through open_path, or path inside PID's root when the link
 * is gone) must be that inode (st_file_is_mapped()), else NULL with errno
 * ESTALE, counted in not_mapped: its frames stay module+offset. */
struct st_module *st_symbolizer__module_mapped(struct st_symbolizer *s, const char *path,
					       const char *open_path, __u64 dev, __u64 ino);
/* Give back one reference (m may be NULL). At zero the module is cached and
 * may be freed at any later call that adds to the cache. The symbolizer must
 * still exist; st_symbolizer__free() frees every module, referenced or not. */
void st_symbolizer__release(struct st_symbolizer *s, struct st_module *m);
/* One more reference to a module the caller holds one of (m may be NULL):
 * returns m. */
struct st_module *st_symbolizer__hold(struct st_symbolizer *s, struct st_module *m);
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

/* A data address of the process that maps module m: the mapping given
 * (map_start, map_pgoff: any file-backed mapping of m, normally its
 * executable one) fixes the module's load bias, so addr may lie in any of
 * its PT_LOAD segments, including the zero-filled part past p_filesz (.bss).
 * Fills out: function = the data symbol (STT_OBJECT or STT_COMMON, with size;
 * zero-size symbols cover up to the next one) covering addr or NULL,
 * offset = addr - symbol start, module/build_id as resolve(), module_offset =
 * the ELF virtual address. Returns 0, -ERANGE when addr is outside the
 * module's PT_LOAD extent [min p_vaddr, max p_vaddr + p_memsz) after
 * relocation, -EINVAL on bad arguments.
 *
 * Details: m must not be NULL (-EINVAL), nor may the mapping lie outside
 * m's PT_LOADs in the file (-EINVAL). A mapping whose file offset starts two
 * PT_LOADs (they share a file page) is taken as the executable one's, else
 * the later one's: pass the executable mapping. func_addr is the symbol's
 * runtime start. Zero-size symbols also end where their section does. The
 * data symbols are read on the first call for a module, from .symtab (or
 * its debug file's, or .dynsym), separately from the function symbols; the
 * module's file is opened again for that if it was closed (the last
 * open_path given to st_symbolizer__module(), then the mapping's and the
 * module's path, each only if it is the same image). When no file can be
 * read now, or on ENOMEM, function is NULL (module+offset) and the next
 * st_symbolizer__module() finding m makes it try again. */
int st_symbolizer__resolve_data(struct st_symbolizer *s, struct st_module *m, const char *path,
				__u64 map_start, __u64 map_pgoff, __u64 addr, struct st_sym *out);

/* The local variable or parameter of the function that contains pc (a
 * runtime address in module m mapped at map_start/map_pgoff) whose storage
 * covers CFA + cfa_offset (the function's canonical frame address, which is
 * where gcc's DW_AT_frame_base DW_OP_call_frame_cfa points). Uses the
 * module's DWARF (.debug_info in the module or its separate debug file found
 * as for symbols). On success *name is the variable's name (valid like the
 * module's other strings) and *offset the byte offset into it; -ENOENT when
 * no variable covers it or there is no DWARF. Innermost lexical scope wins.
 *
 * Supported: DW_TAG_variable / DW_TAG_formal_parameter whose DW_AT_location
 * is the single operation DW_OP_fbreg N, as an expression or as an entry of
 * a location list (then only for the pcs of that entry); lexical blocks and
 * inlined subroutines are inner scopes (then the smaller variable wins).
 * Frame bases: DW_OP_call_frame_cfa (gcc, any architecture) and, on x86-64,
 * DW_OP_reg6 / DW_OP_breg6 N (rbp-based, clang with frame pointers), taken
 * as CFA = rbp + 16, which holds after the prologue. Not supported: other
 * frame bases (e.g. rsp-based, clang without frame pointers), variables in
 * registers or located by longer expressions, split DWARF (.dwo), static
 * locals (they are module data: resolve_data()). Sizes come from
 * dwarf_aggregate_size() (1 when unknown). For a return address pass the
 * call instruction's address (return address - 1).
 *
 * The table is built on the first call for a module (its file reopened as
 * for resolve_data(); at most ST_STACKVARS_MAX entries of ~48 bytes, counted
 * by st_symbolizer__memory()) and freed with the module. -EINVAL: NULL
 * arguments or a mapping outside m's PT_LOADs; -ENOMEM. */
int st_symbolizer__stack_var(struct st_symbolizer *s, struct st_module *m, const char *path,
			     __u64 map_start, __u64 map_pgoff, __u64 pc, __s64 cfa_offset,
			     const char **name, __u64 *offset);

/* One frame of the source-level chain at an address (see source()). */
struct st_src_frame {
	const char *function;	/* DWARF name: the linkage (mangled) name when there is
				 * one, else DW_AT_name; NULL when unnamed */
	const char *file;	/* source file as DWARF names it, NULL when unknown */
	__u32 line;		/* 0 when unknown */
};

/* At most this many frames in one chain (deeper inlining is cut at the
 * outer end, which keeps the function and the innermost frames). */
#define ST_SRC_MAX_FRAMES 32
#define ST_SRC_NAME_MAX 512	/* bytes of a name composed from DWARF (binsym/dienames.h) */

/*
 * The source-level frames at a runtime address of module m (mapped at
 * map_start/map_pgoff; is_return: a return address, the call instruction
 * addr - 1 is looked up), from the module's DWARF (its .debug_info or its
 * separate debug file, found as for symbols): *frames[0] is the function
 * (the DW_TAG_subprogram), then the functions inlined into it, outermost
 * first, *frames[*n - 1] the innermost. Each frame's file/line is where it
 * calls the next (DW_AT_call_file/line of the next one's
 * DW_TAG_inlined_subroutine); the last's is the line table's line of the
 * address. *n = 0 when no DWARF covers the address. The frames' strings
 * belong to the module (valid like its other strings); the array is valid
 * until the next source() call on the module.
 *
 * Results are cached per (module, address), and per function: a lookup
 * keeps its function's inline scopes and line-table answers, from which
 * the function's other addresses are answered without the DWARF (at most
 * 2^18 scopes and answers a module, 2^15 a function). The module's DWARF
 * is opened on the first call that needs it (its file reopened as for
 * resolve_data()) and closed when the module is no longer referenced (the
 * caches stay). Work is
 * bounded per module: the CU table is built within module_time_s, lookups
 * take at most module_time_s in all and ST_SRC_MAX_ADDRS addresses; past
 * that *n = 0 and the module is counted in src_cut. Returns 0, -EINVAL on
 * bad arguments, -ENOMEM.
 */
#define ST_SRC_MAX_ADDRS (1u << 20)
int st_symbolizer__source(struct st_symbolizer *s, struct st_module *m, const char *path,
			  __u64 map_start, __u64 map_pgoff, __u64 addr, bool is_return,
			  const struct st_src_frame **frames, size_t *n);

/* Service mode (a profile every few seconds, on schedule): from now on
 * source() never opens a module's DWARF itself (the module and the address
 * are noted, and st_symbolizer__source_warm() looks them up between
 * profiles), and after `deadline` (CLOCK_MONOTONIC seconds; 0: none) it
 * reads no DWARF; either way *n = 0 and the lookup is counted in
 * src_deferred (it is done for a later profile). Addresses of functions
 * kept are answered all the same. defer = false: as documented above (the
 * default). */
void st_symbolizer__source_budget(struct st_symbolizer *s, bool defer, double deadline);
/* One module that source() noted: its DWARF opened, the addresses noted
 * looked up (within 0.25 s; the rest at the next call, the DWARF left
 * open), and closed again; returns how many noted modules are left (0:
 * none). */
size_t st_symbolizer__source_warm(struct st_symbolizer *s);
/* The final reports' two passes: while gathering, source() opens no
 * module's DWARF but notes the address (up to 2^16 a module; *n = 0, not
 * counted as deferred); then settle() opens each noted module's DWARF in
 * turn, looks its addresses up and closes it, so that libdw holds one
 * module's debug sections at a time, and the naming pass's source() calls
 * find the chains cached (an address not noted is looked up as documented
 * above). */
void st_symbolizer__source_gather(struct st_symbolizer *s, bool on);
void st_symbolizer__source_settle(struct st_symbolizer *s);
/* Close every module's DWARF (libdw holds a module's debug sections,
 * decompressed: libc's take 15-30 MiB); the chains looked up stay cached.
 * A service calls it after each snapshot. */
void st_symbolizer__source_release(struct st_symbolizer *s);

/* Kernel addresses through kallsyms (module name "[kernel.kallsyms]" or the
 * kernel module's name in brackets). */
int st_symbolizer__resolve_kernel(struct st_symbolizer *s, __u64 addr, bool is_return,
				  struct st_sym *out);

/* Memory held (symbol tables, data symbol tables, stack variable tables,
 * strings, module keys, caches), for the summary. */
size_t st_symbolizer__memory(const struct st_symbolizer *s);

void st_symbolizer__stats(const struct st_symbolizer *s, struct st_symbolizer_stats *out);

/* Modules held (referenced or cached); *unused (if not NULL): how many of
 * them nobody references (the LRU cache). */
size_t st_symbolizer__modules(const struct st_symbolizer *s, size_t *unused);

#endif

/* perfmap.h - names of JIT-compiled code from /tmp/perf-PID.map.
 *
 * Owner: binsym/perfmap.c. The format is perf's (tools/perf/Documentation/
 * jit-interface.txt), written by node --perf-basic-prof, the JVM's perf map
 * agents and python -X perf: one entry per line,
 *
 *     START SIZE NAME
 *
 * START and SIZE in hex (perf writes them without 0x; a 0x prefix is
 * accepted too), separated by blanks, NAME the rest of the line (it may
 * hold blanks; a trailing '\r' is dropped). A line that does not parse
 * (missing fields, a number that is not hex or overflows, SIZE 0, START +
 * SIZE past 2^64, no name, a NUL byte) is counted in bad_lines and skipped.
 *
 * Overlaps: a JIT reuses code memory, so a later line describes what is at
 * its addresses now: each address goes to the last line that covers it
 * (perf keeps all overlapping entries and its lookup picks one of them).
 *
 * Bounds: the file is at most ST_PERFMAP_MAX_MB (refused otherwise),
 * entries past max_entries are counted (dropped) and not kept, names are cut
 * at ST_PERFMAP_MAX_NAME bytes. Work is O(n log n) in the number of lines,
 * no recursion.
 *
 * Reading: st_perfmap__read() opens /tmp/perf-NSPID.map inside the
 * process's own root (/proc/PID/root, so a container's /tmp; NSPID is the
 * pid in the process's own namespace) with binsym/safeopen.c: no
 * symlink as the last component, a regular file only, within the size
 * bound, and owned by the process's effective uid or by root. Every refusal
 * is counted in struct st_perfmap_stats.
 */
#ifndef STACKTREE_SYMBOLIZER_PERFMAP_H
#define STACKTREE_SYMBOLIZER_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define ST_PERFMAP_MAX_MB 64
#define ST_PERFMAP_MAX_ENTRIES (1u << 20)
#define ST_PERFMAP_MAX_NAME 1024
/* the module name of frames named by a perf map */
#define ST_PERFMAP_MODULE "[perf-map]"

struct st_perfmap;

/* Counters over every read (a caller may share one between processes). */
struct st_perfmap_stats {
	size_t files;		/* map files read */
	size_t symlink;		/* refused: a symbolic link */
	size_t not_regular;	/* refused: FIFO, device, directory, socket */
	size_t too_large;	/* refused: over ST_PERFMAP_MAX_MB */
	size_t not_owned;	/* refused: owned by neither the process's euid nor root */
	size_t bad_lines;	/* lines skipped (see above) */
	size_t dropped;		/* entries past max_entries */
};

struct st_perfmap *st_perfmap__new(void);
void st_perfmap__free(struct st_perfmap *m);

/* Parse buf (len bytes; NULs allowed, no terminator needed) and replace m's
 * entries with its own. max_entries 0: ST_PERFMAP_MAX_ENTRIES. Skipped
 * lines and dropped entries are added to *stats if given. 0 or -ENOMEM (m
 * is then empty). */
int st_perfmap__parse(struct st_perfmap *m, const char *buf, size_t len, size_t max_entries,
		      struct st_perfmap_stats *stats);

/* More lines of the file parsed before (buf: its bytes from the end of
 * the last complete line given so far). Only they are parsed, and their
 * ranges painted over the earlier ones (linear in the entries kept). A last
 * line without newline may still be being written: its entry is kept until
 * the next call, which must give its bytes again; it is counted (bad line,
 * dropped) only once complete. *consumed (if given): the bytes up to the
 * last newline. 0 or -ENOMEM (m is then empty). */
int st_perfmap__append(struct st_perfmap *m, const char *buf, size_t len, size_t max_entries,
		       struct st_perfmap_stats *stats, size_t *consumed);

/* The name of the entry covering addr and its start (*start, if given), or
 * NULL. The string is valid until the next parse/read or free. */
const char *st_perfmap__find(const struct st_perfmap *m, __u64 addr, __u64 *start);

/* Ranges kept after overlaps were resolved (an entry cut by a later one
 * may give several). */
size_t st_perfmap__count(const struct st_perfmap *m);
size_t st_perfmap__memory(const struct st_perfmap *m);

/* Read process pid's map file when it changed since the last read
 * (device, inode, size, mtime): 1 read, 0 unchanged (or no file: the
 * entries read before are kept, so a JIT that removed its map file at exit
 * keeps its names), or negative errno: a refusal (counted in *stats, the
 * old entries kept), -ESRCH the process is gone, -ENOMEM. A file that grew
 * (same inode) is read from the end of its last complete line on
 * (st_perfmap__append()); one replaced, cut or rewritten from the start. */
int st_perfmap__read(struct st_perfmap *m, unsigned pid, struct st_perfmap_stats *stats);

/* The process's effective uid and its pid in its own pid namespace (the
 * last NSpid field), from /proc/PID/status; exposed for tests. 0 or
 * negative errno. */
int st_perfmap__proc_ids(unsigned pid, __u32 *euid, __u32 *nspid);

#endif

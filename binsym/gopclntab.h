/* gopclntab.h - Go's function table (.gopclntab): function names, ranges,
 * files and lines of a Go binary, stripped or not (private).
 *
 * Go keeps its own table of every function for its runtime (tracebacks,
 * the garbage collector), in section .gopclntab, which `strip` leaves in
 * place; Debian's Go toolchain (`go`, `compile`, `link`) has nothing else.
 * Layouts read: Go 1.16-1.17 (magic 0xfffffffa), 1.18-1.19 (0xfffffff0)
 * and 1.20+ (0xfffffff1), little-endian, 4- or 8-byte pointers. Older
 * tables (0xfffffffb, Go 1.2-1.15) are refused (-EPROTONOSUPPORT).
 *
 * The section is hostile input (any user's file, read as root): every
 * offset and count is checked against the section's bounds before it is
 * used, a table whose entries do not ascend is refused, names and file
 * names must end inside it, and a line lookup decodes one function's
 * pc-value tables only (each step reads at least two bytes: the work is
 * bounded by the section's size). No recursion.
 */
#ifndef STACKTREE_SYMBOLIZER_GOPCLNTAB_H
#define STACKTREE_SYMBOLIZER_GOPCLNTAB_H

#include <stddef.h>
#include <linux/types.h>

#include "binsym/symbolizer.h"

struct st_gopcln;
struct st_elf;
struct st_symtab;
struct st_strtab;

/* The table's section: .gopclntab, or in a position-independent build
 * (-buildmode=pie: relocated data) .data.rel.ro.gopclntab. */
#define ST_GOPCLN_SECTION ".gopclntab"
#define ST_GOPCLN_SECTION_PIE ".data.rel.ro.gopclntab"

/* Tables larger than this are refused (Go's own `compile`: 6 MiB). */
#define ST_GOPCLN_MAX_BYTES (256u << 20)
/* Longest function or file name taken (longer ones: unnamed). */
#define ST_GOPCLN_MAX_NAME 4096

/* Parse a copy of the section's bytes. text_vaddr: the ELF address of
 * .text, used when the table's own text start is 0 (a position-independent
 * build, whose start is a dynamic relocation); 1.16-1.17 tables hold
 * absolute entries. 0 with *out; -EINVAL (malformed), -EPROTONOSUPPORT
 * (an older or unknown layout), -ENOMEM. */
int st_gopcln__parse(const void *data, size_t size, __u64 text_vaddr, struct st_gopcln **out);
void st_gopcln__free(struct st_gopcln *g);
size_t st_gopcln__memory(const struct st_gopcln *g);

/* Number of functions; function i's [start, end) ELF addresses and name
 * (in g, NULL when its name is out of bounds). -EINVAL past the count. */
size_t st_gopcln__count(const struct st_gopcln *g);
int st_gopcln__func(const struct st_gopcln *g, size_t i, __u64 *start, __u64 *end,
		    const char **name);
/* The function covering ELF address pc: its index, or -ENOENT. */
int st_gopcln__find(const struct st_gopcln *g, __u64 pc, size_t *index);
/* File and line of pc in function i (its pcfile and pcln tables): 0 with
 * *file (in g, NULL when unknown) and *line (0 when unknown); -ENOENT when
 * pc is outside the function or the tables do not cover it. */
int st_gopcln__line(const struct st_gopcln *g, size_t i, __u64 pc, const char **file,
		    __u32 *line);

/* The stack pointer's runs in function i (its pcsp table): fn(ctx, start,
 * end, sp) for each [start, end) in order, sp the bytes the function has
 * pushed below its return address there; stops at fn's first nonzero
 * return, which is returned. 0 (also when the table ends before the
 * function), -ENOENT when it has none. */
typedef int (*st_gopcln_run_fn)(void *ctx, __u64 start, __u64 end, __s32 sp);
int st_gopcln__pcsp(const struct st_gopcln *g, size_t i, st_gopcln_run_fn fn, void *ctx);

/* The module's hook (symbolizer.c): when image e has a .gopclntab, add
 * each of its functions (with its size) to t, names copied into names, and
 * return the number added with the table kept in *out for source lines
 * (the caller frees it); -ENOENT when there is none, -errno. */
int st_gopcln__load_symbols(struct st_elf *e, struct st_symtab *t, struct st_strtab *names,
			    struct st_gopcln **out);

/* st_symbolizer__source() for a module named from its .gopclntab: one
 * frame (function, file, line) at ELF address vaddr, cached per address in
 * g so that *frames stays valid while g does; *n = 0 when no function
 * covers it. 0 or -ENOMEM. */
int st_gopcln__source(struct st_gopcln *g, __u64 vaddr, const struct st_src_frame **frames,
		      size_t *n);

#endif

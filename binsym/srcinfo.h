/* srcinfo.h - a module's inlined frames and source lines from DWARF,
 * cached per address (private; the contract is st_symbolizer__source() in
 * symbolizer.h).
 *
 * A st_srcinfo holds the module's DWARF open (a file of its own: the image
 * or the separate debug file) with a table of its compile units' address
 * ranges, and a cache of the chains already looked up and of the functions
 * they were in (their scopes and line answers: their other addresses are
 * answered from these, without the DWARF). close() gives the file back and
 * keeps the caches; the next lookup that misses them opens it again.
 */
#ifndef STACKTREE_SYMBOLIZER_SRCINFO_H
#define STACKTREE_SYMBOLIZER_SRCINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <elfutils/libdw.h>
#include <linux/types.h>

#include "binsym/symbolizer.h"

struct st_srcinfo;

void st_srcinfo__free(struct st_srcinfo *si);
/* Close the DWARF file (si may be NULL); the cached chains stay. */
void st_srcinfo__close(struct st_srcinfo *si);
size_t st_srcinfo__memory(const struct st_srcinfo *si);

/* For fuzzing and tests, without a module or limits: a st_srcinfo over dw
 * (the caller's, kept open until st_srcinfo__free()) with its CU table
 * built; 0 or -ENOMEM. find(): the chain at ELF address vaddr, as
 * st_symbolizer__source() gives it (-ENOSPC past ST_SRC_MAX_ADDRS
 * addresses, -ENOMEM). cus(): the CU ranges' count, the first max of them
 * into ranges. */
int st_srcinfo__over(Dwarf *dw, struct st_srcinfo **out);
int st_srcinfo__find(struct st_srcinfo *si, __u64 vaddr, const struct st_src_frame **frames,
		     size_t *n);
size_t st_srcinfo__cus(const struct st_srcinfo *si, __u64 (*ranges)[2], size_t max);
/* For tests: keep = false, every lookup reads the DWARF (no function is
 * kept, see srcinfo.c), to compare the two ways' chains. */
void st_srcinfo__keep(struct st_srcinfo *si, bool keep);

#endif

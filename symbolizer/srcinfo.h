/* srcinfo.h - a module's inlined frames and source lines from DWARF,
 * cached per address (private; the contract is st_symbolizer__source() in
 * symbolizer.h).
 *
 * A st_srcinfo holds the module's DWARF open (a file of its own: the image
 * or the separate debug file) with a table of its compile units' address
 * ranges, and a cache of the chains already looked up. close() gives the
 * file back and keeps the cache; the next lookup that misses opens it again.
 */
#ifndef STACKTREE_SYMBOLIZER_SRCINFO_H
#define STACKTREE_SYMBOLIZER_SRCINFO_H

#include <stddef.h>

struct st_srcinfo;

void st_srcinfo__free(struct st_srcinfo *si);
/* Close the DWARF file (si may be NULL); the cached chains stay. */
void st_srcinfo__close(struct st_srcinfo *si);
size_t st_srcinfo__memory(const struct st_srcinfo *si);

#endif

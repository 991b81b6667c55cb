/* strtab.h - interned strings, used by every stage and the symbolizer:
 * equal strings share one pointer, so tree nodes compare names by pointer.
 * Owner: common/strtab.c.
 *
 * Strings are copied into an arena of chunks (doubling from 256 bytes up to
 * 64 KiB, so that the many small tables of symbolizer modules stay small),
 * so a returned pointer stays valid until st_strtab__free(). intern()
 * deduplicates (equal strings give the same pointer); add() only copies.
 */
#ifndef STACKTREE_STRTAB_H
#define STACKTREE_STRTAB_H

#include <stddef.h>

struct st_strtab;

struct st_strtab *st_strtab__new(void);
void st_strtab__free(struct st_strtab *t);

/* Copy of s[0..len) plus NUL, deduplicated; NULL on ENOMEM, or when s is
 * NULL (so optional strings can be interned as they are). */
const char *st_strtab__intern_len(struct st_strtab *t, const char *s, size_t len);
const char *st_strtab__intern(struct st_strtab *t, const char *s);

/* Copy of s[0..len) plus NUL, not deduplicated; NULL on ENOMEM. */
const char *st_strtab__add(struct st_strtab *t, const char *s, size_t len);

size_t st_strtab__memory(const struct st_strtab *t);

#endif

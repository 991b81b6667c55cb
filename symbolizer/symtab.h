/* symtab.h - a sorted function symbol table with address lookup (private).
 *
 * Fill with add() (a sized or zero-size symbol) and add_bound() (an address
 * where no function goes on: section ends, data symbols), then finish():
 * sorts, gives each zero-size symbol the room up to the next symbol or
 * bound, and keeps one name per start address.
 */
#ifndef STACKTREE_SYMBOLIZER_SYMTAB_H
#define STACKTREE_SYMBOLIZER_SYMTAB_H

#include <stddef.h>
#include <linux/types.h>

/* Preference among names at the same address: higher wins. */
enum st_sym_bind {
	ST_BIND_LOCAL = 0,
	ST_BIND_WEAK = 1,
	ST_BIND_GLOBAL = 2,
};

struct st_symbol {
	__u64 start, size;
	const char *name;	/* NULL for a bound (only before finish()) */
	const char *module;	/* kallsyms module ("[ext4]"), else NULL */
	__u8 bind;
	__u8 sized;		/* size came from the symbol table */
};

struct st_symtab;

struct st_symtab *st_symtab__new(void);
void st_symtab__free(struct st_symtab *t);

int st_symtab__add(struct st_symtab *t, __u64 start, __u64 size, const char *name,
		   const char *module, enum st_sym_bind bind);
int st_symtab__add_bound(struct st_symtab *t, __u64 addr);
void st_symtab__finish(struct st_symtab *t);

/* The symbol covering addr, or NULL. */
const struct st_symbol *st_symtab__find(const struct st_symtab *t, __u64 addr);

size_t st_symtab__count(const struct st_symtab *t);
size_t st_symtab__memory(const struct st_symtab *t);

#endif

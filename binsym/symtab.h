/* symtab.h - a sorted function symbol table with address lookup (private).
 *
 * Fill with add() (a sized or zero-size symbol), add_bound() (an address
 * where no function goes on: section ends, data symbols) and add_guess() (a
 * function the binary shows without naming it: an FDE's range), then
 * finish(): sorts; drops labels (zero-size symbols) and guesses inside a
 * sized symbol; ends a sized symbol at a bound inside it (a symbol running
 * past its section); gives each zero-size symbol the room up to the next
 * start of anything (symbol, guess, bound: the next symbol, FDE or section
 * end, whichever is first); keeps one name per start address, a guess
 * only where no symbol starts. Then name_guesses() names the guesses left.
 */
#ifndef STACKTREE_SYMBOLIZER_SYMTAB_H
#define STACKTREE_SYMBOLIZER_SYMTAB_H

#include <stddef.h>
#include <linux/types.h>

/* Preference among names at the same address: higher wins. */
enum st_sym_bind {
	ST_BIND_GUESS = 0,	/* add_guess(): no symbol of the binary's */
	ST_BIND_LOCAL = 1,
	ST_BIND_WEAK = 2,
	ST_BIND_GLOBAL = 3,
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
/* A function at start of size bytes (0: unknown) that no symbol names. */
int st_symtab__add_guess(struct st_symtab *t, __u64 start, __u64 size);
void st_symtab__finish(struct st_symtab *t);
/* After finish(): each guess left gets name(ctx, its start), a string that
 * must outlive t (NULL: out of memory, -ENOMEM). Returns how many. */
int st_symtab__name_guesses(struct st_symtab *t, const char *(*name)(void *ctx, __u64 start),
			    void *ctx);

/* The symbol covering addr, or NULL. */
const struct st_symbol *st_symtab__find(const struct st_symtab *t, __u64 addr);

size_t st_symtab__count(const struct st_symtab *t);
size_t st_symtab__memory(const struct st_symtab *t);

#endif

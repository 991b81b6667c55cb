/* entry.h - names for code the symbol table does not name (private): a
 * stripped executable's entry code, and the functions only CFI shows.
 *
 * A stripped program (Debian's sqlite3, most packaged executables) has no
 * symbol for _start and main, so every stack of it starts in two unnamed
 * frames, and nothing tells a complete stack from one cut short. Both are
 * found without symbols: _start at the ELF header's entry point, main from
 * _start's code (glibc's x86-64 start code loads main's address into rdi
 * for __libc_start_main: `lea main(%rip), %rdi` in PIE, `mov $main, %rdi`
 * otherwise). A function with CFI must start at that very address (the
 * .eh_frame_hdr search table lists every function's start): none, no name.
 * The dynamic loader is entered at its own entry point (_start, which calls
 * _dl_start) and has no DT_NEEDED, unlike every shared library; a library's
 * e_entry means nothing and is not named. Glibc's ld.so's _start has no
 * CFI: there, the name reaches up to the next function with CFI.
 * Each has its FDE's range (else reaches to the next function's start or
 * its section's end), and is added with the lowest preference, so a real symbol at the same address
 * wins.
 */
#ifndef STACKTREE_SYMBOLIZER_ENTRY_H
#define STACKTREE_SYMBOLIZER_ENTRY_H

struct st_elf;
struct st_symtab;
struct st_strtab;

/* Add "_start" and "main" to t (names copied into names) for an
 * executable (ET_EXEC, or ET_DYN with PT_INTERP), and "_start" alone for an
 * image the kernel enters itself (ET_DYN with neither PT_INTERP nor
 * DT_NEEDED: Debian's stripped ld.so, whose startup frames are otherwise
 * all unnamed up to the root, or a static-pie program). Returns the number added
 * (0, 1 or 2) or -errno. Reads at most the entry code's first 64 bytes
 * and does a binary search of the table. */
int st_entry__load_symbols(struct st_elf *e, struct st_symtab *t, struct st_strtab *names);

/* Every function .eh_frame_hdr lists (an FDE start) as a guess in t
 * (st_symtab__add_guess(): its FDE's range, or up to the next start): it
 * bounds the zero-size symbol before it, and where no symbol covers it,
 * names its code itself once named (issue 20: x264's size-0 assembly
 * symbols stretched over 225 KB of static C functions). Returns the number
 * added or -ENOMEM. */
int st_entry__load_fde_guesses(struct st_elf *e, struct st_symtab *t);

#endif

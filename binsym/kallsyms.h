/* kallsyms.h - kernel text symbols from /proc/kallsyms (private). */
#ifndef STACKTREE_SYMBOLIZER_KALLSYMS_H
#define STACKTREE_SYMBOLIZER_KALLSYMS_H

struct st_symtab;
struct st_strtab;

#define ST_KERNEL_MODULE "[kernel.kallsyms]"

/* Add the text symbols (t T w W) of the kallsyms file at path to t, with
 * module "[modname]" or ST_KERNEL_MODULE (interned in strs); other symbols
 * bound them. Returns the number of text symbols with a non-zero address,
 * or -errno. */
int st_kallsyms__load(const char *path, struct st_symtab *t, struct st_strtab *strs);

#endif

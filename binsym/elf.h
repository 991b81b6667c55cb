/* elf.h - one opened ELF image: build id, debuglink, PT_LOADs, symbols
 * (private, libelf/libdwelf). */
#ifndef STACKTREE_SYMBOLIZER_ELF_H
#define STACKTREE_SYMBOLIZER_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <gelf.h>
#include <linux/types.h>

struct st_elf;
struct st_symtab;
struct st_strtab;
struct st_work;

/* A PT_LOAD segment, enough to turn file offsets into ELF vaddrs. */
struct st_load {
	__u64 offset, vaddr, filesz, memsz;
	bool exec;
};

#define ST_BUILD_ID_HEX_MAX 129 /* 64 bytes of id, hex, NUL */

/* Open path read-only as ELF (st_safe_open(): a regular file within the
 * default size bound); negative errno (-ENOEXEC: not ELF). */
int st_elf__open(const char *path, struct st_elf **out);
/* The same on an open fd, which the st_elf owns from now on (closed on
 * error too). */
int st_elf__open_fd(int fd, struct st_elf **out);
/* An ELF image in memory (copied), its layout checked as st_safe_open()
 * checks files' (elflayout.h; -EUCLEAN: implausible). */
int st_elf__open_memory(const void *image, size_t size, struct st_elf **out);
void st_elf__free(struct st_elf *e);

int st_elf__fd(const struct st_elf *e); /* -1 for memory images */
Elf *st_elf__elf(const struct st_elf *e); /* owned by e */

/* fn(symbol, its name, ctx) for each defined symbol (a section index, a
 * value) of the first section of `type` (SHT_SYMTAB, SHT_DYNSYM) until
 * fn returns non-zero: the runtimes' discovery looks up a few exported
 * names this way. 0, or -ENOENT when there is no such section. */
int st_elf__each_symbol(Elf *elf, GElf_Word type,
			int (*fn)(const GElf_Sym *s, const char *name, void *ctx), void *ctx);

/* Lower-case hex of NT_GNU_BUILD_ID into hex[ST_BUILD_ID_HEX_MAX];
 * -ENOENT when there is none. */
int st_elf__build_id(struct st_elf *e, char *hex);

/* .gnu_debuglink file name (points into the image) and its CRC, or NULL. */
const char *st_elf__debuglink(struct st_elf *e, __u32 *crc);

/* PT_LOAD segments, malloc'ed into *out. Returns the count or -errno. */
int st_elf__loads(struct st_elf *e, struct st_load **out);

/* Whether the image has a section of type SHT_SYMTAB / SHT_DYNSYM. */
bool st_elf__has_section_type(struct st_elf *e, GElf_Word type);
/* Whether it has a section with contents (not SHT_NOBITS) of that name. */
bool st_elf__has_section_named(struct st_elf *e, const char *name);
/* The first section named name that has bytes in the file (not
 * SHT_NOBITS), its header in *sh (or NULL), or NULL. */
Elf_Scn *st_elf__section_named(struct st_elf *e, const char *name, GElf_Shdr *sh);

/* Add the function symbols (STT_FUNC, STT_GNU_IFUNC) of the first section
 * of type `type` to t, names copied into names, plus the ends of the
 * executable sections as bounds. Returns the number added or -errno. w (or
 * NULL) bounds the work: at most w->max_symbols are added, and reading stops
 * when st_work__over() says so (w->too_many, out_of_time, cancelled tell;
 * what was read is kept). */
int st_elf__load_symbols(struct st_elf *e, GElf_Word type, struct st_symtab *t,
			 struct st_strtab *names, struct st_work *w);
/* Names for the procedure linkage table, which no symbol covers (x86-64,
 * 16-byte entries, as objdump and perf name them): "NAME@plt" for each
 * entry of .plt after the first and of .plt.sec, from .rela.plt's
 * JUMP_SLOT relocations in order; the first entry (the lazy-binding
 * trampoline) ".plt"; .plt.got as one ".plt.got". Returns the number added
 * or -errno (-ENOENT: no .plt). Work is bounded by the sections' sizes. */
int st_elf__load_plt_symbols(struct st_elf *e, struct st_symtab *t, struct st_strtab *names);
/* The same for data objects (STT_OBJECT, STT_COMMON defined in a section;
 * not STT_TLS), bounded by the ends of the allocated non-executable
 * sections. */
int st_elf__load_data_symbols(struct st_elf *e, GElf_Word type, struct st_symtab *t,
			      struct st_strtab *names, struct st_work *w);

#endif

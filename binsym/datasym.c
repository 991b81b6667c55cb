/* datasym.c - what a data address of a module is (see symbolizer.h):
 * st_symbolizer__resolve_data() names the module's data objects,
 * st_symbolizer__stack_var() the variables in a function's frame.
 *
 * Both read the module's file (again: reopen.c) the first time a module
 * needs them, keep a compact table owned by the module (data symbols in a
 * second symbol table; stack variables in a stackvars table built from
 * DWARF, after which the Dwarf handle and the file are closed), and are
 * freed with the module, e.g. when the LRU cache evicts it.
 */
#include "binsym/module.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "binsym/elf.h"
#include "binsym/loadmap.h"
#include "binsym/stackvars.h"
#include "common/strtab.h"
#include "common/textesc.h"
#include "binsym/symtab.h"
#include "binsym/worklimit.h"

/* The load bias of m from one of its file mappings (executable: the
 * collector keeps those), by the segment that mapping shows. */
static int load_bias(const struct st_module *m, __u64 map_start, __u64 map_pgoff, __u64 *bias)
{
	long ps = sysconf(_SC_PAGESIZE);
	__u64 vaddr;

	if (st_loadmap__vaddr(m->loads, m->nloads, map_pgoff, true, ps > 0 ? (__u64)ps : 4096,
			      ST_LOADMAP_NO_HINT, &vaddr))
		return -EINVAL;
	/* map_start shows file offset map_pgoff, i.e. vaddr */
	*bias = map_start - vaddr;
	return 0;
}

/* Inside [min p_vaddr, max p_vaddr + p_memsz)? */
static bool in_extent(const struct st_module *m, __u64 vaddr)
{
	__u64 lo = UINT64_MAX, hi = 0;
	size_t i;

	for (i = 0; i < m->nloads; i++) {
		if (m->loads[i].vaddr < lo)
			lo = m->loads[i].vaddr;
		if (m->loads[i].vaddr + m->loads[i].memsz > hi)
			hi = m->loads[i].vaddr + m->loads[i].memsz;
	}
	return vaddr >= lo && vaddr < hi;
}

/* The root in which the debug links of m's image e resolve: the module's
 * (e is its open file) or, for a file reopened, its last process's (*close
 * it when >= 0). */
static int image_root(const struct st_symbolizer *s, const struct st_module *m, bool owned)
{
	return owned ? st_mod__proc_root(s, m->open_path) : m->root_fd;
}

/* The separate debug file of a reopened or open image, if it has DWARF or
 * symbols of `type`, within the module's work limit. */
static int debug_of(struct st_symbolizer *s, struct st_module *m, struct st_elf *e, bool owned,
		    struct st_work *w, struct st_elf **debug)
{
	int root = image_root(s, m, owned), err;

	err = st_mod__debug_file(s, m, e, root, w, debug);
	if (owned && root >= 0)
		close(root);
	return err;
}

/* m->data from .symtab, the debug file's .symtab, or .dynsym. */
static int load_data(struct st_symbolizer *s, struct st_module *m, const char *path)
{
	struct st_elf *e = NULL, *debug = NULL, *src;
	bool owned = false;
	struct st_work w;
	int err, n = -ENOENT;

	err = st_mod__image(s, m, path, &e, &owned);
	if (err)
		return err;
	st_mod__work_begin(s, &w);
	m->data = st_symtab__new();
	m->data_names = st_strtab__new();
	if (!m->data || !m->data_names) {
		err = -ENOMEM;
		goto cleanup;
	}
	src = e;
	if (!st_elf__has_section_type(e, SHT_SYMTAB) && !debug_of(s, m, e, owned, &w, &debug) &&
	    st_elf__has_section_type(debug, SHT_SYMTAB))
		src = debug;
	if (st_elf__has_section_type(src, SHT_SYMTAB))
		n = st_elf__load_data_symbols(src, SHT_SYMTAB, m->data, m->data_names, &w);
	if (n <= 0 && n != -ENOMEM)
		n = st_elf__load_data_symbols(e, SHT_DYNSYM, m->data, m->data_names, &w);
	st_mod__work_end(s, m, &w);
	if (n == -ENOMEM) {
		err = n;
		goto cleanup;
	}
	st_symtab__finish(m->data);
	if (s->verbose && n <= 0)
		fprintf(stderr, "stacktreed: %s: no data symbols\n", ST_TEXTESC(m->path));
cleanup:
	if (err) {
		st_symtab__free(m->data);
		st_strtab__free(m->data_names);
		m->data = NULL;
		m->data_names = NULL;
	}
	st_elf__free(debug);
	if (owned)
		st_elf__free(e);
	return err;
}

int st_symbolizer__resolve_data(struct st_symbolizer *s, struct st_module *m, const char *path,
				__u64 map_start, __u64 map_pgoff, __u64 addr, struct st_sym *out)
{
	const struct st_symbol *sym;
	__u64 bias, vaddr;
	int err;

	if (!s || !m || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->module = st_mod__name(s, m, path);
	out->build_id = m->build_id;
	err = load_bias(m, map_start, map_pgoff, &bias);
	if (err)
		return err;
	vaddr = addr - bias;
	out->module_offset = vaddr;
	if (!in_extent(m, vaddr))
		return -ERANGE;
	if (!m->data && load_data(s, m, path))
		return 0;	/* no file now, or out of memory: module+offset */
	sym = st_symtab__find(m->data, vaddr);
	if (!sym)
		return 0;
	out->function = sym->name;
	out->offset = vaddr - sym->start;
	out->func_addr = addr - out->offset;
	return 0;
}

static bool has_dwarf(struct st_elf *e)
{
	return st_elf__has_section_named(e, ".debug_info") ||
	       st_elf__has_section_named(e, ".zdebug_info");
}

int st_mod__dwarf_elf(struct st_symbolizer *s, struct st_module *m, const char *path,
		     struct st_elf **out)
{
	struct st_elf *e = NULL, *debug = NULL;
	bool owned = false;
	struct st_work w;
	int err, fd;

	*out = NULL;
	err = st_mod__image(s, m, path, &e, &owned);
	if (err)
		return err;
	if (has_dwarf(e)) {
		if (owned) {
			*out = e;
			return 0;
		}
		/* the module's open file: a handle of our own on it */
		fd = st_elf__fd(e) >= 0 ? dup(st_elf__fd(e)) : -1;
		if (fd < 0)
			return 0;
		err = st_elf__open_fd(fd, out);
		return err == -ENOMEM ? err : 0;
	}
	st_mod__work_begin(s, &w);
	if (!debug_of(s, m, e, owned, &w, &debug) && has_dwarf(debug)) {
		*out = debug;
		debug = NULL;
	}
	st_mod__work_end(s, m, &w);
	st_elf__free(debug);
	if (owned)
		st_elf__free(e);
	return 0;
}

/* m->vars from the DWARF of the module's file or of its debug file. */
static int build_vars(struct st_symbolizer *s, struct st_module *m, const char *path)
{
	struct st_elf *src = NULL;
	Dwarf *dw = NULL;
	GElf_Ehdr ehdr;
	int err;

	err = st_mod__dwarf_elf(s, m, path, &src);
	if (err)
		return err;	/* tried again once the module is found again */
	if (src)
		dw = dwarf_begin_elf(st_elf__elf(src), DWARF_C_READ, NULL);
	if (dw && gelf_getehdr(st_elf__elf(src), &ehdr))
		err = st_stackvars__build(dw, ehdr.e_machine, &m->vars);
	if (!err)
		m->vars_done = true;	/* with or without a table */
	if (s->verbose && !err)
		fprintf(stderr, "stacktreed: %s: %zu frame variables\n", ST_TEXTESC(m->path),
			st_stackvars__count(m->vars));
	if (dw)
		dwarf_end(dw);
	st_elf__free(src);
	return err;
}

int st_symbolizer__stack_var(struct st_symbolizer *s, struct st_module *m, const char *path,
			     __u64 map_start, __u64 map_pgoff, __u64 pc, __s64 cfa_offset,
			     const char **name, __u64 *offset)
{
	__u64 bias;
	int err;

	if (!s || !m || !name || !offset)
		return -EINVAL;
	err = load_bias(m, map_start, map_pgoff, &bias);
	if (err)
		return err;
	if (!m->vars_done) {
		err = build_vars(s, m, path);
		if (err == -ENOMEM)
			return err;
	}
	if (!m->vars)
		return -ENOENT;
	return st_stackvars__find(m->vars, pc - bias, cfa_offset, name, offset);
}

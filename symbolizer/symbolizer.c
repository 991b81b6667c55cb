/* symbolizer.c - module cache and address resolution (see symbolizer.h).
 *
 * A module is opened once (st_symbolizer__module) and keeps its ELF open
 * until its symbols are first needed; then the symbol table (from .symtab,
 * a separate debug file's .symtab, or .dynsym) is copied into memory and
 * the file is closed. Modules are found again by file identity
 * (path, dev, inode, size, mtime) and by build id.
 */
#include "symbolizer/symbolizer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "symbolizer/debuginfo.h"
#include "symbolizer/elf.h"
#include "symbolizer/kallsyms.h"
#include "symbolizer/strtab.h"
#include "symbolizer/symtab.h"
#include "symbolizer/vdso.h"

#define DELETED_SUFFIX " (deleted)"
#define VDSO_PATH "[vdso]"

struct st_module {
	const char *path;		/* display path, interned */
	const char *build_id;		/* interned hex or NULL */
	struct st_elf *elf;		/* until the symbols are loaded */
	struct st_load *loads;
	size_t nloads;
	struct st_symtab *symtab;	/* NULL until loaded */
};

/* Interned key ("b:BUILDID" or "f:PATH:DEV:INO:SIZE:MTIME") -> module. */
struct module_key {
	const char *key;
	struct st_module *module;
};

struct st_symbolizer {
	const char *debug_dir;		/* interned */
	const char *kallsyms;		/* interned */
	bool verbose;
	struct st_strtab *strs;
	struct st_module **modules;
	size_t nmodules, modules_cap;
	struct module_key *keys;
	size_t nkeys, keys_cap;
	struct st_module *vdso;
	struct st_symtab *kernel;	/* NULL until loaded */
	const char *kernel_module;	/* "[kernel.kallsyms]", interned */
};

static void module_free(struct st_module *m)
{
	if (!m)
		return;
	st_elf__free(m->elf);
	free(m->loads);
	st_symtab__free(m->symtab);
	free(m);
}

struct st_symbolizer *st_symbolizer__new(const struct st_symbolizer_opts *opts)
{
	struct st_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->verbose = opts && opts->verbose;
	s->strs = st_strtab__new();
	if (!s->strs)
		goto cleanup;
	s->debug_dir = st_strtab__intern(s->strs, opts && opts->debug_dir ? opts->debug_dir
									  : "/usr/lib/debug");
	s->kallsyms = st_strtab__intern(s->strs, opts && opts->kallsyms ? opts->kallsyms
									: "/proc/kallsyms");
	s->kernel_module = st_strtab__intern(s->strs, ST_KERNEL_MODULE);
	if (!s->debug_dir || !s->kallsyms || !s->kernel_module)
		goto cleanup;
	return s;
cleanup:
	st_symbolizer__free(s);
	errno = ENOMEM;
	return NULL;
}

void st_symbolizer__free(struct st_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nmodules; i++)
		module_free(s->modules[i]);
	free(s->modules);
	free(s->keys);
	st_symtab__free(s->kernel);
	st_strtab__free(s->strs);
	free(s);
}

const char *st_module__build_id(const struct st_module *m)
{
	return m ? m->build_id : NULL;
}

const char *st_module__path(const struct st_module *m)
{
	return m ? m->path : NULL;
}

/* ---- module cache ------------------------------------------------------ */

static size_t display_len(const char *path)
{
	size_t len = strlen(path), slen = strlen(DELETED_SUFFIX);

	if (len > slen && strcmp(path + len - slen, DELETED_SUFFIX) == 0)
		return len - slen;
	return len;
}

static struct st_module *find_key(const struct st_symbolizer *s, const char *key)
{
	size_t i;

	for (i = 0; key && i < s->nkeys; i++) {
		if (s->keys[i].key == key)	/* interned */
			return s->keys[i].module;
	}
	return NULL;
}

static int add_key(struct st_symbolizer *s, const char *key, struct st_module *m)
{
	if (!key || find_key(s, key))
		return 0;
	if (s->nkeys == s->keys_cap) {
		size_t cap = s->keys_cap ? s->keys_cap * 2 : 64;
		struct module_key *keys = realloc(s->keys, cap * sizeof(*keys));

		if (!keys)
			return -ENOMEM;
		s->keys = keys;
		s->keys_cap = cap;
	}
	s->keys[s->nkeys].key = key;
	s->keys[s->nkeys].module = m;
	s->nkeys++;
	return 0;
}

static int add_module(struct st_symbolizer *s, struct st_module *m)
{
	if (s->nmodules == s->modules_cap) {
		size_t cap = s->modules_cap ? s->modules_cap * 2 : 32;
		struct st_module **mods = realloc(s->modules, cap * sizeof(*mods));

		if (!mods)
			return -ENOMEM;
		s->modules = mods;
		s->modules_cap = cap;
	}
	s->modules[s->nmodules++] = m;
	return 0;
}

static const char *build_id_key(struct st_symbolizer *s, const char *hex)
{
	char key[ST_BUILD_ID_HEX_MAX + 2];

	if (!hex)
		return NULL;
	snprintf(key, sizeof(key), "b:%s", hex);
	return st_strtab__intern(s->strs, key);
}

static const char *file_key(struct st_symbolizer *s, const char *path, size_t len,
			    const struct stat *st)
{
	char *key = NULL;
	const char *k;

	if (asprintf(&key, "f:%.*s:%llx:%llx:%llx:%lld.%09ld", (int)len, path,
		     (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
		     (unsigned long long)st->st_size, (long long)st->st_mtim.tv_sec,
		     st->st_mtim.tv_nsec) < 0)
		return NULL;
	k = st_strtab__intern(s->strs, key);
	free(key);
	return k;
}

/* A new module around e (taken over, freed on error). */
static struct st_module *module_new(struct st_symbolizer *s, struct st_elf *e,
				    const char *path, size_t len)
{
	char hex[ST_BUILD_ID_HEX_MAX];
	struct st_module *m;
	int n;

	m = calloc(1, sizeof(*m));
	if (!m)
		goto cleanup;
	m->elf = e;
	e = NULL;
	m->path = st_strtab__intern_len(s->strs, path, len);
	if (!m->path)
		goto cleanup;
	if (!st_elf__build_id(m->elf, hex)) {
		m->build_id = st_strtab__intern(s->strs, hex);
		if (!m->build_id)
			goto cleanup;
	}
	n = st_elf__loads(m->elf, &m->loads);
	if (n < 0)
		goto cleanup;
	m->nloads = n;
	return m;
cleanup:
	st_elf__free(e);
	module_free(m);
	errno = ENOMEM;
	return NULL;
}

static struct st_module *vdso_module(struct st_symbolizer *s)
{
	struct st_elf *e = NULL;
	const void *image;
	size_t size;
	int err;

	if (s->vdso)
		return s->vdso;
	err = st_vdso__image(&image, &size);
	if (!err)
		err = st_elf__open_memory(image, size, &e);
	if (err) {
		if (s->verbose)
			fprintf(stderr, "stacktreed: cannot read this process's vDSO: %s\n",
				strerror(-err));
		errno = -err;
		return NULL;
	}
	s->vdso = module_new(s, e, VDSO_PATH, strlen(VDSO_PATH));
	if (s->vdso && add_module(s, s->vdso)) {
		module_free(s->vdso);
		s->vdso = NULL;
		errno = ENOMEM;
	}
	return s->vdso;
}

static int open_image(const char *path, size_t len, const char *open_path)
{
	char *copy;
	int fd = -1;

	if (open_path) {
		fd = open(open_path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 || path[len])	/* a deleted file is nowhere else */
			return fd < 0 ? -errno : fd;
	}
	copy = strndup(path, len);
	if (!copy)
		return -ENOMEM;
	fd = open(copy, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	free(copy);
	return fd;
}

struct st_module *st_symbolizer__module(struct st_symbolizer *s, const char *path,
					const char *open_path)
{
	struct st_module *m = NULL;
	struct st_elf *e = NULL;
	const char *fkey, *bkey;
	size_t len;
	struct stat st;
	int fd, err;

	if (!s || !path || !*path) {
		errno = EINVAL;
		return NULL;
	}
	if (strcmp(path, VDSO_PATH) == 0)
		return vdso_module(s);

	len = display_len(path);
	fd = open_image(path, len, open_path);
	if (fd < 0) {
		err = fd;
		goto cleanup;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		goto cleanup;
	}
	fkey = file_key(s, path, len, &st);
	m = find_key(s, fkey);
	if (m) {
		close(fd);
		return m;
	}
	err = st_elf__open_fd(fd, &e);
	if (err)
		goto cleanup;
	m = module_new(s, e, path, len);
	if (!m) {
		err = -ENOMEM;
		goto cleanup;
	}
	bkey = build_id_key(s, m->build_id);
	if (find_key(s, bkey)) {	/* the same image under another name */
		module_free(m);
		m = find_key(s, bkey);
		err = add_key(s, fkey, m);
		if (err)
			goto cleanup;
		return m;
	}
	err = add_module(s, m);
	if (err) {
		module_free(m);
		goto cleanup;
	}
	err = add_key(s, fkey, m);
	if (!err)
		err = add_key(s, bkey, m);
	if (err)
		goto cleanup;
	return m;
cleanup:
	if (s->verbose)
		fprintf(stderr, "stacktreed: cannot read %s as ELF: %s\n", path, strerror(-err));
	errno = -err;
	return NULL;
}

/* ---- symbols ----------------------------------------------------------- */

static int load_module_symbols(struct st_symbolizer *s, struct st_module *m)
{
	struct st_elf *debug = NULL, *src;
	const char *how = NULL;
	int n = -ENOENT;

	m->symtab = st_symtab__new();
	if (!m->symtab)
		return -ENOMEM;
	if (!m->elf)
		return 0;

	src = m->elf;
	if (!st_elf__has_section_type(m->elf, SHT_SYMTAB)) {
		struct st_debug_query q = {
			.debug_dir = s->debug_dir,
			.path = m->path,
			.build_id = m->build_id,
		};

		q.debuglink = st_elf__debuglink(m->elf, &q.crc);
		if (!st_debuginfo__find(&q, &debug, &how) &&
		    st_elf__has_section_type(debug, SHT_SYMTAB))
			src = debug;
	}
	if (st_elf__has_section_type(src, SHT_SYMTAB))
		n = st_elf__load_symbols(src, SHT_SYMTAB, m->symtab, s->strs);
	if (n <= 0 && n != -ENOMEM)
		n = st_elf__load_symbols(m->elf, SHT_DYNSYM, m->symtab, s->strs);
	st_symtab__finish(m->symtab);

	if (s->verbose && src == debug)
		fprintf(stderr, "stacktreed: %s: symbols from a debug file (%s)\n", m->path, how);
	else if (s->verbose && n <= 0 && n != -ENOMEM)
		fprintf(stderr, "stacktreed: %s: no function symbols\n", m->path);

	st_elf__free(debug);
	st_elf__free(m->elf);	/* everything needed is copied now */
	m->elf = NULL;
	return n == -ENOMEM ? n : 0;
}

/* File offset -> ELF vaddr through the PT_LOAD holding it (executable
 * segments first); the offset itself when none does. */
static __u64 to_vaddr(const struct st_module *m, __u64 off)
{
	const struct st_load *hit = NULL;
	size_t i;

	for (i = 0; i < m->nloads; i++) {
		const struct st_load *l = &m->loads[i];

		if (off < l->offset || off - l->offset >= l->filesz)
			continue;
		if (!hit || (l->exec && !hit->exec))
			hit = l;
	}
	return hit ? off - hit->offset + hit->vaddr : off;
}

static const char *module_name(struct st_symbolizer *s, const struct st_module *m,
			       const char *path)
{
	if (path)
		return st_strtab__intern_len(s->strs, path, display_len(path));
	return m ? m->path : NULL;
}

int st_symbolizer__resolve(struct st_symbolizer *s, struct st_module *m, const char *path,
			   __u64 map_start, __u64 map_pgoff, __u64 addr, bool is_return,
			   struct st_sym *out)
{
	const struct st_symbol *sym;
	__u64 look, vaddr;

	if (!s || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	look = is_return && addr ? addr - 1 : addr;
	out->module = module_name(s, m, path);
	out->build_id = m ? m->build_id : NULL;
	if (!m) {
		out->module_offset = addr - map_start + map_pgoff;
		return 0;
	}
	vaddr = to_vaddr(m, look - map_start + map_pgoff);
	out->module_offset = vaddr + (addr - look);
	if (!m->symtab && load_module_symbols(s, m))
		return 0;	/* out of memory: module+offset only */
	sym = st_symtab__find(m->symtab, vaddr);
	if (!sym)
		return 0;
	out->function = sym->name;
	out->func_addr = look - (vaddr - sym->start);
	out->offset = addr - out->func_addr;
	return 0;
}

int st_symbolizer__resolve_kernel(struct st_symbolizer *s, __u64 addr, bool is_return,
				  struct st_sym *out)
{
	const struct st_symbol *sym;
	__u64 look;
	int n;

	if (!s || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!s->kernel) {
		s->kernel = st_symtab__new();
		if (!s->kernel)
			return -ENOMEM;
		n = st_kallsyms__load(s->kallsyms, s->kernel, s->strs);
		st_symtab__finish(s->kernel);
		if (s->verbose && n < 0)
			fprintf(stderr, "stacktreed: cannot read %s: %s\n", s->kallsyms,
				strerror(-n));
		else if (s->verbose && n == 0)
			fprintf(stderr, "stacktreed: %s shows no addresses (kptr_restrict?)\n",
				s->kallsyms);
	}
	look = is_return && addr ? addr - 1 : addr;
	out->module = s->kernel_module;
	out->module_offset = addr;
	sym = st_symtab__find(s->kernel, look);
	if (!sym)
		return 0;
	out->function = sym->name;
	out->module = sym->module ? sym->module : s->kernel_module;
	out->func_addr = sym->start;
	out->offset = addr - sym->start;
	return 0;
}

size_t st_symbolizer__memory(const struct st_symbolizer *s)
{
	size_t bytes, i;

	if (!s)
		return 0;
	bytes = sizeof(*s) + st_strtab__memory(s->strs) +
		s->modules_cap * sizeof(*s->modules) + s->keys_cap * sizeof(*s->keys);
	for (i = 0; i < s->nmodules; i++) {
		const struct st_module *m = s->modules[i];

		bytes += sizeof(*m) + m->nloads * sizeof(*m->loads);
		if (m->symtab)
			bytes += st_symtab__memory(m->symtab);
	}
	if (s->kernel)
		bytes += st_symtab__memory(s->kernel);
	return bytes;
}

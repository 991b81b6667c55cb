/* jvmproc.c - finding a HotSpot JVM, its VMStructs tables and layout in a
 * process (see jvmproc.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "binsym/elf.h"
#include "binsym/safeopen.h"
#include "user/collect/procmaps.h"
#include "user/collect/runtimes/java/jvmproc.h"

#define MAPS_LINE_MAX 4096
/* libjvm builds kept: one per JDK installed, in practice */
#define CACHE_MAX 16
/* bytes of one read of another process (the largest the table reader
 * asks: a batch of entries) */
#define READ_MAX (64u * ST_VM_MAX_STRIDE)

struct cached {
	char build_id[ST_BUILD_ID_HEX_MAX];
	struct st_vmstructs *v;
};

struct st_jvm_cache {
	struct cached e[CACHE_MAX];
	size_t n, reads, hits;
};

bool st_jvm_elf__candidate(const char *path)
{
	const char *base = strrchr(path, '/');

	return !strcmp(base ? base + 1 : path, "libjvm.so");
}

static void scan_dynsym(Elf *elf, struct st_jvm_elf *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value ||
			    s.st_size != 8)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || strncmp(name, "gHotSpotVM", 10))
				continue;
			for (int k = 0; k < ST_VM_NSYMS; k++)
				if (!strcmp(name, st_vm_sym_name(k)))
					out->syms[k] = s.st_value;
		}
		return;
	}
}

int st_jvm_elf__find(const char *path, struct st_jvm_elf *out)
{
	struct st_elf *e = NULL;
	struct stat st;
	int r;

	memset(out, 0, sizeof(*out));
	r = st_elf__open(path, &e);
	if (r)
		return r;
	scan_dynsym(st_elf__elf(e), out);
	if (st_elf__build_id(e, out->build_id))
		out->build_id[0] = '\0';
	out->trusted = fstat(st_elf__fd(e), &st) == 0 && st_file_trusted(&st);
	st_elf__free(e);
	return out->syms[ST_VM_STRUCTS] ? 0 : -ENOENT;
}

/* The load bias of the file mapped at m (offset pgoff). */
static int load_bias(const char *file, const struct st_maps_line *m, __u64 *bias)
{
	struct st_load *loads = NULL;
	struct st_elf *e = NULL;
	int n, r = -ENOENT;

	if (st_elf__open(file, &e))
		return -ENOENT;
	n = st_elf__loads(e, &loads);
	for (int i = 0; i < n; i++) {
		__u64 pg = loads[i].offset & ~4095ULL;

		if (m->pgoff >= pg && m->pgoff < loads[i].offset + loads[i].filesz) {
			*bias = m->start - ((loads[i].vaddr & ~4095ULL) + (m->pgoff - pg));
			r = 0;
			break;
		}
	}
	free(loads);
	st_elf__free(e);
	return r;
}

long st_jvm_read_process(void *arg, void *dst, __u32 n, __u64 addr)
{
	struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)addr, n };
	ssize_t got;

	if (n > READ_MAX)
		return -E2BIG;
	got = process_vm_readv(*(int *)arg, &local, 1, &remote, 1, 0);
	if (got < 0)
		return -errno;
	return got == (ssize_t)n ? 0 : -EFAULT;
}

struct st_jvm_cache *st_jvm_cache__new(void)
{
	return calloc(1, sizeof(struct st_jvm_cache));
}

void st_jvm_cache__free(struct st_jvm_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		st_vmstructs__free(c->e[i].v);
	free(c);
}

void st_jvm_cache__stats(const struct st_jvm_cache *c, size_t *reads, size_t *hits)
{
	*reads = c->reads;
	*hits = c->hits;
}

/* The tables of the JVM in pid: from c when its build is there, else read
 * (and kept in c when its file is trusted and c has room; *own set when
 * the caller must free them). */
static int tables(struct st_jvm_cache *c, int pid, const struct st_jvm_proc *p,
		  struct st_vmstructs **v, bool *own)
{
	bool shared = c && p->elf.trusted && p->elf.build_id[0];
	int r;

	*own = false;
	if (shared)
		for (size_t i = 0; i < c->n; i++)
			if (!strcmp(c->e[i].build_id, p->elf.build_id)) {
				c->hits++;
				*v = c->e[i].v;
				return 0;
			}
	r = st_vmstructs__read(p->syms, p->bias, st_jvm_read_process, &pid, v);
	if (r)
		return r;
	if (c)
		c->reads++;
	if (shared && c->n < CACHE_MAX) {
		snprintf(c->e[c->n].build_id, sizeof(c->e[c->n].build_id), "%s", p->elf.build_id);
		c->e[c->n++].v = *v;
	} else {
		*own = true;
	}
	return 0;
}

/* The first mapping of a HotSpot libjvm in pid's maps f: 0 and p's file,
 * symbols and bias, or -ENOENT. */
static int find_libjvm(FILE *f, int pid, struct st_jvm_proc *p)
{
	char line[MAPS_LINE_MAX], file[128];
	struct st_maps_line m;

	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (st_procmaps__parse_line(line, &m) || !m.path || m.path[0] != '/' ||
		    !st_jvm_elf__candidate(m.path))
			continue;
		snprintf(file, sizeof(file), "/proc/%d/map_files/%llx-%llx", pid,
			 (unsigned long long)m.start, (unsigned long long)m.end);
		if (st_jvm_elf__find(file, &p->elf) || load_bias(file, &m, &p->bias))
			continue;
		snprintf(p->path, sizeof(p->path), "%s", m.path);
		for (int i = 0; i < ST_VM_NSYMS; i++)
			p->syms[i] = p->elf.syms[i] ? p->elf.syms[i] + p->bias : 0;
		return 0;
	}
	return -ENOENT;
}

int st_jvm_proc__probe(struct st_jvm_cache *c, int pid, struct st_jvm_proc *out)
{
	struct st_vmstructs *v = NULL;
	char path[64];
	bool own = false;
	FILE *f;
	int r;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	r = find_libjvm(f, pid, out);
	fclose(f);
	if (r)
		return ST_JVM_PROBE_NONE;
	r = tables(c, pid, out, &v, &own);
	if (r == -EAGAIN)
		return ST_JVM_PROBE_STARTING;
	if (r)
		return r;
	st_vmstructs__counts(v, &out->counts);
	out->missing = st_jvm_layout__fill(v, out->bias, &out->l);
	if (own)
		st_vmstructs__free(v);
	/* a JVM whose version cannot be read is still one: version empty */
	st_jvm_version__read(&out->l, st_jvm_read_process, &pid, &out->version);
	return ST_JVM_PROBE_OK;
}

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

/* st_elf__each_symbol()'s visit: a gHotSpotVM* pointer or size (8 bytes). */
static int vm_symbol(const GElf_Sym *s, const char *name, void *ctx)
{
	struct st_jvm_elf *out = ctx;

	if (s->st_size != 8 || strncmp(name, "gHotSpotVM", 10))
		return 0;
	for (int k = 0; k < ST_VM_NSYMS; k++)
		if (!strcmp(name, st_vm_sym_name(k)))
			out->syms[k] = s->st_value;
	return 0;
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
	st_elf__each_symbol(st_elf__elf(e), SHT_DYNSYM, vm_symbol, out);
	if (st_elf__build_id(e, out->build_id))
		out->build_id[0] = '\0';
	out->trusted = fstat(st_elf__fd(e), &st) == 0 && st_file_trusted(&st);
	st_elf__free(e);
	return out->syms[ST_VM_STRUCTS] ? 0 : -ENOENT;
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
		if (st_jvm_elf__find(file, &p->elf) || st_procmaps__load_bias(file, &m, &p->bias))
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

/* pyproc.c - finding CPython's runtime state and version in a process
 * (see pyproc.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binsym/debuginfo.h"
#include "binsym/elf.h"
#include "user/collect/procmaps.h"
#include "user/collect/runtimes/python/pyoffsets.h"
#include "user/collect/runtimes/python/pyproc.h"

#define MAPS_LINE_MAX 4096

/* "python3.11" or "libpython3.11..." in a base name: 0x030b0000, else 0 */
static __u32 version_from_name(const char *base)
{
	const char *p = strstr(base, "python");
	unsigned maj, min;

	if (!p || sscanf(p, "python%u.%u", &maj, &min) != 2 || maj > 9 || min > 99)
		return 0;
	return (maj << 24) | (min << 16);
}

bool st_py_elf__candidate(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/* The file bytes at ELF vaddr (through the PT_LOADs). */
static int read_vaddr(struct st_elf *e, __u64 vaddr, void *buf, size_t n)
{
	struct st_load *loads = NULL;
	int nl = st_elf__loads(e, &loads), r = -ENOENT;

	for (int i = 0; i < nl; i++) {
		if (vaddr < loads[i].vaddr || vaddr + n > loads[i].vaddr + loads[i].filesz)
			continue;
		r = pread(st_elf__fd(e), buf, n, (off_t)(loads[i].offset + vaddr - loads[i].vaddr)) ==
				    (ssize_t)n ? 0 : -EIO;
		break;
	}
	free(loads);
	return nl < 0 ? nl : r;
}

/* The lowest executable PT_LOAD's p_vaddr and its end, page-aligned. */
static void text_segment(struct st_elf *e, struct st_py_elf *out)
{
	struct st_load *loads = NULL;
	int nl = st_elf__loads(e, &loads);

	for (int i = 0; i < nl; i++)
		if (loads[i].exec && (!out->text_vaddr || loads[i].vaddr < out->text_vaddr)) {
			out->text_vaddr = loads[i].vaddr;
			out->text_end = (loads[i].vaddr + loads[i].filesz + 4095) & ~4095ULL;
		}
	free(loads);
}

struct py_syms {
	struct st_py_elf *out;
	__u64 *version_at;
};

/* st_elf__each_symbol()'s visit: the few symbols CPython's walk needs. */
static int py_symbol(const GElf_Sym *s, const char *name, void *ctx)
{
	struct py_syms *c = ctx;
	struct st_py_elf *out = c->out;

	if (name[0] != '_' && name[0] != 'P')
		return 0;
	if (!strcmp(name, "_PyRuntime")) {
		out->runtime = s->st_value;
	} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
		out->eval = s->st_value;
		out->eval_size = s->st_size;
	} else if (!strcmp(name, "_PyEval_EvalFrameDefault.cold")) {
		out->cold = s->st_value;
		out->cold_size = s->st_size;
	} else if (!strcmp(name, "PyCode_Type")) {
		out->code_type = s->st_value;
	} else if (!strcmp(name, "Py_Version") && (s->st_size == 4 || s->st_size == 8)) {
		*c->version_at = s->st_value;
	}
	return 0;
}

static void scan_symbols(Elf *elf, GElf_Word type, struct st_py_elf *out, __u64 *version_at)
{
	struct py_syms c = { .out = out, .version_at = version_at };

	st_elf__each_symbol(elf, type, py_symbol, &c);
}

/* The cold part's symbol from the debug file of e's build id, if it is
 * installed (the symbolizer's lookup: its build id must match). */
static void find_cold(struct st_elf *e, struct st_py_elf *out)
{
	char hex[ST_BUILD_ID_HEX_MAX];
	struct st_debug_query q = { .debug_dir = "/usr/lib/debug", .build_id = hex,
				    .root_fd = -2 };
	struct st_py_elf dbg = {};
	struct st_elf *d = NULL;
	const char *how;
	__u64 unused = 0;

	if (st_elf__build_id(e, hex) || st_debuginfo__find(&q, &d, &how))
		return;
	scan_symbols(st_elf__elf(d), SHT_SYMTAB, &dbg, &unused);
	if (dbg.eval == out->eval && dbg.cold) {
		out->cold = dbg.cold;
		out->cold_size = dbg.cold_size;
	}
	st_elf__free(d);
}

int st_py_elf__find(const char *path, const char *name, struct st_py_elf *out)
{
	const char *base = strrchr(name, '/');
	struct st_elf *e = NULL;
	__u64 version_at = 0;
	__u32 v = 0;
	int r;

	memset(out, 0, sizeof(*out));
	r = st_elf__open(path, &e);
	if (r)
		return r;
	scan_symbols(st_elf__elf(e), SHT_DYNSYM, out, &version_at);
	if (!out->runtime || !out->eval || !out->code_type || !out->cold)
		scan_symbols(st_elf__elf(e), SHT_SYMTAB, out, &version_at);
	if (!out->cold)
		find_cold(e, out);
	text_segment(e, out);
	if (version_at && read_vaddr(e, version_at, &v, sizeof(v)) == 0 && (v >> 24) == 3)
		out->version = v;
	else
		out->version = version_from_name(base ? base + 1 : name);
	st_elf__free(e);
	return out->runtime && out->eval && out->eval_size ? 0 : -ENOENT;
}

/* out's addresses from pe's (ELF vaddrs) moved by bias; the version's layout */
static int fill_proc(const struct st_py_elf *pe, __u64 bias, struct st_py_proc *out)
{
	const struct st_py_layout *l = st_py_layout__find((__u16)(pe->version >> 16));

	if (!l)
		return ST_PY_PROBE_UNSUPPORTED;
	out->runtime = pe->runtime + bias;
	out->eval_start = pe->eval + bias;
	out->eval_end = pe->eval + pe->eval_size + bias;
	out->code_type = pe->code_type ? pe->code_type + bias : 0;
	if (pe->cold && pe->cold_size) {
		out->cold_start = pe->cold + bias;
		out->cold_end = pe->cold + pe->cold_size + bias;
	}
	out->l = *l;
	return ST_PY_PROBE_OK;
}

int st_py_exe__template(const char *path, struct st_py_exe *out)
{
	struct st_py_elf pe;
	int r;

	memset(out, 0, sizeof(*out));
	r = st_py_elf__find(path, path, &pe);
	if (r)
		return r;
	if (!pe.text_vaddr)
		return -ENOENT;
	if (fill_proc(&pe, 0, &out->tmpl) != ST_PY_PROBE_OK)
		return -ENOTSUP;
	out->text_vaddr = pe.text_vaddr;
	/* 3.10: the executable mapping, as st_py_proc__probe() reads it */
	if (out->tmpl.l.frame_lasti != ST_PY_NO_OFF && pe.eval >= pe.text_vaddr &&
	    pe.eval < pe.text_end) {
		out->tmpl.text_start = pe.text_vaddr & ~4095ULL;
		out->tmpl.text_end = pe.text_end;
	}
	return 0;
}

int st_py_proc__probe(int pid, struct st_py_proc *out, __u32 *version, struct st_py_where *where)
{
	char path[64], line[MAPS_LINE_MAX], file[128];
	struct st_py_elf pe = {};
	struct st_maps_line m;
	int r = ST_PY_PROBE_NONE;
	__u64 bias = 0;
	FILE *f;

	memset(out, 0, sizeof(*out));
	*version = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (r == ST_PY_PROBE_NONE && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (st_procmaps__parse_line(line, &m) || !m.path || m.path[0] != '/' ||
		    !st_py_elf__candidate(m.path))
			continue;
		snprintf(file, sizeof(file), "/proc/%d/map_files/%llx-%llx", pid,
			 (unsigned long long)m.start, (unsigned long long)m.end);
		if (st_py_elf__find(file, m.path, &pe) || st_procmaps__load_bias(file, &m, &bias))
			continue;
		*version = pe.version;
		r = fill_proc(&pe, bias, out);
		if (r == ST_PY_PROBE_OK && where) {
			snprintf(where->file, sizeof(where->file), "%s", file);
			where->bias = bias;
			where->text_vaddr = pe.text_vaddr;
		}
	}
	/* 3.10: each Python call is a C call through the interpreter
	 * (call_function, _PyFunction_Vectorcall, ...): the merge drops its
	 * frames between two runs, told by the executable mapping of the
	 * evaluation loop */
	if (r == ST_PY_PROBE_OK && out->l.frame_lasti != ST_PY_NO_OFF) {
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			if (!st_procmaps__parse_line(line, &m) && m.executable &&
			    out->eval_start >= m.start && out->eval_start < m.end) {
				out->text_start = m.start;
				out->text_end = m.end;
				break;
			}
		}
	}
	fclose(f);
	return r;
}

/* jvm_seed.c - seeds for tests/fuzz/fuzz_jvm.c from a running HotSpot JVM
 * (root): the reads the daemon's readers make of its memory, recorded as
 * tests/fuzz/jvm_image.h lays them out.
 *   layout-*   the walker's JVM read through its layout (jvmlayout.c), and
 *              one blob's name after it;
 *   blob-*     code cache pcs' blobs and names (jcode.c), one a name;
 *   walk-*     (with a TID: a thread of it, stopped by ptrace a few times)
 *              the deferred walk of its registers and 8 KiB of its stack.
 * Build: make build/tests/jvm_seed. Usage: jvm_seed PID [TID] OUTDIR PREFIX
 * (JVM_SEED_VERBOSE set: each stop of the thread printed). The corpus's
 * seeds: Ledger (tests/workloads/java/) under JDK 17 and Temurin 25, TID
 * its busiest thread, PREFIX jdk17 and jdk25. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/fuzz/jvm_image.h"
#include "user/collect/runtimes/java/jcode.h"
#include "user/collect/runtimes/java/jvmproc.h"
#include "user/collect/unwind/unwind_native.h"

#define SEED_MAX (1 << 16)	/* bytes of records a seed holds */
#define STACK_BYTES 8192
#define MAX_BLOBS 12

static __u8 rec[SEED_MAX];
static size_t nrec;
static int pid;

static void add(__u64 addr, const void *b, __u32 n)
{
	size_t pos = 0;

	while (pos + 10 <= nrec) {	/* the same read once */
		__u64 a;
		__u16 l;

		memcpy(&a, rec + pos, 8);
		memcpy(&l, rec + pos + 8, 2);
		if (a == addr && l == n)
			return;
		pos += 10 + l;
	}
	if (n > 0xffff || nrec + 10 + n > sizeof(rec))
		return;
	memcpy(rec + nrec, &addr, 8);
	memcpy(rec + nrec + 8, &n, 2);
	memcpy(rec + nrec + 10, b, n);
	nrec += 10 + n;
}

static long rec_rd(void *arg, void *dst, __u32 n, __u64 addr)
{
	long r = st_jvm_read_process(arg, dst, n, addr);

	if (!r)
		add(addr, dst, n);
	return r;
}

static void save(const char *dir, const char *name, enum jvm_mode mode, const __u64 *regs,
		 const struct st_java_proc *p, const struct st_jvm_layout *l)
{
	__u8 head[JVM_HEAD] = { (__u8)mode };
	__u16 psz = sizeof(*p), lsz = sizeof(*l);
	char path[512];
	FILE *f;

	memcpy(head + 2, &psz, 2);
	memcpy(head + 4, &lsz, 2);
	memcpy(head + 8, regs, 8 * JVM_REGS);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")) || fwrite(head, 1, sizeof(head), f) != sizeof(head) ||
	    fwrite(p, 1, psz, f) != psz || fwrite(l, 1, lsz, f) != lsz ||
	    fwrite(rec, 1, nrec, f) != nrec || fclose(f)) {
		fprintf(stderr, "jvm_seed: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	printf("%s: %zu bytes of records\n", path, nrec);
}

/* Up to MAX_BLOBS pcs of p's code cache with blobs of different names. */
static int blob_pcs(const struct st_java_proc *p, __u64 *pcs)
{
	char seen[MAX_BLOBS][ST_JCODE_NAME_MAX + 1];
	int n = 0;

	for (int h = 0; h < p->blobs.nheaps; h++) {
		const struct st_java_heap *hp = &p->blobs.heaps[h];
		__u64 step = (hp->hi - hp->lo) / 4096 ?: 64;

		for (__u64 pc = hp->lo + 16; pc < hp->hi && n < MAX_BLOBS; pc += step) {
			struct st_jcode c;
			__u64 b;
			int k;

			if (st_jcode__find(p, st_jvm_read_process, &pid, pc, &b) != 1 ||
			    st_jcode__read(&p->blobs, st_jvm_read_process, &pid, b, &c))
				continue;
			for (k = 0; k < n && strcmp(seen[k], c.name); k++)
				;
			if (k < n)
				continue;
			snprintf(seen[n], sizeof(seen[n]), "%s", c.name);
			pcs[n++] = pc;
		}
	}
	return n;
}

static const struct st_unwind_row *no_rows(void *ctx, __u32 shard, size_t *n)
{
	(void)ctx;
	(void)shard;
	*n = 0;
	return NULL;
}

static void walks(int tid, const struct st_java_proc *p, const struct st_jvm_layout *l,
		  const char *dir, const char *prefix)
{
	static __u8 stack[STACK_BYTES];
	__u64 out[ST_MAX_USER];
	char name[128];
	int saved = 0;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
		perror("jvm_seed: ptrace");
		return;
	}
	for (int i = 0; i < 200 && saved < 6; i++) {
		struct user_regs_struct r = {};
		struct st_java_counts c = {};
		struct st_unw_native_out res;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		size_t n;
		int st;

		nanosleep(&ts, NULL);
		if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) || waitpid(tid, &st, __WALL) != tid)
			break;
		if (!ptrace(PTRACE_GETREGS, tid, NULL, &r) &&
		    !st_jvm_read_process(&pid, stack, sizeof(stack), r.rsp)) {
			__u64 regs[JVM_REGS] = { r.rip, r.rsp, r.rbp, r.r10, r.rbx, r.r13 };
			struct st_unw_native_in in = {
				.ip = r.rip, .sp = r.rsp, .bp = r.rbp, .r10 = r.r10, .rbx = r.rbx,
				.r13 = r.r13, .stack = stack, .stack_len = sizeof(stack),
				.rows = no_rows, .java = p, .jc = &c, .mem = rec_rd, .mem_arg = &pid,
			};

			nrec = 0;
			add(r.rsp, stack, sizeof(stack));
			n = st_unw_walk_native(&in, out, ST_MAX_USER, &res);
			if (getenv("JVM_SEED_VERBOSE"))
				printf("  stop %d: ip %#llx, %zu frames, %u Java, stop %u\n", i,
				       (unsigned long long)r.rip, n, res.jframes, res.stop);
			if (res.jframes >= 2) {
				snprintf(name, sizeof(name), "%s-walk-%d", prefix, saved);
				save(dir, name, JVM_WALK, regs, p, l);
				printf("  %zu frames, %u Java\n", n, res.jframes);
				saved++;
			}
		}
		ptrace(PTRACE_CONT, tid, NULL, NULL);
	}
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
}

int main(int argc, char **argv)
{
	struct st_jvm_proc *jp = calloc(1, sizeof(*jp));
	struct st_java_proc p, none = {};
	struct st_jvm_version v;
	struct st_jcode c;
	__u64 pcs[MAX_BLOBS], regs[JVM_REGS] = { 0 }, b;
	const char *dir, *prefix;
	char name[128];
	int tid = 0, n;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: jvm_seed PID [TID] OUTDIR PREFIX\n");
		return 2;
	}
	pid = atoi(argv[1]);
	if (argc == 5)
		tid = atoi(argv[2]);
	dir = argv[argc - 2];
	prefix = argv[argc - 1];
	if (!jp || st_jvm_proc__probe(NULL, pid, jp) != ST_JVM_PROBE_OK ||
	    st_jvm_layout__java_proc(&jp->l, st_jvm_read_process, &pid, &p) ||
	    st_jvm_layout__java_blobs(&jp->l, st_jvm_read_process, &pid, &p.blobs)) {
		fprintf(stderr, "jvm_seed: no JVM read in pid %d\n", pid);
		return 1;
	}
	p.code_start = p.blobs.cc_lo;	/* as java.c widens them */
	p.code_end = p.blobs.cc_hi;
	n = blob_pcs(&p, pcs);
	for (int i = 0; i < n; i++) {
		nrec = 0;
		regs[0] = pcs[i];
		if (st_jcode__find(&p, rec_rd, &pid, pcs[i], &b) == 1)
			(void)st_jcode__read(&p.blobs, rec_rd, &pid, b, &c);
		printf("%#llx: %s\n", (unsigned long long)pcs[i], c.name);
		snprintf(name, sizeof(name), "%s-blob-%d", prefix, i);
		save(dir, name, JVM_BLOB, regs, &p, &jp->l);
	}
	/* the layout's reads, then the first blob's */
	nrec = 0;
	regs[0] = n ? pcs[0] : 0;
	(void)st_jvm_version__read(&jp->l, rec_rd, &pid, &v);
	(void)st_jvm_layout__java_proc(&jp->l, rec_rd, &pid, &none);
	(void)st_jvm_layout__java_blobs(&jp->l, rec_rd, &pid, &none.blobs);
	if (n && st_jcode__find(&p, rec_rd, &pid, pcs[0], &b) == 1)
		(void)st_jcode__read(&p.blobs, rec_rd, &pid, b, &c);
	snprintf(name, sizeof(name), "%s-layout", prefix);
	memset(&none, 0, sizeof(none));
	save(dir, name, JVM_LAYOUT, regs, &none, &jp->l);
	if (tid)
		walks(tid, &p, &jp->l, dir, prefix);
	free(jp);
	return 0;
}

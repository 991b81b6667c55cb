/* fuzz_jmethod.c - libFuzzer target: the namer of HotSpot methods
 * (user/collect/runtimes/java/jmethod.c: names through the constant pool,
 * the line table copied and decoded) and the unwinder's HotSpot rule
 * (bpf/hotspot_step.h in bpf/unwind_step.h, built natively), over an input
 * that stands for a JVM's memory at JM_MEM (tests/fuzz/jmethod_fake.h:
 * byte 0 the layout, bytes 2-3 a bci; bytes 4-5 the walk's frame
 * pointer's offset). The walk takes the whole input for the interpreter's
 * code and for the stack. Seeds:
 * tests/fuzz/corpus/jmethod/ (tests/fuzz/jmethod_seed.py). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/jmethod_fake.h"
#include "user/collect/unwind/unwind_native.h"
#include "user/collect/runtimes/java/jmethod.h"

struct mem {
	const uint8_t *p;
	size_t n;
};

static long rd(void *arg, void *dst, __u32 n, __u64 addr)
{
	const struct mem *m = arg;

	if (addr < JM_MEM || addr - JM_MEM > m->n || n > m->n - (addr - JM_MEM))
		return -14;
	memcpy(dst, m->p + (addr - JM_MEM), n);
	return 0;
}

static struct st_jmethod jm;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = { data, size };
	struct st_jvm_layout l;
	struct st_java_proc p = {};
	struct st_java_counts c = {};
	struct st_unw_native_in in = { .fallback = true };
	struct st_unw_native_out res;
	__u64 out[ST_MAX_USER];
	size_t n;
	__u16 bci = 0, fpo = 0;
	int jdk25;

	if (size < 8)
		return 0;
	jdk25 = data[0] & 1;
	memcpy(&bci, data + 2, 2);
	memcpy(&fpo, data + 4, 2);
	jm_fake_layout(&l, jdk25);
	if (!st_jmethod__read(&l, jdk25 ? 25 : 17, rd, &m, JM_METHOD, &jm)) {
		if (jm.nlines > ST_JLINES_MAX || strlen(jm.klass) >= ST_JNAME_MAX ||
		    strlen(jm.name) >= ST_JNAME_MAX || strlen(jm.sig) >= ST_JNAME_MAX ||
		    strlen(jm.source) >= ST_JNAME_MAX)
			__builtin_trap();
		(void)st_jmethod__line(&jm, bci);
	}
	(void)st_jlines__find(data, size, data[0] & 1, bci);
	(void)st_jlines__end(data, size, data[0] & 1);

	p.interp_start = JM_MEM;
	p.interp_end = JM_MEM + size;
	p.code_start = JM_MEM;
	p.code_end = JM_MEM + size;
	p.l.method_constmethod = 8;
	p.l.constmethod_size = jdk25 ? 56 : 48;
	p.l.constmethod_code_size = jdk25 ? 34 : 32;
	p.l.frame_method = -3;
	p.l.frame_bcp = -8;
	in.ip = JM_MEM + bci;
	in.sp = JM_MEM;
	in.bp = JM_MEM + fpo;
	in.r13 = JM_MEM + 64;
	in.stack = data;
	in.stack_len = size;
	in.java = &p;
	in.jc = &c;
	in.mem = rd;
	in.mem_arg = &m;
	n = st_unw_walk_native(&in, out, ST_MAX_USER, &res);
	if (n > ST_MAX_USER || res.jframes > n || c.n[ST_JAVA_STAT_FRAMES] != res.jframes)
		__builtin_trap();
	return 0;
}

/* fuzz_jscopes.c - libFuzzer target: a compiled frame's inlined methods
 * (user/collect/runtimes/java/jscopes.c: the nmethod's tables found, the
 * PC descs searched, the scopes chain decoded) over an input that stands
 * for a JVM's memory at JS_MEM (tests/fuzz/jscopes_fake.h: byte 0 the
 * layout and a leaf's lookup, bytes 4-7 the pc's offset, 8-11 the compile
 * id wanted); and the step over code blobs (bpf/hotspot_blob.h, built
 * natively, user/collect/unwind/unwind_native.h) with the input as the code cache, its segment map and the
 * stack at once. Seeds: tests/fuzz/corpus/jscopes/ (js_fake_image()'s,
 * checked by tests/unit/test_hsblob.c). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/jscopes_fake.h"
#include "user/collect/runtimes/java/jscopes.h"
#include "user/collect/unwind/unwind_native.h"

struct mem {
	const uint8_t *p;
	size_t n;
};

static long rd(void *arg, void *dst, __u32 n, __u64 addr)
{
	const struct mem *m = arg;

	if (addr < JS_MEM || addr - JS_MEM > m->n || n > m->n - (addr - JS_MEM))
		return -14;
	memcpy(dst, m->p + (addr - JS_MEM), n);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = { data, size };
	struct st_jvm_layout l;
	struct st_jscopes s;
	struct st_java_proc p = {};
	struct st_unw_env e = { .stack = data, .stack_len = size, .stack_base = JS_MEM,
				.mem = rd, .mem_arg = &m };
	struct st_hs_frame f;
	__u32 pc_off = 0;
	__s32 cid = 0;
	int jdk25, r;

	if (size < 16)
		return 0;
	jdk25 = data[0] & 1;
	memcpy(&pc_off, data + 4, 4);
	memcpy(&cid, data + 8, 4);
	js_fake_layout(&l, jdk25);
	r = st_jscopes__read(&l, jdk25 ? 25 : 17, rd, &m, JS_NM, pc_off, data[0] & 2, cid, &s);
	if (s.n > ST_JSCOPES_MAX || s.stop >= ST_JSCOPES__MAX || (r == 0) != (s.n > 0))
		__builtin_trap();

	/* the blob step: one heap over the whole input, its segment map the
	 * input too; the pc and sp from bytes 12-15 */
	p.blobs.cc_lo = JS_MEM;
	p.blobs.cc_hi = JS_MEM + size;
	p.blobs.nheaps = 1;
	p.blobs.heaps[0].lo = JS_MEM;
	p.blobs.heaps[0].hi = JS_MEM + size;
	p.blobs.heaps[0].segmap = JS_MEM;
	p.blobs.log2_segment = 4;
	p.blobs.heapblock = 16;
	p.blobs.name = jdk25 ? 8 : 96;
	p.blobs.frame_size = jdk25 ? 44 : 28;
	p.blobs.frame_complete = jdk25 ? 54 : 20;
	p.blobs.code = jdk25 ? 36 : 32;
	p.blobs.code_is_offset = (__u8)jdk25;
	p.blobs.method = jdk25 ? 80 : 112;
	p.blobs.compile_id = jdk25 ? 212 : 304;
	p.blobs.stub = jdk25 ? 168 : 252;
	p.blobs.call_stub_ret = JS_MEM + data[3];
	p.blobs.deopt = jdk25 ? 176 : 128;
	p.blobs.deopt_is_offset = (__u8)jdk25;
	p.blobs.orig_pc = jdk25 ? 208 : 300;
	p.blobs.size = jdk25 ? 24 : 12;
	r = st_hs_blob_step(&e, &p, JS_MEM + (data[12] | (__u32)data[13] << 8),
			    JS_MEM + (data[14] | (__u32)data[15] << 8), JS_MEM + data[2], data[0] & 2, &f);
	if (r < -1 || r > 1 || (r == -1 && f.stop >= ST_JAVA_STAT__MAX) ||
	    (r == 1 && f.note > ST_JAVA_STAT__MAX))
		__builtin_trap();
	return 0;
}

/* jscopes_fake.h - the synthetic JVM memory that tests/fuzz/fuzz_jscopes.c
 * reads and tests/unit/test_hsblob.c builds: an nmethod with PC
 * descriptors, scopes data and metadata, laid out as JDK 17's or Temurin
 * 25's (their VMStructs offsets). An input is memory at JS_MEM: byte 0
 * picks the layout (bit 0: Temurin 25's) and bit 1 a leaf's lookup, bytes
 * 4-7 the pc's offset from the nmethod, bytes 8-11 the compile id wanted
 * (-1: any); the nmethod is at JS_NM. js_fake_image() writes a whole one
 * (seeds: tests/fuzz/jscopes_seed.c's output, tests/fuzz/corpus/jscopes/).
 *
 * The image's debug information: methods M0 (the nmethod's), M1, M2 in
 * the metadata (indexes 1, 2, 3); scopes M0 at bci 10, M1 at bci 5 (its
 * sender M0), M2 at bci 2 (its sender M1), and a scope M0 at the entry
 * (bci -1); PC descs (code offsets): -1 (none), 0x10 (M0), 0x20 (M2 < M1
 * < M0), 0x30 (no scope), 0x40 (M0 at the entry). */
#ifndef STACKTREE_JSCOPES_FAKE_H
#define STACKTREE_JSCOPES_FAKE_H

#include <string.h>

#include "user/collect/runtimes/java/jvmlayout.h"

#define JS_MEM 0x10000000ULL
#define JS_NM (JS_MEM + 0x100)
#define JS_CODE_OFF 0x200			/* the code's offset in the nmethod */
#define JS_IMAGE 0x1000				/* bytes of an image */
#define JS_M0 0x20000000ULL
#define JS_M1 0x20000100ULL
#define JS_M2 0x20000200ULL
#define JS_CID 4242

/* Every member present (missing bits 0) but those of the other JDK. */
static inline void js_fake_layout(struct st_jvm_layout *l, int jdk25)
{
	static const enum st_jvm_field only17[] = {
		ST_JF_codeblob_code_begin, ST_JF_nmethod_scopes_data_begin, ST_JF_nmethod_metadata_offset,
		ST_JF_nmethod_dependencies_offset,
	};
	static const enum st_jvm_field only25[] = {
		ST_JF_codeblob_code_offset, ST_JF_nmethod_scopes_data_offset, ST_JF_nmethod_immutable_data,
		ST_JF_nmethod_immutable_data_size, ST_JF_codeblob_mutable_data,
		ST_JF_codeblob_relocation_size, ST_JF_codeblob_mutable_data_size,
	};
	const enum st_jvm_field *gone = jdk25 ? only17 : only25;
	size_t ngone = jdk25 ? sizeof(only17) / sizeof(only17[0]) : sizeof(only25) / sizeof(only25[0]);

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < ngone; i++)
		l->missing[gone[i] / 64] |= 1ULL << (gone[i] % 64);
	l->pcdesc_pc_offset = 0;
	l->pcdesc_scope_decode_offset = 4;
	l->pcdesc_size = 16;
	l->invocation_entry_bci = -1;
	if (jdk25) {
		l->codeblob_code_offset = 36;
		l->codeblob_relocation_size = 28;
		l->codeblob_mutable_data = 16;
		l->codeblob_mutable_data_size = 48;
		l->nmethod_method = 80;
		l->nmethod_immutable_data = 96;
		l->nmethod_immutable_data_size = 160;
		l->nmethod_scopes_pcs_offset = 196;
		l->nmethod_scopes_data_offset = 200;
		l->nmethod_compile_id = 212;
	} else {
		l->codeblob_code_begin = 32;
		l->nmethod_method = 112;
		l->nmethod_scopes_data_begin = 120;
		l->nmethod_metadata_offset = 260;
		l->nmethod_scopes_pcs_offset = 268;
		l->nmethod_dependencies_offset = 272;
		l->nmethod_compile_id = 304;
	}
}

static inline void js_put(unsigned char *img, __u64 at, const void *v, size_t n)
{
	memcpy(img + (at - JS_MEM), v, n);
}

static inline void js_put32(unsigned char *img, __u64 at, __s32 v)
{
	js_put(img, at, &v, 4);
}

static inline void js_put64(unsigned char *img, __u64 at, __u64 v)
{
	js_put(img, at, &v, 8);
}

/* Write an image of JS_IMAGE bytes into img: header (leaf, pc_off, cid),
 * then the nmethod and its tables as the layout says. */
static inline void js_fake_image(unsigned char *img, int jdk25, int leaf, __u32 pc_off, __s32 cid)
{
	/* scopes: a 0 at offset 0 (no scope), then M0@10 at 1, M1@5 at 4,
	 * M2@2 at 7, M0@entry at 10: (sender, method index, bci + 1) */
	static const unsigned char scopes[] = { 0, 0, 1, 11, 1, 2, 6, 4, 3, 3, 0, 1, 0 };
	static const __s32 pcs[][2] = { { -1, 0 }, { 0x10, 1 }, { 0x20, 7 }, { 0x30, 0 }, { 0x40, 10 } };
	const __u64 meta[] = { JS_M0, JS_M1, JS_M2 };
	const __s32 pcs_bytes = (__s32)(16 * (sizeof(pcs) / sizeof(pcs[0])));
	unsigned char data[sizeof(scopes)];
	__u64 pcs_at, data_at, meta_at;

	memset(img, 0, JS_IMAGE);
	img[0] = (unsigned char)((jdk25 ? 1 : 0) | (leaf ? 2 : 0));
	memcpy(img + 4, &pc_off, 4);
	memcpy(img + 8, &cid, 4);
	for (size_t i = 0; i < sizeof(scopes); i++)	/* UNSIGNED5: X = 1 from JDK 20 */
		data[i] = (unsigned char)(scopes[i] + (jdk25 ? 1 : 0));
	if (jdk25) {
		__u64 imm = JS_MEM + 0x800, mut = JS_MEM + 0xc00;

		pcs_at = imm;
		data_at = imm + (__u64)pcs_bytes;
		meta_at = mut + 0x10;
		js_put32(img, JS_NM + 36, JS_CODE_OFF);
		js_put64(img, JS_NM + 16, mut);
		js_put32(img, JS_NM + 28, 0x10);
		js_put32(img, JS_NM + 48, 0x10 + (__s32)sizeof(meta));
		js_put64(img, JS_NM + 80, JS_M0);
		js_put64(img, JS_NM + 96, imm);
		js_put32(img, JS_NM + 160, pcs_bytes + (__s32)sizeof(data));
		js_put32(img, JS_NM + 196, 0);
		js_put32(img, JS_NM + 200, pcs_bytes);
		js_put32(img, JS_NM + 212, JS_CID);
	} else {
		meta_at = JS_NM + 0x400;
		data_at = meta_at + sizeof(meta);
		pcs_at = data_at + 0x20;
		js_put64(img, JS_NM + 32, JS_NM + JS_CODE_OFF);
		js_put64(img, JS_NM + 112, JS_M0);
		js_put64(img, JS_NM + 120, data_at);
		js_put32(img, JS_NM + 260, (__s32)(meta_at - JS_NM));
		js_put32(img, JS_NM + 268, (__s32)(pcs_at - JS_NM));
		js_put32(img, JS_NM + 272, (__s32)(pcs_at - JS_NM) + pcs_bytes);
		js_put32(img, JS_NM + 304, JS_CID);
	}
	for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
		js_put32(img, pcs_at + 16 * i, pcs[i][0]);
		js_put32(img, pcs_at + 16 * i + 4, pcs[i][1]);
	}
	js_put(img, data_at, data, sizeof(data));
	js_put(img, meta_at, meta, sizeof(meta));
}

#endif

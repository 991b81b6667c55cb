/* jmethod_fake.h - the layout of the synthetic JVM memory that
 * tests/fuzz/fuzz_jmethod.c reads and tests/unit/test_hotspot_step.c replays
 * (seeds: tests/fuzz/jmethod_seed.py). An input is memory at JM_MEM:
 * byte 0 picks the layout (bit 0: Temurin 25's offsets, else JDK 17's,
 * both as their VMStructs say), bytes 2-3 a bci; the Method is at
 * JM_MEM + 8. */
#ifndef STACKTREE_JMETHOD_FAKE_H
#define STACKTREE_JMETHOD_FAKE_H

#include <string.h>

#include "user/collect/runtimes/java/jvmlayout.h"

#define JM_MEM 0x10000000ULL
#define JM_METHOD (JM_MEM + 8)

/* Every member present (missing bits 0); the ones the namer reads set. */
static inline void jm_fake_layout(struct st_jvm_layout *l, int jdk25)
{
	memset(l, 0, sizeof(*l));
	l->method_constmethod = 8;
	l->constmethod_constants = 8;
	l->constmethod_flags = 28;
	l->constmethod_code_size = jdk25 ? 34 : 32;
	l->constmethod_name_index = jdk25 ? 36 : 34;
	l->constmethod_signature_index = jdk25 ? 38 : 36;
	l->constmethod_size = jdk25 ? 56 : 48;
	l->constmethod_has_linenumber_table = 1;
	l->constantpool_pool_holder = 24;
	l->constantpool_length = 60;
	l->constantpool_source_file_name_index = 54;
	l->constantpool_size = 72;
	l->klass_name = 24;
	l->symbol_length = 4;
	l->symbol_body = 6;
}

#endif

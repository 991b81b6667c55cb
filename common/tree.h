/* tree.h - the call-stack tree of one thread (or one merged process).
 *
 * Owner: common/tree.c. Pure logic, no I/O. One type for every stage: the
 * collect stage's raw trees (frames keyed by kind and address,
 * user/collect/collector.h) and the named trees of profiles.
 * A node is a frame at one position: a call site (function + offset of the
 * return address), the sampled leaf (a function), a function inlined into
 * its parent frame, a function (folded input, no offsets), or a pseudo frame
 * ([truncated], [other], ...). Children are
 * unique by key (kind, addr, function, module, offset); node strings are
 * interned in the owning profile's strtab, so keys compare by pointer.
 *   BASE  samples where the node is the leaf
 *   CUM   samples where the node is on the path = base + sum(children cum),
 *         computed by st_tree__finalize()
 *   CALLS new calls of the node's frame, see st_tree__add_sample()
 */
#ifndef STACKTREE_TREE_H
#define STACKTREE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum st_frame_kind {
	ST_FRAME_ROOT = 0,	/* a thread's root (function NULL) */
	ST_FRAME_CALLSITE,	/* interior frame: function + offset of the return address */
	ST_FRAME_LEAF,		/* the sampled function (offset not meaningful) */
	ST_FRAME_FUNCTION,	/* function-level frame, from folded stacks */
	ST_FRAME_SPECIAL,	/* pseudo frame named by `function`: [truncated], [other], ... */
	ST_FRAME_DATA,		/* page faults: the data touched, a leaf under the function */
	ST_FRAME_INLINE,	/* a function inlined into its parent frame (DWARF): the
				 * parent's call site or leaf lies in its code. Chains of
				 * them hang under a CALLSITE or LEAF, outermost first; the
				 * innermost holds the callees (or the leaf's base) */
};

/* What a data leaf (ST_FRAME_DATA) touched. */
enum st_data_class {
	ST_DATA_NONE = 0,
	ST_DATA_MODULE,		/* a loaded ELF image's data (.data, .rodata, .bss) */
	ST_DATA_STACK,		/* a thread's stack, relative to the faulting frame */
	ST_DATA_HEAP,		/* brk heap or anonymous private memory */
};
/* A bit of st_frame.data_class next to the class: the fault was on a page
 * --force-faults paged out (forced), not a first touch (natural). */
#define ST_DATA_FORCED 0x4
#define ST_DATA_CLASS_MASK 0x3

/* The runtime a frame's code belongs to: machine code (native, the
 * default), the kernel's, or an interpreter's or VM's (a CPython code object,
 * a HotSpot method), named by that runtime. Part of a frame's key. Names
 * (profile.json, reports) and OpenTelemetry's profile.frame.type values in
 * one table: st_runtime__name(), st_runtime__otel(). */
enum st_runtime {
	ST_RUNTIME_NATIVE = 0,
	ST_RUNTIME_KERNEL,
	ST_RUNTIME_PYTHON,
	ST_RUNTIME_JAVA,
	ST_RUNTIME_COUNT
};

/* A frame as a key: what identifies a child under its parent. */
/* Frames below a thread's root that a tree may hold. The kernel's stacks
 * are at most 127 user + 64 kernel frames and a few pseudo frames; offline
 * inputs (folded stacks, profile.json) deeper than this are refused with an
 * error, so that every walk over a tree, recursive or not, has a depth
 * bounded by this constant and not by its input. */
#define ST_TREE_MAX_DEPTH 2048

/* The module of a CPython frame (runtime ST_RUNTIME_PYTHON,
 * user/collect/runtimes/python/python.c), and pprof's mapping of them all
 * (st_runtime__module()): function is the code object's qualname, file:line
 * the line it ran; a call site's offset is that line (a call site per line,
 * as native ones are per address). */
#define ST_PYTHON_MODULE "[python]"

/* The pseudo frame at the root of a stack whose walk stopped short. */
#define ST_TRUNCATED_NAME "[truncated]"

struct st_frame {
	enum st_frame_kind kind;
	__u64 addr;		/* runtime address, 0 when none */
	const char *function;	/* interned or NULL (demangled: readable) */
	const char *system_name; /* interned mangled name when function was demangled, else
				  * NULL (not part of a frame's identity: function is) */
	const char *module;	/* interned or NULL */
	__u64 offset;		/* function offset (call sites), module offset (unknown function);
				 * data leaves: offset in the symbol, the mapping, or (stack,
				 * signed) from the faulting frame's CFA */
	__u8 runtime;		/* enum st_runtime */
	__u8 data_class;	/* enum st_data_class, for ST_FRAME_DATA */
	/* Source position (not part of the key): a call site's (or inline
	 * frame's) line of the call; a leaf's line running most often. */
	const char *file;	/* interned or NULL */
	__u32 line;		/* 0: unknown */
};

struct st_node {
	struct st_frame f;
	__u64 base, cum, calls;
	struct st_node *parent;
	struct st_node *first_child;
	struct st_node *last_child;	/* appends in O(1) */
	struct st_node *next_sibling;
	unsigned int nchildren;
	unsigned int depth;	/* root = 0 */
};

/* How CALLS are counted when consecutive samples of a thread are folded.
 * Let k be the length of the common prefix of the previous and the current
 * path (root excluded).
 *   ST_CALLS_FUNCTION: every node past the prefix is a new call (nodes are
 *     functions: a different node at depth k means the old callee returned).
 *   ST_CALLS_FRAME: nodes are positions inside frames (call sites, leaf); the
 *     node at depth k is the same frame as the previous one at depth k (same
 *     callers) when the previous path was deeper than k, so only nodes past k
 *     are new calls, and the node at k only when the previous path ended
 *     before it. This is the rule the BPF program applies. */
enum st_calls_rule { ST_CALLS_FUNCTION, ST_CALLS_FRAME };

struct st_tree;

struct st_tree *st_tree__new(void);
void st_tree__free(struct st_tree *t);
struct st_node *st_tree__root(const struct st_tree *t);
size_t st_tree__node_count(const struct st_tree *t);
size_t st_tree__memory(const struct st_tree *t);

/* Find the child of parent with key f; create it (counts zero) when create is
 * set. NULL when absent, or on ENOMEM (errno set). */
struct st_node *st_tree__child(struct st_tree *t, struct st_node *parent,
			       const struct st_frame *f, bool create);

/* Fold `count` consecutive identical samples of this tree's thread: path is
 * root-first (root excluded), n frames. CALLS are counted against the previous
 * sample added with st_tree__add_sample() (only the first of the `count`
 * samples can start calls). Returns the leaf node, or NULL on ENOMEM. n == 0
 * counts the sample on the root. */
struct st_node *st_tree__add_sample(struct st_tree *t, const struct st_frame *path, size_t n,
				    __u64 count, enum st_calls_rule rule);

/* Merge the children of src (a node of another tree, or of this one) into
 * dst_parent: nodes with equal keys are summed (base, calls), all the way
 * down (iteratively); src's own base and calls are added to dst_parent.
 * Returns 0 or -ENOMEM. */
int st_tree__merge(struct st_tree *t, struct st_node *dst_parent, const struct st_node *src);

/* st_tree__merge() with the counterpart of src's node s under d made by
 * child(t, d, s, ctx) (NULL: -ENOMEM), e.g. with s's strings interned
 * elsewhere. Pre-order by the links: no recursion, whatever the depth. */
int st_tree__merge_with(struct st_tree *t, struct st_node *dst_parent, const struct st_node *src,
			struct st_node *(*child)(struct st_tree *t, struct st_node *d,
						 const struct st_node *s, void *ctx),
			void *ctx);

/* Move node n of t (not the root), with its subtree, under new_parent (a
 * node of t outside n's subtree): its depths follow. When new_parent has
 * a child with n's frame already, n's counts and subtree are merged into
 * that child (st_tree__merge()) and n is left detached (its nodes stay
 * allocated, unreachable, until t is freed). The previous sample's path is
 * forgotten (st_tree__reset_calls()). Returns 0, or -ENOMEM with t as it
 * was, or -EINVAL. */
int st_tree__adopt(struct st_tree *t, struct st_node *new_parent, struct st_node *n);

/* A finalized copy of t without its inline frames: the callees and base of
 * an ST_FRAME_INLINE node go to the nearest ancestor that is not one (its
 * calls are the ancestor's already); equal frames met that way are summed.
 * Strings are shared with t. NULL on ENOMEM. */
struct st_tree *st_tree__without_inline(const struct st_tree *t);

/* A finalized copy of t by function, as pprof and flame graph tools count:
 * the call sites, leaf, inline frames and function frames of one function
 * (function name and module) under one parent become one ST_FRAME_FUNCTION
 * node (no address, offset or source line), their BASE and CALLS summed
 * (CALLS of a merged node is thus at most the sum of its frames' calls).
 * Frames without a function name keep their address and offset (kind
 * ST_FRAME_FUNCTION); pseudo frames and data leaves are copied as they are.
 * seen, when not NULL, is called with every node of t (pre-order) and the
 * copy's node it went into (stable until the copy is freed). Strings are
 * shared with t. NULL on ENOMEM. */
struct st_tree *st_tree__by_function(const struct st_tree *t,
				     void (*seen)(const struct st_node *src, struct st_node *dst,
						  void *ctx),
				     void *ctx);

/* Compute cum bottom-up and sort every node's children by cum descending
 * (ties: by function name, then offset, for stable output). */
void st_tree__finalize(struct st_tree *t);

/* Sort children of every node with a custom order (after finalize). */
void st_tree__sort(struct st_tree *t, int (*cmp)(const struct st_node *, const struct st_node *));

/* Depth-first pre-order walk; the callback returns non-zero to stop.
 * Children are visited in sibling order. */
int st_tree__walk(const struct st_tree *t,
		  int (*fn)(const struct st_node *n, void *ctx), void *ctx);

/* The node after n in a depth-first pre-order walk of top's subtree (n
 * in it), by the links: no recursion; NULL after its last node. */
struct st_node *st_node__next_in(const struct st_node *top, const struct st_node *n);

/* Whether f is the [truncated] pseudo frame (a stack cut short). */
bool st_frame__is_truncated(const struct st_frame *f);

/* Forget the previous path (e.g. the thread's samples restart elsewhere). */
void st_tree__reset_calls(struct st_tree *t);

/* "native", "kernel", "python", "java"; NULL when out of range. */
const char *st_runtime__name(unsigned r);
/* OpenTelemetry's profile.frame.type of runtime r ("native", "kernel",
 * "cpython", "jvm"); NULL when out of range. */
const char *st_runtime__otel(unsigned r);
/* The pseudo module ("[python]", "[java]") that stands for the code of an
 * interpreted runtime in formats that name a frame's mapping (pprof); NULL
 * for native and kernel frames (their module is a file, [kernel.kallsyms]). */
const char *st_runtime__module(unsigned r);
/* The runtime named s (st_runtime__name()): 0, or -EINVAL. */
int st_runtime__parse(const char *s, enum st_runtime *out);

/* Human name of a frame for text reports: "function+0xoff", "function",
 * "module+0xoff", "[unknown]", or the pseudo frame's name. Writes into buf. */
const char *st_frame__name(const struct st_frame *f, char *buf, size_t len);

#endif

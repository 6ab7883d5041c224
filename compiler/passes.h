/* The compiler's stages, in the order compiler/main.c runs them. Each takes the graph, changes
 * it (or fills a plan), and returns 0 or an exit code with the message in err. */
#ifndef FTAX_PASSES_H
#define FTAX_PASSES_H

#include <stdio.h>

#include "op.h"

/* Every node's op must be in the table; otherwise list every unsupported op type with counts. */
int ft_resolve_ops(ft_graph *g, ft_err *e);

/* float16 models compute in float32 (compiler/passes/upcast.c, docs/fp16.md): float16 constants
 * and values are widened; float16 graph inputs and outputs stay, with Casts at the edges. */
int ft_upcast_fp16(ft_graph *g, ft_err *e);

/* Bind inputs to constants read from tensor files (--bind), then pin symbolic input dims: "SYM=N" pins that symbol everywhere, "INPUT=1x128" one input's shape.
 * A dim still symbolic afterwards is an error naming the input, the symbol and the flag. */
typedef struct ft_pins {
  const char *dims[64];   /* "batch=1" */
  int n_dims;
  const char *shapes[64]; /* "input_ids=1x128" */
  int n_shapes;
  const char *binds[64];  /* "shape=shape.pb": the input becomes this constant */
  int n_binds;
  const char *keep[64];   /* --keep-input: a graph input with an initializer stays an input ("all": every one) */
  int n_keep;
  FILE *notes;            /* where ft_keep_defaults notes the defaults it keeps as constants (NULL: nowhere) */
  const char *tool;       /* the note's prefix: "ftaxc", "ftax-eager" */
} ft_pins;
int ft_specialize(ft_graph *g, const ft_pins *pins, ft_err *e);

/* Graph inputs that have an initializer (IR 4 and later: a default the caller may override,
 * ft_graph.defaults): those named by --keep-input become inputs of the program, without the
 * initializer; the rest stay constants, which one note on pins->notes says (how many, the first
 * names, escaped, and the flag). A default that --bind names is kept too, for ft_specialize to
 * bind to the file's tensor. An unknown name, or one that is not such an input, is a usage
 * error. Runs before the fp16 upcast, so a kept float16 default is a float16 input. */
int ft_keep_defaults(ft_graph *g, const ft_pins *pins, ft_err *e);

/* Infer every value's dtype and shape in node order. With FT_INFER_FOLD, a node whose inputs are
 * all constant is evaluated with its kernel and replaced by its result (this must happen during
 * inference: Reshape targets and the like are computed by such nodes). FT_INFER_SHAPES evaluates
 * the same nodes, for the shapes that depend on their results, but keeps every node and drops
 * what it computed at the end: every value gets its shape, the graph still runs op by op (the
 * eager runtime's view). FT_INFER_NO_FOLD folds only what inference itself computes (Shape of a
 * known shape, Constant). */
enum { FT_INFER_NO_FOLD = 0, FT_INFER_FOLD = 1, FT_INFER_SHAPES = 2 };
int ft_infer(ft_graph *g, int mode, ft_err *e);
/* Part of that sweep: control-flow node i is replaced by the nodes it runs, node i is then the
 * first of them (none: the node after). If (compiler/passes/branch.c): a condition known at
 * compile time takes its branch, one computed at run time guards both (ft_node.guard) and merges
 * their outputs (ftax.IfMerge). Loop and Scan (compiler/passes/loop.c): unrolled. */
int ft_expand_if(ft_graph *g, int i, ft_err *e);
int ft_expand_loop(ft_graph *g, int i, ft_err *e);
int ft_expand_scan(ft_graph *g, int i, ft_err *e);
/* Sequence ops are lowered into lists of values (compiler/passes/sequence.c): node i goes, and
 * what it computes is nodes in its place (SequenceAt, SplitToSequence, ConcatFromSequence) or
 * nothing (the list alone). ft_sequence_consumer: node i, not a sequence op, reads a sequence: an
 * Identity is lowered (0), anything else refused; -1 when it reads none. */
int ft_expand_sequence(ft_graph *g, int i, ft_err *e);
int ft_sequence_consumer(ft_graph *g, int i, ft_err *e);

/* Remove Identity and Dropout (inference mode), then nodes whose results nobody uses. */
int ft_simplify(ft_graph *g, ft_err *e);

/* Lowering: a planned kernel call for each node left to run, with constant inputs pre-packed
 * where the kernel asks for it. */
typedef struct ft_lowered {
  int *order;        /* node indices, in execution order */
  int n;
  ft_kcall *calls;   /* calls[i] for order[i]; kernel NULL for alias nodes */
  int bf16, n_bf16;  /* lowered with FT_LOWER_BF16; the calls it moved to the bf16 kernels */
  int no_concat_elision; /* the memory plan keeps every Concat's copy (set by the CUDA target) */
  int n_blocked;     /* conv-to-conv edges in the blocked layout (ft_blocked_layout) */
} ft_lowered;
int ft_lower(ft_graph *g, ft_lowered *lw, ft_err *e);
/* The same; prepack 0 leaves constants in their ONNX layout (backends whose kernels read that). */
int ft_lower_ex(ft_graph *g, ft_lowered *lw, int prepack, ft_err *e);
/* prepack FT_LOWER_BF16 (C target, --precision bf16): prepack, and the GEMM-core calls move to
 * the bf16 kernels first (compiler/ops/bf16.c). */
#define FT_LOWER_BF16 2
/* Moves one planned call to its bf16 kernel; 1 when it did. */
int ft_bf16_retarget(ft_kcall *k);
/* prepack FT_LOWER_NO_WINO (with FT_LOWER_PACK or FT_LOWER_BF16; --no-winograd): 3x3 convs keep
 * the direct kernel. Without FT_LOWER_PACK alone (CUDA; bf16) they keep it too. */
#define FT_LOWER_PACK 1
#define FT_LOWER_NO_WINO 4
/* Moves a Winograd conv call back to the direct kernel (compiler/ops/conv.c). */
void ft_conv_winograd_off(ft_kcall *k);
/* bf16: a shifted Conv with a small output plane to im2col^T (compiler/ops/conv.c). */
void ft_conv_bf16_small_plane(ft_kcall *k);
void ft_lowered_free(ft_lowered *lw);

/* The C target in fp32, after lowering: edges between pointwise^T and depthwise convs whose
 * value nothing else reads go into the blocked layout (compiler/passes/blocked.c, FT_CV_LAYOUT). */
int ft_blocked_layout(ft_graph *g, ft_lowered *lw, ft_err *e);
/* Whether a planned call can be that side of such an edge (compiler/ops/conv.c): side
 * FT_CV_Y_BLOCKED the conv that writes it, FT_CV_X_BLOCKED the conv that reads it. */
int ft_conv_blocked_side(const ft_kcall *k, int side);
/* A plain pointwise conv that could write such an edge in the transposed mode: switched to it
 * (mode and scratch; its weights want packing again), 1; else 0 and nothing changed. */
int ft_conv_blocked_transpose(ft_kcall *k);

/* Memory plan: where every value lives. */
enum { FT_S_NONE = 0, FT_S_ARENA, FT_S_WEIGHT, FT_S_INPUT, FT_S_OUTPUT };
typedef struct ft_memplan {
  int *root;          /* per value: the value whose storage it shares (itself if none) */
  int *storage;       /* per value: FT_S_* of its root */
  int64_t *offset;    /* per value: byte offset in arena/weights, or input/output index */
  int64_t *scratch;   /* per lowered call: arena offset of its scratch, -1 if none */
  unsigned char *elided; /* per lowered call: 1 for a Concat whose inputs were written into its output (no call) */
  size_t arena_bytes;
  size_t lower_bound; /* largest sum of simultaneously live activations */
  size_t weight_bytes;
  int n_inplace, n_alias, n_concat; /* n_concat: Concats elided */
} ft_memplan;
int ft_plan_memory(ft_graph *g, const ft_lowered *lw, ft_memplan *mp, ft_err *e);
/* Every value the calls, their guards and the outputs use has a place in mp (an internal error,
 * exit 3, naming the value and the node, where one has none). */
int ft_check_plan(const ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, ft_err *e);
void ft_memplan_free(ft_memplan *mp);

/* The C program. */
typedef struct ft_emit_opts {
  const char *name;        /* program name, a C identifier: prefix of the API */
  const char *header;      /* file name of OUT.h, as the .c includes it */
  const char *cmdline;     /* recorded in the header comment */
  const char *model_hash;  /* hex digest of the model file */
  const char *weights_file; /* file name the weights go to (embed: incbin path) */
  int embed_weights;
  int freestanding;        /* a library for bare metal: program_freestanding.h, weights in OUT.c */
  const char *isa;         /* the target the plan was made for (templates/c/isa.h's names, "cuda"); NULL: generic */
} ft_emit_opts;
/* What a weights file carries to say whose it is: the model's hash (its first 39 hex digits) and
 * the target the plan was made for, "HASH+ISA" in at most 47 characters (templates/c/weights.h). */
void ft_weights_id(char id[48], const char *model_hash, const char *isa);
int ft_emit_c(ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const ft_emit_opts *o,
              FILE *c_out, FILE *h_out, FILE *w_out, ft_err *e);
/* One program of several plans (one per shape, ftaxc --dim SYM=A,B): gs[p], lws[p], mps[p] the
 * plan of shape labels[p]. The weights are merged into one payload (a constant of the same bytes
 * in several plans stored once; mps' weight offsets rewritten to it), the arena is the largest
 * plan's, the inputs and outputs must be the same in number. One plan: ft_emit_c. */
int ft_emit_c_plans(ft_graph *const *gs, const ft_lowered *lws, ft_memplan *mps, int n_plans, const char *const *labels,
                    const ft_emit_opts *o, FILE *c_out, FILE *h_out, FILE *w_out, ft_err *e);

/* The CUDA target (compiler/passes/target_cuda.c) runs after lowering (without prepacking) and before
 * the memory plan: it checks every kernel has a CUDA twin and, for fp16, stores float32 tensors
 * as float16. It returns the libraries the program links. Then the CUDA program
 * (compiler/emit/emit_cuda.c). */
enum { FT_PREC_FP32 = 0, FT_PREC_TF32 = 1, FT_PREC_FP16 = 2 };
typedef struct ft_cuda_opts {
  int precision;      /* FT_PREC_* */
  int graph;          /* capture the run as a CUDA graph at init */
  const char *arch;   /* sm_90, compute_90 ... */
} ft_cuda_opts;
typedef struct ft_cuda_libs {
  int blaslt, dnn; /* the program calls cuBLASLt, cuDNN: link -lcublasLt, -lcudnn */
} ft_cuda_libs;
int ft_target_cuda(ft_graph *g, ft_lowered *lw, const ft_cuda_opts *o, ft_cuda_libs *libs, ft_err *e);
int ft_emit_cuda(ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const ft_emit_opts *eo,
                 const ft_cuda_opts *o, const ft_cuda_libs *libs, FILE *cu_out, FILE *h_out, FILE *w_out, ft_err *e);

#endif

/* One op, one place: the descriptor every ONNX op (and every fused op) provides.
 *
 *   infer  sets dtype and shape of each output from the inputs (and, where the output shape
 *          depends on input contents, such as Reshape's target, from constant input data).
 *   plan   picks the kernel and computes its parameters for the now-known shapes.
 *
 * Nothing else is op-specific: constant folding and ftax-eager call plan and then the kernel
 * function; the C emitter prints the same plan as a call with literal parameters. */
#ifndef FTAX_OP_H
#define FTAX_OP_H

#include "ir.h"

#define FT_MAX_IO 64
#define FT_MAX_P 256
#define FT_MAX_F 16

typedef struct ft_opctx {
  const ft_node *node;
  int opset;
  int n_in, n_out;
  const ft_tensor *in[FT_MAX_IO]; /* NULL for an omitted optional input; data set if known */
  ft_tensor *out[FT_MAX_IO];      /* infer fills dtype, rank, dims; NULL if output omitted */
  ft_err *err;
  const char *where; /* "'node' (Op)" for messages */
  const ft_graph *graph; /* for messages: names of values; NULL outside a graph */
  /* bit i: input i's data is a run-time value (ftax-eager runs on live tensors), not one known when
   * the model is compiled; 0 in ftaxc, whose folding sees only constants */
  uint64_t live;
} ft_opctx;

/* t, one of c's inputs, holds data known when the model is compiled (a constant, or folded from
 * constants). The checks meant for constants (indices in range, positive scales) run only on
 * these: a value computed at run time is not an error (docs/hostile-input.md), in the program
 * and in ftax-eager alike. */
static inline int ft_known_const(const ft_opctx *c, const ft_tensor *t) {
  if (!t || !t->data) return 0;
  for (int i = 0; i < c->n_in && i < 64; i++)
    if (c->in[i] == t) return !((c->live >> i) & 1);
  return 1;
}

/* A packing of one constant input, done at compile time by ftaxc (weights pre-packed into the
 * layout the kernel wants). The kernel reads p[flag_p] to know whether it got the packed form. */
typedef struct ft_prepack {
  int input;    /* which input, -1 when none */
  int from;     /* the value packed (the unpacked constant), set by lowering; -1 when none */
  int flag_p;   /* index into p set to 1 when the input is packed */
  size_t (*pack)(const int64_t *p, const void *src, void *dst); /* dst NULL: return bytes */
} ft_prepack;

struct ft_kcall;
struct ft_twin; /* compiler/cuda_twins.h */

/* A kernel entry: the unit the backends share, declared once beside its op (in the family's
 * kernel tables under compiler/ops/). It names the C function, the CUDA twin that does the same
 * work (or none) and, through the templates/common/<x>_params.h header both include, the
 * parameter layout. A planned call points at its entry; nothing finds a kernel by its name. */
typedef struct ft_kentry {
  const char *name;  /* the C function, as generated programs call it (templates/c) */
  ft_kernel_fn fn;   /* the same function, compiled into this program */
  /* the element types it is for: the key its family's table is searched by, and the types the
   * twin's launcher is instantiated with ($0, $1 in ft_twin.call) */
  int dtype, dtype2;
  const struct ft_twin *twin; /* the CUDA twin, or NULL when there is none */
  /* fp16 CUDA programs store float32 tensors as half: a kernel that moves float data as bytes or
   * as 4-byte elements rewrites its call for that here (NULL: nothing to rewrite) */
  void (*half)(const ft_graph *g, const ft_node *n, struct ft_kcall *k);
} ft_kentry;

/* An entry for a kernel that has no twin and no table of its own: FT_K(k, fn) points k at it. */
#define FT_KENTRY(fn_) {#fn_, fn_, 0, 0, NULL, NULL}
/* The table of a kernel chosen by element size (base_1, _2, _4, _8; ft_kentry_by_size): dtype is
 * the unsigned type of that size, what a twin moves the elements as. half4: the 4-byte entry's. */
#define FT_KSIZED(base, twin, half4)                                                             \
  {{#base "_1", base##_1, FT_UINT8, 0, twin, NULL},                                              \
   {#base "_2", base##_2, FT_UINT16, 0, twin, NULL},                                             \
   {#base "_4", base##_4, FT_UINT32, 0, twin, half4},                                            \
   {#base "_8", base##_8, FT_UINT64, 0, twin, NULL},                                             \
   {0}}

typedef struct ft_kcall {
  const ft_kentry *entry; /* the kernel; NULL for a call that runs none (a view) */
  int64_t p[FT_MAX_P];
  int np;
  double f[FT_MAX_F];
  int nf;
  size_t scratch; /* bytes of working memory the kernel needs */
  ft_prepack prepack;
  const char *templates; /* templates/c headers the kernel needs beyond its op's list (comma-
                            separated; NULL: none): the bf16 kernels (compiler/ops/bf16.c) */
  int no_inplace; /* set by plan when the path this call takes would read an input after writing
                     over it: the planner then gives the output its own storage */
} ft_kcall;

enum {
  FT_OP_ALIAS = 1,   /* output 0 is input 0's bytes reinterpreted (Reshape, Squeeze, ...) */
  FT_OP_INPLACE = 2, /* output 0 may overwrite an input of its size that dies at this node */
  FT_OP_NOEVAL = 4,  /* has no kernel: must be folded at compile time (Constant, Shape...) */
  FT_OP_CONTROL = 8, /* runs a subgraph: the inference sweep replaces it by the branch it takes
                        when that is known (compiler/passes/branch.c) */
  FT_OP_EFFECT = 16, /* holds a Loop's state across iterations (compiler/passes/loop.c): never
                        folded, even from constant inputs, and never removed as dead code */
};

/* FT_OP_INPLACE lets the planner pick any input. A kernel that still reads some inputs after it
 * has written output elements (a conv reads X long after its first output rows) names the one
 * input it may overwrite instead: flags FT_OP_INPLACE_ONLY(k). Its kernel must read each element
 * of input k before it writes the same element of output 0. Kept in the flags, above the bits of
 * the enum, so descriptor rows stay six fields. */
#define FT_OP_INPLACE_ONLY(k) (FT_OP_INPLACE | ((unsigned)(k) + 1) << 8)
/* The one input an in-place op may overwrite, or -1 for any. */
#define FT_OP_INPLACE_INPUT(flags) ((int)(((flags) >> 8) & 0xff) - 1)

/* Fusion patterns, as TVM classifies ops: how output elements depend on input elements. The
 * fusion passes read them (compiler/fuse/fuse_elementwise.c groups elementwise and broadcast ops);
 * a row names its pattern in its flags: FT_OP_PAT(FT_PAT_ELEMWISE). */
enum {
  FT_PAT_OPAQUE = 0,  /* none of the below (a row that names no pattern) */
  FT_PAT_ELEMWISE,    /* one output element from the same element of one input (Relu, Exp, Cast) */
  FT_PAT_BROADCAST,   /* the same from several inputs under numpy broadcasting (Add, PRelu, Where) */
  FT_PAT_INJECTIVE,   /* moves elements (Reshape, Transpose, Slice, Concat) */
  FT_PAT_REDUCTION,   /* combines elements (ReduceMean, Softmax, pools) */
  FT_PAT_OUT_FUSABLE, /* a complex op whose output takes an elementwise epilogue (Conv, MatMul) */
};

typedef struct ft_opdesc {
  const char *op_type;
  const char *domain; /* "" for the default ONNX domain, "ftax" for fused ops */
  int (*infer)(ft_opctx *c);
  int (*plan)(ft_opctx *c, ft_kcall *k);
  const char *templates; /* comma-separated files under templates/c the kernel lives in */
  unsigned flags; /* FT_OP_* | FT_OP_PAT(FT_PAT_*) */
} ft_opdesc;

/* The fusion pattern rides in the flags, above the in-place input, as the rows stay six fields. */
#define FT_OP_PAT(pat) ((unsigned)(pat) << 16)
static inline int ft_op_pattern(const ft_opdesc *d) { return d ? (int)((d->flags >> 16) & 0xf) : FT_PAT_OPAQUE; }

#define FT_K(k, fn_)                                                                             \
  do {                                                                                           \
    static const ft_kentry e_ = FT_KENTRY(fn_);                                                  \
    (k)->entry = &e_;                                                                            \
  } while (0)

/* The copy a view gets when it is a graph output (compiler/ops/movement.c). */
extern const ft_kentry ft_copy_bytes_entry[];

/* The table (compiler/ops/table.c). */
const ft_opdesc *ft_op_find(const char *domain, const char *op_type);
/* Every entry of the registered kernel tables (those of the kernels with CUDA twins), in a fixed
 * order (compiler/ops/table.c). */
void ft_kentry_each(void (*fn)(const ft_kentry *e, void *ctx), void *ctx);

/* Fill an op context for node n of g: inputs from the values' tensors. Outputs point at the
 * values' tensors. */
void ft_opctx_init(ft_opctx *c, ft_graph *g, int node, ft_err *err);

/* Run a planned call on concrete buffers (used by folding and the eager runtime). Allocates
 * scratch with malloc when the call asks for it. */
int ft_kcall_run(const ft_kcall *k, const void *const *in, void *const *out, ft_err *err);

/* Helpers most ops share (compiler/ops/common.c). */
int ft_infer_fail(ft_opctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int ft_need_const(ft_opctx *c, int input, const char *what);   /* error if data unknown */
int64_t ft_const_int(const ft_tensor *t, int64_t i);            /* element i of an integer tensor */
double ft_const_real(const ft_tensor *t, int64_t i);
int ft_broadcast_shape(ft_opctx *c, int n, const ft_tensor *const *ts, ft_tensor *out);
/* Strides of t broadcast to shape out (0 on broadcast dims), written into p[0..out->rank). */
void ft_broadcast_strides(const ft_tensor *t, const ft_tensor *out, int64_t *p);
int ft_norm_axis(ft_opctx *c, int64_t axis, int rank, int *out); /* negative axes, range check */
/* Integer attribute `name` of the node (dflt if absent) into *out, refused (FT_EINVALID, naming
 * the attribute, its value and the range) outside [lo, hi] (ft_attr_int_in, ir.h). */
int ft_attr_int_c(ft_opctx *c, const char *name, int64_t dflt, int64_t lo, int64_t hi, int *out);
void ft_copy_shape(ft_tensor *dst, const ft_tensor *src);
/* p[0..3) = [outer, n, inner]: x as outer blocks of n = dims[axis] rows (1 for a scalar) of
 * inner elements, the layout the kernels that work along one axis take. */
void ft_plan_axis(const ft_tensor *x, int axis, int64_t *p);
/* k runs the entry of an FT_KSIZED table for dtype's element size (an error if it has none). */
int ft_kentry_by_size(ft_opctx *c, ft_kcall *k, const ft_kentry *sized, int dtype);
/* Broadcast iteration parameters (templates/c/binary.h FT_BCAST_LOOP) for n inputs over out;
 * returns the number of p entries written. */
int ft_plan_broadcast(const ft_tensor *const *ins, int n, const ft_tensor *out, int64_t *p);

#endif

/* Elementwise unary ops: activations, math functions, rounding, IsNaN/IsInf, Not, Clip, PRelu.
 * Kernels: templates/c/unary.h (PRelu, which broadcasts its slope: templates/c/binary.h). */
#include <string.h>

#include "binary.h"
#include "cuda_twins.h"
#include "op.h"
#include "scalar_table.h"
#include "unary.h"

/* Kernel entries by dtype, each with its CUDA twin: templates/cuda/elementwise.cuh's ftc_unary
 * with the op's functor (ftc_u_<op>), or the launcher named. */
#define TWIN(tw, launcher) static const ft_twin tw = {launcher, NULL, NULL, "elementwise", 0, NULL, NULL};
#define K(dt, fn, tw) {#fn, fn, dt, 0, &tw, NULL}
#define KS(op, tw) K(FT_INT8, ft_##op##_i8, tw), K(FT_INT16, ft_##op##_i16, tw), K(FT_INT32, ft_##op##_i32, tw), \
                   K(FT_INT64, ft_##op##_i64, tw)
#define KU(op, tw) K(FT_UINT8, ft_##op##_u8, tw), K(FT_UINT16, ft_##op##_u16, tw), K(FT_UINT32, ft_##op##_u32, tw), \
                   K(FT_UINT64, ft_##op##_u64, tw)

/* The float kernels of every scalar op that has them (templates/common/scalar_ops.h), twinned
 * with ftc_unary and the op's functor: its attributes and defaults are the row's
 * (compiler/scalar_table.c). */
#define FLOAT_KERNELS(fn)                                                                        \
  TWIN(fn##_tw, "ftc_unary<$0, $0, ftc_u_" #fn ">")                                              \
  static const ft_kentry fn##_float_k[] = {K(FT_FLOAT, ft_##fn##_f32, fn##_tw),                  \
                                           K(FT_DOUBLE, ft_##fn##_f64, fn##_tw), {0}};
#define UROW(ID, fn, name, kernels, EXPR) FT_SOP_IF_C_##kernels(FLOAT_KERNELS(fn))
#define PROW(ID, fn, name, kernels, A, DA, B, DB, EXPR) FT_SOP_IF_C_##kernels(FLOAT_KERNELS(fn))
FT_SCALAR_UNARY_OPS(UROW) FT_SCALAR_PARAM_OPS(PROW)
#undef UROW
#undef PROW
typedef struct fkernels { int id; const ft_kentry *k; } fkernels;
#define FROW(ID, fn) {FT_SOP_##ID, fn##_float_k},
#define UROW(ID, fn, name, kernels, EXPR) FT_SOP_IF_C_##kernels(FROW(ID, fn))
#define PROW(ID, fn, name, kernels, A, DA, B, DB, EXPR) FT_SOP_IF_C_##kernels(FROW(ID, fn))
static const fkernels float_kernels[] = {FT_SCALAR_UNARY_OPS(UROW) FT_SCALAR_PARAM_OPS(PROW)};
#undef FROW
#undef UROW
#undef PROW

/* Kernels of the other types, and of the ops that are no scalar op: by input dtype, with a
 * fixed output dtype (0: the input's). */
TWIN(abs_i_tw, "ftc_unary<$0, $0, ftc_u_abs_i>")
TWIN(abs_u_tw, "ftc_unary<$0, $0, ftc_u_abs_u>")
TWIN(sign_u_tw, "ftc_unary<$0, $0, ftc_u_sign_u>")
TWIN(bitwise_not_tw, "ftc_unary<$0, $0, ftc_u_bitwise_not>")
TWIN(not_tw, "ftc_unary<$0, $0, ftc_u_not>")
TWIN(isnan_tw, "ftc_unary<$0, uint8_t, ftc_u_isnan>")
TWIN(isinf_tw, "ftc_isinf<$0>")
TWIN(clip_tw, "ftc_clip<$0>")
TWIN(prelu_tw, "ftc_binary<$0, $0, $0, ftc_b_prelu>")
static const ft_kentry relu_k[] = {KS(relu, relu_tw), {0}};
static const ft_kentry neg_k[] = {KS(neg, neg_tw), {0}};
static const ft_kentry abs_k[] = {KS(abs, abs_i_tw), KU(abs, abs_u_tw), {0}};
static const ft_kentry sign_k[] = {KS(sign, sign_tw), KU(sign, sign_u_tw), {0}};
static const ft_kentry isnan_k[] = {K(FT_FLOAT, ft_isnan_f32, isnan_tw), K(FT_DOUBLE, ft_isnan_f64, isnan_tw), {0}};
static const ft_kentry isinf_k[] = {K(FT_FLOAT, ft_isinf_f32, isinf_tw), K(FT_DOUBLE, ft_isinf_f64, isinf_tw), {0}};
static const ft_kentry bitwise_not_k[] = {KS(bitwise_not, bitwise_not_tw), KU(bitwise_not, bitwise_not_tw), {0}};
static const ft_kentry not_k[] = {K(FT_BOOL, ft_not_bool, not_tw), {0}};
static const ft_kentry clip_k[] = {K(FT_FLOAT, ft_clip_f32, clip_tw), K(FT_DOUBLE, ft_clip_f64, clip_tw),
                                   KS(clip, clip_tw), KU(clip, clip_tw), {0}};
static const ft_kentry prelu_k[] = {K(FT_FLOAT, ft_prelu_f32, prelu_tw), K(FT_DOUBLE, ft_prelu_f64, prelu_tw),
                                    K(FT_INT32, ft_prelu_i32, prelu_tw), K(FT_INT64, ft_prelu_i64, prelu_tw), {0}};
#undef TWIN
static const struct other { const char *op; const ft_kentry *k; int out_dtype; } others[] = {
    {"Relu", relu_k, 0},          {"Neg", neg_k, 0},       {"Abs", abs_k, 0},
    {"Sign", sign_k, 0},          {"IsNaN", isnan_k, FT_BOOL}, {"IsInf", isinf_k, FT_BOOL},
    {"Not", not_k, FT_BOOL},      {"BitwiseNot", bitwise_not_k, 0},
    {"Clip", clip_k, 0},          {"PRelu", prelu_k, 0},
};

/* Every table of the family, for the registry of kernels with twins (compiler/ops/table.c). */
#define RROW(fn) fn##_float_k,
#define UROW(ID, fn, name, kernels, EXPR) FT_SOP_IF_C_##kernels(RROW(fn))
#define PROW(ID, fn, name, kernels, A, DA, B, DB, EXPR) FT_SOP_IF_C_##kernels(RROW(fn))
const ft_kentry *const ft_kernels_unary[] = {
    FT_SCALAR_UNARY_OPS(UROW) FT_SCALAR_PARAM_OPS(PROW)
    relu_k, neg_k, abs_k, sign_k, isnan_k, isinf_k, bitwise_not_k, not_k, clip_k, prelu_k, NULL};
#undef RROW
#undef UROW
#undef PROW

const ft_kentry *ft_gelu_kernel(int tanh_form, int dtype) { /* for ftax.Gelu (fused_gelu.c) */
  for (const ft_kentry *e = tanh_form ? gelu_tanh_float_k : gelu_float_k; e->name; e++)
    if (e->dtype == dtype) return e;
  return NULL;
}

static const struct other *find_other(const char *op) {
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    if (!strcmp(others[i].op, op)) return &others[i];
  return NULL;
}

/* The scalar op the node computes, when it is one with float kernels (Gelu's approximate picks
 * which); *bad when the attribute is wrong. */
static const ft_sop *find_sop(ft_opctx *c, int *bad) {
  const ft_sop *s = ft_sop_by_name(c->node->op_type);
  *bad = 0;
  if (s && s->id == FT_SOP_GELU) {
    const char *approx = ft_attr_str(c->node, "approximate", "none");
    if (!strcmp(approx, "tanh")) s = ft_sop_by_id(FT_SOP_GELU_TANH);
    else if (strcmp(approx, "none")) {
      *bad = 1;
      ft_infer_fail(c, FT_EINVALID, "approximate='%s' is not one of 'none', 'tanh'", approx);
      return NULL;
    }
  }
  return s && s->kernels ? s : NULL;
}

static const ft_kentry *find_kernel(ft_opctx *c) {
  int dt = c->in[0]->dtype, bad;
  const ft_sop *s = find_sop(c, &bad);
  if (bad) return NULL;
  for (size_t i = 0; s && i < sizeof float_kernels / sizeof float_kernels[0]; i++)
    for (const ft_kentry *e = float_kernels[i].id == s->id ? float_kernels[i].k : NULL; e && e->name; e++)
      if (e->dtype == dt) return e;
  const struct other *o = find_other(c->node->op_type);
  for (const ft_kentry *e = o ? o->k : NULL; e && e->name; e++)
    if (e->dtype == dt) return e;
  ft_infer_fail(c, FT_EUNSUPPORTED, "%s is not supported for %s inputs", c->node->op_type, ft_dtype_name(dt));
  return NULL;
}

static int unary_infer(ft_opctx *c) {
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs an input");
  if (!find_kernel(c)) return c->err->code;
  const struct other *o = find_other(c->node->op_type);
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dtype = o && o->out_dtype ? o->out_dtype : c->in[0]->dtype;
  return 0;
}

static int unary_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = find_kernel(c);
  if (!e) return c->err->code;
  k->entry = e;
  k->p[0] = ft_numel(c->in[0]);
  k->np = 1;
  if (!strcmp(c->node->op_type, "IsInf")) {
    k->p[1] = ft_attr_int(c->node, "detect_negative", 1);
    k->p[2] = ft_attr_int(c->node, "detect_positive", 1);
    k->np = 3;
  }
  int bad;
  const ft_sop *s = find_sop(c, &bad);
  if (s && s->n_params) {
    /* kernels that take attributes read f[0] and f[1] */
    for (int i = 0; i < 2; i++) k->f[i] = s->attr[i] ? ft_attr_float(c->node, s->attr[i], s->dflt[i]) : 0;
    k->nf = 2;
  }
  return 0;
}

/* Clip: bounds are attributes before opset 11, optional scalar inputs from 11 on. */
static int clip_infer(ft_opctx *c) {
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs an input");
  if (!find_kernel(c)) return c->err->code;
  for (int i = 1; i < 3 && i < c->n_in; i++) {
    if (!c->in[i]) continue;
    if (c->in[i]->dtype != c->in[0]->dtype)
      return ft_infer_fail(c, FT_EINVALID, "input %d (%s) is %s, but the data is %s", i, i == 1 ? "min" : "max",
                           ft_dtype_name(c->in[i]->dtype), ft_dtype_name(c->in[0]->dtype));
    if (ft_numel(c->in[i]) != 1)
      return ft_infer_fail(c, FT_EINVALID, "input %d (%s) must be a scalar, it has %lld elements", i,
                           i == 1 ? "min" : "max", (long long)ft_numel(c->in[i]));
  }
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dtype = c->in[0]->dtype;
  return 0;
}

static int clip_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = find_kernel(c);
  if (!e) return c->err->code;
  k->entry = e;
  k->p[0] = ft_numel(c->in[0]);
  k->p[1] = k->p[2] = 0;
  k->f[0] = k->f[1] = 0;
  if (c->opset < 11) {
    /* absent attributes mean no bound (the old defaults were the float limits) */
    if (ft_attr_find(c->node, "min")) { k->p[1] = 2; k->f[0] = ft_attr_float(c->node, "min", 0); }
    if (ft_attr_find(c->node, "max")) { k->p[2] = 2; k->f[1] = ft_attr_float(c->node, "max", 0); }
  } else {
    if (c->n_in > 1 && c->in[1]) k->p[1] = 1;
    if (c->n_in > 2 && c->in[2]) k->p[2] = 1;
  }
  k->np = 3;
  k->nf = 2;
  return 0;
}

/* PRelu: the slope broadcasts to X (unidirectionally); the output has X's shape. Before opset 7
 * a 1-D slope of C values is per channel (axis 1): it is given trailing 1 dims to broadcast. */
static ft_tensor prelu_slope(const ft_opctx *c) {
  ft_tensor s = *c->in[1];
  const ft_tensor *x = c->in[0];
  if (c->opset < 7 && s.rank == 1 && x->rank >= 2 && s.dims[0] == x->dims[1] && s.dims[0] != 1) {
    s.rank = x->rank - 1;
    for (int d = 1; d < s.rank; d++) s.dims[d] = 1;
  }
  return s;
}

static int prelu_infer(ft_opctx *c) {
  if (c->n_in != 2 || !c->in[0] || !c->in[1]) return ft_infer_fail(c, FT_EINVALID, "needs inputs X and slope");
  if (c->in[0]->dtype != c->in[1]->dtype)
    return ft_infer_fail(c, FT_EINVALID, "X is %s but slope is %s", ft_dtype_name(c->in[0]->dtype),
                         ft_dtype_name(c->in[1]->dtype));
  if (!find_kernel(c)) return c->err->code;
  ft_tensor slope = prelu_slope(c);
  const ft_tensor *ts[2] = {c->in[0], &slope};
  ft_tensor shape = {0};
  int rc = ft_broadcast_shape(c, 2, ts, &shape);
  if (rc) return rc;
  int same = shape.rank == c->in[0]->rank;
  for (int d = 0; same && d < shape.rank; d++) same = shape.dims[d] == c->in[0]->dims[d];
  if (!same) return ft_infer_fail(c, FT_EINVALID, "the slope does not broadcast to the shape of X");
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dtype = c->in[0]->dtype;
  return 0;
}

static int prelu_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = find_kernel(c);
  if (!e) return c->err->code;
  k->entry = e;
  ft_tensor slope = prelu_slope(c);
  const ft_tensor *ts[2] = {c->in[0], &slope};
  k->np = ft_plan_broadcast(ts, 2, c->out[0], k->p);
  return 0;
}

/* The ONNX ops of the family. A scalar op (templates/common/scalar_ops.h) gets its kernels,
 * attributes and defaults from its row there. */
#define UN(name) {name, "", unary_infer, unary_plan, "unary", FT_OP_INPLACE | FT_OP_PAT(FT_PAT_ELEMWISE)}
const ft_opdesc ft_ops_unary[] = {
    UN("Relu"), UN("LeakyRelu"), UN("Elu"), UN("Selu"), UN("Celu"), UN("ThresholdedRelu"),
    UN("Sigmoid"), UN("HardSigmoid"), UN("HardSwish"), UN("Softplus"), UN("Softsign"), UN("Mish"),
    UN("Gelu"), UN("Swish"), UN("Shrink"), UN("Tanh"), UN("Erf"), UN("Exp"), UN("Log"), UN("Sqrt"),
    UN("Reciprocal"), UN("Neg"), UN("Abs"), UN("Sign"), UN("Floor"), UN("Ceil"), UN("Round"),
    UN("Sin"), UN("Cos"), UN("Tan"), UN("Asin"), UN("Acos"), UN("Atan"), UN("Sinh"), UN("Cosh"),
    UN("Asinh"), UN("Acosh"), UN("Atanh"), UN("IsNaN"), UN("IsInf"), UN("Not"), UN("BitwiseNot"),
    {"Clip", "", clip_infer, clip_plan, "unary", FT_OP_INPLACE | FT_OP_PAT(FT_PAT_ELEMWISE)},
    {"PRelu", "", prelu_infer, prelu_plan, "binary", FT_OP_INPLACE | FT_OP_PAT(FT_PAT_BROADCAST)},
    {0}};

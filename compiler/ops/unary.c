/* Elementwise unary ops: activations, math functions, rounding, IsNaN/IsInf, Not, Clip, PRelu.
 * Kernels: templates/c/unary.h (PRelu, which broadcasts its slope: templates/c/binary.h). */
#include <string.h>

#include "binary.h"
#include "cuda_twins.h"
#include "op.h"
#include "unary.h"

/* Kernel entries by dtype, each with its CUDA twin: templates/cuda/elementwise.cuh's ftc_unary
 * with the op's functor (ftc_u_<op>), or the launcher named. */
#define TWIN(tw, launcher) static const ft_twin tw = {launcher, NULL, NULL, "elementwise", 0, NULL, NULL};
#define K(dt, fn, tw) {#fn, fn, dt, 0, &tw, NULL}
#define KF(op, tw) K(FT_FLOAT, ft_##op##_f32, tw), K(FT_DOUBLE, ft_##op##_f64, tw)
#define KS(op, tw) K(FT_INT8, ft_##op##_i8, tw), K(FT_INT16, ft_##op##_i16, tw), K(FT_INT32, ft_##op##_i32, tw), \
                   K(FT_INT64, ft_##op##_i64, tw)
#define KU(op, tw) K(FT_UINT8, ft_##op##_u8, tw), K(FT_UINT16, ft_##op##_u16, tw), K(FT_UINT32, ft_##op##_u32, tw), \
                   K(FT_UINT64, ft_##op##_u64, tw)
#define UNARY_TWIN(op) TWIN(op##_tw, "ftc_unary<$0, $0, ftc_u_" #op ">")
#define FLOAT_ONLY(op) UNARY_TWIN(op) static const ft_kentry op##_k[] = {KF(op, op##_tw), {0}};
FLOAT_ONLY(leaky_relu) FLOAT_ONLY(elu) FLOAT_ONLY(selu) FLOAT_ONLY(celu) FLOAT_ONLY(thresholded_relu)
FLOAT_ONLY(sigmoid) FLOAT_ONLY(hard_sigmoid) FLOAT_ONLY(hard_swish) FLOAT_ONLY(softplus)
FLOAT_ONLY(softsign) FLOAT_ONLY(mish) FLOAT_ONLY(gelu) FLOAT_ONLY(gelu_tanh) FLOAT_ONLY(swish)
FLOAT_ONLY(shrink) FLOAT_ONLY(tanh) FLOAT_ONLY(erf) FLOAT_ONLY(exp) FLOAT_ONLY(log) FLOAT_ONLY(sqrt)
FLOAT_ONLY(reciprocal) FLOAT_ONLY(floor) FLOAT_ONLY(ceil) FLOAT_ONLY(round) FLOAT_ONLY(sin)
FLOAT_ONLY(cos) FLOAT_ONLY(tan) FLOAT_ONLY(asin) FLOAT_ONLY(acos) FLOAT_ONLY(atan) FLOAT_ONLY(sinh)
FLOAT_ONLY(cosh) FLOAT_ONLY(asinh) FLOAT_ONLY(acosh) FLOAT_ONLY(atanh)
#undef FLOAT_ONLY
TWIN(isnan_tw, "ftc_unary<$0, uint8_t, ftc_u_isnan>")
TWIN(isinf_tw, "ftc_isinf<$0>")
UNARY_TWIN(relu) UNARY_TWIN(neg) UNARY_TWIN(abs_f) UNARY_TWIN(abs_i) UNARY_TWIN(abs_u) UNARY_TWIN(sign)
UNARY_TWIN(sign_u) UNARY_TWIN(bitwise_not) UNARY_TWIN(not)
TWIN(clip_tw, "ftc_clip<$0>")
TWIN(prelu_tw, "ftc_binary<$0, $0, $0, ftc_b_prelu>")
static const ft_kentry isnan_k[] = {KF(isnan, isnan_tw), {0}};
static const ft_kentry isinf_k[] = {KF(isinf, isinf_tw), {0}};
static const ft_kentry relu_k[] = {KF(relu, relu_tw), KS(relu, relu_tw), {0}};
static const ft_kentry neg_k[] = {KF(neg, neg_tw), KS(neg, neg_tw), {0}};
static const ft_kentry abs_k[] = {KF(abs, abs_f_tw), KS(abs, abs_i_tw), KU(abs, abs_u_tw), {0}};
static const ft_kentry sign_k[] = {KF(sign, sign_tw), KS(sign, sign_tw), KU(sign, sign_u_tw), {0}};
static const ft_kentry bitwise_not_k[] = {KS(bitwise_not, bitwise_not_tw), KU(bitwise_not, bitwise_not_tw), {0}};
static const ft_kentry not_k[] = {K(FT_BOOL, ft_not_bool, not_tw), {0}};
static const ft_kentry clip_k[] = {KF(clip, clip_tw), KS(clip, clip_tw), KU(clip, clip_tw), {0}};
static const ft_kentry prelu_k[] = {K(FT_FLOAT, ft_prelu_f32, prelu_tw), K(FT_DOUBLE, ft_prelu_f64, prelu_tw),
                                    K(FT_INT32, ft_prelu_i32, prelu_tw), K(FT_INT64, ft_prelu_i64, prelu_tw), {0}};
#undef UNARY_TWIN
#undef TWIN

const ft_kentry *const ft_kernels_unary[] = {
    leaky_relu_k, elu_k, selu_k, celu_k, thresholded_relu_k, sigmoid_k, hard_sigmoid_k, hard_swish_k,
    softplus_k, softsign_k, mish_k, gelu_k, gelu_tanh_k, swish_k, shrink_k, tanh_k, erf_k, exp_k, log_k,
    sqrt_k, reciprocal_k, floor_k, ceil_k, round_k, sin_k, cos_k, tan_k, asin_k, acos_k, atan_k, sinh_k,
    cosh_k, asinh_k, acosh_k, atanh_k, isnan_k, isinf_k, relu_k, neg_k, abs_k, sign_k, bitwise_not_k,
    not_k, clip_k, prelu_k, NULL};

/* One op: its kernels by input dtype, a fixed output dtype (0: the input's), and up to two
 * float attributes passed to the kernel as f[0], f[1]. */
typedef struct uop {
  const char *op;
  const ft_kentry *k;
  int out_dtype;
  const char *attr[2];
  float dflt[2];
} uop;

static const uop uops[] = {
    {"Relu", relu_k, 0, {0}, {0}},
    {"LeakyRelu", leaky_relu_k, 0, {"alpha"}, {0.01f}},
    {"Elu", elu_k, 0, {"alpha"}, {1.0f}},
    {"Selu", selu_k, 0, {"alpha", "gamma"}, {1.67326319217681884765625f, 1.05070102214813232421875f}},
    {"Celu", celu_k, 0, {"alpha"}, {1.0f}},
    {"ThresholdedRelu", thresholded_relu_k, 0, {"alpha"}, {1.0f}},
    {"Sigmoid", sigmoid_k, 0, {0}, {0}},
    {"HardSigmoid", hard_sigmoid_k, 0, {"alpha", "beta"}, {0.2f, 0.5f}},
    {"HardSwish", hard_swish_k, 0, {0}, {0}},
    {"Softplus", softplus_k, 0, {0}, {0}},
    {"Softsign", softsign_k, 0, {0}, {0}},
    {"Mish", mish_k, 0, {0}, {0}},
    {"Gelu", gelu_k, 0, {0}, {0}}, /* approximate="tanh": gelu_tanh_k, chosen in plan */
    {"Swish", swish_k, 0, {"alpha"}, {1.0f}},
    {"Shrink", shrink_k, 0, {"lambd", "bias"}, {0.5f, 0.0f}},
    {"Tanh", tanh_k, 0, {0}, {0}},
    {"Erf", erf_k, 0, {0}, {0}},
    {"Exp", exp_k, 0, {0}, {0}},
    {"Log", log_k, 0, {0}, {0}},
    {"Sqrt", sqrt_k, 0, {0}, {0}},
    {"Reciprocal", reciprocal_k, 0, {0}, {0}},
    {"Neg", neg_k, 0, {0}, {0}},
    {"Abs", abs_k, 0, {0}, {0}},
    {"Sign", sign_k, 0, {0}, {0}},
    {"Floor", floor_k, 0, {0}, {0}},
    {"Ceil", ceil_k, 0, {0}, {0}},
    {"Round", round_k, 0, {0}, {0}},
    {"Sin", sin_k, 0, {0}, {0}},
    {"Cos", cos_k, 0, {0}, {0}},
    {"Tan", tan_k, 0, {0}, {0}},
    {"Asin", asin_k, 0, {0}, {0}},
    {"Acos", acos_k, 0, {0}, {0}},
    {"Atan", atan_k, 0, {0}, {0}},
    {"Sinh", sinh_k, 0, {0}, {0}},
    {"Cosh", cosh_k, 0, {0}, {0}},
    {"Asinh", asinh_k, 0, {0}, {0}},
    {"Acosh", acosh_k, 0, {0}, {0}},
    {"Atanh", atanh_k, 0, {0}, {0}},
    {"IsNaN", isnan_k, FT_BOOL, {0}, {0}},
    {"IsInf", isinf_k, FT_BOOL, {0}, {0}},
    {"Not", not_k, FT_BOOL, {0}, {0}},
    {"BitwiseNot", bitwise_not_k, 0, {0}, {0}},
    {"Clip", clip_k, 0, {0}, {0}},
    {"PRelu", prelu_k, 0, {0}, {0}},
};

const ft_kentry *ft_gelu_kernel(int tanh_form, int dtype) { /* for ftax.Gelu (fused_gelu.c) */
  for (const ft_kentry *e = tanh_form ? gelu_tanh_k : gelu_k; e->name; e++)
    if (e->dtype == dtype) return e;
  return NULL;
}

static const uop *find_uop(const char *op) {
  for (size_t i = 0; i < sizeof uops / sizeof uops[0]; i++)
    if (!strcmp(uops[i].op, op)) return &uops[i];
  return NULL;
}

static const ft_kentry *find_kernel(ft_opctx *c, const uop *u) {
  const ft_kentry *table = u->k;
  if (!strcmp(u->op, "Gelu")) {
    const char *approx = ft_attr_str(c->node, "approximate", "none");
    if (!strcmp(approx, "tanh")) table = gelu_tanh_k;
    else if (strcmp(approx, "none")) {
      ft_infer_fail(c, FT_EINVALID, "approximate='%s' is not one of 'none', 'tanh'", approx);
      return NULL;
    }
  }
  int dt = c->in[0]->dtype;
  for (const ft_kentry *e = table; e->name; e++)
    if (e->dtype == dt) return e;
  ft_infer_fail(c, FT_EUNSUPPORTED, "%s is not supported for %s inputs", u->op, ft_dtype_name(dt));
  return NULL;
}

static int unary_infer(ft_opctx *c) {
  const uop *u = find_uop(c->node->op_type);
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs an input");
  if (!find_kernel(c, u)) return c->err->code;
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dtype = u->out_dtype ? u->out_dtype : c->in[0]->dtype;
  return 0;
}

static int unary_plan(ft_opctx *c, ft_kcall *k) {
  const uop *u = find_uop(c->node->op_type);
  const ft_kentry *e = find_kernel(c, u);
  if (!e) return c->err->code;
  k->entry = e;
  k->p[0] = ft_numel(c->in[0]);
  k->np = 1;
  if (!strcmp(u->op, "IsInf")) {
    k->p[1] = ft_attr_int(c->node, "detect_negative", 1);
    k->p[2] = ft_attr_int(c->node, "detect_positive", 1);
    k->np = 3;
  }
  if (u->attr[0]) {
    /* kernels that take attributes read f[0] and f[1] */
    for (int i = 0; i < 2; i++) k->f[i] = u->attr[i] ? ft_attr_float(c->node, u->attr[i], u->dflt[i]) : 0;
    k->nf = 2;
  }
  return 0;
}

/* Clip: bounds are attributes before opset 11, optional scalar inputs from 11 on. */
static int clip_infer(ft_opctx *c) {
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs an input");
  if (!find_kernel(c, find_uop("Clip"))) return c->err->code;
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
  const ft_kentry *e = find_kernel(c, find_uop("Clip"));
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
  if (!find_kernel(c, find_uop("PRelu"))) return c->err->code;
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
  const ft_kentry *e = find_kernel(c, find_uop("PRelu"));
  if (!e) return c->err->code;
  k->entry = e;
  ft_tensor slope = prelu_slope(c);
  const ft_tensor *ts[2] = {c->in[0], &slope};
  k->np = ft_plan_broadcast(ts, 2, c->out[0], k->p);
  return 0;
}

#define UN(name) {name, "", unary_infer, unary_plan, "unary", FT_OP_INPLACE}
const ft_opdesc ft_ops_unary[] = {
    UN("Relu"), UN("LeakyRelu"), UN("Elu"), UN("Selu"), UN("Celu"), UN("ThresholdedRelu"),
    UN("Sigmoid"), UN("HardSigmoid"), UN("HardSwish"), UN("Softplus"), UN("Softsign"), UN("Mish"),
    UN("Gelu"), UN("Swish"), UN("Shrink"), UN("Tanh"), UN("Erf"), UN("Exp"), UN("Log"), UN("Sqrt"),
    UN("Reciprocal"), UN("Neg"), UN("Abs"), UN("Sign"), UN("Floor"), UN("Ceil"), UN("Round"),
    UN("Sin"), UN("Cos"), UN("Tan"), UN("Asin"), UN("Acos"), UN("Atan"), UN("Sinh"), UN("Cosh"),
    UN("Asinh"), UN("Acosh"), UN("Atanh"), UN("IsNaN"), UN("IsInf"), UN("Not"), UN("BitwiseNot"),
    {"Clip", "", clip_infer, clip_plan, "unary", FT_OP_INPLACE},
    {"PRelu", "", prelu_infer, prelu_plan, "binary", FT_OP_INPLACE},
    {0}};

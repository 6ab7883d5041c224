/* Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
 * ReduceLogSum, ReduceLogSumExp, ReduceSumSquare; ArgMax, ArgMin; CumSum. Kernels: templates/c/reduce.h.
 *
 * The axes are an attribute up to opset 12 (ReduceSum) or 17 (the others), then an optional
 * input, which must be constant here. No axes means all axes, or none with
 * noop_with_empty_axes=1. */
#include <string.h>

#include "cuda_twins.h"
#include "op.h"
#include "reduce.h"

/* Kernel entries by dtype, each with its CUDA twin (templates/cuda/reduce.cuh; none for CumSum) */
#define TWIN(tw, launcher) static const ft_twin tw = {launcher, NULL, NULL, "reduce", 0, NULL, NULL};
TWIN(sum_tw, "ftc_reduce<$0, ftc_r_sum>") TWIN(mean_tw, "ftc_reduce<$0, ftc_r_mean>")
TWIN(prod_tw, "ftc_reduce<$0, ftc_r_prod>") TWIN(max_tw, "ftc_reduce<$0, ftc_r_max>")
TWIN(min_tw, "ftc_reduce<$0, ftc_r_min>") TWIN(l1_tw, "ftc_reduce<$0, ftc_r_l1>")
TWIN(sum_square_tw, "ftc_reduce<$0, ftc_r_sum_square>") TWIN(l2_tw, "ftc_reduce<$0, ftc_r_l2>")
TWIN(log_sum_tw, "ftc_reduce<$0, ftc_r_log_sum>") TWIN(log_sum_exp_tw, "ftc_reduce_lse<$0>")
TWIN(argmax_tw, "ftc_arg<$0, 1>") TWIN(argmin_tw, "ftc_arg<$0, 0>")
#undef TWIN
#define K(dt, fn, tw) {#fn, fn, dt, 0, tw, NULL}
#define KF(op, tw) K(FT_FLOAT, ft_##op##_f32, tw), K(FT_DOUBLE, ft_##op##_f64, tw)
#define KI(op, tw) K(FT_INT32, ft_##op##_i32, tw), K(FT_INT64, ft_##op##_i64, tw), K(FT_INT8, ft_##op##_i8, tw), \
                   K(FT_UINT8, ft_##op##_u8, tw), K(FT_UINT32, ft_##op##_u32, tw), K(FT_UINT64, ft_##op##_u64, tw)
#define R(op) static const ft_kentry op##_k[] = {KF(reduce_##op, &op##_tw), KI(reduce_##op, &op##_tw), {0}};
R(sum) R(mean) R(prod) R(max) R(min) R(l1) R(sum_square)
#undef R
static const ft_kentry l2_k[] = {KF(reduce_l2, &l2_tw), {0}};
static const ft_kentry log_sum_k[] = {KF(reduce_log_sum, &log_sum_tw), {0}};
static const ft_kentry log_sum_exp_k[] = {KF(reduce_log_sum_exp, &log_sum_exp_tw), {0}};
#define KA(op) KF(op, &op##_tw), KI(op, &op##_tw), K(FT_INT16, ft_##op##_i16, &op##_tw), K(FT_UINT16, ft_##op##_u16, &op##_tw)
static const ft_kentry argmax_k[] = {KA(argmax), {0}};
static const ft_kentry argmin_k[] = {KA(argmin), {0}};
#undef KA
const ft_kentry *const ft_kernels_reduce[] = {sum_k, mean_k, prod_k, max_k, min_k, l1_k, sum_square_k, l2_k,
                                             log_sum_k, log_sum_exp_k, argmax_k, argmin_k, NULL};

static const struct rop {
  const char *op;
  const ft_kentry *k;
  int axes_input_since; /* opset from which the axes are input 1 */
} rops[] = {
    {"ReduceSum", sum_k, 13},          {"ReduceMean", mean_k, 18},
    {"ReduceProd", prod_k, 18},        {"ReduceMax", max_k, 18},
    {"ReduceMin", min_k, 18},          {"ReduceL1", l1_k, 18},
    {"ReduceL2", l2_k, 18},            {"ReduceSumSquare", sum_square_k, 18},
    {"ReduceLogSum", log_sum_k, 18},   {"ReduceLogSumExp", log_sum_exp_k, 18},
    {"ArgMax", argmax_k, 0},           {"ArgMin", argmin_k, 0},
};

static const struct rop *find_rop(const char *op) {
  for (size_t i = 0; i < sizeof rops / sizeof rops[0]; i++)
    if (!strcmp(rops[i].op, op)) return &rops[i];
  return NULL;
}

static const ft_kentry *find_kernel(ft_opctx *c, const struct rop *r) {
  for (const ft_kentry *e = r->k; e->name; e++)
    if (e->dtype == c->in[0]->dtype) return e;
  ft_infer_fail(c, FT_EUNSUPPORTED, "%s is not supported for %s", r->op, ft_dtype_name(c->in[0]->dtype));
  return NULL;
}

/* Which input dims are reduced: red[d] = 1. */
static int reduced_dims(ft_opctx *c, const struct rop *r, int *red) {
  int rank = c->in[0]->rank, n = -1;
  int64_t axes[FT_MAX_RANK * 2];
  if (c->opset >= r->axes_input_since && c->n_in > 1 && c->in[1] && ft_numel(c->in[1]) == 0) {
    n = 0; /* an empty axes tensor needs no contents */
  } else if (c->opset >= r->axes_input_since && c->n_in > 1 && c->in[1]) {
    int rc = ft_need_const(c, 1, "axes");
    if (rc) return rc;
    n = (int)ft_numel(c->in[1]);
    if (n > FT_MAX_RANK * 2) return ft_infer_fail(c, FT_EINVALID, "has %d axes for rank %d", n, rank);
    for (int i = 0; i < n; i++) axes[i] = ft_const_int(c->in[1], i);
  } else if (c->opset < r->axes_input_since) {
    const int64_t *v;
    n = ft_attr_ints(c->node, "axes", &v);
    if (n > FT_MAX_RANK * 2) return ft_infer_fail(c, FT_EINVALID, "has %d axes for rank %d", n, rank);
    for (int i = 0; i < n; i++) axes[i] = v[i];
  }
  for (int d = 0; d < rank; d++) red[d] = 0;
  if (n <= 0) { /* no axes: all of them, unless noop_with_empty_axes */
    int noop = ft_attr_int(c->node, "noop_with_empty_axes", 0) != 0;
    for (int d = 0; d < rank; d++) red[d] = !noop;
    return 0;
  }
  for (int i = 0; i < n; i++) {
    int a;
    int rc = ft_norm_axis(c, axes[i], rank, &a);
    if (rc) return rc;
    red[a] = 1;
  }
  return 0;
}

/* The kernels' layout (templates/c/reduce.h) for reducing the dims of x marked in red: size-1
 * dims dropped, neighbours with the same role merged. Returns the number of p entries; n_out
 * gets the number of outputs. Also used by MeanVarianceNormalization (norm.c). */
int ft_reduce_layout(const ft_tensor *x, const int *red, int64_t *p, int64_t *n_out) {
  int64_t dims[FT_MAX_RANK];
  int role[FT_MAX_RANK], m = 0;
  for (int d = 0; d < x->rank; d++) {
    if (x->dims[d] == 1) continue;
    if (m > 0 && role[m - 1] == red[d]) dims[m - 1] *= x->dims[d];
    else { dims[m] = x->dims[d]; role[m] = red[d]; m++; }
  }
  if (m == 0) { dims[0] = 1; role[0] = 0; m = 1; }
  int64_t n = 1, stride[FT_MAX_RANK];
  for (int d = m - 1; d >= 0; d--) {
    stride[d] = role[d] ? 0 : n;
    if (!role[d]) n *= dims[d];
  }
  p[0] = m;
  for (int d = 0; d < m; d++) { p[1 + d] = dims[d]; p[1 + m + d] = stride[d]; }
  p[1 + 2 * m] = n ? ft_numel(x) / n : 0;
  p[2 + 2 * m] = n;
  *n_out = n;
  return 3 + 2 * m;
}

static int reduce_infer(ft_opctx *c) {
  const struct rop *r = find_rop(c->node->op_type);
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs an input");
  if (!find_kernel(c, r)) return c->err->code;
  int red[FT_MAX_RANK];
  int rc = reduced_dims(c, r, red);
  if (rc) return rc;
  int keep = ft_attr_int(c->node, "keepdims", 1) != 0;
  const ft_tensor *x = c->in[0];
  ft_tensor *y = c->out[0];
  y->rank = 0;
  for (int d = 0; d < x->rank; d++) {
    if (!red[d]) y->dims[y->rank++] = x->dims[d];
    else if (keep) y->dims[y->rank++] = 1;
  }
  y->dtype = x->dtype;
  return 0;
}

static int reduce_plan(ft_opctx *c, ft_kcall *k) {
  const struct rop *r = find_rop(c->node->op_type);
  const ft_kentry *e = find_kernel(c, r);
  if (!e) return c->err->code;
  int red[FT_MAX_RANK];
  int rc = reduced_dims(c, r, red);
  if (rc) return rc;
  k->entry = e;
  int64_t n_out;
  k->np = ft_reduce_layout(c->in[0], red, k->p, &n_out);
  if (!strcmp(r->op, "ReduceLogSumExp")) k->scratch = (size_t)n_out * ft_dtype_size(c->in[0]->dtype);
  return 0;
}

static int arg_infer(ft_opctx *c) {
  const struct rop *r = find_rop(c->node->op_type);
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs an input");
  if (!find_kernel(c, r)) return c->err->code;
  const ft_tensor *x = c->in[0];
  int axis;
  int rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), x->rank, &axis);
  if (rc) return rc;
  if (x->rank == 0 || x->dims[axis] == 0)
    return ft_infer_fail(c, FT_EINVALID, "the axis to search is empty");
  int keep = ft_attr_int(c->node, "keepdims", 1) != 0;
  ft_tensor *y = c->out[0];
  y->rank = 0;
  for (int d = 0; d < x->rank; d++) {
    if (d != axis) y->dims[y->rank++] = x->dims[d];
    else if (keep) y->dims[y->rank++] = 1;
  }
  y->dtype = FT_INT64;
  return 0;
}

static int arg_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = find_kernel(c, find_rop(c->node->op_type));
  if (!e) return c->err->code;
  const ft_tensor *x = c->in[0];
  int axis;
  int rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), x->rank, &axis);
  if (rc) return rc;
  k->entry = e;
  ft_plan_axis(x, axis, k->p);
  k->p[3] = ft_attr_int(c->node, "select_last_index", 0) != 0;
  k->np = 4;
  if (k->p[2] > 1) k->scratch = (size_t)k->p[2] * ft_dtype_size(x->dtype);
  return 0;
}

/* CumSum: the axis is input 1, a constant scalar. */
static const ft_kentry cumsum_k[] = {KF(cumsum, NULL), K(FT_INT32, ft_cumsum_i32, NULL), K(FT_INT64, ft_cumsum_i64, NULL),
                                     K(FT_UINT32, ft_cumsum_u32, NULL), K(FT_UINT64, ft_cumsum_u64, NULL), {0}};

static int cumsum_axis(ft_opctx *c, int *axis) {
  if (c->n_in < 2 || !c->in[0] || !c->in[1]) return ft_infer_fail(c, FT_EINVALID, "needs inputs x and axis");
  int rc = ft_need_const(c, 1, "axis");
  if (rc) return rc;
  if (ft_numel(c->in[1]) != 1) return ft_infer_fail(c, FT_EINVALID, "axis must be one value");
  return ft_norm_axis(c, ft_const_int(c->in[1], 0), c->in[0]->rank, axis);
}

static const ft_kentry *cumsum_kernel(ft_opctx *c) {
  for (const ft_kentry *e = cumsum_k; e->name; e++)
    if (e->dtype == c->in[0]->dtype) return e;
  ft_infer_fail(c, FT_EUNSUPPORTED, "CumSum is not supported for %s", ft_dtype_name(c->in[0]->dtype));
  return NULL;
}

static int cumsum_infer(ft_opctx *c) {
  int axis;
  int rc = cumsum_axis(c, &axis);
  if (rc) return rc;
  if (!cumsum_kernel(c)) return c->err->code;
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dtype = c->in[0]->dtype;
  return 0;
}

static int cumsum_plan(ft_opctx *c, ft_kcall *k) {
  int axis;
  int rc = cumsum_axis(c, &axis);
  if (rc) return rc;
  const ft_kentry *e = cumsum_kernel(c);
  if (!e) return c->err->code;
  const ft_tensor *x = c->in[0];
  k->entry = e;
  ft_plan_axis(x, axis, k->p);
  k->p[3] = ft_attr_int(c->node, "exclusive", 0) != 0;
  k->p[4] = ft_attr_int(c->node, "reverse", 0) != 0;
  k->np = 5;
  k->scratch = (size_t)k->p[2] * ft_dtype_size(x->dtype);
  return 0;
}

#define RED(name) {name, "", reduce_infer, reduce_plan, "reduce", FT_OP_PAT(FT_PAT_REDUCTION)}
const ft_opdesc ft_ops_reduce[] = {
    RED("ReduceSum"), RED("ReduceMean"), RED("ReduceProd"), RED("ReduceMax"), RED("ReduceMin"),
    RED("ReduceL1"), RED("ReduceL2"), RED("ReduceSumSquare"), RED("ReduceLogSum"),
    RED("ReduceLogSumExp"),
    {"ArgMax", "", arg_infer, arg_plan, "reduce", 0},
    {"ArgMin", "", arg_infer, arg_plan, "reduce", 0},
    {"CumSum", "", cumsum_infer, cumsum_plan, "reduce", FT_OP_INPLACE},
    {0}};

/* Normalizations: LayerNormalization, BatchNormalization (inference), InstanceNormalization,
 * LpNormalization, MeanVarianceNormalization, LRN. Kernels: templates/c/norm.h. */
#include <string.h>

#include "cuda_twins.h"
#include "norm.h"
#include "op.h"

int ft_reduce_layout(const ft_tensor *x, const int *red, int64_t *p, int64_t *n_out); /* reduce.c */

/* Kernel entries by dtype; LayerNormalization, BatchNormalization and InstanceNormalization have
 * CUDA twins (templates/cuda/reduce.cuh) */
#define TWIN(op) static const ft_twin op##_tw = {"ftc_" #op "<$0>", NULL, NULL, "reduce", 0, NULL, NULL};
TWIN(layernorm) TWIN(batchnorm) TWIN(instnorm)
#undef TWIN
#define K(dt, fn, tw) {#fn, fn, dt, 0, tw, NULL}
#define KF(op, tw) {K(FT_FLOAT, ft_##op##_f32, tw), K(FT_DOUBLE, ft_##op##_f64, tw), {0}}
static const ft_kentry layernorm_k[] = KF(layernorm, &layernorm_tw);
static const ft_kentry batchnorm_k[] = KF(batchnorm, &batchnorm_tw);
static const ft_kentry instnorm_k[] = KF(instnorm, &instnorm_tw);
static const ft_kentry lpnorm_k[] = KF(lpnorm, NULL);
static const ft_kentry mvn_k[] = KF(mvn, NULL);
static const ft_kentry lrn_k[] = KF(lrn, NULL);
#undef KF
#undef K
const ft_kentry *const ft_kernels_norm[] = {layernorm_k, batchnorm_k, instnorm_k, NULL};

static const ft_kentry *find_kernel(ft_opctx *c, const ft_kentry *e) {
  for (; e->name; e++)
    if (e->dtype == c->in[0]->dtype) return e;
  ft_infer_fail(c, FT_EUNSUPPORTED, "%s is not supported for %s", c->node->op_type, ft_dtype_name(c->in[0]->dtype));
  return NULL;
}

static int check_inputs(ft_opctx *c, int required, int max) {
  if (c->n_in < required || c->n_in > max)
    return ft_infer_fail(c, FT_EINVALID, "has %d inputs, expected %d to %d", c->n_in, required, max);
  for (int i = 0; i < c->n_in; i++) {
    if (!c->in[i]) {
      if (i < required) return ft_infer_fail(c, FT_EINVALID, "input %d is missing", i);
      continue;
    }
    if (c->in[i]->dtype != c->in[0]->dtype)
      return ft_infer_fail(c, FT_EINVALID, "input %d is %s but X is %s", i, ft_dtype_name(c->in[i]->dtype),
                           ft_dtype_name(c->in[0]->dtype));
  }
  return 0;
}

static int same_as_x(ft_opctx *c) {
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dtype = c->in[0]->dtype;
  return 0;
}

/* ---- LayerNormalization (opset 17): normalize over dims [axis, rank) ---- */

static int layernorm_axis(ft_opctx *c, int *axis, int64_t *rows, int64_t *cols) {
  const ft_tensor *x = c->in[0];
  int rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", -1), x->rank, axis);
  if (rc) return rc;
  *rows = *cols = 1;
  for (int d = 0; d < x->rank; d++) *(d < *axis ? rows : cols) *= x->dims[d];
  return 0;
}

static int layernorm_infer(ft_opctx *c) {
  int rc = check_inputs(c, 2, 3);
  if (rc) return rc;
  if (!find_kernel(c, layernorm_k)) return c->err->code;
  int axis;
  int64_t rows, cols;
  if ((rc = layernorm_axis(c, &axis, &rows, &cols))) return rc;
  for (int i = 1; i < c->n_in; i++) {
    if (!c->in[i]) continue;
    int64_t n = ft_numel(c->in[i]);
    if (n != cols && n != 1)
      return ft_infer_fail(c, FT_EUNSUPPORTED, "%s has %lld elements; ftax supports the normalized shape (%lld elements) or one value",
                           i == 1 ? "Scale" : "B", (long long)n, (long long)cols);
  }
  /* Mean and InvStdDev: X's shape with the normalized dims set to 1, in the stash type */
  int stash = (int)ft_attr_int(c->node, "stash_type", FT_FLOAT);
  for (int o = 1; o < c->n_out && o < 3; o++) {
    if (!c->out[o]) continue;
    if (stash != c->in[0]->dtype)
      return ft_infer_fail(c, FT_EUNSUPPORTED, "output %d in %s for %s input is not supported; ftax computes in the input's type",
                           o, ft_dtype_name(stash), ft_dtype_name(c->in[0]->dtype));
    ft_copy_shape(c->out[o], c->in[0]);
    for (int d = axis; d < c->in[0]->rank; d++) c->out[o]->dims[d] = 1;
    c->out[o]->dtype = stash;
  }
  return same_as_x(c);
}

static int layernorm_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = find_kernel(c, layernorm_k);
  if (!e) return c->err->code;
  int axis;
  int64_t rows, cols;
  int rc = layernorm_axis(c, &axis, &rows, &cols);
  if (rc) return rc;
  k->entry = e;
  k->p[0] = rows;
  k->p[1] = cols;
  k->p[2] = ft_numel(c->in[1]);
  k->p[3] = c->n_in > 2 && c->in[2] ? ft_numel(c->in[2]) : 0;
  k->p[4] = c->n_out > 1 && c->out[1];
  k->p[5] = c->n_out > 2 && c->out[2];
  k->np = 6;
  k->f[0] = ft_attr_float(c->node, "epsilon", 1e-5f);
  k->nf = 1;
  return 0;
}

/* ---- BatchNormalization (inference) and InstanceNormalization: X is [N, C, spatial...] ---- */

static void ncs(const ft_tensor *x, int64_t *n, int64_t *ch, int64_t *s) {
  *n = x->dims[0];
  *ch = x->rank > 1 ? x->dims[1] : 1;
  *s = 1;
  for (int d = 2; d < x->rank; d++) *s *= x->dims[d];
}

static int per_channel(ft_opctx *c, int first, int last) {
  const ft_tensor *x = c->in[0];
  if (x->rank < 2) return ft_infer_fail(c, FT_EINVALID, "X has rank %d; it must be [N, C, ...]", x->rank);
  for (int i = first; i <= last; i++)
    if (ft_numel(c->in[i]) != x->dims[1])
      return ft_infer_fail(c, FT_EINVALID, "input %d has %lld elements, expected C = %lld", i,
                           (long long)ft_numel(c->in[i]), (long long)x->dims[1]);
  return 0;
}

static int batchnorm_infer(ft_opctx *c) {
  int rc = check_inputs(c, 5, 5);
  if (rc) return rc;
  if (ft_attr_int(c->node, "training_mode", 0))
    return ft_infer_fail(c, FT_EUNSUPPORTED,
                         "training_mode=1 is not supported: ftax compiles inference; export the model in eval mode");
  /* before opset 7, is_test=0 meant training, but exporters leave it at 0 for inference too:
   * only asking for the running statistics outputs gives training away */
  for (int o = 1; o < c->n_out; o++)
    if (c->out[o])
      return ft_infer_fail(c, FT_EUNSUPPORTED,
                           "output %d (training statistics) is not supported: ftax compiles inference", o);
  if (c->opset < 9 && ft_attr_int(c->node, "spatial", 1) == 0)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "spatial=0 is not supported");
  if (!find_kernel(c, batchnorm_k)) return c->err->code;
  if ((rc = per_channel(c, 1, 4))) return rc;
  return same_as_x(c);
}

static int instnorm_infer(ft_opctx *c) {
  int rc = check_inputs(c, 3, 3);
  if (rc) return rc;
  if (!find_kernel(c, instnorm_k)) return c->err->code;
  if ((rc = per_channel(c, 1, 2))) return rc;
  return same_as_x(c);
}

static int channel_plan(ft_opctx *c, ft_kcall *k, const ft_kentry *table) {
  const ft_kentry *e = find_kernel(c, table);
  if (!e) return c->err->code;
  k->entry = e;
  ncs(c->in[0], &k->p[0], &k->p[1], &k->p[2]);
  k->np = 3;
  k->f[0] = ft_attr_float(c->node, "epsilon", 1e-5f);
  k->nf = 1;
  if (table == batchnorm_k) k->scratch = (size_t)k->p[1] * 2 * ft_dtype_size(c->in[0]->dtype);
  return 0;
}

static int batchnorm_plan(ft_opctx *c, ft_kcall *k) { return channel_plan(c, k, batchnorm_k); }
static int instnorm_plan(ft_opctx *c, ft_kcall *k) { return channel_plan(c, k, instnorm_k); }

/* ---- LpNormalization: along one axis (default -1), p = 1 or 2 ---- */

static int lpnorm_infer(ft_opctx *c) {
  int rc = check_inputs(c, 1, 1);
  if (rc) return rc;
  if (!find_kernel(c, lpnorm_k)) return c->err->code;
  int64_t order = ft_attr_int(c->node, "p", 2);
  if (order != 1 && order != 2)
    return ft_infer_fail(c, FT_EINVALID, "p=%lld; it must be 1 or 2", (long long)order);
  int axis;
  if ((rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", -1), c->in[0]->rank, &axis))) return rc;
  return same_as_x(c);
}

static int lpnorm_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = find_kernel(c, lpnorm_k);
  if (!e) return c->err->code;
  const ft_tensor *x = c->in[0];
  int axis;
  int rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", -1), x->rank, &axis);
  if (rc) return rc;
  k->entry = e;
  ft_plan_axis(x, axis, k->p);
  k->p[3] = ft_attr_int(c->node, "p", 2);
  k->np = 4;
  if (k->p[2] > 1) k->scratch = (size_t)k->p[2] * ft_dtype_size(x->dtype);
  return 0;
}

/* ---- MeanVarianceNormalization: over `axes` (default [0, 2, 3]) ---- */

static int mvn_axes(ft_opctx *c, int *red) {
  const int64_t *v, dflt[3] = {0, 2, 3};
  int n = ft_attr_ints(c->node, "axes", &v);
  if (n < 0) { v = dflt; n = 3; }
  for (int d = 0; d < c->in[0]->rank; d++) red[d] = 0;
  for (int i = 0; i < n; i++) {
    int a;
    int rc = ft_norm_axis(c, v[i], c->in[0]->rank, &a);
    if (rc) return rc;
    red[a] = 1;
  }
  return 0;
}

static int mvn_infer(ft_opctx *c) {
  int rc = check_inputs(c, 1, 1);
  if (rc) return rc;
  if (!find_kernel(c, mvn_k)) return c->err->code;
  int red[FT_MAX_RANK];
  if ((rc = mvn_axes(c, red))) return rc;
  return same_as_x(c);
}

static int mvn_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = find_kernel(c, mvn_k);
  if (!e) return c->err->code;
  int red[FT_MAX_RANK];
  int rc = mvn_axes(c, red);
  if (rc) return rc;
  k->entry = e;
  int64_t n_out;
  k->np = ft_reduce_layout(c->in[0], red, k->p, &n_out);
  k->scratch = (size_t)n_out * 2 * ft_dtype_size(c->in[0]->dtype);
  return 0;
}

/* ---- LRN: across channels of [N, C, spatial...] ---- */

static int lrn_infer(ft_opctx *c) {
  int rc = check_inputs(c, 1, 1);
  if (rc) return rc;
  if (!find_kernel(c, lrn_k)) return c->err->code;
  if (c->in[0]->rank < 2)
    return ft_infer_fail(c, FT_EINVALID, "X has rank %d; it must be [N, C, ...]", c->in[0]->rank);
  if (ft_attr_int(c->node, "size", 0) < 1)
    return ft_infer_fail(c, FT_EINVALID, "needs a positive size attribute");
  return same_as_x(c);
}

static int lrn_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = find_kernel(c, lrn_k);
  if (!e) return c->err->code;
  k->entry = e;
  ncs(c->in[0], &k->p[0], &k->p[1], &k->p[2]);
  k->p[3] = ft_attr_int(c->node, "size", 1);
  k->np = 4;
  k->f[0] = ft_attr_float(c->node, "alpha", 1e-4f);
  k->f[1] = ft_attr_float(c->node, "beta", 0.75f);
  k->f[2] = ft_attr_float(c->node, "bias", 1.0f);
  k->nf = 3;
  k->scratch = (size_t)k->p[2] * ft_dtype_size(c->in[0]->dtype);
  return 0;
}

const ft_opdesc ft_ops_norm[] = {
    {"LayerNormalization", "", layernorm_infer, layernorm_plan, "norm", FT_OP_INPLACE},
    {"BatchNormalization", "", batchnorm_infer, batchnorm_plan, "norm", FT_OP_INPLACE},
    {"InstanceNormalization", "", instnorm_infer, instnorm_plan, "norm", FT_OP_INPLACE},
    {"LpNormalization", "", lpnorm_infer, lpnorm_plan, "norm", FT_OP_INPLACE},
    {"MeanVarianceNormalization", "", mvn_infer, mvn_plan, "norm", 0},
    {"LRN", "", lrn_infer, lrn_plan, "norm", 0},
    {0}};

/* Pooling: MaxPool (optional Indices), AveragePool, LpPool and their Global forms.
 * Kernels: templates/c/pool.h. */
#include <string.h>

#include "op.h"
#include "pool.h"
#include "window.h"

typedef struct kentry { int dtype; const char *name; ft_kernel_fn fn; } kentry;
static const kentry maxpool_k[] = {
    {FT_FLOAT, "ft_maxpool_f32", ft_maxpool_f32}, {FT_DOUBLE, "ft_maxpool_f64", ft_maxpool_f64},
    {FT_INT8, "ft_maxpool_i8", ft_maxpool_i8},    {FT_UINT8, "ft_maxpool_u8", ft_maxpool_u8},
    {FT_INT32, "ft_maxpool_i32", ft_maxpool_i32}, {FT_INT64, "ft_maxpool_i64", ft_maxpool_i64},
    {0, 0, 0}};

static int is_max(const ft_opctx *c) { return !strcmp(c->node->op_type, "MaxPool"); }
static int is_lp(const ft_opctx *c) { return !strcmp(c->node->op_type, "LpPool"); }

static int check_dtype(ft_opctx *c, int dt) {
  if (is_max(c)) {
    for (const kentry *e = maxpool_k; e->name; e++)
      if (e->dtype == dt) return 0;
    return ft_infer_fail(c, FT_EUNSUPPORTED, "MaxPool is not supported for %s", ft_dtype_name(dt));
  }
  if (dt != FT_FLOAT)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is supported for float32 only (got %s)", c->node->op_type, ft_dtype_name(dt));
  return 0;
}

static int pool_window(ft_opctx *c, ft_window *w) {
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs input X");
  const ft_tensor *x = c->in[0];
  int rc = check_dtype(c, x->dtype);
  if (rc) return rc;
  const int64_t *k;
  int nk = ft_attr_ints(c->node, "kernel_shape", &k);
  if (nk < 0) return ft_infer_fail(c, FT_EINVALID, "attribute kernel_shape is required");
  int ceil_mode = ft_attr_int(c->node, "ceil_mode", 0) != 0;
  return ft_window_infer(c, x, k, nk, ceil_mode, w);
}

static int pool_infer(ft_opctx *c) {
  ft_window w;
  int rc = pool_window(c, &w);
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  ft_tensor *y = c->out[0];
  y->dtype = x->dtype;
  y->rank = x->rank;
  y->dims[0] = x->dims[0];
  y->dims[1] = x->dims[1];
  for (int i = 0; i < w.n; i++) y->dims[2 + i] = w.out[i];
  if (c->n_out > 1 && c->out[1]) {
    if (!is_max(c)) return ft_infer_fail(c, FT_EINVALID, "%s has one output", c->node->op_type);
    ft_copy_shape(c->out[1], y);
    c->out[1]->dtype = FT_INT64;
  }
  return 0;
}

static int pool_plan(ft_opctx *c, ft_kcall *k) {
  ft_window w;
  int rc = pool_window(c, &w);
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  int64_t *p = k->p;
  memset(p, 0, sizeof(int64_t) * FT_PL_NP);
  p[FT_PL_PLANES] = x->dims[0] * x->dims[1];
  p[FT_PL_INCL_PAD] = ft_attr_int(c->node, "count_include_pad", 0) != 0;
  p[FT_PL_ORDER] = ft_attr_int(c->node, "storage_order", 0) != 0;
  p[FT_PL_HAS_IDX] = c->n_out > 1 && c->out[1];
  int off = FT_WIN_MAXD - w.n;
  for (int i = 0; i < FT_WIN_MAXD; i++) p[FT_PL_PE + i] = i < off ? 0 : w.pe[i - off];
  ft_window_params(&w, p + FT_PL_IN);
  k->np = FT_PL_NP;
  k->f[0] = 0;
  k->nf = 1;
  if (is_max(c)) {
    for (const kentry *e = maxpool_k; e->name; e++)
      if (e->dtype == x->dtype) { k->kernel = e->name; k->fn = e->fn; }
  } else if (is_lp(c)) {
    FT_K(k, ft_lppool_f32);
    k->f[0] = (double)ft_attr_int(c->node, "p", 2);
  } else {
    FT_K(k, ft_avgpool_f32);
  }
  return 0;
}

/* ---- Global pools ---- */

static int gpool_infer(ft_opctx *c) {
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs input X");
  const ft_tensor *x = c->in[0];
  if (x->dtype != FT_FLOAT)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is supported for float32 only (got %s)", c->node->op_type, ft_dtype_name(x->dtype));
  if (x->rank < 3) return ft_infer_fail(c, FT_EINVALID, "input must be N x C x spatial..., got rank %d", x->rank);
  ft_tensor *y = c->out[0];
  y->dtype = FT_FLOAT;
  y->rank = x->rank;
  y->dims[0] = x->dims[0];
  y->dims[1] = x->dims[1];
  for (int i = 2; i < x->rank; i++) y->dims[i] = 1;
  return 0;
}

static int gpool_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0];
  k->p[0] = x->dims[0] * x->dims[1];
  k->p[1] = 1;
  for (int i = 2; i < x->rank; i++) k->p[1] *= x->dims[i];
  k->np = 2;
  k->f[0] = 2;
  k->nf = 1;
  const char *op = c->node->op_type;
  if (!strcmp(op, "GlobalAveragePool")) FT_K(k, ft_global_avgpool_f32);
  else if (!strcmp(op, "GlobalMaxPool")) FT_K(k, ft_global_maxpool_f32);
  else {
    FT_K(k, ft_global_lppool_f32);
    k->f[0] = (double)ft_attr_int(c->node, "p", 2);
  }
  return 0;
}

const ft_opdesc ft_ops_pool[] = {
    {"MaxPool", "", pool_infer, pool_plan, "pool", FT_OP_PAT(FT_PAT_REDUCTION)},
    {"AveragePool", "", pool_infer, pool_plan, "pool", FT_OP_PAT(FT_PAT_REDUCTION)},
    {"LpPool", "", pool_infer, pool_plan, "pool", FT_OP_PAT(FT_PAT_REDUCTION)},
    {"GlobalAveragePool", "", gpool_infer, gpool_plan, "pool", FT_OP_PAT(FT_PAT_REDUCTION)},
    {"GlobalMaxPool", "", gpool_infer, gpool_plan, "pool", FT_OP_PAT(FT_PAT_REDUCTION)},
    {"GlobalLpPool", "", gpool_infer, gpool_plan, "pool", FT_OP_PAT(FT_PAT_REDUCTION)},
    {0}};

/* Pooling: MaxPool (optional Indices), AveragePool, LpPool and their Global forms.
 * Kernels: templates/c/pool.h. */
#include <string.h>

#include "cuda_twins.h"
#include "op.h"
#include "pool.h"
#include "window.h"

/* Kernel entries, each with its CUDA twin (templates/cuda/pool.cuh; the global pools':
 * templates/cuda/reduce.cuh) */
#define TWIN(tw, launcher, file) static const ft_twin tw = {launcher, NULL, NULL, file, 0, NULL, NULL};
TWIN(maxpool_tw, "ftc_maxpool<$0>", "pool") TWIN(avgpool_tw, "ftc_avgpool<$0, 0>", "pool")
TWIN(lppool_tw, "ftc_avgpool<$0, 1>", "pool") TWIN(global_avgpool_tw, "ftc_gpool<$0, FTC_GAVG>", "reduce")
TWIN(global_maxpool_tw, "ftc_gpool<$0, FTC_GMAX>", "reduce") TWIN(global_lppool_tw, "ftc_gpool<$0, FTC_GLP>", "reduce")
#undef TWIN
#define K(dt, op, s) {"ft_" #op "_" #s, ft_##op##_##s, dt, 0, &op##_tw, NULL}
static const ft_kentry maxpool_k[] = {
    K(FT_FLOAT, maxpool, f32), K(FT_DOUBLE, maxpool, f64), K(FT_INT8, maxpool, i8), K(FT_UINT8, maxpool, u8),
    K(FT_INT32, maxpool, i32), K(FT_INT64, maxpool, i64), {0}};
/* float32 only */
static const ft_kentry avgpool_k[] = {K(FT_FLOAT, avgpool, f32), K(FT_FLOAT, lppool, f32), {0}};
static const ft_kentry global_k[] = {K(FT_FLOAT, global_avgpool, f32), K(FT_FLOAT, global_maxpool, f32),
                                     K(FT_FLOAT, global_lppool, f32), {0}};
#undef K
const ft_kentry *const ft_kernels_pool[] = {maxpool_k, avgpool_k, global_k, NULL};

static int is_max(const ft_opctx *c) { return !strcmp(c->node->op_type, "MaxPool"); }
static int is_lp(const ft_opctx *c) { return !strcmp(c->node->op_type, "LpPool"); }

static int check_dtype(ft_opctx *c, int dt) {
  if (is_max(c)) {
    for (const ft_kentry *e = maxpool_k; e->name; e++)
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
    for (const ft_kentry *e = maxpool_k; e->name; e++)
      if (e->dtype == x->dtype) k->entry = e;
  } else if (is_lp(c)) {
    k->entry = &avgpool_k[1];
    k->f[0] = (double)ft_attr_int(c->node, "p", 2);
  } else {
    k->entry = &avgpool_k[0];
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
  if (!strcmp(op, "GlobalAveragePool")) k->entry = &global_k[0];
  else if (!strcmp(op, "GlobalMaxPool")) k->entry = &global_k[1];
  else {
    k->entry = &global_k[2];
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

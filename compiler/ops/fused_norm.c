/* Fused layer normalizations over the last axis, written by the fusion passes (compiler/fuse/fuse_*.c):
 *
 *   ftax.LayerNorm(X, Gamma, Beta?)                        epsilon
 *   ftax.SkipLayerNorm(X, Skip, Gamma, Beta?, Bias?) -> Y, Sum?         epsilon
 *   ftax.EmbedLayerNorm(Gamma, Beta?, Dense?, Ids0, Table0, Ids1?, Table1?, ...) -> Y, Sum?  epsilon
 *
 * Gamma, Beta and Bias hold one value per element of the last axis (any shape of that many
 * elements). SkipLayerNorm normalizes X + Bias + Skip; EmbedLayerNorm the sum of Table_k[Ids_k]
 * (Gather on axis 0) and Dense, which broadcasts over the leading dims. Sum, when the node has
 * that output, is the sum before normalization (the residual stream others read). float32 only.
 * Kernels: templates/c/fused_norm.h. */
#include <stdio.h>
#include <string.h>

#include "cuda_twins.h"
#include "fused_norm.h"
#include "op.h"

/* The CUDA twins (templates/cuda/fused_norm.cuh); EmbedLayerNormalization's takes up to 4
 * embedding tables (p[2]). */
static int embed_twin_check(const int64_t *p, char *why, size_t wn) {
  if (p[2] <= 4) return 0;
  snprintf(why, wn, "more than 4 embedding tables");
  return -1;
}
#define TWIN(op, check) static const ft_twin op##_tw = {"ftc_" #op "<$0>", NULL, NULL, "fused_norm", 0, check, NULL};
TWIN(fused_layernorm, NULL) TWIN(skip_layernorm, NULL) TWIN(embed_layernorm, embed_twin_check)
#undef TWIN
#define K(op) {"ft_" #op "_f32", ft_##op##_f32, FT_FLOAT, 0, &op##_tw, NULL}
static const ft_kentry norm_k[] = {K(fused_layernorm), K(skip_layernorm), K(embed_layernorm), {0}};
#undef K
const ft_kentry *const ft_kernels_fused_norm[] = {norm_k, NULL};

/* Input i is float32 with n elements (one per element of the normalized axis). */
static int check_vec(ft_opctx *c, int i, int64_t n, const char *what) {
  const ft_tensor *t = c->in[i];
  if (t->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EINVALID, "%s is %s; float32 expected", what, ft_dtype_name(t->dtype));
  if (ft_numel(t) != n)
    return ft_infer_fail(c, FT_EINVALID, "%s has %lld elements; the normalized axis has %lld", what, (long long)ft_numel(t), (long long)n);
  return 0;
}

static int same_shape(const ft_tensor *a, const ft_tensor *b) {
  if (a->rank != b->rank) return 0;
  for (int d = 0; d < a->rank; d++) if (a->dims[d] != b->dims[d]) return 0;
  return 1;
}

/* Output k (Y, Sum) takes shape; dtype float32. */
static void set_out(ft_opctx *c, int k, const ft_tensor *shape) {
  if (k >= c->n_out || !c->out[k]) return;
  ft_copy_shape(c->out[k], shape);
  c->out[k]->dtype = FT_FLOAT;
}

static int check_x(ft_opctx *c, const ft_tensor *x, const char *what) {
  if (x->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is %s; the fused layer norms are float32 only", what, ft_dtype_name(x->dtype));
  if (x->rank < 1 || x->dims[x->rank - 1] < 1) return ft_infer_fail(c, FT_EINVALID, "%s needs a non-empty last axis", what);
  return 0;
}

static void rows_cols(const ft_tensor *x, int64_t *rows, int64_t *cols) {
  *cols = x->dims[x->rank - 1];
  *rows = ft_numel(x) / *cols;
}

/* ---- ftax.LayerNorm ---- */

static int ln_infer(ft_opctx *c) {
  if (c->n_in < 2 || c->n_in > 3 || !c->in[0] || !c->in[1]) return ft_infer_fail(c, FT_EINVALID, "needs inputs X, Gamma and optionally Beta");
  int rc = check_x(c, c->in[0], "X");
  int64_t rows, cols;
  if (rc) return rc;
  rows_cols(c->in[0], &rows, &cols);
  if ((rc = check_vec(c, 1, cols, "Gamma"))) return rc;
  if (c->n_in > 2 && c->in[2] && (rc = check_vec(c, 2, cols, "Beta"))) return rc;
  set_out(c, 0, c->in[0]);
  return 0;
}

static int ln_plan(ft_opctx *c, ft_kcall *k) {
  k->entry = &norm_k[0];
  rows_cols(c->in[0], &k->p[0], &k->p[1]);
  k->p[2] = c->n_in > 2 && c->in[2];
  k->np = 3;
  k->f[0] = ft_attr_float(c->node, "epsilon", 1e-5f);
  k->nf = 1;
  return 0;
}

/* ---- ftax.SkipLayerNorm ---- */

static int skip_infer(ft_opctx *c) {
  if (c->n_in < 3 || c->n_in > 5 || !c->in[0] || !c->in[1] || !c->in[2])
    return ft_infer_fail(c, FT_EINVALID, "needs inputs X, Skip, Gamma and optionally Beta, Bias");
  int rc = check_x(c, c->in[0], "X");
  int64_t rows, cols;
  if (rc) return rc;
  rows_cols(c->in[0], &rows, &cols);
  if (c->in[1]->dtype != FT_FLOAT || !same_shape(c->in[0], c->in[1]))
    return ft_infer_fail(c, FT_EINVALID, "Skip must be float32 of X's shape");
  if ((rc = check_vec(c, 2, cols, "Gamma"))) return rc;
  if (c->n_in > 3 && c->in[3] && (rc = check_vec(c, 3, cols, "Beta"))) return rc;
  if (c->n_in > 4 && c->in[4] && (rc = check_vec(c, 4, cols, "Bias"))) return rc;
  if (c->n_out > 2) return ft_infer_fail(c, FT_EINVALID, "has %d outputs; Y and Sum at most", c->n_out);
  set_out(c, 0, c->in[0]);
  set_out(c, 1, c->in[0]);
  return 0;
}

static int skip_plan(ft_opctx *c, ft_kcall *k) {
  k->entry = &norm_k[1];
  rows_cols(c->in[0], &k->p[0], &k->p[1]);
  k->p[2] = c->n_in > 3 && c->in[3];
  k->p[3] = c->n_in > 4 && c->in[4];
  k->p[4] = c->n_out > 1 && c->out[1];
  k->np = 5;
  k->f[0] = ft_attr_float(c->node, "epsilon", 1e-5f);
  k->nf = 1;
  return 0;
}

/* ---- ftax.EmbedLayerNorm ---- */

/* Rows of Dense when it broadcasts to y over leading dims only (its dims, aligned right, are 1
 * up to some axis and y's from there on); 0 when it does not. */
static int64_t dense_rows(const ft_tensor *d, const ft_tensor *y) {
  if (d->rank > y->rank) return 0;
  int off = y->rank - d->rank, seen_full = 0;
  for (int i = 0; i < d->rank; i++) {
    int64_t dd = d->dims[i], yd = y->dims[off + i];
    if (dd == yd && (dd != 1 || seen_full)) seen_full = 1;
    else if (dd == 1 && !seen_full) continue;
    else return 0;
  }
  if (d->rank == 0 || d->dims[d->rank - 1] != y->dims[y->rank - 1]) return 0;
  return ft_numel(d) / y->dims[y->rank - 1];
}

static int embed_infer(ft_opctx *c) {
  int ng = (c->n_in - 3) / 2;
  if (c->n_in < 5 || (c->n_in - 3) % 2 || ng > FT_ELN_MAX_GATHER || !c->in[0])
    return ft_infer_fail(c, FT_EINVALID, "needs inputs Gamma, Beta?, Dense?, then 1 to %d pairs Ids, Table", FT_ELN_MAX_GATHER);
  const ft_tensor *ids0 = c->in[3];
  ft_tensor y = {0};
  for (int k = 0; k < ng; k++) {
    const ft_tensor *ids = c->in[3 + 2 * k], *tab = c->in[4 + 2 * k];
    if (!ids || !tab) return ft_infer_fail(c, FT_EINVALID, "gather %d lacks its ids or table", k);
    if (ids->dtype != FT_INT64 && ids->dtype != FT_INT32)
      return ft_infer_fail(c, FT_EINVALID, "ids %d are %s; int64 or int32 expected", k, ft_dtype_name(ids->dtype));
    if (tab->dtype != FT_FLOAT || tab->rank != 2) return ft_infer_fail(c, FT_EINVALID, "table %d must be a float32 matrix", k);
    if (!same_shape(ids, ids0)) return ft_infer_fail(c, FT_EINVALID, "ids %d and ids 0 differ in shape", k);
    if (ids0->rank + 1 > FT_MAX_RANK) return ft_infer_fail(c, FT_EUNSUPPORTED, "ids have too many dims");
    if (k == 0) {
      ft_copy_shape(&y, ids0);
      y.dims[y.rank++] = tab->dims[1];
      y.dtype = FT_FLOAT;
    } else if (tab->dims[1] != y.dims[y.rank - 1])
      return ft_infer_fail(c, FT_EINVALID, "table %d rows have %lld elements, table 0 rows %lld", k, (long long)tab->dims[1], (long long)y.dims[y.rank - 1]);
  }
  int64_t cols = y.dims[y.rank - 1];
  if (cols < 1) return ft_infer_fail(c, FT_EINVALID, "tables have empty rows");
  int rc = check_vec(c, 0, cols, "Gamma");
  if (rc) return rc;
  if (c->in[1] && (rc = check_vec(c, 1, cols, "Beta"))) return rc;
  if (c->in[2] && (c->in[2]->dtype != FT_FLOAT || !dense_rows(c->in[2], &y)))
    return ft_infer_fail(c, FT_EINVALID, "Dense must be float32 and broadcast to the output over leading dims");
  if (c->n_out > 2) return ft_infer_fail(c, FT_EINVALID, "has %d outputs; Y and Sum at most", c->n_out);
  set_out(c, 0, &y);
  set_out(c, 1, &y);
  return 0;
}

static int embed_plan(ft_opctx *c, ft_kcall *k) {
  k->entry = &norm_k[2];
  const ft_tensor *y = c->out[0];
  int ng = (c->n_in - 3) / 2;
  rows_cols(y, &k->p[0], &k->p[1]);
  k->p[2] = ng;
  k->p[3] = c->in[2] ? dense_rows(c->in[2], y) : 0;
  k->p[4] = c->in[1] != NULL;
  k->p[5] = c->n_out > 1 && c->out[1];
  for (int i = 0; i < ng; i++) {
    k->p[6 + 2 * i] = c->in[4 + 2 * i]->dims[0];
    k->p[7 + 2 * i] = c->in[3 + 2 * i]->dtype == FT_INT64;
  }
  k->np = 6 + 2 * ng;
  k->f[0] = ft_attr_float(c->node, "epsilon", 1e-5f);
  k->nf = 1;
  return 0;
}

const ft_opdesc ft_ops_fused_norm[] = {
    {"LayerNorm", "ftax", ln_infer, ln_plan, "fused_norm", FT_OP_INPLACE},
    {"SkipLayerNorm", "ftax", skip_infer, skip_plan, "fused_norm", FT_OP_INPLACE},
    {"EmbedLayerNorm", "ftax", embed_infer, embed_plan, "fused_norm", 0},
    {0}};

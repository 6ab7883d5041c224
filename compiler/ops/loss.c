/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. Kernels: templates/c/loss.h. */
#include <string.h>

#include "loss.h"
#include "op.h"

/* by score type (dtype) and target type (dtype2); no CUDA twins */
#define K(dt, tdt, fn) {#fn, fn, dt, tdt, NULL, NULL}
static const ft_kentry nll_k[] = {
    K(FT_FLOAT, FT_INT64, ft_nll_f32_i64), K(FT_FLOAT, FT_INT32, ft_nll_f32_i32),
    K(FT_DOUBLE, FT_INT64, ft_nll_f64_i64), K(FT_DOUBLE, FT_INT32, ft_nll_f64_i32), {0}};
static const ft_kentry sce_k[] = {
    K(FT_FLOAT, FT_INT64, ft_sce_f32_i64), K(FT_FLOAT, FT_INT32, ft_sce_f32_i32),
    K(FT_DOUBLE, FT_INT64, ft_sce_f64_i64), K(FT_DOUBLE, FT_INT32, ft_sce_f64_i32), {0}};

static int is_sce(const ft_opctx *c) { return !strcmp(c->node->op_type, "SoftmaxCrossEntropyLoss"); }

static const ft_kentry *find_kernel(ft_opctx *c) {
  for (const ft_kentry *e = is_sce(c) ? sce_k : nll_k; e->name; e++)
    if (e->dtype == c->in[0]->dtype && e->dtype2 == c->in[1]->dtype) return e;
  ft_infer_fail(c, FT_EUNSUPPORTED, "%s is not supported for %s input with %s target", c->node->op_type,
                ft_dtype_name(c->in[0]->dtype), ft_dtype_name(c->in[1]->dtype));
  return NULL;
}

static int reduction(ft_opctx *c, int *r) {
  const char *s = ft_attr_str(c->node, "reduction", "mean");
  if (!strcmp(s, "none")) *r = 0;
  else if (!strcmp(s, "sum")) *r = 1;
  else if (!strcmp(s, "mean")) *r = 2;
  else return ft_infer_fail(c, FT_EINVALID, "reduction='%s' is not one of 'none', 'sum', 'mean'", s);
  return 0;
}

static int loss_infer(ft_opctx *c) {
  if (c->n_in < 2 || !c->in[0] || !c->in[1])
    return ft_infer_fail(c, FT_EINVALID, "needs an input and a target");
  const ft_tensor *x = c->in[0], *t = c->in[1];
  if (!find_kernel(c)) return c->err->code;
  if (x->rank < 2 || t->rank != x->rank - 1 || t->dims[0] != x->dims[0])
    return ft_infer_fail(c, FT_EINVALID, "the target must be [N, d1, ...] for an input [N, C, d1, ...]");
  for (int d = 2; d < x->rank; d++)
    if (t->dims[d - 1] != x->dims[d])
      return ft_infer_fail(c, FT_EINVALID, "target dim %d is %lld, input dim %d is %lld", d - 1,
                           (long long)t->dims[d - 1], d, (long long)x->dims[d]);
  if (c->n_in > 2 && c->in[2] && (c->in[2]->dtype != x->dtype || ft_numel(c->in[2]) != x->dims[1]))
    return ft_infer_fail(c, FT_EINVALID, "the weight must be %lld values of %s", (long long)x->dims[1],
                         ft_dtype_name(x->dtype));
  int r = 0;
  int rc = reduction(c, &r);
  if (rc) return rc;
  ft_tensor *y = c->out[0];
  y->dtype = x->dtype;
  if (r == 0) ft_copy_shape(y, t);
  else y->rank = 0;
  if (c->n_out > 1 && c->out[1]) {
    if (!is_sce(c)) return ft_infer_fail(c, FT_EINVALID, "has one output");
    ft_copy_shape(c->out[1], x);
    c->out[1]->dtype = x->dtype;
  }
  return 0;
}

static int loss_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = find_kernel(c);
  if (!e) return c->err->code;
  const ft_tensor *x = c->in[0];
  int r = 0;
  int rc = reduction(c, &r);
  if (rc) return rc;
  int64_t N = x->dims[0], C = x->dims[1], D = 1;
  for (int d = 2; d < x->rank; d++) D *= x->dims[d];
  k->entry = e;
  k->p[0] = N;
  k->p[1] = C;
  k->p[2] = D;
  k->p[3] = r;
  k->p[4] = c->n_in > 2 && c->in[2];
  k->p[5] = ft_attr_find(c->node, "ignore_index") != NULL;
  k->p[6] = ft_attr_int(c->node, "ignore_index", 0);
  k->p[7] = c->n_out > 1 && c->out[1];
  k->np = 8;
  if (is_sce(c)) {
    int64_t rest = 2 * D > C ? 2 * D : C;
    k->scratch = (size_t)((k->p[7] ? 0 : N * C * D) + rest) * ft_dtype_size(x->dtype);
  }
  return 0;
}

const ft_opdesc ft_ops_loss[] = {
    {"NegativeLogLikelihoodLoss", "", loss_infer, loss_plan, "loss", 0},
    {"SoftmaxCrossEntropyLoss", "", loss_infer, loss_plan, "loss", 0},
    {0}};

/* Optimizer steps (domain ai.onnx.preview.training): Adagrad, Momentum, Adam. Not inference, but
 * plain elementwise math that an exported training step may contain. Kernels:
 * templates/c/optim.h. */
#include <string.h>

#include "op.h"
#include "optim.h"

/* tensors per group: X and G plus the states */
static int groups_of(const char *op) { return !strcmp(op, "Adam") ? 4 : 3; }

static int optim_check(ft_opctx *c, int *n) {
  int per = groups_of(c->node->op_type);
  if (c->n_in < 2 + per || (c->n_in - 2) % per)
    return ft_infer_fail(c, FT_EINVALID, "needs R, T and %d groups of n tensors (got %d inputs)", per, c->n_in);
  *n = (c->n_in - 2) / per;
  if (c->n_out != (per - 1) * *n) return ft_infer_fail(c, FT_EINVALID, "needs %d outputs", (per - 1) * *n);
  if (1 + *n > FT_MAX_P) return ft_infer_fail(c, FT_EUNSUPPORTED, "too many tensors");
  for (int i = 0; i < c->n_in; i++)
    if (!c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d is missing", i);
  if (c->in[0]->dtype != FT_FLOAT || ft_numel(c->in[0]) != 1 || c->in[1]->dtype != FT_INT64 || ft_numel(c->in[1]) != 1)
    return ft_infer_fail(c, FT_EINVALID, "R must be a float32 scalar and T an int64 scalar");
  for (int g = 0; g < per; g++)
    for (int i = 0; i < *n; i++) {
      const ft_tensor *t = c->in[2 + g * *n + i], *x = c->in[2 + i];
      if (t->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is supported for float32 tensors", c->node->op_type);
      if (ft_numel(t) != ft_numel(x)) return ft_infer_fail(c, FT_EINVALID, "input %d does not match X_%d's size", 2 + g * *n + i, i);
    }
  return 0;
}

static int optim_infer(ft_opctx *c) {
  int n, rc = optim_check(c, &n);
  if (rc) return rc;
  for (int j = 0; j < c->n_out; j++) {
    if (!c->out[j]) continue;
    /* output j is the new value of input 2 + (j < n ? j : j + n): X, then the states after G */
    const ft_tensor *src = c->in[2 + (j < n ? j : j + n)];
    ft_copy_shape(c->out[j], src);
    c->out[j]->dtype = FT_FLOAT;
  }
  return 0;
}

static int optim_plan(ft_opctx *c, ft_kcall *k) {
  int n, rc = optim_check(c, &n);
  if (rc) return rc;
  const ft_node *nd = c->node;
  if (!strcmp(nd->op_type, "Adagrad")) {
    FT_K(k, ft_adagrad_f32);
    k->f[0] = ft_attr_float(nd, "decay_factor", 0);
    k->f[1] = ft_attr_float(nd, "epsilon", 1e-6f);
    k->f[2] = ft_attr_float(nd, "norm_coefficient", 0);
    k->nf = 3;
  } else if (!strcmp(nd->op_type, "Momentum")) {
    const char *mode = ft_attr_str(nd, "mode", "standard");
    if (strcmp(mode, "standard") && strcmp(mode, "nesterov")) return ft_infer_fail(c, FT_EINVALID, "mode '%s' is not standard or nesterov", mode);
    FT_K(k, ft_momentum_f32);
    k->f[0] = ft_attr_float(nd, "alpha", 0);
    k->f[1] = ft_attr_float(nd, "beta", 0);
    k->f[2] = ft_attr_float(nd, "norm_coefficient", 0);
    k->f[3] = !strcmp(mode, "nesterov");
    k->nf = 4;
  } else {
    FT_K(k, ft_adam_f32);
    k->f[0] = ft_attr_float(nd, "alpha", 0.9f);
    k->f[1] = ft_attr_float(nd, "beta", 0.999f);
    k->f[2] = ft_attr_float(nd, "epsilon", 1e-6f);
    k->f[3] = ft_attr_float(nd, "norm_coefficient", 0);
    k->f[4] = ft_attr_float(nd, "norm_coefficient_post", 0);
    k->nf = 5;
  }
  k->p[0] = n;
  for (int i = 0; i < n; i++) k->p[1 + i] = ft_numel(c->in[2 + i]);
  k->np = 1 + n;
  return 0;
}

#define TRAINING "ai.onnx.preview.training"
const ft_opdesc ft_ops_optim[] = {
    {"Adagrad", TRAINING, optim_infer, optim_plan, "optim", 0},
    {"Momentum", TRAINING, optim_infer, optim_plan, "optim", 0},
    {"Adam", TRAINING, optim_infer, optim_plan, "optim", 0},
    {0}};

/* The scalar-op table, generated from templates/common/scalar_ops.h's rows (compiler/scalar_table.h). */
#include "scalar_table.h"

#include <math.h>
#include <string.h>

#include "fuse.h"
#include "gemm.h"

#define KINDOF_KERNEL FT_SOP_K_KERNEL
#define KINDOF_KERNEL_C FT_SOP_K_KERNEL_C
#define KINDOF_FUSED_ONLY FT_SOP_K_NONE
#define UNARY_ROW(ID, fn, name, kernels, EXPR) {FT_SOP_##ID, #fn, name, KINDOF_##kernels, 0, {0, 0}, {0, 0}},
#define PARAM_ROW(ID, fn, name, kernels, A, DA, B, DB, EXPR) {FT_SOP_##ID, #fn, name, KINDOF_##kernels, 2, {A, B}, {DA, DB}},
#define BINARY_ROW(ID, fn, name, EXPR) {FT_SOP_##ID, #fn, name, FT_SOP_K_NONE, 0, {0, 0}, {0, 0}},
static const ft_sop sops[] = {
    FT_SCALAR_UNARY_OPS(UNARY_ROW) FT_SCALAR_PARAM_OPS(PARAM_ROW) FT_SCALAR_BINARY_OPS(BINARY_ROW)};

const ft_sop *ft_sop_by_id(int64_t id) {
  for (size_t i = 0; i < sizeof sops / sizeof sops[0]; i++)
    if (sops[i].id == id) return &sops[i];
  return NULL;
}

const ft_sop *ft_sop_by_name(const char *name) {
  for (size_t i = 0; i < sizeof sops / sizeof sops[0]; i++)
    if (!strcmp(sops[i].name, name)) return &sops[i];
  return NULL;
}

/* Clip's bounds; 0 when one is given but not a constant. */
static int clip_bounds(const ft_graph *g, const ft_node *n, float params[2]) {
  double lo = -INFINITY, hi = INFINITY, x;
  if (g->opset < 11) {
    if (ft_attr_find(n, "min")) lo = ft_attr_float(n, "min", 0);
    if (ft_attr_find(n, "max")) hi = ft_attr_float(n, "max", 0);
  } else {
    if (n->n_in > 1 && n->in[1] >= 0) {
      if (!ft_const_scalar(g, n->in[1], &x)) return 0;
      lo = x;
    }
    if (n->n_in > 2 && n->in[2] >= 0) {
      if (!ft_const_scalar(g, n->in[2], &x)) return 0;
      hi = x;
    }
  }
  params[0] = (float)lo;
  params[1] = (float)hi;
  return 1;
}

const ft_sop *ft_sop_of_node(const ft_graph *g, const ft_node *n, float params[2]) {
  params[0] = params[1] = 0;
  int gelu = !strcmp(n->op_type, "Gelu");
  if (n->domain[0] && !(gelu && !strcmp(n->domain, "ftax"))) return NULL;
  const ft_sop *s = ft_sop_by_name(n->op_type);
  if (!s || s->id == FT_SOP_GELU_TANH || FT_SOP_IS_BINARY(s->id)) return NULL; /* no such ONNX op */
  if (gelu) {
    const char *a = ft_attr_str(n, "approximate", "none");
    if (!strcmp(a, "tanh")) return ft_sop_by_id(FT_SOP_GELU_TANH);
    return strcmp(a, "none") ? NULL : s;
  }
  if (s->id == FT_SOP_CLIP) return clip_bounds(g, n, params) ? s : NULL;
  for (int k = 0; k < s->n_params; k++)
    if (s->attr[k]) params[k] = ft_attr_float(n, s->attr[k], s->dflt[k]);
  return s;
}

int ft_epilogue_activation(ft_opctx *c, const char *attr, int64_t *act) {
  const char *a = ft_attr_str(c->node, attr, "");
  const ft_sop *s = ft_sop_by_name(a);
  if (!*a) *act = FT_ACT_NONE;
  else if (!strcmp(a, "Silu")) *act = FT_ACT_SILU;
  else if (s && (FT_SOP_IS_UNARY(s->id) || FT_SOP_IS_PARAM(s->id))) *act = s->id;
  else return ft_infer_fail(c, FT_EINVALID, "%s '%s' is not Silu or a unary scalar op (templates/common/scalar_ops.h)", attr, a);
  return 0;
}

const char *ft_epilogue_activation_name(int64_t act) {
  const ft_sop *s = ft_sop_by_id(act);
  return act == FT_ACT_SILU ? "Silu" : s && !FT_SOP_IS_BINARY(act) ? s->name : "";
}

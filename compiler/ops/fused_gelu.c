/* ftax.Gelu(X), attribute approximate = "none" (erf form) or "tanh": what the gelu pass writes
 * for the GELU formulas exporters spell out in primitive ops, and for the native Gelu of opset
 * 20. The kernels are unary.h's (vectorized fast erf and tanh); the GEMM epilogue computes the
 * same formula (gemm.h) when the GELU is folded into the matrix product before it. */
#include <string.h>

#include "op.h"

const ft_kentry *ft_gelu_kernel(int tanh_form, int dtype); /* unary.c: Gelu's entries */

static const ft_kentry *pick(ft_opctx *c) {
  const char *approx = ft_attr_str(c->node, "approximate", "none");
  int tanh_form = !strcmp(approx, "tanh");
  if (!tanh_form && strcmp(approx, "none")) {
    ft_infer_fail(c, FT_EINVALID, "approximate='%s' is not one of 'none', 'tanh'", approx);
    return NULL;
  }
  const ft_kentry *e = ft_gelu_kernel(tanh_form, c->in[0]->dtype);
  if (!e) ft_infer_fail(c, FT_EUNSUPPORTED, "Gelu is supported for float32 and float64, not %s", ft_dtype_name(c->in[0]->dtype));
  return e;
}

static int gelu_infer(ft_opctx *c) {
  if (c->n_in != 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs one input");
  if (!pick(c)) return c->err->code;
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dtype = c->in[0]->dtype;
  return 0;
}

static int gelu_plan(ft_opctx *c, ft_kcall *k) {
  k->entry = pick(c);
  if (!k->entry) return c->err->code;
  k->p[0] = ft_numel(c->in[0]);
  k->np = 1;
  return 0;
}

const ft_opdesc ft_ops_fused_gelu[] = {
    {"Gelu", "ftax", gelu_infer, gelu_plan, "unary", FT_OP_INPLACE},
    {0}};

/* ftax.FusedConv: a Conv whose epilogue also adds a residual and applies an activation while
 * the output tile is still in cache (written by compiler/fuse/fuse_conv_epilogue.c).
 *
 *   inputs      X, W, B (optional), R (optional: the residual, shaped like the output)
 *   attributes  every Conv attribute, plus
 *     activation  "" (none), "Silu" (x * sigmoid(x)) or a unary scalar op's name
 *                 (templates/common/scalar_ops.h: "Relu", "Clip", "Sigmoid", "Mish" ...)
 *     activation_params  its parameters a and b where it takes some (Clip's bounds, LeakyRelu's alpha)
 *     residual    0 none, 1 R is added before the activation, 2 after it
 *
 * Shapes, geometry and kernel choice are Conv's own (compiler/ops/conv.c, through the op
 * table), so the fused op cannot drift from the plain one. Kernel: templates/c/conv.h. */
#include <string.h>

#include "conv.h"
#include "op.h"
#include "scalar_table.h"

static const ft_opdesc *plain_conv(void) { return ft_op_find("", "Conv"); }

static int act_code(ft_opctx *c, int64_t *act) { return ft_epilogue_activation(c, "activation", act); }

static int fused_conv_infer(ft_opctx *c) {
  int64_t act = 0;
  int rc = act_code(c, &act);
  if (rc) return rc;
  if (c->n_in > 4) return ft_infer_fail(c, FT_EINVALID, "takes at most 4 inputs (X, W, B, R), got %d", c->n_in);
  rc = plain_conv()->infer(c);
  if (rc) return rc;
  int64_t res = ft_attr_int(c->node, "residual", 0);
  if (res < 0 || res > 2) return ft_infer_fail(c, FT_EINVALID, "residual must be 0, 1 or 2, got %lld", (long long)res);
  const ft_tensor *r = c->n_in > 3 ? c->in[3] : NULL, *y = c->out[0];
  if (!res != !r) return ft_infer_fail(c, FT_EINVALID, "residual=%lld but input R is %s", (long long)res, r ? "given" : "missing");
  if (r) {
    int same = r->dtype == FT_FLOAT && r->rank == y->rank;
    for (int d = 0; same && d < y->rank; d++) same = r->dims[d] == y->dims[d];
    if (!same) return ft_infer_fail(c, FT_EINVALID, "the residual R must be float32 and shaped exactly like the output");
  }
  return 0;
}

static int fused_conv_plan(ft_opctx *c, ft_kcall *k) {
  int64_t act = 0;
  int rc = act_code(c, &act);
  if (rc) return rc;
  rc = plain_conv()->plan(c, k);
  if (rc) return rc;
  k->p[FT_CV_ACT] = act;
  k->p[FT_CV_RES] = ft_attr_int(c->node, "residual", 0);
  const ft_attr *pa = ft_attr_find(c->node, "activation_params");
  for (int i = 0; i < 2; i++) k->f[2 + i] = pa && i < pa->n_floats ? pa->floats[i] : 0;
  /* The output may take over R's storage where the kernel reads each residual element before
   * it writes that output element: the packed-weight GEMM paths (the tile is finished in
   * registers) and the depthwise row bands. Unpacked weights go through K blocks written to
   * the output first, and the depthwise per-tap path writes the plane before adding R. */
  if (k->p[FT_CV_RES]) {
    int safe = k->prepack.input == 1;
    if (k->p[FT_CV_MODE] == FT_CV_DEPTHWISE) {
      ft_dw_geo geo;
      ft_dw_geometry(k->p, &geo);
      safe = geo.rows > 0;
    }
    k->no_inplace = !safe;
  }
  return 0;
}

const ft_opdesc ft_ops_fused_conv[] = {
    {"FusedConv", "ftax", fused_conv_infer, fused_conv_plan, "conv", FT_OP_INPLACE_ONLY(3)},
    {0}};

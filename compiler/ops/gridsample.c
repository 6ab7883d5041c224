/* GridSample (opset 16: 4-D, modes bilinear/nearest/bicubic; opset 20: also 5-D and the names
 * linear/cubic). float32. Kernel: templates/c/gridsample.h. */
#include <string.h>

#include "gridsample.h"
#include "op.h"

static int gs_attrs(ft_opctx *c, int *mode, int *pad) {
  const char *m = ft_attr_str(c->node, "mode", c->opset >= 20 ? "linear" : "bilinear");
  const char *pm = ft_attr_str(c->node, "padding_mode", "zeros");
  if (!strcmp(m, "nearest")) *mode = 0;
  else if (!strcmp(m, "bilinear") || !strcmp(m, "linear")) *mode = 1;
  else if (!strcmp(m, "bicubic") || !strcmp(m, "cubic")) *mode = 2;
  else return ft_infer_fail(c, FT_EINVALID, "mode '%s' is not nearest, linear or cubic", m);
  if (!strcmp(pm, "zeros")) *pad = 0;
  else if (!strcmp(pm, "border")) *pad = 1;
  else if (!strcmp(pm, "reflection")) *pad = 2;
  else return ft_infer_fail(c, FT_EINVALID, "padding_mode '%s' is not zeros, border or reflection", pm);
  return 0;
}

static int gs_check(ft_opctx *c) {
  if (c->n_in < 2 || !c->in[0] || !c->in[1]) return ft_infer_fail(c, FT_EINVALID, "needs inputs X and grid");
  const ft_tensor *x = c->in[0], *g = c->in[1];
  if (x->dtype != FT_FLOAT || g->dtype != FT_FLOAT)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "GridSample is supported for float32 X and grid (got %s, %s)",
                         ft_dtype_name(x->dtype), ft_dtype_name(g->dtype));
  int r = x->rank - 2;
  if (r < 1 || r > FT_GS_MAXD) return ft_infer_fail(c, FT_EUNSUPPORTED, "X has rank %d; 3 to 5 are supported", x->rank);
  if (g->rank != x->rank || g->dims[0] != x->dims[0] || g->dims[g->rank - 1] != r)
    return ft_infer_fail(c, FT_EINVALID, "grid must be [N, out..., %d] with N = %lld", r, (long long)x->dims[0]);
  return 0;
}

static int gs_infer(ft_opctx *c) {
  int mode, pad, rc = gs_check(c);
  if (rc || (rc = gs_attrs(c, &mode, &pad))) return rc;
  const ft_tensor *x = c->in[0], *g = c->in[1];
  ft_tensor *y = c->out[0];
  y->dtype = x->dtype;
  y->rank = x->rank;
  y->dims[0] = x->dims[0];
  y->dims[1] = x->dims[1];
  for (int d = 2; d < x->rank; d++) y->dims[d] = g->dims[d - 1];
  return 0;
}

static int gs_plan(ft_opctx *c, ft_kcall *k) {
  int mode, pad, rc = gs_attrs(c, &mode, &pad);
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  int r = x->rank - 2;
  FT_K(k, ft_gridsample_f32);
  k->p[0] = r;
  k->p[1] = x->dims[0];
  k->p[2] = x->dims[1];
  for (int d = 0; d < r; d++) { k->p[3 + d] = x->dims[2 + d]; k->p[3 + r + d] = c->out[0]->dims[2 + d]; }
  k->p[3 + 2 * r] = mode;
  k->p[4 + 2 * r] = pad;
  k->p[5 + 2 * r] = ft_attr_int(c->node, "align_corners", 0) != 0;
  k->np = 6 + 2 * r;
  return 0;
}

const ft_opdesc ft_ops_gridsample[] = {
    {"GridSample", "", gs_infer, gs_plan, "gridsample", 0},
    {0}};

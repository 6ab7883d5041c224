/* Resize (opsets 10, 11, 13, 18) and the deprecated Upsample (7, 9). Kernels: templates/c/resize.h.
 *
 * The output shape comes from scales or sizes, which must be constant (graph inputs can be
 * bound with --bind). Resize-10 and Upsample read output index i from input i / scale, rounded
 * down when upsampling ("asymmetric", as onnxruntime does for these versions). */
#include <math.h>
#include <string.h>

#include "op.h"
#include "resize.h"

#define MAX_RESIZED 4 /* dims with their own (scale, roi) in f[]: 2 + 3 * 4 <= FT_MAX_F */

typedef struct geometry {
  int rank, interp, coord, nearest, exclude;
  double cubic_a, extrapolation;
  int64_t out[FT_MAX_RANK];
  double scale[FT_MAX_RANK], r0[FT_MAX_RANK], r1[FT_MAX_RANK];
} geometry;

/* An output size computed in floating point from scales: checked before the conversion (a
 * hostile scale gives NaN, a negative or an out-of-range value, and converting those is UB). */
static int out_dim(ft_opctx *c, double v, int64_t *out) {
  if (!(v >= 0 && v < 9.2e18))
    return ft_infer_fail(c, v >= 0 ? FT_EUNSUPPORTED : FT_EINVALID, "an output size computed from the scales is %g", v);
  *out = (int64_t)v;
  return 0;
}

static int lookup(ft_opctx *c, const char *attr, const char *dflt, const char *const *names, int *out) {
  const char *v = ft_attr_str(c->node, attr, dflt);
  for (int i = 0; names[i]; i++)
    if (!strcmp(v, names[i])) { *out = i; return 0; }
  return ft_infer_fail(c, FT_EUNSUPPORTED, "%s='%s' is not supported", attr, v);
}

static const char *const interp_names[] = {"nearest", "linear", "cubic", NULL};
static const char *const coord_names[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                          "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric", NULL};
static const char *const nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};

static int present(ft_opctx *c, int i) { return i < c->n_in && c->in[i] && ft_numel(c->in[i]) > 0; }

/* The resized axes: all dims, or the `axes` attribute (opset 18). */
static int resize_axes(ft_opctx *c, int rank, int *axes) {
  const int64_t *a;
  int n = c->opset >= 18 ? ft_attr_ints(c->node, "axes", &a) : -1;
  if (n < 0) {
    for (int d = 0; d < rank; d++) axes[d] = d;
    return rank;
  }
  if (n > rank) return ft_infer_fail(c, FT_EINVALID, "axes has %d entries for a rank-%d input", n, rank), -1;
  for (int i = 0; i < n; i++)
    if (ft_norm_axis(c, a[i], rank, &axes[i])) return -1;
  return n;
}

static int geometry_of(ft_opctx *c, geometry *g) {
  const ft_tensor *x = c->in[0];
  int upsample = !strcmp(c->node->op_type, "Upsample"), v10 = upsample || c->opset < 11;
  memset(g, 0, sizeof *g);
  g->rank = x->rank;
  const char *mode = ft_attr_str(c->node, "mode", "nearest");
  if (!strcmp(mode, "bilinear")) g->interp = FT_RZ_LINEAR; /* Upsample's older spelling */
  else if (lookup(c, "mode", "nearest", interp_names, &g->interp)) return c->err->code;
  if (v10) {
    if (g->interp == FT_RZ_CUBIC) return ft_infer_fail(c, FT_EINVALID, "mode 'cubic' needs opset 11");
    g->coord = FT_RZ_ASYMMETRIC;
    g->nearest = FT_RZ_SIMPLE;
  } else {
    if (lookup(c, "coordinate_transformation_mode", "half_pixel", coord_names, &g->coord)) return c->err->code;
    if (lookup(c, "nearest_mode", "round_prefer_floor", nearest_names, &g->nearest)) return c->err->code;
    g->exclude = ft_attr_int(c->node, "exclude_outside", 0) != 0;
    if (ft_attr_int(c->node, "antialias", 0))
      return ft_infer_fail(c, FT_EUNSUPPORTED, "antialias=1 is not supported");
  }
  g->cubic_a = ft_attr_float(c->node, "cubic_coeff_a", -0.75f);
  g->extrapolation = ft_attr_float(c->node, "extrapolation_value", 0.0f);

  int axes[FT_MAX_RANK], na = resize_axes(c, x->rank, axes);
  if (na < 0) return c->err->code;
  for (int d = 0; d < x->rank; d++) { g->out[d] = x->dims[d]; g->scale[d] = 1; g->r0[d] = 0; g->r1[d] = 1; }

  /* scales: Upsample-7's attribute, else input 1 (Upsample-9, Resize-10) or 2 */
  int scales_in = v10 ? 1 : 2, sizes_in = 3, rc;
  if (upsample && c->opset < 9) {
    const float *s = NULL;
    const ft_attr *a = ft_attr_find(c->node, "scales");
    if (!a || a->n_floats != x->rank)
      return ft_infer_fail(c, FT_EINVALID, "attribute scales needs one value per input dim (%d)", x->rank);
    s = a->floats;
    for (int d = 0; d < x->rank; d++) {
      g->scale[d] = s[d];
      if (out_dim(c, floor((double)x->dims[d] * s[d]), &g->out[d])) return c->err->code;
    }
  } else if (!v10 && present(c, sizes_in)) {
    if ((rc = ft_need_const(c, sizes_in, "sizes"))) return rc;
    if (present(c, scales_in)) return ft_infer_fail(c, FT_EINVALID, "has both scales and sizes; give one");
    if (ft_numel(c->in[sizes_in]) != na)
      return ft_infer_fail(c, FT_EINVALID, "sizes has %lld values for %d axes", (long long)ft_numel(c->in[sizes_in]), na);
    const char *policy = ft_attr_str(c->node, "keep_aspect_ratio_policy", "stretch");
    int keep = !strcmp(policy, "not_larger") ? 1 : !strcmp(policy, "not_smaller") ? 2 : 0;
    if (!keep && strcmp(policy, "stretch"))
      return ft_infer_fail(c, FT_EUNSUPPORTED, "keep_aspect_ratio_policy='%s' is not supported", policy);
    double common = keep == 1 ? INFINITY : 0;
    for (int i = 0; i < na; i++) {
      int d = axes[i];
      g->out[d] = ft_const_int(c->in[sizes_in], i);
      if (g->out[d] < 0) return ft_infer_fail(c, FT_EINVALID, "sizes[%d] is negative", i);
      double s = (double)g->out[d] / (double)x->dims[d];
      g->scale[d] = s;
      if (keep == 1 && s < common) common = s;
      if (keep == 2 && s > common) common = s;
    }
    if (keep)
      for (int i = 0; i < na; i++) {
        int d = axes[i];
        g->scale[d] = common;
        if (out_dim(c, floor((double)x->dims[d] * common + 0.5), &g->out[d])) return c->err->code;
      }
  } else if (scales_in < c->n_in && c->in[scales_in]) {
    if ((rc = ft_need_const(c, scales_in, "scales"))) return rc;
    const ft_tensor *s = c->in[scales_in];
    if (ft_numel(s) != na)
      return ft_infer_fail(c, FT_EINVALID, "scales has %lld values for %d axes", (long long)ft_numel(s), na);
    for (int i = 0; i < na; i++) {
      int d = axes[i];
      g->scale[d] = ft_const_real(s, i);
      if (!(g->scale[d] > 0)) return ft_infer_fail(c, FT_EINVALID, "scales[%d] is %g; scales must be positive", i, g->scale[d]);
      if (out_dim(c, floor((double)x->dims[d] * g->scale[d]), &g->out[d])) return c->err->code;
    }
  } else {
    return ft_infer_fail(c, FT_EINVALID, "needs scales or sizes");
  }
  if (g->coord == FT_RZ_TF_CROP_AND_RESIZE) {
    if (!present(c, 1)) return ft_infer_fail(c, FT_EINVALID, "coordinate_transformation_mode 'tf_crop_and_resize' needs roi");
    if ((rc = ft_need_const(c, 1, "roi"))) return rc;
    if (ft_numel(c->in[1]) != 2 * na)
      return ft_infer_fail(c, FT_EINVALID, "roi has %lld values for %d axes; it needs starts and ends", (long long)ft_numel(c->in[1]), na);
    for (int i = 0; i < na; i++) {
      g->r0[axes[i]] = ft_const_real(c->in[1], i);
      g->r1[axes[i]] = ft_const_real(c->in[1], na + i);
    }
  }
  return 0;
}

static int resize_infer(ft_opctx *c) {
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "input X is missing");
  geometry g;
  int rc = geometry_of(c, &g);
  if (rc) return rc;
  if (c->in[0]->rank == 0) return ft_infer_fail(c, FT_EINVALID, "cannot resize a scalar");
  c->out[0]->dtype = c->in[0]->dtype;
  c->out[0]->rank = g.rank;
  for (int d = 0; d < g.rank; d++) c->out[0]->dims[d] = g.out[d];
  return 0;
}

/* Does dim d map every output index to the same input index? Then it needs no table of its own. */
static int is_identity(const geometry *g, int d, int64_t in) {
  if (g->out[d] != in) return 0;
  int64_t idx[FT_RZ_MAX_TAPS];
  double w[FT_RZ_MAX_TAPS];
  for (int64_t o = 0; o < in; o++) {
    if (ft_resize_taps(g->interp, g->coord, g->nearest, g->exclude, g->cubic_a, g->scale[d], g->r0[d], g->r1[d],
                       in, g->out[d], o, idx, w))
      return 0;
    for (int t = 0; t < ft_resize_ntaps(g->interp); t++)
      if (w[t] != 0 && (idx[t] != o || w[t] != 1)) return 0;
  }
  return 1;
}

static int64_t value_bits(double v, int dt) {
  int64_t b = 0;
  switch (dt) {
  case FT_FLOAT: { float x = (float)v; memcpy(&b, &x, 4); break; }
  case FT_DOUBLE: memcpy(&b, &v, 8); break;
  case FT_FLOAT16: b = ft_float_to_half((float)v); break;
  case FT_BFLOAT16: b = ft_float_to_bf16((float)v); break;
  default: b = (int64_t)v; break; /* integers: the low bytes hold the value */
  }
  return b;
}

/* float32 bilinear of the last two dims in a coordinate mode ONNX Runtime computes in float: its
 * arithmetic, so that a quantizer after the resize rounds as it does (templates/c/resize.h). */
static int ort_bilinear(const geometry *g, const ft_tensor *x, int dt) {
  int r = g->rank;
  if (dt != FT_FLOAT || g->interp != FT_RZ_LINEAR) return 0;
  if (g->coord != FT_RZ_HALF_PIXEL && g->coord != FT_RZ_PYTORCH_HALF_PIXEL && g->coord != FT_RZ_ASYMMETRIC &&
      g->coord != FT_RZ_ALIGN_CORNERS)
    return 0;
  /* the outer dims keep their size at scale 1 (pytorch_half_pixel flags a dim of size 1 as
   * resized: its taps weigh 0.5 each, on the same element) */
  for (int d = 0; d < r - 2; d++)
    if (g->out[d] != x->dims[d] || g->scale[d] != 1) return 0;
  /* align_corners divides by the output length less one: ORT takes the rounded size, the
   * specification scale x input (test_resize_downsample_scales_linear_align_corners: 2.4, not 2);
   * only where the two agree is ORT's arithmetic the right one */
  for (int d = r > 2 ? r - 2 : 0; g->coord == FT_RZ_ALIGN_CORNERS && d < r; d++)
    if (fabs(g->scale[d] * (double)x->dims[d] - (double)g->out[d]) > 1e-6 * (double)g->out[d]) return 0;
  return 1;
}

static int resize_plan(ft_opctx *c, ft_kcall *k) {
  geometry g;
  int rc = geometry_of(c, &g);
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  int dt = x->dtype, r = g.rank, nres = 0;
  if (g.interp == FT_RZ_NEAREST) {
    static const ft_kentry nearest_k[] = FT_KSIZED(ft_resize_nearest, NULL, NULL);
    if (ft_kentry_by_size(c, k, nearest_k, dt)) return c->err->code;
  } else if (dt == FT_FLOAT) FT_K(k, ft_resize_interp_f32);
  else if (dt == FT_DOUBLE) FT_K(k, ft_resize_interp_f64);
  else return ft_infer_fail(c, FT_EUNSUPPORTED, "mode '%s' is supported for float32 and float64, not %s",
                            interp_names[g.interp], ft_dtype_name(dt));
  k->p[0] = r;
  k->p[1] = g.interp;
  k->p[2] = g.coord;
  k->p[3] = g.nearest;
  k->p[4] = g.exclude;
  k->p[5] = value_bits(g.extrapolation, dt);
  k->f[0] = g.cubic_a;
  k->f[1] = g.extrapolation;
  k->nf = 2;
  for (int d = 0; d < r; d++) {
    k->p[6 + d] = x->dims[d];
    k->p[6 + r + d] = g.out[d];
    int resized = !is_identity(&g, d, x->dims[d]);
    k->p[6 + 2 * r + d] = resized;
    if (!resized) continue;
    if (++nres > MAX_RESIZED)
      return ft_infer_fail(c, FT_EUNSUPPORTED, "resizes more than %d dims", MAX_RESIZED);
    k->f[k->nf++] = g.scale[d];
    k->f[k->nf++] = g.r0[d];
    k->f[k->nf++] = g.r1[d];
  }
  k->np = 6 + 3 * r;
  k->scratch = ft_resize_scratch(r, g.out, g.interp);
  if (ort_bilinear(&g, x, dt)) {
    FT_K(k, ft_resize_bilinear_ort_f32);
    k->scratch = ft_resize_ort_scratch(r > 1 ? g.out[r - 2] : 1, g.out[r - 1]);
  }
  return 0;
}

const ft_opdesc ft_ops_resize[] = {
    {"Resize", "", resize_infer, resize_plan, "resize", 0},
    {"Upsample", "", resize_infer, resize_plan, "resize", 0},
    {0}};

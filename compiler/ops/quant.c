/* Quantized ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
 * ConvInteger, QLinearMatMul, QLinearConv. Kernels: templates/c/quant.h (plain int32 loops).
 *
 * Scales are float32 and zero points uint8 or int8 (16-bit for Quantize/DequantizeLinear), one
 * per tensor or one per channel along `axis` (per row/column/output channel for the matmuls and
 * convs). Blocked quantization (opset 21 block_size) and float8 are not supported.
 *
 * With a constant weight (B, w) the matmuls and convs run on the int8 GEMM core
 * (templates/c/gemm_int8.h: weights packed at compile time, vpdpbusd where the build has VNNI),
 * as do the QDQ fusions ftax.QDQMatMul and ftax.QDQConv (compiler/fuse/fuse_qdq.c); grouped
 * convs, per-row A zero points and weights computed at run time keep the plain loops below. */
#include <math.h>
#include <string.h>

#include "conv.h"
#include "gemm_int8.h"
#include "op.h"
#include "quant.h"
#include "scalar_table.h"
#include "window.h"

static int64_t prod(const int64_t *d, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; i++) n *= d[i];
  return n;
}

static const ft_tensor *opt_in(ft_opctx *c, int i) { return i < c->n_in ? c->in[i] : NULL; }

static int need_inputs(ft_opctx *c, int n) {
  for (int i = 0; i < n; i++)
    if (i >= c->n_in || !c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d is missing", i);
  return 0;
}

static const char *short_name(int dt) {
  switch (dt) {
  case FT_UINT8: return "u8"; case FT_INT8: return "i8"; case FT_UINT16: return "u16";
  case FT_INT16: return "i16"; case FT_INT32: return "i32"; default: return NULL;
  }
}

/* ---- QuantizeLinear, DequantizeLinear ----------------------------------------------------- */

/* A constant scale must be positive and finite: a zero, negative, NaN or infinite one quantizes
 * or dequantizes to nothing meaningful, and would divide by zero in QuantizeLinear. Scales
 * computed at run time are the model's business. */
static int scales_ok(ft_opctx *c, const ft_tensor *s, const char *what) {
  if (!ft_known_const(c, s) || s->dtype != FT_FLOAT) return 0;
  for (int64_t i = 0; i < ft_numel(s); i++) {
    float v = ((const float *)s->data)[i];
    if (!(v > 0.0f) || isinf(v))
      return ft_infer_fail(c, FT_EINVALID, "%s must be positive and finite; entry %lld is %g", what, (long long)i, (double)v);
  }
  return 0;
}

/* Per-tensor or per-axis: n values of scale (and zero point) along axis of x. */
static int qparams(ft_opctx *c, int *per_axis, int *axis) {
  const ft_tensor *x = c->in[0], *s = c->in[1], *z = opt_in(c, 2);
  if (s->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EUNSUPPORTED, "scale must be float32, not %s", ft_dtype_name(s->dtype));
  if (ft_attr_int(c->node, "block_size", 0)) return ft_infer_fail(c, FT_EUNSUPPORTED, "blocked quantization (block_size) is not supported");
  *per_axis = ft_numel(s) > 1; /* one value is per tensor, whatever its rank */
  *axis = 0;
  if (*per_axis) {
    int rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", 1), x->rank, axis);
    if (rc) return rc;
    if (s->rank != 1 || s->dims[0] != x->dims[*axis])
      return ft_infer_fail(c, FT_EINVALID, "scale has %lld values; per-axis quantization needs %lld (dim %d)",
                           (long long)ft_numel(s), (long long)x->dims[*axis], *axis);
  }
  if (z && ft_numel(z) != ft_numel(s)) return ft_infer_fail(c, FT_EINVALID, "zero point and scale have different sizes");
  /* the same shape, not just as many values: a [1, 3] zero point for a [3] scale is invalid */
  int same = !z || z->rank == s->rank || (ft_numel(s) == 1 && z->rank <= 1 && s->rank <= 1);
  for (int d = 0; same && z && d < z->rank && z->rank == s->rank; d++) same = z->dims[d] == s->dims[d];
  if (!same) return ft_infer_fail(c, FT_EINVALID, "zero point has rank %d, scale rank %d; they must have the same shape", z->rank, s->rank);
  return scales_ok(c, s, "scale");
}

static void qplan_params(ft_opctx *c, ft_kcall *k, int per_axis, int axis) {
  const ft_tensor *x = c->in[0];
  k->p[0] = ft_numel(x);
  k->p[1] = per_axis ? x->dims[axis] : 1;
  k->p[2] = per_axis ? prod(x->dims, axis + 1, x->rank) : 1;
  k->p[3] = per_axis;
  k->p[4] = opt_in(c, 2) != NULL;
  k->np = 5;
}

static int quantize_infer(ft_opctx *c) {
  int rc = need_inputs(c, 2), per_axis, axis;
  if (rc || (rc = qparams(c, &per_axis, &axis))) return rc;
  const ft_tensor *x = c->in[0], *z = opt_in(c, 2);
  if (x->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EUNSUPPORTED, "QuantizeLinear is supported for float32 input, not %s", ft_dtype_name(x->dtype));
  int dt = z ? z->dtype : (int)ft_attr_int(c->node, "output_dtype", FT_UINT8);
  if (!dt) dt = FT_UINT8;
  if (dt == FT_INT32 || !short_name(dt))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "quantizing to %s is not supported", ft_dtype_name(dt));
  c->out[0]->dtype = dt;
  ft_copy_shape(c->out[0], x);
  return 0;
}

static int quantize_plan(ft_opctx *c, ft_kcall *k) {
  int per_axis, axis, rc = qparams(c, &per_axis, &axis);
  if (rc) return rc;
  switch (c->out[0]->dtype) {
  case FT_UINT8: FT_K(k, ft_quantize_f32_u8); break;
  case FT_INT8: FT_K(k, ft_quantize_f32_i8); break;
  case FT_UINT16: FT_K(k, ft_quantize_f32_u16); break;
  default: FT_K(k, ft_quantize_f32_i16); break;
  }
  qplan_params(c, k, per_axis, axis);
  return 0;
}

static int dequantize_infer(ft_opctx *c) {
  int rc = need_inputs(c, 2), per_axis, axis;
  if (rc || (rc = qparams(c, &per_axis, &axis))) return rc;
  const ft_tensor *x = c->in[0], *z = opt_in(c, 2);
  if (!short_name(x->dtype))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "dequantizing %s is not supported", ft_dtype_name(x->dtype));
  if (z && z->dtype != x->dtype) return ft_infer_fail(c, FT_EINVALID, "zero point is %s but x is %s", ft_dtype_name(z->dtype), ft_dtype_name(x->dtype));
  c->out[0]->dtype = FT_FLOAT;
  ft_copy_shape(c->out[0], x);
  return 0;
}

static int dequantize_plan(ft_opctx *c, ft_kcall *k) {
  int per_axis, axis, rc = qparams(c, &per_axis, &axis);
  if (rc) return rc;
  switch (c->in[0]->dtype) {
  case FT_UINT8: FT_K(k, ft_dequantize_u8_f32); break;
  case FT_INT8: FT_K(k, ft_dequantize_i8_f32); break;
  case FT_UINT16: FT_K(k, ft_dequantize_u16_f32); break;
  case FT_INT16: FT_K(k, ft_dequantize_i16_f32); break;
  default: FT_K(k, ft_dequantize_i32_f32); break;
  }
  qplan_params(c, k, per_axis, axis);
  return 0;
}

static int dynamic_quantize_infer(ft_opctx *c) {
  int rc = need_inputs(c, 1);
  if (rc) return rc;
  if (c->in[0]->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EINVALID, "x must be float32, not %s", ft_dtype_name(c->in[0]->dtype));
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dtype = FT_UINT8;
  for (int j = 1; j < 3 && j < c->n_out; j++)
    if (c->out[j]) { c->out[j]->rank = 0; c->out[j]->dtype = j == 1 ? FT_FLOAT : FT_UINT8; }
  return 0;
}

static int dynamic_quantize_plan(ft_opctx *c, ft_kcall *k) {
  FT_K(k, ft_dynamic_quantize_f32);
  k->p[0] = ft_numel(c->in[0]);
  k->p[1] = c->n_out;
  k->np = 2;
  return 0;
}

/* ftax.DynamicQuantizeScale (compiler/fuse/fuse_qdq.c): x -> DynamicQuantizeLinear's scale and
 * zero point, without its quantized output. */
static int dynamic_quantize_scale_infer(ft_opctx *c) {
  int rc = need_inputs(c, 1);
  if (rc) return rc;
  if (c->in[0]->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EINVALID, "x must be float32, not %s", ft_dtype_name(c->in[0]->dtype));
  for (int j = 0; j < 2 && j < c->n_out; j++)
    if (c->out[j]) { c->out[j]->rank = 0; c->out[j]->dtype = j == 0 ? FT_FLOAT : FT_UINT8; }
  return 0;
}

static int dynamic_quantize_scale_plan(ft_opctx *c, ft_kcall *k) {
  FT_K(k, ft_dynamic_quantize_scale_f32);
  k->p[0] = ft_numel(c->in[0]);
  k->p[1] = c->n_out > 0 && c->out[0];
  k->p[2] = c->n_out > 1 && c->out[1];
  k->np = 3;
  return 0;
}

/* ---- MatMulInteger, QLinearMatMul --------------------------------------------------------- */

typedef struct mm {
  int64_t M, K, N;
  int R, a_vec, b_vec;
  int64_t bd[FT_MAX_RANK], as[FT_MAX_RANK], bs[FT_MAX_RANK];
} mm;

/* MatMul's shapes: 1-D operands promoted, batch dims broadcast. */
static int mm_shape(ft_opctx *c, const ft_tensor *a, const ft_tensor *b, mm *g) {
  memset(g, 0, sizeof *g);
  if (a->rank < 1 || b->rank < 1) return ft_infer_fail(c, FT_EINVALID, "matmul operands need rank 1 or more");
  g->a_vec = a->rank == 1;
  g->b_vec = b->rank == 1;
  g->M = g->a_vec ? 1 : a->dims[a->rank - 2];
  g->K = a->dims[a->rank - 1];
  int64_t kb = g->b_vec ? b->dims[0] : b->dims[b->rank - 2];
  g->N = g->b_vec ? 1 : b->dims[b->rank - 1];
  if (kb != g->K) return ft_infer_fail(c, FT_EINVALID, "inner dims differ (%lld and %lld)", (long long)g->K, (long long)kb);
  int ra = g->a_vec ? 0 : a->rank - 2, rb = g->b_vec ? 0 : b->rank - 2;
  g->R = ra > rb ? ra : rb;
  int64_t sa = g->M * g->K, sb = g->K * g->N;
  for (int i = g->R - 1; i >= 0; i--) {
    int ia = i - (g->R - ra), ib = i - (g->R - rb);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return ft_infer_fail(c, FT_EINVALID, "batch dims %lld and %lld do not broadcast", (long long)da, (long long)db);
    g->bd[i] = da > db ? da : db;
    g->as[i] = da == 1 ? 0 : sa;
    g->bs[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  return 0;
}

static void mm_out(const mm *g, ft_tensor *y) {
  y->rank = 0;
  for (int i = 0; i < g->R; i++) y->dims[y->rank++] = g->bd[i];
  if (!g->a_vec) y->dims[y->rank++] = g->M;
  if (!g->b_vec) y->dims[y->rank++] = g->N;
}

static int mm_params(const mm *g, int64_t naz, int64_t nbz, int64_t nbs, ft_kcall *k) {
  k->p[0] = g->M; k->p[1] = g->K; k->p[2] = g->N;
  k->p[3] = naz; k->p[4] = nbz; k->p[5] = nbs;
  k->p[6] = g->R;
  for (int i = 0; i < g->R; i++) { k->p[7 + i] = g->bd[i]; k->p[7 + g->R + i] = g->as[i]; k->p[7 + 2 * g->R + i] = g->bs[i]; }
  k->np = 7 + 3 * g->R;
  return 0;
}

static int is_8bit(int dt) { return dt == FT_UINT8 || dt == FT_INT8; }

/* count of a zero point or scale: absent 1, else 1 or `per` */
static int count_of(ft_opctx *c, const ft_tensor *t, int64_t per, const char *what, int64_t *n) {
  *n = t ? ft_numel(t) : 1;
  if (*n != 1 && *n != per)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "%s has %lld values; 1 or %lld are supported", what, (long long)*n, (long long)per);
  return 0;
}

static int qconv_window(ft_opctx *c, const ft_tensor *x, const ft_tensor *w, ft_window *win);

/* ---- the int8 GEMM core (templates/c/gemm_int8.h) ---------------------------------------- */

static const ft_kentry gemm_int8_k = FT_KENTRY(ft_gemm_int8);

static int64_t a_kind(int dt) { return dt == FT_FLOAT ? 2 : dt == FT_INT8 ? 1 : 0; }
static int64_t out_kind(int dt) {
  return dt == FT_INT32 ? FT_I8_OUT_S32 : dt == FT_FLOAT ? FT_I8_OUT_F32 : dt == FT_INT8 ? FT_I8_OUT_S8 : FT_I8_OUT_U8;
}

/* The roles of a node's inputs: indices, -1 absent (an omitted optional input too). */
typedef struct i8_roles {
  int a, as, az, b, bs, bz, ys, yz, bias;
} i8_roles;

static int64_t role(ft_opctx *c, int i) { return i >= 0 && opt_in(c, i) ? i : -1; }

/* Everything but the shapes: kinds, input roles, counts, epilogue; B packed at compile time. */
static void i8_plan_common(ft_opctx *c, ft_kcall *k, const i8_roles *r) {
  int64_t *p = k->p;
  memset(p, 0, sizeof(int64_t) * FT_I8_NP);
  const ft_tensor *a = c->in[r->a], *b = c->in[r->b], *az = r->az >= 0 ? opt_in(c, r->az) : NULL;
  p[FT_I8_A_KIND] = a_kind(a->dtype);
  p[FT_I8_AZ_SIGNED] = az && az->dtype == FT_INT8;
  p[FT_I8_B_SIGNED] = b->dtype == FT_INT8;
  p[FT_I8_OUT] = out_kind(c->out[0]->dtype);
  p[FT_I8_NBATCH] = 1;
  int64_t *in = p + FT_I8_IN_A;
  int roles[9] = {r->a, r->as, r->az, r->b, r->bs, r->bz, r->ys, r->yz, r->bias};
  for (int i = 0; i < 9; i++) in[i] = role(c, roles[i]);
  p[FT_I8_NZA] = az ? 1 : 0;
  p[FT_I8_NZB] = p[FT_I8_IN_BZ] >= 0 ? ft_numel(c->in[p[FT_I8_IN_BZ]]) : 0;
  p[FT_I8_NSB] = p[FT_I8_IN_BS] >= 0 ? ft_numel(c->in[p[FT_I8_IN_BS]]) : 0;
  if (p[FT_I8_IN_BIAS] >= 0) p[FT_I8_BIAS] = c->in[p[FT_I8_IN_BIAS]]->dtype == FT_FLOAT ? 1 : 2;
  p[FT_I8_RELU] = ft_attr_int(c->node, "relu", 0) != 0;
  ft_epilogue_activation(c, "activation", &p[FT_I8_ACT]); /* checked by the infer */
  const ft_attr *pa = ft_attr_find(c->node, "activation_params");
  for (int i = 0; pa && i < 2 && i < pa->n_floats; i++) k->f[i] = pa->floats[i];
  k->nf = pa ? 2 : 0;
  k->np = FT_I8_NP;
  k->entry = &gemm_int8_k;
  k->templates = "gemm_int8";
  k->prepack.input = r->b;
  k->prepack.flag_p = FT_I8_PACKED;
  k->prepack.pack = ft_i8_pack_b;
}

/* A [..., K] as rows times a constant B [K, N] (tb: B is [N, K]); Y [rows, N]. */
static void i8_plan_matrix(ft_opctx *c, ft_kcall *k, const i8_roles *r, int tb) {
  const ft_tensor *a = c->in[r->a], *b = c->in[r->b];
  int64_t K = a->dims[a->rank - 1], N = b->dims[tb ? 0 : 1], *p = k->p;
  i8_plan_common(c, k, r);
  p[FT_I8_M] = ft_numel(a) / (K ? K : 1);
  p[FT_I8_N] = N;
  p[FT_I8_K] = K;
  p[FT_I8_B_RS] = tb ? 1 : N;
  p[FT_I8_B_CS] = tb ? K : 1;
  p[FT_I8_A_RS] = K;
  p[FT_I8_Y_RS] = N;
  p[FT_I8_Y_CS] = 1;
  k->scratch = ft_i8_scratch(p);
}

/* A conv of group 1 with a constant w: one GEMM per image, rows the output positions. */
static int i8_plan_conv(ft_opctx *c, ft_kcall *k, const i8_roles *r) {
  const ft_tensor *x = c->in[r->a], *w = c->in[r->b];
  ft_window win;
  int rc = qconv_window(c, x, w, &win);
  if (rc) return rc;
  int64_t *p = k->p;
  i8_plan_common(c, k, r);
  ft_window_params(&win, p + FT_I8_WIN);
  int64_t isz = p[FT_I8_WIN] * p[FT_I8_WIN + 1] * p[FT_I8_WIN + 2], osz = p[FT_I8_WIN + 3] * p[FT_I8_WIN + 4] * p[FT_I8_WIN + 5];
  p[FT_I8_CONV] = 1;
  p[FT_I8_C] = x->dims[1];
  p[FT_I8_M] = osz;
  p[FT_I8_N] = w->dims[0];
  p[FT_I8_K] = ft_numel(w) / w->dims[0];
  p[FT_I8_B_RS] = 1;
  p[FT_I8_B_CS] = p[FT_I8_K];
  p[FT_I8_Y_RS] = 1;
  p[FT_I8_Y_CS] = osz;
  p[FT_I8_NBATCH] = x->dims[0];
  p[FT_I8_A_BS] = x->dims[1] * isz;
  p[FT_I8_Y_BS] = w->dims[0] * osz;
  /* an int8 weight of zero point 0: W.X (the output rows are the channel rows, no transpose;
     the image, or its im2col rows, packed 4 rows per pixel), unless the pixels fill their
     16-lane vectors badly (ResNet-50's 7 x 7 = 49 in 64 lanes: the row form's 6-row slivers
     waste less there; W.X everywhere measured 2% slower on ResNet-50 QDQ than this) */
  const ft_tensor *wz = r->bz >= 0 ? opt_in(c, r->bz) : NULL;
  int wz0 = !wz || (wz->data && wz->dtype == FT_INT8);
  for (int64_t i = 0; wz0 && wz && i < ft_numel(wz); i++) wz0 = ((const int8_t *)wz->data)[i] == 0;
  if ((ft_i8_n16(osz) - osz) * 8 <= ft_i8_n16(osz) && p[FT_I8_B_SIGNED] && wz0) {
    p[FT_I8_WX] = 1;
    p[FT_I8_M] = w->dims[0];
    p[FT_I8_N] = osz;
    p[FT_I8_Y_RS] = osz;
    p[FT_I8_Y_CS] = 1;
    /* stride 1, dilation 1, more than one tap, a trivial leading window dim: the implicit
       W.X form (gemm_int8.h), the image packed once with its pads and read at each tap's
       offset instead of im2col rows; K counts the taps' channels rounded up to 4 */
    const int64_t *wn = p + FT_I8_WIN; /* in[3], out[3], k[3], s[3], d[3], pads_begin[3] */
    int implicit = wn[0] == 1 && wn[6] == 1 && wn[15] == 0 && wn[7] * wn[8] > 1;
    for (int d = 1; d < 3; d++) implicit = implicit && wn[9 + d] == 1 && wn[12 + d] == 1;
    if (implicit) {
      p[FT_I8_WX] = 2;
      p[FT_I8_K] = wn[7] * wn[8] * ft_i8_k4(x->dims[1]);
    }
  }
  k->scratch = ft_i8_scratch(p);
  return 0;
}

/* The matmul ops on the core: a constant 2-D B, one zero point for A. */
static int i8_matrix_fits(ft_opctx *c, int a, int b, int az) {
  const ft_tensor *bt = c->in[b], *azt = opt_in(c, az);
  return bt->data && bt->rank == 2 && c->in[a]->rank >= 1 && (!azt || ft_numel(azt) == 1);
}

/* The convs on the core: a constant w, group 1. */
static int i8_conv_fits(ft_opctx *c, int w) { return c->in[w]->data && ft_attr_int(c->node, "group", 1) == 1; }

/* ---- MatMulInteger, QLinearMatMul ---- */

static int matmul_integer_infer(ft_opctx *c) {
  int rc = need_inputs(c, 2);
  if (rc) return rc;
  const ft_tensor *a = c->in[0], *b = c->in[1];
  if (!is_8bit(a->dtype) || !is_8bit(b->dtype)) return ft_infer_fail(c, FT_EINVALID, "A and B must be uint8 or int8");
  for (int k = 0; k < 2; k++) { /* a zero point has its operand's type */
    const ft_tensor *z = opt_in(c, 2 + k);
    if (z && z->dtype != c->in[k]->dtype)
      return ft_infer_fail(c, FT_EINVALID, "%s zero point is %s but %s is %s", k ? "b's" : "a's", ft_dtype_name(z->dtype),
                           k ? "B" : "A", ft_dtype_name(c->in[k]->dtype));
  }
  mm g;
  if ((rc = mm_shape(c, a, b, &g))) return rc;
  int64_t n;
  if ((rc = count_of(c, opt_in(c, 2), g.M, "a_zero_point", &n)) || (rc = count_of(c, opt_in(c, 3), g.N, "b_zero_point", &n))) return rc;
  c->out[0]->dtype = FT_INT32;
  mm_out(&g, c->out[0]);
  return 0;
}

#define PAIR_KERNEL(k, base, sa, sb, ...)                                                        \
  do {                                                                                           \
    if (sa == FT_UINT8 && sb == FT_UINT8) FT_K(k, base##_u8_u8##__VA_ARGS__);                    \
    else if (sa == FT_UINT8) FT_K(k, base##_u8_i8##__VA_ARGS__);                                 \
    else if (sb == FT_UINT8) FT_K(k, base##_i8_u8##__VA_ARGS__);                                 \
    else FT_K(k, base##_i8_i8##__VA_ARGS__);                                                     \
  } while (0)

static int matmul_integer_plan(ft_opctx *c, ft_kcall *k) {
  mm g;
  int rc = mm_shape(c, c->in[0], c->in[1], &g);
  if (rc) return rc;
  if (i8_matrix_fits(c, 0, 1, 2)) {
    i8_roles r = {0, -1, 2, 1, -1, 3, -1, -1, -1};
    i8_plan_matrix(c, k, &r, 0);
    return 0;
  }
  PAIR_KERNEL(k, ft_matmul_integer, c->in[0]->dtype, c->in[1]->dtype);
  const ft_tensor *az = opt_in(c, 2), *bz = opt_in(c, 3);
  return mm_params(&g, az ? ft_numel(az) : 0, bz ? ft_numel(bz) : 0, 1, k);
}

/* QLinear*: a/x 0, scale 1, zp 2; b/w 3, scale 4, zp 5; y scale 6, zp 7. */
static int qlinear_check(ft_opctx *c, int64_t per_out) {
  int rc = need_inputs(c, 8);
  if (rc) return rc;
  const ft_tensor *a = c->in[0], *b = c->in[3];
  if (!is_8bit(a->dtype) || !is_8bit(b->dtype) || !is_8bit(c->in[7]->dtype))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "quantized operands must be uint8 or int8");
  if (c->in[2]->dtype != a->dtype || c->in[5]->dtype != b->dtype)
    return ft_infer_fail(c, FT_EINVALID, "zero points must have their operand's type");
  for (int i = 1; i <= 6; i += (i == 1 ? 3 : 2))
    if (c->in[i]->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EUNSUPPORTED, "scales must be float32");
  int64_t n;
  if ((rc = count_of(c, c->in[1], 1, "the first operand's scale", &n)) || (rc = count_of(c, c->in[2], 1, "the first operand's zero point", &n)) ||
      (rc = count_of(c, c->in[4], per_out, "the second operand's scale", &n)) || (rc = count_of(c, c->in[5], per_out, "the second operand's zero point", &n)) ||
      (rc = count_of(c, c->in[6], 1, "y_scale", &n)) || (rc = count_of(c, c->in[7], 1, "y_zero_point", &n)) ||
      (rc = scales_ok(c, c->in[1], "the first operand's scale")) || (rc = scales_ok(c, c->in[4], "the second operand's scale")) ||
      (rc = scales_ok(c, c->in[6], "y_scale")))
    return rc;
  return 0;
}

static int qlinear_matmul_infer(ft_opctx *c) {
  int rc = need_inputs(c, 8);
  if (rc) return rc;
  mm g;
  if ((rc = mm_shape(c, c->in[0], c->in[3], &g)) || (rc = qlinear_check(c, g.N))) return rc;
  c->out[0]->dtype = c->in[7]->dtype;
  mm_out(&g, c->out[0]);
  return 0;
}

static int qlinear_matmul_plan(ft_opctx *c, ft_kcall *k) {
  mm g;
  int rc = mm_shape(c, c->in[0], c->in[3], &g);
  if (rc) return rc;
  if (i8_matrix_fits(c, 0, 3, 2)) {
    i8_roles r = {0, 1, 2, 3, 4, 5, 6, 7, -1};
    i8_plan_matrix(c, k, &r, 0);
    return 0;
  }
  if (c->in[7]->dtype == FT_UINT8) PAIR_KERNEL(k, ft_qlinear_matmul, c->in[0]->dtype, c->in[3]->dtype, _u8);
  else PAIR_KERNEL(k, ft_qlinear_matmul, c->in[0]->dtype, c->in[3]->dtype, _i8);
  return mm_params(&g, 1, ft_numel(c->in[5]), ft_numel(c->in[4]), k);
}

/* ---- ConvInteger, QLinearConv ------------------------------------------------------------- */

static int qconv_window(ft_opctx *c, const ft_tensor *x, const ft_tensor *w, ft_window *win) {
  if (x->rank < 3 || x->rank > 5) return ft_infer_fail(c, FT_EUNSUPPORTED, "x has rank %d; 3 to 5 are supported", x->rank);
  if (w->rank != x->rank) return ft_infer_fail(c, FT_EINVALID, "w has rank %d but x has rank %d", w->rank, x->rank);
  int64_t g = ft_attr_int(c->node, "group", 1);
  if (g < 1 || x->dims[1] % g || w->dims[0] % g || w->dims[1] * g != x->dims[1])
    return ft_infer_fail(c, FT_EINVALID, "group %lld does not fit %lld input and %lld output channels (w has %lld per group)",
                         (long long)g, (long long)x->dims[1], (long long)w->dims[0], (long long)w->dims[1]);
  return ft_window_infer(c, x, w->dims + 2, x->rank - 2, 0, win);
}

static void qconv_out(const ft_tensor *x, const ft_tensor *w, const ft_window *win, ft_tensor *y) {
  y->rank = x->rank;
  y->dims[0] = x->dims[0];
  y->dims[1] = w->dims[0];
  for (int i = 0; i < win->n; i++) y->dims[2 + i] = win->out[i];
}

static void qconv_params(ft_opctx *c, const ft_tensor *x, const ft_tensor *w, const ft_window *win,
                         int64_t nwz, int64_t nws, ft_kcall *k) {
  k->p[0] = x->dims[0];
  k->p[1] = x->dims[1];
  k->p[2] = w->dims[0];
  k->p[3] = ft_attr_int(c->node, "group", 1);
  k->p[4] = nwz;
  k->p[5] = nws;
  k->np = 6 + ft_window_params(win, k->p + 6);
  k->p[k->np++] = opt_in(c, 2) != NULL;                      /* x zero point */
  k->p[k->np++] = c->n_in > 8 && opt_in(c, 8) != NULL;        /* QLinearConv's bias */
}

static int conv_integer_infer(ft_opctx *c) {
  int rc = need_inputs(c, 2);
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *w = c->in[1];
  if (!is_8bit(x->dtype) || !is_8bit(w->dtype)) return ft_infer_fail(c, FT_EINVALID, "x and w must be uint8 or int8");
  ft_window win;
  int64_t n;
  if ((rc = qconv_window(c, x, w, &win)) || (rc = count_of(c, opt_in(c, 2), 1, "x_zero_point", &n)) ||
      (rc = count_of(c, opt_in(c, 3), w->dims[0], "w_zero_point", &n)))
    return rc;
  c->out[0]->dtype = FT_INT32;
  qconv_out(x, w, &win, c->out[0]);
  return 0;
}

static int conv_integer_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0], *w = c->in[1], *wz = opt_in(c, 3);
  ft_window win;
  int rc = qconv_window(c, x, w, &win);
  if (rc) return rc;
  if (i8_conv_fits(c, 1)) {
    i8_roles r = {0, -1, 2, 1, -1, 3, -1, -1, -1};
    return i8_plan_conv(c, k, &r);
  }
  PAIR_KERNEL(k, ft_conv_integer, x->dtype, w->dtype);
  qconv_params(c, x, w, &win, wz ? ft_numel(wz) : 0, 1, k);
  k->scratch = ft_qconv_scratch(k->p); /* int16 weights and one im2col chunk */
  return 0;
}

static int qlinear_conv_infer(ft_opctx *c) {
  int rc = need_inputs(c, 8);
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *w = c->in[3], *bias = opt_in(c, 8);
  ft_window win;
  if ((rc = qconv_window(c, x, w, &win)) || (rc = qlinear_check(c, w->dims[0]))) return rc;
  if (bias && (bias->dtype != FT_INT32 || ft_numel(bias) != w->dims[0]))
    return ft_infer_fail(c, FT_EINVALID, "bias must be int32 with one value per output channel");
  c->out[0]->dtype = c->in[7]->dtype;
  qconv_out(x, w, &win, c->out[0]);
  return 0;
}

static int qlinear_conv_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0], *w = c->in[3];
  ft_window win;
  int rc = qconv_window(c, x, w, &win);
  if (rc) return rc;
  if (i8_conv_fits(c, 3)) {
    i8_roles r = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    return i8_plan_conv(c, k, &r);
  }
  if (c->in[7]->dtype == FT_UINT8) PAIR_KERNEL(k, ft_qlinear_conv, x->dtype, w->dtype, _u8);
  else PAIR_KERNEL(k, ft_qlinear_conv, x->dtype, w->dtype, _i8);
  qconv_params(c, x, w, &win, ft_numel(c->in[5]), ft_numel(c->in[4]), k);
  return 0;
}

/* ---- ftax.QDQMatMul, ftax.QDQConv (compiler/fuse/fuse_qdq.c) -------------------------------
 * in: a (float32, quantized on the way in, or its 8-bit quantized form), a_scale, a_zp, w (int8
 * or uint8 constant), w_scale, w_zp, bias (float32, optional); out float32: the exact int32 sums
 * times a_scale * w_scale (+ bias, then Relu with relu=1, then `activation` with its
 * `activation_params` as ftax.FusedMatMul's, which the gemm_epilogue pass sets on QDQMatMul).
 * QDQMatMul: transB=1 for Gemm's [N, K]. A QDQMatMul or group-1 QDQConv may take y_scale and
 * y_zero_point (inputs 7, 8; the qdq_out pass): its output is then that float32 value
 * quantized, 8-bit. */
static int qdq_check(ft_opctx *c, int64_t N) {
  if (c->n_in < 6 || !c->in[0] || !c->in[1] || !c->in[3] || !c->in[4]) return ft_infer_fail(c, FT_EINVALID, "needs a, a_scale, w and w_scale");
  const ft_tensor *a = c->in[0], *w = c->in[3], *bias = opt_in(c, 6);
  if (a->dtype != FT_FLOAT && !is_8bit(a->dtype)) return ft_infer_fail(c, FT_EINVALID, "a must be float32, uint8 or int8");
  if (!is_8bit(w->dtype) || !w->data) return ft_infer_fail(c, FT_EINVALID, "w must be a uint8 or int8 constant");
  if (c->in[1]->dtype != FT_FLOAT || c->in[4]->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EINVALID, "scales must be float32");
  int64_t n;
  int rc;
  if ((rc = count_of(c, c->in[1], 1, "a_scale", &n)) || (rc = count_of(c, opt_in(c, 2), 1, "a_zero_point", &n)) ||
      (rc = count_of(c, c->in[4], N, "w_scale", &n)) || (rc = count_of(c, opt_in(c, 5), N, "w_zero_point", &n)) ||
      (rc = scales_ok(c, c->in[1], "a_scale")) || (rc = scales_ok(c, c->in[4], "w_scale")))
    return rc;
  if (bias && (bias->dtype != FT_FLOAT || ft_numel(bias) != N)) return ft_infer_fail(c, FT_EINVALID, "bias must be float32 with one value per output channel");
  int64_t act;
  if ((rc = ft_epilogue_activation(c, "activation", &act))) return rc;
  c->out[0]->dtype = FT_FLOAT;
  /* y_scale, y_zero_point (inputs 7, 8; compiler/fuse/fuse_qdq.c's requantized output): the
     output is QuantizeLinear(the float32 result, y_scale, y_zero_point), uint8 or int8 */
  const ft_tensor *ys = c->n_in > 7 ? opt_in(c, 7) : NULL, *yz = c->n_in > 8 ? opt_in(c, 8) : NULL;
  if (ys || yz) {
    if (!ys || !yz || !ys->data || !yz->data || ys->dtype != FT_FLOAT || !is_8bit(yz->dtype) || ft_numel(ys) != 1 || ft_numel(yz) != 1)
      return ft_infer_fail(c, FT_EINVALID, "y_scale and y_zero_point must be constants of one value, float32 and 8-bit");
    if ((rc = scales_ok(c, ys, "y_scale"))) return rc;
    if (!ft_i8_act_vector(act))
      return ft_infer_fail(c, FT_EUNSUPPORTED, "a requantized QDQ output takes Relu, Clip, Gelu, Sigmoid or Silu, no other activation");
    c->out[0]->dtype = yz->dtype;
  }
  return 0;
}

static int qdq_matmul_infer(ft_opctx *c) {
  if (c->n_in < 4 || !c->in[0] || !c->in[3]) return ft_infer_fail(c, FT_EINVALID, "needs a and w");
  const ft_tensor *a = c->in[0], *w = c->in[3];
  if (w->rank != 2) return ft_infer_fail(c, FT_EINVALID, "w must be a matrix");
  if (c->n_in > 9) return ft_infer_fail(c, FT_EINVALID, "takes at most 9 inputs");
  if (ft_attr_int(c->node, "transB", 0)) {
    if (a->rank != 2 || a->dims[1] != w->dims[1]) return ft_infer_fail(c, FT_EINVALID, "a must be [M, K] for w [N, K]");
    int rc = qdq_check(c, w->dims[0]);
    if (rc) return rc;
    c->out[0]->rank = 2;
    c->out[0]->dims[0] = a->dims[0];
    c->out[0]->dims[1] = w->dims[0];
    return 0;
  }
  mm g;
  int rc = mm_shape(c, a, w, &g);
  if (rc || (rc = qdq_check(c, g.N))) return rc;
  mm_out(&g, c->out[0]);
  return 0;
}

static int qdq_matmul_plan(ft_opctx *c, ft_kcall *k) {
  int yq = c->out[0]->dtype != FT_FLOAT;
  i8_roles r = {0, 1, 2, 3, 4, 5, yq ? 7 : -1, yq ? 8 : -1, 6};
  i8_plan_matrix(c, k, &r, ft_attr_int(c->node, "transB", 0) != 0);
  k->p[FT_I8_YQ] = yq;
  return 0;
}

/* A depthwise QDQConv (group = C = C_out) runs ft_conv_qdw_f32 (templates/c/conv.h): float x
 * quantized on the way in (or x already 8-bit, of x_zero_point's type), 1-D or 2-D, at most
 * FT_QDW_MAXTAPS taps (its sums stay exact), w's zero points 0, Relu or one activation. */
static int qdq_depthwise_check(ft_opctx *c) {
  const ft_tensor *x = c->in[0], *w = c->in[3], *wz = opt_in(c, 5);
  if (x->dims[1] != w->dims[0] || w->dims[1] != 1 || x->rank > 4)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "group must be 1, or the channel count (depthwise, 1-D or 2-D)");
  const ft_tensor *xz = opt_in(c, 2);
  if (x->dtype != FT_FLOAT && x->dtype != FT_UINT8 && x->dtype != FT_INT8)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "a depthwise QDQConv takes x in float32, uint8 or int8");
  if (x->dtype != FT_FLOAT && xz && xz->dtype != x->dtype)
    return ft_infer_fail(c, FT_EINVALID, "x_zero_point must have x's type");
  if (ft_numel(w) / (w->dims[0] ? w->dims[0] : 1) > FT_QDW_MAXTAPS)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "a depthwise QDQConv takes at most %d taps", FT_QDW_MAXTAPS);
  if (wz) {
    if (!wz->data) return ft_infer_fail(c, FT_EUNSUPPORTED, "a depthwise QDQConv needs a constant w_zero_point");
    for (int64_t i = 0; i < ft_numel(wz); i++)
      if (((const uint8_t *)wz->data)[i]) return ft_infer_fail(c, FT_EUNSUPPORTED, "a depthwise QDQConv needs w_zero_point 0");
  }
  if (ft_attr_int(c->node, "relu", 0) && ft_attr_str(c->node, "activation", "")[0])
    return ft_infer_fail(c, FT_EUNSUPPORTED, "a depthwise QDQConv takes relu or an activation, not both");
  return 0;
}

static int qdq_conv_infer(ft_opctx *c) {
  if (c->n_in < 4 || !c->in[0] || !c->in[3]) return ft_infer_fail(c, FT_EINVALID, "needs x and w");
  const ft_tensor *x = c->in[0], *w = c->in[3];
  ft_window win;
  int rc = qconv_window(c, x, w, &win);
  if (rc || (rc = qdq_check(c, w->dims[0]))) return rc;
  if (ft_attr_int(c->node, "group", 1) != 1 && (rc = qdq_depthwise_check(c))) return rc;
  if (ft_attr_int(c->node, "group", 1) != 1 && c->out[0]->dtype != FT_FLOAT)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "a depthwise QDQConv has a float32 output");
  qconv_out(x, w, &win, c->out[0]);
  return 0;
}

static const ft_kentry qdw_k[] = {{"ft_conv_qdw_f32", ft_conv_qdw_f32, FT_FLOAT, 0, NULL, NULL}, {0}};

static int qdq_depthwise_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0], *w = c->in[3], *xz = opt_in(c, 2);
  ft_window win;
  int rc = qconv_window(c, x, w, &win);
  if (rc) return rc;
  int64_t *p = k->p, act = FT_ACT_NONE;
  memset(p, 0, sizeof(int64_t) * FT_QDW_NP);
  p[FT_CV_MODE] = FT_CV_DEPTHWISE;
  p[FT_CV_N] = x->dims[0];
  p[FT_CV_C] = p[FT_CV_CO] = p[FT_CV_G] = x->dims[1];
  p[FT_CV_HAS_BIAS] = opt_in(c, 6) != NULL;
  ft_window_params(&win, p + FT_CV_IN);
  ft_epilogue_activation(c, "activation", &act); /* checked by the infer */
  p[FT_CV_ACT] = ft_attr_int(c->node, "relu", 0) ? FT_ACT_RELU : act;
  p[FT_QDW_XZ] = !xz ? 0 : xz->dtype == FT_INT8 ? 2 : 1;
  p[FT_QDW_W_SIGNED] = w->dtype == FT_INT8;
  p[FT_QDW_NWS] = ft_numel(c->in[4]);
  p[FT_QDW_XQ] = x->dtype == FT_UINT8 ? 1 : x->dtype == FT_INT8 ? 2 : 0;
  k->np = FT_QDW_NP;
  const ft_attr *pa = ft_attr_find(c->node, "activation_params");
  k->f[0] = 1; k->f[1] = 1; k->f[2] = 0; k->f[3] = 0;
  for (int i = 0; pa && i < 2 && i < pa->n_floats; i++) k->f[2 + i] = pa->floats[i];
  k->nf = 4;
  k->entry = qdw_k;
  k->templates = "conv";
  k->scratch = sizeof(float) * (size_t)x->dims[1];
  k->prepack.input = 3;
  k->prepack.flag_p = FT_CV_PACKED;
  k->prepack.pack = ft_conv_qdw_pack_w;
  return 0;
}

static int qdq_conv_plan(ft_opctx *c, ft_kcall *k) {
  if (ft_attr_int(c->node, "group", 1) != 1) return qdq_depthwise_plan(c, k);
  int yq = c->out[0]->dtype != FT_FLOAT;
  i8_roles r = {0, 1, 2, 3, 4, 5, yq ? 7 : -1, yq ? 8 : -1, 6};
  int rc = i8_plan_conv(c, k, &r);
  k->p[FT_I8_YQ] = yq;
  return rc;
}

const ft_opdesc ft_ops_quant[] = {
    {"QuantizeLinear", "", quantize_infer, quantize_plan, "quant", 0},
    {"DequantizeLinear", "", dequantize_infer, dequantize_plan, "quant", 0},
    {"DynamicQuantizeLinear", "", dynamic_quantize_infer, dynamic_quantize_plan, "quant", 0},
    {"MatMulInteger", "", matmul_integer_infer, matmul_integer_plan, "quant", 0},
    {"QLinearMatMul", "", qlinear_matmul_infer, qlinear_matmul_plan, "quant", 0},
    {"ConvInteger", "", conv_integer_infer, conv_integer_plan, "quant", 0},
    {"QLinearConv", "", qlinear_conv_infer, qlinear_conv_plan, "quant", 0},
    {"QDQMatMul", "ftax", qdq_matmul_infer, qdq_matmul_plan, "gemm_int8", 0},
    {"QDQConv", "ftax", qdq_conv_infer, qdq_conv_plan, "gemm_int8", 0},
    {"DynamicQuantizeScale", "ftax", dynamic_quantize_scale_infer, dynamic_quantize_scale_plan, "quant", 0},
    {0}};

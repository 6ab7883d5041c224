/* Conv and ConvTranspose (fp32, NCHW, 1-D to 3-D). Kernels: templates/c/conv.h on the GEMM
 * core of templates/c/gemm.h; constant weights are packed at compile time. */
#include <stdio.h>
#include <string.h>

#include "conv.h"
#include "cuda_twins.h"
#include "dimmath.h"
#include "op.h"
#include "window.h"
#include "winograd.h"

/* The CUDA twin (templates/cuda/conv.cuh): cuDNN, which reads the weights as the model has
 * them, pads both ends of a dim alike, and has the epilogue activations of
 * templates/cuda/runtime.cuh's ftc_act. */
static int conv_pads_symmetric(const int64_t *p) { /* the model's output size is what cuDNN gives */
  for (int i = 0; i < 3; i++) {
    int64_t in = p[FT_CV_IN + i], k = p[FT_CV_K + i], s = p[FT_CV_S + i], d = p[FT_CV_D + i], pb = p[FT_CV_P + i];
    int64_t span = (k - 1) * d + 1, got = (in + 2 * pb - span) / s + 1;
    if (got != p[FT_CV_OUT + i]) return 0;
  }
  return 1;
}
static int twin_check(const int64_t *p, char *why, size_t wn) {
  if (p[FT_CV_PACKED]) snprintf(why, wn, "weights were pre-packed for the CPU");
  else if (!conv_pads_symmetric(p)) snprintf(why, wn, "different pads at the two ends of a dim");
  else if (!ft_act_known(p[FT_CV_ACT])) snprintf(why, wn, "activation %d", (int)p[FT_CV_ACT]);
  else return 0;
  return -1;
}
/* the twin writes its output before it reads the residual (cuDNN, then the epilogue kernel):
 * the output gets storage of its own */
static void twin_prepare(ft_kcall *k) {
  if (k->p[FT_CV_RES]) k->no_inplace = 1;
}
static const ft_twin conv_tw = {"ftc_conv<$0>", "ftc_conv_init<$0>", "ftc_conv_free", "conv", FT_TW_DNN,
                                twin_check, twin_prepare};
static const ft_kentry conv_k[] = {{"ft_conv_f32", ft_conv_f32, FT_FLOAT, 0, &conv_tw, NULL}, {0}};
static const ft_kentry wino_k[] = {{"ft_conv_wino_f32", ft_conv_wino_f32, FT_FLOAT, 0, &conv_tw, NULL}, {0}};
const ft_kentry *const ft_kernels_conv[] = {conv_k, wino_k, NULL};

/* im2col / col2im chunk: columns (a multiple of NR) so that rows x columns floats fill about
 * this many bytes, which then stay in L2 while the weights pass over them. */
#define CHUNK_BYTES (256 * 1024)

static int64_t chunk_cols(int64_t rows, int64_t cols) {
  int64_t c = CHUNK_BYTES / (4 * (rows > 0 ? rows : 1)) / FT_GEMM_NR * FT_GEMM_NR;
  if (c < FT_GEMM_NR) c = FT_GEMM_NR;
  int64_t all = (cols + FT_GEMM_NR - 1) / FT_GEMM_NR * FT_GEMM_NR;
  return c < all ? c : all;
}

/* Checks shared by both ops; k gets the kernel's spatial sizes (from W, or kernel_shape). */
static int conv_common(ft_opctx *c, int64_t *k, int *nk) {
  if (c->n_in < 2 || !c->in[0] || !c->in[1]) return ft_infer_fail(c, FT_EINVALID, "needs inputs X and W");
  const ft_tensor *x = c->in[0], *w = c->in[1], *b = c->n_in > 2 ? c->in[2] : NULL;
  if (x->dtype != FT_FLOAT || w->dtype != FT_FLOAT || (b && b->dtype != FT_FLOAT))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is supported for float32 only (got %s)", c->node->op_type, ft_dtype_name(x->dtype));
  if (x->rank < 3 || x->rank > 5)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "X has rank %d; 3 to 5 (1-D to 3-D) are supported", x->rank);
  if (w->rank != x->rank) return ft_infer_fail(c, FT_EINVALID, "W has rank %d but X has rank %d", w->rank, x->rank);
  *nk = x->rank - 2;
  const int64_t *ks;
  int m = ft_attr_ints(c->node, "kernel_shape", &ks);
  if (m >= 0 && m != *nk) return ft_infer_fail(c, FT_EINVALID, "kernel_shape has %d values for %d spatial dims", m, *nk);
  for (int i = 0; i < *nk; i++) {
    k[i] = w->dims[2 + i];
    if (m >= 0 && ks[i] != k[i])
      return ft_infer_fail(c, FT_EINVALID, "kernel_shape[%d] = %lld but W has %lld", i, (long long)ks[i], (long long)k[i]);
  }
  int64_t g = ft_attr_int(c->node, "group", 1);
  if (g < 1) return ft_infer_fail(c, FT_EINVALID, "group must be positive, got %lld", (long long)g);
  return 0;
}

/* Each op's output geometry: conv_window (Conv's, by ft_window_infer) or convt_window. */
typedef int (*conv_geometry)(ft_opctx *c, const int64_t *k, int nk, ft_window *w);

/* The rest of infer, the same for both ops once C_out is known: bias shape, geometry, and
 * Y = [N, C_out, spatial sizes]. */
static int conv_output(ft_opctx *c, int64_t CO, const int64_t *k, int nk, conv_geometry geometry) {
  const ft_tensor *x = c->in[0], *b = c->n_in > 2 ? c->in[2] : NULL;
  if (b && (b->rank != 1 || b->dims[0] != CO))
    return ft_infer_fail(c, FT_EINVALID, "bias B must be [%lld]", (long long)CO);
  ft_window win;
  int rc = geometry(c, k, nk, &win);
  if (rc) return rc;
  ft_tensor *y = c->out[0];
  y->dtype = FT_FLOAT;
  y->rank = x->rank;
  y->dims[0] = x->dims[0];
  y->dims[1] = CO;
  for (int i = 0; i < nk; i++) y->dims[2 + i] = win.out[i];
  return 0;
}

/* The start of plan, the same for both ops: geometry, and the kernel parameters they share. */
static int conv_plan_common(ft_opctx *c, int64_t CO, conv_geometry geometry, ft_window *win, int64_t *p) {
  int64_t ks[FT_WIN_MAXD];
  int nk = 0;
  conv_common(c, ks, &nk);
  int rc = geometry(c, ks, nk, win);
  if (rc) return rc;
  memset(p, 0, sizeof(int64_t) * FT_CV_NP);
  p[FT_CV_N] = c->in[0]->dims[0];
  p[FT_CV_C] = c->in[0]->dims[1];
  p[FT_CV_CO] = CO;
  p[FT_CV_G] = ft_attr_int(c->node, "group", 1);
  p[FT_CV_HAS_BIAS] = c->n_in > 2 && c->in[2];
  ft_window_params(win, p + FT_CV_IN);
  return 0;
}

/* ---- Conv ---- */

static int conv_window(ft_opctx *c, const int64_t *k, int nk, ft_window *w) {
  return ft_window_infer(c, c->in[0], k, nk, 0, w);
}

/* The shifted-rows GEMM (conv.h) copies every phase plane of a strided input; worth it when
 * the taps cover every phase (window span at least the stride), as in 3x3/2 and 7x7/2 convs.
 * A 1x1/2 conv reads a quarter of its input: im2col gathers just that. */
static int shifted_ok(const ft_window *w) {
  for (int i = 0; i < w->n; i++)
    if (w->s[i] > 4 || (w->k[i] - 1) * w->d[i] + 1 < w->s[i]) return 0;
  return 1;
}

/* The transposed GEMM (conv.h's _T modes: vectors along C_out, each output position a
 * broadcast) where its lanes are at least as full as the plain one's (vectors along the output
 * plane, 32 positions a panel: a 7x7 plane fills 49 of 64 lanes, a 1x1 plane 1 of 32; the
 * transposed GEMM fills 24 of 32 for C_out 24). Measured on the zoo's shapes, alternating
 * (bench/results/cpu-2core-avx512/transposed_conv.md): the transposed pointwise is 5-25%
 * faster on equal lanes (no partial rows, the epilogue on whole vectors) and 5-20% slower
 * when C_out leaves a part-empty vector. A strided conv's shifted GEMM turns into im2col's
 * where the output plane is small (up to 16x16; 28x28 measured slower): the copy is small
 * next to the GEMM. So does a stride-1 conv's on a plane of at most 64 outputs: ResNet-50's
 * 512x7x7 3x3 convs, whose shifted GEMM computes 63 columns of padded rows in two 32-wide
 * panels for 49 outputs (the whole model: ~3% less CPU time at 1 thread, alternating under
 * load). Only for constant weights, which are packed for it. */
static int transposed_fuller(const int64_t *p) {
  int64_t S = p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2], Mg = p[FT_CV_CO] / p[FT_CV_G];
  int64_t lanes_t = Mg / 32 * 32 + (Mg % 32 == 0 ? 0 : Mg % 32 <= 16 ? 16 : 32), lanes_n = (S + 31) / 32 * 32;
  return Mg * lanes_n >= S * lanes_t; /* Mg / lanes_t >= S / lanes_n */
}

/* A pointwise conv with few input channels (K = C_in/g up to 64) stays in the plain GEMM when
 * its output plane fills the plain tile's lanes (at most 5% empty: 55x55, 27x27, 56x56, not
 * 13x13) and C_out/g fills the rows of at least two or three 12-row tiles: there a tile does
 * K FMAs per output, and the transposed tile's two 16x16 transposes per 14 x 32 outputs cost
 * more than the plain tile's partial lanes. Measured at 1 thread, alternating (the plain tile
 * with its clamp store, gemm.h): plain / transposed time 0.80 at 16x55x55 -> 64, 0.91 at
 * 32x27x27 -> 128, 0.81 at 16x112x112 -> 96, 0.96 at 64x56x56 -> 64; 1.03-1.07 at 13x13 and
 * with C_out 16 (64x55x55 -> 16), which stay transposed; with a larger K the transposed GEMM
 * is ahead again (0.97-1.19 at K 256-1024). */
static int pointwise_plain_fits(const int64_t *p) {
  int64_t S = p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2], G = p[FT_CV_G];
  int64_t Kg = p[FT_CV_C] / G, Mg = p[FT_CV_CO] / G, lanes_n = (S + 31) / 32 * 32;
  return Kg <= 64 && Mg >= 32 && S * 20 >= lanes_n * 19;
}

static int64_t transposed_mode(const int64_t *p, const ft_window *win) {
  int64_t S = p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2];
  int fuller = transposed_fuller(p), strided = 0;
  for (int i = 0; i < win->n; i++) strided |= win->s[i] > 1;
  if (p[FT_CV_MODE] == FT_CV_POINTWISE && fuller && !pointwise_plain_fits(p)) return FT_CV_POINTWISE_T;
  if (p[FT_CV_MODE] == FT_CV_IM2COL && fuller) return FT_CV_IM2COL_T;
  if (p[FT_CV_MODE] == FT_CV_SHIFTED && (strided ? S <= 256 : S <= 64) && fuller) return FT_CV_IM2COL_T;
  return p[FT_CV_MODE];
}

/* The transposed im2col's chunk: its GEMM re-reads the weights for every chunk, so one chunk
 * holds the whole plane up to a larger buffer. */
#define CHUNK_BYTES_T (4 * 1024 * 1024)
static int64_t chunk_cols_t(int64_t rows, int64_t cols) {
  int64_t c = CHUNK_BYTES_T / (4 * (rows > 0 ? rows : 1)) / FT_GEMM_NR * FT_GEMM_NR;
  if (c < FT_GEMM_NR) c = FT_GEMM_NR;
  return c < cols ? c : cols;
}

/* On the bf16 core (ops/bf16.c) a shifted conv with an output plane up to 32x32 runs as
 * im2col^T, stride or not: there the transposed GEMM keeps K whole and splits a small plane
 * evenly, and conv_bf16.h makes the im2col a vector at a time from whole output rows (so a
 * chunk is whole rows). Measured at 1 thread, kernel alone (the two modes alternating), 3x3
 * convs as in ResNet-50: 512x7x7 1.75x faster, 256x14x14 1.2x, 128x28x28 1.07x, stride 2
 * 56->28 1.08x; 64x56x56 0.97x and the 7x7/2 stem 0.8x, so larger planes stay shifted. */
void ft_conv_bf16_small_plane(ft_kcall *k) {
  int64_t *p = k->p, OW = p[FT_CV_OUT + 2], S = p[FT_CV_OUT] * p[FT_CV_OUT + 1] * OW;
  if (p[FT_CV_MODE] != FT_CV_SHIFTED || S > 1024 || !transposed_fuller(p)) return;
  int64_t chunk = chunk_cols_t(ft_conv_kg(p), S) / OW * OW;
  p[FT_CV_MODE] = FT_CV_IM2COL_T;
  p[FT_CV_CHUNK] = chunk > OW ? chunk : OW;
}

/* Winograd F(4,3) (winograd.h): 2-D 3x3, stride 1, dilation 1, one group, constant weights
 * (transformed at compile time). Measured at 1 thread against the direct kernel (same process,
 * alternating): 0.5-0.8x its time at 64x56x56, 128x28x28, 256x14x14, 48->192 and 64->256 at
 * 13x13; slower at 512x7x7 (4 tiles: each GEMM is M = 4 rows over 4x the direct kernel's weight
 * bytes). With fewer channels the transforms weigh more: on Zen 4 that made 32->128 at 27x27
 * about even and 16 input channels slower, so the bound was 48; on Zen 5 (AVX-512 on 512-bit
 * units), once the 36 GEMMs read V's rows in place over all of K (gemm.h's ft_gemm_column, as
 * MatMul on constant weights: before, each K block of each sliver was packed again for every
 * column panel), in SqueezeNet 1.1's program at 1 thread, Winograd took
 * 0.60x the direct kernel's time at 32->128 27x27 and 0.83x at 16->64 55x55 (the whole model
 * 3.10 -> 2.81-2.86 ms), so the bound is 16. */
#define WINO_MIN_CHANNELS 16
#define WINO_MIN_TILES 12
static int winograd_ok(const ft_window *w, int64_t N, int64_t G, int64_t C, int64_t CO, int weights_known) {
  if (w->n != 2 || G != 1 || !weights_known || C < WINO_MIN_CHANNELS || CO < WINO_MIN_CHANNELS) return 0;
  for (int i = 0; i < 2; i++)
    if (w->k[i] != 3 || w->s[i] != 1 || w->d[i] != 1) return 0;
  return N * ((w->out[0] + 3) / 4) * ((w->out[1] + 3) / 4) >= WINO_MIN_TILES;
}

/* Back from Winograd to the shifted-rows kernel (--no-winograd, bf16, the CUDA target). */
void ft_conv_winograd_off(ft_kcall *k) {
  if (k->entry != wino_k) return;
  k->p[FT_CV_MODE] = FT_CV_SHIFTED;
  k->entry = conv_k;
  k->templates = NULL;
  k->scratch = ft_conv_scratch(k->p);
  k->prepack.pack = ft_conv_pack_w;
}

static int conv_infer(ft_opctx *c) {
  int64_t k[FT_WIN_MAXD];
  int nk = 0;
  int rc = conv_common(c, k, &nk);
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *w = c->in[1];
  int64_t g = ft_attr_int(c->node, "group", 1), C = x->dims[1], CO = w->dims[0];
  int64_t cg;
  if (C % g || __builtin_mul_overflow(w->dims[1], g, &cg) || cg != C || CO % g)
    return ft_infer_fail(c, FT_EINVALID, "X has %lld channels and W is [%lld, %lld, ...] with group %lld: W must be [C_out, C_in/group, ...] with C_out divisible by group",
                         (long long)C, (long long)CO, (long long)w->dims[1], (long long)g);
  return conv_output(c, CO, k, nk, conv_window);
}

static int conv_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0], *w = c->in[1];
  int64_t *p = k->p, G = ft_attr_int(c->node, "group", 1), C = x->dims[1], CO = w->dims[0];
  ft_window win;
  int rc = conv_plan_common(c, CO, conv_window, &win, p);
  if (rc) return rc;
  int nk = win.n, pointwise = 1;
  for (int i = 0; i < nk; i++)
    if (win.k[i] != 1 || win.s[i] != 1 || win.pb[i] || win.pe[i]) pointwise = 0;
  if (G == C && CO == C && nk <= 2) p[FT_CV_MODE] = FT_CV_DEPTHWISE;
  else if (pointwise) p[FT_CV_MODE] = FT_CV_POINTWISE;
  else if (nk <= 2 && shifted_ok(&win)) p[FT_CV_MODE] = FT_CV_SHIFTED;
  else p[FT_CV_MODE] = FT_CV_IM2COL;
  int64_t S_out = p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2];
  if (w->data) p[FT_CV_MODE] = transposed_mode(p, &win);
  p[FT_CV_CHUNK] = p[FT_CV_MODE] == FT_CV_IM2COL_T ? chunk_cols_t(ft_conv_kg(p), S_out) : chunk_cols(ft_conv_kg(p), S_out);
  k->np = FT_CV_NP;
  k->f[0] = 1; k->f[1] = 1; k->f[2] = 0; k->f[3] = 0;
  k->nf = 4;
  k->entry = conv_k;
  k->scratch = ft_conv_scratch(p);
  if (w->data) { /* depthwise too: 16-channel blocks of tap vectors (ft_conv_dw_pack_w) */
    k->prepack.input = 1;
    k->prepack.flag_p = FT_CV_PACKED;
    k->prepack.pack = ft_conv_pack_w;
  }
  if (winograd_ok(&win, x->dims[0], G, C, CO, w->data != NULL)) {
    p[FT_CV_MODE] = FT_CV_WINOGRAD;
    k->entry = wino_k;
    k->templates = "winograd";
    k->scratch = ft_conv_wino_scratch(p);
    k->prepack.pack = ft_conv_wino_pack_w;
  }
  return 0;
}

/* Sides of a blocked edge (compiler/passes/blocked.c): fp32 conv calls of 2-D (or 1-D) planes
 * with packed weights, a multiple of 16 channels on that side and one image plane per block.
 * Either side is a pointwise^T conv of one group (the writer with no residual: ft_pwt_store; the
 * reader: ft_pwt_tile) or a depthwise conv that the channel-vector path takes (ft_dwv_geometry:
 * the same call the kernel makes; the writer with no residual: ft_dwv_item). */
int ft_conv_blocked_side(const ft_kcall *k, int side) {
  const int64_t *p = k->p;
  if (k->entry != conv_k || !p[FT_CV_PACKED] || p[FT_CV_IN] != 1 || p[FT_CV_OUT] != 1) return 0;
  if (side == FT_CV_Y_BLOCKED && (p[FT_CV_RES] || p[FT_CV_CO] % 16)) return 0;
  if (side == FT_CV_X_BLOCKED && p[FT_CV_C] % 16) return 0;
  if (side != FT_CV_X_BLOCKED && side != FT_CV_Y_BLOCKED) return 0;
  if (p[FT_CV_MODE] == FT_CV_POINTWISE_T) return p[FT_CV_G] == 1;
  ft_dwv_geo g;
  return p[FT_CV_MODE] == FT_CV_DEPTHWISE && ft_dwv_geometry(p, &g);
}

/* A plain pointwise conv (the mode its own shape chose, pointwise_plain_fits) whose output a
 * depthwise conv alone reads goes transposed when that makes the edge blocked: the transposed
 * tile then stores its vectors as they are and the depthwise conv reads them without its
 * transposes. MobileNetV2's 16 -> 96 at 112x112 and 24 -> 144 at 56x56 expansions with their
 * depthwise convs: the pointwise convs unchanged, the depthwise convs 151 -> 129, 102 -> 94
 * and 54 -> 47 us (1 thread, per call). */
int ft_conv_blocked_transpose(ft_kcall *k) {
  int64_t *p = k->p;
  if (k->entry != conv_k || !p[FT_CV_PACKED] || p[FT_CV_MODE] != FT_CV_POINTWISE || p[FT_CV_G] != 1) return 0;
  p[FT_CV_MODE] = FT_CV_POINTWISE_T;
  if (!ft_conv_blocked_side(k, FT_CV_Y_BLOCKED)) {
    p[FT_CV_MODE] = FT_CV_POINTWISE;
    return 0;
  }
  k->scratch = ft_conv_scratch(p);
  return 1;
}

/* ---- ConvTranspose ---- */

/* Geometry: output sizes and begin pads from pads / output_shape / auto_pad. */
static int convt_window(ft_opctx *c, const int64_t *k, int nk, ft_window *w) {
  const ft_tensor *x = c->in[0];
  memset(w, 0, sizeof *w);
  w->n = nk;
  const int64_t *v;
  int64_t pads[2 * FT_WIN_MAXD] = {0}, opad[FT_WIN_MAXD] = {0}, oshape[FT_WIN_MAXD];
  for (int i = 0; i < nk; i++) { w->s[i] = 1; w->d[i] = 1; }
  int m;
  if ((m = ft_attr_ints(c->node, "strides", &v)) >= 0) {
    if (m != nk) return ft_infer_fail(c, FT_EINVALID, "strides has %d values for %d spatial dims", m, nk);
    for (int i = 0; i < nk; i++) w->s[i] = v[i];
  }
  if ((m = ft_attr_ints(c->node, "dilations", &v)) >= 0) {
    if (m != nk) return ft_infer_fail(c, FT_EINVALID, "dilations has %d values for %d spatial dims", m, nk);
    for (int i = 0; i < nk; i++) w->d[i] = v[i];
  }
  if ((m = ft_attr_ints(c->node, "pads", &v)) >= 0) {
    if (m != 2 * nk) return ft_infer_fail(c, FT_EINVALID, "pads has %d values for %d spatial dims", m, nk);
    for (int i = 0; i < 2 * nk; i++) pads[i] = v[i];
  }
  if ((m = ft_attr_ints(c->node, "output_padding", &v)) >= 0) {
    if (m != nk) return ft_infer_fail(c, FT_EINVALID, "output_padding has %d values for %d spatial dims", m, nk);
    for (int i = 0; i < nk; i++) opad[i] = v[i];
  }
  int have_oshape = 0;
  if ((m = ft_attr_ints(c->node, "output_shape", &v)) >= 0) {
    if (m != nk && m != nk + 2) return ft_infer_fail(c, FT_EINVALID, "output_shape has %d values for %d spatial dims", m, nk);
    for (int i = 0; i < nk; i++) oshape[i] = v[m - nk + i];
    have_oshape = 1;
  }
  const char *ap = ft_attr_str(c->node, "auto_pad", "NOTSET");
  int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
  for (int i = 0; i < nk; i++) {
    int64_t in = x->dims[2 + i], s = w->s[i], d = w->d[i];
    if (k[i] < 1 || s < 1 || d < 1) return ft_infer_fail(c, FT_EINVALID, "kernel, strides and dilations must be positive");
    w->in[i] = in;
    w->k[i] = k[i];
    /* full = s * (in - 1) + opad + (k - 1) * d + 1, every step checked (attributes are the model's) */
    int64_t full, t1, t2;
    if (opad[i] < 0) return ft_infer_fail(c, FT_EINVALID, "output_padding must not be negative");
    if (__builtin_mul_overflow(s, in - 1, &t1) || __builtin_mul_overflow(k[i] - 1, d, &t2) ||
        __builtin_add_overflow(t1, t2, &full) || __builtin_add_overflow(full, opad[i], &full) ||
        __builtin_add_overflow(full, 1, &full))
      return ft_infer_fail(c, FT_EUNSUPPORTED, "the output of spatial dim %d is too large (input %lld, kernel %lld, stride %lld, dilation %lld)",
                           i, (long long)in, (long long)k[i], (long long)s, (long long)d);
    if (have_oshape || same) {
      int64_t o = oshape[i], total;
      if (!have_oshape && ft_dim_mul(c, in, s, &o, "the output (input x stride)")) return c->err->code;
      if (o < 1) return ft_infer_fail(c, FT_EINVALID, "output spatial dim %d would be %lld", i, (long long)o);
      total = full - o; /* both positive: no overflow */
      if (total < 0) { w->pb[i] = 0; w->pe[i] = total; } /* a larger output: extra at the end */
      else if (!strcmp(ap, "SAME_UPPER")) { w->pb[i] = total / 2; w->pe[i] = total - total / 2; }
      else { w->pb[i] = total - total / 2; w->pe[i] = total / 2; }
      w->out[i] = o;
    } else {
      if (!strcmp(ap, "NOTSET") || !*ap) { w->pb[i] = pads[i]; w->pe[i] = pads[nk + i]; }
      if (w->pb[i] < 0 || w->pe[i] < 0) return ft_infer_fail(c, FT_EUNSUPPORTED, "negative pads are not supported");
      w->out[i] = full - w->pb[i]; /* both non-negative */
      if (__builtin_sub_overflow(w->out[i], w->pe[i], &w->out[i])) w->out[i] = 0;
    }
    if (w->out[i] < 1) return ft_infer_fail(c, FT_EINVALID, "output spatial dim %d would be %lld", i, (long long)w->out[i]);
  }
  return 0;
}

static int convt_infer(ft_opctx *c) {
  int64_t k[FT_WIN_MAXD];
  int nk = 0;
  int rc = conv_common(c, k, &nk);
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *w = c->in[1];
  int64_t g = ft_attr_int(c->node, "group", 1), C = x->dims[1], CO;
  if (ft_dim_mul(c, w->dims[1], g, &CO, "C_out (W's dim 1 x group)")) return c->err->code;
  if (w->dims[0] != C || C % g)
    return ft_infer_fail(c, FT_EINVALID, "X has %lld channels but W is [%lld, ...] with group %lld: W must be [C_in, C_out/group, ...]",
                         (long long)C, (long long)w->dims[0], (long long)g);
  return conv_output(c, CO, k, nk, convt_window);
}

static int convt_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *w = c->in[1];
  int64_t *p = k->p;
  ft_window win;
  int rc = conv_plan_common(c, w->dims[1] * ft_attr_int(c->node, "group", 1), convt_window, &win, p);
  if (rc) return rc;
  int64_t Mk = w->dims[1] * p[FT_CV_K] * p[FT_CV_K + 1] * p[FT_CV_K + 2];
  int64_t S_in = p[FT_CV_IN] * p[FT_CV_IN + 1] * p[FT_CV_IN + 2];
  p[FT_CV_CHUNK] = chunk_cols(Mk, S_in);
  k->np = FT_CV_NP;
  k->nf = 0;
  FT_K(k, ft_convtranspose_f32);
  k->scratch = ft_convt_scratch(p);
  if (w->data) {
    k->prepack.input = 1;
    k->prepack.flag_p = FT_CV_PACKED;
    k->prepack.pack = ft_convt_pack_w;
  }
  return 0;
}

const ft_opdesc ft_ops_conv[] = {
    {"Conv", "", conv_infer, conv_plan, "conv", FT_OP_PAT(FT_PAT_OUT_FUSABLE)},
    {"ConvTranspose", "", convt_infer, convt_plan, "conv", 0},
    {0}};

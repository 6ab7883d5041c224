/* Every GEMM and convolution call that ftaxc plans for a model, timed twice in one process: as
 * ftaxc's kernel runs it (the planned call itself: its parameters, its compile-time packed
 * weights, the kernel function of libftax) and as oneDNN runs the same shape (its own best
 * layouts, chosen with format "any" and reordered before timing, as a framework built on it
 * would keep them) with the same epilogue as post-ops: bias, the activation (Relu, Clip, Tanh,
 * Sigmoid, GELU, HardSwish, Mish, SiLU; other activations are left out of oneDNN's side, and
 * the row says so) and the residual (a sum post-op), in the planned order.
 *
 *   kernel_table MODEL.onnx [--dim SYM=N]... [--threads N] [--secs S] [--label NAME] [--no-winograd] [--max-m M]
 *                [--cold MB]
 *
 * --cold MB writes MB MiB of another buffer before every timed run, ftax's and oneDNN's alike:
 * the call then finds its weights and inputs in DRAM, as in a whole model whose weights are
 * larger than the caches, where a call run again and again finds them in cache.
 *
 * --max-m M keeps the MatMul/Gemm calls of at most M rows (no convs) and adds the GB/s of their
 * weights (N * K * 4 bytes per call): a GEMM of few rows streams B and is bound by bandwidth.
 *
 * A quantized model's int8 calls (ft_gemm_int8: QDQ fusions, MatMulInteger, QLinearConv ...) are
 * rows too, against oneDNN's u8 x s8 matmul or convolution with the same output kind, scales,
 * source zero point, bias and activation (GFLOP/s there counts the integer ops alike).
 *
 * One markdown row per distinct shape: how often the model calls it, GFLOP/s of each, the ratio
 * ftax / oneDNN time (below 1: ftax faster), and the model's total over all its calls. Threads:
 * --threads N for both (ftax's pool, oneDNN's OpenMP). A benchmark: prints, asserts nothing. */
#define _GNU_SOURCE
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>

#include "conv_params.h"
#include "gemm_int8.h"
#include "gemm_params.h"
#include "load.h"
#include "parallel.h"
#include "pipeline.h"
#include "scalar_ops.h"
#include "bench_util.h"

#define CHECK_DNNL(x)                                                                   \
  do {                                                                                  \
    dnnl_status_t s_ = (x);                                                             \
    if (s_ != dnnl_success) { fprintf(stderr, "oneDNN: %s failed (%d)\n", #x, (int)s_); exit(1); } \
  } while (0)

static void *zalloc(size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 64) & ~(size_t)63);
  if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
  memset(p, 0, bytes);
  return p;
}

/* ---- ftax: the planned call ---- */
typedef struct {
  const ft_kcall *k;
  const void *in[8];
  void *out[4];
  void *scratch;
} ftax_call;

static void run_ftax(void *arg) {
  ftax_call *c = arg;
  c->k->entry->fn(c->k->p, c->k->f, c->in, c->out, c->scratch);
}

static double time_ftax(const ft_graph *g, int node, const ft_kcall *k, double secs) {
  const ft_node *n = &g->nodes[node];
  ftax_call c = {k, {0}, {0}, NULL};
  void *own[12];
  int n_own = 0;
  for (int i = 0; i < n->n_in && i < 8; i++) {
    if (n->in[i] < 0) continue;
    const ft_value *v = &g->vals[n->in[i]];
    if (v->t.data) { c.in[i] = v->t.data; continue; } /* a constant, packed as the program has it */
    size_t nb = ft_nbytes(&v->t);
    float *x = zalloc(nb);
    fill(x, nb / sizeof(float), 7u + (unsigned)i);
    c.in[i] = own[n_own++] = x;
  }
  for (int i = 0; i < n->n_out && i < 4; i++)
    if (n->out[i] >= 0) c.out[i] = own[n_own++] = zalloc(ft_nbytes(&g->vals[n->out[i]].t));
  c.scratch = own[n_own++] = zalloc(k->scratch);
  double t = median_time(run_ftax, &c, secs);
  for (int i = 0; i < n_own; i++) free(own[i]);
  return t;
}

/* ---- oneDNN: the same shape ---- */
typedef struct {
  dnnl_stream_t stream;
  dnnl_primitive_t prim;
  dnnl_exec_arg_t args[4];
  int nargs;
} dnnl_call;

static void run_dnnl(void *arg) {
  dnnl_call *c = arg;
  CHECK_DNNL(dnnl_primitive_execute(c->prim, c->stream, c->nargs, c->args));
  CHECK_DNNL(dnnl_stream_wait(c->stream));
}

/* A memory of the primitive's chosen layout for `what`, filled with data. */
static dnnl_memory_t dnnl_mem(dnnl_engine_t eng, const_dnnl_primitive_desc_t pd, dnnl_query_t what, unsigned seed) {
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, what, 0);
  dnnl_memory_t m;
  CHECK_DNNL(dnnl_memory_create(&m, md, eng, DNNL_MEMORY_ALLOCATE));
  void *h;
  CHECK_DNNL(dnnl_memory_get_data_handle(m, &h));
  fill(h, dnnl_memory_desc_get_size(md) / sizeof(float), seed);
  return m;
}

static double time_dnnl_pd(dnnl_engine_t eng, dnnl_primitive_desc_t pd, int has_bias, double secs) {
  dnnl_call c;
  memset(&c, 0, sizeof c);
  CHECK_DNNL(dnnl_stream_create(&c.stream, eng, dnnl_stream_default_flags));
  CHECK_DNNL(dnnl_primitive_create(&c.prim, pd));
  dnnl_memory_t m[4];
  int args[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_BIAS};
  dnnl_query_t q[4] = {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md, dnnl_query_weights_md};
  c.nargs = has_bias ? 4 : 3;
  for (int i = 0; i < c.nargs; i++) {
    if (i == 3) { /* bias: weights_md index 1 */
      const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1);
      CHECK_DNNL(dnnl_memory_create(&m[i], md, eng, DNNL_MEMORY_ALLOCATE));
    } else {
      m[i] = dnnl_mem(eng, pd, q[i], 11u + (unsigned)i);
    }
    c.args[i].arg = args[i];
    c.args[i].memory = m[i];
  }
  double t = median_time(run_dnnl, &c, secs);
  for (int i = 0; i < c.nargs; i++) dnnl_memory_destroy(m[i]);
  dnnl_primitive_destroy(c.prim);
  dnnl_stream_destroy(c.stream);
  return t;
}

/* oneDNN's eltwise for one of ftax's epilogue activations; 0 when it has none. */
static int dnnl_act(int act, const double *f, dnnl_alg_kind_t *alg, float *alpha, float *beta) {
  *alpha = 0;
  *beta = 0;
  switch (act) {
    case FT_SOP_RELU: *alg = dnnl_eltwise_relu; return 1;
    case FT_SOP_CLIP: *alg = dnnl_eltwise_clip; *alpha = (float)f[2]; *beta = (float)f[3]; return 1;
    case FT_SOP_TANH: *alg = dnnl_eltwise_tanh; return 1;
    case FT_SOP_SIGMOID: *alg = dnnl_eltwise_logistic; return 1;
    case FT_SOP_GELU: *alg = dnnl_eltwise_gelu_erf; return 1;
    case FT_SOP_GELU_TANH: *alg = dnnl_eltwise_gelu_tanh; return 1;
    case FT_SOP_HARD_SWISH: *alg = dnnl_eltwise_hardswish; return 1;
    case FT_SOP_MISH: *alg = dnnl_eltwise_mish; return 1;
    case 127: *alg = dnnl_eltwise_swish; *alpha = 1; return 1; /* SiLU: gemm.h's FT_ACT_SILU */
    default: return 0;
  }
}

/* Post-ops for activation act and a residual added before (res 1) or after (res 2) it. */
static dnnl_primitive_attr_t dnnl_epilogue(int act, int res, const double *f, int *unmatched) {
  dnnl_primitive_attr_t attr;
  dnnl_post_ops_t po;
  CHECK_DNNL(dnnl_primitive_attr_create(&attr));
  CHECK_DNNL(dnnl_post_ops_create(&po));
  dnnl_alg_kind_t alg;
  float a, b;
  int have = act && dnnl_act(act, f, &alg, &a, &b);
  *unmatched = act && !have;
  if (res == 1) CHECK_DNNL(dnnl_post_ops_append_sum(po, 1.0f));
  if (have) CHECK_DNNL(dnnl_post_ops_append_eltwise(po, 1.0f, alg, a, b));
  if (res == 2) CHECK_DNNL(dnnl_post_ops_append_sum(po, 1.0f));
  CHECK_DNNL(dnnl_primitive_attr_set_post_ops(attr, po));
  dnnl_post_ops_destroy(po);
  return attr;
}

static double time_dnnl_conv(dnnl_engine_t eng, const int64_t *p, const double *f, int *unmatched, double secs) {
  /* 2-D (1-D convs have in[0] = in[1] = 1: treated as 2-D with height 1) */
  dnnl_dims_t src = {p[FT_CV_N], p[FT_CV_C], p[FT_CV_IN + 1], p[FT_CV_IN + 2]};
  dnnl_dims_t dst = {p[FT_CV_N], p[FT_CV_CO], p[FT_CV_OUT + 1], p[FT_CV_OUT + 2]};
  int64_t G = p[FT_CV_G];
  dnnl_dims_t wei = {G, p[FT_CV_CO] / G, p[FT_CV_C] / G, p[FT_CV_K + 1], p[FT_CV_K + 2]};
  dnnl_dims_t bias = {p[FT_CV_CO]};
  dnnl_dims_t strides = {p[FT_CV_S + 1], p[FT_CV_S + 2]};
  dnnl_dims_t dil = {p[FT_CV_D + 1] - 1, p[FT_CV_D + 2] - 1};
  dnnl_dims_t pl = {p[FT_CV_P + 1], p[FT_CV_P + 2]};
  dnnl_dims_t pr;
  for (int d = 0; d < 2; d++) /* the end padding that gives the planned output size */
    pr[d] = (dst[2 + d] - 1) * strides[d] + (wei[3 + d] - 1) * (dil[d] + 1) + 1 - src[2 + d] - pl[d];
  dnnl_memory_desc_t s_md, w_md, b_md, d_md;
  CHECK_DNNL(dnnl_memory_desc_init_by_tag(&s_md, 4, src, dnnl_f32, dnnl_format_tag_any));
  CHECK_DNNL(dnnl_memory_desc_init_by_tag(&w_md, 5, wei, dnnl_f32, dnnl_format_tag_any));
  CHECK_DNNL(dnnl_memory_desc_init_by_tag(&b_md, 1, bias, dnnl_f32, dnnl_format_tag_any));
  CHECK_DNNL(dnnl_memory_desc_init_by_tag(&d_md, 4, dst, dnnl_f32, dnnl_format_tag_any));
  dnnl_convolution_desc_t cd;
  CHECK_DNNL(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &s_md,
                                                        &w_md, &b_md, &d_md, strides, dil, pl, pr));
  dnnl_primitive_desc_t pd;
  dnnl_primitive_attr_t attr = dnnl_epilogue((int)p[FT_CV_ACT], (int)p[FT_CV_RES], f, unmatched);
  CHECK_DNNL(dnnl_primitive_desc_create(&pd, &cd, attr, eng, NULL));
  double t = time_dnnl_pd(eng, pd, 1, secs);
  dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  return t;
}

static double time_dnnl_matmul(dnnl_engine_t eng, const int64_t *p, const double *f, int64_t nbatch, int *unmatched,
                               double secs) {
  dnnl_dims_t a = {nbatch, p[FT_MM_M], p[FT_MM_K]}, b = {p[FT_MM_B_NMAT] > 1 ? nbatch : 1, p[FT_MM_K], p[FT_MM_N]};
  dnnl_dims_t c = {nbatch, p[FT_MM_M], p[FT_MM_N]}, bias = {1, 1, p[FT_MM_N]};
  dnnl_memory_desc_t a_md, b_md, bias_md, c_md;
  CHECK_DNNL(dnnl_memory_desc_init_by_tag(&a_md, 3, a, dnnl_f32, dnnl_abc));
  CHECK_DNNL(dnnl_memory_desc_init_by_tag(&b_md, 3, b, dnnl_f32, p[FT_MM_PACKED] ? dnnl_format_tag_any : dnnl_abc));
  CHECK_DNNL(dnnl_memory_desc_init_by_tag(&bias_md, 3, bias, dnnl_f32, dnnl_abc));
  CHECK_DNNL(dnnl_memory_desc_init_by_tag(&c_md, 3, c, dnnl_f32, dnnl_abc));
  dnnl_matmul_desc_t md;
  int has_bias = p[FT_MM_HAS_BIAS] != 0;
  CHECK_DNNL(dnnl_matmul_desc_init(&md, &a_md, &b_md, has_bias ? &bias_md : NULL, &c_md));
  dnnl_primitive_desc_t pd;
  dnnl_primitive_attr_t attr = dnnl_epilogue((int)p[FT_MM_ACT], 0, f, unmatched);
  CHECK_DNNL(dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL));
  double t = time_dnnl_pd(eng, pd, has_bias, secs);
  dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  return t;
}

/* An int8 call (gemm_int8.h's ft_gemm_int8: QDQMatMul/QDQConv, MatMulInteger, QLinear*) as
 * oneDNN runs it: uint8 activation with its zero point, int8 weight (layout "any"), one scale
 * per output channel or one in all, the float32 bias, the activation as a post-op, and the
 * output of the same kind (float32, int32, or 8-bit). oneDNN starts from a uint8 activation:
 * where ftax quantizes a float32 one in its packing step (QDQ), that pass is ftax's alone, as a
 * QuantizeLinear node would be ORT's. */
static double time_dnnl_int8(dnnl_engine_t eng, const int64_t *p, const double *f, int *unmatched, double secs) {
  int wx = (int)p[FT_I8_WX], conv = (int)p[FT_I8_CONV];
  int64_t co = wx ? p[FT_I8_M] : p[FT_I8_N]; /* output channels */
  dnnl_data_type_t yt = p[FT_I8_OUT] == FT_I8_OUT_F32 ? dnnl_f32 : p[FT_I8_OUT] == FT_I8_OUT_S32 ? dnnl_s32
                        : p[FT_I8_OUT] == FT_I8_OUT_U8 ? dnnl_u8 : dnnl_s8;
  dnnl_memory_desc_t s_md, w_md, b_md, d_md;
  dnnl_primitive_desc_t pd;
  double ff[4] = {0, 0, f ? f[0] : 0, f ? f[1] : 0}; /* dnnl_act reads Clip's bounds at 2, 3 */
  dnnl_primitive_attr_t attr = dnnl_epilogue((int)p[FT_I8_ACT] ? (int)p[FT_I8_ACT] : p[FT_I8_RELU] ? FT_SOP_RELU : 0, 0, ff, unmatched);
  int has_bias = p[FT_I8_BIAS] != 0;
  /* one scale per output channel (dims[1] of both primitives' outputs) or one in all, and the
     source's zero point */
  float *sc = zalloc(4 * (size_t)co);
  for (int64_t i = 0; i < co; i++) sc[i] = 0.01f;
  CHECK_DNNL(dnnl_primitive_attr_set_output_scales(attr, p[FT_I8_NSB] > 1 ? co : 1, p[FT_I8_NSB] > 1 ? 1 << 1 : 0, sc));
  free(sc);
  if (p[FT_I8_NZA]) CHECK_DNNL(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, (int32_t[]){3}));
  if (conv) {
    const int64_t *w = p + FT_I8_WIN; /* in[3], out[3], k[3], s[3], d[3], pads_begin[3]: 2-D in the last two */
    dnnl_dims_t src = {1, p[FT_I8_C], w[1], w[2]}, dst = {1, co, w[4], w[5]};
    dnnl_dims_t wei = {co, p[FT_I8_C], w[7], w[8]}, bias = {co};
    dnnl_dims_t strides = {w[10], w[11]}, dil = {w[13] - 1, w[14] - 1}, pl = {w[16], w[17]}, pr;
    for (int d = 0; d < 2; d++)
      pr[d] = (dst[2 + d] - 1) * strides[d] + (wei[2 + d] - 1) * (dil[d] + 1) + 1 - src[2 + d] - pl[d];
    CHECK_DNNL(dnnl_memory_desc_init_by_tag(&s_md, 4, src, dnnl_u8, dnnl_format_tag_any));
    CHECK_DNNL(dnnl_memory_desc_init_by_tag(&w_md, 4, wei, dnnl_s8, dnnl_format_tag_any));
    CHECK_DNNL(dnnl_memory_desc_init_by_tag(&b_md, 1, bias, dnnl_f32, dnnl_format_tag_any));
    CHECK_DNNL(dnnl_memory_desc_init_by_tag(&d_md, 4, dst, yt, dnnl_format_tag_any));
    dnnl_convolution_desc_t cd;
    CHECK_DNNL(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &s_md, &w_md,
                                                          has_bias ? &b_md : NULL, &d_md, strides, dil, pl, pr));
    CHECK_DNNL(dnnl_primitive_desc_create(&pd, &cd, attr, eng, NULL));
  } else {
    int64_t M = p[FT_I8_M], N = p[FT_I8_N], K = p[FT_I8_K];
    dnnl_dims_t a = {M, K}, b = {K, N}, c = {M, N}, bias = {1, N};
    CHECK_DNNL(dnnl_memory_desc_init_by_tag(&s_md, 2, a, dnnl_u8, dnnl_ab));
    CHECK_DNNL(dnnl_memory_desc_init_by_tag(&w_md, 2, b, dnnl_s8, dnnl_format_tag_any));
    CHECK_DNNL(dnnl_memory_desc_init_by_tag(&b_md, 2, bias, dnnl_f32, dnnl_ab));
    CHECK_DNNL(dnnl_memory_desc_init_by_tag(&d_md, 2, c, yt, dnnl_ab));
    dnnl_matmul_desc_t md;
    CHECK_DNNL(dnnl_matmul_desc_init(&md, &s_md, &w_md, has_bias ? &b_md : NULL, &d_md));
    CHECK_DNNL(dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL));
  }
  double t = time_dnnl_pd(eng, pd, has_bias, secs);
  dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  return t;
}

/* ---- the table ---- */
typedef struct {
  int conv;       /* 1 conv, 0 matmul */
  int int8;       /* an int8 call (ft_gemm_int8): p is gemm_int8.h's */
  int64_t p[FT_MAX_P];
  int count;
  int node;       /* the first call's node and slot */
  int slot;
} shape_row;

static const char *const conv_modes[] = {"im2col", "pointwise", "depthwise", "shifted", "pointwise^T", "im2col^T", "winograd"};

static const char *const i8_outs[] = {"int32", "float32", "uint8", "int8"};

static void describe(const shape_row *r, int64_t nbatch, char *s, size_t n) {
  const int64_t *p = r->p;
  if (r->int8)
    snprintf(s, n, "int8 %s %lldx%lldx%lld (MxNxK)%s -> %s%s%s", p[FT_I8_CONV] ? "conv" : "matmul", (long long)p[FT_I8_M],
             (long long)p[FT_I8_N], (long long)p[FT_I8_K], p[FT_I8_WX] ? " W.X" : "",
             i8_outs[p[FT_I8_OUT] & 3], p[FT_I8_A_KIND] == 2 ? ", A float32" : "", p[FT_I8_ACT] || p[FT_I8_RELU] ? " +act" : "");
  else if (r->conv)
    snprintf(s, n, "conv %lldx%lldx%lld k%lldx%lld s%lld g%lld -> %lld (%s)%s%s", (long long)p[FT_CV_C],
             (long long)p[FT_CV_IN + 1], (long long)p[FT_CV_IN + 2], (long long)p[FT_CV_K + 1], (long long)p[FT_CV_K + 2],
             (long long)p[FT_CV_S + 2], (long long)p[FT_CV_G], (long long)p[FT_CV_CO], conv_modes[p[FT_CV_MODE] <= FT_CV_WINOGRAD ? p[FT_CV_MODE] : 0],
             p[FT_CV_ACT] ? " +act" : "", p[FT_CV_RES] ? " +residual" : "");
  else
    snprintf(s, n, "matmul %lldx%lldx%lld (MxNxK)%s%s%s", (long long)p[FT_MM_M], (long long)p[FT_MM_N],
             (long long)p[FT_MM_K], p[FT_MM_PACKED] ? ", B packed" : "", p[FT_MM_HAS_BIAS] ? " +bias" : "",
             p[FT_MM_ACT] ? " +act" : "");
  if (nbatch > 1) {
    size_t l = strlen(s);
    snprintf(s + l, n - l, ", batch %lld", (long long)nbatch);
  }
}

static int64_t mm_batch(const int64_t *p) {
  int64_t nb = 1;
  for (int64_t d = 0; d < p[FT_MM_BRANK]; d++) nb *= p[FT_MM_BDIMS + d];
  return nb;
}

static double flops_of(const shape_row *r) {
  const int64_t *p = r->p;
  if (r->int8) return 2.0 * p[FT_I8_NBATCH] * p[FT_I8_M] * p[FT_I8_N] * p[FT_I8_K];
  if (!r->conv) return 2.0 * mm_batch(p) * p[FT_MM_M] * p[FT_MM_N] * p[FT_MM_K];
  double kg = (double)p[FT_CV_C] / p[FT_CV_G] * p[FT_CV_K] * p[FT_CV_K + 1] * p[FT_CV_K + 2];
  return 2.0 * p[FT_CV_N] * p[FT_CV_CO] * p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2] * kg;
}

static int usage(void) {
  fprintf(stderr, "usage: kernel_table MODEL.onnx [--dim SYM=N]... [--threads N] [--secs S] [--label NAME] [--no-winograd] [--max-m M] [--cold MB]\n");
  return 1;
}

int main(int argc, char **argv) {
  ft_pins pins;
  memset(&pins, 0, sizeof pins);
  const char *model = NULL, *label = NULL;
  int threads = 1, no_wino = 0;
  int64_t max_m = 0;
  double secs = 0.3;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--dim") && i + 1 < argc && pins.n_dims < 64) pins.dims[pins.n_dims++] = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--secs") && i + 1 < argc) secs = atof(argv[++i]);
    else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
    else if (!strcmp(argv[i], "--no-winograd")) no_wino = 1; /* 3x3 convs as ftaxc --no-winograd plans them */
    else if (!strcmp(argv[i], "--max-m") && i + 1 < argc) max_m = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--cold") && i + 1 < argc) bench_cold_bytes = (size_t)atoi(argv[++i]) << 20;
    else if (argv[i][0] != '-' && !model) model = argv[i];
    else return usage();
  }
  if (!model) return usage();
  ft_set_threads(threads);
  omp_set_num_threads(threads);
  ft_err e = {0};
  ft_graph *g = NULL;
  ft_compile_opts o;
  memset(&o, 0, sizeof o);
  o.pins = &pins;
  o.no_winograd = no_wino;
  ft_lowered lw;
  ft_memplan mp;
  if (ft_load_model(model, &g, &e) || ft_compile_graph(g, &o, &lw, &mp, NULL, &e)) {
    fprintf(stderr, "kernel_table: %s\n", e.msg);
    return 2;
  }
  shape_row *rows = calloc((size_t)lw.n + 1, sizeof *rows);
  int n_rows = 0;
  for (int s = 0; s < lw.n; s++) {
    const ft_kcall *k = &lw.calls[s];
    if (!k->entry) continue;
    int conv = !strcmp(k->entry->name, "ft_conv_f32") || !strcmp(k->entry->name, "ft_conv_wino_f32");
    int int8 = !strcmp(k->entry->name, "ft_gemm_int8");
    if (!conv && !int8 && strcmp(k->entry->name, "ft_matmul_f32")) continue;
    if (max_m > 0 && (conv || int8 || k->p[FT_MM_M] > max_m)) continue;
    int r = 0;
    while (r < n_rows && !(rows[r].conv == conv && rows[r].int8 == int8 && !memcmp(rows[r].p, k->p, sizeof k->p))) r++;
    if (r == n_rows) {
      rows[n_rows].conv = conv;
      rows[n_rows].int8 = int8;
      memcpy(rows[n_rows].p, k->p, sizeof k->p);
      rows[n_rows].node = lw.order[s];
      rows[n_rows].slot = s;
      n_rows++;
    }
    rows[r].count++;
  }
  dnnl_engine_t eng;
  CHECK_DNNL(dnnl_engine_create(&eng, dnnl_cpu, 0));
  if (max_m > 0)
    printf("| %s, %d thread%s%s | calls | ftax GFLOP/s | oneDNN GFLOP/s | ftax GB/s | oneDNN GB/s | ftax / oneDNN time |\n"
           "|---|---:|---:|---:|---:|---:|---:|\n", label ? label : model, threads, threads == 1 ? "" : "s",
           bench_cold_bytes ? ", cold" : "");
  else
    printf("| %s, %d thread%s%s | calls | ftax GFLOP/s | oneDNN GFLOP/s | ftax / oneDNN time |\n|---|---:|---:|---:|---:|\n",
           label ? label : model, threads, threads == 1 ? "" : "s", bench_cold_bytes ? ", cold" : "");
  double tot_f = 0, tot_d = 0;
  for (int r = 0; r < n_rows; r++) {
    const shape_row *row = &rows[r];
    int64_t nb = row->conv || row->int8 ? 1 : mm_batch(row->p);
    double tf = time_ftax(g, row->node, &lw.calls[row->slot], secs);
    const double *f = lw.calls[row->slot].f;
    int unmatched = 0;
    double td = row->int8 ? time_dnnl_int8(eng, row->p, f, &unmatched, secs) * row->p[FT_I8_NBATCH]
                : row->conv ? time_dnnl_conv(eng, row->p, f, &unmatched, secs)
                : time_dnnl_matmul(eng, row->p, f, nb, &unmatched, secs);
    double fl = flops_of(row);
    char what[256];
    describe(row, nb, what, sizeof what);
    if (max_m > 0) {
      double wb = 4.0 * (row->p[FT_MM_B_NMAT] > 1 ? nb : 1) * row->p[FT_MM_N] * row->p[FT_MM_K]; /* B bytes per call */
      printf("| %s%s | %d | %.1f | %.1f | %.1f | %.1f | %.2f |\n", what, unmatched ? " (oneDNN without the activation)" : "",
             row->count, fl / tf * 1e-9, fl / td * 1e-9, wb / tf * 1e-9, wb / td * 1e-9, tf / td);
    } else {
      printf("| %s%s | %d | %.1f | %.1f | %.2f |\n", what, unmatched ? " (oneDNN without the activation)" : "",
             row->count, fl / tf * 1e-9, fl / td * 1e-9, tf / td);
    }
    fflush(stdout);
    tot_f += tf * row->count;
    tot_d += td * row->count;
  }
  printf("| **all calls** (ms) | | %.3f | %.3f |%s %.2f |\n\n", tot_f * 1e3, tot_d * 1e3, max_m > 0 ? " | |" : "",
         tot_d > 0 ? tot_f / tot_d : 0);
  dnnl_engine_destroy(eng);
  free(rows);
  ft_memplan_free(&mp);
  ft_lowered_free(&lw);
  ft_graph_free(g);
  return 0;
}

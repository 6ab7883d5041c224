/* Stage (--target cuda): write the CUDA program. It walks the same lowered calls and memory plan
 * as the C emitter; each C kernel maps to its twin in templates/cuda (see runtime.cuh for the
 * calling convention), ft_pasted like the C templates are.
 *
 * ft_cuda_prepare runs between lowering and the memory plan: it checks that every kernel has a
 * twin (listing every one that has not), drops the C kernels' scratch (the twins need none: the
 * GEMM and convolution libraries get a shared workspace), and for --precision fp16 stores every
 * float32 tensor as float16: constants are converted (saturating at +-65504, so that exports'
 * "-3.4e38" masks stay finite), activations change type so the arena is planned for half, and
 * the few kernels that move float data as bytes or 4-byte elements get half-sized parameters.
 * Graph inputs and outputs keep float32 at the API; the program converts at its edges.
 *
 * The generated program: the model's data (sizes, literal parameters), then the fixed program
 * (templates/cuda/program.cuh: one device arena and the weights uploaded at init, every GEMM and
 * convolution planned at init, one warm-up run, with --cuda-graph the whole run captured once and
 * replayed; program_main.cuh: the command-line tool), then what it calls: ftp_plan (the init
 * hooks), ftp_calls (every twin in order) and ftp_free_plans. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "conv.h"
#include "cuda_twins.h"
#include "elementwise.h"
#include "fused_norm.h"
#include "gemm.h"
#include "emit_util.h"
#include "passes.h"
#include "pool.h"
#include "templates.h"
#include "version.h"

/* ---- prepare: check twins, fp16 storage ---------------------------------------------------- */

static uint16_t half_saturating(float x) {
  if (isfinite(x) && x > 65504.0f) x = 65504.0f;
  if (isfinite(x) && x < -65504.0f) x = -65504.0f;
  return ft_float_to_half(x);
}

static int value_dtype(const ft_graph *g, int v) { return v >= 0 ? g->vals[v].t.dtype : 0; }

/* Kernels that see float data only as bytes or 4-byte elements: half-sized in fp16 programs. */
static void adapt_fp16(const ft_graph *g, const ft_node *n, ft_kcall *k) {
  const char *name = k->kernel;
  int in0 = n->n_in > 0 ? n->in[0] : -1, out0 = n->n_out > 0 ? n->out[0] : -1;
  if (!strcmp(name, "ft_copy_nd_4") && value_dtype(g, in0) == FT_FLOAT) k->kernel = "ft_copy_nd_2";
  else if (!strcmp(name, "ft_where_4") && n->n_in > 1 && value_dtype(g, n->in[1]) == FT_FLOAT) k->kernel = "ft_where_2";
  else if (!strcmp(name, "ft_fill_4") && value_dtype(g, out0) == FT_FLOAT) {
    float v;
    memcpy(&v, &k->p[1], 4);
    k->p[1] = half_saturating(v);
    k->kernel = "ft_fill_2";
  } else if (!strcmp(name, "ft_pad_4") && value_dtype(g, in0) == FT_FLOAT) {
    int r = (int)k->p[0];
    float v;
    memcpy(&v, &k->p[2 + 3 * r], 4);
    k->p[2 + 3 * r] = half_saturating(v);
    k->kernel = "ft_pad_2";
  } else if (!strcmp(name, "ft_copy_bytes") && value_dtype(g, in0) == FT_FLOAT) k->p[0] /= 2;
  else if (!strcmp(name, "ft_concat") && value_dtype(g, out0) == FT_FLOAT) {
    for (int i = 0; i < k->p[0]; i++) k->p[2 + i] /= 2;
  } else if (!strcmp(name, "ft_split") && value_dtype(g, in0) == FT_FLOAT) {
    for (int i = 0; i < k->p[0]; i++) k->p[2 + i] /= 2;
  } else if (!strncmp(name, "ft_gather_i", 11) && value_dtype(g, in0) == FT_FLOAT) k->p[3] /= 2;
  else if (!strcmp(name, "ft_dropout_copy")) {
    if (value_dtype(g, in0) == FT_FLOAT) k->p[0] /= 2;
    if (n->n_out > 1 && value_dtype(g, n->out[1]) == FT_FLOAT) { k->p[2] = 2; k->p[3] = 0x3c00; }
  }
}

int ft_cuda_prepare(ft_graph *g, ft_lowered *lw, ft_cuda_opts *o, ft_err *e) {
  int fp16 = o->precision == FT_PREC_FP16;
  o->uses_blaslt = o->uses_dnn = 0;
  /* every tensor must fit the twins' 32-bit indexing */
  for (int v = 0; v < g->n_vals; v++)
    if (g->vals[v].shape_known && ft_numel(&g->vals[v].t) >= ((int64_t)1 << 31))
      return ft_fail(e, FT_EUNSUPPORTED, "%s: tensor '%s' has 2^31 elements or more, which the CUDA kernels do not index", g->path, g->vals[v].name);
  if (fp16)
    for (int s = 0; s < lw->n; s++)
      if (lw->calls[s].kernel) adapt_fp16(g, &g->nodes[lw->order[s]], &lw->calls[s]);
  /* every kernel needs a twin: list each missing one once, with its count and a node using it */
  struct miss { const char *kernel; char why[128]; int count, node; } miss[64];
  int n_miss = 0, total = 0;
  for (int s = 0; s < lw->n; s++) {
    ft_kcall *k = &lw->calls[s];
    if (!k->kernel) continue;
    ft_twin t;
    char why[128];
    k->scratch = 0; /* the twins need no scratch in the arena */
    /* the conv twin writes its output before it reads the residual (cuDNN, then the epilogue
       kernel): the output gets storage of its own */
    if (!strcmp(k->kernel, "ft_conv_f32") && k->p[FT_CV_RES]) k->no_inplace = 1;
    if (!ft_cuda_twin(k, fp16, &t, why, sizeof why)) {
      if (t.lib & FT_TW_BLASLT) o->uses_blaslt = 1;
      if (t.lib & FT_TW_DNN) o->uses_dnn = 1;
      continue;
    }
    total++;
    int j = 0;
    while (j < n_miss && (strcmp(miss[j].kernel, k->kernel) || strcmp(miss[j].why, why))) j++;
    if (j == n_miss && n_miss < 64) {
      miss[n_miss].kernel = k->kernel;
      snprintf(miss[n_miss].why, sizeof miss[n_miss].why, "%s", why);
      miss[n_miss].count = 0;
      miss[n_miss].node = lw->order[s];
      n_miss++;
    }
    if (j < 64) miss[j].count++;
  }
  if (n_miss) {
    char list[1800] = "";
    size_t m = 0;
    for (int j = 0; j < n_miss && m < sizeof list - 1; j++)
      m += snprintf(list + m, sizeof list - m, "\n  %s: %s; %d call%s, e.g. %s", miss[j].kernel, miss[j].why,
                    miss[j].count, miss[j].count == 1 ? "" : "s", ft_node_label(g, miss[j].node));
    return ft_fail(e, FT_EUNSUPPORTED, "%s: --target cuda: %d kernel call%s without a CUDA twin (templates/cuda):%s", g->path,
                   total, total == 1 ? "" : "s", list);
  }
  if (!fp16) return 0;
  /* float32 storage becomes float16 (graph inputs and outputs keep float32 at the API) */
  for (int v = 0; v < g->n_vals; v++) {
    ft_value *val = &g->vals[v];
    if (val->t.dtype != FT_FLOAT || val->kind == FT_V_INPUT || (val->kind == FT_V_ACT && val->is_output)) continue;
    if (val->t.data) {
      int64_t n = ft_numel(&val->t);
      uint16_t *h = malloc(sizeof(uint16_t) * (size_t)(n ? n : 1));
      if (!h) return ft_fail(e, FT_EIO, "out of memory");
      for (int64_t i = 0; i < n; i++) h[i] = half_saturating(((const float *)val->t.data)[i]);
      free(val->t.data);
      val->t.data = h;
    }
    val->t.dtype = FT_FLOAT16;
  }
  return 0;
}

/* ---- writing ------------------------------------------------------------------------------- */

static void ptr_expr(char *buf, size_t n, const ft_memplan *mp, int v) {
  switch (mp->storage[v]) {
  case FT_S_ARENA: snprintf(buf, n, "(void *)(arena + %lld)", (long long)mp->offset[v]); break;
  case FT_S_WEIGHT: snprintf(buf, n, "(void *)(weights + %lld)", (long long)mp->offset[v]); break;
  case FT_S_INPUT: snprintf(buf, n, "c->in_dev[%lld]", (long long)mp->offset[v]); break;
  case FT_S_OUTPUT: snprintf(buf, n, "c->out_dev[%lld]", (long long)mp->offset[v]); break;
  default: snprintf(buf, n, "NULL"); break;
  }
}

/* bytes a value takes on the device: float32 is half in fp16 programs */
static size_t dev_bytes(const ft_graph *g, int v, int fp16) {
  const ft_tensor *t = &g->vals[v].t;
  return (size_t)ft_numel(t) * (fp16 && t->dtype == FT_FLOAT ? 2 : ft_dtype_size(t->dtype));
}

static const char *precision_name(int p) { return p == FT_PREC_FP16 ? "fp16" : p == FT_PREC_TF32 ? "tf32" : "fp32"; }

/* The arguments of one call: in_/out_ arrays of device pointers. */
static void call_args(FILE *c, const ft_graph *g, const ft_node *n, const ft_memplan *mp) {
  char buf[256];
  fprintf(c, "    const void *in_[] = {");
  for (int i = 0; i < n->n_in; i++) {
    if (n->in[i] < 0) snprintf(buf, sizeof buf, "NULL");
    else ptr_expr(buf, sizeof buf, mp, n->in[i]);
    fprintf(c, "%s%s", i ? ", " : "", buf);
  }
  if (!n->n_in) fprintf(c, "NULL");
  fprintf(c, "};\n    void *out_[] = {");
  for (int i = 0; i < n->n_out; i++) {
    if (n->out[i] < 0) snprintf(buf, sizeof buf, "NULL");
    else ptr_expr(buf, sizeof buf, mp, n->out[i]);
    fprintf(c, "%s%s", i ? ", " : "", buf);
  }
  if (!n->n_out) fprintf(c, "NULL");
  fprintf(c, "};\n");
  (void)g;
}

static void write_header(FILE *h, const ft_graph *g, const ft_memplan *mp, const char *P, const char *G) {
  ft_emit_header_top(h, g, mp, P, G, "CUDA program", " /* device memory */");
  fprintf(h,
          "/* Pick the GPU (the current CUDA device), upload the weights (a file path), allocate the device\n"
          "   arena, plan every GEMM and convolution and run once to warm up (and capture the CUDA graph when\n"
          "   built with --cuda-graph). Returns 0, or nonzero with a reason in err. */\n");
  fprintf(h, "int %s_init(%s_ctx **ctx, const char *weights_path, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* The same with a device arena of %s_ARENA_BYTES bytes (cudaMalloc'ed) owned by the caller. */\n", G);
  fprintf(h, "int %s_init_with_arena(%s_ctx **ctx, const char *weights_path, void *device_arena, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* One inference on host buffers of the sizes above: copy in, run, copy out, wait. 0, or nonzero\n"
             "   with the reason in %s_error. */\n", P);
  fprintf(h, "int %s_run(%s_ctx *ctx, const void *const *inputs, void *const *outputs);\n", P, P);
  fprintf(h, "void %s_free(%s_ctx *ctx);\n", P, P);
  fprintf(h, "const char *%s_error(const %s_ctx *ctx);\n\n", P, P);
  fprintf(h, "/* The asynchronous side, all on one stream (a cudaStream_t): fixed device buffers for the inputs\n"
             "   and outputs, copies from and to host memory (pinned for overlap), one inference on the device\n"
             "   buffers (a CUDA graph launch with --cuda-graph), and the wait that reports kernel errors. */\n");
  static const char *const async_api[] = {
      "void *%s_stream(%s_ctx *ctx);\n", "void *%s_device_input(%s_ctx *ctx, int i);\n",
      "void *%s_device_output(%s_ctx *ctx, int i);\n", "int %s_upload(%s_ctx *ctx, const void *const *inputs);\n",
      "int %s_enqueue(%s_ctx *ctx);\n", "int %s_download(%s_ctx *ctx, void *const *outputs);\n",
      "int %s_sync(%s_ctx *ctx);\n"};
  for (size_t i = 0; i < sizeof async_api / sizeof async_api[0]; i++) fprintf(h, async_api[i], P, P);
  fprintf(h, "\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
}

/* The kernel templates: the runtime, elementwise (the fp16 edge conversions use ftc_cast) and
 * each call's twin. */
static int paste_twins(FILE *c, const ft_lowered *lw, int fp16, ft_pasted *done, ft_err *e) {
  int rc = ft_emit_paste_name(c, "runtime", "cuh", done, e);
  if (!rc) rc = ft_emit_paste_name(c, "elementwise", "cuh", done, e);
  for (int s = 0; s < lw->n && !rc; s++) {
    ft_twin t;
    char why[128];
    if (!lw->calls[s].kernel) continue;
    if (ft_cuda_twin(&lw->calls[s], fp16, &t, why, sizeof why)) return ft_fail(e, FT_EUNSUPPORTED, "internal error: %s has no twin", lw->calls[s].kernel);
    rc = ft_emit_paste_name(c, t.file, "cuh", done, e);
  }
  return rc;
}

/* The parameter layouts the pasted twins read must be ftaxc's. */
static void write_layout_asserts(FILE *c, const ft_pasted *done) {
  for (int i = 0; i < done->n; i++) {
    if (!strcmp(done->names[i], "runtime.cuh"))
      fprintf(c, "static_assert(FTC_ACT_CLIP == %d && FTC_ACT_GELU == %d && FTC_ACT_GELU_TANH == %d && FTC_ACT_SIGMOID == %d && FTC_ACT_SILU == %d, \"templates/cuda/runtime.cuh and ftaxc disagree on the epilogue activations\");\n",
              FT_ACT_CLIP, FT_ACT_GELU, FT_ACT_GELU_TANH, FT_ACT_SIGMOID, FT_ACT_SILU);
    if (!strcmp(done->names[i], "elementwise.cuh"))
      fprintf(c, "static_assert(FTC_EW_MISH == %d && FTC_EW_CLIP == %d && FTC_EW_SHRINK == %d && FTC_EW_ADD == %d && FTC_EW_LAST == %d && FTC_EW_OUT == %d, \"templates/cuda/elementwise.cuh and ftaxc disagree on ftax.Elementwise's opcodes\");\n",
              FT_EW_MISH, FT_EW_CLIP, FT_EW_SHRINK, FT_EW_ADD, FT_EW_LAST, FT_EW_OUT);
    if (!strcmp(done->names[i], "attention.cuh"))
      fprintf(c, "static_assert(FTC_AT_O == %d && FTC_AT_ADD == %d && FTC_AT_SEL == %d && FTC_AT_ADD_FIRST == %d && FTC_AT_NP == %d && FTC_AT_SEL_CAUSAL == %d, \"templates/cuda/attention.cuh and ftaxc disagree on Attention's parameters\");\n",
              FT_AT_O, FT_AT_ADD, FT_AT_SEL, FT_AT_ADD_FIRST, FT_AT_NP, FT_AT_SEL_CAUSAL);
    if (!strcmp(done->names[i], "gemm.cuh"))
      fprintf(c, "static_assert(FTC_MM_ACT == %d && FTC_MM_BDIMS == %d, \"templates/cuda/gemm.cuh and ftaxc disagree on MatMul's parameters\");\n",
              FT_MM_ACT, FT_MM_BDIMS);
    if (!strcmp(done->names[i], "conv.cuh"))
      fprintf(c, "static_assert(FTC_CV_ACT == %d && FTC_CV_IN == %d && FTC_CV_RES == %d && FTC_CV_NP == %d, \"templates/cuda/conv.cuh and ftaxc disagree on Conv's parameters\");\n",
              FT_CV_ACT, FT_CV_IN, FT_CV_RES, FT_CV_NP);
    if (!strcmp(done->names[i], "pool.cuh"))
      fprintf(c, "static_assert(FTC_PL_PE == %d && FTC_PL_IN == %d && FTC_PL_NP == %d, \"templates/cuda/pool.cuh and ftaxc disagree on pooling's parameters\");\n",
              FT_PL_PE, FT_PL_IN, FT_PL_NP);
  }
}

/* static const TYPE NAME[] = {x_0, ..., x_n-1}: n values from get (at least one slot). */
static void write_array(FILE *c, const char *type, const char *name, int n, size_t (*get)(const ft_graph *, int, int),
                        const ft_graph *g, int arg) {
  fprintf(c, "static const %s %s[%d] = {", type, name, n ? n : 1);
  for (int i = 0; i < n; i++) fprintf(c, "%s%zu", i ? ", " : "", get(g, i, arg));
  fprintf(c, "%s};\n", n ? "" : "0");
}
static size_t in_bytes(const ft_graph *g, int i, int arg) { (void)arg; return ft_nbytes(&g->vals[g->inputs[i]].t); }
static size_t out_bytes(const ft_graph *g, int i, int arg) { (void)arg; return ft_nbytes(&g->vals[g->outputs[i]].t); }
static size_t in_half(const ft_graph *g, int i, int fp16) { return fp16 && g->vals[g->inputs[i]].t.dtype == FT_FLOAT; }
static size_t out_half(const ft_graph *g, int i, int fp16) { return fp16 && g->vals[g->outputs[i]].t.dtype == FT_FLOAT; }

/* What templates/cuda/program.cuh needs to know of the model, and each call's literal parameters. */
static void write_model_data(FILE *c, const ft_graph *g, const ft_lowered *lw, const ft_memplan *mp,
                             const ft_emit_opts *o, const ft_cuda_opts *co) {
  const char *P = o->name;
  int fp16 = co->precision == FT_PREC_FP16;
  size_t ws = (co->uses_blaslt || co->uses_dnn) ? (size_t)64 << 20 : 0;
  fprintf(c, "\n#define FTP_API(x) %s_##x\n#define FTP_NAME \"%s\"\n#define FTP_MODEL_HASH \"%s\"\n", P, P, o->model_hash);
  fprintf(c, "#define FTP_WEIGHT_BYTES %zuu\n#define FTP_ARENA_BYTES %zuu\n", mp->weight_bytes, mp->arena_bytes);
  fprintf(c, "#define FTP_NUM_INPUTS %d\n#define FTP_NUM_OUTPUTS %d\n#define FTP_NCALLS %d\n", g->n_inputs, g->n_outputs, lw->n);
  fprintf(c, "#define FTP_MATH %d\n#define FTP_PRECISION \"%s\"\n#define FTP_ARCH \"%s\"\n",
          co->precision == FT_PREC_FP16 ? 2 : co->precision == FT_PREC_TF32 ? 1 : 0, precision_name(co->precision), co->arch);
  fprintf(c, "#define FTP_WORKSPACE_BYTES %zuu\n#define FTP_CUDA_GRAPH %d\n", ws, co->graph);
  for (int s = 0; s < lw->n; s++) {
    const ft_kcall *k = &lw->calls[s];
    if (!k->kernel) continue;
    if (k->np) {
      fprintf(c, "static const int64_t %s_p%d[] = {", P, s);
      for (int i = 0; i < k->np; i++) fprintf(c, "%s%lld", i ? ", " : "", (long long)k->p[i]);
      fprintf(c, "};\n");
    }
    if (k->nf) {
      fprintf(c, "static const double %s_f%d[] = {", P, s);
      for (int i = 0; i < k->nf; i++) { fputs(i ? ", " : "", c); ft_emit_double(c, k->f[i]); }
      fprintf(c, "};\n");
    }
  }
  fputc('\n', c);
  write_array(c, "size_t", "ftp_in_bytes", g->n_inputs, in_bytes, g, 0);
  write_array(c, "size_t", "ftp_out_bytes", g->n_outputs, out_bytes, g, 0);
  write_array(c, "int", "ftp_in_half", g->n_inputs, in_half, g, fp16);
  write_array(c, "int", "ftp_out_half", g->n_outputs, out_half, g, fp16);
  fputc('\n', c);
}

/* ftp_plan: the init hook of every call that has one (GEMM and convolution plans). */
static void write_plan(FILE *c, const ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const char *P, int fp16) {
  fprintf(c, "static int ftp_plan(ftp_ctx *c) {\n  unsigned char *arena = c->arena, *weights = c->weights;\n  ftc_env *e = &c->env;\n  (void)arena; (void)weights; (void)e;\n");
  for (int s = 0; s < lw->n; s++) {
    const ft_kcall *k = &lw->calls[s];
    ft_twin t;
    char why[128], ps[64], fs[64];
    if (!k->kernel || ft_cuda_twin(k, fp16, &t, why, sizeof why) || !t.init[0]) continue;
    snprintf(ps, sizeof ps, k->np ? "%s_p%d" : "NULL", P, s);
    snprintf(fs, sizeof fs, k->nf ? "%s_f%d" : "NULL", P, s);
    fprintf(c, "  {\n");
    call_args(c, g, &g->nodes[lw->order[s]], mp);
    fprintf(c, "    if (%s(%s, %s, in_, out_, e, &c->plans[%d])) return ftp_at(c, ", t.init, ps, fs, s);
    ft_emit_c_string(c, ft_node_label(g, lw->order[s]));
    fprintf(c, ");\n  }\n");
  }
  fprintf(c, "  return 0;\n}\n\n");
}

/* One call of ftp_calls: its twin on the call's buffers, a failure naming the node. */
static int write_call(FILE *c, const ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const char *P, int fp16,
                      int s, ft_err *e) {
  const ft_kcall *k = &lw->calls[s];
  const ft_node *n = &g->nodes[lw->order[s]];
  ft_twin t;
  char why[128], ps[64], fs[64], shp[128];
  if (ft_cuda_twin(k, fp16, &t, why, sizeof why)) return ft_fail(e, FT_EUNSUPPORTED, "internal error: %s has no twin", k->kernel);
  snprintf(ps, sizeof ps, k->np ? "%s_p%d" : "NULL", P, s);
  snprintf(fs, sizeof fs, k->nf ? "%s_f%d" : "NULL", P, s);
  fprintf(c, "  { /* ");
  ft_emit_comment(c, ft_node_label(g, lw->order[s]));
  if (n->n_out > 0 && n->out[0] >= 0) {
    ft_shape_str(&g->vals[n->out[0]], shp, sizeof shp);
    fprintf(c, " -> %s[", ft_dtype_name(g->vals[n->out[0]].t.dtype));
    ft_emit_comment(c, shp);
    fputc(']', c);
  }
  fprintf(c, ": %s */\n", k->kernel);
  call_args(c, g, n, mp);
  fprintf(c, "    if ((%s(%s, %s, in_, out_, NULL, e, c->plans[%d])) || ftp_check(c)) return ftp_at(c, ", t.call, ps, fs, s);
  ft_emit_c_string(c, ft_node_label(g, lw->order[s]));
  fprintf(c, ");\n  }\n");
  return 0;
}

/* ftp_calls: every call in order, then the outputs no kernel wrote (constants, inputs, repeated
 * outputs) copied. */
static int write_calls(FILE *c, const ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const char *P, int fp16,
                       ft_err *e) {
  fprintf(c, "static int ftp_calls(ftp_ctx *c) {\n  unsigned char *arena = c->arena, *weights = c->weights;\n  ftc_env *e = &c->env;\n  (void)arena; (void)weights;\n");
  for (int s = 0; s < lw->n; s++) {
    int rc = lw->calls[s].kernel ? write_call(c, g, lw, mp, P, fp16, s, e) : 0;
    if (rc) return rc;
  }
  char buf[256];
  for (int i = 0; i < g->n_outputs; i++) {
    int v = g->outputs[i], first = 1;
    for (int j = 0; j < i; j++) if (g->outputs[j] == v) first = 0;
    if (mp->storage[v] == FT_S_OUTPUT && mp->offset[v] == i && first) continue;
    ptr_expr(buf, sizeof buf, mp, v);
    fprintf(c, "  FTC_CU(e, cudaMemcpyAsync(c->out_dev[%d], %s, %zu, cudaMemcpyDeviceToDevice, e->stream)); /* ", i, buf, dev_bytes(g, v, fp16));
    ft_emit_comment(c, g->vals[v].name);
    fprintf(c, " */\n");
  }
  fprintf(c, "  return 0;\n}\n\n");
  return 0;
}

/* ftp_free_plans: what the init hooks made. */
static void write_free_plans(FILE *c, const ft_lowered *lw, int fp16) {
  fprintf(c, "static void ftp_free_plans(ftp_ctx *c) {\n  (void)c;\n");
  for (int s = 0; s < lw->n; s++) {
    ft_twin t;
    char why[128];
    if (!lw->calls[s].kernel || ft_cuda_twin(&lw->calls[s], fp16, &t, why, sizeof why) || !t.free_fn) continue;
    fprintf(c, "  %s(c->plans[%d]);\n", t.free_fn, s);
  }
  fprintf(c, "}\n\n");
}

int ft_emit_cuda(ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const ft_emit_opts *o,
                 const ft_cuda_opts *co, FILE *c, FILE *h, FILE *w, ft_err *e) {
  const char *P = o->name;
  int fp16 = co->precision == FT_PREC_FP16;
  if (o->embed_weights) return ft_fail(e, FT_EUSAGE, "--embed-weights is not supported with --target cuda");
  int rc = ft_emit_weights(w, g, mp, o->model_hash, e);
  if (rc) return rc;
  char G[256];
  ft_emit_upper(G, sizeof G, P);
  write_header(h, g, mp, P, G);

  fprintf(c, "/* Generated by ftaxc %s for CUDA. Do not edit.\n * command: ", FTAX_VERSION);
  ft_emit_comment(c, o->cmdline);
  fprintf(c, "\n * model sha256: %s\n * nodes: %d, arena: %zu bytes (lower bound %zu), weights: %zu bytes\n"
             " * precision: %s, CUDA graph: %s, arch: %s\n */\n",
          o->model_hash, lw->n, mp->arena_bytes, mp->lower_bound, mp->weight_bytes, precision_name(co->precision),
          co->graph ? "yes" : "no", co->arch);
  fprintf(c, "#include \"%s\"\n\n", o->header);
  ft_pasted done = {{0}, 0};
  rc = paste_twins(c, lw, fp16, &done, e);
  if (rc) return rc;
  fprintf(c, "/* ---- the model ---- */\n");
  write_layout_asserts(c, &done);
  write_model_data(c, g, lw, mp, o, co);
  rc = ft_emit_paste_name(c, "program", "cuh", &done, e);
  if (rc) return rc;
  write_plan(c, g, lw, mp, P, fp16);
  rc = write_calls(c, g, lw, mp, P, fp16, e);
  if (rc) return rc;
  write_free_plans(c, lw, fp16);

  /* the command-line tool over the API */
  fprintf(c, "#ifndef %s_NO_MAIN\n", G);
  rc = ft_emit_paste_name(c, "cli_cuda", "cuh", &done, e);
  if (rc) return rc;
  ft_emit_io_table(c, "ft_prog_inputs", g, g->inputs, g->n_inputs);
  ft_emit_io_table(c, "ft_prog_outputs", g, g->outputs, g->n_outputs);
  rc = ft_emit_paste_name(c, "program_main", "cuh", &done, e);
  fprintf(c, "#endif\n");
  return rc;
}

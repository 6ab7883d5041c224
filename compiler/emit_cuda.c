/* Stage (--target cuda): write the CUDA program. It walks the same lowered calls and memory plan
 * as the C emitter, after the CUDA target stage (target_cuda.c) has made them a CUDA program's;
 * each call's kernel entry names its twin in templates/cuda (see runtime.cuh for the calling
 * convention), pasted like the C templates are.
 *
 * The generated program: one device arena and the weights uploaded at init, every GEMM and
 * convolution planned at init (descriptors, algorithms), one warm-up run at init, then with
 * --cuda-graph the whole run captured once and replayed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twins.h"
#include "elementwise.h"
#include "gemm.h"
#include "emit_util.h"
#include "passes.h"
#include "templates.h"
#include "version.h"

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

static void write_weights(FILE *w, const ft_graph *g, const ft_memplan *mp, const char *hash, ft_err *e, int *rc) {
  char head[64] = {0};
  memcpy(head, "FTAXW001", 8);
  uint64_t size = mp->weight_bytes;
  memcpy(head + 8, &size, 8);
  snprintf(head + 16, 48, "%.47s", hash);
  fwrite(head, 1, 64, w);
  static const char zeros[64];
  int64_t next = 0;
  while (next < (int64_t)mp->weight_bytes) {
    int best = -1;
    for (int v = 0; v < g->n_vals; v++)
      if (mp->storage[v] == FT_S_WEIGHT && mp->root[v] == v && mp->offset[v] == next) { best = v; break; }
    if (best < 0) { *rc = ft_fail(e, FT_EIO, "internal error: weights layout has a hole at %lld", (long long)next); return; }
    size_t nb = ft_nbytes(&g->vals[best].t);
    fwrite(g->vals[best].t.data, 1, nb, w);
    int64_t pos = next + (int64_t)nb;
    next = (pos + 63) & ~(int64_t)63;
    fwrite(zeros, 1, (size_t)(next - pos), w);
  }
}

int ft_emit_cuda(ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const ft_emit_opts *o,
                 const ft_cuda_opts *co, const ft_cuda_libs *libs, FILE *c, FILE *h, FILE *w, ft_err *e) {
  const char *P = o->name;
  int fp16 = co->precision == FT_PREC_FP16, rc = 0;
  if (o->embed_weights) return ft_fail(e, FT_EUSAGE, "--embed-weights is not supported with --target cuda");
  write_weights(w, g, mp, o->model_hash, e, &rc);
  if (rc) return rc;
  char G[256];
  ft_emit_upper(G, sizeof G, P);
  write_header(h, g, mp, P, G);

  /* ---- program ---- */
  fprintf(c, "/* Generated by ftaxc %s for CUDA. Do not edit.\n * command: ", FTAX_VERSION);
  ft_emit_comment(c, o->cmdline);
  fprintf(c, "\n * model sha256: %s\n * nodes: %d, arena: %zu bytes (lower bound %zu), weights: %zu bytes\n"
             " * precision: %s, CUDA graph: %s, arch: %s\n */\n",
          o->model_hash, lw->n, mp->arena_bytes, mp->lower_bound, mp->weight_bytes, precision_name(co->precision),
          co->graph ? "yes" : "no", co->arch);
  fprintf(c, "#include \"%s\"\n\n", o->header);
  ft_pasted done = {{0}, 0};
  rc = ft_emit_paste_name(c, "runtime", "cuh", &done, e);
  if (!rc) rc = ft_emit_paste_name(c, "elementwise", "cuh", &done, e); /* the fp16 edge conversions use ftc_cast */
  for (int s = 0; s < lw->n && !rc; s++) {
    ft_twin_call t;
    char why[128];
    if (!lw->calls[s].entry) continue;
    if (ft_cuda_twin(&lw->calls[s], fp16, &t, why, sizeof why)) return ft_fail(e, FT_EUNSUPPORTED, "internal error: %s has no twin", lw->calls[s].entry->name);
    rc = ft_emit_paste_name(c, t.file, "cuh", &done, e);
  }
  if (rc) return rc;

  fprintf(c, "/* ---- the model ---- */\n#include <fcntl.h>\n#include <stdlib.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n\n");
  /* the codes the twins mirror must be ftaxc's (the parameter layouts are shared: templates/common) */
  for (int i = 0; i < done.n; i++) {
    if (!strcmp(done.names[i], "runtime.cuh"))
      fprintf(c, "static_assert(FTC_ACT_CLIP == %d && FTC_ACT_GELU == %d && FTC_ACT_GELU_TANH == %d && FTC_ACT_SIGMOID == %d && FTC_ACT_SILU == %d, \"templates/cuda/runtime.cuh and ftaxc disagree on the epilogue activations\");\n",
              FT_ACT_CLIP, FT_ACT_GELU, FT_ACT_GELU_TANH, FT_ACT_SIGMOID, FT_ACT_SILU);
    if (!strcmp(done.names[i], "elementwise.cuh"))
      fprintf(c, "static_assert(FTC_EW_MISH == %d && FTC_EW_CLIP == %d && FTC_EW_SHRINK == %d && FTC_EW_ADD == %d && FTC_EW_LAST == %d && FTC_EW_OUT == %d, \"templates/cuda/elementwise.cuh and ftaxc disagree on ftax.Elementwise's opcodes\");\n",
              FT_EW_MISH, FT_EW_CLIP, FT_EW_SHRINK, FT_EW_ADD, FT_EW_LAST, FT_EW_OUT);
  }
  int NI = g->n_inputs, NO = g->n_outputs, NC = lw->n;
  fprintf(c, "\n#define %s_NCALLS %d\n", G, NC > 0 ? NC : 1);
  /* literal parameters, one array per call */
  for (int s = 0; s < lw->n; s++) {
    const ft_kcall *k = &lw->calls[s];
    if (!k->entry) continue;
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
  fprintf(c, "\nstatic const size_t %s_in_bytes[%d] = {", P, NI ? NI : 1);
  for (int i = 0; i < NI; i++) fprintf(c, "%s%zu", i ? ", " : "", ft_nbytes(&g->vals[g->inputs[i]].t));
  fprintf(c, "%s};\nstatic const size_t %s_out_bytes[%d] = {", NI ? "" : "0", P, NO ? NO : 1);
  for (int i = 0; i < NO; i++) fprintf(c, "%s%zu", i ? ", " : "", ft_nbytes(&g->vals[g->outputs[i]].t));
  fprintf(c, "%s};\n", NO ? "" : "0");
  /* which inputs and outputs are float32 at the API but half on the device */
  fprintf(c, "static const int %s_in_half[%d] = {", P, NI ? NI : 1);
  for (int i = 0; i < NI; i++) fprintf(c, "%s%d", i ? ", " : "", fp16 && g->vals[g->inputs[i]].t.dtype == FT_FLOAT);
  fprintf(c, "%s};\nstatic const int %s_out_half[%d] = {", NI ? "" : "0", P, NO ? NO : 1);
  for (int i = 0; i < NO; i++) fprintf(c, "%s%d", i ? ", " : "", fp16 && g->vals[g->outputs[i]].t.dtype == FT_FLOAT);
  fprintf(c, "%s};\n\n", NO ? "" : "0");

  fprintf(c,
          "struct %s_ctx {\n"
          "  ftc_env env;\n"
          "  unsigned char *arena, *weights;\n"
          "  int own_arena, debug_sync, capturing;\n"
          "  void *in_api[%d], *in_dev[%d], *out_api[%d], *out_dev[%d]; /* device buffers (dev: what the kernels see) */\n"
          "  void *in_host[%d], *out_host[%d]; /* pinned staging for %s_run */\n"
          "  void *plans[%s_NCALLS];\n"
          "  cudaGraph_t graph;\n"
          "  cudaGraphExec_t exec;\n"
          "};\n\n",
          P, NI ? NI : 1, NI ? NI : 1, NO ? NO : 1, NO ? NO : 1, NI ? NI : 1, NO ? NO : 1, P, G);
  fprintf(c,
          "/* Prefix the failing node to the message. */\n"
          "static int %s_at(%s_ctx *c, const char *where) {\n"
          "  char tmp[sizeof c->env.err];\n"
          "  snprintf(tmp, sizeof tmp, \"%%s: %%s\", where, c->env.err);\n"
          "  memcpy(c->env.err, tmp, sizeof tmp);\n"
          "  return 1;\n}\n\n"
          "/* FTAX_CUDA_SYNC=1: wait after every call, so that a failing kernel names its node. */\n"
          "static int %s_check(%s_ctx *c) {\n"
          "  if (!c->debug_sync || c->capturing) return 0;\n"
          "  FTC_CU(&c->env, cudaStreamSynchronize(c->env.stream));\n"
          "  return 0;\n}\n\n",
          P, P, P, P);

  /* ---- init hooks ---- */
  fprintf(c, "/* GEMM and convolution plans: descriptors and algorithms, made once. */\n");
  fprintf(c, "static int %s_plan(%s_ctx *c) {\n  unsigned char *arena = c->arena, *weights = c->weights;\n  ftc_env *e = &c->env;\n  (void)arena; (void)weights; (void)e;\n", P, P);
  for (int s = 0; s < lw->n; s++) {
    const ft_kcall *k = &lw->calls[s];
    ft_twin_call t;
    char why[128], ps[64], fs[64];
    if (!k->entry || ft_cuda_twin(k, fp16, &t, why, sizeof why) || !t.init[0]) continue;
    snprintf(ps, sizeof ps, k->np ? "%s_p%d" : "NULL", P, s);
    snprintf(fs, sizeof fs, k->nf ? "%s_f%d" : "NULL", P, s);
    fprintf(c, "  {\n");
    call_args(c, g, &g->nodes[lw->order[s]], mp);
    fprintf(c, "    if (%s(%s, %s, in_, out_, e, &c->plans[%d])) return %s_at(c, ", t.init, ps, fs, s, P);
    ft_emit_c_string(c, ft_node_label(g, lw->order[s]));
    fprintf(c, ");\n  }\n");
  }
  fprintf(c, "  return 0;\n}\n\n");

  /* ---- the run ---- */
  fprintf(c, "/* One inference on the device buffers: every call, in order, on c->env.stream. */\n");
  fprintf(c, "static int %s_launch(%s_ctx *c) {\n  unsigned char *arena = c->arena, *weights = c->weights;\n  ftc_env *e = &c->env;\n  (void)arena; (void)weights;\n", P, P);
  fprintf(c, "  for (int i = 0; i < %d; i++) /* float32 inputs into their half buffers */\n"
             "    if (%s_in_half[i]) {\n"
             "      const int64_t n_[] = {(int64_t)(%s_in_bytes[i] / 4)};\n"
             "      const void *in_[] = {c->in_api[i]};\n      void *out_[] = {c->in_dev[i]};\n"
             "      if (ftc_cast<float, __half, 0>(n_, NULL, in_, out_, NULL, e, NULL)) return %s_at(c, \"converting the inputs to float16\");\n"
             "    }\n",
          NI, P, P, P);
  char buf[256];
  for (int s = 0; s < lw->n; s++) {
    const ft_kcall *k = &lw->calls[s];
    const ft_node *n = &g->nodes[lw->order[s]];
    ft_twin_call t;
    char why[128], ps[64], fs[64];
    if (!k->entry) continue;
    if (ft_cuda_twin(k, fp16, &t, why, sizeof why)) return ft_fail(e, FT_EUNSUPPORTED, "internal error: %s has no twin", k->entry->name);
    snprintf(ps, sizeof ps, k->np ? "%s_p%d" : "NULL", P, s);
    snprintf(fs, sizeof fs, k->nf ? "%s_f%d" : "NULL", P, s);
    fprintf(c, "  { /* ");
    ft_emit_comment(c, ft_node_label(g, lw->order[s]));
    char shp[128];
    if (n->n_out > 0 && n->out[0] >= 0) {
      ft_shape_str(&g->vals[n->out[0]], shp, sizeof shp);
      fprintf(c, " -> %s[", ft_dtype_name(g->vals[n->out[0]].t.dtype));
      ft_emit_comment(c, shp);
      fputc(']', c);
    }
    fprintf(c, ": %s */\n", k->entry->name);
    call_args(c, g, n, mp);
    fprintf(c, "    if ((%s(%s, %s, in_, out_, NULL, e, c->plans[%d])) || %s_check(c)) return %s_at(c, ", t.call, ps, fs, s, P, P);
    ft_emit_c_string(c, ft_node_label(g, lw->order[s]));
    fprintf(c, ");\n  }\n");
  }
  /* outputs no kernel wrote: constants, inputs, repeated outputs */
  for (int i = 0; i < NO; i++) {
    int v = g->outputs[i], first = 1;
    for (int j = 0; j < i; j++) if (g->outputs[j] == v) first = 0;
    if (mp->storage[v] == FT_S_OUTPUT && mp->offset[v] == i && first) continue;
    ptr_expr(buf, sizeof buf, mp, v);
    fprintf(c, "  FTC_CU(e, cudaMemcpyAsync(c->out_dev[%d], %s, %zu, cudaMemcpyDeviceToDevice, e->stream)); /* ", i, buf, dev_bytes(g, v, fp16));
    ft_emit_comment(c, g->vals[v].name);
    fprintf(c, " */\n");
  }
  fprintf(c, "  for (int i = 0; i < %d; i++) /* half outputs back to float32 */\n"
             "    if (%s_out_half[i]) {\n"
             "      const int64_t n_[] = {(int64_t)(%s_out_bytes[i] / 4)};\n"
             "      const void *in_[] = {c->out_dev[i]};\n      void *out_[] = {c->out_api[i]};\n"
             "      if (ftc_cast<__half, float, 0>(n_, NULL, in_, out_, NULL, e, NULL)) return %s_at(c, \"converting the outputs to float32\");\n"
             "    }\n  return 0;\n}\n\n",
          NO, P, P, P);

  /* ---- the API ---- */
  fprintf(c, "static const char %s_model_hash[] = \"%s\";\n\n", P, o->model_hash);
  fprintf(c,
          "const char *%s_error(const %s_ctx *c) { return c ? c->env.err : \"no context\"; }\n"
          "void *%s_stream(%s_ctx *c) { return (void *)c->env.stream; }\n"
          "void *%s_device_input(%s_ctx *c, int i) { return i >= 0 && i < %d ? c->in_api[i] : NULL; }\n"
          "void *%s_device_output(%s_ctx *c, int i) { return i >= 0 && i < %d ? c->out_api[i] : NULL; }\n\n",
          P, P, P, P, P, P, NI, P, P, NO);
  fprintf(c,
          "int %s_upload(%s_ctx *c, const void *const *inputs) {\n"
          "  for (int i = 0; i < %d; i++)\n"
          "    FTC_CU(&c->env, cudaMemcpyAsync(c->in_api[i], inputs[i], %s_in_bytes[i], cudaMemcpyHostToDevice, c->env.stream));\n"
          "  return 0;\n}\n\n"
          "int %s_download(%s_ctx *c, void *const *outputs) {\n"
          "  for (int i = 0; i < %d; i++)\n"
          "    FTC_CU(&c->env, cudaMemcpyAsync(outputs[i], c->out_api[i], %s_out_bytes[i], cudaMemcpyDeviceToHost, c->env.stream));\n"
          "  return 0;\n}\n\n"
          "int %s_enqueue(%s_ctx *c) {\n"
          "  if (c->exec) {\n"
          "    FTC_CU(&c->env, cudaGraphLaunch(c->exec, c->env.stream));\n"
          "    return 0;\n"
          "  }\n"
          "  return %s_launch(c);\n}\n\n"
          "int %s_sync(%s_ctx *c) {\n"
          "  cudaError_t r = cudaStreamSynchronize(c->env.stream);\n"
          "  if (r == cudaSuccess) r = cudaGetLastError();\n"
          "  if (r != cudaSuccess)\n"
          "    return ftc_fail(&c->env, \"the model failed on the GPU: %%s (%%s)%%s; FTAX_CUDA_SYNC=1 names the failing node\",\n"
          "                    cudaGetErrorString(r), cudaGetErrorName(r), ftc_cuda_hint(r));\n"
          "  return 0;\n}\n\n",
          P, P, NI, P, P, P, NO, P, P, P, P, P, P);
  fprintf(c,
          "int %s_run(%s_ctx *c, const void *const *inputs, void *const *outputs) {\n"
          "  for (int i = 0; i < %d; i++) memcpy(c->in_host[i], inputs[i], %s_in_bytes[i]);\n"
          "  if (%s_upload(c, (const void *const *)c->in_host) || %s_enqueue(c) || %s_download(c, c->out_host) || %s_sync(c)) return 1;\n"
          "  for (int i = 0; i < %d; i++) memcpy(outputs[i], c->out_host[i], %s_out_bytes[i]);\n"
          "  return 0;\n}\n\n",
          P, P, NI, P, P, P, P, P, NO, P);
  /* free */
  fprintf(c, "void %s_free(%s_ctx *c) {\n  if (!c) return;\n  if (c->env.stream) cudaStreamSynchronize(c->env.stream);\n", P, P);
  fprintf(c, "  if (c->exec) cudaGraphExecDestroy(c->exec);\n  if (c->graph) cudaGraphDestroy(c->graph);\n");
  for (int s = 0; s < lw->n; s++) {
    ft_twin_call t;
    char why[128];
    if (!lw->calls[s].entry || ft_cuda_twin(&lw->calls[s], fp16, &t, why, sizeof why) || !t.free_fn) continue;
    fprintf(c, "  %s(c->plans[%d]);\n", t.free_fn, s);
  }
  fprintf(c,
          "  if (c->env.blas && c->env.blas_free) c->env.blas_free(c->env.blas);\n"
          "  if (c->env.dnn && c->env.dnn_free) c->env.dnn_free(c->env.dnn);\n"
          "  for (int i = 0; i < %d; i++) {\n"
          "    if (c->in_dev[i] && c->in_dev[i] != c->in_api[i]) cudaFree(c->in_dev[i]);\n"
          "    cudaFree(c->in_api[i]);\n    cudaFreeHost(c->in_host[i]);\n  }\n"
          "  for (int i = 0; i < %d; i++) {\n"
          "    if (c->out_dev[i] && c->out_dev[i] != c->out_api[i]) cudaFree(c->out_dev[i]);\n"
          "    cudaFree(c->out_api[i]);\n    cudaFreeHost(c->out_host[i]);\n  }\n"
          "  if (c->own_arena) cudaFree(c->arena);\n"
          "  cudaFree(c->weights);\n  cudaFree(c->env.workspace);\n"
          "  if (c->env.stream) cudaStreamDestroy(c->env.stream);\n  free(c);\n}\n\n",
          NI, NO);

  /* init */
  size_t ws = (libs->blaslt || libs->dnn) ? (size_t)64 << 20 : 0;
  fprintf(c,
          "#define %s_TRY(call) do { if (call) goto fail; } while (0)\n"
          "int %s_init_with_arena(%s_ctx **out, const char *path, void *arena, char *err, size_t n) {\n"
          "  %s_ctx *c = (%s_ctx *)calloc(1, sizeof *c);\n"
          "  ftc_env *e;\n  int count = 0, dev = 0;\n  const char *s;\n"
          "  struct cudaDeviceProp prop;\n  struct cudaFuncAttributes fa;\n"
          "  unsigned char *h = NULL;\n  size_t len = 0;\n  int fd;\n  struct stat st;\n  unsigned long long size;\n  cudaError_t r;\n"
          "  if (!c) { snprintf(err, n, \"out of memory\"); return 4; }\n"
          "  e = &c->env;\n"
          "  s = getenv(\"FTAX_CUDA_SYNC\");\n  c->debug_sync = s && s[0] == '1';\n"
          "  s = getenv(\"FTAX_CUDA_VERBOSE\");\n  e->verbose = s && s[0] == '1';\n"
          "  e->math = %d;\n"
          "  r = cudaGetDeviceCount(&count);\n"
          "  if (r != cudaSuccess || count == 0) {\n"
          "    snprintf(err, n, \"no CUDA device (cudaGetDeviceCount: %%s)\", r != cudaSuccess ? cudaGetErrorString(r) : \"0 devices\");\n"
          "    free(c);\n    return 2;\n  }\n"
          "  cudaGetDevice(&dev);\n"
          "  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) { snprintf(err, n, \"cannot query CUDA device %%d\", dev); free(c); return 2; }\n"
          "  e->sm_count = prop.multiProcessorCount;\n"
          "  r = cudaFuncGetAttributes(&fa, ftc_probe_kernel);\n"
          "  if (r != cudaSuccess) {\n"
          "    snprintf(err, n, \"this program has no code for %%s (sm_%%d%%d): it was built for %s (ftaxc --arch); %%s\", prop.name, prop.major, prop.minor, cudaGetErrorString(r));\n"
          "    free(c);\n    return 2;\n  }\n",
          P, P, P, P, P, co->precision == FT_PREC_FP16 ? 2 : co->precision == FT_PREC_TF32 ? 1 : 0, co->arch);
  fprintf(c,
          "  /* the weights: checked, uploaded once */\n"
          "  if (!path) { snprintf(err, n, \"this program needs its weights file\"); free(c); return 1; }\n"
          "  fd = open(path, O_RDONLY);\n"
          "  if (fd < 0 || fstat(fd, &st)) { snprintf(err, n, \"%%s: cannot open the weights file\", path); if (fd >= 0) close(fd); free(c); return 4; }\n"
          "  len = (size_t)st.st_size;\n"
          "  h = len ? (unsigned char *)mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;\n"
          "  close(fd);\n"
          "  if (!h || h == (unsigned char *)MAP_FAILED) { snprintf(err, n, \"%%s: cannot map the weights file\", path); free(c); return 4; }\n"
          "  if (len < 64 || memcmp(h, \"FTAXW001\", 8)) { snprintf(err, n, \"%%s: not an ftax weights file\", path); munmap(h, len); free(c); return 2; }\n"
          "  memcpy(&size, h + 8, 8);\n"
          "  if (strncmp((const char *)h + 16, %s_model_hash, 47)) { snprintf(err, n, \"%%s: weights belong to another model (hash %%.16s..., this program wants %%.16s...)\", path, (const char *)h + 16, %s_model_hash); munmap(h, len); free(c); return 2; }\n"
          "  if (size != %zuu || len < 64 + size) { snprintf(err, n, \"%%s: weights file is %%zu bytes, expected %zu\", path, len); munmap(h, len); free(c); return 2; }\n",
          P, P, mp->weight_bytes, mp->weight_bytes + 64);
  fprintf(c,
          "  %s_TRY(ftc_init_stream(e));\n"
          "  %s_TRY(ftc_alloc(e, (void **)&c->weights, %zuu));\n"
          "  if (%zuu) %s_TRY(ftc_upload_now(e, c->weights, h + 64, %zuu));\n"
          "  munmap(h, len);\n  h = NULL;\n"
          "  c->arena = (unsigned char *)arena;\n"
          "  if (!arena) { c->own_arena = 1; %s_TRY(ftc_alloc(e, (void **)&c->arena, %zuu)); }\n"
          "  %s_TRY(ftc_zero(e, c->arena, %zuu));\n"
          "  for (int i = 0; i < %d; i++) {\n"
          "    %s_TRY(ftc_alloc(e, &c->in_api[i], %s_in_bytes[i]));\n"
          "    c->in_dev[i] = c->in_api[i];\n"
          "    if (%s_in_half[i]) %s_TRY(ftc_alloc(e, &c->in_dev[i], %s_in_bytes[i] / 2));\n"
          "    %s_TRY(ftc_alloc_host(e, &c->in_host[i], %s_in_bytes[i]));\n"
          "  }\n"
          "  for (int i = 0; i < %d; i++) {\n"
          "    %s_TRY(ftc_alloc(e, &c->out_api[i], %s_out_bytes[i]));\n"
          "    c->out_dev[i] = c->out_api[i];\n"
          "    if (%s_out_half[i]) %s_TRY(ftc_alloc(e, &c->out_dev[i], %s_out_bytes[i] / 2));\n"
          "    %s_TRY(ftc_alloc_host(e, &c->out_host[i], %s_out_bytes[i]));\n"
          "  }\n"
          "  e->workspace_bytes = %zuu;\n"
          "  if (e->workspace_bytes) %s_TRY(ftc_alloc(e, &e->workspace, e->workspace_bytes));\n"
          "  %s_TRY(%s_plan(c));\n"
          "  /* warm-up: loads every kernel, settles algorithm fallbacks, reports any failure now */\n"
          "  %s_TRY(%s_launch(c) || %s_sync(c));\n",
          P, P, mp->weight_bytes ? mp->weight_bytes : 64, mp->weight_bytes, P, mp->weight_bytes, P,
          mp->arena_bytes ? mp->arena_bytes : 64, P, mp->arena_bytes ? mp->arena_bytes : 64, NI, P, P, P, P, P, P, P, NO, P, P, P, P, P, P, P, ws, P, P, P, P, P, P);
  if (co->graph)
    fprintf(c,
            "  /* the whole run captured once; %s_enqueue replays it */\n"
            "  c->capturing = 1;\n"
            "  %s_TRY(ftc_capture_begin(e));\n"
            "  {\n    int lrc = %s_launch(c);\n"
            "    int crc = ftc_capture_end(e, lrc, &c->graph, &c->exec);\n"
            "    c->capturing = 0;\n"
            "    if (lrc || crc) goto fail;\n  }\n"
            "  %s_TRY(%s_sync(c));\n",
            P, P, P, P, P);
  fprintf(c,
          "  *out = c;\n  return 0;\nfail:\n"
          "  snprintf(err, n, \"%%s\", e->err);\n"
          "  if (h) munmap(h, len);\n"
          "  %s_free(c);\n  return strstr(err, \"out of memory\") ? 4 : 2;\n}\n#undef %s_TRY\n\n",
          P, P);
  fprintf(c, "int %s_init(%s_ctx **out, const char *path, char *err, size_t n) {\n  return %s_init_with_arena(out, path, NULL, err, n);\n}\n\n", P, P, P);

  /* ---- command-line tool ---- */
  fprintf(c, "#ifndef %s_NO_MAIN\n", G);
  rc = ft_emit_paste_name(c, "cli_cuda", "cuh", &done, e);
  if (rc) return rc;
  ft_emit_io_table(c, "ft_prog_inputs", g, g->inputs, g->n_inputs);
  ft_emit_io_table(c, "ft_prog_outputs", g, g->outputs, g->n_outputs);
  fprintf(c,
          "static void *ft_prog_init(const char *weights, char *err, size_t n) {\n"
          "  %s_ctx *ctx = NULL;\n  return %s_init(&ctx, weights, err, n) ? NULL : ctx;\n}\n"
          "static int ft_prog_run(void *ctx, const void *const *in, void *const *out) {\n"
          "  if (!%s_run((%s_ctx *)ctx, in, out)) return 0;\n"
          "  fprintf(stderr, \"error: %%s\\n\", %s_error((%s_ctx *)ctx));\n  return 6;\n}\n"
          "static void ft_prog_free(void *ctx) { %s_free((%s_ctx *)ctx); }\n"
          "static int ftc_prog_upload(void *ctx, const void *const *in) { return %s_upload((%s_ctx *)ctx, in); }\n"
          "static int ftc_prog_enqueue(void *ctx) { return %s_enqueue((%s_ctx *)ctx); }\n"
          "static int ftc_prog_download(void *ctx, void *const *out) { return %s_download((%s_ctx *)ctx, out); }\n"
          "static int ftc_prog_sync(void *ctx) { return %s_sync((%s_ctx *)ctx); }\n"
          "static void *ftc_prog_stream(void *ctx) { return %s_stream((%s_ctx *)ctx); }\n"
          "static const char *ftc_prog_error(void *ctx) { return %s_error((%s_ctx *)ctx); }\n\n"
          "int main(int argc, char **argv) {\n"
          "  ft_program prog = {\"%s\", %d, %d, ft_prog_inputs, ft_prog_outputs, ft_prog_init, ft_prog_run, ft_prog_free, %zuu, 0, NULL};\n"
          "  ftc_program gpu = {ftc_prog_upload, ftc_prog_enqueue, ftc_prog_download, ftc_prog_sync, ftc_prog_stream, ftc_prog_error, \"%s\", %d, \"%s\"};\n"
          "  return ftc_cli_main(argc, argv, &prog, &gpu);\n}\n#endif\n",
          P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, NI, NO, mp->arena_bytes,
          precision_name(co->precision), co->graph, co->arch);
  return 0;
}

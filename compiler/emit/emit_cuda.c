/* Stage (--target cuda): write the CUDA program. It walks the same lowered calls and memory plan
 * as the C emitter, after the CUDA target stage (target_cuda.c) has made them a CUDA program's;
 * each call's kernel entry names its twin in templates/cuda (see runtime.cuh for the calling
 * convention), pasted like the C templates are; the fixed part of the program is
 * templates/cuda/program.cuh, and this file prints the model's data, plans and calls.
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

/* The kernel templates: the runtime, elementwise (the fp16 edge conversions use ftc_cast) and
 * each call's twin. */
static int paste_twins(FILE *c, const ft_lowered *lw, int fp16, ft_pasted *done, ft_err *e) {
  int rc = ft_emit_paste_name(c, "runtime", "cuh", done, e);
  if (!rc) rc = ft_emit_paste_name(c, "elementwise", "cuh", done, e);
  for (int s = 0; s < lw->n && !rc; s++) {
    ft_twin_call t;
    char why[128];
    if (!lw->calls[s].entry) continue;
    if (ft_cuda_twin(&lw->calls[s], fp16, &t, why, sizeof why)) return ft_fail(e, FT_EUNSUPPORTED, "internal error: %s has no twin", lw->calls[s].entry->name);
    rc = ft_emit_paste_name(c, t.file, "cuh", done, e);
  }
  return rc;
}

/* The codes the pasted twins mirror must be ftaxc's (the parameter layouts are shared: templates/common). */
static void write_layout_asserts(FILE *c, const ft_pasted *done) {
  for (int i = 0; i < done->n; i++) {
    if (!strcmp(done->names[i], "runtime.cuh"))
      fprintf(c, "static_assert(FTC_ACT_CLIP == %d && FTC_ACT_GELU == %d && FTC_ACT_GELU_TANH == %d && FTC_ACT_SIGMOID == %d && FTC_ACT_SILU == %d, \"templates/cuda/runtime.cuh and ftaxc disagree on the epilogue activations\");\n",
              FT_ACT_CLIP, FT_ACT_GELU, FT_ACT_GELU_TANH, FT_ACT_SIGMOID, FT_ACT_SILU);
    if (!strcmp(done->names[i], "elementwise.cuh"))
      fprintf(c, "static_assert(FTC_EW_MISH == %d && FTC_EW_CLIP == %d && FTC_EW_SHRINK == %d && FTC_EW_ADD == %d && FTC_EW_LAST == %d && FTC_EW_OUT == %d, \"templates/cuda/elementwise.cuh and ftaxc disagree on ftax.Elementwise's opcodes\");\n",
              FT_EW_MISH, FT_EW_CLIP, FT_EW_SHRINK, FT_EW_ADD, FT_EW_LAST, FT_EW_OUT);
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
                             const ft_emit_opts *o, const ft_cuda_opts *co, const ft_cuda_libs *libs) {
  const char *P = o->name;
  int fp16 = co->precision == FT_PREC_FP16;
  size_t ws = (libs->blaslt || libs->dnn) ? (size_t)64 << 20 : 0;
  fprintf(c, "\n#define FTP_API(x) %s_##x\n#define FTP_NAME \"%s\"\n#define FTP_MODEL_HASH \"%s\"\n", P, P, o->model_hash);
  fprintf(c, "#define FTP_WEIGHT_BYTES %zuu\n#define FTP_ARENA_BYTES %zuu\n", mp->weight_bytes, mp->arena_bytes);
  fprintf(c, "#define FTP_NUM_INPUTS %d\n#define FTP_NUM_OUTPUTS %d\n#define FTP_NCALLS %d\n", g->n_inputs, g->n_outputs, lw->n);
  fprintf(c, "#define FTP_MATH %d\n#define FTP_PRECISION \"%s\"\n#define FTP_ARCH \"%s\"\n",
          co->precision == FT_PREC_FP16 ? 2 : co->precision == FT_PREC_TF32 ? 1 : 0, precision_name(co->precision), co->arch);
  fprintf(c, "#define FTP_WORKSPACE_BYTES %zuu\n#define FTP_CUDA_GRAPH %d\n", ws, co->graph);
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
    ft_twin_call t;
    char why[128], ps[64], fs[64];
    if (!k->entry || ft_cuda_twin(k, fp16, &t, why, sizeof why) || !t.init[0]) continue;
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
  ft_twin_call t;
  char why[128], ps[64], fs[64], shp[128];
  if (ft_cuda_twin(k, fp16, &t, why, sizeof why)) return ft_fail(e, FT_EUNSUPPORTED, "internal error: %s has no twin", k->entry->name);
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
  fprintf(c, ": %s */\n", k->entry->name);
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
    int rc = lw->calls[s].entry && !mp->elided[s] ? write_call(c, g, lw, mp, P, fp16, s, e) : 0;
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
    ft_twin_call t;
    char why[128];
    if (!lw->calls[s].entry || ft_cuda_twin(&lw->calls[s], fp16, &t, why, sizeof why) || !t.free_fn) continue;
    fprintf(c, "  %s(c->plans[%d]);\n", t.free_fn, s);
  }
  fprintf(c, "}\n\n");
}

int ft_emit_cuda(ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const ft_emit_opts *o,
                 const ft_cuda_opts *co, const ft_cuda_libs *libs, FILE *c, FILE *h, FILE *w, ft_err *e) {
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
  write_model_data(c, g, lw, mp, o, co, libs);
  rc = ft_emit_paste_name(c, "program", "cuh", &done, e);
  if (rc) return rc;
  write_plan(c, g, lw, mp, P, fp16);
  rc = write_calls(c, g, lw, mp, P, fp16, e);
  if (rc) return rc;
  write_free_plans(c, lw, fp16);

  return ft_emit_main(c, G, "cli_cuda", "cuh", g, &done, e);
}

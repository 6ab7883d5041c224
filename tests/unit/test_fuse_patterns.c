/* The transformer fusions (compiler/fuse/fuse_{embed_layernorm,layernorm,skip_layernorm,gelu,
 * gemm_epilogue}.c): for each variant of each pattern a small ONNX graph, spelled out below,
 * goes through the compiler's pipeline twice in this process, with fusion and without
 * (--no-fuse); the test checks the match counts of every pass, the fused ops left in the graph,
 * and that both graphs compute the same outputs (1e-5 relative) on random inputs, run kernel by
 * kernel here. Near-misses (a mean over another axis, a wrong constant, an intermediate read
 * elsewhere, a broadcasting Add ...) must not fuse, and still compute the same. One test builds
 * real programs with ftaxc, fused and not, and compares what they write. */
#include <math.h>

#include "fuse.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }
TestSuite(fuse_patterns, .init = setup, .fini = teardown);

/* ---- building models ----------------------------------------------------------------------- */

#define D(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

typedef struct input { char *name; int dtype; int64_t dims[8]; int rank; int64_t vocab; } input;

typedef struct mb {
  Onnx__GraphProto *g;
  int opset, n_nodes, n_inputs;
  input inputs[8];
  uint32_t seed;
} mb;

static uint32_t rnd(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }
static float rndf(uint32_t *s) { return (float)(rnd(s) >> 8) / 16777216.0f * 2.0f - 1.0f; } /* [-1, 1) */

static mb *mb_new(int opset) {
  mb *m = calloc(1, sizeof *m);
  m->g = tb_graph("fusion_case");
  m->opset = opset;
  m->seed = 12345;
  return m;
}

static char *shape_str(const int64_t *d, int rank) {
  char *s = strdup("");
  for (int i = 0; i < rank; i++) {
    char *t = tu_fmt("%s%s%lld", s, i ? "," : "", (long long)d[i]);
    free(s);
    s = t;
  }
  return s;
}

/* A graph input; integer inputs (ids) are drawn from [0, vocab), or for vocab < 0 from
 * [vocab - 2, 2 - vocab): negative ids, and ids out of range at both ends. */
static void mb_in(mb *m, const char *name, int dtype, const int64_t *d, int rank, int64_t vocab) {
  tb_add_input(m->g, tb_value(name, dtype, shape_str(d, rank)));
  input *in = &m->inputs[m->n_inputs++];
  in->name = strdup(name);
  in->dtype = dtype;
  in->rank = rank;
  memcpy(in->dims, d, sizeof(int64_t) * (size_t)rank);
  in->vocab = vocab;
}
static void mb_x(mb *m, const char *name, const int64_t *d, int rank) { mb_in(m, name, FT_FLOAT, d, rank, 0); }

static void mb_out(mb *m, const char *name) { tb_add_output(m->g, tb_value(name, FT_FLOAT, NULL)); }

/* A float32 initializer: offset + scale * uniform[-1, 1). */
static void mb_w(mb *m, const char *name, const int64_t *d, int rank, float offset, float scale) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= d[i];
  float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) v[i] = offset + scale * rndf(&m->seed);
  tb_add_init(m->g, tb_tensor_f32(name, rank, d, v));
}

static void mb_scalar(mb *m, const char *name, float v) { tb_add_init(m->g, tb_tensor_f32(name, 0, NULL, &v)); }

static void mb_ints(mb *m, const char *name, const int64_t *v, int n) {
  int64_t d[1] = {n};
  tb_add_init(m->g, tb_tensor_i64(name, 1, d, v));
}

static Onnx__NodeProto *mb_node(mb *m, const char *op, const char *ins, const char *outs) {
  char *name = tu_fmt("n%d_%s", m->n_nodes++, op);
  Onnx__NodeProto *n = tb_node(op, name, ins, outs);
  tb_add_node(m->g, n);
  return n;
}

/* ReduceMean over the given axis, keepdims (axes an attribute before opset 18, an input after). */
static void mb_mean(mb *m, const char *in, const char *out, int64_t axis) {
  if (m->opset >= 18) {
    char *name = tu_fmt("axes_%s", out);
    mb_ints(m, name, &axis, 1);
    mb_node(m, "ReduceMean", tu_fmt("%s,%s", in, name), out);
  } else
    tb_attr_ints(mb_node(m, "ReduceMean", in, out), "axes", &axis, 1);
}

/* The exporters' layer norm of x over `axis` into y (prefix p names the intermediates), with
 * gamma/beta (beta NULL: none). */
static void mb_layernorm(mb *m, const char *p, const char *x, const char *gamma, const char *beta, const char *y,
                         int64_t axis) {
  mb_mean(m, x, tu_fmt("%s_mu", p), axis);
  mb_node(m, "Sub", tu_fmt("%s,%s_mu", x, p), tu_fmt("%s_d", p));
  mb_scalar(m, tu_fmt("%s_two", p), 2);
  mb_node(m, "Pow", tu_fmt("%s_d,%s_two", p, p), tu_fmt("%s_sq", p));
  mb_mean(m, tu_fmt("%s_sq", p), tu_fmt("%s_var", p), axis);
  mb_scalar(m, tu_fmt("%s_eps", p), 1e-5f);
  mb_node(m, "Add", tu_fmt("%s_var,%s_eps", p, p), tu_fmt("%s_ve", p));
  mb_node(m, "Sqrt", tu_fmt("%s_ve", p), tu_fmt("%s_sd", p));
  mb_node(m, "Div", tu_fmt("%s_d,%s_sd", p, p), tu_fmt("%s_n", p));
  mb_node(m, "Mul", tu_fmt("%s_n,%s", p, gamma), beta ? tu_fmt("%s_g", p) : y);
  if (beta) mb_node(m, "Add", tu_fmt("%s_g,%s", p, beta), y);
}

static char *mb_save(mb *m, const char *file) {
  char *path = tu_fmt("%s/%s", dir, file);
  tb_write_model(tb_model(m->g, m->opset), path);
  return path;
}

/* ---- running models in this process -------------------------------------------------------- */

typedef struct result {
  char *report;
  ft_graph *g;
  int n_out;
  float *out[8];
  int64_t numel[8];
} result;

static void *input_data(const mb *m, const input *in, size_t *bytes) {
  uint32_t s = 777;
  for (const char *c = in->name; *c; c++) s = s * 31 + (uint32_t)*c;
  int64_t n = 1;
  for (int i = 0; i < in->rank; i++) n *= in->dims[i];
  *bytes = (size_t)n * ft_dtype_size(in->dtype);
  void *buf = malloc(*bytes ? *bytes : 1);
  for (int64_t i = 0; i < n; i++) {
    if (in->dtype == FT_FLOAT) ((float *)buf)[i] = 2.0f * rndf(&s);
    else if (in->dtype == FT_INT64 && in->vocab < 0) ((int64_t *)buf)[i] = (int64_t)((rnd(&s) >> 8) % (uint32_t)(4 - 2 * in->vocab)) + in->vocab - 2;
    else if (in->dtype == FT_INT64) ((int64_t *)buf)[i] = (int64_t)(rnd(&s) >> 8) % in->vocab;
    else if (in->dtype == FT_INT32) ((int32_t *)buf)[i] = (int32_t)((rnd(&s) >> 8) % (uint32_t)in->vocab);
  }
  (void)m;
  return buf;
}

/* The pipeline of compiler/main.c up to lowering, then every kernel call in order. */
static result run_model(const char *path, const mb *m, const char *no_fuse) {
  result r = {0};
  ft_graph *g = tu_load(path);
  ft_pins pins = {0};
  ft_err e = {0};
  cr_assert_eq(ft_resolve_ops(g, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_specialize(g, &pins, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_infer(g, 1, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_simplify(g, &e), 0, "%s", e.msg);
  size_t rlen = 0;
  FILE *rep = open_memstream(&r.report, &rlen);
  ft_fuse_opts fo = {0};
  fo.report = rep;
  if (no_fuse && !no_fuse[0]) fo.all_off = 1;
  else fo.disabled = no_fuse;
  cr_assert_eq(ft_fuse(g, &fo, &e), 0, "%s", e.msg);
  fclose(rep);
  cr_assert_eq(ft_infer(g, 1, &e), 0, "after fusion: %s", e.msg);
  cr_assert_eq(ft_simplify(g, &e), 0, "%s", e.msg);
  ft_lowered lw;
  cr_assert_eq(ft_lower(g, &lw, &e), 0, "%s", e.msg);
  void **buf = calloc((size_t)g->n_vals + 1, sizeof(void *));
  void **owned = calloc((size_t)g->n_vals + 1, sizeof(void *)); /* what this run allocates (views alias) */
  int n_owned = 0;
  for (int v = 0; v < g->n_vals; v++) buf[v] = g->vals[v].t.data;
  for (int i = 0; i < g->n_inputs; i++) {
    int v = g->inputs[i], k = 0;
    while (k < m->n_inputs && strcmp(m->inputs[k].name, g->vals[v].name)) k++;
    cr_assert(k < m->n_inputs, "no data for input %s", g->vals[v].name);
    size_t nb;
    buf[v] = owned[n_owned++] = input_data(m, &m->inputs[k], &nb);
    cr_assert_eq(nb, ft_nbytes(&g->vals[v].t));
  }
  for (int s = 0; s < lw.n; s++) {
    const ft_node *n = &g->nodes[lw.order[s]];
    const ft_kcall *k = &lw.calls[s];
    if (!k->entry) { /* a view */
      buf[n->out[0]] = buf[n->in[0]];
      continue;
    }
    const void *in[FT_MAX_IO] = {0};
    void *out[FT_MAX_IO] = {0};
    for (int j = 0; j < n->n_in; j++) in[j] = n->in[j] >= 0 ? buf[n->in[j]] : NULL;
    for (int j = 0; j < n->n_out; j++) {
      if (n->out[j] < 0) continue;
      if (!buf[n->out[j]]) buf[n->out[j]] = owned[n_owned++] = calloc(ft_nbytes(&g->vals[n->out[j]].t) + 64, 1);
      out[j] = buf[n->out[j]];
    }
    cr_assert_eq(ft_kcall_run(k, in, out, &e), 0, "%s", e.msg);
  }
  r.n_out = g->n_outputs;
  for (int i = 0; i < g->n_outputs; i++) {
    const ft_value *v = &g->vals[g->outputs[i]];
    cr_assert_eq(v->t.dtype, FT_FLOAT);
    r.numel[i] = ft_numel(&v->t);
    r.out[i] = tu_keep(malloc(sizeof(float) * (size_t)(r.numel[i] + 1)));
    memcpy(r.out[i], buf[g->outputs[i]], sizeof(float) * (size_t)r.numel[i]);
  }
  r.g = tu_keep_graph(g);
  tu_keep(r.report);
  for (int i = 0; i < n_owned; i++) free(owned[i]);
  free(owned);
  free(buf);
  ft_lowered_free(&lw);
  return r;
}

/* Matches the report gives pass `name`. */
static int matches(const result *r, const char *name) {
  char *key = tu_fmt("fuse %s ", name);
  const char *s = strstr(r->report, key);
  cr_assert(s, "no line for pass %s in:\n%s", name, r->report);
  int n = -1;
  sscanf(s + strlen(key), "%d", &n);
  return n;
}

static int count_op(const result *r, const char *op) {
  int n = 0;
  for (int i = 0; i < r->g->n_nodes; i++) n += !r->g->nodes[i].dead && !strcmp(r->g->nodes[i].op_type, op);
  return n;
}

static void assert_same(const result *a, const result *b) {
  cr_assert_eq(a->n_out, b->n_out);
  for (int i = 0; i < a->n_out; i++) {
    cr_assert_eq(a->numel[i], b->numel[i]);
    for (int64_t j = 0; j < a->numel[i]; j++) {
      float x = a->out[i][j], y = b->out[i][j];
      cr_assert(fabsf(x - y) <= 1e-5f * fmaxf(fabsf(y), 1e-1f), "output %d [%lld]: fused %.9g, unfused %.9g", i, (long long)j, x, y);
    }
  }
}

/* Fused and unfused agree; the fused run is returned for its counts. */
static result check(mb *m, const char *file) {
  char *path = mb_save(m, file);
  result fused = run_model(path, m, NULL), plain = run_model(path, m, "");
  assert_same(&fused, &plain);
  return fused;
}

/* Counts of every pass, in table order. */
static void expect(const result *r, int embed, int ln, int skip, int gelu, int gemm) {
  cr_expect_eq(matches(r, "embed_layernorm"), embed, "embed_layernorm\n%s", r->report);
  cr_expect_eq(matches(r, "layernorm"), ln, "layernorm\n%s", r->report);
  cr_expect_eq(matches(r, "skip_layernorm"), skip, "skip_layernorm\n%s", r->report);
  cr_expect_eq(matches(r, "gelu"), gelu, "gelu\n%s", r->report);
  cr_expect_eq(matches(r, "gemm_epilogue"), gemm, "gemm_epilogue\n%s", r->report);
}

/* ---- layer norm ---------------------------------------------------------------------------- */

static mb *ln_model(int opset, int64_t axis, int with_beta) {
  mb *m = mb_new(opset);
  mb_x(m, "x", D(2, 5, 48));
  mb_w(m, "gamma", D(48), 1, 0.2f);
  if (with_beta) mb_w(m, "beta", D(48), 0, 0.5f);
  mb_layernorm(m, "ln", "x", "gamma", with_beta ? "beta" : NULL, "y", axis);
  mb_out(m, "y");
  return m;
}

Test(fuse_patterns, layernorm_chain) {
  result r = check(ln_model(14, -1, 1), "ln.onnx");
  expect(&r, 0, 1, 0, 0, 0);
  cr_expect_eq(count_op(&r, "LayerNorm"), 1);
  cr_expect_eq(ft_graph_count_live(r.g), 1);
}

Test(fuse_patterns, layernorm_positive_axis_no_beta_opset18) {
  result r = check(ln_model(18, 2, 0), "ln18.onnx");
  expect(&r, 0, 1, 0, 0, 0);
  cr_expect_eq(ft_graph_count_live(r.g), 1);
}

/* Rows with a large mean and one outlier column (as trained transformers' residual streams
 * have): the fused kernel's one-pass moments must hold up. */
Test(fuse_patterns, layernorm_large_mean_and_outlier) {
  mb *m = mb_new(14);
  mb_x(m, "x", D(8, 256));
  float off[256];
  for (int i = 0; i < 256; i++) off[i] = 100.0f;
  off[3] = -300.0f;
  off[77] = 500.0f;
  tb_add_init(m->g, tb_tensor_f32("off", 1, (const int64_t[]){256}, off));
  mb_w(m, "gamma", D(256), 1, 0.2f);
  mb_node(m, "Add", "x,off", "xo");
  mb_layernorm(m, "ln", "xo", "gamma", NULL, "y", -1);
  mb_out(m, "y");
  result r = check(m, "ln_outlier.onnx");
  expect(&r, 0, 1, 0, 0, 0);
}

Test(fuse_patterns, layernorm_over_another_axis_is_a_near_miss) {
  result r = check(ln_model(14, 1, 1), "ln_axis1.onnx");
  expect(&r, 0, 0, 0, 0, 0);
  cr_expect(strstr(r.report, "near-miss") && strstr(r.report, "axes other than the last"), "%s", r.report);
}

/* x - mean computed twice (two ReduceMeans, two Subs), Mul by Reciprocal, x*x for the square, and
 * every commutative operand swapped. */
Test(fuse_patterns, layernorm_variants) {
  mb *m = mb_new(14);
  mb_x(m, "x", D(3, 40));
  mb_w(m, "gamma", D(1, 40), 1, 0.2f);
  mb_w(m, "beta", D(40), 0, 0.5f);
  mb_mean(m, "x", "mu1", -1);
  mb_mean(m, "x", "mu2", -1);
  mb_node(m, "Sub", "x,mu1", "d1");
  mb_node(m, "Sub", "x,mu2", "d2");
  mb_node(m, "Mul", "d2,d2", "sq");
  mb_mean(m, "sq", "var", -1);
  mb_scalar(m, "eps", 1e-6f);
  mb_node(m, "Add", "eps,var", "ve");
  mb_node(m, "Sqrt", "ve", "sd");
  mb_node(m, "Reciprocal", "sd", "rs");
  mb_node(m, "Mul", "rs,d1", "n");
  mb_node(m, "Mul", "gamma,n", "g");
  mb_node(m, "Add", "beta,g", "y");
  mb_out(m, "y");
  result r = check(m, "ln_var.onnx");
  expect(&r, 0, 1, 0, 0, 0);
  cr_expect_eq(ft_graph_count_live(r.g), 1);
}

Test(fuse_patterns, layernorm_intermediate_read_elsewhere_is_a_near_miss) {
  mb *m = ln_model(14, -1, 1);
  mb_out(m, "ln_d"); /* x - mean is an output too */
  result r = check(m, "ln_used.onnx");
  expect(&r, 0, 0, 0, 0, 0);
  cr_expect(strstr(r.report, "read elsewhere"), "%s", r.report);
}

Test(fuse_patterns, layernorm_scale_of_full_shape_is_not_fused) {
  mb *m = mb_new(14);
  mb_x(m, "x", D(2, 16));
  mb_w(m, "gamma", D(2, 16), 1, 0.2f); /* per element, not per column */
  mb_layernorm(m, "ln", "x", "gamma", NULL, "y", -1);
  mb_out(m, "y");
  result r = check(m, "ln_gamma.onnx");
  expect(&r, 0, 0, 0, 0, 0);
}

Test(fuse_patterns, native_layernormalization) {
  mb *m = mb_new(17);
  mb_x(m, "x", D(4, 32));
  mb_w(m, "gamma", D(32), 1, 0.2f);
  mb_w(m, "beta", D(32), 0, 0.5f);
  tb_attr_float(mb_node(m, "LayerNormalization", "x,gamma,beta", "y"), "epsilon", 1e-3f);
  mb_out(m, "y");
  result r = check(m, "ln17.onnx");
  expect(&r, 0, 1, 0, 0, 0);
  cr_expect_eq(count_op(&r, "LayerNorm"), 1);
}

/* ---- skip layer norm ----------------------------------------------------------------------- */

/* BERT's post-LN block: LN(MatMul(h, W) + bias + h); with sum_out the sum is an output too. */
static mb *skip_model(int sum_out, int with_bias, const int64_t *skip_dims, int skip_rank) {
  mb *m = mb_new(14);
  mb_x(m, "h", D(2, 6, 32));
  mb_x(m, "res", skip_dims, skip_rank);
  mb_w(m, "W", D(32, 32), 0, 0.2f);
  mb_w(m, "bias", D(32), 0, 0.3f);
  mb_w(m, "gamma", D(32), 1, 0.2f);
  mb_w(m, "beta", D(32), 0, 0.5f);
  mb_node(m, "MatMul", "h,W", "mm");
  if (with_bias) mb_node(m, "Add", "bias,mm", "mmb");
  mb_node(m, "Add", with_bias ? "mmb,res" : "res,mm", "s");
  mb_layernorm(m, "ln", "s", "gamma", "beta", "y", -1);
  mb_out(m, "y");
  if (sum_out) {
    mb_node(m, "Relu", "s", "later"); /* a later reader of the residual sum */
    mb_out(m, "later");
  }
  return m;
}

Test(fuse_patterns, skip_layernorm_with_bias) {
  result r = check(skip_model(0, 1, D(2, 6, 32)), "skip.onnx");
  expect(&r, 0, 1, 1, 0, 0);
  cr_expect_eq(count_op(&r, "SkipLayerNorm"), 1);
  cr_expect_eq(count_op(&r, "MatMul"), 1);
  cr_expect_eq(ft_graph_count_live(r.g), 2);
}

Test(fuse_patterns, skip_layernorm_outputs_the_sum_when_read) {
  result r = check(skip_model(1, 0, D(2, 6, 32)), "skip_sum.onnx");
  expect(&r, 0, 1, 1, 0, 0);
  cr_expect_eq(count_op(&r, "SkipLayerNorm"), 1);
  for (int i = 0; i < r.g->n_nodes; i++)
    if (!r.g->nodes[i].dead && !strcmp(r.g->nodes[i].op_type, "SkipLayerNorm")) cr_expect_eq(r.g->nodes[i].n_out, 2);
}

Test(fuse_patterns, skip_layernorm_broadcasting_residual_is_a_near_miss) {
  result r = check(skip_model(0, 1, D(1, 1, 32)), "skip_bcast.onnx");
  expect(&r, 0, 1, 0, 0, 1); /* the layer norm alone; MatMul + bias in the GEMM */
  cr_expect(strstr(r.report, "broadcasts"), "%s", r.report);
}

/* ---- embeddings ---------------------------------------------------------------------------- */

/* BERT: word + token type lookups, then the (folded) position embeddings, then LN. */
Test(fuse_patterns, embed_layernorm_bert) {
  mb *m = mb_new(14);
  mb_in(m, "ids", FT_INT64, D(2, 7), 50);
  mb_in(m, "tids", FT_INT64, D(2, 7), 2);
  mb_w(m, "word", D(50, 24), 0, 1);
  mb_w(m, "type", D(2, 24), 0, 1);
  mb_w(m, "pos_table", D(16, 24), 0, 1);
  int64_t pos[7] = {0, 1, 2, 3, 4, 5, 6};
  mb_ints(m, "pos_ids", pos, 7);
  mb_w(m, "gamma", D(24), 1, 0.2f);
  mb_w(m, "beta", D(24), 0, 0.5f);
  mb_node(m, "Gather", "word,ids", "we");
  mb_node(m, "Gather", "type,tids", "te");
  mb_node(m, "Gather", "pos_table,pos_ids", "pe"); /* folds to a constant [7, 24] */
  mb_node(m, "Add", "we,te", "s1");
  mb_node(m, "Add", "s1,pe", "s");
  mb_layernorm(m, "ln", "s", "gamma", "beta", "y", -1);
  mb_out(m, "y");
  result r = check(m, "embed.onnx");
  expect(&r, 1, 0, 0, 0, 0);
  cr_expect_eq(ft_graph_count_live(r.g), 1);
}

/* GPT-2: word and position lookups with run-time position ids (int32), and the sum read by the
 * next residual Add. */
Test(fuse_patterns, embed_layernorm_gpt2_runtime_positions) {
  mb *m = mb_new(14);
  mb_in(m, "ids", FT_INT32, D(1, 9), 40);
  mb_in(m, "pids", FT_INT32, D(1, 9), 9);
  mb_w(m, "wte", D(40, 32), 0, 1);
  mb_w(m, "wpe", D(9, 32), 0, 1);
  mb_w(m, "gamma", D(32), 1, 0.2f);
  mb_node(m, "Gather", "wte,ids", "we");
  mb_node(m, "Gather", "wpe,pids", "pe");
  mb_node(m, "Add", "we,pe", "s");
  mb_layernorm(m, "ln", "s", "gamma", NULL, "y", -1);
  mb_node(m, "Add", "s,y", "next");
  mb_out(m, "next");
  result r = check(m, "embed_gpt2.onnx");
  expect(&r, 1, 0, 0, 0, 0);
  cr_expect_eq(count_op(&r, "EmbedLayerNorm"), 1);
  cr_expect_eq(count_op(&r, "Add"), 1);
}

/* Token types and positions both constant (folded lookups of one shape): added at compile time
 * into one dense term; twice in one graph. */
Test(fuse_patterns, embed_layernorm_two_constant_terms) {
  mb *m = mb_new(14);
  mb_in(m, "ids", FT_INT64, D(3, 6), 30);
  mb_w(m, "word", D(30, 16), 0, 1);
  mb_w(m, "type", D(2, 16), 0, 1);
  mb_w(m, "pos", D(6, 16), 0, 1);
  int64_t tids[6] = {0, 0, 0, 1, 1, 1}, pids[6] = {0, 1, 2, 3, 4, 5};
  tb_add_init(m->g, tb_tensor_i64("tids", 2, (const int64_t[]){1, 6}, tids));
  tb_add_init(m->g, tb_tensor_i64("pids", 2, (const int64_t[]){1, 6}, pids));
  mb_w(m, "gamma", D(16), 1, 0.2f);
  mb_w(m, "beta", D(16), 0, 0.2f);
  mb_node(m, "Gather", "type,tids", "te");
  mb_node(m, "Gather", "pos,pids", "pe");
  for (int k = 0; k < 2; k++) {
    mb_node(m, "Gather", "word,ids", tu_fmt("we%d", k));
    mb_node(m, "Add", tu_fmt("we%d,te", k), tu_fmt("s1_%d", k));
    mb_node(m, "Add", tu_fmt("s1_%d,pe", k), tu_fmt("s%d", k));
    mb_layernorm(m, tu_fmt("ln%d", k), tu_fmt("s%d", k), "gamma", "beta", tu_fmt("y%d", k), -1);
    mb_out(m, tu_fmt("y%d", k));
  }
  result r = check(m, "embed_consts.onnx");
  expect(&r, 2, 0, 0, 0, 0);
  cr_expect_eq(ft_graph_count_live(r.g), 2);
}

/* Negative ids count from the end of the table; ids out of range give a row of zeros, as the
 * Gather they replace does. */
Test(fuse_patterns, embed_layernorm_ids_out_of_range) {
  mb *m = mb_new(14);
  mb_in(m, "ids", FT_INT64, D(4, 16), -6);
  mb_w(m, "word", D(6, 20), 0, 1);
  mb_w(m, "pos", D(16, 20), 0, 1);
  mb_w(m, "gamma", D(20), 1, 0.2f);
  mb_node(m, "Gather", "word,ids", "we");
  mb_node(m, "Add", "pos,we", "s");
  mb_layernorm(m, "ln", "s", "gamma", NULL, "y", -1);
  mb_out(m, "y");
  result r = check(m, "embed_oob.onnx");
  expect(&r, 1, 0, 0, 0, 0);
}

/* Gathers of a table along axis 1 are no embedding lookups. */
Test(fuse_patterns, embed_gather_on_axis_1_is_not_an_embedding) {
  mb *m = mb_new(14);
  mb_in(m, "ids", FT_INT64, D(2, 3), 4);
  mb_w(m, "tab", D(3, 4), 0, 1);
  mb_w(m, "other", D(3, 2, 3), 0, 1);
  mb_w(m, "gamma", D(3), 1, 0.2f);
  tb_attr_int(mb_node(m, "Gather", "tab,ids", "g"), "axis", 1); /* [3, 2, 3] */
  mb_node(m, "Add", "g,other", "s");
  mb_layernorm(m, "ln", "s", "gamma", NULL, "y", -1);
  mb_out(m, "y");
  result r = check(m, "embed_axis1.onnx");
  cr_expect_eq(matches(&r, "embed_layernorm"), 0);
}

/* ---- GELU ---------------------------------------------------------------------------------- */

/* One erf-form GELU of x: `form` picks the spelling. */
static mb *gelu_erf_model(int form, float sqrt2) {
  mb *m = mb_new(14);
  mb_x(m, "x", D(3, 50));
  mb_scalar(m, "half", 0.5f);
  mb_scalar(m, "one", 1.0f);
  if (form % 2 == 0) {
    mb_scalar(m, "k", sqrt2);
    mb_node(m, "Div", "x,k", "u");
  } else {
    mb_scalar(m, "k", 1.0f / sqrt2);
    mb_node(m, "Mul", "k,x", "u");
  }
  mb_node(m, "Erf", "u", "e");
  mb_node(m, "Add", form % 2 ? "one,e" : "e,one", "p");
  switch (form) {
  case 0: case 1: /* (x * p) * 0.5 */
    mb_node(m, "Mul", form ? "p,x" : "x,p", "xp");
    mb_node(m, "Mul", "xp,half", "y");
    break;
  case 2: case 3: /* (x * 0.5) * p */
    mb_node(m, "Mul", "half,x", "hx");
    mb_node(m, "Mul", form == 2 ? "hx,p" : "p,hx", "y");
    break;
  default: /* (0.5 * p) * x */
    mb_node(m, "Mul", "p,half", "hp");
    mb_node(m, "Mul", "x,hp", "y");
    break;
  }
  mb_out(m, "y");
  return m;
}

Test(fuse_patterns, gelu_erf_every_order) {
  for (int form = 0; form < 5; form++) {
    result r = check(gelu_erf_model(form, 1.4142135f), tu_fmt("gelu%d.onnx", form));
    expect(&r, 0, 0, 0, 1, 0);
    cr_expect_eq(ft_graph_count_live(r.g), 1, "form %d", form);
    cr_expect_eq(count_op(&r, "Gelu"), 1, "form %d", form);
  }
}

Test(fuse_patterns, gelu_wrong_constant_is_a_near_miss) {
  result r = check(gelu_erf_model(0, 1.5f), "gelu_bad.onnx");
  expect(&r, 0, 0, 0, 0, 0);
  cr_expect(strstr(r.report, "sqrt(2)"), "%s", r.report);
}

Test(fuse_patterns, gelu_intermediate_read_elsewhere_is_a_near_miss) {
  mb *m = gelu_erf_model(0, 1.4142135f);
  mb_out(m, "e");
  result r = check(m, "gelu_used.onnx");
  expect(&r, 0, 0, 0, 0, 0);
}

/* GPT-2's gelu_new of x into y, x^3 spelled three ways (cube 0, 1, 2). */
static void add_gelu_tanh(mb *m, const char *x, const char *y, int cube, float c3) {
  mb_scalar(m, "half", 0.5f);
  mb_scalar(m, "one", 1.0f);
  mb_scalar(m, "three", 3.0f);
  mb_scalar(m, "c3", c3);
  mb_scalar(m, "k", 0.7978845608f);
  mb_node(m, "Mul", tu_fmt("%s,half", x), "hx");
  if (cube == 0) mb_node(m, "Pow", tu_fmt("%s,three", x), "x3");
  else if (cube == 1) {
    mb_node(m, "Mul", tu_fmt("%s,%s", x, x), "xx");
    mb_node(m, "Mul", tu_fmt("xx,%s", x), "x3");
  } else {
    mb_node(m, "Mul", tu_fmt("%s,%s", x, x), "xx");
    mb_node(m, "Mul", tu_fmt("%s,xx", x), "x3");
  }
  mb_node(m, "Mul", "x3,c3", "cx3");
  mb_node(m, "Add", tu_fmt("%s,cx3", x), "in");
  mb_node(m, "Mul", "in,k", "t");
  mb_node(m, "Tanh", "t", "th");
  mb_node(m, "Add", "th,one", "p");
  mb_node(m, "Mul", "hx,p", y);
}

static mb *gelu_tanh_model(int cube, float c3) {
  mb *m = mb_new(14);
  mb_x(m, "x", D(2, 3, 40));
  add_gelu_tanh(m, "x", "y", cube, c3);
  mb_out(m, "y");
  return m;
}

Test(fuse_patterns, gelu_tanh_forms) {
  for (int cube = 0; cube < 3; cube++) {
    result r = check(gelu_tanh_model(cube, 0.044715f), tu_fmt("gelu_tanh%d.onnx", cube));
    expect(&r, 0, 0, 0, 1, 0);
    cr_expect_eq(ft_graph_count_live(r.g), 1, "cube %d", cube);
  }
}

Test(fuse_patterns, gelu_tanh_wrong_cubic_coefficient_is_not_fused) {
  result r = check(gelu_tanh_model(0, 0.05f), "gelu_tanh_bad.onnx");
  expect(&r, 0, 0, 0, 0, 0);
}

Test(fuse_patterns, native_gelu) {
  mb *m = mb_new(20);
  mb_x(m, "x", D(4, 33));
  tb_attr_string(mb_node(m, "Gelu", "x", "g"), "approximate", "tanh");
  mb_node(m, "Gelu", "g", "y");
  mb_out(m, "y");
  result r = check(m, "gelu20.onnx");
  expect(&r, 0, 0, 0, 2, 0);
}

/* ---- GEMM epilogue ------------------------------------------------------------------------- */

/* act: NULL, "Relu", "Tanh", "gelu" (erf chain), "gelu_tanh" (tanh chain). */
static mb *mm_model(int with_bias, const char *act, int const_b) {
  mb *m = mb_new(14);
  mb_x(m, "a", D(2, 13, 40));
  if (const_b) mb_w(m, "W", D(40, 70), 0, 0.3f);
  else mb_x(m, "W", D(40, 70));
  mb_w(m, "bias", D(70), 0, 0.5f);
  mb_node(m, "MatMul", "a,W", "mm");
  const char *cur = "mm";
  if (with_bias) {
    mb_node(m, "Add", "mm,bias", "mmb");
    cur = "mmb";
  }
  if (act && (!strcmp(act, "Relu") || !strcmp(act, "Tanh"))) {
    mb_node(m, act, cur, "y");
  } else if (act && !strcmp(act, "gelu")) {
    mb_scalar(m, "k", 1.4142135f);
    mb_scalar(m, "half", 0.5f);
    mb_scalar(m, "one", 1.0f);
    mb_node(m, "Div", tu_fmt("%s,k", cur), "u");
    mb_node(m, "Erf", "u", "e");
    mb_node(m, "Add", "e,one", "p");
    mb_node(m, "Mul", tu_fmt("%s,p", cur), "xp");
    mb_node(m, "Mul", "xp,half", "y");
  } else
    mb_node(m, "Identity", cur, "y");
  mb_out(m, "y");
  return m;
}

Test(fuse_patterns, matmul_bias_activation) {
  const char *acts[] = {"Relu", "Tanh", "gelu"};
  for (int i = 0; i < 3; i++) {
    result r = check(mm_model(1, acts[i], 1), tu_fmt("mm_%s.onnx", acts[i]));
    expect(&r, 0, 0, 0, i == 2, 1);
    cr_expect_eq(count_op(&r, "FusedMatMul"), 1, "%s", acts[i]);
    cr_expect_eq(ft_graph_count_live(r.g), 1, "%s", acts[i]);
  }
}

Test(fuse_patterns, matmul_bias_only_and_activation_only) {
  result r = check(mm_model(1, NULL, 1), "mm_bias.onnx");
  expect(&r, 0, 0, 0, 0, 1);
  cr_expect_eq(count_op(&r, "FusedMatMul"), 1);
  r = check(mm_model(0, "Relu", 1), "mm_relu.onnx");
  expect(&r, 0, 0, 0, 0, 1);
}

Test(fuse_patterns, matmul_with_runtime_weights_is_a_near_miss) {
  result r = check(mm_model(1, "Relu", 0), "mm_rt.onnx");
  expect(&r, 0, 0, 0, 0, 0);
  cr_expect(strstr(r.report, "constant weights"), "%s", r.report);
}

Test(fuse_patterns, matmul_output_read_elsewhere_is_not_fused) {
  mb *m = mm_model(1, "Relu", 1);
  mb_out(m, "mm");
  result r = check(m, "mm_used.onnx");
  expect(&r, 0, 0, 0, 0, 0);
}

Test(fuse_patterns, matmul_bias_that_broadcasts_up_is_not_fused) {
  mb *m = mb_new(14);
  mb_x(m, "a", D(1, 5, 8));
  mb_w(m, "W", D(8, 6), 0, 0.3f);
  mb_w(m, "bias", D(3, 1, 6), 0, 0.5f); /* makes the result [3, 5, 6] */
  mb_node(m, "MatMul", "a,W", "mm");
  mb_node(m, "Add", "mm,bias", "y");
  mb_out(m, "y");
  result r = check(m, "mm_bcast.onnx");
  expect(&r, 0, 0, 0, 0, 0);
}

/* GPT-2's Conv1D: Gemm with bias, Reshape to 3-D, then gelu_new. */
Test(fuse_patterns, gemm_reshape_gelu_tanh) {
  mb *m = mb_new(14);
  mb_x(m, "a", D(6, 16));
  mb_w(m, "Wg", D(16, 40), 0, 0.3f);
  mb_w(m, "bg", D(40), 0, 0.5f);
  int64_t shape[3] = {2, 3, 40};
  mb_ints(m, "shape", shape, 3);
  mb_node(m, "Gemm", "a,Wg,bg", "gm");
  mb_node(m, "Reshape", "gm,shape", "xr");
  add_gelu_tanh(m, "xr", "y", 0, 0.044715f);
  mb_out(m, "y");
  result r = check(m, "gemm_gelu.onnx");
  expect(&r, 0, 0, 0, 1, 1);
  cr_expect_eq(count_op(&r, "FusedGemm"), 1);
  cr_expect_eq(count_op(&r, "Gelu"), 0);
  cr_expect_eq(ft_graph_count_live(r.g), 2); /* FusedGemm, Reshape */
}

Test(fuse_patterns, gemm_relu_transposed) {
  mb *m = mb_new(14);
  mb_x(m, "a", D(9, 20));
  mb_w(m, "W", D(30, 20), 0, 0.3f);
  mb_w(m, "c", D(30), 0, 0.5f);
  Onnx__NodeProto *n = mb_node(m, "Gemm", "a,W,c", "gm");
  tb_attr_int(n, "transB", 1);
  tb_attr_float(n, "alpha", 0.5f);
  mb_node(m, "Relu", "gm", "y");
  mb_out(m, "y");
  result r = check(m, "gemm_relu.onnx");
  expect(&r, 0, 0, 0, 0, 1);
  cr_expect_eq(ft_graph_count_live(r.g), 1);
}

/* ---- disabling passes ---------------------------------------------------------------------- */

Test(fuse_patterns, no_fuse_names_turn_single_passes_off) {
  char *path = mb_save(skip_model(0, 1, D(2, 6, 32)), "skip_off.onnx");
  mb *m = skip_model(0, 1, D(2, 6, 32));
  result r = run_model(path, m, "skip_layernorm");
  cr_expect(strstr(r.report, "fuse skip_layernorm off"), "%s", r.report);
  cr_expect_eq(matches(&r, "layernorm"), 1);
  cr_expect_eq(matches(&r, "gemm_epilogue"), 1); /* the bias Add then goes to the GEMM */
  result plain = run_model(path, m, "");
  assert_same(&r, &plain);
}

/* ---- whole programs ------------------------------------------------------------------------ */

static void write_input(const char *path, const mb *m, const input *in) {
  size_t nb;
  void *data = input_data(m, in, &nb);
  Onnx__TensorProto *t = tb_tensor(in->name, in->dtype, in->rank, in->dims);
  tb_raw(t, data, nb);
  size_t n = onnx__tensor_proto__get_packed_size(t);
  uint8_t *buf = malloc(n);
  onnx__tensor_proto__pack(t, buf);
  tb_write_bytes(path, buf, n);
  free(buf);
  free(data);
}

/* A transformer block in miniature, compiled by ftaxc into programs with and without fusion:
 * the generated code (templates pasted, in-place buffers, prepacked weights) agrees. */
Test(fuse_patterns, programs_agree) {
  mb *m = mb_new(14);
  mb_in(m, "ids", FT_INT64, D(2, 5), 30);
  mb_w(m, "word", D(30, 32), 0, 1);
  mb_w(m, "pos", D(1, 5, 32), 0, 1);
  mb_w(m, "g0", D(32), 1, 0.2f);
  mb_w(m, "b0", D(32), 0, 0.2f);
  mb_w(m, "W1", D(32, 64), 0, 0.2f);
  mb_w(m, "c1", D(64), 0, 0.2f);
  mb_w(m, "W2", D(64, 32), 0, 0.2f);
  mb_w(m, "c2", D(32), 0, 0.2f);
  mb_w(m, "g1", D(32), 1, 0.2f);
  mb_w(m, "b1", D(32), 0, 0.2f);
  mb_w(m, "g2", D(32), 1, 0.2f);
  mb_node(m, "Gather", "word,ids", "we");
  mb_node(m, "Add", "we,pos", "s0");
  mb_layernorm(m, "e", "s0", "g0", "b0", "h0", -1);
  mb_node(m, "MatMul", "h0,W1", "m1");
  mb_node(m, "Add", "m1,c1", "a1");
  mb_node(m, "Relu", "a1", "r1");
  mb_node(m, "MatMul", "r1,W2", "m2");
  mb_node(m, "Add", "m2,c2", "a2");
  mb_node(m, "Add", "a2,h0", "s1");
  mb_layernorm(m, "l1", "s1", "g1", "b1", "h1", -1);
  mb_layernorm(m, "l2", "h1", "g2", NULL, "y", -1);
  mb_out(m, "y");
  char *model = mb_save(m, "block.onnx");
  char *log;
  char *fused = tu_fmt("%s/fused", dir), *plain = tu_fmt("%s/plain", dir);
  char *a1[] = {FTAXC, model, "-o", fused, "--report", NULL};
  char *a2[] = {FTAXC, model, "-o", plain, "--no-fuse", NULL};
  cr_assert_eq(tu_run(dir, &log, a1), 0, "%s", log);
  result rep = {.report = log};
  expect(&rep, 1, 2, 1, 0, 1);
  cr_assert_eq(tu_run(dir, &log, a2), 0, "%s", log);
  char *in = tu_fmt("%s/input_0.pb", dir);
  write_input(in, m, &m->inputs[0]);
  char *fo = tu_fmt("%s/out_fused", dir), *po = tu_fmt("%s/out_plain", dir);
  char *r1[] = {fused, in, "--output-dir", fo, NULL};
  char *r2[] = {plain, in, "--output-dir", po, NULL};
  cr_assert_eq(tu_run(dir, &log, r1), 0, "%s", log);
  cr_assert_eq(tu_run(dir, &log, r2), 0, "%s", log);
  char *f0 = tu_fmt("%s/output_0.pb", fo), *p0 = tu_fmt("%s/output_0.pb", po);
  char *cmp[] = {FTAX_COMPARE, f0, p0, "--atol", "1e-5", "--rtol", "1e-5", NULL};
  cr_assert_eq(tu_run(dir, &log, cmp), 0, "%s", log);
}

/* The dynamic int8 form (compiler/fuse/fuse_qdq.c) on tests/models/dynq_tiny: every
 * MatMulInteger -> Cast -> Mul(x_scale * w_scale) becomes ftax.QDQMatMul (operands in either
 * order, per-tensor and per-column scales, int8 and uint8 weights), the bias Adds and the Relu
 * go into two of them (gemm_epilogue), and both DynamicQuantizeLinear nodes keep only their
 * range (ftax.DynamicQuantizeScale); fused and unfused compute the same. */
Test(fuse_patterns, dynamic_int8_matmuls) {
  mb *m = mb_new(13);
  int64_t xd[3] = {2, 5, 24};
  mb_x(m, "x", xd, 3);
  char *path = tu_fmt("%s/tests/models/dynq_tiny/model.onnx", FTAX_SOURCE_DIR);
  result fused = run_model(path, m, NULL), plain = run_model(path, m, "");
  assert_same(&fused, &plain);
  cr_expect_eq(matches(&fused, "qdq"), 6, "%s", fused.report);
  cr_expect_eq(matches(&fused, "gemm_epilogue"), 2, "%s", fused.report);
  cr_expect_eq(count_op(&fused, "QDQMatMul"), 4);
  cr_expect_eq(count_op(&fused, "DynamicQuantizeScale"), 2);
  cr_expect_eq(count_op(&fused, "MatMulInteger") + count_op(&fused, "Cast") + count_op(&fused, "Mul") + count_op(&fused, "Add"), 0);
  cr_expect_eq(count_op(&plain, "MatMulInteger"), 4);
}

/* Requantized QDQ conv outputs (pass qdq_out, compiler/fuse/fuse_qdq.c). tests/models/qdq_tiny:
 * the first conv's Relu'd output goes only through QuantizeLinear -> DequantizeLinear into the
 * second conv, so that conv quantizes it in its epilogue (its output uint8) and the second reads
 * the bytes; the second's output goes to GlobalAveragePool (a float op) and stays float32. The
 * outputs must be the same bits as with the pass off. tests/models/qdq_dw (compiled by ftaxc: it
 * has a uint8 graph output): the group-1 convs' outputs are read by depthwise convs or a float
 * op, so nothing is requantized. */
Test(fuse_patterns, qdq_requantized_outputs) {
  mb *m = mb_new(13);
  mb_x(m, "x", D(1, 3, 12, 12));
  char *path = tu_fmt("%s/tests/models/qdq_tiny/model.onnx", FTAX_SOURCE_DIR);
  result fused = run_model(path, m, NULL), off = run_model(path, m, "qdq_out");
  cr_expect_eq(matches(&fused, "qdq_out"), 1, "%s", fused.report);
  int u8 = 0;
  for (int i = 0; i < fused.g->n_nodes; i++) {
    const ft_node *n = &fused.g->nodes[i];
    u8 += !n->dead && !strcmp(n->op_type, "QDQConv") && fused.g->vals[n->out[0]].t.dtype == FT_UINT8;
  }
  cr_expect_eq(u8, 1, "uint8 QDQConv outputs");
  cr_assert_eq(fused.n_out, off.n_out);
  for (int i = 0; i < fused.n_out; i++)
    cr_expect(fused.numel[i] == off.numel[i] && !memcmp(fused.out[i], off.out[i], sizeof(float) * (size_t)fused.numel[i]),
              "output %d differs with the pass off", i);
  char *dw = tu_fmt("%s/tests/models/qdq_dw/model.onnx", FTAX_SOURCE_DIR), *prog = tu_fmt("%s/qdq_dw", dir), *log;
  char *a[] = {FTAXC, dw, "-o", prog, "--report", NULL};
  cr_assert_eq(tu_run(dir, &log, a), 0, "%s", log);
  result rep = {.report = log};
  cr_expect_eq(matches(&rep, "qdq"), 4, "%s", log);
  cr_expect_eq(matches(&rep, "qdq_out"), 0, "%s", log);
}

/* An 8-bit constant: int8 values drawn from [-127, 127] (u8 0), or one uint8 value (u8 1). */
static void mb_q8(mb *m, const char *name, const int64_t *d, int rank, int u8, int v) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= d[i];
  Onnx__TensorProto *t = tb_tensor(name, u8 ? FT_UINT8 : FT_INT8, rank, d);
  int8_t *b = malloc((size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) b[i] = u8 ? (int8_t)(uint8_t)v : (int8_t)((int)(rnd(&m->seed) >> 8) % 255 - 127);
  tb_raw(t, b, (size_t)n);
  free(b);
  tb_add_init(m->g, t);
}

/* A constant int8 weight [k, n] read through DequantizeLinear with one scale per column: w */
static void mb_dq_weight(mb *m, const char *w, int64_t k, int64_t n) {
  char *q = tu_fmt("%sq", w), *sc = tu_fmt("%s_s", w);
  mb_q8(m, q, D(k, n), 0, 0);
  mb_w(m, sc, D(n), 0.004f, 0.002f);
  tb_attr_int(mb_node(m, "DequantizeLinear", tu_fmt("%s,%s", q, sc), w), "axis", 1);
}

/* A quantized two-layer MLP as ORT's static quantizer writes it: x [2, 5, 24] -> Q/DQ -> MatMul
 * (DQ of int8 W1 [24, 40], one scale per column) -> Add b1 -> act -> Q/DQ -> MatMul (DQ of W2
 * [40, 16]) = y. act: 0 Sigmoid, 1 GELU (the exporters' Erf form), 2 Relu. */
static mb *qdq_mlp_model(int act) {
  mb *m = mb_new(13);
  mb_x(m, "x", D(2, 5, 24));
  mb_scalar(m, "sx", 4.0f / 255);
  mb_q8(m, "zx", NULL, 0, 1, 128);
  mb_node(m, "QuantizeLinear", "x,sx,zx", "xq");
  mb_node(m, "DequantizeLinear", "xq,sx,zx", "xd");
  mb_dq_weight(m, "w1", 24, 40);
  mb_node(m, "MatMul", "xd,w1", "h");
  mb_w(m, "b1", D(40), 0.0f, 0.5f);
  mb_node(m, "Add", "h,b1", "hb");
  float sa = 1.0f / 255;
  int za = 0;
  if (act == 0) mb_node(m, "Sigmoid", "hb", "a");
  else if (act == 2) {
    mb_node(m, "Relu", "hb", "a");
    sa = 6.0f / 255;
  } else {
    mb_scalar(m, "half", 0.5f);
    mb_scalar(m, "one", 1.0f);
    mb_scalar(m, "k", 1.4142135f);
    mb_node(m, "Div", "hb,k", "u");
    mb_node(m, "Erf", "u", "e");
    mb_node(m, "Add", "e,one", "p");
    mb_node(m, "Mul", "hb,p", "hp");
    mb_node(m, "Mul", "hp,half", "a");
    sa = 6.0f / 255;
    za = 10;
  }
  mb_scalar(m, "sa", sa);
  mb_q8(m, "za", NULL, 0, 1, za);
  mb_node(m, "QuantizeLinear", "a,sa,za", "aq");
  mb_node(m, "DequantizeLinear", "aq,sa,za", "ad");
  mb_dq_weight(m, "w2", 40, 16);
  mb_node(m, "MatMul", "ad,w2", "y");
  mb_out(m, "y");
  return m;
}

/* Requantized QDQ matmul outputs (pass qdq_out): the first matmul's output, after its bias and
 * activation, is read only through Q/DQ by the second, so it quantizes that value in its
 * epilogue (the activation in registers: Sigmoid, GELU, Relu) and its output is uint8; the
 * outputs must be the same bits as with the pass off. */
Test(fuse_patterns, qdq_requantized_matmul_outputs) {
  for (int act = 0; act < 3; act++) {
    mb *m = qdq_mlp_model(act);
    char *path = mb_save(m, tu_fmt("qdq_mlp%d.onnx", act));
    result fused = run_model(path, m, NULL), off = run_model(path, m, "qdq_out");
    cr_expect_eq(matches(&fused, "qdq"), 2, "act %d: %s", act, fused.report);
    cr_expect_eq(matches(&fused, "qdq_out"), 1, "act %d: %s", act, fused.report);
    int u8 = 0, mm = 0;
    for (int i = 0; i < fused.g->n_nodes; i++) {
      const ft_node *n = &fused.g->nodes[i];
      if (n->dead || strcmp(n->op_type, "QDQMatMul")) continue;
      mm++;
      u8 += fused.g->vals[n->out[0]].t.dtype == FT_UINT8;
    }
    cr_expect_eq(mm, 2, "act %d: QDQMatMul nodes", act);
    cr_expect_eq(u8, 1, "act %d: uint8 QDQMatMul outputs", act);
    cr_assert_eq(fused.n_out, 1);
    cr_expect(fused.numel[0] == 2 * 5 * 16 && !memcmp(fused.out[0], off.out[0], sizeof(float) * 2 * 5 * 16),
              "act %d: the output differs with the pass off", act);
    float mx = 0;
    for (int i = 0; i < 2 * 5 * 16; i++) mx = fabsf(fused.out[0][i]) > mx ? fabsf(fused.out[0][i]) : mx;
    cr_expect(mx > 0.05f, "act %d: the output is all but zero (%g): the test would not see a difference", act, mx);
  }
}

/* A depthwise conv whose quantized input does not come straight from QuantizeLinear (here a
 * Transpose of the uint8 tensor between the two): ftax.QDQConv reads the 8-bit tensor as it is
 * (FT_QDW_XQ). x [1, 16, 9, 9] -> Q (uint8, zero point 128) -> Transpose (H and W) -> DQ ->
 * Conv 3x3 pad 1 group 16 (DQ of an int8 weight, one scale per channel) + bias = y. Fused and
 * unfused (float DequantizeLinear and Conv) agree to the float sums' rounding. */
Test(fuse_patterns, qdq_depthwise_on_an_8bit_tensor) {
  mb *m = mb_new(13);
  mb_x(m, "x", D(1, 16, 9, 9));
  mb_scalar(m, "sx", 2.0f / 255);
  mb_q8(m, "zx", NULL, 0, 1, 128);
  mb_node(m, "QuantizeLinear", "x,sx,zx", "xq");
  tb_attr_ints(mb_node(m, "Transpose", "xq", "xt"), "perm", (const int64_t[]){0, 1, 3, 2}, 4);
  mb_node(m, "DequantizeLinear", "xt,sx,zx", "xd");
  mb_q8(m, "wq", D(16, 1, 3, 3), 0, 0);
  mb_w(m, "ws", D(16), 0.004f, 0.002f);
  tb_attr_int(mb_node(m, "DequantizeLinear", "wq,ws", "w"), "axis", 0);
  mb_w(m, "b", D(16), 0.0f, 0.5f);
  Onnx__NodeProto *c = mb_node(m, "Conv", "xd,w,b", "y");
  tb_attr_int(c, "group", 16);
  tb_attr_ints(c, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
  mb_out(m, "y");
  result fused = check(m, "qdq_dw_u8.onnx");
  cr_expect_eq(matches(&fused, "qdq"), 1, "%s", fused.report);
  int u8_in = 0;
  for (int i = 0; i < fused.g->n_nodes; i++) {
    const ft_node *n = &fused.g->nodes[i];
    u8_in += !n->dead && !strcmp(n->op_type, "QDQConv") && fused.g->vals[n->in[0]].t.dtype == FT_UINT8;
  }
  cr_expect_eq(u8_in, 1, "QDQConv reading uint8");
  cr_expect_eq(count_op(&fused, "Conv") + count_op(&fused, "DequantizeLinear"), 0);
}

/* The attention fusion (compiler/fuse/fuse_attention.c) and its kernel (templates/c/attention.h).
 *
 *   kernel:  ft_attention_f32 against a plain three-loop reference: strided q/k/v, merged or
 *            separate batch and head dims, additive and select masks in both orders, causal
 *            masks with and without skipped key blocks, several key blocks, Dv != Dk.
 *   graph:   the pass on the models of tests/data/make_attention_models.py: what the fused
 *            node says (mask kind, heads, scale, packed QKV views).
 *   e2e:     each model compiled with and without --no-fuse=attention at both data sets'
 *            shapes: the match count (and near-miss reason) in --report, both programs
 *            against each other and against torch. */
#include <math.h>

#include "attention.h"
#include "fuse.h"
#include "testutil.h"

/* ---- kernel --------------------------------------------------------------------------------- */

typedef struct kcase {
  int64_t n1, n2, sq, sk, dk, dv;
  int add, sel, add_first; /* sel: FT_AT_SEL_* */
  int64_t keep_or_off;
  float fill;
  int seq_first; /* q/k/v rows interleaved [S, n1, n2*D] (like torch's seq-first MHA) */
  int colstride;  /* 2: q/k/v columns every other float (0 counts as 1) */
  int threads;    /* 0: the default */
} kcase;

static float frand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return ((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* q, k, v in one packed buffer of rows [.., 3*n2*D] (with D = max(dk, dv) columns per head);
 * the output [n1, sq, n2*dv] (copied to keep unless NULL). Returns the max abs difference to a
 * reference in double. */
static double run_kernel_case(const kcase *t, float *keep) {
  int64_t n1 = t->n1, n2 = t->n2, sq = t->sq, sk = t->sk, dk = t->dk, dv = t->dv;
  int64_t cs = t->colstride ? t->colstride : 1;
  int64_t dm = dk > dv ? dk : dv, rowlen = 3 * n2 * dm * cs, srows = sq > sk ? sq : sk;
  int64_t p[FT_AT_NP] = {0};
  double f[2] = {0.37, t->fill};
  p[FT_AT_N1] = n1; p[FT_AT_N2] = n2; p[FT_AT_SQ] = sq; p[FT_AT_SK] = sk; p[FT_AT_DK] = dk; p[FT_AT_DV] = dv;
  for (int w = 0; w < 3; w++) { /* q, k, v views into the packed buffer */
    int64_t *vw = p + FT_AT_Q + 5 * w;
    vw[0] = w * n2 * dm * cs;
    vw[1] = t->seq_first ? rowlen : srows * rowlen;
    vw[2] = dm * cs;
    vw[3] = t->seq_first ? n1 * rowlen : rowlen;
    vw[4] = cs;
  }
  p[FT_AT_O + 0] = 0; p[FT_AT_O + 1] = sq * n2 * dv; p[FT_AT_O + 2] = dv; p[FT_AT_O + 3] = n2 * dv;
  /* masks: additive [n1, 1, sq, sk] (per batch, per query), select [n1, 1, 1, sk] */
  if (t->add) { p[FT_AT_ADD] = 1; p[FT_AT_ADD + 1] = sq * sk; p[FT_AT_ADD + 2] = 0; p[FT_AT_ADD + 3] = sk; p[FT_AT_ADD + 4] = 1; }
  p[FT_AT_SEL] = t->sel;
  p[FT_AT_SEL + 1] = t->keep_or_off;
  if (t->sel == FT_AT_SEL_TENSOR) { p[FT_AT_SEL + 2] = sk; p[FT_AT_SEL + 3] = 0; p[FT_AT_SEL + 4] = 0; p[FT_AT_SEL + 5] = 1; }
  p[FT_AT_ADD_FIRST] = t->add_first;
  cr_assert(ft_attention_tiles(n1, n2, sq, sk, dk, dv, &p[FT_AT_RG], &p[FT_AT_KB]));
  p[FT_AT_SKIP] = t->sel == FT_AT_SEL_CAUSAL && t->fill <= -1e30 && t->keep_or_off >= 0 && !t->add;
  unsigned seed = 7;
  int64_t nqkv = srows * n1 * rowlen;
  float *qkv = malloc(sizeof(float) * (size_t)nqkv), *addm = malloc(sizeof(float) * (size_t)(n1 * sq * sk));
  uint8_t *selm = malloc((size_t)(n1 * sk));
  float *y = calloc((size_t)(n1 * sq * n2 * dv), sizeof(float));
  for (int64_t i = 0; i < nqkv; i++) qkv[i] = 2 * frand(&seed);
  for (int64_t i = 0; i < n1 * sq * sk; i++) addm[i] = frand(&seed) < -0.6f ? -1e4f : frand(&seed);
  for (int64_t i = 0; i < n1 * sk; i++) selm[i] = frand(&seed) > -0.5f;
  const void *in[5] = {qkv, qkv, qkv, t->add ? addm : NULL, t->sel == FT_AT_SEL_TENSOR ? selm : NULL};
  void *out[1] = {y};
  if (t->threads) ft_set_threads(t->threads);
  ft_attention_f32(p, f, in, out, NULL);
  ft_set_threads(0);
  if (keep) memcpy(keep, y, sizeof(float) * (size_t)(n1 * sq * n2 * dv));
  double worst = 0, *s = malloc(sizeof(double) * (size_t)sk);
  for (int64_t b1 = 0; b1 < n1; b1++)
    for (int64_t b2 = 0; b2 < n2; b2++)
      for (int64_t i = 0; i < sq; i++) {
        const int64_t *Q = p + FT_AT_Q, *K = p + FT_AT_K, *V = p + FT_AT_V;
        const float *q = qkv + Q[0] + b1 * Q[1] + b2 * Q[2] + i * Q[3];
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < sk; j++) {
          const float *k = qkv + K[0] + b1 * K[1] + b2 * K[2] + j * K[3];
          double dot = 0;
          for (int64_t d = 0; d < dk; d++) dot += (double)q[d * Q[4]] * k[d * K[4]];
          double x = (float)f[0] * dot;
          for (int pass = 0; pass < 2; pass++) {
            if ((pass == 0) == (t->add_first != 0)) { if (t->add) x += addm[b1 * sq * sk + i * sk + j]; }
            else if (t->sel == FT_AT_SEL_TENSOR) { if ((selm[b1 * sk + j] != 0) != t->keep_or_off) x = t->fill; }
            else if (t->sel == FT_AT_SEL_CAUSAL) { if (j > i + t->keep_or_off) x = t->fill; }
          }
          s[j] = x;
          if (x > mx) mx = x;
        }
        for (int64_t j = 0; j < sk; j++) { s[j] = exp(s[j] - mx); sum += s[j]; }
        for (int64_t d = 0; d < dv; d++) {
          double acc = 0;
          for (int64_t j = 0; j < sk; j++) acc += s[j] * qkv[V[0] + b1 * V[1] + b2 * V[2] + j * V[3] + d * V[4]];
          double got = y[b1 * sq * n2 * dv + i * n2 * dv + b2 * dv + d], err = fabs(got - acc / sum);
          if (!(err <= worst)) worst = err; /* NaN counts as worst */
        }
      }
  free(qkv); free(addm); free(selm); free(y); free(s);
  return worst;
}

#define KCASE(name, ...)                                              \
  Test(kernel, name) {                                                \
    kcase t = {__VA_ARGS__};                                          \
    double err = run_kernel_case(&t, NULL);                                 \
    cr_assert(err < 2e-5, "max abs error %g", err);                   \
  }

/*      n1 n2  sq   sk  dk  dv  add sel                 add_first keep/off fill */
KCASE(plain,              1, 1,   5,   5,  8,  8, 0, FT_AT_SEL_NONE,   0, 0, 0)
KCASE(batch_heads_add,    2, 3,  37,  37, 16, 16, 1, FT_AT_SEL_NONE,   0, 0, 0)
KCASE(dv_differs,         2, 2,  13,  29, 24,  8, 1, FT_AT_SEL_NONE,   0, 0, 0)
KCASE(select_keep0,       2, 2,  17,  17, 32, 32, 0, FT_AT_SEL_TENSOR, 0, 0, -3.4028235e38f)
KCASE(select_keep1,       1, 2,   9,   9, 32, 32, 0, FT_AT_SEL_TENSOR, 0, 1, -3.4028235e38f)
KCASE(select_then_add,    2, 2,  11,  11, 16, 16, 1, FT_AT_SEL_TENSOR, 0, 0, -5.0f)
KCASE(add_then_select,    2, 2,  11,  11, 16, 16, 1, FT_AT_SEL_TENSOR, 1, 0, -5.0f)
KCASE(causal_skip,        1, 2, 131, 131, 16, 16, 0, FT_AT_SEL_CAUSAL, 0, 0, -3.4028235e38f)
KCASE(causal_offset,      1, 2,  20,  45, 16, 16, 0, FT_AT_SEL_CAUSAL, 0, 25, -3.4028235e38f)
KCASE(causal_mild_fill,   1, 2,  40,  40, 16, 16, 0, FT_AT_SEL_CAUSAL, 0, 0, -2.0f)
KCASE(causal_with_add,    2, 1,  40,  40, 16, 16, 1, FT_AT_SEL_CAUSAL, 1, 0, -3.4028235e38f)
KCASE(many_key_blocks,    1, 2,  50, 700, 16, 16, 1, FT_AT_SEL_NONE,   0, 0, 0)
KCASE(long_causal,        1, 1, 600, 600,  8,  8, 0, FT_AT_SEL_CAUSAL, 0, 0, -3.4028235e38f)
KCASE(long_select,        2, 1,  30, 530,  8, 12, 0, FT_AT_SEL_TENSOR, 0, 1, -3.4028235e38f)
KCASE(wide_head,          1, 1,  20,  20, 256, 256, 1, FT_AT_SEL_NONE, 0, 0, 0)

Test(kernel, seq_first_rows) {
  kcase t = {2, 3, 19, 19, 16, 16, 1, FT_AT_SEL_NONE, 0, 0, 0, 1, 1, 0};
  double err = run_kernel_case(&t, NULL);
  cr_assert(err < 2e-5, "max abs error %g", err);
}

Test(kernel, strided_columns) {
  kcase t = {2, 2, 23, 23, 16, 16, 1, FT_AT_SEL_NONE, 0, 0, 0, 0, 2, 0};
  double err = run_kernel_case(&t, NULL);
  cr_assert(err < 2e-5, "max abs error %g", err);
}

/* The kernel takes fewer, longer row groups with fewer threads (ft_attention_f32): 200 query
 * rows of 2 heads are 1 group per head at 1 and 2 threads, 3 or 4 at 7 and more. Every output
 * is the same float whatever the thread count. */
Test(kernel, same_floats_whatever_the_thread_count) {
  static const int threads[] = {1, 2, 7, 16};
  float *y[4];
  for (int i = 0; i < 4; i++) {
    kcase t = {1, 2, 200, 200, 64, 64, 1, FT_AT_SEL_NONE, 0, 0, 0, 0, 0, threads[i]};
    y[i] = malloc(sizeof(float) * 200 * 2 * 64);
    double err = run_kernel_case(&t, y[i]);
    cr_assert(err < 2e-5, "%d threads: max abs error %g", threads[i], err);
  }
  for (int i = 1; i < 4; i++)
    cr_assert(memcmp(y[0], y[i], sizeof(float) * 200 * 2 * 64) == 0, "1 and %d threads differ", threads[i]);
  for (int i = 0; i < 4; i++) free(y[i]);
}

Test(kernel, tiles_fit_the_buffer) {
  int64_t rg, kb;
  cr_assert(ft_attention_tiles(1, 12, 128, 128, 64, 64, &rg, &kb));
  cr_assert_eq(kb, 128, "one key block for short sequences");
  cr_assert(rg % FT_GEMM_MR == 0 && rg <= 128 && rg >= 48);
  cr_assert(ft_attention_buf_floats(kb, rg, 64, 64) <= FT_ATTN_BUF);
  cr_assert(ft_attention_tiles(1, 1, 4096, 4096, 128, 128, &rg, &kb));
  cr_assert(kb < 4096 && kb % FT_GEMM_NR == 0 && rg <= FT_ATTN_MAX_ROWS);
  cr_assert(ft_attention_buf_floats(kb, rg, 128, 128) <= FT_ATTN_BUF);
  cr_assert(ft_attention_tiles(1, 1, 20, 20, 256, 256, &rg, &kb));
  cr_assert(ft_attention_buf_floats(kb, rg, 256, 256) <= FT_ATTN_BUF, "room for a Q sliver wider than the keys");
  cr_assert_not(ft_attention_tiles(1, 1, 16, 4096, 100000, 64, &rg, &kb), "an impossible head size is refused");
}

/* ---- the pass, in process ------------------------------------------------------------------ */

static char *model_path(const char *name) { return tu_fmt("%s/tests/data/attention/%s/model.onnx", FTAX_SOURCE_DIR, name); }

/* Load, pin, fold and fuse; the live ftax.Attention nodes go to *att. */
static ft_graph *fused_graph(const char *name, const char *const *dims, int ndims, int *n_att, const ft_node **att) {
  char *path = model_path(name);
  ft_graph *g = tu_load(path);
  free(path);
  ft_pins pins = {0};
  for (int i = 0; i < ndims; i++) pins.dims[pins.n_dims++] = dims[i];
  ft_err e = {0};
  cr_assert_eq(ft_resolve_ops(g, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_specialize(g, &pins, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_infer(g, 1, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_simplify(g, &e), 0, "%s", e.msg);
  ft_fuse_opts fo = {0};
  cr_assert_eq(ft_fuse(g, &fo, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_infer(g, 1, &e), 0, "fused ops infer: %s", e.msg);
  cr_assert_eq(ft_simplify(g, &e), 0, "%s", e.msg);
  *n_att = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && !strcmp(g->nodes[i].domain, "ftax") && !strcmp(g->nodes[i].op_type, "Attention")) att[(*n_att)++] = &g->nodes[i];
  return g;
}

static void assert_ints(const ft_node *n, const char *attr, const int64_t *want, int count) {
  const int64_t *v;
  int k = ft_attr_ints(n, attr, &v);
  cr_assert_eq(k, count, "%s has %d values", attr, k);
  for (int i = 0; i < count; i++) cr_assert_eq(v[i], want[i], "%s[%d] = %lld, want %lld", attr, i, (long long)v[i], (long long)want[i]);
}

Test(graph, bert_reads_one_packed_projection) {
  const char *dims[] = {"batch=2", "seq=5"};
  const ft_node *att[4];
  int n;
  ft_graph *g = fused_graph("bert_div", dims, 2, &n, att);
  cr_assert_eq(n, 1);
  const ft_node *a = att[0];
  cr_assert_str_eq(ft_attr_str(a, "mask", ""), "add");
  cr_assert_eq(ft_attr_int(a, "num_heads", 0), 4);
  cr_assert_eq(ft_attr_int(a, "head_size", 0), 8);
  cr_assert_float_eq(ft_attr_float(a, "scale", 0), 1 / sqrtf(8), 1e-7);
  cr_assert_eq(ft_attr_int(a, "packed_qkv", 0), 1, "the three projections became one GEMM");
  cr_assert_eq(a->in[0], a->in[1]);
  cr_assert_eq(a->in[0], a->in[2]);
  const ft_tensor *qkv = &g->vals[a->in[0]].t;
  cr_assert_eq(qkv->rank, 3);
  cr_assert_eq(qkv->dims[2], 96, "[B, S, 3E]");
  int64_t dm[6] = {2, 4, 5, 5, 8, 8};
  assert_ints(a, "dims", dm, 6);
  /* head h of q: columns h*8.. of each row of 96; k and v further along the same row */
  int64_t q[5] = {0, 5 * 96, 8, 96, 1}, k[5] = {32, 5 * 96, 8, 96, 1}, v[5] = {64, 5 * 96, 8, 96, 1};
  assert_ints(a, "q_view", q, 5);
  assert_ints(a, "k_view", k, 5);
  assert_ints(a, "v_view", v, 5);
  int64_t o[4] = {0, 5 * 32, 8, 32}, shape[3] = {2, 5, 32};
  assert_ints(a, "out_view", o, 4);
  assert_ints(a, "out_shape", shape, 3);
  const ft_tensor *m = &g->vals[a->in[3]].t;
  cr_assert(m->rank == 4 && m->dims[0] == 2 && m->dims[1] == 1 && m->dims[2] == 1 && m->dims[3] == 5, "the [B,1,1,S] mask");
  for (int i = 0; i < g->n_nodes; i++)
    cr_assert(g->nodes[i].dead || strcmp(g->nodes[i].op_type, "Softmax"), "no Softmax is left");
  ft_graph_free(g);
}

Test(graph, distilbert_where_is_a_select_mask) {
  const char *dims[] = {"batch=2", "seq=5"};
  const ft_node *att[4];
  int n;
  ft_graph *g = fused_graph("distilbert_where", dims, 2, &n, att);
  cr_assert_eq(n, 1);
  cr_assert_str_eq(ft_attr_str(att[0], "mask", ""), "select");
  cr_assert_eq(ft_attr_int(att[0], "select_keep", 1), 0, "masked_fill replaces where the mask is true");
  cr_assert_eq(ft_attr_float(att[0], "fill", 0), -3.4028235e38f);
  cr_assert_eq(att[0]->n_in, 5);
  const ft_tensor *m = &g->vals[att[0]->in[4]].t;
  cr_assert_eq(m->dtype, FT_BOOL);
  cr_assert_eq(m->dims[2], 1, "the mask before Expand: [B,1,1,S], not [B,H,S,S]");
  ft_graph_free(g);
}

Test(graph, gpt2_causal_slices_the_qkv_gemm) {
  const char *dims[] = {"batch=1", "seq=7"};
  const ft_node *att[4];
  int n;
  ft_graph *g = fused_graph("gpt2_causal", dims, 2, &n, att);
  cr_assert_eq(n, 1);
  const ft_node *a = att[0];
  cr_assert_str_eq(ft_attr_str(a, "mask", ""), "causal");
  cr_assert_eq(ft_attr_int(a, "causal_offset", -1), 0);
  cr_assert_eq(a->n_in, 3, "no mask tensor: the tril constant is gone");
  cr_assert_float_eq(ft_attr_float(a, "scale", 0), 1 / sqrtf(8), 1e-7);
  cr_assert_eq(a->in[0], a->in[2], "q, k and v come from the Gemm's output, not from Split");
  int64_t k[5] = {32, 0, 8, 96, 1};
  assert_ints(a, "k_view", k, 5);
  ft_graph_free(g);
}

Test(graph, vit_heads_merged_with_batch) {
  const char *dims1[] = {"batch=1", "seq=7"}, *dims2[] = {"batch=2", "seq=5"};
  const ft_node *att[4];
  int n;
  ft_graph *g = fused_graph("vit_mha", dims1, 2, &n, att);
  cr_assert_eq(n, 1);
  int64_t dm[6] = {1, 4, 7, 7, 8, 8}, q[5] = {0, 0, 8, 96, 1};
  assert_ints(att[0], "dims", dm, 6);
  assert_ints(att[0], "q_view", q, 5);
  ft_graph_free(g);
  /* batch 2: heads of both rows merge into one dim of 8 that no stride of the packed rows
   * describes, so q, k and v are read from the Slices' outputs */
  g = fused_graph("vit_mha", dims2, 2, &n, att);
  cr_assert_eq(n, 1);
  int64_t dm2[6] = {1, 8, 5, 5, 8, 8};
  assert_ints(att[0], "dims", dm2, 6);
  cr_assert_neq(att[0]->in[0], att[0]->in[1]);
  ft_graph_free(g);
}

/* ---- end to end ------------------------------------------------------------------------------ */

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }
TestSuite(e2e, .init = setup, .fini = teardown);

/* "--shape" flags for a data set, from ftax-testtool. */
static int shape_flags(const char *model, const char *set, char **argv, int at) {
  char *tool = tu_fmt("%s/ftax-testtool", FTAX_BUILD_DIR), *out = NULL;
  char *args[] = {tool, "shape-flags", (char *)model, (char *)set, NULL};
  cr_assert_eq(tu_run(NULL, &out, args), 0, "shape-flags: %s", out);
  for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) argv[at++] = tu_keep(strdup(line));
  return at;
}

/* Compile with ftaxc; returns the --report text. */
static char *compile(const char *name, const char *set, const char *prog, const char *extra) {
  char *model = model_path(name), *out = NULL;
  char *argv[32] = {FTAXC, model, "-o", (char *)prog, "--report", "--cflags", "-Og -march=native -pthread"};
  int n = shape_flags(model, set, argv, 7);
  if (extra) argv[n++] = (char *)extra;
  argv[n] = NULL;
  int rc = tu_run(NULL, &out, argv);
  cr_assert_eq(rc, 0, "ftaxc %s failed (%d): %s", name, rc, out);
  return out;
}

static void run_prog(const char *prog, const char *set, const char *outdir) {
  char *argv[16] = {(char *)prog};
  int n = 1;
  for (int i = 0; i < 8; i++) {
    char *f = tu_fmt("%s/input_%d.pb", set, i);
    if (!tu_exists(f)) break;
    argv[n++] = f;
  }
  argv[n++] = "--output-dir";
  argv[n++] = (char *)outdir;
  argv[n] = NULL;
  char *out = NULL;
  cr_assert_eq(tu_run(NULL, &out, argv), 0, "%s: %s", prog, out);
}

static void compare(const char *want, const char *got, const char *atol, const char *rtol, const char *what) {
  char *out = NULL;
  char *argv[] = {FTAX_COMPARE, (char *)want, (char *)got, "--atol", (char *)atol, "--rtol", (char *)rtol, NULL};
  cr_assert_eq(tu_run(NULL, &out, argv), 0, "%s: %s", what, out);
}

/* Compile model `name` at data set k's shapes with and without the fusion; expect `matches`
 * (and, for 0, a near-miss line holding `why`); outputs agree with each other and torch. */
static void check_model(const char *name, int k, int matches, const char *why) {
  char *set = tu_fmt("%s/tests/data/attention/%s/test_data_set_%d", FTAX_SOURCE_DIR, name, k);
  char *fp = tu_fmt("%s/fused", dir), *up = tu_fmt("%s/unfused", dir);
  char *rep = compile(name, set, fp, NULL);
  char *line = strstr(rep, "fuse attention");
  cr_assert(line, "no attention line in the report: %s", rep);
  int got = -1;
  cr_assert_eq(sscanf(line, "fuse attention %d", &got), 1, "%s", line);
  cr_assert_eq(got, matches, "%s set %d: %d matches, want %d\n%s", name, k, got, matches, rep);
  if (why) cr_assert(strstr(rep, "near-miss") && strstr(rep, why), "%s: the report should say '%s':\n%s", name, why, rep);
  char *rep2 = compile(name, set, up, "--no-fuse=attention");
  cr_assert(strstr(rep2, "fuse attention      off"), "%s", rep2);
  char *fo = tu_fmt("%s/out_fused", dir), *uo = tu_fmt("%s/out_unfused", dir);
  run_prog(fp, set, fo);
  run_prog(up, set, uo);
  for (int i = 0; i < 4; i++) {
    char *want = tu_fmt("%s/output_%d.pb", set, i);
    if (!tu_exists(want)) break;
    char *a = tu_fmt("%s/output_%d.pb", fo, i), *b = tu_fmt("%s/output_%d.pb", uo, i);
    compare(b, a, "1e-5", "1e-4", tu_fmt("%s set %d output %d: fused vs unfused", name, k, i));
    compare(want, a, "1e-4", "1e-3", tu_fmt("%s set %d output %d: fused vs torch", name, k, i));
  }
}

/* every data set the model has (the near-misses with fixed-size inputs have one) */
#define E2E(name, matches, why)                                                                    \
  Test(e2e, name) {                                                                                \
    for (int k = 0; k < 2; k++)                                                                    \
      if (!k || tu_exists(tu_fmt("%s/tests/data/attention/" #name "/test_data_set_%d", FTAX_SOURCE_DIR, k))) \
        check_model(#name, k, matches, why);                                                       \
  }

E2E(bert_div, 1, NULL)
E2E(bert_mul_kperm, 1, NULL)
E2E(split_scale, 1, NULL)
E2E(distilbert_where, 1, NULL)
E2E(gpt2_causal, 1, NULL)
E2E(vit_mha, 1, NULL)
E2E(query_mask, 1, NULL)
E2E(long_bert, 1, NULL)
E2E(long_gpt2, 1, NULL)
E2E(nm_softmax_axis, 0, "softmax over axis 2")
E2E(nm_mask_bigger, 0, "broadcasts the scores to a larger shape")
E2E(nm_probs_output, 0, "not read by one MatMul")
E2E(nm_scale_after, 0, "scaled after the mask")
E2E(nm_runtime_scale, 0, "sits between the scores and the Softmax")

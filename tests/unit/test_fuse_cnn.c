/* The CNN fusion passes (compiler/fuse/fuse_conv_bn.c, fuse_conv_epilogue.c, fuse_elementwise.c)
 * and their fused ops (ftax.FusedConv, ftax.Elementwise).
 *
 * Every case is a small graph built here. It goes through the compiler's pipeline in this
 * process twice, with fusion on and with every pass off (--no-fuse); then its inputs are bound
 * to the same pseudo-random data and constant folding evaluates every node with its planned
 * kernel (the fused ops' kernels included). Checks: what fused (op counts, attributes, the
 * report's match counts and near-misses), and outputs equal to the unfused graph's within 1e-5
 * relative. One case compiles a model with ftaxc and runs the generated program, for the
 * emitted code, packed weights and in-place buffers. */
#include <math.h>

#include "elementwise.h"
#include "fuse.h"
#include "tensorio.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }
TestSuite(fuse_cnn, .init = setup, .fini = teardown);

/* ---- building graphs ---------------------------------------------------------------------- */

static Onnx__GraphProto *G;
static unsigned rng_state;

static float frand(void) { /* uniform in [-1, 1), deterministic */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void begin(const char *name) {
  G = tb_graph(name);
  rng_state = 12345;
}

static int parse_dims(const char *shape, int64_t *d) {
  int r = 0;
  for (const char *s = shape; *s;) {
    d[r++] = strtoll(s, (char **)&s, 10);
    if (*s == ',') s++;
  }
  return r;
}

static void input(const char *name, const char *shape) { tb_add_input(G, tb_value(name, FT_FLOAT, shape)); }
static void output(const char *name) { tb_add_output(G, tb_value(name, FT_FLOAT, NULL)); }

/* A float constant of this shape ("" for a scalar): random values times scale plus offset. */
static void weight(const char *name, const char *shape, float scale, float offset) {
  int64_t d[8];
  int r = parse_dims(shape, d);
  int64_t n = 1;
  for (int i = 0; i < r; i++) n *= d[i];
  float *v = malloc(sizeof(float) * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) v[i] = frand() * scale + offset;
  tb_add_init(G, tb_tensor_f32(name, r, d, v));
  free(v);
}

static void scalar(const char *name, float x) { tb_add_init(G, tb_tensor_f32(name, 0, NULL, &x)); }

static Onnx__NodeProto *node(const char *op, const char *ins, const char *outs) {
  Onnx__NodeProto *n = tb_node(op, outs, ins, outs);
  tb_add_node(G, n);
  return n;
}

/* Conv with square kernel k, stride s, pad p, group g. */
static Onnx__NodeProto *conv(const char *ins, const char *out, int64_t k, int64_t s, int64_t p, int64_t g) {
  Onnx__NodeProto *n = node("Conv", ins, out);
  const int64_t ks[2] = {k, k}, st[2] = {s, s}, pads[4] = {p, p, p, p};
  tb_attr_ints(n, "kernel_shape", ks, 2);
  tb_attr_ints(n, "strides", st, 2);
  tb_attr_ints(n, "pads", pads, 4);
  if (g != 1) tb_attr_int(n, "group", g);
  return n;
}

static char *finish(int64_t opset) {
  char *path = tu_fmt("%s/%s.onnx", dir, G->name);
  tb_write_model(tb_model(G, opset), path);
  return path;
}

/* ---- running them --------------------------------------------------------------------------- */

typedef struct run {
  ft_graph *g;   /* after fusion (and then evaluated) */
  char *report;  /* ft_fuse's report */
  char *ops;     /* live op types after fusion */
  char *live;    /* per node: live after fusion (evaluation then folds every node) */
} run;

/* The pipeline up to fusion; fuse: NULL every pass off, "" all on, else --no-fuse=that. */
static run compile_graph(const char *path, const char *fuse) {
  run r = {0};
  r.g = tu_keep_graph(tu_load(path));
  ft_pins pins = {0};
  ft_err e = {0};
  cr_assert_eq(ft_resolve_ops(r.g, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_specialize(r.g, &pins, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_infer(r.g, 1, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_simplify(r.g, &e), 0, "%s", e.msg);
  size_t len;
  FILE *rep = open_memstream(&r.report, &len);
  ft_fuse_opts o = {fuse == NULL, fuse && *fuse ? fuse : NULL, rep};
  cr_assert_eq(ft_fuse(r.g, &o, &e), 0, "%s", e.msg);
  fclose(rep);
  tu_keep(r.report);
  cr_assert_eq(ft_infer(r.g, 1, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_simplify(r.g, &e), 0, "%s", e.msg);
  r.ops = tu_live_ops(r.g);
  r.live = tu_keep(calloc((size_t)r.g->n_nodes + 1, 1));
  for (int i = 0; i < r.g->n_nodes; i++) r.live[i] = !r.g->nodes[i].dead;
  return r;
}

/* The data input k gets: uniform in [-2, 2), the same in every run. */
static void input_data(ft_tensor *t, int k) {
  unsigned s = 777u + 31u * (unsigned)k;
  int64_t n = ft_numel(t);
  t->data = malloc(sizeof(float) * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    ((float *)t->data)[i] = (float)((s >> 8) & 0xffff) / 16384.0f - 2.0f;
  }
}

/* Bind the inputs and fold: every node runs its kernel. */
static void evaluate(run *r) {
  ft_graph *g = r->g;
  for (int i = 0; i < g->n_inputs; i++) {
    ft_value *v = &g->vals[g->inputs[i]];
    input_data(&v->t, i);
    v->kind = FT_V_CONST;
  }
  ft_err e = {0};
  cr_assert_eq(ft_infer(g, 1, &e), 0, "%s", e.msg);
  for (int i = 0; i < g->n_outputs; i++) cr_assert(g->vals[g->outputs[i]].t.data, "output %d was not computed", i);
}

static int count_ops(const run *r, const char *op) {
  int n = 0;
  for (int i = 0; i < r->g->n_nodes; i++)
    if (r->live[i] && !strcmp(r->g->nodes[i].op_type, op)) n++;
  return n;
}

/* The report's match count of one pass. */
static int matches(const run *r, const char *pass) {
  char *key = tu_fmt("fuse %-14s", pass);
  const char *s = strstr(r->report, key);
  cr_assert(s, "no line for %s in the report:\n%s", pass, r->report);
  return atoi(s + strlen(key));
}

static const ft_node *first_node(const run *r, const char *op) {
  for (int i = 0; i < r->g->n_nodes; i++)
    if (r->live[i] && !strcmp(r->g->nodes[i].op_type, op)) return &r->g->nodes[i];
  cr_assert_fail("no live %s node (live: %s)", op, r->ops);
  return NULL;
}

static void expect_same_outputs(const run *a, const run *b) {
  cr_assert_eq(a->g->n_outputs, b->g->n_outputs);
  for (int k = 0; k < a->g->n_outputs; k++) {
    const ft_tensor *x = &a->g->vals[a->g->outputs[k]].t, *y = &b->g->vals[b->g->outputs[k]].t;
    cr_assert_eq(ft_numel(x), ft_numel(y), "output %d sizes differ", k);
    cr_assert_eq(x->rank, y->rank);
    for (int d = 0; d < x->rank; d++) cr_assert_eq(x->dims[d], y->dims[d]);
    const float *p = x->data, *q = y->data;
    for (int64_t i = 0; i < ft_numel(x); i++) {
      int ok = fabsf(p[i] - q[i]) <= 1e-5f * fabsf(q[i]) + 1e-6f || (isnan(p[i]) && isnan(q[i]));
      cr_assert(ok, "output %d element %lld: fused %.9g, unfused %.9g", k, (long long)i, p[i], q[i]);
    }
  }
}

/* Compile with fusion on (fuse: "" or a --no-fuse list) and off, evaluate both, compare. */
static run check(const char *path, const char *fuse) {
  run on = compile_graph(path, fuse), off = compile_graph(path, NULL);
  evaluate(&on);
  evaluate(&off);
  expect_same_outputs(&on, &off);
  return on;
}

/* ---- conv_bn -------------------------------------------------------------------------------- */

static void bn_params(const char *p) {
  weight(tu_fmt("%s_scale", p), "4", 0.5f, 1.0f);
  weight(tu_fmt("%s_bias", p), "4", 0.3f, 0.0f);
  weight(tu_fmt("%s_mean", p), "4", 0.5f, 0.0f);
  weight(tu_fmt("%s_var", p), "4", 0.5f, 1.0f);
}

Test(fuse_cnn, conv_bn_folds_into_weights_and_bias) {
  begin("conv_bn");
  input("x", "1,3,7,7");
  weight("w", "4,3,3,3", 0.4f, 0);
  weight("b", "4", 0.2f, 0);
  bn_params("bn");
  conv("x,w,b", "c", 3, 1, 1, 1);
  tb_attr_float(node("BatchNormalization", "c,bn_scale,bn_bias,bn_mean,bn_var", "y"), "epsilon", 1e-3f);
  output("y");
  run r = check(finish(14), "");
  cr_assert_eq(matches(&r, "conv_bn"), 1, "%s", r.report);
  cr_assert_str_eq(r.ops, "Conv");
}

Test(fuse_cnn, conv_bn_without_conv_bias_then_relu_is_one_fused_conv) {
  begin("conv_bn_relu");
  input("x", "2,3,6,6");
  weight("w", "4,3,1,1", 0.4f, 0);
  bn_params("bn");
  conv("x,w", "c", 1, 1, 0, 1);
  node("BatchNormalization", "c,bn_scale,bn_bias,bn_mean,bn_var", "n");
  node("Relu", "n", "y");
  output("y");
  run r = check(finish(14), "");
  cr_assert_eq(matches(&r, "conv_bn"), 1);
  cr_assert_eq(matches(&r, "conv_epilogue"), 1);
  cr_assert_str_eq(r.ops, "FusedConv");
  cr_assert_str_eq(ft_attr_str(first_node(&r, "FusedConv"), "activation", ""), "Relu");
}

Test(fuse_cnn, conv_bn_near_miss_when_the_conv_output_is_read_elsewhere) {
  begin("conv_bn_shared");
  input("x", "1,3,5,5");
  weight("w", "4,3,3,3", 0.4f, 0);
  bn_params("bn");
  conv("x,w", "c", 3, 1, 1, 1);
  node("BatchNormalization", "c,bn_scale,bn_bias,bn_mean,bn_var", "y");
  output("y");
  output("c");
  run r = check(finish(14), "");
  cr_assert_eq(matches(&r, "conv_bn"), 0);
  cr_assert_eq(count_ops(&r, "BatchNormalization"), 1);
  cr_assert(strstr(r.report, "near-miss") && strstr(r.report, "2 uses"), "%s", r.report);
}

Test(fuse_cnn, conv_bn_near_miss_when_statistics_are_not_constant) {
  begin("conv_bn_runtime_mean");
  input("x", "1,3,5,5");
  input("mean", "4");
  weight("w", "4,3,3,3", 0.4f, 0);
  bn_params("bn");
  conv("x,w", "c", 3, 1, 1, 1);
  node("BatchNormalization", "c,bn_scale,bn_bias,mean,bn_var", "y");
  output("y");
  run r = check(finish(14), "");
  cr_assert_eq(matches(&r, "conv_bn"), 0);
  cr_assert(strstr(r.report, "not a float32 constant"), "%s", r.report);
}

/* ---- conv_epilogue: activations --------------------------------------------------------------- */

/* x [1,4,6,6] -> Conv 3x3 (bias) -> the activation -> y; returns the fused run. */
static run conv_act(const char *name, const char *act, int64_t opset) {
  begin(name);
  input("x", "1,4,6,6");
  weight("w", "5,4,3,3", 0.5f, 0);
  weight("b", "5", 0.3f, 0);
  conv("x,w,b", "c", 3, 1, 1, 1);
  if (!strcmp(act, "Relu") || !strcmp(act, "Sigmoid")) node(act, "c", "y");
  else if (!strcmp(act, "Relu6")) {
    scalar("lo", 0);
    scalar("hi", 6);
    node("Clip", "c,lo,hi", "y");
  } else if (!strcmp(act, "ClipAttr")) { /* opset 6 to 10: bounds are attributes */
    Onnx__NodeProto *n = node("Clip", "c", "y");
    tb_attr_float(n, "min", -0.5f);
    tb_attr_float(n, "max", 0.75f);
  } else if (!strcmp(act, "ClipMinOnly")) {
    scalar("lo", 0);
    node("Clip", "c,lo", "y");
  } else if (!strcmp(act, "SiluXFirst")) {
    node("Sigmoid", "c", "s");
    node("Mul", "c,s", "y");
  } else if (!strcmp(act, "SiluSigFirst")) {
    node("Sigmoid", "c", "s");
    node("Mul", "s,c", "y");
  }
  output("y");
  run r = check(finish(opset), "");
  cr_assert_eq(matches(&r, "conv_epilogue"), 1, "%s", r.report);
  cr_assert_str_eq(r.ops, "FusedConv");
  return r;
}

Test(fuse_cnn, conv_relu) {
  run r = conv_act("conv_relu", "Relu", 14);
  cr_assert_str_eq(ft_attr_str(first_node(&r, "FusedConv"), "activation", ""), "Relu");
}

Test(fuse_cnn, conv_relu6_clip_with_constant_inputs) {
  run r = conv_act("conv_relu6", "Relu6", 14);
  const ft_node *n = first_node(&r, "FusedConv");
  cr_assert_str_eq(ft_attr_str(n, "activation", ""), "Clip");
  const ft_attr *pa = ft_attr_find(n, "activation_params");
  cr_assert(pa && pa->n_floats == 2);
  cr_assert_float_eq(pa->floats[1], 6.0f, 0);
}

Test(fuse_cnn, conv_clip_with_attribute_bounds_at_opset_10) {
  run r = conv_act("conv_clip_attr", "ClipAttr", 10);
  const ft_attr *pa = ft_attr_find(first_node(&r, "FusedConv"), "activation_params");
  cr_assert(pa && pa->n_floats == 2);
  cr_assert_float_eq(pa->floats[0], -0.5f, 0);
}

Test(fuse_cnn, conv_clip_with_only_a_zero_minimum_is_relu) {
  run r = conv_act("conv_clip_min", "ClipMinOnly", 14);
  cr_assert_str_eq(ft_attr_str(first_node(&r, "FusedConv"), "activation", ""), "Relu");
}

Test(fuse_cnn, conv_sigmoid) {
  run r = conv_act("conv_sigmoid", "Sigmoid", 14);
  cr_assert_str_eq(ft_attr_str(first_node(&r, "FusedConv"), "activation", ""), "Sigmoid");
}

Test(fuse_cnn, conv_silu_either_operand_order) {
  run a = conv_act("conv_silu_a", "SiluXFirst", 14), b = conv_act("conv_silu_b", "SiluSigFirst", 14);
  cr_assert_str_eq(ft_attr_str(first_node(&a, "FusedConv"), "activation", ""), "Silu");
  cr_assert_str_eq(ft_attr_str(first_node(&b, "FusedConv"), "activation", ""), "Silu");
}

/* ---- conv_epilogue: residuals, in every conv mode ------------------------------------------ */

/* x [1,C,H,W] -> Conv(k, s, p, group) -> Add(r) [-> Relu], or -> Relu -> Add(r) when after. */
static run conv_residual(const char *name, int64_t C, int64_t CO, int64_t H, int64_t k, int64_t s,
                         int64_t p, int64_t g, int act, int after, int res_first) {
  begin(name);
  int64_t OH = (H + 2 * p - k) / s + 1;
  input("x", tu_fmt("1,%lld,%lld,%lld", (long long)C, (long long)H, (long long)H));
  input("r", tu_fmt("1,%lld,%lld,%lld", (long long)CO, (long long)OH, (long long)OH));
  weight("w", tu_fmt("%lld,%lld,%lld,%lld", (long long)CO, (long long)(C / g), (long long)k, (long long)k), 0.5f, 0);
  weight("b", tu_fmt("%lld", (long long)CO), 0.3f, 0);
  conv("x,w,b", "c", k, s, p, g);
  if (after) {
    node("Relu", "c", "a");
    node("Add", res_first ? "r,a" : "a,r", "y");
  } else {
    node("Add", res_first ? "r,c" : "c,r", act ? "a" : "y");
    if (act) node("Relu", "a", "y");
  }
  output("y");
  run r = check(finish(14), "");
  cr_assert_eq(matches(&r, "conv_epilogue"), 1, "%s", r.report);
  cr_assert_str_eq(r.ops, "FusedConv");
  const ft_node *n = first_node(&r, "FusedConv");
  cr_assert_eq(ft_attr_int(n, "residual", 0), after ? 2 : 1);
  cr_assert_str_eq(ft_attr_str(n, "activation", ""), act || after ? "Relu" : "");
  return r;
}

Test(fuse_cnn, residual_then_relu_3x3) { conv_residual("res_3x3", 4, 4, 9, 3, 1, 1, 1, 1, 0, 0); }
Test(fuse_cnn, residual_first_operand_then_relu_3x3_stride_2) { conv_residual("res_3x3s2", 4, 6, 9, 3, 2, 1, 1, 1, 0, 1); }
Test(fuse_cnn, residual_pointwise_no_activation) { conv_residual("res_1x1", 6, 4, 5, 1, 1, 0, 1, 0, 0, 0); }
Test(fuse_cnn, residual_1x1_stride_2_im2col) { conv_residual("res_1x1s2", 4, 8, 9, 1, 2, 0, 1, 1, 0, 0); }
Test(fuse_cnn, residual_grouped_conv) { conv_residual("res_group", 4, 6, 7, 3, 1, 1, 2, 1, 0, 0); }
Test(fuse_cnn, residual_depthwise) { conv_residual("res_dw", 8, 8, 10, 3, 1, 1, 8, 1, 0, 0); }
Test(fuse_cnn, residual_depthwise_stride_2_after_relu) { conv_residual("res_dw_s2", 8, 8, 11, 3, 2, 1, 8, 0, 1, 0); }
Test(fuse_cnn, residual_after_relu) { conv_residual("res_after", 4, 4, 8, 3, 1, 1, 1, 0, 1, 1); }
/* several bands per plane, the last one shorter */
Test(fuse_cnn, residual_depthwise_many_bands) { conv_residual("res_dw_bands", 2, 2, 130, 3, 1, 1, 2, 1, 0, 0); }

/* Depthwise geometries: 5x5, strides 2 and 3, dilation, asymmetric pads, outputs narrower than
 * a vector (7, 4, 1 wide), a row too wide for the band buffer (the per-tap loop); SiLU. */
Test(fuse_cnn, depthwise_geometries) {
  static const struct { int64_t c, h, w, k, s, d, pt, pl, pb, pr; } cases[] = {
      {6, 14, 14, 5, 2, 1, 2, 2, 2, 2}, {5, 14, 14, 3, 1, 2, 2, 2, 2, 2}, {4, 9, 13, 3, 3, 1, 1, 1, 1, 1},
      {3, 8, 8, 3, 2, 1, 0, 1, 1, 0},   {8, 3, 3, 3, 1, 1, 1, 1, 1, 1},   {2, 3, 4100, 3, 1, 1, 1, 1, 1, 1},
      {4, 7, 7, 5, 1, 1, 2, 2, 2, 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    begin(tu_fmt("dw%zu", i));
    input("x", tu_fmt("1,%lld,%lld,%lld", (long long)cases[i].c, (long long)cases[i].h, (long long)cases[i].w));
    weight("w", tu_fmt("%lld,1,%lld,%lld", (long long)cases[i].c, (long long)cases[i].k, (long long)cases[i].k), 0.5f, 0);
    weight("b", tu_fmt("%lld", (long long)cases[i].c), 0.5f, 0);
    Onnx__NodeProto *n = node("Conv", "x,w,b", "c");
    const int64_t st[2] = {cases[i].s, cases[i].s}, dl[2] = {cases[i].d, cases[i].d};
    const int64_t pads[4] = {cases[i].pt, cases[i].pl, cases[i].pb, cases[i].pr};
    tb_attr_ints(n, "strides", st, 2);
    tb_attr_ints(n, "dilations", dl, 2);
    tb_attr_ints(n, "pads", pads, 4);
    tb_attr_int(n, "group", cases[i].c);
    node("Sigmoid", "c", "s");
    node("Mul", "s,c", "y");
    output("y");
    run r = check(finish(14), "");
    cr_assert_str_eq(r.ops, "FusedConv", "case %zu", i);
  }
}

Test(fuse_cnn, residual_in_a_3d_conv) {
  begin("res_3d");
  input("x", "1,3,4,5,5");
  input("r", "1,4,4,5,5");
  weight("w", "4,3,3,3,3", 0.3f, 0);
  Onnx__NodeProto *n = node("Conv", "x,w", "c");
  const int64_t pads[6] = {1, 1, 1, 1, 1, 1};
  tb_attr_ints(n, "pads", pads, 6);
  node("Add", "c,r", "a");
  node("Relu", "a", "y");
  output("y");
  run r = check(finish(14), "");
  cr_assert_str_eq(r.ops, "FusedConv");
}

Test(fuse_cnn, per_channel_constant_add_becomes_bias) {
  begin("bias_add");
  input("x", "1,3,6,6");
  weight("w", "4,3,3,3", 0.5f, 0);
  weight("pb", "1,4,1,1", 0.5f, 0);
  weight("w2", "4,4,3,3", 0.5f, 0);
  weight("b", "4", 0.5f, 0);
  weight("pb2", "4,1,1", 0.5f, 0);
  conv("x,w", "c", 3, 1, 1, 1);
  node("Add", "pb,c", "a");
  node("Relu", "a", "y");
  conv("y,w2,b", "c2", 3, 1, 1, 1);
  node("Add", "c2,pb2", "z");
  output("z");
  run r = check(finish(14), "");
  cr_assert_eq(matches(&r, "conv_epilogue"), 2, "%s", r.report);
  cr_assert_str_eq(r.ops, "FusedConv,FusedConv");
}

/* ---- conv_epilogue: near-misses --------------------------------------------------------------- */

Test(fuse_cnn, conv_output_with_two_readers_keeps_its_relu) {
  begin("two_readers");
  input("x", "1,3,6,6");
  weight("w", "4,3,3,3", 0.5f, 0);
  conv("x,w", "c", 3, 1, 1, 1);
  node("Relu", "c", "y");
  output("y");
  output("c");
  run r = check(finish(14), "");
  cr_assert_eq(count_ops(&r, "FusedConv"), 0);
  cr_assert_str_eq(r.ops, "Conv,Relu");
  cr_assert(strstr(r.report, "readers"), "%s", r.report);
}

Test(fuse_cnn, add_of_a_broadcast_tensor_is_not_a_residual) {
  begin("bcast_add");
  input("x", "1,3,6,6");
  input("r", "1,4,1,1");
  weight("w", "4,3,3,3", 0.5f, 0);
  conv("x,w", "c", 3, 1, 1, 1);
  node("Add", "c,r", "y");
  output("y");
  run r = check(finish(14), "");
  cr_assert_str_eq(r.ops, "Conv,Add");
  cr_assert(strstr(r.report, "not shaped like"), "%s", r.report);
}

Test(fuse_cnn, clip_with_runtime_or_inverted_bounds_is_left_alone) {
  begin("clip_bounds");
  input("x", "1,3,6,6");
  input("hi", "");
  weight("w", "4,3,3,3", 0.5f, 0);
  scalar("lo", 0);
  scalar("lo2", 2);
  scalar("hi2", 1);
  conv("x,w", "c", 3, 1, 1, 1);
  node("Clip", "c,lo,hi", "y");
  conv("x,w", "c2", 3, 1, 1, 1);
  node("Clip", "c2,lo2,hi2", "z");
  output("y");
  output("z");
  run r = check(finish(14), "");
  cr_assert_eq(count_ops(&r, "FusedConv"), 0, "%s", r.ops);
  cr_assert(strstr(r.report, "not constants") && strstr(r.report, "min > max"), "%s", r.report);
}

Test(fuse_cnn, silu_whose_sigmoid_is_read_elsewhere_is_left_alone) {
  begin("silu_shared");
  input("x", "1,3,6,6");
  weight("w", "4,3,3,3", 0.5f, 0);
  conv("x,w", "c", 3, 1, 1, 1);
  node("Sigmoid", "c", "s");
  node("Mul", "c,s", "y");
  output("y");
  output("s");
  run r = check(finish(14), "");
  cr_assert_eq(count_ops(&r, "FusedConv"), 0, "%s", r.ops);
  cr_assert(strstr(r.report, "other readers"), "%s", r.report);
}

Test(fuse_cnn, no_fuse_by_name_turns_the_pass_off) {
  begin("off_by_name");
  input("x", "1,3,6,6");
  weight("w", "4,3,3,3", 0.5f, 0);
  conv("x,w", "c", 3, 1, 1, 1);
  node("Relu", "c", "y");
  output("y");
  run r = check(finish(14), "conv_epilogue");
  cr_assert_str_eq(r.ops, "Conv,Relu");
  cr_assert(strstr(r.report, "conv_epilogue  off"), "%s", r.report);
}

/* ---- elementwise ---------------------------------------------------------------------------- */

Test(fuse_cnn, elementwise_chain_with_broadcast_and_scalars) {
  begin("ew_chain");
  input("x", "2,3,4,5");
  input("b", "3,1,5");
  scalar("half", 0.5f);
  node("Add", "x,b", "t1");
  node("Mul", "t1,half", "t2");
  node("Relu", "t2", "t3");
  node("Sigmoid", "x", "s");
  node("Sub", "t3,s", "y");
  output("y");
  run r = check(finish(14), "");
  cr_assert_eq(matches(&r, "elementwise"), 1, "%s", r.report);
  cr_assert_str_eq(r.ops, "Elementwise");
  cr_assert_eq(first_node(&r, "Elementwise")->n_in, 2); /* x once, b; the scalar is an immediate */
}

Test(fuse_cnn, elementwise_inner_axis_broadcast_and_operand_order) {
  begin("ew_inner");
  input("a", "4,1");
  input("m", "4,7");
  weight("c", "7", 1.0f, 0);
  scalar("one", 1.0f);
  node("Sub", "one,a", "t1");     /* a broadcast along the inner axis, scalar first */
  node("Div", "m,t1", "t2");      /* [4,7] / [4,1] */
  node("Exp", "c", "e");          /* constant: folds before fusion */
  node("Mul", "e,t2", "t3");
  node("Sub", "t3,m", "y");
  output("y");
  run r = check(finish(14), "");
  cr_assert_str_eq(r.ops, "Sub,Elementwise"); /* 1 - a is [4,1]: not the output's shape */
}

Test(fuse_cnn, elementwise_silu_and_gelu_shapes_without_a_conv) {
  begin("ew_silu");
  input("x", "3,16");
  scalar("c0", 0.70710678f);
  scalar("one", 1.0f);
  scalar("half", 0.5f);
  node("Sigmoid", "x", "s");
  node("Mul", "x,s", "y");
  node("Mul", "x,c0", "u");
  node("Erf", "u", "e");
  node("Add", "e,one", "v");
  node("Mul", "x,v", "w");
  node("Mul", "w,half", "z");
  output("y");
  output("z");
  run r = check(finish(14), "gelu"); /* the GELU as a plain chain: the gelu pass would take it */
  cr_assert_eq(matches(&r, "elementwise"), 2, "%s", r.report);
  cr_assert_str_eq(r.ops, "Elementwise,Elementwise");
}

Test(fuse_cnn, elementwise_more_ops_and_attributes) {
  begin("ew_ops");
  input("x", "2,33");
  input("p", "33");
  input("q", "2,33");
  scalar("two", 2.0f);
  scalar("half", 0.5f);
  scalar("lo", -0.5f);
  scalar("hi", 0.8f);
  int64_t three = 3;
  tb_add_init(G, tb_tensor_i64("three", 0, NULL, &three));
  node("Pow", "x,two", "a");
  node("Pow", "a,three", "b");
  node("Abs", "x", "ax");
  node("Pow", "ax,half", "c");
  node("Add", "b,c", "d");
  tb_attr_float(node("LeakyRelu", "d", "e"), "alpha", 0.2f);
  node("Clip", "e,lo,hi", "f");
  node("PRelu", "x,p", "g");
  node("Max", "f,g", "h");
  node("Min", "h,q", "i");
  Onnx__NodeProto *hs = node("HardSigmoid", "i", "j");
  tb_attr_float(hs, "alpha", 0.3f);
  node("Tanh", "j", "k");
  node("Neg", "k", "l");
  node("Div", "l,two", "y");
  output("y");
  run r = check(finish(14), "");
  cr_assert_str_eq(r.ops, "Elementwise", "%s", r.report);
}

Test(fuse_cnn, elementwise_rank0_and_all_scalar_inputs) {
  begin("ew_rank0");
  input("s", "");
  input("t", "1");
  input("x", "5");
  node("Mul", "s,t", "a");     /* [1] */
  node("Exp", "a", "b");
  node("Add", "b,s", "y");     /* everything one element */
  node("Add", "x,s", "u");
  node("Sigmoid", "u", "z");
  output("y");
  output("z");
  run r = check(finish(14), "");
  cr_assert_str_eq(r.ops, "Elementwise,Elementwise");
}

Test(fuse_cnn, elementwise_single_ops_are_left_alone) {
  begin("ew_single");
  input("x", "4,4");
  node("Relu", "x", "y");
  node("Exp", "x", "z");
  output("y");
  output("z");
  run r = check(finish(14), "");
  cr_assert_eq(matches(&r, "elementwise"), 0);
  cr_assert_str_eq(r.ops, "Relu,Exp");
}

Test(fuse_cnn, elementwise_intermediate_read_outside_ends_the_group) {
  begin("ew_outside");
  input("x", "4,6");
  input("b", "6");
  scalar("two", 2.0f);
  node("Add", "x,b", "t");
  node("Relu", "t", "u");
  node("Mul", "u,two", "y");
  output("y");
  output("t");
  run r = check(finish(14), "");
  cr_assert_str_eq(r.ops, "Add,Elementwise");
}

Test(fuse_cnn, elementwise_non_float_chains_are_left_alone) {
  begin("ew_int");
  tb_add_input(G, tb_value("i", FT_INT64, "4"));
  tb_add_input(G, tb_value("j", FT_INT64, "4"));
  node("Add", "i,j", "a");
  node("Mul", "a,j", "y");
  tb_add_output(G, tb_value("y", FT_INT64, NULL));
  run r = compile_graph(finish(14), "");
  cr_assert_str_eq(r.ops, "Add,Mul");
}

Test(fuse_cnn, elementwise_long_chains_and_many_inputs_split_at_the_limits) {
  begin("ew_long");
  input("x", "3,40");
  char prev[32] = "x";
  for (int k = 0; k < 45; k++) { /* 45 ops: more than one program holds */
    char out[32];
    snprintf(out, sizeof out, "t%d", k);
    node(k % 3 == 0 ? "Sigmoid" : k % 3 == 1 ? "Neg" : "Relu", prev, out);
    strcpy(prev, out);
  }
  char sum[32];
  strcpy(sum, prev);
  for (int k = 0; k < 12; k++) { /* twelve more inputs: more than one program takes */
    char in[32], out[32];
    snprintf(in, sizeof in, "in%d", k);
    snprintf(out, sizeof out, "s%d", k);
    input(in, "3,40");
    node("Add", tu_fmt("%s,%s", sum, in), out);
    strcpy(sum, out);
  }
  node("Identity", sum, "y");
  output("y");
  run r = check(finish(14), "");
  cr_assert_geq(count_ops(&r, "Elementwise"), 3, "%s", r.ops);
  cr_assert(strstr(r.report, "limits") || strstr(r.report, "stops at"), "%s", r.report);
}

Test(fuse_cnn, elementwise_rejects_a_malformed_program) {
  begin("ew_bad");
  input("x", "4");
  /* a model may not use the private domain, so the node is loaded in a domain the loader has no
   * signatures for and made the fused op in memory: the check under test is the op's own */
  Onnx__NodeProto *n = node("Elementwise", "x", "y");
  n->domain = strdup("test");
  const int64_t prog[5] = {FT_EW_ADD, 1000, 0, 7, 0}; /* reads register 7: nothing */
  tb_attr_ints(n, "program", prog, 5);
  const int64_t shape[1] = {4};
  tb_attr_ints(n, "shape", shape, 1);
  output("y");
  Onnx__ModelProto *m = tb_model(G, 14);
  char *path = tu_fmt("%s/ew_bad.onnx", dir);
  tb_write_model(m, path);
  ft_graph *g = tu_keep_graph(tu_load(path));
  free(g->nodes[0].op_type);
  free(g->nodes[0].domain);
  g->nodes[0].op_type = strdup("Elementwise");
  g->nodes[0].domain = strdup("ftax");
  ft_pins pins = {0};
  ft_err e = {0};
  cr_assert_eq(ft_resolve_ops(g, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_specialize(g, &pins, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_infer(g, 1, &e), FT_EINVALID);
  cr_assert(strstr(e.msg, "register 7"), "%s", e.msg);
}

/* ---- the generated program ------------------------------------------------------------------ */

/* Run a generated program on input files and compare its output 0 with ref's (evaluated). */
static void expect_program_matches(const char *prog, char **files, int n_files, const run *ref, float rtol, float atol) {
  char *res = tu_fmt("%s_out", prog), *log;
  char *argv[8] = {(char *)prog};
  int a = 1;
  for (int i = 0; i < n_files && a < 5; i++) argv[a++] = files[i];
  argv[a++] = "--output-dir";
  argv[a++] = res;
  argv[a] = NULL;
  cr_assert_eq(tu_run(NULL, &log, argv), 0, "%s", log);
  ft_pb_tensor y;
  const char *why;
  cr_assert_eq(ft_pb_read_tensor(tu_fmt("%s/output_0.pb", res), &y, &why), 0, "%s", why);
  tu_keep(y.t.data);
  const ft_tensor *want = &ref->g->vals[ref->g->outputs[0]].t;
  cr_assert_eq(ft_numel(&y.t), ft_numel(want));
  for (int64_t i = 0; i < ft_numel(want); i++) {
    float p = ((float *)y.t.data)[i], q = ((float *)want->data)[i];
    cr_assert(fabsf(p - q) <= rtol * fabsf(q) + atol, "%s element %lld: program %.9g, unfused %.9g", prog, (long long)i, p, q);
  }
}

/* Conv+BN+Relu, a depthwise conv with a residual, a SiLU, and a broadcast elementwise chain:
 * compiled by ftaxc (packed weights, emitted calls, in-place buffers) and run, against the
 * unfused graph evaluated here. */
Test(fuse_cnn, generated_program_matches_the_unfused_graph, .timeout = 240) {
  begin("program");
  input("x", "1,3,12,12");
  weight("w1", "4,3,3,3", 0.5f, 0);
  weight("b1", "4", 0.3f, 0);
  bn_params("bn");
  weight("wd", "4,1,3,3", 0.5f, 0);
  weight("w2", "6,4,1,1", 0.5f, 0);
  weight("g", "6,1,1", 0.5f, 1.0f);
  weight("w3", "2,6,1,1", 0.5f, 0);
  scalar("q", 0.25f);
  conv("x,w1,b1", "c1", 3, 1, 1, 1);
  node("BatchNormalization", "c1,bn_scale,bn_bias,bn_mean,bn_var", "n1");
  node("Relu", "n1", "r1");
  conv("r1,wd", "c2", 3, 1, 1, 4);
  node("Add", "c2,r1", "a2");
  node("Sigmoid", "a2", "s2");
  node("Mul", "s2,a2", "m2");
  conv("m2,w2", "c3", 1, 1, 0, 1);
  node("Relu", "c3", "r3");
  node("Mul", "r3,g", "e1");
  node("Tanh", "e1", "e2");
  node("Add", "e2,q", "e3");
  node("Mul", "e3,r3", "e4"); /* may overwrite r3 in place */
  conv("e4,w3", "y", 1, 1, 0, 1);
  output("y");
  char *path = finish(14);
  run ref = compile_graph(path, NULL);
  evaluate(&ref);
  run fused = compile_graph(path, "");
  cr_assert_str_eq(fused.ops, "FusedConv,FusedConv,FusedConv,Elementwise,Conv", "%s", fused.report);

  char *prog = tu_fmt("%s/prog", dir), *log;
  char *argv[] = {FTAXC, path, "-o", prog, NULL};
  cr_assert_eq(tu_run(NULL, &log, argv), 0, "%s", log);
  ft_tensor xt = {FT_FLOAT, 4, {1, 3, 12, 12}, NULL};
  input_data(&xt, 0);
  tu_keep(xt.data);
  char *xin = tu_fmt("%s/x.pb", dir);
  cr_assert_eq(ft_pb_write_tensor(xin, "x", &xt), 0);
  char *files[] = {xin};
  expect_program_matches(prog, files, 1, &ref, 1e-5f, 1e-6f);
}

/* A FusedConv's output takes over its residual's buffer only where the kernel reads each residual
 * element before writing that output element (compiler/ops/fused_conv.c): constant (packed)
 * weights, here with K = 32*9 > 256; not with weights given at run time (the unpacked GEMM
 * writes K blocks through the output), nor in the depthwise per-tap path (a plane wider than
 * the row bands). Each program must match the unfused graph. */
static void inplace_case(const char *name, int64_t C, int64_t H, int64_t W, int64_t g, int w_input, int want_inplace) {
  begin(name);
  char *xs = tu_fmt("1,%lld,%lld,%lld", (long long)C, (long long)H, (long long)W);
  char *ws = tu_fmt("%lld,%lld,3,3", (long long)C, (long long)(C / g));
  input("x", xs);
  if (w_input) input("w", ws);
  else weight("w", ws, 0.1f, 0);
  node("Relu", "x", "r");
  conv("x,w", "c", 3, 1, 1, g);
  node("Add", "c,r", "y");
  node("Softmax", "y", "z"); /* y itself must not be a graph output, which has its own buffer */
  output("z");
  char *path = finish(14);
  run ref = compile_graph(path, NULL);
  evaluate(&ref);

  char *prog = tu_fmt("%s/%s", dir, name), *log;
  char *argv[] = {FTAXC, path, "-o", prog, "--report", NULL};
  cr_assert_eq(tu_run(NULL, &log, argv), 0, "%s", log);
  cr_assert(strstr(log, "FusedConv") || strstr(log, "conv_epilogue"), "%s", log);
  cr_assert(strstr(log, want_inplace ? ", 1 in-place," : ", 0 in-place,"), "%s: expected %s in-place write:\n%s", name,
            want_inplace ? "one" : "no", log);
  char *files[2] = {NULL, NULL};
  for (int i = 0; i < ref.g->n_inputs; i++) {
    ft_tensor t = ref.g->vals[ref.g->inputs[i]].t; /* evaluate() filled the inputs */
    files[i] = tu_fmt("%s/%s_in%d.pb", dir, name, i);
    cr_assert_eq(ft_pb_write_tensor(files[i], ref.g->vals[ref.g->inputs[i]].name, &t), 0);
  }
  expect_program_matches(prog, files, ref.g->n_inputs, &ref, 1e-4f, 1e-5f);
}

Test(fuse_cnn, residual_buffer_is_reused_only_where_the_kernel_allows, .timeout = 240) {
  inplace_case("inplace_packed", 32, 8, 8, 1, 0, 1);
  inplace_case("inplace_runtime_weights", 32, 8, 8, 1, 1, 0);
  inplace_case("inplace_depthwise_taps", 2, 3, 4100, 2, 0, 0);
}

/* ---- a scalar op everywhere ----------------------------------------------------------------- */

/* tests/models/act_mish (tests/e2e/make_act_mish.py): Mish, defined only by its row in
 * templates/common/scalar_ops.h, folds, fuses into an elementwise chain and into the MatMul,
 * Gemm and Conv epilogues, and computes there what the Mish op does. */
Test(fuse_cnn, a_scalar_op_fuses_into_every_kernel_that_takes_one) {
  run r = check(tu_fmt("%s/tests/models/act_mish/model.onnx", FTAX_SOURCE_DIR), "");
  cr_assert_eq(count_ops(&r, "Mish"), 0, "live: %s", r.ops);
  cr_assert_eq(count_ops(&r, "FusedMatMul"), 2, "live: %s", r.ops);
  cr_assert_str_eq(ft_attr_str(first_node(&r, "FusedGemm"), "activation", ""), "Mish");
  cr_assert_str_eq(ft_attr_str(first_node(&r, "FusedConv"), "activation", ""), "Mish");
  int mish = 0, leaky = 0;
  for (int i = 0; i < r.g->n_nodes; i++) {
    const ft_node *n = &r.g->nodes[i];
    if (!r.live[i] || strcmp(n->op_type, "FusedMatMul")) continue;
    const char *a = ft_attr_str(n, "activation", "");
    mish += !strcmp(a, "Mish");
    if (!strcmp(a, "LeakyRelu")) {
      const ft_attr *pa = ft_attr_find(n, "activation_params");
      leaky = pa && pa->n_floats == 2 && pa->floats[0] == 0.2f;
    }
  }
  cr_assert(mish == 1 && leaky, "FusedMatMul activations: %d Mish, LeakyRelu with alpha 0.2: %d", mish, leaky);
  const ft_attr *prog = ft_attr_find(first_node(&r, "Elementwise"), "program");
  cr_assert(prog && prog->n_ints == 10, "an Add -> Mish program of two instructions");
  cr_assert(prog->ints[0] == FT_EW_ADD && prog->ints[5] == FT_EW_MISH);
}

/* float16 models computed in float32 (compiler/passes/upcast.c), and element-type gaps listed in
 * one message by the inference sweep (compiler/passes/infer.c). */
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }
TestSuite(upcast, .init = setup, .fini = teardown);

static ft_pins no_pins;

static Onnx__TensorProto *half_tensor(const char *name, int n, const float *v) {
  int64_t dims[1] = {n};
  Onnx__TensorProto *t = tb_tensor(name, FT_FLOAT16, 1, dims);
  uint16_t h[16];
  for (int i = 0; i < n; i++) h[i] = ft_float_to_half(v[i]);
  tb_raw(t, h, sizeof(uint16_t) * (size_t)n);
  return t;
}

static int run_passes(ft_graph *g, ft_err *e) {
  int rc = ft_resolve_ops(g, e);
  if (!rc) rc = ft_upcast_fp16(g, e);
  if (!rc) rc = ft_specialize(g, &no_pins, e);
  if (!rc) rc = ft_infer(g, FT_INFER_FOLD, e);
  if (!rc) rc = ft_simplify(g, e);
  return rc;
}

/* x (float16 input) * w (float16 initializer) -> Cast to float16 -> y (float16 output): the
 * program's I/O stays float16, w is widened exactly, the Cast to float16 in the middle is gone
 * and every node between the edge Casts computes in float32. */
Test(upcast, float16_graph_computes_in_float32_with_float16_io) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT16, "4"));
  const float w[4] = {0.5f, -1.25f, 3.0f, 0.1f};
  tb_add_init(gp, half_tensor("w", 4, w));
  tb_add_node(gp, tb_node("Mul", "mul", "x,w", "p"));
  Onnx__NodeProto *cast = tb_node("Cast", "c16", "p", "q");
  tb_attr_int(cast, "to", FT_FLOAT16);
  tb_add_node(gp, cast);
  tb_add_node(gp, tb_node("Relu", "relu", "q", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT16, "4"));
  tb_add_output(gp, tb_value("p", FT_FLOAT16, "4"));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  ft_err e = {0};
  cr_assert_eq(run_passes(g, &e), 0, "%s", e.msg);
  int wi = ft_value_find(g, "w");
  cr_assert_eq(g->vals[wi].t.dtype, FT_FLOAT);
  const float *wd = g->vals[wi].t.data;
  cr_assert_eq(wd[3], ft_half_to_float(ft_float_to_half(0.1f)), "widened exactly");
  cr_assert_eq(g->vals[g->inputs[0]].t.dtype, FT_FLOAT16, "the program's input stays float16");
  for (int k = 0; k < g->n_outputs; k++)
    cr_assert_eq(g->vals[g->outputs[k]].t.dtype, FT_FLOAT16, "output %d stays float16", k);
  int casts = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const ft_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (!strcmp(n->op_type, "Cast")) { casts++; continue; }
    for (int j = 0; j < n->n_in; j++) cr_assert_eq(g->vals[n->in[j]].t.dtype, FT_FLOAT, "%s reads float32", n->op_type);
    for (int j = 0; j < n->n_out; j++) cr_assert_eq(g->vals[n->out[j]].t.dtype, FT_FLOAT, "%s writes float32", n->op_type);
  }
  cr_assert_eq(casts, 3, "one Cast at the input, one at each output; the middle one went (%d)", casts);
  ft_graph_free(g);
}

/* A Constant's float16 tensor and ConstantOfShape's value are widened too. */
Test(upcast, constant_tensors_are_widened) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  const float one[1] = {1.5f}, two[2] = {2.0f, -3.0f};
  Onnx__NodeProto *k = tb_node("Constant", "k", "", "kv");
  tb_attr_tensor(k, "value", half_tensor("kv", 2, two));
  tb_add_node(gp, k);
  int64_t shape_dims[1] = {1}, shape_v[1] = {2};
  tb_add_init(gp, tb_tensor_i64("shape", 1, shape_dims, shape_v));
  Onnx__NodeProto *f = tb_node("ConstantOfShape", "fill", "shape", "fv");
  tb_attr_tensor(f, "value", half_tensor("v", 1, one));
  tb_add_node(gp, f);
  tb_add_node(gp, tb_node("Add", "a1", "kv,fv", "s"));
  Onnx__NodeProto *c = tb_node("Cast", "c", "x", "xh");
  tb_attr_int(c, "to", FT_FLOAT16);
  tb_add_node(gp, c);
  tb_add_node(gp, tb_node("Mul", "m", "xh,s", "y16"));
  Onnx__NodeProto *back = tb_node("Cast", "back", "y16", "y");
  tb_attr_int(back, "to", FT_FLOAT);
  tb_add_node(gp, back);
  tb_add_output(gp, tb_value("y", FT_FLOAT, "2"));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  ft_err e = {0};
  cr_assert_eq(run_passes(g, &e), 0, "%s", e.msg);
  int s = ft_value_find(g, "s");
  cr_assert_eq(g->vals[s].t.dtype, FT_FLOAT);
  const float *sd = g->vals[s].t.data;
  cr_assert_not_null(sd, "folded");
  cr_assert_eq(sd[0], 3.5f);
  cr_assert_eq(sd[1], -1.5f);
  int live = 0;
  for (int i = 0; i < g->n_nodes; i++) live += !g->nodes[i].dead;
  /* the input's Cast went; the output's stays as the copy into the output's own buffer (as an
   * Identity before a graph output does) */
  cr_assert_eq(live, 2, "the Mul and the output's Cast are left (%d live)", live);
  ft_graph_free(g);
}

/* Types ftax lacks for an op are listed in one message, every node counted, as op types are. */
Test(upcast, dtype_gaps_are_listed_in_one_message) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_DOUBLE, "1,1,4,4"));
  tb_add_input(gp, tb_value("b", FT_BFLOAT16, "2,2"));
  int64_t wd[4] = {1, 1, 1, 1};
  Onnx__TensorProto *w = tb_tensor("w", FT_DOUBLE, 4, wd);
  const double wv[1] = {2.0};
  tb_doubles(w, wv, 1);
  tb_add_init(gp, w);
  tb_add_node(gp, tb_node("Conv", "conv1", "x,w", "y1"));
  tb_add_node(gp, tb_node("Conv", "conv2", "y1,w", "y2"));
  tb_add_node(gp, tb_node("MatMul", "mm", "b,b", "y3"));
  tb_add_output(gp, tb_value("y2", FT_DOUBLE, NULL));
  tb_add_output(gp, tb_value("y3", FT_BFLOAT16, NULL));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  ft_err e = {0};
  cr_assert_eq(run_passes(g, &e), FT_EUNSUPPORTED, "%s", e.msg);
  cr_assert(strstr(e.msg, "3 nodes"), "%s", e.msg);
  cr_assert(strstr(e.msg, "Conv on float64 x2"), "%s", e.msg);
  cr_assert(strstr(e.msg, "MatMul on bfloat16 x1"), "%s", e.msg);
  cr_assert(strstr(e.msg, "m.onnx"), "%s", e.msg);
  ft_graph_free(g);
}

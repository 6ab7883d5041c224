/* The ONNX loader (onnx/load.c): models built here with protobuf-c, written to files, loaded,
 * and every part of the IR checked against what the model says. */
#include <math.h>

#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }
TestSuite(load, .init = setup, .fini = teardown);

static const ft_value *value(const ft_graph *g, const char *name) {
  int v = ft_value_find(g, name);
  cr_assert(v >= 0, "the graph has no value '%s'", name);
  return &g->vals[v];
}

/* A one-node model Y = Add(X, W) with W an initializer. */
static Onnx__ModelProto *add_model(Onnx__TensorProto *w, const char *xshape) {
  Onnx__GraphProto *g = tb_graph("add");
  tb_add_input(g, tb_value("X", FT_FLOAT, xshape));
  tb_add_init(g, w);
  tb_add_node(g, tb_node("Add", "add0", "X,W", "Y"));
  tb_add_output(g, tb_value("Y", FT_FLOAT, xshape));
  return tb_model(g, 13);
}

Test(load, inputs_outputs_initializers) {
  const int64_t wd[2] = {2, 3};
  const float wv[6] = {1, 2, 3, 4, 5, 6};
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("X", FT_FLOAT, "batch,?,3"));
  tb_add_input(gp, tb_value("ids", FT_INT64, "batch,7"));
  /* an initializer also listed as an input (IR < 4 style) stays a constant, not an input */
  tb_add_input(gp, tb_value("W", FT_FLOAT, "2,3"));
  tb_add_init(gp, tb_tensor_f32("W", 2, wd, wv));
  tb_add_node(gp, tb_node("Add", "a", "X,W", "Y"));
  Onnx__NodeProto *cast = tb_node("Cast", "c", "ids", "idsf");
  tb_attr_int(cast, "to", FT_FLOAT);
  tb_add_node(gp, cast);
  tb_add_output(gp, tb_value("Y", FT_FLOAT, NULL));
  tb_add_output(gp, tb_value("idsf", FT_FLOAT, NULL));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");

  cr_assert_str_eq(g->name, "g");
  cr_assert_eq(g->n_inputs, 2, "W is an initializer, not a graph input");
  const ft_value *x = &g->vals[g->inputs[0]], *ids = &g->vals[g->inputs[1]];
  cr_assert_str_eq(x->name, "X");
  cr_assert_eq(x->kind, FT_V_INPUT);
  cr_assert_eq(x->t.dtype, FT_FLOAT);
  cr_assert_eq(x->t.rank, 3);
  cr_assert_eq(x->t.dims[0], -1);
  cr_assert_str_eq(x->sym[0], "batch");
  cr_assert_eq(x->t.dims[1], -1);
  cr_assert_null(x->sym[1], "a dim with neither value nor name has no symbol");
  cr_assert_eq(x->t.dims[2], 3);
  cr_assert_null(x->sym[2]);
  cr_assert_not(x->shape_known);
  cr_assert_eq(ids->t.dtype, FT_INT64);
  cr_assert_eq(ids->t.dims[1], 7);

  const ft_value *w = value(g, "W");
  cr_assert_eq(w->kind, FT_V_CONST);
  cr_assert(w->shape_known);
  cr_assert_eq(w->t.rank, 2);
  cr_assert_eq(w->t.dims[0], 2);
  cr_assert_eq(w->t.dims[1], 3);
  cr_assert_arr_eq(w->t.data, wv, sizeof wv);

  cr_assert_eq(g->n_outputs, 2);
  cr_assert_str_eq(g->vals[g->outputs[0]].name, "Y");
  cr_assert(g->vals[g->outputs[0]].is_output);
  cr_assert_eq(g->vals[g->outputs[1]].declared_dtype, FT_FLOAT, "declared output dtype kept for checking");

  cr_assert_eq(g->n_nodes, 2);
  const ft_node *a = &g->nodes[0];
  cr_assert_str_eq(a->op_type, "Add");
  cr_assert_str_eq(a->name, "a");
  cr_assert_str_eq(a->domain, "");
  cr_assert_eq(a->n_in, 2);
  cr_assert_eq(a->in[0], g->inputs[0]);
  cr_assert_eq(a->in[1], ft_value_find(g, "W"));
  cr_assert_eq(g->vals[a->out[0]].producer, 0);
  cr_assert_eq(g->vals[g->nodes[1].out[0]].producer, 1);
  ft_graph_free(g);
}

Test(load, scalar_input_and_omitted_optional_inputs) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("s", FT_FLOAT, ""));
  tb_add_input(gp, tb_value("x", FT_FLOAT, "4"));
  /* Clip(x, "", s): min omitted, max given */
  tb_add_node(gp, tb_node("Clip", "clip", "x,,s", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, "4"));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  const ft_value *s = value(g, "s");
  cr_assert_eq(s->t.rank, 0);
  cr_assert(s->shape_known, "a scalar has a known shape");
  cr_assert_eq(g->nodes[0].n_in, 3);
  cr_assert_eq(g->nodes[0].in[1], -1, "an empty input name is an omitted input");
  cr_assert_eq(g->nodes[0].in[2], ft_value_find(g, "s"));
  ft_graph_free(g);
}

/* ---- tensor data: raw_data and every typed field ------------------------------------------ */

/* Load `t` as the initializer W of an Add model and return its loaded value. */
static const ft_value *load_init(Onnx__TensorProto *t, ft_graph **gout) {
  *gout = tu_roundtrip(add_model(t, "2"), dir, "m.onnx");
  return value(*gout, t->name);
}

Test(load, float_raw_and_float_data_agree) {
  const int64_t d[1] = {5};
  const float v[5] = {0.5f, -1.25f, 3e-8f, INFINITY, -0.0f};
  Onnx__TensorProto *raw = tb_tensor("W", FT_FLOAT, 1, d), *typed = tb_tensor("W", FT_FLOAT, 1, d);
  tb_raw(raw, v, sizeof v);
  tb_floats(typed, v, 5);
  ft_graph *g1, *g2;
  const ft_value *a = load_init(raw, &g1);
  const ft_value *b = load_init(typed, &g2);
  cr_assert_arr_eq(a->t.data, v, sizeof v);
  cr_assert_arr_eq(b->t.data, v, sizeof v);
  ft_graph_free(g1);
  ft_graph_free(g2);
}

Test(load, int64_double_uint64_fields) {
  const int64_t d[1] = {3};
  const int64_t i64[3] = {-1, INT64_MAX, 42};
  const double f64[3] = {1.0 / 3, -2.5, 1e300};
  const uint64_t u64[3] = {0, UINT64_MAX, 7};
  const uint64_t u32src[3] = {0, 4294967295u, 9};
  const uint32_t u32[3] = {0, 4294967295u, 9};
  Onnx__TensorProto *t;
  ft_graph *g;

  t = tb_tensor("W", FT_INT64, 1, d);
  tb_int64s(t, i64, 3);
  cr_assert_arr_eq(load_init(t, &g)->t.data, i64, sizeof i64);
  ft_graph_free(g);

  t = tb_tensor("W", FT_DOUBLE, 1, d);
  tb_doubles(t, f64, 3);
  cr_assert_arr_eq(load_init(t, &g)->t.data, f64, sizeof f64);
  ft_graph_free(g);

  t = tb_tensor("W", FT_UINT64, 1, d);
  tb_uint64s(t, u64, 3);
  cr_assert_arr_eq(load_init(t, &g)->t.data, u64, sizeof u64);
  ft_graph_free(g);

  /* uint32 travels in uint64_data */
  t = tb_tensor("W", FT_UINT32, 1, d);
  tb_uint64s(t, u32src, 3);
  cr_assert_arr_eq(load_init(t, &g)->t.data, u32, sizeof u32);
  ft_graph_free(g);
}

/* int32_data carries int32, int16, int8, uint16, uint8, bool, float16 and bfloat16: one value
 * per int32, converted to the element's own width. */
Test(load, int32_data_for_narrow_types) {
  const int64_t d[1] = {4};
  ft_graph *g;
  Onnx__TensorProto *t;

  const int32_t i8src[4] = {-128, -1, 0, 127};
  const int8_t i8[4] = {-128, -1, 0, 127};
  t = tb_tensor("W", FT_INT8, 1, d);
  tb_int32s(t, i8src, 4);
  cr_assert_arr_eq(load_init(t, &g)->t.data, i8, sizeof i8);
  ft_graph_free(g);

  const int32_t u8src[4] = {0, 1, 200, 255};
  const uint8_t u8[4] = {0, 1, 200, 255};
  t = tb_tensor("W", FT_UINT8, 1, d);
  tb_int32s(t, u8src, 4);
  cr_assert_arr_eq(load_init(t, &g)->t.data, u8, sizeof u8);
  ft_graph_free(g);

  const int32_t bsrc[4] = {1, 0, 0, 1};
  const uint8_t bools[4] = {1, 0, 0, 1};
  t = tb_tensor("W", FT_BOOL, 1, d);
  tb_int32s(t, bsrc, 4);
  const ft_value *bv = load_init(t, &g);
  cr_assert_eq(ft_dtype_size(bv->t.dtype), 1);
  cr_assert_arr_eq(bv->t.data, bools, sizeof bools);
  ft_graph_free(g);

  const int32_t i16src[4] = {-32768, -2, 3, 32767};
  const int16_t i16[4] = {-32768, -2, 3, 32767};
  t = tb_tensor("W", FT_INT16, 1, d);
  tb_int32s(t, i16src, 4);
  cr_assert_arr_eq(load_init(t, &g)->t.data, i16, sizeof i16);
  ft_graph_free(g);

  const int32_t i32[4] = {INT32_MIN, -5, 6, INT32_MAX};
  t = tb_tensor("W", FT_INT32, 1, d);
  tb_int32s(t, i32, 4);
  cr_assert_arr_eq(load_init(t, &g)->t.data, i32, sizeof i32);
  ft_graph_free(g);

  /* float16: the int32 holds the 16 bits of the half */
  const float halfs[4] = {1.0f, -2.5f, 0.0f, 65504.0f};
  int32_t hsrc[4];
  for (int i = 0; i < 4; i++) hsrc[i] = ft_float_to_half(halfs[i]);
  t = tb_tensor("W", FT_FLOAT16, 1, d);
  tb_int32s(t, hsrc, 4);
  const ft_value *hv = load_init(t, &g);
  cr_assert_eq(ft_dtype_size(hv->t.dtype), 2);
  for (int i = 0; i < 4; i++)
    cr_assert_float_eq(ft_half_to_float(((const uint16_t *)hv->t.data)[i]), halfs[i], 0, "half %d", i);
  cr_assert_eq(hsrc[0], 0x3c00, "1.0 as a half is 0x3c00");
  ft_graph_free(g);
}

Test(load, wrong_element_counts_are_invalid) {
  const int64_t d[1] = {4};
  const float v[3] = {1, 2, 3};
  char *path = tu_fmt("%s/bad.onnx", dir);
  ft_graph *g = NULL;
  ft_err e = {0};

  Onnx__TensorProto *t = tb_tensor("W", FT_FLOAT, 1, d);
  tb_floats(t, v, 3);
  tb_write_model(add_model(t, "4"), path);
  cr_assert_eq(ft_load_model(path, &g, &e), FT_EINVALID);
  cr_assert_null(g);
  cr_assert(strstr(e.msg, "'W'"), "names the tensor: %s", e.msg);
  cr_assert(strstr(e.msg, path), "names the file: %s", e.msg);

  memset(&e, 0, sizeof e);
  t = tb_tensor("W", FT_FLOAT, 1, d);
  tb_raw(t, v, sizeof v); /* 12 bytes for 4 floats */
  tb_write_model(add_model(t, "4"), path);
  cr_assert_eq(ft_load_model(path, &g, &e), FT_EINVALID);
  cr_assert(strstr(e.msg, "holds 12 bytes") && strstr(e.msg, "needs 16"), "%s", e.msg);
}

Test(load, unsupported_dtype_is_unsupported) {
  const int64_t d[1] = {1};
  Onnx__TensorProto *t = tb_tensor("W", FT_STRING, 1, d);
  t->n_string_data = 1;
  t->string_data = calloc(1, sizeof *t->string_data);
  t->string_data[0].data = (uint8_t *)strdup("hi");
  t->string_data[0].len = 2;
  char *path = tu_fmt("%s/s.onnx", dir);
  tb_write_model(add_model(t, "1"), path);
  ft_graph *g = NULL;
  ft_err e = {0};
  cr_assert_eq(ft_load_model(path, &g, &e), FT_EUNSUPPORTED);
  cr_assert(strstr(e.msg, "string"), "%s", e.msg);
}

/* ---- attributes -------------------------------------------------------------------------- */

Test(load, every_attribute_kind) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  Onnx__NodeProto *n = tb_node("Custom", "n", "x", "y");
  const int64_t ints[3] = {-1, 0, 1LL << 40};
  const float floats[2] = {0.25f, -8.0f};
  const char *strs[3] = {"a", "", "long string"};
  const int64_t td[2] = {1, 2};
  const int64_t tv[2] = {7, -7};
  tb_attr_float(n, "alpha", 0.125f);
  tb_attr_int(n, "axis", -3);
  tb_attr_string(n, "mode", "constant");
  tb_attr_tensor(n, "value", tb_tensor_i64("v", 2, td, tv));
  tb_attr_floats(n, "scales", floats, 2);
  tb_attr_ints(n, "perm", ints, 3);
  tb_attr_strings(n, "names", strs, 3);
  Onnx__GraphProto *body = tb_graph("body");
  tb_add_node(body, tb_node("Identity", "i", "x", "z"));
  tb_add_output(body, tb_value("z", FT_FLOAT, NULL));
  tb_attr_graph(n, "then_branch", body);
  tb_add_node(gp, n);
  tb_add_output(gp, tb_value("y", FT_FLOAT, "2"));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");

  const ft_node *nd = &g->nodes[0];
  const ft_attr *a;
  cr_assert_not_null(a = ft_attr_find(nd, "alpha"));
  cr_assert_eq(a->type, FT_ATTR_FLOAT);
  cr_assert_float_eq(ft_attr_float(nd, "alpha", 0), 0.125f, 0);
  cr_assert_not_null(a = ft_attr_find(nd, "axis"));
  cr_assert_eq(a->type, FT_ATTR_INT);
  cr_assert_eq(ft_attr_int(nd, "axis", 0), -3);
  cr_assert_eq(ft_attr_int(nd, "missing", 99), 99, "absent attributes give the default");
  cr_assert_str_eq(ft_attr_str(nd, "mode", "x"), "constant");
  cr_assert_eq(ft_attr_find(nd, "mode")->s_len, 8);
  cr_assert_not_null(a = ft_attr_find(nd, "value"));
  cr_assert_eq(a->type, FT_ATTR_TENSOR);
  cr_assert_eq(a->t->dtype, FT_INT64);
  cr_assert_eq(a->t->rank, 2);
  cr_assert_eq(a->t->dims[1], 2);
  cr_assert_arr_eq(a->t->data, tv, sizeof tv);
  cr_assert_not_null(a = ft_attr_find(nd, "scales"));
  cr_assert_eq(a->type, FT_ATTR_FLOATS);
  cr_assert_eq(a->n_floats, 2);
  cr_assert_arr_eq(a->floats, floats, sizeof floats);
  const int64_t *iv;
  cr_assert_eq(ft_attr_ints(nd, "perm", &iv), 3);
  cr_assert_arr_eq(iv, ints, sizeof ints);
  cr_assert_eq(ft_attr_find(nd, "perm")->type, FT_ATTR_INTS);
  cr_assert_eq(ft_attr_ints(nd, "missing", &iv), -1);
  cr_assert_not_null(a = ft_attr_find(nd, "names"));
  cr_assert_eq(a->type, FT_ATTR_STRINGS);
  cr_assert_eq(a->n_strings, 3);
  for (int i = 0; i < 3; i++) cr_assert_str_eq(a->strings[i], strs[i]);
  /* a graph attribute loads as a graph of its own; the name it reads from outside ('x') is a
   * value of the enclosing graph that the node records as read */
  cr_assert_not_null(a = ft_attr_find(nd, "then_branch"));
  cr_assert_eq(a->type, FT_ATTR_GRAPH);
  cr_assert_not_null(a->g);
  cr_assert_eq(a->g->n_nodes, 1);
  cr_assert_eq(a->g->n_outputs, 1);
  cr_assert_str_eq(a->g->vals[a->g->outputs[0]].name, "z");
  int x_in_body = ft_value_find(a->g, "x");
  cr_assert(x_in_body >= 0 && ft_value_is_outer(a->g, x_in_body));
  cr_assert_eq(nd->n_outer, 1);
  cr_assert_str_eq(g->vals[nd->outer[0]].name, "x");
  ft_graph_free(g);
}

/* ---- opset imports ----------------------------------------------------------------------- */

Test(load, opset_import) {
  const int64_t d[1] = {2};
  const float v[2] = {1, 2};
  Onnx__ModelProto *m = add_model(tb_tensor_f32("W", 1, d, v), "2");
  m->n_opset_import = 0;
  tb_opset(&m->opset_import, &m->n_opset_import, "com.microsoft", 1);
  tb_opset(&m->opset_import, &m->n_opset_import, "", 17);
  tb_opset(&m->opset_import, &m->n_opset_import, "ai.onnx.ml", 3);
  ft_graph *g = tu_roundtrip(m, dir, "a.onnx");
  cr_assert_eq(g->opset, 17, "the ai.onnx version, whatever else is imported");
  ft_graph_free(g);

  m->n_opset_import = 0;
  tb_opset(&m->opset_import, &m->n_opset_import, "ai.onnx", 11);
  g = tu_roundtrip(m, dir, "b.onnx");
  cr_assert_eq(g->opset, 11, "\"ai.onnx\" is the default domain too");
  ft_graph_free(g);
}

Test(load, node_domain_ai_onnx_is_default) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  Onnx__NodeProto *a = tb_node("Add", "a", "x,x", "y");
  a->domain = strdup("ai.onnx");
  Onnx__NodeProto *b = tb_node("Fused", "b", "y", "z");
  b->domain = strdup("com.example");
  tb_add_node(gp, a);
  tb_add_node(gp, b);
  tb_add_output(gp, tb_value("z", FT_FLOAT, "2"));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  cr_assert_str_eq(g->nodes[0].domain, "");
  cr_assert_str_eq(g->nodes[1].domain, "com.example");
  ft_graph_free(g);
}

/* ---- external data ----------------------------------------------------------------------- */

static Onnx__ModelProto *external_model(const char *location, const char *offset, const char *length) {
  const int64_t d[1] = {4};
  Onnx__TensorProto *t = tb_tensor("W", FT_FLOAT, 1, d);
  tb_external(t, "location", location);
  if (offset) tb_external(t, "offset", offset);
  if (length) tb_external(t, "length", length);
  return add_model(t, "4");
}

static int load_code(const char *path, ft_err *e) {
  ft_graph *g = NULL;
  memset(e, 0, sizeof *e);
  int rc = ft_load_model(path, &g, e);
  if (!rc) ft_graph_free(g);
  return rc;
}

Test(load, external_data_relative_path) {
  /* weights.bin: 8 junk bytes, then the 4 floats, in a subfolder next to the model */
  float vals[4] = {1.5f, -2, 3, 4e10f};
  char junk[8] = "junkjunk";
  char *sub = tu_fmt("%s/data", dir);
  mkdir(sub, 0777);
  char *bin = tu_fmt("%s/weights.bin", sub);
  FILE *f = fopen(bin, "wb");
  fwrite(junk, 1, 8, f);
  fwrite(vals, 1, sizeof vals, f);
  fclose(f);
  ft_graph *g = tu_roundtrip(external_model("data/weights.bin", "8", "16"), dir, "m.onnx");
  cr_assert_arr_eq(value(g, "W")->t.data, vals, sizeof vals);
  ft_graph_free(g);

  /* "./" is fine too, and the length is optional */
  g = tu_roundtrip(external_model("./data/weights.bin", "8", NULL), dir, "m2.onnx");
  cr_assert_arr_eq(value(g, "W")->t.data, vals, sizeof vals);
  ft_graph_free(g);

  /* relative to the model's folder, not to the current one */
  char *cwd = tu_keep(getcwd(NULL, 0));
  cr_assert_eq(chdir("/"), 0);
  char *p = tu_fmt("%s/m.onnx", dir);
  g = tu_load(p);
  cr_assert_arr_eq(value(g, "W")->t.data, vals, sizeof vals);
  ft_graph_free(g);
  cr_assert_eq(chdir(cwd), 0);
}

Test(load, external_data_outside_the_model_folder_is_refused) {
  /* a real file at each location, so only the path rule can refuse it */
  float vals[4] = {1, 2, 3, 4};
  char *sub = tu_fmt("%s/model", dir);
  mkdir(sub, 0777);
  char *outside = tu_fmt("%s/secret.bin", dir);
  tb_write_bytes(outside, vals, sizeof vals);
  const char *bad[] = {outside, "../secret.bin", "x/../../secret.bin", "..", "/etc/passwd"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *path = tu_fmt("%s/m%zu.onnx", sub, i);
    tb_write_model(external_model(bad[i], NULL, NULL), path);
    ft_err e;
    cr_assert_eq(load_code(path, &e), FT_EINVALID, "location '%s' must be refused: %s", bad[i], e.msg);
    cr_assert(strstr(e.msg, bad[i]), "the message names the location '%s': %s", bad[i], e.msg);
  }
}

Test(load, external_data_errors) {
  float vals[2] = {1, 2};
  tb_write_bytes(tu_fmt("%s/short.bin", dir), vals, sizeof vals);
  char *path = tu_fmt("%s/m.onnx", dir);
  ft_err e;

  tb_write_model(external_model("missing.bin", NULL, NULL), path);
  cr_assert_eq(load_code(path, &e), FT_EIO, "%s", e.msg);
  cr_assert(strstr(e.msg, "missing.bin"), "%s", e.msg);

  tb_write_model(external_model("short.bin", NULL, NULL), path);
  cr_assert_eq(load_code(path, &e), FT_EINVALID, "8 bytes for 16: %s", e.msg);

  tb_write_model(external_model("short.bin", "0", "8"), path);
  cr_assert_eq(load_code(path, &e), FT_EINVALID, "length disagrees with the shape: %s", e.msg);
}

/* ---- model-local functions --------------------------------------------------------------- */

/* local.AddScale(A, B) -> C:  T = Add(A, B); C = Gemm(T, T) with Gemm's "alpha" := caller's "g",
 * "beta" := caller's "u" (never given) and transB fixed at 1. */
static Onnx__FunctionProto *add_scale_function(void) {
  Onnx__FunctionProto *f = tb_function("local", "AddScale", "A,B", "C", "g,u");
  Onnx__NodeProto *add = tb_node("Add", "add", "A,B", "T");
  Onnx__NodeProto *mul = tb_node("Gemm", "mul", "T,T", "C");
  tb_attr_ref(mul, "alpha", "g", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  tb_attr_ref(mul, "beta", "u", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  tb_attr_int(mul, "transB", 1);
  TB_PUSH(f->node, f->n_node, add);
  TB_PUSH(f->node, f->n_node, mul);
  return f;
}

Test(load, model_local_functions_are_inlined) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "3"));
  tb_add_input(gp, tb_value("y", FT_FLOAT, "3"));
  Onnx__NodeProto *c1 = tb_node("AddScale", "call1", "x,y", "u");
  c1->domain = strdup("local");
  tb_attr_float(c1, "g", 2.5f);
  /* a second call of the same function: its intermediate T must be a different value */
  Onnx__NodeProto *c2 = tb_node("AddScale", "call2", "u,x", "v");
  c2->domain = strdup("local");
  tb_attr_float(c2, "g", -1.0f);
  tb_add_node(gp, c1);
  tb_add_node(gp, c2);
  tb_add_output(gp, tb_value("v", FT_FLOAT, "3"));
  Onnx__ModelProto *m = tb_model(gp, 13);
  tb_opset(&m->opset_import, &m->n_opset_import, "local", 1);
  tb_add_function(m, add_scale_function());
  ft_graph *g = tu_roundtrip(m, dir, "m.onnx");

  cr_assert_eq(g->n_nodes, 4, "two calls of two nodes each, no call nodes left");
  const char *ops[4] = {"Add", "Gemm", "Add", "Gemm"};
  for (int i = 0; i < 4; i++) {
    cr_assert_str_eq(g->nodes[i].op_type, ops[i]);
    cr_assert_str_eq(g->nodes[i].domain, "");
  }
  int x = ft_value_find(g, "x"), y = ft_value_find(g, "y"), u = ft_value_find(g, "u"), v = ft_value_find(g, "v");
  /* formal parameters map to the caller's values */
  cr_assert_eq(g->nodes[0].in[0], x);
  cr_assert_eq(g->nodes[0].in[1], y);
  cr_assert_eq(g->nodes[1].out[0], u);
  cr_assert_eq(g->nodes[2].in[0], u);
  cr_assert_eq(g->nodes[2].in[1], x);
  cr_assert_eq(g->nodes[3].out[0], v);
  /* the body's own values are private to each call */
  int t1 = g->nodes[0].out[0], t2 = g->nodes[2].out[0];
  cr_assert_neq(t1, t2);
  cr_assert_eq(g->nodes[1].in[0], t1);
  cr_assert_eq(g->nodes[3].in[0], t2);
  cr_assert_eq(ft_value_find(g, "T"), -1, "no unprefixed body value leaks into the graph");
  /* attribute references take each caller's value; unreferenced ones are absent */
  cr_assert_float_eq(ft_attr_float(&g->nodes[1], "alpha", 0), 2.5f, 0);
  cr_assert_float_eq(ft_attr_float(&g->nodes[3], "alpha", 0), -1.0f, 0);
  cr_assert_eq(ft_attr_find(&g->nodes[1], "alpha")->type, FT_ATTR_FLOAT);
  cr_assert_null(ft_attr_find(&g->nodes[1], "beta"));
  cr_assert_null(ft_attr_find(&g->nodes[1], "g"), "the caller's name does not leak in");
  cr_assert_eq(ft_attr_int(&g->nodes[3], "transB", 0), 1);
  ft_graph_free(g);
}

Test(load, unnamed_calls_get_distinct_values) {
  /* three calls without node names: each call's body values must still be its own */
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "3"));
  const char *io[3][2] = {{"x,x", "a"}, {"a,x", "b"}, {"b,a", "y"}};
  for (int i = 0; i < 3; i++) {
    Onnx__NodeProto *c = tb_node("AddScale", NULL, io[i][0], io[i][1]);
    c->domain = strdup("local");
    tb_add_node(gp, c);
  }
  tb_add_output(gp, tb_value("y", FT_FLOAT, "3"));
  Onnx__ModelProto *m = tb_model(gp, 13);
  tb_add_function(m, add_scale_function());
  ft_graph *g = tu_roundtrip(m, dir, "m.onnx");
  cr_assert_eq(g->n_nodes, 6);
  int t[3] = {g->nodes[0].out[0], g->nodes[2].out[0], g->nodes[4].out[0]};
  cr_assert(t[0] != t[1] && t[1] != t[2] && t[0] != t[2], "each call has its own T");
  ft_graph_free(g);
}

Test(load, nested_functions_are_inlined) {
  /* local.Twice(P) -> Q: Q = AddScale(P, P) with g := caller's "k" */
  Onnx__FunctionProto *tw = tb_function("local", "Twice", "P", "Q", "k");
  Onnx__NodeProto *inner = tb_node("AddScale", "inner", "P,P", "Q");
  inner->domain = strdup("local");
  tb_attr_ref(inner, "g", "k", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  TB_PUSH(tw->node, tw->n_node, inner);

  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "3"));
  Onnx__NodeProto *call = tb_node("Twice", "outer", "x", "y");
  call->domain = strdup("local");
  tb_attr_float(call, "k", 4.0f);
  tb_add_node(gp, call);
  tb_add_output(gp, tb_value("y", FT_FLOAT, "3"));
  Onnx__ModelProto *m = tb_model(gp, 13);
  tb_add_function(m, tw);
  tb_add_function(m, add_scale_function());
  ft_graph *g = tu_roundtrip(m, dir, "m.onnx");
  cr_assert_eq(g->n_nodes, 2);
  cr_assert_str_eq(g->nodes[0].op_type, "Add");
  cr_assert_eq(g->nodes[0].in[0], ft_value_find(g, "x"));
  cr_assert_eq(g->nodes[0].in[1], ft_value_find(g, "x"));
  cr_assert_eq(g->nodes[1].out[0], ft_value_find(g, "y"));
  cr_assert_float_eq(ft_attr_float(&g->nodes[1], "alpha", 0), 4.0f, 0, "a reference through two levels");
  ft_graph_free(g);
}

/* ---- malformed and inconsistent models --------------------------------------------------- */

Test(load, malformed_bytes_are_invalid_and_named) {
  const char *cases[] = {
      "this is not a protobuf at all",
      "\x0a\xff\xff\xff\xff\x0f", /* a length-delimited field far longer than the file */
      "",                         /* parses, but has no graph */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *path = tu_fmt("%s/bad%zu.onnx", dir, i);
    tb_write_bytes(path, cases[i], strlen(cases[i]));
    ft_graph *g = (ft_graph *)1;
    ft_err e = {0};
    cr_assert_eq(ft_load_model(path, &g, &e), FT_EINVALID, "case %zu: %s", i, e.msg);
    cr_assert_null(g, "no graph on failure");
    cr_assert(strstr(e.msg, path), "the message names the file: %s", e.msg);
  }
}

Test(load, truncated_model_is_invalid) {
  const int64_t d[1] = {64};
  float v[64];
  for (int i = 0; i < 64; i++) v[i] = (float)i;
  Onnx__ModelProto *m = add_model(tb_tensor_f32("W", 1, d, v), "64");
  size_t n = onnx__model_proto__get_packed_size(m);
  uint8_t *buf = tu_keep(malloc(n));
  onnx__model_proto__pack(m, buf);
  char *path = tu_fmt("%s/cut.onnx", dir);
  /* cut inside the initializer's raw_data: the last bytes of the file */
  tb_write_bytes(path, buf, n - 10);
  ft_err e;
  cr_assert_eq(load_code(path, &e), FT_EINVALID, "%s", e.msg);
  cr_assert(strstr(e.msg, path), "%s", e.msg);
}

Test(load, missing_file_is_io_error) {
  char *path = tu_fmt("%s/nope.onnx", dir);
  ft_err e;
  cr_assert_eq(load_code(path, &e), FT_EIO);
  cr_assert(strstr(e.msg, path), "%s", e.msg);
}

Test(load, dangling_references_are_invalid) {
  char *path = tu_fmt("%s/m.onnx", dir);
  ft_err e;
  /* a node reads a value nobody produces */
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  tb_add_node(gp, tb_node("Add", "a", "x,ghost", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, "2"));
  tb_write_model(tb_model(gp, 13), path);
  cr_assert_eq(load_code(path, &e), FT_EINVALID);
  cr_assert(strstr(e.msg, "ghost"), "%s", e.msg);
  cr_assert(strstr(e.msg, "'a'"), "names the node: %s", e.msg);

  /* a graph output nobody produces */
  gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  tb_add_node(gp, tb_node("Add", "a", "x,x", "y"));
  tb_add_output(gp, tb_value("z", FT_FLOAT, "2"));
  tb_write_model(tb_model(gp, 13), path);
  cr_assert_eq(load_code(path, &e), FT_EINVALID);
  cr_assert(strstr(e.msg, "'z'"), "%s", e.msg);

  /* two nodes write the same value */
  gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  tb_add_node(gp, tb_node("Add", "a", "x,x", "y"));
  tb_add_node(gp, tb_node("Mul", "b", "x,x", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, "2"));
  tb_write_model(tb_model(gp, 13), path);
  cr_assert_eq(load_code(path, &e), FT_EINVALID);
  cr_assert(strstr(e.msg, "'b'"), "%s", e.msg);

  /* a node without an op type */
  gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  tb_add_node(gp, tb_node("", "nameless", "x,x", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, "2"));
  tb_write_model(tb_model(gp, 13), path);
  cr_assert_eq(load_code(path, &e), FT_EINVALID);
}

/* Nodes out of order are sorted at load, stably: of the nodes whose inputs are ready, the one
 * earliest in the file goes first; a cycle is refused naming the nodes on it. */
Test(load, unsorted_nodes_are_sorted_stably) {
  char *path = tu_fmt("%s/m.onnx", dir);
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  tb_add_node(gp, tb_node("Neg", "C", "b", "c"));
  tb_add_node(gp, tb_node("Relu", "A", "x", "a"));
  tb_add_node(gp, tb_node("Abs", "B", "a", "b"));
  tb_add_node(gp, tb_node("Exp", "D", "x", "d"));
  tb_add_node(gp, tb_node("Add", "E", "c,d", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, "2"));
  tb_write_model(tb_model(gp, 13), path);
  ft_graph *g = tu_load(path);
  const char *want[] = {"A", "B", "C", "D", "E"};
  for (int i = 0; i < 5; i++) cr_assert_str_eq(g->nodes[i].name, want[i], "node %d", i);
  for (int i = 0; i < 5; i++) cr_assert_eq(g->vals[g->nodes[i].out[0]].producer, i);
  ft_graph_free(g);

  gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  tb_add_node(gp, tb_node("Add", "P", "x,r", "p"));
  tb_add_node(gp, tb_node("Relu", "Q", "p", "q"));
  tb_add_node(gp, tb_node("Neg", "R", "q", "r"));
  tb_add_node(gp, tb_node("Neg", "Y", "q", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, "2"));
  tb_write_model(tb_model(gp, 13), path);
  ft_err e;
  cr_assert_eq(load_code(path, &e), FT_EINVALID);
  cr_assert(strstr(e.msg, "cycle (3 nodes): 'P' (Add) -> 'Q' (Relu) -> 'R' (Neg) -> 'P' (Add)"), "%s", e.msg);
}

Test(load, non_tensor_input_is_unsupported) {
  Onnx__GraphProto *gp = tb_graph("g");
  Onnx__ValueInfoProto *seq = tb_value("s", FT_FLOAT, NULL);
  Onnx__TypeProto__Sequence *st = calloc(1, sizeof *st);
  onnx__type_proto__sequence__init(st);
  st->elem_type = seq->type; /* a sequence of float tensors */
  Onnx__TypeProto *tp = calloc(1, sizeof *tp);
  onnx__type_proto__init(tp);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
  tp->sequence_type = st;
  seq->type = tp;
  tb_add_input(gp, seq);
  tb_add_node(gp, tb_node("SequenceLength", "n", "s", "y"));
  tb_add_output(gp, tb_value("y", FT_INT64, ""));
  char *path = tu_fmt("%s/m.onnx", dir);
  tb_write_model(tb_model(gp, 13), path);
  ft_err e;
  cr_assert_eq(load_code(path, &e), FT_EUNSUPPORTED);
  cr_assert(strstr(e.msg, "'s'"), "%s", e.msg);
}

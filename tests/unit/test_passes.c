/* The compiler's passes before lowering: ft_resolve_ops, ft_specialize, ft_infer (with
 * folding) and ft_simplify, each on models built for the property it must have. */
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }
TestSuite(passes, .init = setup, .fini = teardown);

static ft_pins no_pins;

/* ---- ft_resolve_ops ---------------------------------------------------------------------- */

Test(passes, resolve_lists_every_unsupported_op_with_counts) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  tb_add_node(gp, tb_node("Frobnicate", "f1", "x", "a"));
  tb_add_node(gp, tb_node("Add", "add", "a,x", "b"));
  tb_add_node(gp, tb_node("Frobnicate", "f2", "b", "c"));
  tb_add_node(gp, tb_node("Twiddle", "t1", "c", "d"));
  tb_add_node(gp, tb_node("Frobnicate", "f3", "d", "e"));
  Onnx__NodeProto *x = tb_node("Fancy", "x1", "e", "y");
  x->domain = strdup("com.example");
  tb_add_node(gp, x);
  tb_add_output(gp, tb_value("y", FT_FLOAT, "2"));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  ft_err e = {0};
  cr_assert_eq(ft_resolve_ops(g, &e), FT_EUNSUPPORTED);
  cr_assert_eq(e.code, FT_EUNSUPPORTED);
  cr_assert(strstr(e.msg, "Frobnicate x3"), "%s", e.msg);
  cr_assert(strstr(e.msg, "Twiddle x1"), "%s", e.msg);
  cr_assert(strstr(e.msg, "com.example.Fancy x1"), "the domain is named: %s", e.msg);
  cr_assert(strstr(e.msg, "5 nodes"), "the total: %s", e.msg);
  cr_assert_null(strstr(e.msg, "Add"), "Add is supported: %s", e.msg);
  cr_assert(strstr(e.msg, "m.onnx"), "names the model: %s", e.msg);
  ft_graph_free(g);
}

Test(passes, resolve_sets_every_op) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2"));
  tb_add_node(gp, tb_node("Add", "a", "x,x", "y"));
  tb_add_node(gp, tb_node("Mul", "m", "y,x", "z"));
  tb_add_output(gp, tb_value("z", FT_FLOAT, "2"));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  ft_err e = {0};
  cr_assert_eq(ft_resolve_ops(g, &e), 0, "%s", e.msg);
  cr_assert_eq(g->nodes[0].op, ft_op_find("", "Add"));
  cr_assert_eq(g->nodes[1].op, ft_op_find("", "Mul"));
  cr_assert_str_eq(g->nodes[1].op->op_type, "Mul");
  cr_assert_null(ft_op_find("com.example", "Add"), "the domain is part of the key");
  ft_graph_free(g);
}

/* ---- ft_specialize ----------------------------------------------------------------------- */

/* ids: [batch, seq] int64, mask: [batch, seq] int64, feat: [batch, 3] */
static ft_graph *symbolic_model(void) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("ids", FT_INT64, "batch,seq"));
  tb_add_input(gp, tb_value("mask", FT_INT64, "batch,seq"));
  tb_add_input(gp, tb_value("feat", FT_FLOAT, "batch,3"));
  tb_add_node(gp, tb_node("Add", "a", "ids,mask", "y"));
  tb_add_node(gp, tb_node("Add", "b", "feat,feat", "z"));
  tb_add_output(gp, tb_value("y", FT_INT64, NULL));
  tb_add_output(gp, tb_value("z", FT_FLOAT, NULL));
  return tu_roundtrip(tb_model(gp, 13), dir, "sym.onnx");
}

static const ft_value *input(const ft_graph *g, int i) { return &g->vals[g->inputs[i]]; }

Test(passes, specialize_pins_symbols_everywhere) {
  ft_graph *g = symbolic_model();
  ft_pins p = {.dims = {"batch=2", "seq=17"}, .n_dims = 2};
  ft_err e = {0};
  cr_assert_eq(ft_specialize(g, &p, &e), 0, "%s", e.msg);
  for (int i = 0; i < 2; i++) {
    cr_assert_eq(input(g, i)->t.dims[0], 2);
    cr_assert_eq(input(g, i)->t.dims[1], 17);
    cr_assert(input(g, i)->shape_known);
  }
  cr_assert_eq(input(g, 2)->t.dims[0], 2);
  cr_assert_eq(input(g, 2)->t.dims[1], 3);
  ft_graph_free(g);
}

Test(passes, specialize_unpinned_symbol_names_input_symbol_and_flag) {
  ft_graph *g = symbolic_model();
  ft_pins p = {.dims = {"batch=1"}, .n_dims = 1};
  ft_err e = {0};
  int rc = ft_specialize(g, &p, &e);
  cr_assert_eq(rc, FT_EUSAGE, "an unpinned symbol is a usage error, got %d: %s", rc, e.msg);
  cr_assert(strstr(e.msg, "'ids'"), "names the input: %s", e.msg);
  cr_assert(strstr(e.msg, "'seq'"), "names the symbol: %s", e.msg);
  cr_assert(strstr(e.msg, "--dim seq="), "names the flag: %s", e.msg);
  ft_graph_free(g);

  /* nothing pinned at all: still an error, never a silent default */
  g = symbolic_model();
  memset(&e, 0, sizeof e);
  cr_assert_eq(ft_specialize(g, &no_pins, &e), FT_EUSAGE);
  cr_assert(strstr(e.msg, "--dim batch="), "%s", e.msg);
  ft_graph_free(g);
}

Test(passes, specialize_shape_flag) {
  ft_graph *g = symbolic_model();
  ft_pins p = {.shapes = {"ids=4x9", "mask=4x9", "feat=4x3"}, .n_shapes = 3};
  ft_err e = {0};
  cr_assert_eq(ft_specialize(g, &p, &e), 0, "%s", e.msg);
  cr_assert_eq(input(g, 0)->t.dims[0], 4);
  cr_assert_eq(input(g, 0)->t.dims[1], 9);
  cr_assert_eq(input(g, 2)->t.dims[0], 4);
  ft_graph_free(g);

  /* --shape may not change a dim the model fixes, nor the rank, nor name a missing input */
  const char *bad[] = {"feat=4x5", "feat=4x3x1", "nosuch=1x2", "ids=4xq"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    g = symbolic_model();
    ft_pins q = {.dims = {"batch=4", "seq=9"}, .n_dims = 2, .shapes = {bad[i]}, .n_shapes = 1};
    memset(&e, 0, sizeof e);
    cr_assert_eq(ft_specialize(g, &q, &e), FT_EUSAGE, "--shape %s must be refused", bad[i]);
    cr_assert(strstr(e.msg, bad[i]), "the message quotes the flag: %s", e.msg);
    ft_graph_free(g);
  }
}

Test(passes, specialize_bad_dim_flags) {
  const char *bad[] = {"batch", "=3", "batch=-1", "batch=x", "nosuch=3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ft_graph *g = symbolic_model();
    ft_pins p = {.dims = {bad[i], "seq=2"}, .n_dims = 2};
    ft_err e = {0};
    cr_assert_eq(ft_specialize(g, &p, &e), FT_EUSAGE, "--dim %s must be refused", bad[i]);
    ft_graph_free(g);
  }
  /* a symbol that is not in the model: the message lists the ones that are */
  ft_graph *g = symbolic_model();
  ft_pins p = {.dims = {"btach=1"}, .n_dims = 1};
  ft_err e = {0};
  cr_assert_eq(ft_specialize(g, &p, &e), FT_EUSAGE);
  cr_assert(strstr(e.msg, "'batch'") && strstr(e.msg, "'seq'"), "lists the model's symbols: %s", e.msg);
  ft_graph_free(g);
}

Test(passes, specialize_input_without_shape) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, NULL));
  tb_add_node(gp, tb_node("Add", "a", "x,x", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  ft_err e = {0};
  cr_assert_eq(ft_specialize(g, &no_pins, &e), FT_EUSAGE);
  cr_assert(strstr(e.msg, "--shape x="), "%s", e.msg);
  ft_graph_free(g);

  g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  ft_pins p = {.shapes = {"x=2x5"}, .n_shapes = 1};
  memset(&e, 0, sizeof e);
  cr_assert_eq(ft_specialize(g, &p, &e), 0, "%s", e.msg);
  cr_assert_eq(input(g, 0)->t.rank, 2);
  cr_assert_eq(input(g, 0)->t.dims[1], 5);
  ft_graph_free(g);
}

/* ---- ft_infer ---------------------------------------------------------------------------- */

static void front_end(ft_graph *g, const ft_pins *p, int fold) {
  ft_err e = {0};
  cr_assert_eq(ft_resolve_ops(g, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_specialize(g, p, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_infer(g, fold, &e), 0, "%s", e.msg);
}

Test(passes, infer_broadcast_shapes_and_dtypes) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("a", FT_FLOAT, "batch,1,5"));
  tb_add_input(gp, tb_value("b", FT_FLOAT, "4,1"));
  tb_add_input(gp, tb_value("i", FT_INT32, "4,5"));
  tb_add_node(gp, tb_node("Add", "add", "a,b", "s"));
  tb_add_node(gp, tb_node("Less", "lt", "i,i", "m"));
  tb_add_output(gp, tb_value("s", FT_FLOAT, NULL));
  tb_add_output(gp, tb_value("m", FT_BOOL, NULL));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  ft_pins p = {.dims = {"batch=3"}, .n_dims = 1};
  front_end(g, &p, 1);
  const ft_value *s = &g->vals[ft_value_find(g, "s")], *m = &g->vals[ft_value_find(g, "m")];
  cr_assert_eq(s->t.dtype, FT_FLOAT);
  cr_assert_eq(s->t.rank, 3);
  cr_assert_eq(s->t.dims[0], 3);
  cr_assert_eq(s->t.dims[1], 4);
  cr_assert_eq(s->t.dims[2], 5);
  cr_assert_eq(m->t.dtype, FT_BOOL, "a comparison gives bool");
  cr_assert_eq(m->t.rank, 2);
  ft_graph_free(g);
}

Test(passes, infer_reports_mismatches_with_node_and_file) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("a", FT_FLOAT, "3"));
  tb_add_input(gp, tb_value("b", FT_FLOAT, "4"));
  tb_add_node(gp, tb_node("Add", "the_add", "a,b", "s"));
  tb_add_output(gp, tb_value("s", FT_FLOAT, NULL));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  ft_err e = {0};
  cr_assert_eq(ft_resolve_ops(g, &e), 0);
  cr_assert_eq(ft_specialize(g, &no_pins, &e), 0);
  cr_assert_eq(ft_infer(g, 1, &e), FT_EINVALID);
  cr_assert(strstr(e.msg, "the_add"), "%s", e.msg);
  cr_assert(strstr(e.msg, "m.onnx"), "%s", e.msg);
  ft_graph_free(g);
}

/* Constants computed from constants fold at compile time with the op's own kernel. */
Test(passes, infer_folds_constant_subgraphs) {
  const int64_t d[1] = {4};
  const float c1[4] = {1, 2, 3, 4}, c2[4] = {0.5f, -1, 10, 0};
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "4"));
  tb_add_init(gp, tb_tensor_f32("c1", 1, d, c1));
  tb_add_init(gp, tb_tensor_f32("c2", 1, d, c2));
  tb_add_node(gp, tb_node("Mul", "k1", "c1,c2", "k"));   /* constant */
  tb_add_node(gp, tb_node("Sub", "k2", "k,c1", "kk"));   /* constant, from a folded one */
  tb_add_node(gp, tb_node("Add", "run", "x,kk", "y"));   /* depends on x: stays */
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  front_end(g, &no_pins, 1);
  char *live = tu_live_ops(g);
  cr_assert_str_eq(live, "Add", "only the node that depends on the input is left: %s", live);
  const ft_value *kk = &g->vals[ft_value_find(g, "kk")];
  cr_assert_eq(kk->kind, FT_V_CONST);
  cr_assert_not_null(kk->t.data);
  for (int i = 0; i < 4; i++)
    cr_assert_float_eq(((const float *)kk->t.data)[i], c1[i] * c2[i] - c1[i], 1e-6, "element %d", i);
  ft_graph_free(g);

  /* without folding, the constant nodes stay */
  g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  front_end(g, &no_pins, 0);
  live = tu_live_ops(g);
  cr_assert_str_eq(live, "Mul,Sub,Add", "%s", live);
  ft_graph_free(g);
}

/* Sequences are lowered by the sweep into lists of values: SplitToSequence of 6 rows by 4 is a
 * Slice per piece (4 and 2 rows), SequenceInsert and SequenceErase only edit the list, SequenceAt
 * is the element (an Identity), SequenceLength a constant and ConcatFromSequence a Concat; no
 * sequence op is left and no value a node reads is a sequence. */
Test(passes, infer_lowers_sequences_into_values) {
  const int64_t one = 1, four = 4, zero = 0, none[1] = {0};
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "6,3"));
  tb_add_init(gp, tb_tensor_i64("four", 0, none, &four));
  tb_add_init(gp, tb_tensor_i64("zero", 0, none, &zero));
  tb_add_init(gp, tb_tensor_i64("one", 0, none, &one));
  tb_add_node(gp, tb_node("SplitToSequence", "split", "x,four", "s"));  /* rows 0-3, 4-5 */
  tb_add_node(gp, tb_node("SequenceInsert", "insert", "s,x,zero", "s2")); /* x, rows 0-3, rows 4-5 */
  tb_add_node(gp, tb_node("SequenceErase", "erase", "s2,one", "s3"));     /* x, rows 4-5 */
  tb_add_node(gp, tb_node("SequenceAt", "at", "s3,one", "last"));
  tb_add_node(gp, tb_node("SequenceLength", "len", "s3", "n"));
  Onnx__NodeProto *cat = tb_node("ConcatFromSequence", "cat", "s3", "y");
  tb_attr_int(cat, "axis", 0);
  tb_add_node(gp, cat);
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  tb_add_output(gp, tb_value("last", FT_FLOAT, NULL));
  tb_add_output(gp, tb_value("n", FT_INT64, NULL));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  front_end(g, &no_pins, 1);
  char *live = tu_live_ops(g);
  cr_assert_str_eq(live, "Slice,Slice,Identity,Concat", "%s", live);
  const ft_value *y = &g->vals[ft_value_find(g, "y")], *last = &g->vals[ft_value_find(g, "last")];
  cr_assert(y->t.rank == 2 && y->t.dims[0] == 8 && y->t.dims[1] == 3, "y is x and its last 2 rows");
  cr_assert(last->t.rank == 2 && last->t.dims[0] == 2, "last: rows 4-5");
  const ft_value *n = &g->vals[ft_value_find(g, "n")];
  cr_assert(n->kind == FT_V_CONST && n->t.data && *(const int64_t *)n->t.data == 2, "SequenceLength folds to 2");
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_in && !g->nodes[i].dead; k++)
      cr_assert(g->nodes[i].in[k] < 0 || !g->vals[g->nodes[i].in[k]].is_seq, "node %d reads a sequence", i);
  ft_graph_free(g);
}

/* What torch exports for x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze -> Concat ->
 * Reshape, here between two compute nodes. After inference with folding only the compute nodes
 * and the view are left, and the view's target is the constant the chain computes. */
Test(passes, infer_folds_shape_chains_completely) {
  const int64_t sd[1] = {1}, wd[1] = {24};
  const int64_t minus1[1] = {-1}, zero = 0, axes[1] = {0};
  float w[24];
  for (int i = 0; i < 24; i++) w[i] = (float)(i % 7) - 3;
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "batch,4,6"));
  tb_add_init(gp, tb_tensor_i64("zero", 0, NULL, &zero));
  tb_add_init(gp, tb_tensor_i64("minus1", 1, sd, minus1));
  tb_add_init(gp, tb_tensor_i64("axes", 1, sd, axes));
  tb_add_init(gp, tb_tensor_f32("w", 1, wd, w));
  tb_add_node(gp, tb_node("Add", "pre", "x,x", "xr"));
  tb_add_node(gp, tb_node("Shape", "shape", "xr", "s"));
  tb_add_node(gp, tb_node("Gather", "gather", "s,zero", "n"));
  tb_add_node(gp, tb_node("Unsqueeze", "unsq", "n,axes", "n1"));
  Onnx__NodeProto *cat = tb_node("Concat", "cat", "n1,minus1", "target");
  tb_attr_int(cat, "axis", 0);
  tb_add_node(gp, cat);
  tb_add_node(gp, tb_node("Reshape", "view", "xr,target", "flat"));
  tb_add_node(gp, tb_node("Mul", "post", "flat,w", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "chain.onnx");
  ft_pins p = {.dims = {"batch=3"}, .n_dims = 1};
  front_end(g, &p, 1);
  ft_err e = {0};
  cr_assert_eq(ft_simplify(g, &e), 0);
  char *live = tu_live_ops(g);
  cr_assert_str_eq(live, "Add,Reshape,Mul", "the shape arithmetic is gone: %s", live);
  const ft_value *t = &g->vals[ft_value_find(g, "target")];
  cr_assert_eq(t->kind, FT_V_CONST);
  cr_assert_eq(ft_numel(&t->t), 2);
  cr_assert_eq(ft_const_int(&t->t, 0), 3, "the pinned batch");
  cr_assert_eq(ft_const_int(&t->t, 1), -1);
  const ft_value *flat = &g->vals[ft_value_find(g, "flat")];
  cr_assert_eq(flat->t.rank, 2);
  cr_assert_eq(flat->t.dims[0], 3);
  cr_assert_eq(flat->t.dims[1], 24);
  const ft_value *y = &g->vals[ft_value_find(g, "y")];
  cr_assert_eq(y->t.rank, 2);
  cr_assert_eq(y->t.dims[1], 24);

  /* and the program plans the view without a copy */
  ft_lowered lw;
  ft_memplan mp;
  cr_assert_eq(ft_lower(g, &lw, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_plan_memory(g, &lw, &mp, &e), 0, "%s", e.msg);
  int kernels = 0;
  for (int s = 0; s < lw.n; s++) kernels += lw.calls[s].entry != NULL;
  cr_assert_eq(kernels, 2, "Add and Mul run; the Reshape is a view");
  cr_assert_eq(mp.n_alias, 1);
  cr_assert_eq(mp.root[ft_value_find(g, "flat")], mp.root[ft_value_find(g, "xr")]);
  ft_memplan_free(&mp);
  ft_lowered_free(&lw);
  ft_graph_free(g);
}

/* ---- ft_simplify ------------------------------------------------------------------------- */

/* x -> Identity -> a -> Add(a, x) -> b -> Dropout -> c -> Mul(c, c) -> y (output)
 *   plus a dead branch (Sub, Mul on x nobody reads) and an Identity that is a graph output. */
static ft_graph *simplify_model(void) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "8"));
  tb_add_node(gp, tb_node("Identity", "id1", "x", "a"));
  tb_add_node(gp, tb_node("Add", "add", "a,x", "b"));
  tb_add_node(gp, tb_node("Dropout", "drop", "b", "c"));
  tb_add_node(gp, tb_node("Sub", "dead1", "x,b", "d1"));
  tb_add_node(gp, tb_node("Mul", "dead2", "d1,d1", "d2"));
  tb_add_node(gp, tb_node("Mul", "mul", "c,c", "y"));
  tb_add_node(gp, tb_node("Identity", "id_out", "y", "y2"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  tb_add_output(gp, tb_value("y2", FT_FLOAT, NULL));
  return tu_roundtrip(tb_model(gp, 13), dir, "simp.onnx");
}

static int node_index(const ft_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!strcmp(g->nodes[i].name, name)) return i;
  cr_assert_fail("no node '%s'", name);
  return -1;
}

Test(passes, simplify_removes_identity_dropout_and_dead_nodes) {
  ft_graph *g = simplify_model();
  ft_err e = {0};
  cr_assert_eq(ft_simplify(g, &e), 0);
  char *live = tu_live_ops(g);
  cr_assert_str_eq(live, "Add,Mul,Identity", "%s", live);
  int x = ft_value_find(g, "x"), b = ft_value_find(g, "b");
  const ft_node *add = &g->nodes[node_index(g, "add")], *mul = &g->nodes[node_index(g, "mul")];
  cr_assert_eq(add->in[0], x, "Identity's consumer reads its input");
  cr_assert_eq(add->in[1], x);
  cr_assert_eq(mul->in[0], b, "Dropout's consumer reads its input");
  cr_assert_eq(mul->in[1], b);
  cr_assert(g->nodes[node_index(g, "dead1")].dead);
  cr_assert(g->nodes[node_index(g, "dead2")].dead);
  cr_assert_not(g->nodes[node_index(g, "id_out")].dead, "an Identity that makes a graph output stays");
  ft_graph_free(g);
}

Test(passes, simplify_keeps_dropout_whose_mask_is_used) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "8"));
  tb_add_node(gp, tb_node("Dropout", "drop", "x", "y,mask"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  tb_add_output(gp, tb_value("mask", FT_BOOL, NULL));
  ft_graph *g = tu_roundtrip(tb_model(gp, 13), dir, "m.onnx");
  ft_err e = {0};
  cr_assert_eq(ft_simplify(g, &e), 0);
  cr_assert_not(g->nodes[0].dead);
  ft_graph_free(g);
}

/* The whole front end on the simplify model. */
Test(passes, simplify_after_infer) {
  ft_graph *g = simplify_model();
  front_end(g, &no_pins, 1);
  ft_err e = {0};
  cr_assert_eq(ft_simplify(g, &e), 0);
  char *live = tu_live_ops(g);
  cr_assert_str_eq(live, "Add,Mul,Identity", "%s", live);
  ft_graph_free(g);
}

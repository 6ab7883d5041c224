/* Fusion pass `gemm_epilogue`: what follows a matrix product elementwise goes into the GEMM's
 * epilogue, applied to each tile of C while it is in L1 (templates/c/gemm.h):
 *
 *   MatMul(A, B) [+ bias] [-> act]          ->  ftax.FusedMatMul(A, B, bias?)  activation=act
 *   Gemm(A, B, C) [-> Reshape] -> act       ->  ftax.FusedGemm(A, B, C?) [-> Reshape]
 *
 * B of the MatMul must be a float32 constant matrix (packed at compile time, as MatMul's is);
 * bias holds one value per output column and the Add must not broadcast the product to a larger
 * shape. act is a unary scalar op (templates/common/scalar_ops.h: Relu, Tanh, Mish, LeakyRelu,
 * Clip with constant bounds ...) or ftax.Gelu (the gelu pass runs first). GPT-2's Conv1D layers put a
 * Reshape between the Gemm and the GELU: the activation is elementwise, so it moves before the
 * Reshape. Every intermediate must be read by the next node of the match only.
 *
 *   ftax.QDQMatMul(...) [+ bias] [-> act]   ->  ftax.QDQMatMul(..., bias?)  activation=act
 *   ftax.QDQConv(...) -> act                ->  ftax.QDQConv(...)  activation=act
 *
 * the same on the int8 GEMM core's float32 epilogue (templates/c/gemm_int8.h; the qdq pass
 * made the node): BERT's quantized projections write their output once, bias and GELU done;
 * MobileNetV2's quantized convs (and its depthwise ones, templates/c/conv.h) take their ReLU6. */
#include <string.h>

#include "fuse_tf.h"
#include "scalar_table.h"

/* The activation node reading v alone: a unary scalar op (templates/common/scalar_ops.h) with
 * its parameters, the node in *act; else NULL. Clip must have lo <= hi: the epilogue's Clip
 * takes lo where lo > hi, the op hi. */
static const ft_sop *activation(ft_fuse_ctx *c, int v, int *act, float params[2]) {
  ft_graph *g = c->g;
  int r = tf_sole_reader(c, v);
  *act = r;
  if (r < 0 || g->vals[g->nodes[r].out[0]].t.dtype != FT_FLOAT || g->nodes[r].in[0] != v) return NULL;
  const ft_sop *s = ft_sop_of_node(g, &g->nodes[r], params);
  if (s && s->id == FT_SOP_CLIP && !(params[0] <= params[1])) return NULL;
  return s;
}

/* The fused op's activation attributes. */
static void set_activation(ft_node *f, const ft_sop *s, const float params[2]) {
  ft_node_set_string(f, "activation", s->name);
  if (FT_SOP_IS_PARAM(s->id)) ft_node_set_floats(f, "activation_params", params, 2);
}

static void matmul(ft_fuse_ctx *c, int i) {
  ft_graph *g = c->g;
  const ft_node *n = &g->nodes[i];
  int A = n->in[0], B = n->in[1], cur = n->out[0], bias = -1, nodes[3] = {i}, nn = 1, act;
  float params[2];
  const ft_value *bv = &g->vals[B];
  if (g->vals[A].t.dtype != FT_FLOAT || bv->t.dtype != FT_FLOAT || bv->t.rank != 2) return;
  int64_t N = bv->t.dims[1];
  int r = tf_sole_reader(c, cur);
  if (ft_is_op(g, r, "Add")) {
    int o = tf_other(g, r, cur);
    if (o >= 0 && tf_row(g, o, N, g->vals[cur].t.rank) && tf_same_shape(g, g->nodes[r].out[0], cur)) {
      if (!bv->t.data) {
        ft_fuse_note(c, i, "MatMul + bias with B computed at run time: only constant weights fuse");
        return;
      }
      if (!tf_ready(g, o, i)) {
        ft_fuse_note(c, r, "the bias is computed after the MatMul");
        return;
      }
      bias = o;
      nodes[nn++] = r;
      cur = g->nodes[r].out[0];
    }
  }
  const ft_sop *a = bv->t.data ? activation(c, cur, &act, params) : NULL;
  if (a) {
    nodes[nn++] = act;
    cur = g->nodes[act].out[0];
  }
  if (nn == 1) return;
  int ins[3] = {A, B, bias};
  ft_node *f = tf_rewrite(c, i, "FusedMatMul", ins, bias >= 0 ? 3 : 2, &cur, 1, nodes + 1, nn - 1);
  if (a) set_activation(f, a, params);
}

static void gemm(ft_fuse_ctx *c, int i) {
  ft_graph *g = c->g;
  ft_node *n = &g->nodes[i];
  int out = n->out[0], act, reshape = -1;
  float params[2];
  if (g->vals[out].t.dtype != FT_FLOAT) return;
  const ft_sop *a = activation(c, out, &act, params);
  if (!a && ft_is_op(g, act, "Reshape")) { /* Gemm -> Reshape -> act: the act moves first */
    reshape = act;
    a = activation(c, g->nodes[reshape].out[0], &act, params);
  }
  if (!a) return;
  /* the node's attributes go with it: Gemm's own, then the activation */
  float alpha = ft_attr_float(n, "alpha", 1.0f), beta = ft_attr_float(n, "beta", 1.0f);
  int64_t ta = ft_attr_int(n, "transA", 0), tb = ft_attr_int(n, "transB", 0);
  int ins[3] = {n->in[0], n->in[1], n->n_in > 2 ? n->in[2] : -1};
  int n_in = n->n_in > 2 && n->in[2] >= 0 ? 3 : 2, act_out = g->nodes[act].out[0];
  int y = reshape >= 0 ? out : act_out;
  ft_node *f = tf_rewrite(c, i, "FusedGemm", ins, n_in, &y, 1, &act, 1);
  ft_node_set_float(f, "alpha", alpha);
  ft_node_set_float(f, "beta", beta);
  ft_node_set_int(f, "transA", ta);
  ft_node_set_int(f, "transB", tb);
  set_activation(f, a, params);
  if (reshape >= 0) { /* the Reshape now yields what the activation did */
    ft_node *rn = &g->nodes[reshape];
    g->vals[rn->out[0]].producer = -1;
    rn->out[0] = act_out;
    g->vals[act_out].producer = reshape;
  }
}

/* An ftax.QDQMatMul without an epilogue beyond its bias takes a bias Add (when it has no bias)
 * and an activation, an ftax.QDQConv the activation (its bias is per output channel, not a row
 * of the last axis). It keeps its inputs and attributes; the bias becomes input 6. */
static void qdq_matmul(ft_fuse_ctx *c, int i) {
  ft_graph *g = c->g;
  ft_node *n = &g->nodes[i];
  int cur = n->out[0], bias = n->n_in > 6 ? n->in[6] : -1, nodes[2], nn = 0, act;
  float params[2];
  if (n->n_in < 6 || ft_attr_int(n, "relu", 0) || ft_attr_str(n, "activation", "")[0]) return;
  int rank = g->vals[cur].t.rank, r = tf_sole_reader(c, cur), conv = tf_is(g, i, "ftax", "QDQConv");
  int64_t N = rank ? g->vals[cur].t.dims[rank - 1] : 1;
  if (!conv && bias < 0 && ft_is_op(g, r, "Add")) {
    int o = tf_other(g, r, cur);
    if (o >= 0 && g->vals[o].t.data && tf_row(g, o, N, rank) && tf_same_shape(g, g->nodes[r].out[0], cur)) {
      bias = o;
      nodes[nn++] = r;
      cur = g->nodes[r].out[0];
    }
  }
  const ft_sop *a = activation(c, cur, &act, params);
  if (a) {
    nodes[nn++] = act;
    cur = g->nodes[act].out[0];
  }
  if (!nn) return;
  int ins[7];
  for (int j = 0; j < 6; j++) ins[j] = n->in[j];
  ins[6] = bias;
  /* tf_rewrite drops the node's attributes (transB): set them aside */
  ft_attr *attrs = n->attrs;
  int n_attrs = n->n_attrs;
  n->attrs = NULL;
  n->n_attrs = 0;
  ft_node *f = tf_rewrite(c, i, conv ? "QDQConv" : "QDQMatMul", ins, bias >= 0 ? 7 : 6, &cur, 1, nodes, nn);
  f->attrs = attrs;
  f->n_attrs = n_attrs;
  if (a) set_activation(f, a, params);
}

int ft_fuse_gemm_epilogue(ft_fuse_ctx *c) {
  ft_graph *g = c->g;
  for (int i = 0; i < g->n_nodes; i++) {
    if (ft_is_op(g, i, "MatMul")) matmul(c, i);
    else if (ft_is_op(g, i, "Gemm")) gemm(c, i);
    else if (tf_is(g, i, "ftax", "QDQMatMul") || tf_is(g, i, "ftax", "QDQConv")) qdq_matmul(c, i);
  }
  return 0;
}

/* Fusion pass `qdq`: the QDQ form of a quantized model runs its matrix products in int8.
 *
 *   Conv|MatMul|Gemm(DequantizeLinear(xq, sx, zx), DequantizeLinear(wq, sw, zw), bias?) [-> Relu]
 *     -> ftax.QDQConv | ftax.QDQMatMul(a, sx, zx, wq, sw, zw, bias?)  relu=0|1
 *
 * on the int8 GEMM core (templates/c/gemm_int8.h): the sums of (xq - zx)(wq - zw) are exact in
 * int32, the output is acc * sx * sw[n] (+ bias) in float32, what DequantizeLinear followed by
 * the float op computes up to the float op's rounding. a is x itself when xq comes from
 * QuantizeLinear(x, sx, zx) with the same scale and zero point (the kernel quantizes x while
 * packing it: x / sx rounded half to even, + zx, saturated, as QuantizeLinear does), else xq.
 *
 * The weight's DequantizeLinear has only constant inputs: constant folding has already turned it
 * into a float32 constant. Its folded node keeps its inputs, so the pass reads the int8 weight,
 * its scales and zero points there. Weights must be quantized per tensor or per output channel
 * (axis 0 of a Conv's w and of Gemm's transposed B, axis 1 of a MatMul's or Gemm's [K, N] B).
 * Conv of group 1, or a depthwise Conv (group = C_in = C_out, 1-D or 2-D) whose weight's zero
 * points are 0 (ft_conv_qdw_f32 of templates/c/conv.h: x quantized as its rows are loaded, or xq
 * read as it is, exact sums in float32); Gemm with
 * transA 0 and alpha, beta 1. The Quantize/DequantizeLinear nodes left without readers are
 * removed by the dead-code pass after fusion.
 *
 * The dynamic form (onnxruntime's quantize_dynamic) fuses onto the same op:
 *
 *   Mul(Cast(MatMulInteger(xq, wq, zx?, zw?), to=float), Mul(sx, sw))   (either operand order)
 *     -> ftax.QDQMatMul(a, sx, zx, wq, sw, zw)
 *
 * with wq a constant 8-bit matrix, sw constant (per tensor or one per column), sx one value, and
 * a = x when (xq, sx, zx) are the outputs of DynamicQuantizeLinear(x): the kernel quantizes x
 * with sx and zx while packing it, as DynamicQuantizeLinear does. The scale is sx * sw in
 * float32, the product the Mul computes. A bias Add and an activation after it are taken by the
 * gemm_epilogue pass, as for the QDQ form. A DynamicQuantizeLinear whose quantized output is then
 * read by no one becomes ftax.DynamicQuantizeScale(x) -> (scale, zero point): the range scan
 * without the quantizing pass, which each GEMM does in its packing. */
#include <string.h>

#include "fuse_tf.h"

#define FT_QDQ_DW_TAPS 256 /* FT_QDW_MAXTAPS of templates/c/conv.h */

static int is_8bit(int dt) { return dt == FT_UINT8 || dt == FT_INT8; }

/* n is a node of this (default-domain) op type, live or folded */
static int op_is(const ft_node *n, const char *op) { return !n->domain[0] && !strcmp(n->op_type, op); }

static int input(const ft_node *n, int j) { return j < n->n_in ? n->in[j] : -1; }

/* w is a float constant folded from DequantizeLinear of a constant 8-bit weight, per tensor or
 * per channel along `axis` (of rank 2 or more): its node, else -1 */
static int folded_weight(const ft_graph *g, int w, int axis) {
  int p = g->vals[w].producer;
  if (p < 0 || !g->nodes[p].dead || !op_is(&g->nodes[p], "DequantizeLinear")) return -1;
  const ft_node *d = &g->nodes[p];
  int q = input(d, 0), s = input(d, 1), z = input(d, 2);
  if (q < 0 || s < 0 || !g->vals[q].t.data || !is_8bit(g->vals[q].t.dtype) || !g->vals[s].t.data) return -1;
  if (z >= 0 && !g->vals[z].t.data) return -1;
  const ft_tensor *qt = &g->vals[q].t;
  int64_t ns = ft_numel(&g->vals[s].t), a = ft_attr_int(d, "axis", 1);
  if (a < 0) a += qt->rank;
  if (ns != 1 && (a != axis || ns != qt->dims[axis])) return -1;
  return p;
}

/* The quantized activation behind x = DequantizeLinear(xq, sx, zx) (per tensor): the node,
 * else -1 */
static int activation_dq(const ft_graph *g, int x) {
  int p = ft_producer(g, x);
  if (p < 0 || !ft_is_op(g, p, "DequantizeLinear")) return -1;
  const ft_node *d = &g->nodes[p];
  int q = input(d, 0), s = input(d, 1), z = input(d, 2);
  if (q < 0 || s < 0 || !is_8bit(g->vals[q].t.dtype) || !g->vals[s].t.data || ft_numel(&g->vals[s].t) != 1) return -1;
  if (z >= 0 && (!g->vals[z].t.data || ft_numel(&g->vals[z].t) != 1)) return -1;
  return p;
}

/* two scalar constants hold the same bytes */
static int same_const(const ft_graph *g, int a, int b) {
  if (a == b) return 1;
  if (a < 0 || b < 0) return 0;
  const ft_tensor *x = &g->vals[a].t, *y = &g->vals[b].t;
  return x->data && y->data && x->dtype == y->dtype && ft_numel(x) == 1 && ft_numel(y) == 1 &&
         !memcmp(x->data, y->data, ft_dtype_size(x->dtype));
}

/* A: x when xq = QuantizeLinear(x) with the same scale and zero point; else xq */
static int activation_source(const ft_graph *g, const ft_node *dq) {
  int xq = dq->in[0], q = ft_producer(g, xq);
  if (q >= 0 && ft_is_op(g, q, "QuantizeLinear") && g->vals[g->nodes[q].in[0]].t.dtype == FT_FLOAT &&
      same_const(g, input(&g->nodes[q], 1), dq->in[1]) && same_const(g, input(&g->nodes[q], 2), input(dq, 2)) &&
      input(dq, 2) >= 0)
    return g->nodes[q].in[0];
  return xq;
}

/* a Conv with one input and one output channel per group, 1-D or 2-D */
static int is_depthwise(const ft_graph *g, const ft_node *n) {
  const ft_tensor *x = &g->vals[n->in[0]].t, *w = &g->vals[n->in[1]].t;
  int64_t G = ft_attr_int(n, "group", 1);
  return G > 1 && (x->rank == 3 || x->rank == 4) && w->rank == x->rank && x->dims[1] == G && w->dims[0] == G &&
         w->dims[1] == 1;
}

/* the depthwise kernel's conditions on what fuse_one found (ins as it passes them): x float or
 * 8-bit (then of its zero point's type), w's zero points 0, few enough taps for exact sums */
static int depthwise_fits(const ft_graph *g, const int *ins) {
  int xt = g->vals[ins[0]].t.dtype;
  if (xt != FT_FLOAT && !is_8bit(xt)) return 0;
  if (xt != FT_FLOAT && ins[2] >= 0 && g->vals[ins[2]].t.dtype != xt) return 0;
  const ft_tensor *w = &g->vals[ins[3]].t;
  if (ft_numel(w) > (int64_t)FT_QDQ_DW_TAPS * w->dims[0]) return 0;
  if (ins[5] >= 0) {
    const ft_tensor *z = &g->vals[ins[5]].t;
    for (int64_t j = 0; j < ft_numel(z); j++)
      if (((const uint8_t *)z->data)[j]) return 0;
  }
  return 1;
}

/* which axis of the weight holds the output channels; -1: this node does not fuse */
static int weight_axis(ft_fuse_ctx *c, int i) {
  const ft_graph *g = c->g;
  const ft_node *n = &g->nodes[i];
  if (op_is(n, "Conv")) return ft_attr_int(n, "group", 1) == 1 || is_depthwise(g, n) ? 0 : -1;
  if (g->vals[n->in[1]].t.rank != 2) return -1;
  if (op_is(n, "MatMul")) return 1;
  if (ft_attr_int(n, "transA", 0) || ft_attr_float(n, "alpha", 1.0f) != 1.0f || g->vals[n->in[0]].t.rank != 2) return -1;
  if (input(n, 2) >= 0 && ft_attr_float(n, "beta", 1.0f) != 1.0f) return -1;
  return ft_attr_int(n, "transB", 0) ? 0 : 1;
}

/* the bias (float32, one per output channel, constant) or -1; -2 when it does not fit */
static int bias_of(const ft_graph *g, const ft_node *n, int64_t N) {
  int b = op_is(n, "MatMul") ? -1 : input(n, 2);
  if (b < 0) return -1;
  const ft_tensor *t = &g->vals[b].t;
  return t->dtype == FT_FLOAT && ft_numel(t) == N && t->rank == 1 ? b : -2;
}

static void fuse_one(ft_fuse_ctx *c, int i) {
  ft_graph *g = c->g;
  ft_node *n = &g->nodes[i];
  if (n->n_in < 2 || n->in[0] < 0 || n->in[1] < 0 || g->vals[n->out[0]].t.dtype != FT_FLOAT) return;
  int axis = weight_axis(c, i);
  if (axis < 0) return;
  int wd = folded_weight(g, n->in[1], axis), xd = activation_dq(g, n->in[0]);
  if (wd < 0 || xd < 0) {
    if (wd >= 0) ft_fuse_note(c, i, "int8 weight, but the activation does not come from DequantizeLinear (per tensor)");
    return;
  }
  const ft_node *w = &g->nodes[wd], *x = &g->nodes[xd];
  int64_t N = g->vals[w->in[0]].t.dims[axis];
  int bias = bias_of(g, n, N);
  if (bias == -2) {
    ft_fuse_note(c, i, "int8 weight and activation, but the bias is not float32 with one value per output channel");
    return;
  }
  int ins[7] = {activation_source(g, x), x->in[1], input(x, 2), w->in[0], w->in[1], input(w, 2), bias};
  if (op_is(n, "Conv") && ft_attr_int(n, "group", 1) != 1 && !depthwise_fits(g, ins)) {
    ft_fuse_note(c, i, "int8 depthwise conv, but w's zero point is not 0 or the window is too large");
    return;
  }
  int out = n->out[0], relu = tf_sole_reader(c, out), dead[1];
  int nd = 0;
  if (relu >= 0 && ft_is_op(g, relu, "Relu")) {
    dead[nd++] = relu;
    out = g->nodes[relu].out[0];
  }
  /* the node keeps its attributes (Conv's window, Gemm's transB): set them aside while it is
     rewritten, which drops them */
  ft_attr *attrs = n->attrs;
  int n_attrs = n->n_attrs;
  n->attrs = NULL;
  n->n_attrs = 0;
  const char *op = op_is(n, "Conv") ? "QDQConv" : "QDQMatMul";
  int is_matmul = op_is(n, "MatMul");
  ft_node *f = tf_rewrite(c, i, op, ins, bias >= 0 ? 7 : 6, &out, 1, dead, nd);
  f->attrs = attrs;
  f->n_attrs = n_attrs;
  if (is_matmul) ft_node_set_int(f, "transB", 0);
  if (nd) ft_node_set_int(f, "relu", 1);
}

/* ---- the dynamic form ---- */

/* v is a float32 constant of one value, or of n values along the last axis of a rank <= 2 shape */
static int const_scale(const ft_graph *g, int v, int64_t n) {
  const ft_tensor *t = &g->vals[v].t;
  if (!t->data || t->dtype != FT_FLOAT) return 0;
  return ft_numel(t) == 1 || (ft_numel(t) == n && t->rank <= 2 && t->dims[t->rank - 1] == n);
}

/* a float32 value of one element (constant or computed), rank 0 or 1 */
static int scalar_float(const ft_graph *g, int v) {
  const ft_value *x = &g->vals[v];
  return x->shape_known && x->t.dtype == FT_FLOAT && x->t.rank <= 1 && ft_numel(&x->t) == 1;
}

static void fuse_dynamic(ft_fuse_ctx *c, int i) {
  ft_graph *g = c->g;
  const ft_node *n = &g->nodes[i];
  int xq = input(n, 0), wq = input(n, 1), zx = input(n, 2), zw = input(n, 3);
  if (xq < 0 || wq < 0 || n->n_out != 1) return;
  const ft_tensor *w = &g->vals[wq].t;
  if (!w->data || w->rank != 2 || !is_8bit(w->dtype) || !is_8bit(g->vals[xq].t.dtype)) return;
  int64_t N = w->dims[1];
  if (zx >= 0 && ft_numel(&g->vals[zx].t) != 1) return;
  if (zw >= 0 && (!g->vals[zw].t.data || (ft_numel(&g->vals[zw].t) != 1 && ft_numel(&g->vals[zw].t) != N))) return;
  int cast = tf_sole_reader(c, n->out[0]);
  if (!ft_is_op(g, cast, "Cast") || ft_attr_int(&g->nodes[cast], "to", 0) != FT_FLOAT) return;
  int mul = tf_sole_reader(c, g->nodes[cast].out[0]), sv = tf_other(g, mul, g->nodes[cast].out[0]);
  /* the Mul must not broadcast the product to a larger shape (a [1, N] scale on a vector) */
  if (!ft_is_op(g, mul, "Mul") || sv < 0 || !tf_same_shape(g, n->out[0], g->nodes[mul].out[0])) return;
  /* the scale: the product of the activation's (one value) and the weight's (constant) */
  int sm = tf_prod(g, sv, "Mul"), sx = -1, sw = -1;
  for (int k = 0; sm >= 0 && k < 2 && sw < 0; k++) {
    int a = g->nodes[sm].in[k], b = g->nodes[sm].in[1 - k];
    if (const_scale(g, b, N) && scalar_float(g, a)) sx = a, sw = b;
  }
  if (sw < 0) {
    ft_fuse_note(c, i, "MatMulInteger -> Cast -> Mul, but the scale is not the product of one activation scale and a constant weight scale");
    return;
  }
  /* the activation: x itself when xq, sx and zx all come from one DynamicQuantizeLinear(x) */
  int a = xq, dq = tf_prod(g, xq, "DynamicQuantizeLinear");
  if (dq >= 0 && g->nodes[dq].n_out >= 3 && g->nodes[dq].out[1] == sx && g->nodes[dq].out[2] == zx &&
      g->vals[g->nodes[dq].in[0]].t.dtype == FT_FLOAT)
    a = g->nodes[dq].in[0];
  int ins[6] = {a, sx, zx, wq, sw, zw}, out = g->nodes[mul].out[0], dead[2] = {i, cast};
  /* at the Mul, the last of the three: sx may be computed after the MatMulInteger */
  tf_rewrite(c, mul, "QDQMatMul", ins, 6, &out, 1, dead, 2);
  ft_node_set_int(&g->nodes[mul], "transB", 0);
}

/* DynamicQuantizeLinear whose quantized output nothing reads any more: only its scale and zero
 * point */
static void range_only(ft_fuse_ctx *c, int i) {
  ft_graph *g = c->g;
  const ft_node *n = &g->nodes[i];
  if (n->n_out < 3 || n->out[0] < 0 || c->n_uses[n->out[0]] != 0) return;
  int x = n->in[0], outs[2] = {n->out[1], n->out[2]};
  tf_rewrite(c, i, "DynamicQuantizeScale", &x, 1, outs, 2, NULL, 0);
}

int ft_fuse_qdq(ft_fuse_ctx *c) {
  ft_graph *g = c->g;
  for (int i = 0; i < g->n_nodes; i++)
    if (ft_is_op(g, i, "Conv") || ft_is_op(g, i, "MatMul") || ft_is_op(g, i, "Gemm")) fuse_one(c, i);
    else if (ft_is_op(g, i, "MatMulInteger")) fuse_dynamic(c, i);
  for (int i = 0; i < g->n_nodes; i++)
    if (ft_is_op(g, i, "DynamicQuantizeLinear")) range_only(c, i);
  return 0;
}

/* ---- requantized outputs (pass `qdq_out`, after gemm_epilogue has given the convs their
 * activation) ----
 *
 *   y = ftax.QDQConv(...) (group 1) | ftax.QDQMatMul(...) [relu, activation Relu|Clip|Gelu|
 *       Sigmoid|Silu], y read only by QuantizeLinear(y, s, z) (at most one) and by group-1
 *       ftax.QDQConvs and ftax.QDQMatMuls quantizing y (a = y) with the same s, z
 *     -> yq = ftax.QDQConv | ftax.QDQMatMul(..., bias?, s, z)
 *
 * The conv or matmul quantizes its float32 result in its epilogue (templates/c/gemm_int8.h
 * FT_I8_YQ: the same float value, then QuantizeLinear's division, rounding and saturation, so
 * the same bytes); its output is the QuantizeLinear's (whose other readers, DequantizeLinear
 * before a residual Add, read it as before) or y itself, now 8-bit, and the readers pack it
 * without quantizing: no float32 store and reload between the two (ResNet's convs; BERT's
 * feed-forward, whose first matmul's GELU output, 4 x hidden wide, is the second's input).
 * Anything else reading y (a depthwise conv, a float op, a graph output) keeps the float
 * output: a depthwise conv could read the bytes (FT_QDW_XQ of templates/c/conv.h), but on
 * MobileNetV2 QDQ its expansion convs then took 180 us instead of 123 (the division of the
 * requantizing epilogue) and the depthwise convs were no faster. The activations are those the
 * epilogue applies in registers (ft_i8_act_v). */

/* Quantize/DequantizeLinear nodes whose output no one reads (the qdq pass left them): removed
 * now, as the dead-code pass would, so that they do not count as readers below */
static void drop_unread_qdq(ft_fuse_ctx *c) {
  ft_graph *g = c->g;
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    ft_node *n = &g->nodes[i];
    if (!ft_is_op(g, i, "QuantizeLinear") && !ft_is_op(g, i, "DequantizeLinear")) continue;
    if (n->n_out != 1 || n->out[0] < 0 || c->n_uses[n->out[0]]) continue;
    for (int j = 0; j < n->n_in; j++)
      if (n->in[j] >= 0) c->n_uses[n->in[j]]--;
    n->dead = 1;
  }
}

static int qdq_conv_g1(const ft_graph *g, int i) {
  return tf_is(g, i, "ftax", "QDQConv") && ft_attr_int(&g->nodes[i], "group", 1) == 1;
}

/* an int8 GEMM node: a group-1 QDQConv or a QDQMatMul */
static int qdq_gemm(const ft_graph *g, int i) { return qdq_conv_g1(g, i) || tf_is(g, i, "ftax", "QDQMatMul"); }

/* a scalar constant: float32 (a scale) or 8-bit (a zero point) */
static int scalar_const(const ft_graph *g, int v, int zp) {
  const ft_tensor *t = v >= 0 ? &g->vals[v].t : NULL;
  return t && t->data && ft_numel(t) == 1 && (zp ? is_8bit(t->dtype) : t->dtype == FT_FLOAT);
}

static void requantize_one(ft_fuse_ctx *c, int i) {
  ft_graph *g = c->g;
  ft_node *n = &g->nodes[i];
  int y = n->out[0];
  if (n->n_in < 6 || n->n_in > 7 || n->n_out != 1 || y < 0 || g->vals[y].t.dtype != FT_FLOAT) return;
  const char *act = ft_attr_str(n, "activation", ""); /* the epilogue's in-register ones */
  if (act[0] && strcmp(act, "Relu") && strcmp(act, "Clip") && strcmp(act, "Gelu") && strcmp(act, "Sigmoid") && strcmp(act, "Silu"))
    return;
  int rd[16], nr = ft_consumers(g, y, rd, 16), q = -1, s = -1, z = -1;
  if (nr < 1 || nr > 16 || nr != c->n_uses[y]) return; /* a graph output, a reader reading it twice */
  for (int k = 0; k < nr; k++) {
    const ft_node *r = &g->nodes[rd[k]];
    int is_q = ft_is_op(g, rd[k], "QuantizeLinear");
    if (r->in[0] != y || (!is_q && !qdq_gemm(g, rd[k])) || (is_q && q >= 0)) return;
    for (int j = 1; j < r->n_in; j++)
      if (r->in[j] == y) return;
    int rs = input(r, 1), rz = input(r, 2);
    if (!scalar_const(g, rs, 0) || !scalar_const(g, rz, 1)) return;
    if (is_q) q = rd[k];
    if (s < 0) s = rs, z = rz;
    else if (!same_const(g, s, rs) || !same_const(g, z, rz)) return;
  }
  int out = q >= 0 ? g->nodes[q].out[0] : y;
  if (q >= 0 && (out < 0 || g->vals[out].t.dtype != g->vals[z].t.dtype)) return;
  for (int k = 0; k < nr; k++) /* the convs read the 8-bit output */
    if (rd[k] != q && out != y) {
      g->nodes[rd[k]].in[0] = out;
      c->n_uses[y]--;
      c->n_uses[out]++;
    }
  if (out == y) g->vals[y].t.dtype = g->vals[z].t.dtype;
  int ins[9] = {n->in[0], n->in[1], n->in[2], n->in[3], n->in[4], n->in[5], input(n, 6), s, z};
  ft_attr *attrs = n->attrs; /* kept, as fuse_one does */
  int n_attrs = n->n_attrs;
  n->attrs = NULL;
  n->n_attrs = 0;
  ft_node *f = tf_rewrite(c, i, qdq_conv_g1(g, i) ? "QDQConv" : "QDQMatMul", ins, 9, &out, 1, &q, q >= 0);
  f->attrs = attrs;
  f->n_attrs = n_attrs;
}

int ft_fuse_qdq_out(ft_fuse_ctx *c) {
  ft_graph *g = c->g;
  drop_unread_qdq(c);
  for (int i = 0; i < g->n_nodes; i++)
    if (qdq_gemm(g, i)) requantize_one(c, i);
  return 0;
}

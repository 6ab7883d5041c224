/* Fusion pass conv_epilogue: a Conv and the elementwise ops right after it become one
 * ftax.FusedConv (compiler/ops/fused_conv.c) whose kernel applies them to each output tile
 * while it is in cache, instead of writing the conv output and reading it back per op:
 *
 *   Conv [+ per-channel constant Add] [+ residual Add] [+ activation]
 *   Conv [+ per-channel constant Add] + activation + residual Add
 *
 * activation: a unary scalar op (templates/common/scalar_ops.h: Relu, Sigmoid, Mish, LeakyRelu
 * ...; Clip with constant bounds, ReLU6), or SiLU (x * Sigmoid(x), the Mul's operands in either
 * order). A residual is an Add of the chain's value and another tensor
 * of exactly the output's shape (ResNet: Conv -> Add(identity) -> Relu; MobileNetV2: the
 * projection Conv -> Add). A constant Add that broadcasts per output channel is folded into the
 * conv's bias. Every value inside the chain must have no reader outside it. */
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "gemm.h"
#include "scalar_table.h"

typedef struct chain {
  int nodes[8], n;          /* matched nodes after the Conv, in order */
  int act;                  /* FT_ACT_*: a scalar op's id, or SiLU */
  float lo, hi;             /* its parameters (Clip's bounds) */
  int res, res_mode;        /* residual value and 1 (before act) / 2 (after) */
  int bias_add;             /* a constant [C] (or [1,C,1,..]) added to the bias, or -1 */
} chain;

static int same_shape(const ft_tensor *a, const ft_tensor *b) {
  if (a->rank != b->rank || a->dtype != b->dtype) return 0;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return 0;
  return 1;
}

/* The only node reading v, or -1 (several readers, a graph output, none). */
static int sole_reader(ft_fuse_ctx *c, int v) {
  int r[2];
  if (c->n_uses[v] != 1 || ft_consumers(c->g, v, r, 2) != 1) return -1;
  return r[0];
}

/* A constant that adds one value per channel of y: [C,1,1] or [1,C,1,1] for a 2-D conv (a
 * plain [C] would broadcast along the last axis, not the channels). */
static int per_channel_const(const ft_graph *g, int v, const ft_tensor *y) {
  const ft_tensor *t = &g->vals[v].t;
  if (!t->data || t->dtype != FT_FLOAT || t->rank > y->rank || t->rank < y->rank - 1) return 0;
  int off = y->rank - t->rank;
  for (int d = 0; d < t->rank; d++) {
    int yd = d + off;
    if (yd == 1 ? t->dims[d] != y->dims[1] : t->dims[d] != 1) return 0;
  }
  return 1;
}

/* Clip's bounds as constants: inputs from opset 11, attributes before. */
static int clip_bounds(ft_fuse_ctx *c, int i, float *lo, float *hi) {
  const ft_graph *g = c->g;
  const ft_node *n = &g->nodes[i];
  double a = 0, b = 0;
  int has_lo, has_hi;
  if (g->opset < 11) {
    has_lo = ft_attr_find(n, "min") != NULL;
    has_hi = ft_attr_find(n, "max") != NULL;
    a = ft_attr_float(n, "min", 0);
    b = ft_attr_float(n, "max", 0);
  } else {
    has_lo = n->n_in > 1 && n->in[1] >= 0;
    has_hi = n->n_in > 2 && n->in[2] >= 0;
    if ((has_lo && !ft_const_scalar(g, n->in[1], &a)) || (has_hi && !ft_const_scalar(g, n->in[2], &b))) {
      ft_fuse_note(c, i, "Clip bounds are not constants");
      return 0;
    }
  }
  if (!has_hi && has_lo && a == 0) { *lo = 0; *hi = -1; return 1; } /* max(x, 0): Relu */
  if (!has_lo || !has_hi) {
    ft_fuse_note(c, i, "Clip without both bounds after a Conv");
    return 0;
  }
  if (!(a <= b)) {
    ft_fuse_note(c, i, "Clip with min > max");
    return 0;
  }
  *lo = (float)a;
  *hi = (float)b;
  return 1;
}

/* An activation reading v (the chain's value so far); fills the chain and returns the value it
 * produces, or -1. */
static int match_act(ft_fuse_ctx *c, int v, chain *ch) {
  const ft_graph *g = c->g;
  int r[3], nr = ft_consumers(g, v, r, 3);
  if (c->n_uses[v] == 1 && nr == 1) {
    int i = r[0];
    float params[2];
    const ft_sop *s;
    if (g->nodes[i].in[0] != v) return -1;
    if (ft_is_op(g, i, "Clip")) {
      if (!clip_bounds(c, i, &ch->lo, &ch->hi)) return -1;
      ch->act = ch->hi < ch->lo ? FT_ACT_RELU : FT_ACT_CLIP;
    } else if ((s = ft_sop_of_node(g, &g->nodes[i], params)) != NULL) {
      ch->act = s->id;
      ch->lo = params[0];
      ch->hi = params[1];
    } else return -1;
    ch->nodes[ch->n++] = i;
    return g->nodes[i].out[0];
  }
  /* SiLU: v feeds a Sigmoid and a Mul of v and that Sigmoid, and nothing else */
  if (c->n_uses[v] == 2 && nr == 2) {
    int s = ft_is_op(g, r[0], "Sigmoid") ? r[0] : ft_is_op(g, r[1], "Sigmoid") ? r[1] : -1;
    int m = s == r[0] ? r[1] : r[0];
    if (s < 0 || !ft_is_op(g, m, "Mul")) return -1;
    int so = g->nodes[s].out[0];
    const ft_node *mn = &g->nodes[m];
    if (!((mn->in[0] == v && mn->in[1] == so) || (mn->in[0] == so && mn->in[1] == v))) return -1;
    if (c->n_uses[so] != 1) {
      ft_fuse_note(c, s, "x * sigmoid(x) after a Conv, but the sigmoid has other readers");
      return -1;
    }
    ch->act = FT_ACT_SILU;
    ch->nodes[ch->n++] = s;
    ch->nodes[ch->n++] = m;
    return mn->out[0];
  }
  return -1;
}

/* A residual Add reading v: the other operand shaped like v. Returns the Add's output or -1. */
static int match_residual(ft_fuse_ctx *c, int v, chain *ch, int mode) {
  const ft_graph *g = c->g;
  int i = sole_reader(c, v);
  if (!ft_is_op(g, i, "Add")) return -1;
  const ft_node *a = &g->nodes[i];
  int other = a->in[0] == v ? a->in[1] : a->in[0];
  if (other == v) return -1;
  if (!same_shape(&g->vals[other].t, &g->vals[v].t)) {
    ft_fuse_note(c, i, "Add after a Conv whose other operand is not shaped like the conv output");
    return -1;
  }
  ch->res = other;
  ch->res_mode = mode;
  ch->nodes[ch->n++] = i;
  return a->out[0];
}

static void copy_attrs(ft_node *dst, const ft_node *src) {
  dst->attrs = realloc(dst->attrs, sizeof(ft_attr) * (size_t)(dst->n_attrs + src->n_attrs + 1));
  for (int k = 0; k < src->n_attrs; k++) ft_attr_copy(&dst->attrs[dst->n_attrs++], &src->attrs[k]);
}

/* A bias of CO values: the conv's own (or zeros) plus the constant Add's. */
static int new_bias(ft_graph *g, int conv_i, int add_v, int64_t CO) {
  int b = g->nodes[conv_i].n_in > 2 ? g->nodes[conv_i].in[2] : -1;
  ft_tensor t = {FT_FLOAT, 1, {CO}, NULL};
  float *d = malloc(sizeof(float) * (size_t)CO + 1);
  const float *cb = b >= 0 ? g->vals[b].t.data : NULL, *ab = g->vals[add_v].t.data;
  for (int64_t o = 0; o < CO; o++) d[o] = (cb ? cb[o] : 0.0f) + ab[o];
  t.data = d;
  char name[512];
  snprintf(name, sizeof name, "%s.bias_add", g->nodes[conv_i].name ? g->nodes[conv_i].name : "conv");
  int v = ft_add_const(g, name, &t);
  free(d);
  return v;
}

static void try_conv(ft_fuse_ctx *c, int conv_i) {
  ft_graph *g = c->g;
  int y = g->nodes[conv_i].out[0];
  if (y < 0 || g->vals[y].t.dtype != FT_FLOAT || g->nodes[conv_i].n_in < 2) return;
  chain ch;
  memset(&ch, 0, sizeof ch);
  ch.res = ch.bias_add = -1;
  int v = y;
  /* a constant per-channel Add first: it is more bias */
  int i = sole_reader(c, v);
  if (ft_is_op(g, i, "Add")) {
    const ft_node *a = &g->nodes[i];
    int other = a->in[0] == v ? a->in[1] : a->in[0];
    int b = g->nodes[conv_i].n_in > 2 ? g->nodes[conv_i].in[2] : -1;
    if (other != v && per_channel_const(g, other, &g->vals[v].t) && (b < 0 || g->vals[b].t.data)) {
      ch.bias_add = other;
      ch.nodes[ch.n++] = i;
      v = a->out[0];
    }
  }
  int w;
  if ((w = match_residual(c, v, &ch, 1)) >= 0) {
    v = w;
    if ((w = match_act(c, v, &ch)) >= 0) v = w;
  } else if ((w = match_act(c, v, &ch)) >= 0) {
    v = w;
    if ((w = match_residual(c, v, &ch, 2)) >= 0) v = w;
  }
  if (!ch.n) {
    int r[1];
    if (c->n_uses[y] > 1 && ft_consumers(g, y, r, 1) >= 1 &&
        (ft_is_op(g, r[0], "Relu") || ft_is_op(g, r[0], "Clip") || ft_is_op(g, r[0], "Add")))
      ft_fuse_note(c, conv_i, "output has %d readers: no epilogue", c->n_uses[y]);
    return;
  }
  /* the residual must not be the chain itself (it is not: every chain value has one reader) */
  int64_t CO = g->vals[y].t.dims[1];
  int bias = g->nodes[conv_i].n_in > 2 ? g->nodes[conv_i].in[2] : -1;
  if (ch.bias_add >= 0) {
    bias = new_bias(g, conv_i, ch.bias_add, CO);
    c->n_uses = realloc(c->n_uses, sizeof(int) * (size_t)(g->n_vals + 1));
    c->n_uses[bias] = 0;
  }
  const ft_node *cv = &g->nodes[conv_i];
  int ins[4] = {cv->in[0], cv->in[1], bias, ch.res};
  int dead[9];
  dead[0] = conv_i;
  for (int k = 0; k < ch.n; k++) dead[k + 1] = ch.nodes[k];
  int last = ch.nodes[ch.n - 1];
  ft_node *n = ft_fuse_rewrite(c, last, "FusedConv", ins, ch.res >= 0 ? 4 : 3, dead, ch.n + 1);
  copy_attrs(n, &g->nodes[conv_i]);
  if (ch.act) ft_node_set_string(n, "activation", ft_epilogue_activation_name(ch.act));
  if (FT_SOP_IS_PARAM(ch.act)) {
    float params[2] = {ch.lo, ch.hi};
    ft_node_set_floats(n, "activation_params", params, 2);
  }
  if (ch.res >= 0) ft_node_set_int(n, "residual", ch.res_mode);
  if (!n->name || !*n->name) { free(n->name); n->name = strdup(g->nodes[conv_i].name ? g->nodes[conv_i].name : ""); }
}

int ft_fuse_conv_epilogue(ft_fuse_ctx *c) {
  for (int i = 0; i < c->g->n_nodes; i++)
    if (ft_is_op(c->g, i, "Conv")) try_conv(c, i);
  return 0;
}

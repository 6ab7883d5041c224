/* Fusion pass conv_bn: Conv followed by BatchNormalization in inference mode becomes one Conv
 * with the normalization folded into its weights and bias at compile time:
 *
 *   a[c] = scale[c] / sqrt(var[c] + epsilon)
 *   W'[c, ...] = W[c, ...] * a[c]        B'[c] = (B[c] - mean[c]) * a[c] + bias[c]
 *
 * torch folds BatchNorm itself when it exports with constant folding; exports without it
 * (do_constant_folding=False, training=PRESERVE) and other exporters keep the pair. The Conv
 * keeps its place in the graph and takes over the BatchNormalization's output value, so the
 * conv_epilogue pass after this one sees an ordinary Conv. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"

static int is_const_f32(const ft_graph *g, int v, int64_t numel) {
  return v >= 0 && g->vals[v].t.data && g->vals[v].t.dtype == FT_FLOAT &&
         (numel < 0 || ft_numel(&g->vals[v].t) == numel);
}

static int try_fold(ft_fuse_ctx *c, int bn_i) {
  ft_graph *g = c->g;
  const ft_node *bn = &g->nodes[bn_i];
  int x = bn->in[0], conv_i = ft_producer(g, x);
  if (!ft_is_op(g, conv_i, "Conv")) return 0;
  const ft_node *cv = &g->nodes[conv_i];
  if (c->n_uses[x] != 1) {
    ft_fuse_note(c, bn_i, "the Conv output it normalizes has %d uses", c->n_uses[x]);
    return 0;
  }
  if (ft_attr_int(bn, "training_mode", 0)) {
    ft_fuse_note(c, bn_i, "training_mode=1 (batch statistics): not foldable");
    return 0;
  }
  if (g->opset < 9 && !ft_attr_int(bn, "spatial", 1)) {
    ft_fuse_note(c, bn_i, "spatial=0 (per-element statistics): not folded");
    return 0;
  }
  for (int k = 1; k < bn->n_out; k++)
    if (bn->out[k] >= 0 && c->n_uses[bn->out[k]]) {
      ft_fuse_note(c, bn_i, "its running-statistics output %d is used", k);
      return 0;
    }
  if (bn->n_in < 5) return 0;
  int w = cv->in[1], b = cv->n_in > 2 ? cv->in[2] : -1;
  const ft_tensor *wt = &g->vals[w].t;
  if (!is_const_f32(g, w, -1) || wt->rank < 3) {
    ft_fuse_note(c, bn_i, "the Conv's weights are not a float32 constant");
    return 0;
  }
  int64_t CO = wt->dims[0], per = ft_numel(wt) / (CO ? CO : 1);
  if (b >= 0 && !is_const_f32(g, b, CO)) {
    ft_fuse_note(c, bn_i, "the Conv's bias is not a float32 constant");
    return 0;
  }
  for (int k = 1; k < 5; k++)
    if (!is_const_f32(g, bn->in[k], CO)) {
      ft_fuse_note(c, bn_i, "input %d is not a float32 constant of %lld values", k, (long long)CO);
      return 0;
    }
  const float *scale = g->vals[bn->in[1]].t.data, *shift = g->vals[bn->in[2]].t.data;
  const float *mean = g->vals[bn->in[3]].t.data, *var = g->vals[bn->in[4]].t.data;
  const float *w0 = wt->data, *b0 = b >= 0 ? g->vals[b].t.data : NULL;
  /* the same per-channel factor the BatchNormalization kernel computes, in float */
  float eps = ft_attr_float(bn, "epsilon", 1e-5f);
  ft_tensor nw = *wt, nb = {FT_FLOAT, 1, {CO}, NULL};
  nw.data = malloc(sizeof(float) * (size_t)(CO * per) + 1);
  nb.data = malloc(sizeof(float) * (size_t)CO + 1);
  for (int64_t o = 0; o < CO; o++) {
    float a = scale[o] / sqrtf(var[o] + eps);
    for (int64_t i = 0; i < per; i++) ((float *)nw.data)[o * per + i] = w0[o * per + i] * a;
    ((float *)nb.data)[o] = ((b0 ? b0[o] : 0.0f) - mean[o]) * a + shift[o];
  }
  char name[512];
  snprintf(name, sizeof name, "%s.bn_folded", g->vals[w].name ? g->vals[w].name : "conv_w");
  int nwv = ft_add_const(g, name, &nw);
  snprintf(name, sizeof name, "%s.bn_bias", g->vals[w].name ? g->vals[w].name : "conv_w");
  int nbv = ft_add_const(g, name, &nb);
  free(nw.data);
  free(nb.data);
  c->n_uses = realloc(c->n_uses, sizeof(int) * (size_t)(g->n_vals + 1));
  c->n_uses[nwv] = c->n_uses[nbv] = 0;

  /* rewire: the Conv reads the folded constants and writes the BatchNormalization's output */
  ft_node *cn = &g->nodes[conv_i], *bnn = &g->nodes[bn_i];
  if (cn->n_in < 3) {
    cn->in = realloc(cn->in, sizeof(int) * 3);
    cn->in[2] = -1;
    cn->n_in = 3;
  }
  for (int k = 1; k < 3; k++) if (cn->in[k] >= 0) c->n_uses[cn->in[k]]--;
  cn->in[1] = nwv;
  cn->in[2] = nbv;
  c->n_uses[nwv]++;
  c->n_uses[nbv]++;
  for (int k = 0; k < bnn->n_in; k++) if (bnn->in[k] >= 0) c->n_uses[bnn->in[k]]--;
  int y = bnn->out[0];
  cn->out[0] = y;
  g->vals[y].producer = conv_i;
  bnn->dead = 1;
  c->matches++;
  return 0;
}

int ft_fuse_conv_bn(ft_fuse_ctx *c) {
  for (int i = 0; i < c->g->n_nodes; i++)
    if (ft_is_op(c->g, i, "BatchNormalization")) try_fold(c, i);
  return 0;
}

/* Fusion pass `skip_layernorm`: a residual Add, optionally with the bias Add of the layer before
 * it, feeding a layer norm over the last axis:
 *
 *   s = (x + bias) + skip;  y = LayerNorm(s)   ->   y, s = ftax.SkipLayerNorm(x, skip, gamma, beta, bias)
 *
 * The fused node also outputs s when anything else reads it (pre-LN transformers such as GPT-2
 * carry it on as the residual stream). It takes the place of the residual Add, the first node
 * of the match, so that readers of s that come before the layer norm's last node still find s
 * made before them; its other inputs must be ready there (tf_ready). */
#include "fuse_tf.h"

/* v = m + bias with bias one value per column and m of v's shape, read only by `reader`: the Add
 * node, m and bias; else -1. */
static int bias_add(ft_fuse_ctx *c, int v, int reader, int64_t H, int *m, int *bias) {
  ft_graph *g = c->g;
  int a = tf_prod(g, v, "Add");
  if (a < 0 || tf_sole_reader(c, v) != reader) return -1;
  for (int k = 0; k < 2; k++) {
    int x = g->nodes[a].in[k], b = g->nodes[a].in[1 - k];
    if (g->vals[b].t.data && tf_row(g, b, H, g->vals[v].t.rank) && tf_same_shape(g, x, v)) {
      *m = x;
      *bias = b;
      return a;
    }
  }
  return -1;
}

int ft_fuse_skip_layernorm(ft_fuse_ctx *c) {
  ft_graph *g = c->g;
  for (int i = g->n_nodes - 1; i >= 0; i--) { /* from the end: a chain is seen at its last node */
    tf_ln m;
    if (g->nodes[i].dead || !tf_match_ln(c, i, &m, 0)) continue;
    int add = tf_prod(g, m.x, "Add");
    if (add < 0) continue;
    const ft_node *an = &g->nodes[add];
    int a = an->in[0], b = an->in[1];
    if (!tf_same_shape(g, a, m.x) || !tf_same_shape(g, b, m.x)) {
      ft_fuse_note(c, add, "the residual Add broadcasts; its inputs must both have the layer norm's input shape");
      continue;
    }
    int64_t H = g->vals[m.x].t.dims[g->vals[m.x].t.rank - 1];
    int x = a, skip = b, bias = -1, badd = -1, inner;
    if ((badd = bias_add(c, a, add, H, &inner, &bias)) >= 0) x = inner;
    else if ((badd = bias_add(c, b, add, H, &inner, &bias)) >= 0) { x = inner; skip = a; }
    if (!tf_ready(g, m.gamma, add) || !tf_ready(g, m.beta, add)) {
      ft_fuse_note(c, add, "the layer norm's scale or shift is computed after the residual Add");
      continue;
    }
    int dead[TF_MAX_NODES + 1], nd = 0;
    for (int j = 0; j < m.n; j++) dead[nd++] = m.nodes[j];
    if (badd >= 0) dead[nd++] = badd;
    int sum_read = tf_outside_uses(c, m.x, m.nodes, m.n) > 0;
    int ins[5] = {x, skip, m.gamma, m.beta, bias}, outs[2] = {m.y, m.x};
    int n_in = bias >= 0 ? 5 : m.beta >= 0 ? 4 : 3;
    ft_node *n = tf_rewrite(c, add, "SkipLayerNorm", ins, n_in, outs, sum_read ? 2 : 1, dead, nd);
    ft_node_set_float(n, "epsilon", m.eps);
  }
  return 0;
}

/* Fusion pass `layernorm`: a layer normalization over the last axis, as exporters write it
 * (ReduceMean -> Sub -> Pow(2) -> ReduceMean -> Add(eps) -> Sqrt -> Div -> Mul(gamma) ->
 * Add(beta), and the variants tf_match_ln knows), or as ONNX's LayerNormalization, becomes one
 * ftax.LayerNorm(X, Gamma, Beta?) with attribute epsilon. Candidates are visited from the end of
 * the graph so that a chain is seen at its last node (Add(beta)) before its Mul(gamma). */
#include <stdlib.h>

#include "fuse_tf.h"

int ft_fuse_layernorm(ft_fuse_ctx *c) {
  ft_graph *g = c->g;
  /* nodes of a chain that failed a check: not tried again from its Mul (one note per chain) */
  char *seen = calloc((size_t)g->n_nodes + 1, 1);
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    if (g->nodes[i].dead || seen[i] || tf_is(g, i, "ftax", "LayerNorm")) continue;
    tf_ln m;
    if (!tf_match_ln(c, i, &m, 1)) {
      for (int j = 0; j < m.n; j++) seen[m.nodes[j]] = 1;
      continue;
    }
    int ins[3] = {m.x, m.gamma, m.beta};
    ft_node *n = tf_rewrite(c, i, "LayerNorm", ins, m.beta >= 0 ? 3 : 2, &m.y, 1, m.nodes, m.n);
    ft_node_set_float(n, "epsilon", m.eps);
  }
  free(seen);
  return 0;
}

/* Fusion pass `embed_layernorm`: embedding lookups summed and normalized, the input block of
 * BERT-style and GPT-style models:
 *
 *   s = Gather(word, ids) [+ Gather(type, type_ids)] [+ position];  y = LayerNorm(s)
 *     ->  y, s = ftax.EmbedLayerNorm(gamma, beta, dense, ids, word, type_ids, type, ...)
 *
 * Each term of the Add tree is a Gather on axis 0 of a float32 matrix (ids computed at run time:
 * input ids, position ids given as an input), or the one dense term: a tensor that broadcasts
 * over the leading dims, typically the position embeddings, whose Gather constant folding has
 * already done at compile time when the position ids are constants. Two constant dense terms of
 * one shape are added here, at compile time. At least one Gather must be there, at most
 * FT_ELN_MAX_GATHER (4). s is an output only when something else reads it (GPT-2's residual
 * stream). The fused node takes the place of the root Add (see skip_layernorm). */
#include <stdio.h>
#include <stdlib.h>

#include "fuse_tf.h"
#include "fused_norm.h"

typedef struct terms {
  int ids[FT_ELN_MAX_GATHER], table[FT_ELN_MAX_GATHER], n_gather;
  int dense[2], n_dense;
  int nodes[2 * FT_ELN_MAX_GATHER + 8], n_nodes; /* the Adds and Gathers */
  int too_many;
} terms;

/* v, read by `reader` alone, is Gather(table, ids) on axis 0 of a float32 matrix, of shape x's. */
static int is_gather_term(ft_fuse_ctx *c, int v, int reader, int x) {
  ft_graph *g = c->g;
  int ga = tf_prod(g, v, "Gather");
  if (ga < 0 || tf_sole_reader(c, v) != reader || ft_attr_int(&g->nodes[ga], "axis", 0) != 0 || !tf_same_shape(g, v, x)) return -1;
  const ft_value *tab = &g->vals[g->nodes[ga].in[0]], *ids = &g->vals[g->nodes[ga].in[1]];
  if (tab->t.dtype != FT_FLOAT || tab->t.rank != 2 || (ids->t.dtype != FT_INT64 && ids->t.dtype != FT_INT32)) return -1;
  return ga;
}

/* Split v, read by node `reader`, into the terms of the sum x: an Add of x's shape read only
 * inside the tree is opened up; what is neither an Add nor a lookup is a dense term. */
static void collect(ft_fuse_ctx *c, int v, int reader, int x, terms *t, int depth) {
  ft_graph *g = c->g;
  int a = tf_prod(g, v, "Add"), ga;
  if (a >= 0 && depth < 6 && tf_sole_reader(c, v) == reader && tf_same_shape(g, v, x)) {
    t->nodes[t->n_nodes++] = a;
    collect(c, g->nodes[a].in[0], a, x, t, depth + 1);
    collect(c, g->nodes[a].in[1], a, x, t, depth + 1);
  } else if ((ga = is_gather_term(c, v, reader, x)) >= 0 && t->n_gather < FT_ELN_MAX_GATHER) {
    t->nodes[t->n_nodes++] = ga;
    t->table[t->n_gather] = g->nodes[ga].in[0];
    t->ids[t->n_gather++] = g->nodes[ga].in[1];
  } else if (t->n_dense < 2)
    t->dense[t->n_dense++] = v;
  else
    t->too_many = 1;
}

/* dims of d, aligned right against y's, are 1 up to some axis and y's from there on */
static int broadcasts_over_rows(const ft_graph *g, int d, int y) {
  const ft_tensor *a = &g->vals[d].t, *b = &g->vals[y].t;
  if (a->dtype != FT_FLOAT || a->rank < 1 || a->rank > b->rank || a->dims[a->rank - 1] != b->dims[b->rank - 1]) return 0;
  int off = b->rank - a->rank, full = 0;
  for (int i = 0; i < a->rank; i++) {
    if (a->dims[i] == b->dims[off + i] && (a->dims[i] != 1 || full)) full = 1;
    else if (a->dims[i] != 1 || full) return 0;
  }
  return 1;
}

/* Two constant dense terms of one shape: their sum, a new constant (with a use count). */
static int add_consts(ft_fuse_ctx *c, int a, int b) {
  ft_graph *g = c->g;
  const ft_tensor *x = &g->vals[a].t, *y = &g->vals[b].t;
  ft_tensor s = *x;
  size_t n = (size_t)ft_numel(x);
  float *d = malloc(sizeof(float) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) d[i] = ((const float *)x->data)[i] + ((const float *)y->data)[i];
  s.data = d;
  char name[512];
  snprintf(name, sizeof name, "%s+%s", g->vals[a].name ? g->vals[a].name : "", g->vals[b].name ? g->vals[b].name : "");
  int v = ft_add_const(g, name, &s);
  free(d);
  c->n_uses = realloc(c->n_uses, sizeof(int) * (size_t)(g->n_vals + 1));
  c->n_uses[v] = 0;
  return v;
}

int ft_fuse_embed_layernorm(ft_fuse_ctx *c) {
  ft_graph *g = c->g;
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    tf_ln m;
    if (g->nodes[i].dead || !tf_match_ln(c, i, &m, 0)) continue;
    int root = tf_prod(g, m.x, "Add");
    if (root < 0) continue;
    terms t = {0};
    t.nodes[t.n_nodes++] = root;
    for (int k = 0; k < 2; k++) collect(c, g->nodes[root].in[k], root, m.x, &t, 0);
    if (!t.n_gather) continue; /* no lookup: not an embedding (skip_layernorm's business) */
    if (t.too_many) {
      ft_fuse_note(c, root, "embedding sum has a term that is neither a Gather nor one dense tensor");
      continue;
    }
    int dense = t.n_dense ? t.dense[0] : -1;
    if (t.n_dense == 2) {
      const ft_value *d0 = &g->vals[t.dense[0]], *d1 = &g->vals[t.dense[1]];
      if (!d0->t.data || !d1->t.data || !tf_same_shape(g, t.dense[0], t.dense[1]) || d0->t.dtype != FT_FLOAT ||
          d1->t.dtype != FT_FLOAT) {
        ft_fuse_note(c, root, "embedding sum has two dense terms that are not constants of one shape");
        continue;
      }
    }
    if (dense >= 0 && !broadcasts_over_rows(g, dense, m.x)) {
      ft_fuse_note(c, root, "the dense term of the embedding sum does not broadcast over leading dims");
      continue;
    }
    if (!tf_ready(g, m.gamma, root) || !tf_ready(g, m.beta, root) || !tf_ready(g, dense, root)) {
      ft_fuse_note(c, root, "the layer norm's scale or shift is computed after the embedding sum");
      continue;
    }
    if (t.n_dense == 2) dense = add_consts(c, t.dense[0], t.dense[1]);
    int ins[3 + 2 * FT_ELN_MAX_GATHER] = {m.gamma, m.beta, dense};
    for (int k = 0; k < t.n_gather; k++) {
      ins[3 + 2 * k] = t.ids[k];
      ins[4 + 2 * k] = t.table[k];
    }
    int dead[TF_MAX_NODES + 2 * FT_ELN_MAX_GATHER + 8], nd = 0;
    for (int j = 0; j < m.n; j++) dead[nd++] = m.nodes[j];
    for (int j = 0; j < t.n_nodes; j++) dead[nd++] = t.nodes[j];
    int sum_read = tf_outside_uses(c, m.x, m.nodes, m.n) > 0, outs[2] = {m.y, m.x};
    ft_node *n = tf_rewrite(c, root, "EmbedLayerNorm", ins, 3 + 2 * t.n_gather, outs, sum_read ? 2 : 1, dead, nd);
    ft_node_set_float(n, "epsilon", m.eps);
  }
  return 0;
}

/* Helpers of the transformer fusions: see fuse_tf.h. */
#include "fuse_tf.h"

#include <stdlib.h>
#include <string.h>

int tf_is(const ft_graph *g, int i, const char *dom, const char *op) {
  return i >= 0 && !g->nodes[i].dead && !strcmp(g->nodes[i].domain, dom) && !strcmp(g->nodes[i].op_type, op);
}

int tf_prod(const ft_graph *g, int v, const char *op) {
  int p = ft_producer(g, v);
  return ft_is_op(g, p, op) ? p : -1;
}

int tf_other(const ft_graph *g, int i, int v) {
  if (i < 0) return -1;
  const ft_node *n = &g->nodes[i];
  if (n->n_in != 2) return -1;
  if (n->in[0] == v) return n->in[1];
  if (n->in[1] == v) return n->in[0];
  return -1;
}

int tf_sole_reader(ft_fuse_ctx *c, int v) {
  if (v < 0 || c->n_uses[v] != 1) return -1;
  int r;
  return ft_consumers(c->g, v, &r, 1) == 1 ? r : -1;
}

int tf_outside_uses(ft_fuse_ctx *c, int v, const int *nodes, int n) {
  int inside = 0;
  for (int j = 0; j < n; j++) {
    const ft_node *nd = &c->g->nodes[nodes[j]];
    for (int k = 0; k < nd->n_in; k++) inside += nd->in[k] == v;
  }
  return c->n_uses[v] - inside;
}

int tf_private(ft_fuse_ctx *c, const int *nodes, int n, int keep) {
  for (int j = 0; j < n; j++) {
    const ft_node *nd = &c->g->nodes[nodes[j]];
    for (int k = 0; k < nd->n_out; k++) {
      int o = nd->out[k];
      if (o >= 0 && o != keep && tf_outside_uses(c, o, nodes, n) > 0) return 0;
    }
  }
  return 1;
}

int tf_same_shape(const ft_graph *g, int a, int b) {
  const ft_value *x = &g->vals[a], *y = &g->vals[b];
  if (!x->shape_known || !y->shape_known || x->t.rank != y->t.rank) return 0;
  for (int d = 0; d < x->t.rank; d++) if (x->t.dims[d] != y->t.dims[d]) return 0;
  return 1;
}

int tf_row(const ft_graph *g, int v, int64_t n, int max_rank) {
  if (v < 0) return 0;
  const ft_value *x = &g->vals[v];
  if (!x->shape_known || x->t.dtype != FT_FLOAT || x->t.rank < 1 || x->t.rank > max_rank) return 0;
  for (int d = 0; d < x->t.rank - 1; d++) if (x->t.dims[d] != 1) return 0;
  return x->t.dims[x->t.rank - 1] == n;
}

int tf_ready(const ft_graph *g, int v, int at) {
  if (v < 0) return 1;
  const ft_value *x = &g->vals[v];
  if (x->t.data || x->kind != FT_V_ACT) return 1;
  return x->producer >= 0 && x->producer < at && !g->nodes[x->producer].dead;
}

int tf_const_near(const ft_graph *g, int v, double want, double tol) { return ft_const_is(g, v, want, tol); }

ft_node *tf_rewrite(ft_fuse_ctx *c, int at, const char *op_type, const int *ins, int n_in, const int *outs,
                    int n_out, const int *dead, int n_dead) {
  ft_graph *g = c->g;
  ft_node *n = ft_fuse_rewrite(c, at, op_type, ins, n_in, dead, n_dead);
  for (int k = 0; k < n->n_out; k++) {
    int o = n->out[k], kept = 0;
    for (int j = 0; j < n_out; j++) kept |= outs[j] == o;
    if (o >= 0 && !kept) g->vals[o].producer = -1;
  }
  n->out = realloc(n->out, sizeof(int) * (size_t)(n_out ? n_out : 1));
  n->n_out = n_out;
  for (int j = 0; j < n_out; j++) {
    n->out[j] = outs[j];
    if (outs[j] >= 0) g->vals[outs[j]].producer = at;
  }
  return n;
}

/* ---- layer norm ------------------------------------------------------------------------ */

/* ReduceMean node i averages over the last axis only and keeps it. */
static int mean_last_axis(const ft_graph *g, int i) {
  const ft_node *n = &g->nodes[i];
  int rank = g->vals[n->in[0]].t.rank;
  if (ft_attr_int(n, "keepdims", 1) != 1) return 0;
  const int64_t *axes;
  int na = ft_attr_ints(n, "axes", &axes);
  int64_t ax;
  if (na >= 0) { /* opset < 18 */
    if (na != 1) return 0;
    ax = axes[0];
  } else if (n->n_in > 1 && n->in[1] >= 0) { /* opset 18: an input */
    const ft_tensor *t = &g->vals[n->in[1]].t;
    if (!t->data || ft_numel(t) != 1) return 0;
    ax = ft_const_int(t, 0);
  } else /* no axes: all of them, which is the last only for rank 1 */
    return rank == 1 && !ft_attr_int(n, "noop_with_empty_axes", 0);
  return ax == -1 || ax == rank - 1;
}

static void add_node(tf_ln *m, int i) {
  for (int j = 0; j < m->n; j++) if (m->nodes[j] == i) return;
  if (m->n < TF_MAX_NODES) m->nodes[m->n++] = i;
}

/* x - mean(x) with the mean a ReduceMean of the same x: the Sub node, x in *x; else -1. */
static int centered(const ft_graph *g, int v, int *x, int *mean) {
  int s = tf_prod(g, v, "Sub");
  if (s < 0) return -1;
  int mu = tf_prod(g, g->nodes[s].in[1], "ReduceMean");
  if (mu < 0 || g->nodes[mu].in[0] != g->nodes[s].in[0]) return -1;
  *x = g->nodes[s].in[0];
  *mean = mu;
  return s;
}

/* Mul node mg is norm * gamma, norm = Div(d, Sqrt(..)) or Mul(d, Reciprocal(Sqrt(..))): the
 * Div or Mul node in *q, the Reciprocal (or -1), d and the Sqrt's output. */
static int norm_times_gamma(const ft_graph *g, int mg, int *q, int *recip, int *d, int *sd, int *gamma) {
  for (int j = 0; j < 2; j++) {
    int p = ft_producer(g, g->nodes[mg].in[j]);
    if (ft_is_op(g, p, "Div") && tf_prod(g, g->nodes[p].in[1], "Sqrt") >= 0) {
      *q = p; *recip = -1; *d = g->nodes[p].in[0]; *sd = g->nodes[p].in[1]; *gamma = g->nodes[mg].in[1 - j];
      return 1;
    }
    if (!ft_is_op(g, p, "Mul")) continue;
    for (int r = 0; r < 2; r++) {
      int rc = tf_prod(g, g->nodes[p].in[r], "Reciprocal");
      if (rc < 0 || tf_prod(g, g->nodes[rc].in[0], "Sqrt") < 0) continue;
      *q = p; *recip = rc; *d = g->nodes[p].in[1 - r]; *sd = g->nodes[rc].in[0]; *gamma = g->nodes[mg].in[1 - j];
      return 1;
    }
  }
  return 0;
}

/* The exporters' chain ending at node i (Add(beta) or Mul(gamma)). */
static int match_chain(ft_fuse_ctx *c, int i, tf_ln *m, int notes) {
  ft_graph *g = c->g;
  const ft_node *ni = &g->nodes[i];
  int mg = -1, beta = -1, gamma = -1, q = -1, recip = -1, d1v = -1, sdv = -1;
  if (ft_is_op(g, i, "Add") && ni->n_in == 2) {
    for (int k = 0; k < 2 && mg < 0; k++) {
      int cand = tf_prod(g, ni->in[k], "Mul");
      if (cand >= 0 && norm_times_gamma(g, cand, &q, &recip, &d1v, &sdv, &gamma)) { mg = cand; beta = ni->in[1 - k]; }
    }
  } else if (ft_is_op(g, i, "Mul") && norm_times_gamma(g, i, &q, &recip, &d1v, &sdv, &gamma)) {
    /* a Mul(gamma) whose only reader adds a shift: the chain ends at that Add, not here */
    int r = tf_sole_reader(c, ni->out[0]), sh = tf_other(g, r, ni->out[0]);
    const ft_value *xv = &g->vals[ni->out[0]];
    if (ft_is_op(g, r, "Add") && xv->t.rank >= 1 && tf_row(g, sh, xv->t.dims[xv->t.rank - 1], xv->t.rank)) return 0;
    mg = i;
  }
  if (mg < 0) return 0;
  int sd = tf_prod(g, sdv, "Sqrt");
  int ve = sd >= 0 ? tf_prod(g, g->nodes[sd].in[0], "Add") : -1;
  if (ve < 0) return 0;
  int var = -1, eps = -1;
  for (int k = 0; k < 2 && var < 0; k++) {
    var = tf_prod(g, g->nodes[ve].in[k], "ReduceMean");
    eps = g->nodes[ve].in[1 - k];
  }
  if (var < 0) return 0;
  int sqv = g->nodes[var].in[0], sq = tf_prod(g, sqv, "Pow"), d2v = -1;
  if (sq >= 0) {
    d2v = g->nodes[sq].in[0];
    if (!tf_const_near(g, g->nodes[sq].in[1], 2.0, 1e-6)) {
      if (notes) ft_fuse_note(c, i, "variance of a power other than 2");
      return 0;
    }
  } else if ((sq = tf_prod(g, sqv, "Mul")) >= 0 && g->nodes[sq].in[0] == g->nodes[sq].in[1])
    d2v = g->nodes[sq].in[0];
  else return 0;
  int x1, x2, mu1, mu2;
  int d1 = centered(g, d1v, &x1, &mu1), d2 = centered(g, d2v, &x2, &mu2);
  if (d1 < 0 || d2 < 0) return 0;
  if (x1 != x2) {
    if (notes) ft_fuse_note(c, i, "the two centered values x - mean come from different tensors");
    return 0;
  }
  memset(m, 0, sizeof *m);
  m->x = x1;
  m->gamma = gamma;
  m->beta = beta;
  m->y = ni->out[0];
  int nodes[] = {i, mg, q, recip, sd, ve, var, sq, d1, d2, mu1, mu2};
  for (size_t j = 0; j < sizeof nodes / sizeof nodes[0]; j++) if (nodes[j] >= 0) add_node(m, nodes[j]);
  /* the structure is a layer norm: from here on a failed check is a near-miss */
  const ft_value *xv = &g->vals[m->x];
  if (xv->t.dtype != FT_FLOAT || xv->t.rank < 1) {
    if (notes) ft_fuse_note(c, i, "x is %s of rank %d; float32 of rank >= 1 is fused", ft_dtype_name(xv->t.dtype), xv->t.rank);
    return 0;
  }
  int64_t H = xv->t.dims[xv->t.rank - 1];
  if (!mean_last_axis(g, mu1) || !mean_last_axis(g, mu2) || !mean_last_axis(g, var)) {
    if (notes) ft_fuse_note(c, i, "a mean is over axes other than the last one (or drops it): only last-axis layer norms fuse");
    return 0;
  }
  double e;
  if (!ft_const_scalar(g, eps, &e) || !(e >= 0)) {
    if (notes) ft_fuse_note(c, i, "epsilon is not a constant scalar >= 0");
    return 0;
  }
  m->eps = (float)e;
  if (!tf_row(g, gamma, H, xv->t.rank) || (beta >= 0 && !tf_row(g, beta, H, xv->t.rank))) {
    if (notes) ft_fuse_note(c, i, "scale or shift is not float32 [%lld] (one value per element of the last axis)", (long long)H);
    return 0;
  }
  if (!tf_same_shape(g, m->y, m->x)) {
    if (notes) ft_fuse_note(c, i, "the result's shape differs from x's (broadcasting)");
    return 0;
  }
  if (!tf_private(c, m->nodes, m->n, m->y)) {
    if (notes) ft_fuse_note(c, i, "an intermediate of the layer norm is read elsewhere");
    return 0;
  }
  return 1;
}

int tf_match_ln(ft_fuse_ctx *c, int i, tf_ln *m, int notes) {
  ft_graph *g = c->g;
  memset(m, 0, sizeof *m);
  if (i < 0 || g->nodes[i].dead) return 0;
  const ft_node *n = &g->nodes[i];
  if (tf_is(g, i, "ftax", "LayerNorm")) {
    memset(m, 0, sizeof *m);
    m->x = n->in[0];
    m->gamma = n->in[1];
    m->beta = n->n_in > 2 ? n->in[2] : -1;
    m->eps = ft_attr_float(n, "epsilon", 1e-5f);
    m->y = n->out[0];
    m->nodes[m->n++] = i;
    return 1;
  }
  if (tf_is(g, i, "", "LayerNormalization")) {
    const ft_value *xv = &g->vals[n->in[0]];
    if (xv->t.dtype != FT_FLOAT || xv->t.rank < 1) return 0;
    int rank = xv->t.rank;
    int64_t axis = ft_attr_int(n, "axis", -1), H = xv->t.dims[rank - 1];
    if (axis != -1 && axis != rank - 1) {
      if (notes) ft_fuse_note(c, i, "normalizes from axis %lld, not over the last axis only", (long long)axis);
      return 0;
    }
    for (int k = 1; k < n->n_out; k++)
      if (n->out[k] >= 0 && c->n_uses[n->out[k]] > 0) {
        if (notes) ft_fuse_note(c, i, "its Mean or InvStdDev output is read");
        return 0;
      }
    int beta = n->n_in > 2 ? n->in[2] : -1;
    if (!tf_row(g, n->in[1], H, rank) || (beta >= 0 && !tf_row(g, beta, H, rank))) {
      if (notes) ft_fuse_note(c, i, "scale or bias is not float32 [%lld]", (long long)H);
      return 0;
    }
    memset(m, 0, sizeof *m);
    m->x = n->in[0];
    m->gamma = n->in[1];
    m->beta = beta;
    m->eps = ft_attr_float(n, "epsilon", 1e-5f);
    m->y = n->out[0];
    m->nodes[m->n++] = i;
    return 1;
  }
  return match_chain(c, i, m, notes);
}

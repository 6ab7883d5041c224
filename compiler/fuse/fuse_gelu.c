/* Fusion pass `gelu`: the GELU formulas exporters spell out in primitive ops become one
 * ftax.Gelu(x) (attribute approximate):
 *
 *   erf form   x * 0.5 * (1 + Erf(x / sqrt(2)))          (x * (1/sqrt(2)) as well)
 *   tanh form  0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   (GPT-2's gelu_new;
 *              x^3 as Pow(x, 3) or x * x * x)
 *
 * The product of x, 0.5 and (1 + ...) is recognized in every order and grouping, and the native
 * Gelu of opset 20 is rewritten too (same kernel). Every constant is checked against its value
 * within a tolerance; every intermediate must be read by the pattern alone. The match is anchored
 * at the Erf or Tanh. */
#include <math.h>
#include <stdio.h>

#include "fuse_tf.h"

#define TOL 1e-4   /* sqrt(2), sqrt(2/pi): float32 roundings of irrational numbers */
#define EXACT 1e-6 /* 0.5, 1, 3, 0.044715 */

typedef struct gm {
  int nodes[TF_MAX_NODES], n;
} gm;

static void push(gm *m, int i) {
  if (i >= 0 && m->n < TF_MAX_NODES) m->nodes[m->n++] = i;
}

/* Node is a Mul of a and a scalar constant near want. */
static int mul_by_const(ft_fuse_ctx *c, int node, int a, double want, double tol) {
  if (!ft_is_op(c->g, node, "Mul")) return 0;
  int o = tf_other(c->g, node, a);
  return o >= 0 && tf_const_near(c->g, o, want, tol);
}

/* p = 1 + f(...) is done; find the product x * 0.5 * p in any order. Appends the nodes, sets the
 * final node; 0 when the product is not there. */
static int product_tail(ft_fuse_ctx *c, int x, int p, gm *m, int *final) {
  ft_graph *g = c->g;
  int r = tf_sole_reader(c, p);
  if (!ft_is_op(g, r, "Mul")) return 0;
  int o = tf_other(g, r, p), out = g->nodes[r].out[0];
  push(m, r);
  if (o == x) { /* (x * p) * 0.5 */
    int r2 = tf_sole_reader(c, out);
    if (!mul_by_const(c, r2, out, 0.5, EXACT)) return 0;
    push(m, r2);
    *final = r2;
    return 1;
  }
  if (tf_const_near(g, o, 0.5, EXACT)) { /* (0.5 * p) * x */
    int r2 = tf_sole_reader(c, out);
    if (!ft_is_op(g, r2, "Mul") || tf_other(g, r2, out) != x) return 0;
    push(m, r2);
    *final = r2;
    return 1;
  }
  int h = ft_producer(g, o); /* (x * 0.5) * p, the half computed first */
  if (h >= 0 && tf_sole_reader(c, o) == r && mul_by_const(c, h, x, 0.5, EXACT)) {
    push(m, h);
    *final = r;
    return 1;
  }
  return 0;
}

/* The Add reading f's output v as 1 + v: its output, the node appended; else -1. */
static int one_plus(ft_fuse_ctx *c, int v, gm *m) {
  int a = tf_sole_reader(c, v);
  if (!ft_is_op(c->g, a, "Add") || !tf_const_near(c->g, tf_other(c->g, a, v), 1.0, EXACT)) return -1;
  push(m, a);
  return c->g->nodes[a].out[0];
}

static void rewrite(ft_fuse_ctx *c, int x, gm *m, int final, const char *approx) {
  ft_graph *g = c->g;
  const ft_value *xv = &g->vals[x];
  if (xv->t.dtype != FT_FLOAT && xv->t.dtype != FT_DOUBLE) {
    ft_fuse_note(c, final, "GELU of %s: float32 and float64 fuse", ft_dtype_name(xv->t.dtype));
    return;
  }
  if (!tf_same_shape(g, x, g->nodes[final].out[0])) {
    ft_fuse_note(c, final, "GELU whose constants broadcast x to another shape");
    return;
  }
  if (!tf_private(c, m->nodes, m->n, g->nodes[final].out[0])) {
    ft_fuse_note(c, final, "an intermediate of the GELU formula is read elsewhere");
    return;
  }
  ft_node *n = ft_fuse_rewrite(c, final, "Gelu", &x, 1, m->nodes, m->n);
  ft_node_set_string(n, "approximate", approx);
}

/* Erf(u) at node e, u = x / sqrt(2) or x * (1/sqrt(2)). */
static void erf_form(ft_fuse_ctx *c, int e) {
  ft_graph *g = c->g;
  int u = g->nodes[e].in[0], s = ft_producer(g, u), x = -1;
  double k;
  if (ft_is_op(g, s, "Div") && ft_const_scalar(g, g->nodes[s].in[1], &k)) {
    x = g->nodes[s].in[0];
    if (fabs(k - M_SQRT2) > TOL) { ft_fuse_note(c, e, "Erf of x / %g: GELU divides by sqrt(2)", k); return; }
  } else if (ft_is_op(g, s, "Mul")) {
    for (int j = 0; j < 2 && x < 0; j++)
      if (ft_const_scalar(g, g->nodes[s].in[j], &k)) x = g->nodes[s].in[1 - j];
    if (x < 0) return;
    if (fabs(k - M_SQRT1_2) > TOL) { ft_fuse_note(c, e, "Erf of x * %g: GELU multiplies by 1/sqrt(2)", k); return; }
  } else
    return;
  gm m = {0};
  push(&m, s);
  push(&m, e);
  int final = -1, p = one_plus(c, g->nodes[e].out[0], &m);
  if (p < 0 || !product_tail(c, x, p, &m, &final)) {
    ft_fuse_note(c, e, "Erf(x/sqrt(2)) is not used as x * 0.5 * (1 + erf)");
    return;
  }
  rewrite(c, x, &m, final, "none");
}

/* x^3 as Pow(x, 3), x * x * x or x * (x * x): x, nodes appended; else -1. */
static int cube_of(ft_fuse_ctx *c, int v, gm *m) {
  ft_graph *g = c->g;
  int p = ft_producer(g, v);
  if (ft_is_op(g, p, "Pow") && tf_const_near(g, g->nodes[p].in[1], 3.0, EXACT)) {
    push(m, p);
    return g->nodes[p].in[0];
  }
  if (!ft_is_op(g, p, "Mul")) return -1;
  for (int j = 0; j < 2; j++) {
    int sq = ft_producer(g, g->nodes[p].in[j]), x = g->nodes[p].in[1 - j];
    if (ft_is_op(g, sq, "Mul") && g->nodes[sq].in[0] == x && g->nodes[sq].in[1] == x) {
      push(m, p);
      push(m, sq);
      return x;
    }
  }
  return -1;
}

/* Tanh(t) at node th, t = sqrt(2/pi) * (x + 0.044715 * x^3). */
static void tanh_form(ft_fuse_ctx *c, int th) {
  ft_graph *g = c->g;
  int t = g->nodes[th].in[0], s = tf_prod(g, t, "Mul"), inner = -1;
  double k = 0;
  if (s < 0) return;
  for (int j = 0; j < 2 && inner < 0; j++)
    if (ft_const_scalar(g, g->nodes[s].in[j], &k)) inner = g->nodes[s].in[1 - j];
  int a = tf_prod(g, inner, "Add");
  if (a < 0) return;
  gm m = {0};
  int x = -1;
  for (int j = 0; j < 2 && x < 0; j++) { /* x + 0.044715 * x^3 */
    int cand = g->nodes[a].in[j], cm = tf_prod(g, g->nodes[a].in[1 - j], "Mul");
    if (cm < 0) continue;
    for (int q = 0; q < 2 && x < 0; q++) {
      gm mm = {0};
      if (!tf_const_near(g, g->nodes[cm].in[q], 0.044715, EXACT) || cube_of(c, g->nodes[cm].in[1 - q], &mm) != cand) continue;
      x = cand;
      m = mm;
      push(&m, cm);
    }
  }
  if (x < 0) return;
  if (fabs(k - sqrt(2.0 / M_PI)) > TOL) {
    ft_fuse_note(c, th, "Tanh of %g * (x + 0.044715 x^3): GELU's factor is sqrt(2/pi)", k);
    return;
  }
  push(&m, a);
  push(&m, s);
  push(&m, th);
  int final = -1, p = one_plus(c, g->nodes[th].out[0], &m);
  if (p < 0 || !product_tail(c, x, p, &m, &final)) {
    ft_fuse_note(c, th, "Tanh(sqrt(2/pi) (x + 0.044715 x^3)) is not used as 0.5 x (1 + tanh)");
    return;
  }
  rewrite(c, x, &m, final, "tanh");
}

int ft_fuse_gelu(ft_fuse_ctx *c) {
  ft_graph *g = c->g;
  for (int i = 0; i < g->n_nodes; i++) {
    if (ft_is_op(g, i, "Erf")) erf_form(c, i);
    else if (ft_is_op(g, i, "Tanh")) tanh_form(c, i);
    else if (ft_is_op(g, i, "Gelu")) {
      char approx[16]; /* copied: the rewrite frees the node's attributes */
      snprintf(approx, sizeof approx, "%s", ft_attr_str(&g->nodes[i], "approximate", "none"));
      int x = g->nodes[i].in[0];
      ft_node *n = ft_fuse_rewrite(c, i, "Gelu", &x, 1, NULL, 0);
      ft_node_set_string(n, "approximate", approx);
    }
  }
  return 0;
}

/* Fusion: multi-head attention into ftax.Attention (compiler/ops/fused_attention.c).
 *
 * The anchor is a Softmax over the last axis. From it the pass walks
 *   back:    Softmax <- [Add mask] [Where mask] <- [Mul/Div by a constant] <- MatMul(Q', K'')
 *   forward: Softmax -> MatMul(P, V'') -> [Transpose/Reshape]...
 * and then back from Q', K'' and V'' through the views exporters write to split heads
 * (Reshape, Transpose, Split, Slice, Gather of one index, Squeeze/Unsqueeze/Flatten, same-type
 * Cast), and scales on Q' or K'. Those views are not copied: composing them gives, for each of
 * q, k, v, an offset and strides into the tensor they start from (the projection's output, a
 * packed QKV included). The output side is resolved the same way from the last view back, so
 * the kernel writes the merged-heads layout directly.
 *
 * Nothing is taken on trust: every view step is recomputed and checked against the shape
 * inference gave its output; intermediates must have no other reader; scales and fill values
 * must be constant scalars; masks must broadcast to the scores without enlarging them. What
 * looks like attention but fails a check is reported with ft_fuse_note and left alone.
 *
 * When the three projections are MatMul (+ bias Add) of one input with constant weights, they
 * become one GEMM over the concatenated weights, and the kernel reads q, k, v from its output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "fuse.h"

#define MAXCH 24 /* view steps on one path */
#define MAXCORE 16

/* A strided view: element (i0, i1, ...) at off + sum i_d * st[d] of a contiguous buffer. */
typedef struct view {
  int rank;
  int64_t dims[FT_MAX_RANK], st[FT_MAX_RANK], off;
} view;

/* A path of nodes from value vals[n] (the start) to vals[0] (what the attention reads):
 * nodes[i] computes vals[i] from vals[i + 1]. */
typedef struct path {
  int n;
  int nodes[MAXCH];
  int vals[MAXCH + 1];
} path;

static void view_contig(view *v, const ft_tensor *t) {
  v->rank = t->rank;
  v->off = 0;
  int64_t s = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    v->dims[d] = t->dims[d];
    v->st[d] = s;
    s *= t->dims[d];
  }
}

static int view_is(const view *v, const ft_tensor *t) {
  if (v->rank != t->rank) return 0;
  for (int d = 0; d < t->rank; d++) if (v->dims[d] != t->dims[d]) return 0;
  return 1;
}

/* Reinterpret the view with new dims without moving data, if its strides allow (numpy's
 * no-copy reshape): dims are matched in groups of equal product, and each group of old dims
 * must be contiguous among itself. Dims of size 1 carry no stride. */
static int view_reshape(view *v, const int64_t *nd, int nn) {
  int64_t od[FT_MAX_RANK], os[FT_MAX_RANK], ns[FT_MAX_RANK], n_old = 1, n_new = 1;
  int on = 0;
  if (nn > FT_MAX_RANK) return 0;
  for (int d = 0; d < v->rank; d++) {
    if (v->dims[d] <= 0) return 0;
    n_old *= v->dims[d];
    if (v->dims[d] != 1) { od[on] = v->dims[d]; os[on] = v->st[d]; on++; }
  }
  for (int d = 0; d < nn; d++) {
    if (nd[d] <= 0) return 0;
    n_new *= nd[d];
  }
  if (n_old != n_new) return 0;
  int oi = 0, ni = 0;
  while (ni < nn) {
    if (nd[ni] == 1) { ns[ni++] = 0; continue; }
    if (oi >= on) return 0;
    int oj = oi + 1, nj = ni + 1;
    int64_t np = nd[ni], op = od[oi];
    while (np != op) {
      if (np < op) { if (nj >= nn) return 0; np *= nd[nj++]; }
      else { if (oj >= on) return 0; op *= od[oj++]; }
    }
    for (int k = oi; k < oj - 1; k++) if (os[k] != od[k + 1] * os[k + 1]) return 0;
    int64_t s = os[oj - 1];
    for (int k = nj - 1; k >= ni; k--) { ns[k] = nd[k] == 1 ? 0 : s; s *= nd[k]; }
    ni = nj;
    oi = oj;
  }
  if (oi != on) return 0;
  v->rank = nn;
  for (int d = 0; d < nn; d++) { v->dims[d] = nd[d]; v->st[d] = ns[d]; }
  return 1;
}

/* ---- constants ---------------------------------------------------------------------------- */

static int const_ints(const ft_graph *g, int v, int64_t *out, int max) {
  if (v < 0 || !g->vals[v].t.data) return -1;
  const ft_tensor *t = &g->vals[v].t;
  if (t->dtype != FT_INT64 && t->dtype != FT_INT32) return -1;
  int64_t n = ft_numel(t);
  if (n > max) return -1;
  for (int64_t i = 0; i < n; i++) out[i] = ft_const_int(t, i);
  return (int)n;
}

/* A constant scalar that is a float (for scales and fills). */
static int const_float_scalar(const ft_graph *g, int v, double *x) {
  return v >= 0 && (g->vals[v].t.dtype == FT_FLOAT || g->vals[v].t.dtype == FT_DOUBLE) && ft_const_scalar(g, v, x);
}

static int is_float(const ft_graph *g, int v) { return v >= 0 && g->vals[v].t.dtype == FT_FLOAT; }

/* The multiplier a Mul/Div node applies to its data operand, which it returns (-1 if the
 * node is not a scaling by a finite nonzero constant scalar). */
static int scale_op(const ft_graph *g, int node, double *mult) {
  const ft_node *n = &g->nodes[node];
  double x;
  if (n->n_in != 2) return -1;
  if (ft_is_op(g, node, "Div")) {
    if (!const_float_scalar(g, n->in[1], &x) || x == 0 || !isfinite(x) || g->vals[n->in[0]].t.data) return -1;
    *mult = 1.0 / x;
    return n->in[0];
  }
  if (ft_is_op(g, node, "Mul")) {
    for (int k = 0; k < 2; k++)
      if (const_float_scalar(g, n->in[k], &x) && !g->vals[n->in[1 - k]].t.data) {
        if (!isfinite(x) || x == 0) return -1;
        *mult = x;
        return n->in[1 - k];
      }
  }
  return -1;
}

static int same_type_cast(const ft_graph *g, int node) {
  const ft_node *n = &g->nodes[node];
  return ft_is_op(g, node, "Cast") && n->in[0] >= 0 && g->vals[n->in[0]].t.dtype == g->vals[n->out[0]].t.dtype;
}

/* ---- view paths --------------------------------------------------------------------------- */

static int is_view_op(const ft_graph *g, int node) {
  static const char *const ops[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Split", "Gather"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) if (ft_is_op(g, node, ops[i])) return 1;
  return same_type_cast(g, node);
}

/* Walk back from v through views (and, with scales set, constant scalings). */
static void walk_back(const ft_graph *g, int v, int scales, path *p) {
  p->n = 0;
  p->vals[0] = v;
  while (p->n < MAXCH) {
    int node = ft_producer(g, p->vals[p->n]), data = -1;
    double m;
    if (node < 0) break;
    if (is_view_op(g, node)) data = g->nodes[node].in[0];
    else if (scales) data = scale_op(g, node, &m);
    if (data < 0 || g->vals[data].t.data || !is_float(g, data)) break;
    p->nodes[p->n] = node;
    p->vals[++p->n] = data;
  }
}

/* Slice parameters per dim (positive steps only), for the opset's form. */
static int slice_apply(const ft_graph *g, const ft_node *n, view *v) {
  int64_t starts[FT_MAX_RANK], ends[FT_MAX_RANK], axes[FT_MAX_RANK], steps[FT_MAX_RANK];
  int ns, ne, na = -1, nst = -1;
  if (g->opset >= 10) {
    ns = n->n_in > 1 ? const_ints(g, n->in[1], starts, FT_MAX_RANK) : -1;
    ne = n->n_in > 2 ? const_ints(g, n->in[2], ends, FT_MAX_RANK) : -1;
    if (n->n_in > 3 && n->in[3] >= 0 && (na = const_ints(g, n->in[3], axes, FT_MAX_RANK)) < 0) return 0;
    if (n->n_in > 4 && n->in[4] >= 0 && (nst = const_ints(g, n->in[4], steps, FT_MAX_RANK)) < 0) return 0;
  } else {
    const int64_t *a;
    ns = ft_attr_ints(n, "starts", &a);
    if (ns > FT_MAX_RANK) return 0;
    if (ns > 0) memcpy(starts, a, sizeof(int64_t) * (size_t)ns);
    ne = ft_attr_ints(n, "ends", &a);
    if (ne > FT_MAX_RANK) return 0;
    if (ne > 0) memcpy(ends, a, sizeof(int64_t) * (size_t)ne);
    na = ft_attr_ints(n, "axes", &a);
    if (na > FT_MAX_RANK) return 0;
    if (na > 0) memcpy(axes, a, sizeof(int64_t) * (size_t)na);
  }
  if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns)) return 0;
  for (int i = 0; i < ns; i++) {
    int64_t ax = na >= 0 ? axes[i] : i, step = nst >= 0 ? steps[i] : 1;
    if (ax < 0) ax += v->rank;
    if (ax < 0 || ax >= v->rank || step <= 0) return 0;
    int64_t dim = v->dims[ax], s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    s = s < 0 ? 0 : s > dim ? dim : s;
    e = e < 0 ? 0 : e > dim ? dim : e;
    int64_t len = e > s ? (e - s + step - 1) / step : 0;
    v->off += s * v->st[ax];
    v->st[ax] *= step;
    v->dims[ax] = len;
  }
  return 1;
}

/* Apply node (computing value `outv` from the view's tensor) to the view. */
static int view_apply(const ft_graph *g, int node, int outv, view *v) {
  const ft_node *n = &g->nodes[node];
  const ft_tensor *ot = &g->vals[outv].t;
  if (same_type_cast(g, node) || !strcmp(n->op_type, "Mul") || !strcmp(n->op_type, "Div")) {
    /* value-wise: the view is unchanged */
  } else if (!strcmp(n->op_type, "Reshape") || !strcmp(n->op_type, "Flatten") || !strcmp(n->op_type, "Squeeze") ||
             !strcmp(n->op_type, "Unsqueeze")) {
    if (!view_reshape(v, ot->dims, ot->rank)) return 0;
  } else if (!strcmp(n->op_type, "Transpose")) {
    const int64_t *perm;
    int np = ft_attr_ints(n, "perm", &perm);
    view t = *v;
    if (np >= 0 && np != v->rank) return 0;
    for (int d = 0; d < v->rank; d++) {
      int64_t s = np >= 0 ? perm[d] : v->rank - 1 - d;
      if (s < 0 || s >= v->rank) return 0;
      t.dims[d] = v->dims[s];
      t.st[d] = v->st[s];
    }
    *v = t;
  } else if (!strcmp(n->op_type, "Slice")) {
    if (!slice_apply(g, n, v)) return 0;
  } else if (!strcmp(n->op_type, "Split")) {
    int64_t axis = ft_attr_int(n, "axis", 0);
    if (axis < 0) axis += v->rank;
    if (axis < 0 || axis >= v->rank) return 0;
    int64_t before = 0;
    int o = 0;
    for (; o < n->n_out && n->out[o] != outv; o++) {
      if (n->out[o] < 0 || g->vals[n->out[o]].t.rank != v->rank) return 0;
      before += g->vals[n->out[o]].t.dims[axis];
    }
    if (o == n->n_out) return 0;
    v->off += before * v->st[axis];
    v->dims[axis] = ot->rank == v->rank ? ot->dims[axis] : -1;
  } else if (!strcmp(n->op_type, "Gather")) {
    int64_t idx[1] = {0}, axis = ft_attr_int(n, "axis", 0);
    if (const_ints(g, n->in[1], idx, 1) != 1) return 0;
    if (axis < 0) axis += v->rank;
    if (axis < 0 || axis >= v->rank) return 0;
    if (idx[0] < 0) idx[0] += v->dims[axis];
    if (idx[0] < 0 || idx[0] >= v->dims[axis]) return 0;
    const ft_tensor *it = &g->vals[n->in[1]].t;
    view t = *v;
    t.off += idx[0] * v->st[axis];
    t.rank = 0;
    for (int d = 0; d < axis; d++) { t.dims[t.rank] = v->dims[d]; t.st[t.rank++] = v->st[d]; }
    for (int d = 0; d < it->rank; d++) { if (t.rank >= FT_MAX_RANK) return 0; t.dims[t.rank] = 1; t.st[t.rank++] = 0; }
    for (int d = axis + 1; d < v->rank; d++) { if (t.rank >= FT_MAX_RANK) return 0; t.dims[t.rank] = v->dims[d]; t.st[t.rank++] = v->st[d]; }
    *v = t;
  } else {
    return 0;
  }
  return view_is(v, ot); /* must agree with what shape inference says */
}

/* The view of vals[0] starting from vals[cut] (contiguous), and the product of the scalings
 * on the way. */
static int path_view(const ft_graph *g, const path *p, int cut, view *v, double *scale) {
  view_contig(v, &g->vals[p->vals[cut]].t);
  *scale = 1;
  for (int i = cut - 1; i >= 0; i--) {
    double m;
    if (!view_apply(g, p->nodes[i], p->vals[i], v)) return 0;
    if (scale_op(g, p->nodes[i], &m) >= 0) *scale *= m;
  }
  return 1;
}

/* ---- the match ---------------------------------------------------------------------------- */

typedef struct attn {
  int softmax, score_mm, pv_mm, last;
  int core[MAXCORE], n_core; /* nodes between the scores MatMul and the Softmax */
  int out_nodes[MAXCH], n_out;
  int add_mask, add_first;
  int sel_mask, sel_keep, causal;
  int64_t causal_off;
  double fill, scale;
  int64_t dims[6]; /* n1, n2, Sq, Sk, Dk, Dv */
  int src[3];      /* q, k, v source values */
  int64_t qkv[3][5], o[4];
  path pq, pk, pv;
  int cut[3];
} attn;

/* Does value v come from a MatMul through the ops that sit between scores and Softmax? */
static int reaches_matmul(const ft_graph *g, int v, int depth) {
  int node = ft_producer(g, v);
  if (node < 0 || depth > 8) return 0;
  if (ft_is_op(g, node, "MatMul")) return 1;
  const ft_node *n = &g->nodes[node];
  if (!(same_type_cast(g, node) || ft_is_op(g, node, "Add") || ft_is_op(g, node, "Mul") ||
        ft_is_op(g, node, "Div") || ft_is_op(g, node, "Where")))
    return 0;
  for (int k = 0; k < n->n_in; k++)
    if (n->in[k] >= 0 && !g->vals[n->in[k]].t.data && reaches_matmul(g, n->in[k], depth + 1)) return 1;
  return 0;
}

static int single_use(const ft_fuse_ctx *c, int v) { return c->n_uses[v] == 1 && !c->g->vals[v].is_output; }

static int same_dims(const ft_tensor *a, const ft_tensor *b) {
  if (a->rank != b->rank) return 0;
  for (int d = 0; d < a->rank; d++) if (a->dims[d] != b->dims[d]) return 0;
  return 1;
}

/* A boolean mask's source: look through same-type Casts and Expands (the kernel broadcasts). */
static int mask_source(const ft_graph *g, int v) {
  for (int steps = 0; steps < 8; steps++) {
    int node = ft_producer(g, v);
    if (node < 0 || !(same_type_cast(g, node) || ft_is_op(g, node, "Expand"))) break;
    v = g->nodes[node].in[0];
  }
  return v;
}

/* A mask must broadcast to the scores: right-aligned, every dim 1 or equal. */
static int broadcasts_to(const ft_tensor *m, const ft_tensor *s) {
  if (m->rank > s->rank) return 0;
  for (int d = 0; d < m->rank; d++) {
    int64_t e = m->dims[d], want = s->dims[s->rank - m->rank + d];
    if (e != 1 && e != want) return 0;
  }
  return 1;
}

/* A constant boolean mask that keeps exactly j <= i + off (keep value `keep`), the same for
 * every batch and head: the causal mask, with its offset. */
static int is_causal(const ft_graph *g, int v, int keep, const ft_tensor *scores, int64_t *off) {
  const ft_tensor *t = &g->vals[v].t;
  if (!t->data || t->dtype != FT_BOOL || t->rank < 2 || !broadcasts_to(t, scores)) return 0;
  for (int d = 0; d < t->rank - 2; d++) if (t->dims[d] != 1) return 0;
  int64_t sq = t->dims[t->rank - 2], sk = t->dims[t->rank - 1];
  if (sq != scores->dims[scores->rank - 2] || sk != scores->dims[scores->rank - 1]) return 0;
  const uint8_t *m = t->data;
  int64_t kept = 0;
  while (kept < sk && (m[kept] != 0) == keep) kept++;
  *off = kept - 1;
  if (*off < 0) return 0;
  for (int64_t i = 0; i < sq; i++)
    for (int64_t j = 0; j < sk; j++)
      if (((m[i * sk + j] != 0) == keep) != (j <= i + *off)) return 0;
  return 1;
}

/* Walk from the Softmax's input back to the scores MatMul. 1: found, 0: not attention, -1:
 * a near-miss (noted). */
static int match_scores(ft_fuse_ctx *c, attn *a, int x) {
  ft_graph *g = c->g;
  const ft_tensor *st = &g->vals[x].t;
  int v = x, seen_scale = 0, seen_add = 0, seen_sel = 0, sm = a->softmax;
  a->scale = 1;
  for (;;) {
    int node = ft_producer(g, v);
    if (node < 0) return 0;
    const ft_node *n = &g->nodes[node];
    if (ft_is_op(g, node, "MatMul")) {
      a->score_mm = node;
      break;
    }
    if (!single_use(c, v)) {
      ft_fuse_note(c, sm, "the output of %s has other readers", ft_node_label(g, node));
      return -1;
    }
    if (a->n_core == MAXCORE) return 0;
    double m;
    int data;
    if (same_type_cast(g, node)) {
      v = n->in[0];
    } else if ((data = scale_op(g, node, &m)) >= 0) {
      a->scale *= m;
      seen_scale = 1;
      v = data;
    } else if (ft_is_op(g, node, "Add") || ft_is_op(g, node, "Where")) {
      if (!reaches_matmul(g, v, 0)) return 0;
      if (seen_scale) {
        ft_fuse_note(c, sm, "the scores are scaled after the mask (%s)", ft_node_label(g, node));
        return -1;
      }
      int is_add = ft_is_op(g, node, "Add");
      int first = is_add ? 0 : 1, nops = 2, chain = -1, other = -1;
      for (int k = first; k < first + nops; k++)
        if (!g->vals[n->in[k]].t.data && reaches_matmul(g, n->in[k], 0)) {
          if (chain >= 0) {
            ft_fuse_note(c, sm, "both operands of %s come from a MatMul", ft_node_label(g, node));
            return -1;
          }
          chain = k;
        }
      if (chain < 0) return 0;
      other = n->in[is_add ? 1 - chain : 3 - chain];
      if (is_add) {
        if (seen_add) { ft_fuse_note(c, sm, "more than one additive mask"); return -1; }
        const ft_tensor *mt = &g->vals[other].t;
        if (mt->dtype != FT_FLOAT || !broadcasts_to(mt, st)) {
          ft_fuse_note(c, sm, "the additive mask of %s is not float32 broadcastable to the scores", ft_node_label(g, node));
          return -1;
        }
        seen_add = 1;
        a->add_mask = other;
        a->add_first = seen_sel; /* walking backwards: a select seen already comes later */
      } else {
        if (seen_sel) { ft_fuse_note(c, sm, "more than one Where mask"); return -1; }
        double fill;
        if (!const_float_scalar(g, other, &fill)) {
          ft_fuse_note(c, sm, "%s fills with something other than a constant scalar", ft_node_label(g, node));
          return -1;
        }
        int cond = mask_source(g, n->in[0]);
        const ft_tensor *ct = &g->vals[cond].t;
        if (ct->dtype != FT_BOOL || !broadcasts_to(ct, st)) {
          ft_fuse_note(c, sm, "the condition of %s is not a bool tensor broadcastable to the scores", ft_node_label(g, node));
          return -1;
        }
        seen_sel = 1;
        a->fill = fill;
        a->sel_keep = chain == 1; /* scores in Where's "true" branch: kept where the mask is true */
        if (is_causal(g, cond, a->sel_keep, st, &a->causal_off)) a->causal = 1;
        else a->sel_mask = cond;
      }
      v = n->in[chain];
    } else {
      if (reaches_matmul(g, v, 0)) {
        ft_fuse_note(c, sm, "%s sits between the scores and the Softmax", ft_node_label(g, node));
        return -1;
      }
      return 0;
    }
    a->core[a->n_core++] = node;
    if (!same_dims(&g->vals[v].t, st)) { /* v: what this node read */
      ft_fuse_note(c, sm, "%s broadcasts the scores to a larger shape", ft_node_label(g, node));
      return -1;
    }
  }
  if (!single_use(c, v)) {
    ft_fuse_note(c, sm, "the scores (%s) have other readers", ft_node_label(g, a->score_mm));
    return -1;
  }
  return 1;
}

/* Strides of a q/k/v view, normalized to {b1, b2, row, col} over the scores' batch dims
 * (right-aligned, broadcast dims stride 0). rows_last: the view is [.., cols, rows] (K^T). */
static int normalize(const view *v, const ft_tensor *scores, int rows_last, int64_t rows, int64_t cols, int64_t *out) {
  int r = scores->rank, nb = r - 2;
  if (v->rank < 2 || v->rank > r) return 0;
  int64_t vr = v->dims[v->rank - (rows_last ? 1 : 2)], vc = v->dims[v->rank - (rows_last ? 2 : 1)];
  if (vr != rows || vc != cols) return 0;
  int64_t b[2] = {0, 0};
  for (int i = 0; i < nb; i++) {
    int vi = i - (r - v->rank);
    int64_t e = vi >= 0 ? v->dims[vi] : 1, s = vi >= 0 && e != 1 ? v->st[vi] : 0;
    if (e != 1 && e != scores->dims[i]) return 0;
    b[i + (2 - nb)] = s;
  }
  out[0] = v->off;
  out[1] = b[0];
  out[2] = b[1];
  out[3] = rows == 1 ? 0 : v->st[v->rank - (rows_last ? 1 : 2)];
  out[4] = cols == 1 ? 0 : v->st[v->rank - (rows_last ? 2 : 1)];
  return 1;
}

/* q, k or v: the longest path back whose composed view fits; its source and strides. */
static int resolve_operand(const ft_graph *g, int v, int scales, const ft_tensor *scores, int rows_last,
                           int64_t rows, int64_t cols, path *p, int *cut, int *src, int64_t *vw, double *scale) {
  walk_back(g, v, scales, p);
  for (int k = p->n; k >= 0; k--) {
    view w;
    double s;
    if (!path_view(g, p, k, &w, &s)) continue;
    if (!normalize(&w, scores, rows_last, rows, cols, vw)) continue;
    *cut = k;
    *src = p->vals[k];
    *scale *= s;
    return 1;
  }
  return 0;
}

/* Output: follow single-reader Transpose/Reshape steps from the P.V product, then find the
 * longest of them whose layout keeps each output row contiguous. */
static int resolve_output(ft_fuse_ctx *c, attn *a, const ft_tensor *scores) {
  ft_graph *g = c->g;
  int vals[MAXCH + 1], nodes[MAXCH], n = 0;
  vals[0] = g->nodes[a->pv_mm].out[0];
  while (n < MAXCH && single_use(c, vals[n])) {
    int next;
    if (ft_consumers(g, vals[n], &next, 1) != 1) break;
    const ft_node *nn = &g->nodes[next];
    if (!(ft_is_op(g, next, "Transpose") || ft_is_op(g, next, "Reshape") || ft_is_op(g, next, "Flatten") ||
          ft_is_op(g, next, "Squeeze") || ft_is_op(g, next, "Unsqueeze")) || nn->in[0] != vals[n] || nn->out[0] < 0)
      break;
    int again = 0;
    for (int k = 1; k < nn->n_in; k++) again |= nn->in[k] == vals[n];
    if (again) break;
    nodes[n] = next;
    vals[++n] = nn->out[0];
  }
  for (int k = n; k >= 0; k--) {
    view w;
    view_contig(&w, &g->vals[vals[k]].t);
    int ok = 1;
    for (int i = k - 1; i >= 0 && ok; i--) { /* undo node i: from vals[i+1] back to vals[i] */
      const ft_node *nd = &g->nodes[nodes[i]];
      const ft_tensor *in = &g->vals[vals[i]].t;
      if (!strcmp(nd->op_type, "Transpose")) {
        const int64_t *perm;
        int np = ft_attr_ints(nd, "perm", &perm);
        view t = w;
        if (np >= 0 && np != w.rank) { ok = 0; break; }
        for (int d = 0; d < w.rank; d++) {
          int64_t s = np >= 0 ? perm[d] : w.rank - 1 - d;
          if (s < 0 || s >= w.rank) { ok = 0; break; }
          t.dims[s] = w.dims[d];
          t.st[s] = w.st[d];
        }
        w = t;
      } else {
        ok = view_reshape(&w, in->dims, in->rank);
      }
      ok = ok && view_is(&w, in);
    }
    if (!ok) continue;
    int64_t vw[5];
    if (!normalize(&w, scores, 0, a->dims[2], a->dims[5], vw)) continue;
    if (a->dims[5] > 1 && vw[4] != 1) continue; /* the GEMM writes rows with unit stride */
    memcpy(a->o, vw, sizeof a->o);
    a->n_out = k;
    memcpy(a->out_nodes, nodes, sizeof(int) * (size_t)k);
    a->last = k ? nodes[k - 1] : a->pv_mm;
    return 1;
  }
  return 0;
}

static int match(ft_fuse_ctx *c, int sm, attn *a) {
  ft_graph *g = c->g;
  memset(a, 0, sizeof *a);
  a->softmax = sm;
  a->add_mask = a->sel_mask = -1;
  const ft_node *smn = &g->nodes[sm];
  int x = smn->in[0], y = smn->out[0];
  if (x < 0 || y < 0) return 0;
  const ft_tensor *st = &g->vals[x].t;
  if (!reaches_matmul(g, x, 0)) return 0; /* not attention-like: say nothing */
  if (st->dtype != FT_FLOAT) { ft_fuse_note(c, sm, "scores are %s, not float32", ft_dtype_name(st->dtype)); return 0; }
  if (st->rank < 2 || st->rank > 4) { ft_fuse_note(c, sm, "scores of rank %d (2 to 4 fuse)", st->rank); return 0; }
  int64_t axis = ft_attr_int(smn, "axis", g->opset < 13 ? 1 : -1);
  if (axis < 0) axis += st->rank;
  if (axis != st->rank - 1) {
    ft_fuse_note(c, sm, "softmax over axis %lld, not the last", (long long)axis);
    return 0;
  }
  if (match_scores(c, a, x) <= 0) return 0;
  const ft_node *qk = &g->nodes[a->score_mm];
  /* P.V */
  int pv;
  if (!single_use(c, y) || ft_consumers(g, y, &pv, 1) != 1 || !ft_is_op(g, pv, "MatMul") || g->nodes[pv].in[0] != y ||
      g->nodes[pv].in[1] == y) {
    ft_fuse_note(c, sm, "the probabilities are not read by one MatMul as its left operand");
    return 0;
  }
  a->pv_mm = pv;
  const ft_tensor *qt = &g->vals[qk->in[0]].t, *kt = &g->vals[qk->in[1]].t;
  const ft_tensor *vt = &g->vals[g->nodes[pv].in[1]].t, *ot = &g->vals[g->nodes[pv].out[0]].t;
  int r = st->rank;
  if (qt->rank < 2 || kt->rank < 2 || vt->rank < 2 || ot->rank != r) {
    ft_fuse_note(c, sm, "q, k or v is not a batch of matrices");
    return 0;
  }
  int64_t sq = st->dims[r - 2], sk = st->dims[r - 1], dk = qt->dims[qt->rank - 1], dv = vt->dims[vt->rank - 1];
  if (vt->dims[vt->rank - 2] != sk || ot->dims[r - 1] != dv || ot->dims[r - 2] != sq) {
    ft_fuse_note(c, sm, "P.V has unexpected dims");
    return 0;
  }
  for (int d = 0; d < r - 2; d++)
    if (ot->dims[d] != st->dims[d]) { ft_fuse_note(c, sm, "P.V broadcasts its batch dims"); return 0; }
  a->dims[0] = r == 4 ? st->dims[0] : 1;
  a->dims[1] = r >= 3 ? st->dims[r - 3] : 1;
  a->dims[2] = sq; a->dims[3] = sk; a->dims[4] = dk; a->dims[5] = dv;
  for (int i = 0; i < 6; i++)
    if (a->dims[i] < 1) { ft_fuse_note(c, sm, "an empty dim"); return 0; }
  if (!is_float(g, qk->in[0]) || !is_float(g, qk->in[1]) || !is_float(g, g->nodes[pv].in[1])) {
    ft_fuse_note(c, sm, "q, k and v must be float32");
    return 0;
  }
  int64_t rg, kb;
  if (!ft_attention_tiles(a->dims[0], a->dims[1], sq, sk, dk, dv, &rg, &kb)) {
    ft_fuse_note(c, sm, "head size %lld is too large for the kernel", (long long)dv);
    return 0;
  }
  if (!resolve_operand(g, qk->in[0], 1, st, 0, sq, dk, &a->pq, &a->cut[0], &a->src[0], a->qkv[0], &a->scale) ||
      !resolve_operand(g, qk->in[1], 1, st, 1, sk, dk, &a->pk, &a->cut[1], &a->src[1], a->qkv[1], &a->scale) ||
      !resolve_operand(g, g->nodes[pv].in[1], 0, st, 0, sk, dv, &a->pv, &a->cut[2], &a->src[2], a->qkv[2], &a->scale)) {
    ft_fuse_note(c, sm, "q, k or v is not a strided view of a tensor");
    return 0;
  }
  if (!resolve_output(c, a, st)) {
    ft_fuse_note(c, sm, "the output layout cannot be written row by row");
    return 0;
  }
  return 1;
}

/* ---- rewrite ------------------------------------------------------------------------------ */

/* Mark node dead if nothing reads its outputs any more (and again for its producers). */
static void drop_if_unused(ft_fuse_ctx *c, int node, int depth) {
  ft_graph *g = c->g;
  if (node < 0 || g->nodes[node].dead || depth > MAXCH) return;
  ft_node *n = &g->nodes[node];
  for (int k = 0; k < n->n_out; k++)
    if (n->out[k] >= 0 && (c->n_uses[n->out[k]] || g->vals[n->out[k]].is_output)) return;
  int follow = is_view_op(g, node) || ft_is_op(g, node, "Mul") || ft_is_op(g, node, "Div") || ft_is_op(g, node, "Expand");
  n->dead = 1;
  for (int k = 0; k < n->n_in; k++) {
    if (n->in[k] < 0) continue;
    c->n_uses[n->in[k]]--;
    if (follow) drop_if_unused(c, ft_producer(g, n->in[k]), depth + 1);
  }
}

static void grow_uses(ft_fuse_ctx *c) {
  c->n_uses = realloc(c->n_uses, sizeof(int) * (size_t)(c->g->n_vals + 1));
}

static const char *mask_name(const attn *a) {
  const char *sel = a->causal ? "causal" : a->sel_mask >= 0 ? "select" : NULL;
  if (a->add_mask >= 0 && sel) return a->add_first ? (a->causal ? "add+causal" : "add+select") : (a->causal ? "causal+add" : "select+add");
  return a->add_mask >= 0 ? "add" : sel ? sel : "none";
}

static void rewrite(ft_fuse_ctx *c, attn *a) {
  ft_graph *g = c->g;
  int dead[MAXCORE + MAXCH + 4], nd = 0;
  dead[nd++] = a->score_mm;
  for (int i = 0; i < a->n_core; i++) dead[nd++] = a->core[i];
  dead[nd++] = a->softmax;
  dead[nd++] = a->pv_mm;
  for (int i = 0; i < a->n_out; i++) dead[nd++] = a->out_nodes[i];
  /* the masks: the Where's condition source, the Add's mask operand */
  int ins[5] = {a->src[0], a->src[1], a->src[2], a->add_mask, a->sel_mask};
  int n_in = a->sel_mask >= 0 ? 5 : a->add_mask >= 0 ? 4 : 3;
  char name[512];
  const char *smname = g->nodes[a->softmax].name ? g->nodes[a->softmax].name : "";
  const char *slash = strrchr(smname, '/');
  snprintf(name, sizeof name, "%.*sAttention", slash ? (int)(slash - smname + 1) : 0, smname);
  /* operand producers (the view chains and the mask's Cast/Expand) may die with the core */
  int producers[3 + 2] = {ft_producer(g, g->nodes[a->score_mm].in[0]), ft_producer(g, g->nodes[a->score_mm].in[1]),
                          ft_producer(g, g->nodes[a->pv_mm].in[1]), -1, -1};
  for (int i = 0; i < a->n_core; i++)
    if (ft_is_op(g, a->core[i], "Where")) producers[3] = ft_producer(g, g->nodes[a->core[i]].in[0]);
  ft_node *n = ft_fuse_rewrite(c, a->last, "Attention", ins, n_in, dead, nd);
  free(n->name);
  n->name = strdup(name);
  ft_node_set_ints(n, "dims", a->dims, 6);
  ft_node_set_ints(n, "q_view", a->qkv[0], 5);
  ft_node_set_ints(n, "k_view", a->qkv[1], 5);
  ft_node_set_ints(n, "v_view", a->qkv[2], 5);
  ft_node_set_ints(n, "out_view", a->o, 4);
  const ft_tensor *ot = &g->vals[n->out[0]].t;
  ft_node_set_ints(n, "out_shape", ot->dims, ot->rank);
  ft_node_set_int(n, "num_heads", a->dims[1]);
  ft_node_set_int(n, "head_size", a->dims[4]);
  ft_node_set_float(n, "scale", (float)a->scale);
  ft_node_set_string(n, "mask", mask_name(a));
  if (a->sel_mask >= 0) ft_node_set_int(n, "select_keep", a->sel_keep);
  if (a->causal) ft_node_set_int(n, "causal_offset", a->causal_off);
  if (a->sel_mask >= 0 || a->causal) ft_node_set_float(n, "fill", (float)a->fill);
  for (int i = 0; i < 5; i++) drop_if_unused(c, producers[i], 0);
}

/* ---- QKV: three projections of one input into one GEMM ------------------------------------- */

/* v = MatMul(x, W) [+ bias] with W [E_in, E] and bias [E] constant: the nodes and operands. */
typedef struct proj { int mm, add, x, w, bias, out; } proj;

static int as_projection(ft_fuse_ctx *c, int v, proj *p) {
  ft_graph *g = c->g;
  memset(p, -1, sizeof *p);
  p->out = v;
  int node = ft_producer(g, v);
  if (ft_is_op(g, node, "Add")) {
    const ft_node *n = &g->nodes[node];
    for (int k = 0; k < 2; k++) {
      const ft_tensor *b = &g->vals[n->in[k]].t;
      int m = ft_producer(g, n->in[1 - k]);
      if (b->data && b->dtype == FT_FLOAT && b->rank == 1 && ft_is_op(g, m, "MatMul")) {
        p->add = node;
        p->bias = n->in[k];
        node = m;
        break;
      }
    }
    if (p->add < 0) return 0;
  }
  if (!ft_is_op(g, node, "MatMul")) return 0;
  const ft_node *n = &g->nodes[node];
  const ft_tensor *w = &g->vals[n->in[1]].t, *x = &g->vals[n->in[0]].t;
  if (!w->data || w->dtype != FT_FLOAT || w->rank != 2 || x->rank < 2 || x->dtype != FT_FLOAT) return 0;
  if (p->bias >= 0 && g->vals[p->bias].t.dims[0] != w->dims[1]) return 0;
  if (p->add >= 0 && !single_use(c, n->out[0])) return 0;
  p->mm = node;
  p->x = n->in[0];
  p->w = n->in[1];
  return 1;
}

/* The attention reads each projection only as a whole row block: after merging, the view of
 * q, k or v into the packed [.., 3E] tensor is the old one with rows 3x longer. Recomputed
 * through the same checks on a packed start, rather than patched. */
static int packed_view(const ft_graph *g, const path *p, int cut, const ft_tensor *packed, int64_t col0, view *v) {
  const ft_tensor *t = &g->vals[p->vals[cut]].t;
  view_contig(v, packed);
  v->off = col0;
  v->dims[v->rank - 1] = t->dims[t->rank - 1];
  if (!view_is(v, t)) return 0;
  for (int i = cut - 1; i >= 0; i--)
    if (!view_apply(g, p->nodes[i], p->vals[i], v)) return 0;
  return 1;
}

/* A constant of the three float constants vals side by side along their last axis (rows x
 * e[i] each; rank 2, or rank 1 for one row), named after the first with ".qkv"; -1 when out of
 * memory (nothing changed then). */
static int concat_columns(ft_graph *g, const int *vals, const int64_t *e, int64_t rows, int rank) {
  int64_t etot = e[0] + e[1] + e[2], col = 0;
  ft_tensor t = {FT_FLOAT, rank, {0}, NULL};
  if (rank == 2) t.dims[0] = rows, t.dims[1] = etot;
  else t.dims[0] = etot;
  float *d = malloc(sizeof(float) * (size_t)(rows * etot));
  if (!d) return -1;
  for (int i = 0; i < 3; i++) {
    const float *src = g->vals[vals[i]].t.data;
    for (int64_t r = 0; r < rows; r++) memcpy(d + r * etot + col, src + r * e[i], sizeof(float) * (size_t)e[i]);
    col += e[i];
  }
  t.data = d;
  char name[1024];
  snprintf(name, sizeof name, "%s.qkv", g->vals[vals[0]].name);
  int v = ft_add_const(g, name, &t);
  free(d);
  return v;
}

static void merge_qkv(ft_fuse_ctx *c, attn *a, ft_node **fused) {
  ft_graph *g = c->g;
  proj pr[3];
  for (int i = 0; i < 3; i++) {
    if (!as_projection(c, a->src[i], &pr[i])) return;
    /* only the attention may read the projection */
    if (c->n_uses[a->src[i]] != 1 + (a->src[(i + 1) % 3] == a->src[i]) + (a->src[(i + 2) % 3] == a->src[i])) return;
  }
  if (pr[0].mm == pr[1].mm || pr[0].mm == pr[2].mm || pr[1].mm == pr[2].mm) return;
  if (pr[1].x != pr[0].x || pr[2].x != pr[0].x) return;
  int with_bias = pr[0].bias >= 0;
  if ((pr[1].bias >= 0) != with_bias || (pr[2].bias >= 0) != with_bias) return;
  const ft_tensor *w0 = &g->vals[pr[0].w].t;
  int64_t ein = w0->dims[0], e[3], etot = 0;
  for (int i = 0; i < 3; i++) {
    const ft_tensor *w = &g->vals[pr[i].w].t;
    if (w->dims[0] != ein) return;
    e[i] = w->dims[1];
    etot += e[i];
  }
  /* the packed output and each operand's view into it */
  ft_tensor packed = g->vals[a->src[0]].t;
  packed.data = NULL;
  packed.dims[packed.rank - 1] = etot;
  int64_t vw[3][5], col = 0;
  for (int i = 0; i < 3; i++) {
    view v;
    const path *p = i == 0 ? &a->pq : i == 1 ? &a->pk : &a->pv;
    if (!packed_view(g, p, a->cut[i], &packed, col, &v)) return;
    ft_tensor scores = g->vals[g->nodes[a->softmax].in[0]].t;
    scores.data = NULL;
    if (!normalize(&v, &scores, i == 1, i == 0 ? a->dims[2] : a->dims[3], i == 2 ? a->dims[5] : a->dims[4], vw[i])) return;
    col += e[i];
  }
  /* weights [E_in, Eq+Ek+Ev] and bias [Eq+Ek+Ev] */
  int wsrc[3] = {pr[0].w, pr[1].w, pr[2].w}, bsrc[3] = {pr[0].bias, pr[1].bias, pr[2].bias};
  int wv = concat_columns(g, wsrc, e, ein, 2), bv = -1;
  if (wv < 0) return;
  if (with_bias && (bv = concat_columns(g, bsrc, e, 1, 1)) < 0) return;
  /* the earliest of the three MatMuls (and its Add) computes all three; the others go */
  int first = 0;
  for (int i = 1; i < 3; i++) if (pr[i].mm < pr[first].mm) first = i;
  char vname[1024];
  snprintf(vname, sizeof vname, "%.1000s.qkv", g->vals[g->nodes[pr[first].mm].out[0]].name);
  int mm_out = ft_value_add(g, vname), out = mm_out;
  grow_uses(c);
  c->n_uses[mm_out] = 0;
  ft_node *mm = &g->nodes[pr[first].mm];
  c->n_uses[mm->in[1]]--;
  mm->in[1] = wv;
  c->n_uses[wv] = 1;
  g->vals[mm->out[0]].producer = -1;
  mm->out[0] = mm_out;
  g->vals[mm_out].producer = pr[first].mm;
  if (with_bias) {
    snprintf(vname, sizeof vname, "%.1000s.qkv", g->vals[g->nodes[pr[first].add].out[0]].name);
    int add_out = ft_value_add(g, vname);
    grow_uses(c);
    ft_node *ad = &g->nodes[pr[first].add];
    for (int k = 0; k < 2; k++) c->n_uses[ad->in[k]]--;
    ad->in[0] = mm_out;
    ad->in[1] = bv;
    c->n_uses[mm_out] = 1;
    c->n_uses[bv] = 1;
    g->vals[ad->out[0]].producer = -1;
    ad->out[0] = add_out;
    g->vals[add_out].producer = pr[first].add;
    c->n_uses[add_out] = 0;
    out = add_out;
  } else {
    c->n_uses[mm_out] = 0;
  }
  /* the other projections die; the fused node reads the packed result three times */
  ft_node *n = *fused;
  for (int i = 0; i < 3; i++) {
    c->n_uses[n->in[i]]--;
    n->in[i] = out;
    c->n_uses[out]++;
  }
  for (int i = 0; i < 3; i++) {
    if (i == first) continue;
    drop_if_unused(c, pr[i].add >= 0 ? pr[i].add : pr[i].mm, 0);
    drop_if_unused(c, pr[i].mm, 0);
  }
  /* the old single-projection outputs of the first are not produced any more */
  for (int i = 0; i < 3; i++) {
    ft_attr *at = NULL;
    for (int k = 0; k < n->n_attrs; k++)
      if (!strcmp(n->attrs[k].name, i == 0 ? "q_view" : i == 1 ? "k_view" : "v_view")) at = &n->attrs[k];
    memcpy(at->ints, vw[i], sizeof(int64_t) * 5);
  }
  ft_node_set_int(n, "packed_qkv", 1);
}

/* ---- the pass ----------------------------------------------------------------------------- */

int ft_fuse_attention(ft_fuse_ctx *c); /* listed in fuse.c's table */

int ft_fuse_attention(ft_fuse_ctx *c) {
  ft_graph *g = c->g;
  int n_nodes = g->n_nodes; /* nodes this pass adds are not anchors */
  for (int i = 0; i < n_nodes; i++) {
    if (!ft_is_op(g, i, "Softmax")) continue;
    attn a;
    if (!match(c, i, &a)) continue;
    ft_node *n = NULL;
    rewrite(c, &a);
    n = &g->nodes[a.last];
    merge_qkv(c, &a, &n);
  }
  return 0;
}

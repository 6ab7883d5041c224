/* Stage: shape and dtype inference with constant folding, one sweep in node order.
 * (FT_INFER_SHAPES: the same sweep for the shapes alone, leaving every node in place.)
 *
 * The two cannot be separate stages: exporters compute Reshape targets with Shape → Gather →
 * Concat chains, so a node's output shape is only known once the nodes before it are folded.
 * Folding runs the node's own planned kernel, the code the generated program would run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

/* Evaluate node i, whose inputs are all known, into freshly allocated output data. */
static int fold_node(ft_graph *g, int i, ft_opctx *c, ft_err *e) {
  ft_node *n = &g->nodes[i];
  ft_kcall k;
  memset(&k, 0, sizeof k);
  k.prepack.input = -1;
  const void *in[FT_MAX_IO];
  void *out[FT_MAX_IO];
  for (int j = 0; j < n->n_in; j++) in[j] = c->in[j] ? c->in[j]->data : NULL;
  for (int j = 0; j < n->n_out; j++) {
    out[j] = NULL;
    if (!c->out[j]) continue;
    size_t nb = ft_nbytes(c->out[j]);
    c->out[j]->data = calloc(nb ? nb : 1, 1);
    if (!c->out[j]->data) return ft_fail(e, FT_EIO, "out of memory folding %s", ft_node_label(g, i));
    out[j] = c->out[j]->data;
  }
  if (n->op->flags & FT_OP_ALIAS) { /* a view: same bytes */
    memcpy(out[0], in[0], ft_nbytes(c->out[0]));
    return 0;
  }
  int rc = n->op->plan(c, &k);
  if (rc) return rc;
  return ft_kcall_run(&k, in, out, e);
}

/* What every op's inference must deliver, checked in one place: a data type, sizes that are not
 * negative and fit (ft_size_checked, so no later stage multiplies dims unchecked), and for graph
 * outputs the element type the model declares. */
static int check_outputs(ft_graph *g, int i, ft_err *e) {
  const ft_node *n = &g->nodes[i];
  for (int j = 0; j < n->n_out; j++) {
    if (n->out[j] < 0) continue;
    const ft_value *v = &g->vals[n->out[j]];
    size_t bytes;
    if (!ft_dtype_size(v->t.dtype))
      return ft_fail(e, FT_EUNSUPPORTED, "%s: %s: output '%s' would be of type %s, which ftax does not support", g->path,
                     ft_node_label(g, i), v->name, ft_dtype_name(v->t.dtype));
    int rc = ft_size_checked(v->t.dtype, v->t.rank, v->t.dims, ft_max_tensor_bytes, &bytes);
    if (rc == -1)
      return ft_fail(e, FT_EINVALID, "%s: %s: output '%s' would have a negative dimension (check the node's attributes and inputs)",
                     g->path, ft_node_label(g, i), v->name);
    if (rc)
      return ft_fail(e, FT_EUNSUPPORTED, "%s: %s: output '%s' would take more than %zu bytes; ftax does not support tensors that large",
                     g->path, ft_node_label(g, i), v->name, ft_max_tensor_bytes);
    int shape_differs = v->is_output && v->declared_rank >= 0 && v->declared_rank != v->t.rank;
    for (int d = 0; v->is_output && !shape_differs && d < v->declared_rank; d++)
      shape_differs = v->declared_dims[d] >= 0 && v->declared_dims[d] != v->t.dims[d];
    if (shape_differs) {
      char shp[256];
      ft_shape_str(v, shp, sizeof shp);
      return ft_fail(e, FT_EINVALID, "%s: %s: graph output '%s' has a declared shape the node does not compute (it computes %s)",
                     g->path, ft_node_label(g, i), v->name, shp);
    }
    if (v->declared_dtype && v->declared_dtype != v->t.dtype)
      return ft_fail(e, FT_EINVALID, "%s: %s: '%s' is declared %s (%s), but the node computes %s", g->path,
                     ft_node_label(g, i), v->name, ft_dtype_name(v->declared_dtype),
                     v->is_output ? "a graph output" : "value_info", ft_dtype_name(v->t.dtype));
  }
  return 0;
}

/* Shapes-only mode: what the sweep computed goes again, so the graph is as it was but for its
 * values' shapes and types (the nodes, initializers and Constant nodes' outputs as loaded). */
static void drop_computed_data(ft_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    const ft_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_out; j++)
      if (n->out[j] >= 0) ft_tensor_free_data(&g->vals[n->out[j]].t);
  }
}

/* The message of error rc names the model file, unless it does already. */
static int name_model(const ft_graph *g, ft_err *e, int rc) {
  if (!strstr(e->msg, g->path)) {
    char tmp[sizeof e->msg];
    snprintf(tmp, sizeof tmp, "%.500s: %.1500s", g->path, e->msg);
    memcpy(e->msg, tmp, sizeof tmp);
  }
  return rc;
}

/* If, Loop and Scan become the nodes they run, to be inferred next; sequence ops become lists of
 * values and the nodes that read them (passes.h). */
static int expand_control(ft_graph *g, int i, ft_err *e) {
  const char *op = g->nodes[i].op_type;
  if (!strcmp(op, "If")) return ft_expand_if(g, i, e);
  if (!strcmp(op, "Loop")) return ft_expand_loop(g, i, e);
  if (!strcmp(op, "Scan")) return ft_expand_scan(g, i, e);
  return ft_expand_sequence(g, i, e);
}

/* Element-type gaps: nodes whose op ftax has, but not for the types they get (Conv on float64).
 * The sweep notes them and goes on, so that one message lists them all, as ft_resolve_ops lists
 * the op types it lacks. */
typedef struct ft_gaps {
  const char *op[64];
  int dtype[64], count[64], n, total;
} ft_gaps;

static int is_real_other(int dt) { return dt == FT_DOUBLE || dt == FT_FLOAT16 || dt == FT_BFLOAT16; }

/* Node i's infer refused it as unsupported: is float32 all it lacks? Inference is tried again with
 * its non-float32 real inputs seen as float32 (no data); if that passes, the gap is noted, the
 * outputs keep the element type the node was given (so the nodes after it are checked alike)
 * and 1 is returned. */
static int note_dtype_gap(ft_graph *g, int i, ft_opctx *c, ft_gaps *gp, ft_err *e) {
  ft_tensor shadow[FT_MAX_IO];
  int dt = 0;
  for (int j = 0; j < c->n_in && j < FT_MAX_IO; j++) {
    if (!c->in[j] || !is_real_other(c->in[j]->dtype)) continue;
    if (!dt) dt = c->in[j]->dtype;
    shadow[j] = *c->in[j];
    shadow[j].dtype = FT_FLOAT;
    shadow[j].data = NULL;
    c->in[j] = &shadow[j];
  }
  if (!dt) return 0;
  ft_err probe = {0};
  c->err = &probe;
  if (g->nodes[i].op->infer(c)) return 0;
  for (int j = 0; j < c->n_out; j++)
    if (c->out[j] && c->out[j]->dtype == FT_FLOAT) c->out[j]->dtype = dt;
  const char *op = g->nodes[i].op_type;
  int k = 0;
  while (k < gp->n && (strcmp(gp->op[k], op) || gp->dtype[k] != dt)) k++;
  if (k == gp->n && gp->n < 64) { gp->op[k] = op; gp->dtype[k] = dt; gp->count[gp->n++] = 0; }
  if (k < gp->n) gp->count[k]++;
  gp->total++;
  memset(e, 0, sizeof *e);
  return 1;
}

static int report_gaps(const ft_graph *g, const ft_gaps *gp, ft_err *e) {
  char list[1536];
  size_t len = 0;
  for (int k = 0; k < gp->n && len < sizeof list; k++)
    len += snprintf(list + len, sizeof list - len, "%s%s on %s x%d", k ? ", " : "", gp->op[k], ft_dtype_name(gp->dtype[k]),
                    gp->count[k]);
  memset(e, 0, sizeof *e);
  return ft_fail(e, FT_EUNSUPPORTED, "%s: %d node%s use%s element types ftax does not support for their op: %s (float16 is computed in float32: docs/fp16.md)",
                 g->path, gp->total, gp->total == 1 ? "" : "s", gp->total == 1 ? "s" : "", list);
}

/* Infer node i (mode as ft_infer's). 0: done; -1: a dtype gap, noted, nothing to fold. */
static int infer_node(ft_graph *g, int i, int mode, ft_gaps *gp, ft_err *e) {
  ft_node *n = &g->nodes[i];
  ft_opctx c;
  ft_opctx_init(&c, g, i, e);
  int all_const = 1;
  for (int j = 0; j < n->n_in; j++) {
    if (n->in[j] < 0) continue;
    const ft_value *v = &g->vals[n->in[j]];
    if (!v->shape_known || v->t.rank < 0)
      return ft_fail(e, FT_EINVALID, "%s: %s: input '%s' has no known shape", g->path, ft_node_label(g, i), v->name);
    if (!v->t.data) all_const = 0;
  }
  for (int j = 0; j < n->n_out; j++) {
    if (!c.out[j]) continue;
    ft_tensor_free_data(c.out[j]);
    c.out[j]->dtype = 0;
    c.out[j]->rank = 0;
  }
  int rc = n->op->infer(&c), gap = 0;
  if (rc == FT_EUNSUPPORTED) gap = note_dtype_gap(g, i, &c, gp, e);
  if (rc && !gap) return name_model(g, e, rc);
  rc = check_outputs(g, i, e);
  if (rc) return rc;
  int produced_data = 1;
  for (int j = 0; j < n->n_out; j++) {
    if (n->out[j] < 0) continue;
    ft_value *v = &g->vals[n->out[j]];
    v->shape_known = 1;
    for (int d = 0; d < FT_MAX_RANK; d++) { free(v->sym[d]); v->sym[d] = NULL; }
    if (!v->t.data) produced_data = 0;
  }
  if (gap) return -1;
  /* infer itself produced the data (Constant, Shape, Size): the node is folded */
  int foldable = produced_data || (mode != FT_INFER_NO_FOLD && all_const && !(n->op->flags & (FT_OP_NOEVAL | FT_OP_EFFECT)));
  if (!foldable) return 0;
  if (!produced_data) {
    rc = fold_node(g, i, &c, e);
    if (rc) return rc;
  }
  if (mode == FT_INFER_SHAPES) return 0; /* the data only serves the nodes after it */
  for (int j = 0; j < n->n_out; j++)
    if (n->out[j] >= 0) g->vals[n->out[j]].kind = FT_V_CONST;
  n->dead = 1;
  return 0;
}

int ft_infer(ft_graph *g, int mode, ft_err *e) {
  ft_gaps gp;
  gp.n = gp.total = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (n->op->flags & FT_OP_CONTROL) {
      int rc = expand_control(g, i, e);
      if (rc) return gp.total ? report_gaps(g, &gp, e) : name_model(g, e, rc);
      i--; /* the first node of what replaced it is node i now */
      continue;
    }
    int rc = ft_sequence_consumer(g, i, e); /* an Identity of a sequence goes, anything else refuses it */
    if (rc >= 0) {
      if (rc) return gp.total ? report_gaps(g, &gp, e) : name_model(g, e, rc);
      i--;
      continue;
    }
    rc = infer_node(g, i, mode, &gp, e);
    /* a later failure may follow from a gap (no kernel, no folded data): the gaps are the news */
    if (rc > 0) return gp.total ? report_gaps(g, &gp, e) : rc;
  }
  if (gp.total) return report_gaps(g, &gp, e);
  for (int k = 0; k < g->n_outputs; k++)
    if (g->vals[g->outputs[k]].is_seq)
      return ft_fail(e, FT_EUNSUPPORTED, "%s: graph output '%s' is a sequence; ftax lowers sequences into tensors at compile "
                     "time and gives only tensors as the model's outputs (ConcatFromSequence joins one)", g->path,
                     g->vals[g->outputs[k]].name);
  if (mode == FT_INFER_SHAPES) drop_computed_data(g);
  return 0;
}

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

/* If, Loop and Scan become the nodes they run, to be inferred next (passes.h). */
static int expand_control(ft_graph *g, int i, ft_err *e) {
  const char *op = g->nodes[i].op_type;
  if (!strcmp(op, "If")) return ft_expand_if(g, i, e);
  if (!strcmp(op, "Loop")) return ft_expand_loop(g, i, e);
  return ft_expand_scan(g, i, e);
}

int ft_infer(ft_graph *g, int mode, ft_err *e) {
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (n->op->flags & FT_OP_CONTROL) {
      int rc = expand_control(g, i, e);
      if (rc) return name_model(g, e, rc);
      i--; /* the first node of what replaced it is node i now */
      continue;
    }
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
    int rc = n->op->infer(&c);
    if (rc) return name_model(g, e, rc);
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
    /* infer itself produced the data (Constant, Shape, Size): the node is folded */
    int foldable = produced_data || (mode != FT_INFER_NO_FOLD && all_const && !(n->op->flags & FT_OP_NOEVAL));
    if (!foldable) continue;
    if (!produced_data) {
      rc = fold_node(g, i, &c, e);
      if (rc) return rc;
    }
    if (mode == FT_INFER_SHAPES) continue; /* the data only serves the nodes after it */
    for (int j = 0; j < n->n_out; j++)
      if (n->out[j] >= 0) g->vals[n->out[j]].kind = FT_V_CONST;
    n->dead = 1;
  }
  if (mode == FT_INFER_SHAPES) drop_computed_data(g);
  return 0;
}

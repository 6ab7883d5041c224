/* Stage: shape and dtype inference with constant folding, one sweep in node order.
 * (FT_INFER_SHAPES: the same sweep for the shapes alone, leaving every node in place.)
 *
 * The two cannot be separate stages: exporters compute Reshape targets with Shape → Gather →
 * Concat chains, so a node's output shape is only known once the nodes before it are folded.
 * Folding runs the node's own planned kernel, the code the generated program would run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h" /* ft_node_set_string */
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
  int foldable = (produced_data && !(n->op->flags & FT_OP_EFFECT)) || /* ftax.Fail has no outputs: it stays */
                 (mode != FT_INFER_NO_FOLD && all_const && !(n->op->flags & (FT_OP_NOEVAL | FT_OP_EFFECT)));
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

/* ---- branches that cannot run at the compiled shapes -------------------------------------- */

/* Node j's guard starts with entries p[0..np). */
static int guarded_by(const ft_node *n, const int *p, int np) {
  if (n->n_guard < np) return 0;
  for (int k = 0; k < np; k++) if (n->guard[k] != p[k]) return 0;
  return 1;
}

/* The innermost If entry of guard[0..end): its index, or -1 (a Loop's entries are skipped). */
static int innermost_if(const int *guard, int end) {
  for (int k = end - 1; k >= 0; k--) if (!ft_guard_is_loop(guard[k])) return k;
  return -1;
}

/* Node j (guarded by the branch of a run-time If) failed inference with e: that branch cannot run
 * at the shapes the program is compiled for (Silero VAD's 8 kHz branch at a 16 kHz chunk), yet
 * the model is fine for the inputs that take the other one. The branch becomes one ftax.Fail
 * node at j, guarded as the branch was: a run-time error of the program (exit 2, e's message);
 * its other nodes go, and each IfMerge of that If (and of any other on the same condition and
 * guard: a run that takes this branch fails anyway) becomes an Identity of the other branch's
 * value. If the other branch failed too, the If cannot run at all, and the branch around it is
 * the one that fails, up to the graph: then the model is refused with e. 0, or e's code. */
static int fail_branch(ft_graph *g, int j, int rc, ft_err *e) {
  ft_node *n = &g->nodes[j];
  int ng = n->n_guard, *guard = malloc(sizeof(int) * (size_t)(ng + 1));
  if (!guard) return rc;
  memcpy(guard, n->guard, sizeof(int) * (size_t)ng);
  char why[sizeof e->msg];
  memcpy(why, e->msg, sizeof why);
  for (int k = innermost_if(guard, ng); k >= 0; k = innermost_if(guard, k)) {
    int cond = ft_guard_value(guard[k]), neg = ft_guard_negated(guard[k]), other = FT_GUARD(cond, !neg);
    const char *if_name = NULL;
    int other_failed = 0;
    for (int m = 0; m < g->n_nodes; m++) {
      ft_node *x = &g->nodes[m];
      if (x->dead || m == j) continue;
      if (!strcmp(x->op_type, "Fail") && !strcmp(x->domain, "ftax") && x->n_guard == k + 1 && guarded_by(x, guard, k) &&
          x->guard[k] == other)
        other_failed = 1;
      if (!strcmp(x->op_type, "IfMerge") && !strcmp(x->domain, "ftax") && x->n_guard == k && guarded_by(x, guard, k) &&
          x->in[0] == cond && !if_name)
        if_name = x->name;
    }
    if (other_failed) continue; /* neither branch runs: the branch around this If is the one that fails */
    /* this branch: node j becomes the Fail, the rest go */
    for (int m = 0; m < g->n_nodes; m++) {
      ft_node *x = &g->nodes[m];
      if (m == j || !guarded_by(x, guard, k + 1)) continue;
      x->dead = 1;
      /* what they computed goes with them: nothing produces those values any more */
      for (int o = 0; o < x->n_out; o++)
        if (x->out[o] >= 0 && g->vals[x->out[o]].kind != FT_V_CONST) ft_tensor_free_data(&g->vals[x->out[o]].t);
    }
    for (int m = 0; m < g->n_nodes; m++) {
      ft_node *x = &g->nodes[m];
      if (x->dead || strcmp(x->op_type, "IfMerge") || strcmp(x->domain, "ftax") || x->n_guard != k ||
          !guarded_by(x, guard, k) || x->in[0] != cond)
        continue;
      int keep = x->in[neg ? 1 : 2]; /* then's value when else fails, else's when then fails */
      free(x->op_type); free(x->domain);
      x->op_type = strdup("Identity");
      x->domain = strdup("");
      x->op = ft_op_find("", "Identity");
      x->in[0] = keep;
      x->n_in = 1;
    }
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "If '%s' took its %s (condition '%s' %s), which cannot run at the shapes this program was "
             "compiled for: %s; compile it at the shapes that branch needs (--shape, --dim, or --bind the inputs that "
             "decide the condition) to run it", if_name ? if_name : "?", neg ? "else_branch" : "then_branch",
             g->vals[cond].name, neg ? "false" : "true", why);
    n = &g->nodes[j];
    free(n->op_type); free(n->domain); free(n->in); free(n->out); free(n->outer);
    for (int a = 0; a < n->n_attrs; a++) ft_attr_free(&n->attrs[a]);
    n->n_attrs = 0;
    n->op_type = strdup("Fail");
    n->domain = strdup("ftax");
    n->op = ft_op_find("ftax", "Fail");
    n->in = malloc(sizeof(int));
    n->out = malloc(sizeof(int));
    if (n->in) n->in[0] = -1; /* stages that look at out[0] first find "none" */
    if (n->out) n->out[0] = -1;
    n->outer = NULL;
    n->n_in = n->n_out = n->n_outer = 0;
    n->n_guard = k + 1;
    ft_node_set_string(n, "message", msg);
    free(guard);
    memset(e, 0, sizeof *e);
    return 0;
  }
  free(guard);
  return rc;
}

int ft_infer(ft_graph *g, int mode, ft_err *e) {
  ft_gaps gp;
  gp.n = gp.total = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (n->op->flags & FT_OP_CONTROL) {
      int rc = expand_control(g, i, e);
      if (rc == FT_EINVALID && g->nodes[i].n_guard && !gp.total && !fail_branch(g, i, rc, e)) continue;
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
    if (rc == FT_EINVALID && g->nodes[i].n_guard && !gp.total && !fail_branch(g, i, rc, e)) continue;
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

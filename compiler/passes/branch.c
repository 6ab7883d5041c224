/* Part of the inference sweep (infer.c): If nodes become the nodes of their branches.
 *
 * An If whose condition is known at compile time is replaced by the branch it takes. Exporters
 * write such Ifs around shape checks (Equal(Gather(Shape(x)), k)) and around inputs a user binds
 * (Equal(sr, 16000)); once the shapes are pinned and the inputs bound, the sweep has folded the
 * condition by the time it reaches the If, and the branch's nodes take the If's place, to be
 * inferred and folded like any others (an If inside the branch comes next, the same way).
 *
 * An If whose condition is computed at run time is replaced by both branches, one after the
 * other, each node guarded by the condition (ft_node.guard: then_branch's nodes run when it is
 * true, else_branch's when it is false), and one ftax.IfMerge per output that copies the branch
 * that ran. Every later stage sees one flat list of nodes: inference gives both branches their
 * shapes, the memory plan places both (a branch's values die before the other's begin, so they
 * may share the arena), the C emitter opens an `if` block where the guard changes, ftax-eager
 * skips the nodes whose guard does not hold. The branches must give outputs of one shape and
 * type (IfMerge's inference says which output differs).
 *
 * A branch reads values of enclosing graphs by name; its own values get the names they have in
 * the file unless the graph already uses one, then "name#k", and an If nested in the branch
 * learns the new names of what it reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subgraph.h"

/* The condition of If node i: *truth 1 true, 0 false, -1 not known yet. */
static int condition(const ft_graph *g, int i, int *truth, ft_err *e) {
  const ft_node *n = &g->nodes[i];
  const ft_tensor *t = n->n_in > 0 && n->in[0] >= 0 ? &g->vals[n->in[0]].t : NULL;
  *truth = -1;
  if (!t || !t->data) return 0;
  if (ft_numel(t) != 1)
    return ft_fail(e, FT_EINVALID, "%s: %s: the condition has %lld elements; If takes one", g->path, ft_node_label(g, i),
                   (long long)ft_numel(t));
  if (t->dtype == FT_FLOAT) *truth = ((const float *)t->data)[0] != 0;
  else if (t->dtype == FT_DOUBLE) *truth = ((const double *)t->data)[0] != 0;
  else *truth = ft_const_int(t, 0) != 0;
  return 0;
}

/* The branch graph `which` of If node i, checked against the node's outputs. */
static int branch_graph(const ft_graph *g, int i, const char *which, const ft_graph **b, ft_err *e) {
  const ft_attr *a = ft_attr_find(&g->nodes[i], which);
  *b = a ? a->g : NULL;
  if (!*b) return ft_fail(e, FT_EINVALID, "%s: %s has no graph attribute '%s'", g->path, ft_node_label(g, i), which);
  if ((*b)->n_outputs != g->nodes[i].n_out)
    return ft_fail(e, FT_EINVALID, "%s: %s has %d outputs but its %s has %d", g->path, ft_node_label(g, i),
                   g->nodes[i].n_out, which, (*b)->n_outputs);
  return 0;
}

/* Append branch `which` of If node i, its nodes guarded by the If's own guard and then `entry`
 * (none when entry < 0); outs[k] gets the value the branch's output k became. */
static int append_branch(ft_graph *g, int i, const char *which, int entry, int *outs, ft_err *e) {
  const ft_graph *b;
  int rc = branch_graph(g, i, which, &b, e);
  if (rc) return rc;
  if (b->n_inputs)
    return ft_fail(e, FT_EINVALID, "%s: %s: its %s has input '%s'; If's branches take none", g->path,
                   ft_node_label(g, i), which, b->vals[b->inputs[0]].name);
  int n_guard = g->nodes[i].n_guard;
  int *guard = malloc(sizeof(int) * (size_t)(n_guard + 1));
  if (n_guard) memcpy(guard, g->nodes[i].guard, sizeof(int) * (size_t)n_guard);
  if (entry >= 0) guard[n_guard++] = entry;
  rc = ft_inline_subgraph(g, i, b, which, NULL, NULL, guard, n_guard, outs, e);
  free(guard);
  return rc;
}

/* The condition is known: the branch taken, each output of the If an Identity of the branch's
 * (removed by simplify). */
static int take_branch(ft_graph *g, int i, int truth, ft_err *e) {
  int n_out = g->nodes[i].n_out, from = g->n_nodes;
  int *outs = malloc(sizeof(int) * (size_t)(n_out + 1));
  int rc = append_branch(g, i, truth ? "then_branch" : "else_branch", -1, outs, e);
  for (int k = 0; k < n_out && !rc; k++) {
    int out = g->nodes[i].out[k];
    if (out < 0) continue;
    char name[1100];
    snprintf(name, sizeof name, "%.500s/output_%d", g->nodes[i].name, k);
    ft_node *n = ft_add_node_like(g, i, name, "Identity", "", 1, 1);
    n->in[0] = outs[k];
    n->out[0] = out;
  }
  free(outs);
  if (!rc) ft_replace_node(g, i, from);
  return rc;
}

/* The condition is computed at run time: both branches, guarded, and an ftax.IfMerge per output
 * (inputs: the condition, then_branch's output, else_branch's), named as the If is. */
static int guard_branches(ft_graph *g, int i, ft_err *e) {
  int cond = g->nodes[i].n_in > 0 ? g->nodes[i].in[0] : -1, n_out = g->nodes[i].n_out, from = g->n_nodes;
  int rc = ft_check_condition(g, i, cond, e);
  if (rc) return rc;
  int *t_outs = malloc(sizeof(int) * (size_t)(2 * n_out + 1)), *e_outs = t_outs + n_out;
  rc = append_branch(g, i, "then_branch", FT_GUARD(cond, 0), t_outs, e);
  if (!rc) rc = append_branch(g, i, "else_branch", FT_GUARD(cond, 1), e_outs, e);
  for (int k = 0; k < n_out && !rc; k++) {
    int out = g->nodes[i].out[k];
    if (out < 0) continue;
    char *name = strdup(g->nodes[i].name);
    ft_node *n = ft_add_node_like(g, i, name, "IfMerge", "ftax", 3, 1);
    free(name);
    n->in[0] = cond;
    n->in[1] = t_outs[k];
    n->in[2] = e_outs[k];
    n->out[0] = out;
  }
  free(t_outs);
  if (!rc) ft_replace_node(g, i, from);
  return rc;
}

int ft_expand_if(ft_graph *g, int i, ft_err *e) {
  int truth, rc = condition(g, i, &truth, e);
  if (rc) return rc;
  return truth >= 0 ? take_branch(g, i, truth, e) : guard_branches(g, i, e);
}

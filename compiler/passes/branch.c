/* Part of the inference sweep (infer.c): an If whose condition is known at compile time is
 * replaced by the branch it takes. Exporters write such Ifs around shape checks
 * (Equal(Gather(Shape(x)), k)) and around inputs a user binds (Equal(sr, 16000)); once the shapes
 * are pinned and the inputs bound, the sweep has folded the condition by the time it reaches the
 * If, and the branch's nodes take the If's place, to be inferred and folded like any others
 * (an If inside the branch comes next, the same way).
 *
 * A branch reads values of enclosing graphs by name; its own values get the names they have in
 * the file unless the graph already uses one, then "name#k", and an If nested in the branch
 * learns the new names of what it reads. Each output of the If becomes an Identity of the
 * branch's output (removed by simplify). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

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

/* The value of g, as If node i sees it, that a branch reads by name: what the node recorded at
 * load (its outer list), or else a value of g by that name. */
static int outer_value(const ft_graph *g, int i, const char *name) {
  const ft_node *n = &g->nodes[i];
  for (int k = 0; k < n->n_outer; k++)
    if (!strcmp(g->vals[n->outer[k]].name, name)) return n->outer[k];
  return ft_value_find(g, name);
}

/* A name not yet used in g: the name itself, or name#1, name#2, ... */
static int add_unique_value(ft_graph *g, const char *name) {
  if (ft_value_find(g, name) < 0) return ft_value_add(g, name);
  char buf[1100];
  for (int k = 1;; k++) {
    snprintf(buf, sizeof buf, "%.1000s#%d", name, k);
    if (ft_value_find(g, buf) < 0) return ft_value_add(g, buf);
  }
}

/* map[v]: the value of g that value v of branch b becomes. */
static int map_values(ft_graph *g, int i, const ft_graph *b, const char *which, int *map, ft_err *e) {
  for (int v = 0; v < b->n_vals; v++) {
    const ft_value *bv = &b->vals[v];
    if (bv->kind == FT_V_INPUT)
      return ft_fail(e, FT_EINVALID, "%s: %s: its %s has input '%s'; If's branches take none", g->path,
                     ft_node_label(g, i), which, bv->name);
    if (ft_value_is_outer(b, v)) {
      map[v] = outer_value(g, i, bv->name);
      if (map[v] < 0)
        return ft_fail(e, FT_EINVALID, "%s: %s: its %s reads '%s', which no enclosing graph defines", g->path,
                       ft_node_label(g, i), which, bv->name);
      continue;
    }
    map[v] = add_unique_value(g, bv->name);
    ft_value *nv = &g->vals[map[v]];
    nv->kind = bv->kind;
    nv->declared_dtype = bv->declared_dtype;
    if (bv->kind == FT_V_CONST && ft_tensor_clone(&nv->t, &bv->t))
      return ft_fail(e, FT_EIO, "out of memory copying the %s of %s", which, ft_node_label(g, i));
    nv->shape_known = bv->kind == FT_V_CONST;
  }
  return 0;
}

/* In subgraph s and those nested in it: what s reads from outside under the name `from` is now
 * called `to`. */
static void rename_outer(ft_graph *s, const char *from, const char *to) {
  for (int v = 0; v < s->n_vals; v++)
    if (ft_value_is_outer(s, v) && !strcmp(s->vals[v].name, from)) {
      free(s->vals[v].name);
      s->vals[v].name = strdup(to);
    }
  for (int i = 0; i < s->n_nodes; i++)
    for (int a = 0; a < s->nodes[i].n_attrs; a++)
      if (s->nodes[i].attrs[a].g) rename_outer(s->nodes[i].attrs[a].g, from, to);
}

static int *map_list(const int *list, int n, const int *map) {
  int *d = malloc(sizeof(int) * (size_t)(n ? n : 1));
  for (int k = 0; k < n; k++) d[k] = list[k] >= 0 ? map[list[k]] : -1;
  return d;
}

/* Append copies of b's nodes to g, reading and writing the mapped values. */
static void copy_nodes(ft_graph *g, const char *if_name, const ft_graph *b, const int *map) {
  for (int j = 0; j < b->n_nodes; j++) {
    const ft_node *bn = &b->nodes[j];
    char name[1100];
    snprintf(name, sizeof name, "%.500s/%.500s", if_name, bn->name);
    ft_node *n = ft_node_add(g, name, bn->op_type, bn->domain, bn->n_in, bn->n_out);
    free(n->in); free(n->out);
    n->in = map_list(bn->in, bn->n_in, map);
    n->out = map_list(bn->out, bn->n_out, map);
    n->outer = bn->n_outer ? map_list(bn->outer, bn->n_outer, map) : NULL;
    n->n_outer = bn->n_outer;
    n->op = bn->op;
    n->n_attrs = bn->n_attrs;
    n->attrs = malloc(sizeof(ft_attr) * (size_t)(bn->n_attrs ? bn->n_attrs : 1));
    for (int a = 0; a < bn->n_attrs; a++) {
      ft_attr_copy(&n->attrs[a], &bn->attrs[a]);
      if (!n->attrs[a].g) continue;
      for (int v = 0; v < b->n_vals; v++) /* a nested If reads the branch's values by their new names */
        if (!ft_value_is_outer(b, v) && strcmp(b->vals[v].name, g->vals[map[v]].name))
          rename_outer(n->attrs[a].g, b->vals[v].name, g->vals[map[v]].name);
    }
  }
}

/* The nodes appended from index `from` on take the place of node i, which goes. */
static void move_into_place(ft_graph *g, int i, int from) {
  int added = g->n_nodes - from;
  ft_node gone = g->nodes[i];
  ft_node *tmp = malloc(sizeof(ft_node) * (size_t)(added ? added : 1));
  memcpy(tmp, g->nodes + from, sizeof(ft_node) * (size_t)added);
  memmove(g->nodes + i + added, g->nodes + i + 1, sizeof(ft_node) * (size_t)(from - i - 1));
  memcpy(g->nodes + i, tmp, sizeof(ft_node) * (size_t)added);
  free(tmp);
  g->n_nodes--;
  free(gone.name); free(gone.op_type); free(gone.domain); free(gone.in); free(gone.out); free(gone.outer);
  for (int k = 0; k < gone.n_attrs; k++) ft_attr_free(&gone.attrs[k]);
  free(gone.attrs);
  for (int j = 0; j < g->n_nodes; j++)
    for (int k = 0; k < g->nodes[j].n_out; k++)
      if (g->nodes[j].out[k] >= 0) g->vals[g->nodes[j].out[k]].producer = j;
}

int ft_take_branch(ft_graph *g, int i, int *taken, ft_err *e) {
  *taken = 0;
  int truth, rc = condition(g, i, &truth, e);
  if (rc || truth < 0) return rc;
  const char *which = truth ? "then_branch" : "else_branch";
  const ft_attr *a = ft_attr_find(&g->nodes[i], which);
  const ft_graph *b = a ? a->g : NULL;
  if (!b) return ft_fail(e, FT_EINVALID, "%s: %s has no graph attribute '%s'", g->path, ft_node_label(g, i), which);
  if (b->n_outputs != g->nodes[i].n_out)
    return ft_fail(e, FT_EINVALID, "%s: %s has %d outputs but its %s has %d", g->path, ft_node_label(g, i),
                   g->nodes[i].n_out, which, b->n_outputs);
  int *map = malloc(sizeof(int) * (size_t)(b->n_vals + 1));
  rc = map_values(g, i, b, which, map, e);
  int from = g->n_nodes;
  if (!rc) {
    char *if_name = strdup(g->nodes[i].name);
    copy_nodes(g, if_name, b, map);
    for (int k = 0; k < b->n_outputs; k++) {
      int out = g->nodes[i].out[k];
      if (out < 0) continue;
      char name[1100];
      snprintf(name, sizeof name, "%.500s/output_%d", if_name, k);
      ft_node *n = ft_node_add(g, name, "Identity", "", 1, 1);
      n->in[0] = map[b->outputs[k]];
      n->out[0] = out;
      n->op = ft_op_find("", "Identity");
    }
    free(if_name);
    move_into_place(g, i, from);
    *taken = 1;
  }
  free(map);
  return rc;
}

/* Stage: drop nodes that do nothing at inference time (Identity, Dropout, same-type Cast) by rewiring their
 * consumers, then remove every node whose outputs nobody uses. A node that writes a Loop's state
 * (FT_OP_EFFECT) stays, and so do the values a kept node's guard tests. */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

/* Cast to the type its input already has is one too (float16 models widened to float32 leave
 * such Casts: compiler/passes/upcast.c). */
static int is_passthrough(const ft_graph *g, const ft_node *n) {
  if (n->domain[0]) return 0;
  if (!strcmp(n->op_type, "Cast") || !strcmp(n->op_type, "CastLike"))
    return n->in[0] >= 0 && n->out[0] >= 0 && g->vals[n->in[0]].t.dtype == g->vals[n->out[0]].t.dtype;
  return !strcmp(n->op_type, "Identity") || !strcmp(n->op_type, "Dropout");
}

int ft_simplify(ft_graph *g, ft_err *e) {
  (void)e;
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *n = &g->nodes[i];
    if (n->dead || !is_passthrough(g, n) || n->in[0] < 0) continue;
    int from = n->out[0], to = n->in[0];
    if (g->vals[from].is_output) continue; /* keep: the output needs its own buffer */
    if (n->n_out > 1 && n->out[1] >= 0) continue; /* Dropout's mask is used */
    for (int j = i + 1; j < g->n_nodes; j++) {
      ft_node *m = &g->nodes[j];
      for (int k = 0; k < m->n_in; k++)
        if (m->in[k] == from) m->in[k] = to;
      /* a run-time If's condition through a no-op (GreaterOrEqual -> Cast(to=BOOL) -> If): the
       * guards of its branches test the value the no-op read */
      for (int k = 0; k < m->n_guard; k++)
        if (ft_guard_value(m->guard[k]) == from) m->guard[k] = to * 4 + (m->guard[k] & 3);
    }
    n->dead = 1;
  }
  /* dead code: walk backwards from the outputs */
  char *live = calloc((size_t)g->n_vals + 1, 1);
  for (int i = 0; i < g->n_outputs; i++) live[g->outputs[i]] = 1;
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    ft_node *n = &g->nodes[i];
    if (n->dead) continue;
    int used = n->op && (n->op->flags & FT_OP_EFFECT);
    for (int k = 0; k < n->n_out; k++) used |= n->out[k] >= 0 && live[n->out[k]];
    if (!used) { n->dead = 1; continue; }
    for (int k = 0; k < n->n_in; k++) if (n->in[k] >= 0) live[n->in[k]] = 1;
    for (int k = 0; k < n->n_guard; k++) live[ft_guard_value(n->guard[k])] = 1;
  }
  free(live);
  return 0;
}

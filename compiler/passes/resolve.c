/* Stage: look every node's op up in the table, and refuse the model with one message listing
 * every unsupported op type (and how often it occurs) rather than stopping at the first. Nodes of
 * subgraphs (If's branches) are looked up too: a branch that replaces its If later brings its
 * nodes resolved, and what it lacks is in the same one message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

typedef struct missing {
  const char *names[512], *domains[512];
  int counts[512], n, total;
} missing;

static void resolve_graph(ft_graph *g, missing *m) {
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *nd = &g->nodes[i];
    for (int a = 0; a < nd->n_attrs; a++)
      if (nd->attrs[a].g) resolve_graph(nd->attrs[a].g, m);
    nd->op = ft_op_find(nd->domain, nd->op_type);
    if (nd->op) continue;
    m->total++;
    int k = 0;
    while (k < m->n && (strcmp(m->names[k], nd->op_type) || strcmp(m->domains[k], nd->domain))) k++;
    if (k == m->n && m->n < 512) { m->names[m->n] = nd->op_type; m->domains[m->n] = nd->domain; m->counts[m->n++] = 0; }
    if (k < m->n) m->counts[k]++;
  }
}

int ft_resolve_ops(ft_graph *g, ft_err *e) {
  missing m;
  m.n = m.total = 0;
  resolve_graph(g, &m);
  if (!m.total) return 0;
  char list[1536];
  size_t len = 0;
  for (int k = 0; k < m.n && len < sizeof list; k++)
    len += snprintf(list + len, sizeof list - len, "%s%s%s%s x%d", k ? ", " : "", m.domains[k][0] ? m.domains[k] : "",
                    m.domains[k][0] ? "." : "", m.names[k], m.counts[k]);
  return ft_fail(e, FT_EUNSUPPORTED, "%s: %d node%s use%s op types ftax does not support: %s", g->path, m.total,
                 m.total == 1 ? "" : "s", m.total == 1 ? "s" : "", list);
}

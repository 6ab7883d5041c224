/* Stage: look every node's op up in the table, and refuse the model with one message listing
 * every unsupported op type (and how often it occurs) rather than stopping at the first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

int ft_resolve_ops(ft_graph *g, ft_err *e) {
  const char *names[512];
  const char *domains[512];
  int counts[512], n = 0, total = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *nd = &g->nodes[i];
    nd->op = ft_op_find(nd->domain, nd->op_type);
    if (nd->op) continue;
    total++;
    int k = 0;
    while (k < n && (strcmp(names[k], nd->op_type) || strcmp(domains[k], nd->domain))) k++;
    if (k == n && n < 512) { names[n] = nd->op_type; domains[n] = nd->domain; counts[n++] = 0; }
    if (k < n) counts[k]++;
  }
  if (!total) return 0;
  char list[1536];
  size_t m = 0;
  for (int k = 0; k < n && m < sizeof list; k++)
    m += snprintf(list + m, sizeof list - m, "%s%s%s%s x%d", k ? ", " : "", domains[k][0] ? domains[k] : "",
                  domains[k][0] ? "." : "", names[k], counts[k]);
  return ft_fail(e, FT_EUNSUPPORTED,
                 "%s: %d node%s use%s op types ftax does not support: %s", g->path, total,
                 total == 1 ? "" : "s", total == 1 ? "s" : "", list);
}

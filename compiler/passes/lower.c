/* Stage: plan one kernel call per node that is left to run, and pre-pack constant inputs into
 * the layout the kernel wants (the packed copy becomes a new constant). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

int ft_lower(ft_graph *g, ft_lowered *lw, ft_err *e) { return ft_lower_ex(g, lw, 1, e); }

int ft_lower_ex(ft_graph *g, ft_lowered *lw, int prepack, ft_err *e) {
  memset(lw, 0, sizeof *lw);
  lw->order = malloc(sizeof(int) * (g->n_nodes + 1));
  lw->calls = calloc((size_t)g->n_nodes + 1, sizeof(ft_kcall));
  lw->bf16 = (prepack & FT_LOWER_BF16) != 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].dead) continue;
    int slot = lw->n++;
    lw->order[slot] = i;
    ft_kcall *k = &lw->calls[slot];
    k->prepack.input = -1;
    k->prepack.from = -1;
    ft_opctx c;
    ft_opctx_init(&c, g, i, e);
    const ft_node *n = &g->nodes[i];
    if (n->op->flags & FT_OP_ALIAS) {
      /* a view shares its input's bytes, unless it is a graph output (own buffer): copy */
      if (!g->vals[n->out[0]].is_output) continue;
      k->entry = ft_copy_bytes_entry;
      k->p[0] = (int64_t)ft_nbytes(c.out[0]);
      k->np = 1;
      continue;
    }
    if (n->op->flags & FT_OP_NOEVAL)
      return ft_fail(e, FT_EUNSUPPORTED, "%s: %s could not be computed at compile time; its inputs depend on run-time data",
                     g->path, ft_node_label(g, i));
    int rc = n->op->plan(&c, k);
    if (rc) return rc;
    if ((prepack & ~FT_LOWER_PACK) || !prepack) ft_conv_winograd_off(k); /* fp32 C target only */
    if (prepack & FT_LOWER_BF16) lw->n_bf16 += ft_bf16_retarget(k);
    int pi = k->prepack.input;
    if (prepack && pi >= 0 && n->in[pi] >= 0 && g->vals[n->in[pi]].t.data) {
      /* pack at compile time, with the kernel's own packing routine */
      const ft_value *src = &g->vals[n->in[pi]];
      size_t nb = k->prepack.pack(k->p, src->t.data, NULL);
      char name[1024];
      snprintf(name, sizeof name, "%s.packed%d", src->name, i);
      int vi = ft_value_add(g, name);
      ft_value *v = &g->vals[vi];
      src = &g->vals[g->nodes[i].in[pi]]; /* the array may have moved */
      v->kind = FT_V_CONST;
      v->shape_known = 1;
      v->t.dtype = FT_UINT8;
      v->t.rank = 1;
      v->t.dims[0] = (int64_t)nb;
      v->t.data = calloc(nb ? nb : 1, 1);
      k->prepack.pack(k->p, src->t.data, v->t.data);
      k->prepack.from = g->nodes[i].in[pi];
      g->nodes[i].in[pi] = vi;
      k->p[k->prepack.flag_p] = 1;
    }
  }
  return 0;
}

void ft_lowered_free(ft_lowered *lw) {
  free(lw->order);
  free(lw->calls);
  memset(lw, 0, sizeof *lw);
}

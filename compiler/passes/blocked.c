/* The blocked layout between two convs (templates/common/conv_params.h, FT_CV_LAYOUT): a conv
 * whose output's only reader is another conv, both of which can take the layout, writes that
 * output as [N][C/16][H*W][16], and the reader reads it so. The sides are pointwise^T convs (the
 * tile holds 16 output channels of a pixel per vector) and depthwise convs on the channel-vector
 * path (16 channels of a pixel per vector): in NCHW each side pays a 16x16 transpose per 16
 * pixels (the pointwise^T tile's store, the depthwise ring's load and its output's flush), or
 * reads its input as broadcasts 16 floats apart for free (the pointwise^T reader). MobileNet's
 * expansion -> depthwise -> projection runs with no transpose.
 *
 * The value has exactly one reader, is no graph output, and both calls run unguarded (no
 * run-time If or Loop): so no view, in-place write, Concat elision or other kernel ever sees
 * its bytes, and the memory plan gives it the same size as in NCHW. The C target in fp32 only
 * (the bf16 core, QDQ convs and the CUDA target have kernels of their own); which calls qualify
 * is compiler/ops/conv.c's to say; a plain pointwise writer whose reader qualifies turns
 * transposed (ft_conv_blocked_transpose), its weights packed again for that mode. Runs after
 * lowering (the modes are chosen and the weights packed), before the memory plan. */
#include <stdlib.h>

#include "conv_params.h"
#include "passes.h"

/* Node i's packed weights again, for the mode its call has now, from the constant lowering
 * packed them from. */
static int repack(ft_graph *g, int i, const ft_kcall *k, ft_err *e) {
  const ft_value *src = &g->vals[k->prepack.from];
  ft_value *v = &g->vals[g->nodes[i].in[k->prepack.input]];
  size_t nb = k->prepack.pack(k->p, src->t.data, NULL);
  unsigned char *data = calloc(nb ? nb : 1, 1);
  if (!data) return ft_fail(e, FT_EIO, "out of memory");
  k->prepack.pack(k->p, src->t.data, data);
  free(v->t.data);
  v->t.data = data;
  v->t.dims[0] = (int64_t)nb;
  return 0;
}

int ft_blocked_layout(ft_graph *g, ft_lowered *lw, ft_err *e) {
  lw->n_blocked = 0;
  if (lw->bf16) return 0;
  int nv = g->n_vals;
  int *uses = calloc((size_t)nv + 1, sizeof(int)), *reader = malloc(sizeof(int) * ((size_t)nv + 1));
  if (!uses || !reader) {
    free(uses);
    free(reader);
    return ft_fail(e, FT_EIO, "out of memory");
  }
  for (int s = 0; s < lw->n; s++) { /* every read: inputs, names an If branch reads, guards */
    const ft_node *n = &g->nodes[lw->order[s]];
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] >= 0) { uses[n->in[k]]++; reader[n->in[k]] = k == 0 ? s : -1; }
    for (int k = 0; k < n->n_outer; k++) if (n->outer[k] >= 0) { uses[n->outer[k]]++; reader[n->outer[k]] = -1; }
    for (int k = 0; k < n->n_guard; k++) uses[ft_guard_value(n->guard[k])]++;
  }
  int rc = 0;
  /* twice: a writer turned transposed can read its own input blocked, an edge seen before it */
  for (int i = 0; i < 2 * lw->n && !rc; i++) {
    int s = i % lw->n;
    const ft_node *n = &g->nodes[lw->order[s]];
    if (n->n_guard || n->n_out < 1 || (lw->calls[s].p[FT_CV_LAYOUT] & FT_CV_Y_BLOCKED)) continue;
    int y = n->out[0];
    if (y < 0 || g->vals[y].kind != FT_V_ACT || g->vals[y].is_output || uses[y] != 1 || reader[y] < 0) continue;
    int t = reader[y];
    const ft_node *m = &g->nodes[lw->order[t]];
    if (m->n_guard || !ft_conv_blocked_side(&lw->calls[t], FT_CV_X_BLOCKED) ||
        lw->calls[t].p[FT_CV_N] != lw->calls[s].p[FT_CV_N] || lw->calls[t].p[FT_CV_C] != lw->calls[s].p[FT_CV_CO])
      continue;
    if (!ft_conv_blocked_side(&lw->calls[s], FT_CV_Y_BLOCKED)) {
      if (!ft_conv_blocked_transpose(&lw->calls[s])) continue;
      if ((rc = repack(g, lw->order[s], &lw->calls[s], e))) break;
    }
    lw->calls[s].p[FT_CV_LAYOUT] |= FT_CV_Y_BLOCKED;
    lw->calls[t].p[FT_CV_LAYOUT] |= FT_CV_X_BLOCKED;
    lw->n_blocked++;
  }
  free(uses);
  free(reader);
  return rc;
}

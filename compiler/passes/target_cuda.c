/* Stage (--target cuda), between lowering and the memory plan: make the lowered calls a CUDA
 * program's. It checks that every call's kernel entry has a CUDA twin that takes its parameters
 * (listing every one that has not), drops the C kernels' scratch (the twins need none: the GEMM
 * and convolution libraries get a shared workspace), lets each twin ask what it needs of the
 * memory plan, and for --precision fp16 stores every float32 tensor as float16: constants are
 * converted (saturating at +-65504, so that exports' "-3.4e38" masks stay finite), activations
 * change type so the arena is planned for half, and the calls of kernels that move float data as
 * bytes or 4-byte elements are rewritten by their entries (ft_kentry.half). Graph inputs and
 * outputs keep float32 at the API; the program converts at its edges.
 *
 * Its result is the libraries the program links (cuBLASLt, cuDNN). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twins.h"
#include "passes.h"

/* every tensor must fit the twins' 32-bit indexing */
static int check_sizes(const ft_graph *g, ft_err *e) {
  for (int v = 0; v < g->n_vals; v++)
    if (g->vals[v].shape_known && ft_numel(&g->vals[v].t) >= ((int64_t)1 << 31))
      return ft_fail(e, FT_EUNSUPPORTED, "%s: tensor '%s' has 2^31 elements or more, which the CUDA kernels do not index",
                     g->path, g->vals[v].name);
  return 0;
}

/* The calls without a twin, each kernel and reason once, with its count and a node using it. */
typedef struct missing {
  struct { const ft_kentry *entry; char why[128]; int count, node; } m[64];
  int n, total;
} missing;

static void note_missing(missing *ms, const ft_kentry *entry, const char *why, int node) {
  ms->total++;
  int j = 0;
  while (j < ms->n && (ms->m[j].entry != entry || strcmp(ms->m[j].why, why))) j++;
  if (j == ms->n && ms->n < 64) {
    ms->m[j].entry = entry;
    snprintf(ms->m[j].why, sizeof ms->m[j].why, "%s", why);
    ms->m[j].count = 0;
    ms->m[j].node = node;
    ms->n++;
  }
  if (j < 64) ms->m[j].count++;
}

static int fail_missing(const ft_graph *g, const missing *ms, ft_err *e) {
  char list[1800] = "";
  size_t m = 0;
  for (int j = 0; j < ms->n && m < sizeof list - 1; j++)
    m += snprintf(list + m, sizeof list - m, "\n  %s: %s; %d call%s, e.g. %s", ms->m[j].entry->name, ms->m[j].why,
                  ms->m[j].count, ms->m[j].count == 1 ? "" : "s", ft_node_label(g, ms->m[j].node));
  return ft_fail(e, FT_EUNSUPPORTED, "%s: --target cuda: %d kernel call%s without a CUDA twin (templates/cuda):%s", g->path,
                 ms->total, ms->total == 1 ? "" : "s", list);
}

/* Each call's twin: the libraries the program needs, or the list of calls that have none. */
static int find_twins(const ft_graph *g, ft_lowered *lw, int fp16, ft_cuda_libs *libs, ft_err *e) {
  missing ms;
  ms.n = ms.total = 0;
  for (int s = 0; s < lw->n; s++) {
    ft_kcall *k = &lw->calls[s];
    const ft_node *fn = &g->nodes[lw->order[s]];
    if (!k->entry && !strcmp(fn->op_type, "Fail") && !strcmp(fn->domain, "ftax"))
      return ft_fail(e, FT_EUNSUPPORTED, "%s: %s; the CUDA target does not branch at run time (compile for the CPU, or "
                     "--bind what the condition depends on)", g->path, ft_attr_str(fn, "message", "a branch cannot run"));
    if (!k->entry) continue;
    ft_twin_call t;
    char why[128];
    k->scratch = 0; /* the twins need no scratch in the arena */
    const ft_node *n = &g->nodes[lw->order[s]];
    int in_loop = 0;
    for (int j = 0; j < n->n_guard; j++) in_loop |= ft_guard_is_loop(n->guard[j]);
    if (in_loop) { /* the program would loop on a flag on the device */
      note_missing(&ms, k->entry, "in the body of a Loop run at run time; the CUDA target does not loop "
                   "(compile for the CPU, or --bind its trip count)", lw->order[s]);
      continue;
    }
    if (n->n_guard) { /* the program would branch on a value on the device */
      note_missing(&ms, k->entry, "under an If condition computed at run time; the CUDA target does not branch "
                   "(compile for the CPU, or --bind what it depends on)",
                   lw->order[s]);
      continue;
    }
    if (ft_cuda_twin(k, fp16, &t, why, sizeof why)) {
      note_missing(&ms, k->entry, why, lw->order[s]);
      continue;
    }
    if (k->entry->twin->prepare) k->entry->twin->prepare(k);
    if (t.lib & FT_TW_BLASLT) libs->blaslt = 1;
    if (t.lib & FT_TW_DNN) libs->dnn = 1;
  }
  return ms.n ? fail_missing(g, &ms, e) : 0;
}

/* float32 storage becomes float16 (graph inputs and outputs keep float32 at the API) */
static int store_half(ft_graph *g, ft_err *e) {
  for (int v = 0; v < g->n_vals; v++) {
    ft_value *val = &g->vals[v];
    if (val->t.dtype != FT_FLOAT || val->kind == FT_V_INPUT || (val->kind == FT_V_ACT && val->is_output)) continue;
    if (val->t.data) {
      int64_t n = ft_numel(&val->t);
      uint16_t *h = malloc(sizeof(uint16_t) * (size_t)(n ? n : 1));
      if (!h) return ft_fail(e, FT_EIO, "out of memory");
      for (int64_t i = 0; i < n; i++) h[i] = ft_half_saturating(((const float *)val->t.data)[i]);
      free(val->t.data);
      val->t.data = h;
    }
    val->t.dtype = FT_FLOAT16;
  }
  return 0;
}

int ft_target_cuda(ft_graph *g, ft_lowered *lw, const ft_cuda_opts *o, ft_cuda_libs *libs, ft_err *e) {
  int fp16 = o->precision == FT_PREC_FP16;
  memset(libs, 0, sizeof *libs);
  /* the memory plan's Concat elision places inputs at byte offsets of the graph's types, which
   * fp16 storage halves; the CUDA program keeps its Concat calls */
  lw->no_concat_elision = 1;
  int rc = check_sizes(g, e);
  if (rc) return rc;
  if (fp16) /* while the values still say which tensors hold float32 */
    for (int s = 0; s < lw->n; s++) {
      ft_kcall *k = &lw->calls[s];
      if (k->entry && k->entry->half) k->entry->half(g, &g->nodes[lw->order[s]], k);
    }
  rc = find_twins(g, lw, fp16, libs, e);
  if (!rc && fp16) rc = store_half(g, e);
  return rc;
}

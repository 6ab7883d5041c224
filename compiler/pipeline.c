/* The pipeline from a loaded graph to a memory plan; the stages are the files named in
 * passes.h, each called once (fusion re-infers and re-simplifies what it rewrote). */
#include "pipeline.h"

#include <string.h>

#include "isa.h"

static void report(const ft_compile_opts *o, const char *stage, const ft_graph *g) {
  if (o->report) fprintf(o->report, "  %-12s %5d nodes\n", stage, ft_graph_count_live(g));
}

static int64_t elems(const ft_value *v) {
  int64_t n = 1;
  for (int i = 0; i < v->t.rank; i++) n *= v->t.dims[i];
  return n;
}

/* Multiply-accumulates of one MatMul, Gemm or (transposed) convolution: the output's element
 * count times the length of each dot product; 0 for other ops and unknown shapes. */
static int64_t node_macs(const ft_graph *g, const ft_node *n) {
  if (n->domain[0] || n->n_in < 2 || n->in[0] < 0 || n->in[1] < 0 || n->out[0] < 0) return 0;
  const ft_value *a = &g->vals[n->in[0]], *w = &g->vals[n->in[1]], *y = &g->vals[n->out[0]];
  if (!a->shape_known || !w->shape_known || !y->shape_known || a->t.rank < 1 || w->t.rank < 1) return 0;
  if (!strcmp(n->op_type, "MatMul")) return elems(y) * a->t.dims[a->t.rank - 1];
  if (!strcmp(n->op_type, "Gemm") && a->t.rank == 2)
    return elems(y) * a->t.dims[ft_attr_int(n, "transA", 0) ? 0 : 1];
  if (!strcmp(n->op_type, "Conv")) return elems(y) * (elems(w) / w->t.dims[0]); /* Cin/group x kernel */
  if (!strcmp(n->op_type, "ConvTranspose")) return elems(a) * (elems(w) / w->t.dims[0]);
  return 0;
}

/* --report's MAC count, taken before fusion, when the graph still has the model's own ops
 * (a fused node hides the products it absorbed): what the paper's Figure 1 plots latency
 * against. */
static void report_macs(const ft_compile_opts *o, const ft_graph *g) {
  if (!o->report) return;
  int64_t macs = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead) macs += node_macs(g, &g->nodes[i]);
  fprintf(o->report, "  MACs         %lld (MatMul, Gemm, Conv, ConvTranspose)\n", (long long)macs);
}

int ft_compile_graph(ft_graph *g, const ft_compile_opts *o, ft_lowered *lw, ft_memplan *mp, ft_cuda_libs *libs,
                     ft_err *e) {
  int fold = o->no_fold ? FT_INFER_NO_FOLD : FT_INFER_FOLD;
  report(o, "loaded", g);
  int rc = ft_resolve_ops(g, e);
  if (!rc) rc = ft_keep_defaults(g, o->pins, e);
  if (!rc) rc = ft_upcast_fp16(g, e);
  if (!rc) rc = ft_specialize(g, o->pins, e);
  if (!rc) { rc = ft_infer(g, fold, e); report(o, "folded", g); }
  if (!rc) { rc = ft_simplify(g, e); report(o, "simplified", g); }
  if (!rc) report_macs(o, g);
  if (!rc) {
    ft_fuse_opts fo = o->fuse;
    fo.report = o->report;
    rc = ft_fuse(g, &fo, e);
    if (!rc) rc = ft_infer(g, fold, e); /* fused ops check their shapes */
    if (!rc) rc = ft_simplify(g, e);
    report(o, "fused", g);
  }
  if (!rc) {
    int lower = o->cuda ? 0 : (o->bf16 ? FT_LOWER_BF16 : FT_LOWER_PACK) | (o->no_winograd ? FT_LOWER_NO_WINO : 0);
    rc = ft_lower_ex(g, lw, lower, e);
  }
  if (!rc && o->cuda) rc = ft_target_cuda(g, lw, o->cuda, libs, e);
  /* the blocked layout's depthwise side is the AVX-512 channel-vector path (templates/c/conv.h):
   * other targets would run a blocked edge on the plain fallback, slower than NCHW */
  if (!rc && !o->cuda && !o->no_blocked && !strcmp(o->isa ? o->isa : FT_ISA_NAME, "avx512"))
    rc = ft_blocked_layout(g, lw, e);
  if (!rc) rc = ft_plan_memory(g, lw, mp, e);
  if (!rc) rc = ft_check_plan(g, lw, mp, e);
  if (!rc && o->report) {
    int kernels = 0;
    for (int s = 0; s < lw->n; s++) kernels += lw->calls[s].entry != NULL && !mp->elided[s];
    fprintf(o->report, "  kernels      %5d calls (%d views without a copy, %d in-place, %d concats written in place)\n",
            kernels, mp->n_alias, mp->n_inplace, mp->n_concat);
    if (!o->cuda) fprintf(o->report, "  blocked      %5d edges in the blocked layout\n", lw->n_blocked);
    if (o->bf16) fprintf(o->report, "  bf16         %5d calls on the bf16 GEMM core (the rest fp32)\n", lw->n_bf16);
    fprintf(o->report, "  arena        %zu bytes (lower bound %zu, %.2fx)\n", mp->arena_bytes, mp->lower_bound,
            mp->lower_bound ? (double)mp->arena_bytes / (double)mp->lower_bound : 1.0);
    fprintf(o->report, "  weights      %zu bytes\n", mp->weight_bytes);
  }
  return rc;
}

/* The pipeline from a loaded graph to a memory plan; the stages are the files named in
 * passes.h, each called once (fusion re-infers and re-simplifies what it rewrote). */
#include "pipeline.h"

static void report(const ft_compile_opts *o, const char *stage, const ft_graph *g) {
  if (o->report) fprintf(o->report, "  %-12s %5d nodes\n", stage, ft_graph_count_live(g));
}

int ft_compile_graph(ft_graph *g, const ft_compile_opts *o, ft_lowered *lw, ft_memplan *mp, ft_cuda_libs *libs,
                     ft_err *e) {
  int fold = o->no_fold ? FT_INFER_NO_FOLD : FT_INFER_FOLD;
  report(o, "loaded", g);
  int rc = ft_resolve_ops(g, e);
  if (!rc) rc = ft_specialize(g, o->pins, e);
  if (!rc) { rc = ft_infer(g, fold, e); report(o, "folded", g); }
  if (!rc) { rc = ft_simplify(g, e); report(o, "simplified", g); }
  if (!rc) {
    ft_fuse_opts fo = o->fuse;
    fo.report = o->report;
    rc = ft_fuse(g, &fo, e);
    if (!rc) rc = ft_infer(g, fold, e); /* fused ops check their shapes */
    if (!rc) rc = ft_simplify(g, e);
    report(o, "fused", g);
  }
  if (!rc) rc = o->cuda ? ft_lower_ex(g, lw, 0, e) : ft_lower(g, lw, e);
  if (!rc && o->cuda) rc = ft_target_cuda(g, lw, o->cuda, libs, e);
  if (!rc) rc = ft_plan_memory(g, lw, mp, e);
  if (!rc && o->report) {
    int kernels = 0;
    for (int s = 0; s < lw->n; s++) kernels += lw->calls[s].entry != NULL;
    fprintf(o->report, "  kernels      %5d calls (%d views without a copy, %d in-place)\n", kernels, mp->n_alias, mp->n_inplace);
    fprintf(o->report, "  arena        %zu bytes (lower bound %zu, %.2fx)\n", mp->arena_bytes, mp->lower_bound,
            mp->lower_bound ? (double)mp->arena_bytes / (double)mp->lower_bound : 1.0);
    fprintf(o->report, "  weights      %zu bytes\n", mp->weight_bytes);
  }
  return rc;
}

/* Control flow and sequences. If, Loop, Scan and the sequence ops never reach their infer: the inference sweep replaces each by
 * the nodes it runs (compiler/passes/branch.c, compiler/passes/loop.c). What stays is the merge
 * of an If whose condition is computed at run time: ftax.IfMerge(cond, then_value, else_value)
 * is the value of the branch that ran. */
#include <stdio.h>

#include "op.h"

#include "control.h"

static int expanded_infer(ft_opctx *c) {
  return ft_infer_fail(c, FT_EINVALID, "reached inference unexpanded (internal error)");
}

/* Both branches are planned ahead of time, so the value after the If has one shape and type
 * whichever ran. */
static int if_merge_infer(ft_opctx *c) {
  const ft_tensor *t = c->in[1], *f = c->in[2];
  int same = t->dtype == f->dtype && t->rank == f->rank;
  for (int d = 0; same && d < t->rank; d++) same = t->dims[d] == f->dims[d];
  if (!same) {
    char ts[160] = "", fs[160] = "";
    size_t m = 0;
    for (int d = 0; d < t->rank && m < sizeof ts - 24; d++) m += snprintf(ts + m, sizeof ts - m, "%s%lld", d ? "x" : "", (long long)t->dims[d]);
    m = 0;
    for (int d = 0; d < f->rank && m < sizeof fs - 24; d++) m += snprintf(fs + m, sizeof fs - m, "%s%lld", d ? "x" : "", (long long)f->dims[d]);
    return ft_infer_fail(c, FT_EUNSUPPORTED,
                         "the If's branches give output '%s' as %s[%s] (then_branch) and %s[%s] (else_branch); ftax plans "
                         "both branches ahead of time and needs each output to have one shape and type",
                         c->graph ? c->graph->vals[c->node->out[0]].name : "?", ft_dtype_name(t->dtype), ts,
                         ft_dtype_name(f->dtype), fs);
  }
  c->out[0]->dtype = t->dtype;
  ft_copy_shape(c->out[0], t);
  return 0;
}

static int if_merge_plan(ft_opctx *c, ft_kcall *k) {
  FT_K(k, ft_if_merge);
  k->p[0] = (int64_t)ft_nbytes(c->out[0]);
  k->np = 1;
  return 0;
}

const ft_opdesc ft_ops_control[] = {
    {"If", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"Loop", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"Scan", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    /* sequences: lowered at compile time into lists of values (compiler/passes/sequence.c) */
    {"SequenceEmpty", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SequenceConstruct", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SequenceInsert", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SequenceErase", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SequenceLength", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SequenceAt", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SplitToSequence", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"ConcatFromSequence", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"IfMerge", "ftax", if_merge_infer, if_merge_plan, "control", 0},
    {0}};

/* Control flow. An If whose condition is known at compile time (constant once the shapes are
 * pinned and the inputs bound) never reaches its infer: the inference sweep replaces it by the
 * branch it takes (compiler/passes/branch.c). What gets here has a condition computed at run
 * time, which ftax does not compile yet: the message says which input to pin or bind. */
#include "op.h"

static int if_infer(ft_opctx *c) {
  int rc = ft_need_const(c, 0, "the condition; ftax compiles If only when its condition is known at compile time");
  return rc ? rc : ft_infer_fail(c, FT_EINVALID, "its condition is constant but the branch was not taken (internal error)");
}

const ft_opdesc ft_ops_control[] = {
    {"If", "", if_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {0}};

/* ftax.Elementwise: a group of float32 elementwise ops run as one program (written by
 * compiler/fuse/fuse_elementwise.c). Kernel and program format: templates/c/elementwise.h.
 *
 *   inputs      up to FT_EW_MAXIN float32 tensors, each broadcasting to `shape`
 *   attributes  program  ints, 5 per instruction (op, dst, a, b, c)
 *               temps    the number of temporary registers
 *               shape    the output shape */
#include <string.h>

#include "cuda_twins.h"
#include "elementwise.h"
#include "op.h"

/* The CUDA twin: templates/cuda/elementwise.cuh runs the same program */
static const ft_twin elementwise_tw = {"ftc_elementwise<$0>", NULL, NULL, "elementwise", 0, NULL, NULL};
static const ft_kentry elementwise_k[] = {{"ft_elementwise_f32", ft_elementwise_f32, FT_FLOAT, 0, &elementwise_tw, NULL}, {0}};
const ft_kentry *const ft_kernels_fused_elementwise[] = {elementwise_k, NULL};

/* The program must only read registers that exist and were written, write temporaries, and end
 * with the one write of the output: a hand-made model cannot make the kernel stray. */
static int check_program(ft_opctx *c, const int64_t *prog, int n, int n_in, int64_t temps) {
  if (n < 1 || n > FT_EW_MAXI) return ft_infer_fail(c, FT_EINVALID, "program has %d instructions; 1 to %d are allowed", n, FT_EW_MAXI);
  if (temps < 0 || temps > FT_EW_MAXT) return ft_infer_fail(c, FT_EINVALID, "temps=%lld is out of range 0..%d", (long long)temps, FT_EW_MAXT);
  char written[FT_EW_MAXIN + FT_EW_MAXT] = {0};
  for (int r = 0; r < n_in; r++) written[r] = 1;
  for (int s = 0; s < n; s++) {
    const int64_t *ins = prog + 5 * s;
    int64_t op = ins[0], dst = ins[1];
    if (!ft_ew_is_unary(op) && !ft_ew_is_unary_imm(op) && !ft_ew_is_binary(op))
      return ft_infer_fail(c, FT_EINVALID, "instruction %d has unknown opcode %lld", s, (long long)op);
    int n_ops = ft_ew_is_binary(op) ? 2 : 1;
    for (int j = 0; j < n_ops; j++) {
      int64_t a = ins[2 + j];
      if (a & FT_EW_IMM) continue;
      if (a < 0 || a >= n_in + temps || !written[a])
        return ft_infer_fail(c, FT_EINVALID, "instruction %d reads register %lld, which holds nothing", s, (long long)a);
    }
    int is_last = s == n - 1;
    if (is_last ? dst != FT_EW_OUT : (dst < n_in || dst >= n_in + temps))
      return ft_infer_fail(c, FT_EINVALID, "instruction %d writes register %lld: only the last may write the output, the others temporaries", s, (long long)dst);
    if (!is_last) written[dst] = 1;
  }
  return 0;
}

static int ew_infer(ft_opctx *c) {
  const int64_t *prog, *shape;
  int n5 = ft_attr_ints(c->node, "program", &prog), rank = ft_attr_ints(c->node, "shape", &shape);
  if (n5 < 0 || n5 % 5 || rank < 0 || rank > FT_MAX_RANK)
    return ft_infer_fail(c, FT_EINVALID, "needs attributes program (5 ints per instruction) and shape");
  if (c->n_in < 1 || c->n_in > FT_EW_MAXIN) return ft_infer_fail(c, FT_EINVALID, "takes 1 to %d inputs, got %d", FT_EW_MAXIN, c->n_in);
  int rc = check_program(c, prog, n5 / 5, c->n_in, ft_attr_int(c->node, "temps", 0));
  if (rc) return rc;
  ft_tensor *y = c->out[0];
  y->dtype = FT_FLOAT;
  y->rank = rank;
  for (int d = 0; d < rank; d++) y->dims[d] = shape[d];
  for (int i = 0; i < c->n_in; i++) {
    const ft_tensor *x = c->in[i];
    if (!x || x->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EINVALID, "input %d is not a float32 tensor", i);
    int ok = x->rank <= rank;
    for (int d = 0; ok && d < x->rank; d++) {
      int64_t xd = x->dims[d], yd = y->dims[rank - x->rank + d];
      ok = xd == 1 || xd == yd;
    }
    if (!ok) return ft_infer_fail(c, FT_EINVALID, "input %d does not broadcast to the output shape", i);
  }
  return 0;
}

static int ew_plan(ft_opctx *c, ft_kcall *k) {
  const int64_t *prog;
  int n5 = ft_attr_ints(c->node, "program", &prog);
  int64_t *p = k->p;
  p[0] = c->n_in;
  p[1] = n5 / 5;
  p[2] = ft_attr_int(c->node, "temps", 0);
  p[3] = 4 + n5;
  memcpy(p + 4, prog, sizeof(int64_t) * (size_t)n5);
  /* the plan needs 1 + r + n*r entries, r <= max(rank, 1) */
  int64_t r = c->out[0]->rank ? c->out[0]->rank : 1;
  if (p[3] + 1 + r * (1 + c->n_in) > FT_MAX_P)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "program and broadcast plan exceed %d parameters", FT_MAX_P);
  const ft_tensor *ts[FT_EW_MAXIN];
  for (int i = 0; i < c->n_in; i++) ts[i] = c->in[i];
  k->np = (int)p[3] + ft_plan_broadcast(ts, c->n_in, c->out[0], p + p[3]);
  k->entry = elementwise_k;
  return 0;
}

const ft_opdesc ft_ops_fused_elementwise[] = {
    {"Elementwise", "ftax", ew_infer, ew_plan, "elementwise", FT_OP_INPLACE},
    {0}};

/* Variadic elementwise ops with broadcasting: Sum, Mean, Max, Min. Kernels: templates/c/variadic.h.
 *
 * Not FT_OP_INPLACE: the kernel writes the output row by row while it still reads the inputs'
 * rows, so the output must not share storage with input 1 or later. */
#include <stdio.h>
#include <string.h>

#include "cuda_twins.h"
#include "op.h"
#include "variadic.h"

/* the CUDA twin (templates/cuda/elementwise.cuh) takes up to 8 inputs */
static int twin_check(const int64_t *p, char *why, size_t wn) {
  if (p[0] <= 8) return 0;
  snprintf(why, wn, "more than 8 inputs");
  return -1;
}
#define TWIN(op, fold, mean) \
  static const ft_twin op##_tw = {"ftc_variadic<$0, ftc_v_" #fold ", " #mean ">", NULL, NULL, "elementwise", 0, twin_check, NULL};
TWIN(sum, sum, 0) TWIN(mean, sum, 1) TWIN(max, max, 0) TWIN(min, min, 0)
#undef TWIN

#define K(dt, op, s) {"ft_" #op "_" #s, ft_##op##_##s, dt, 0, &op##_tw, NULL}
#define KFLOAT(op) K(FT_FLOAT, op, f32), K(FT_DOUBLE, op, f64), K(FT_FLOAT16, op, f16)
#define KINT(op)                                                                                 \
  K(FT_INT8, op, i8), K(FT_INT16, op, i16), K(FT_INT32, op, i32), K(FT_INT64, op, i64),         \
      K(FT_UINT8, op, u8), K(FT_UINT16, op, u16), K(FT_UINT32, op, u32), K(FT_UINT64, op, u64)
static const ft_kentry sum_k[] = {KFLOAT(sum), {0}};
static const ft_kentry mean_k[] = {KFLOAT(mean), {0}};
static const ft_kentry max_k[] = {KFLOAT(max), KINT(max), {0}};
static const ft_kentry min_k[] = {KFLOAT(min), KINT(min), {0}};
#undef K
const ft_kentry *const ft_kernels_variadic[] = {sum_k, mean_k, max_k, min_k, NULL};

static const ft_kentry *table_for(const char *op) {
  if (!strcmp(op, "Sum")) return sum_k;
  if (!strcmp(op, "Mean")) return mean_k;
  if (!strcmp(op, "Max")) return max_k;
  return min_k;
}

static int variadic_infer(ft_opctx *c) {
  if (c->n_in < 1) return ft_infer_fail(c, FT_EINVALID, "needs at least one input");
  if (c->n_in > FT_VARIADIC_MAX)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "has %d inputs; ftax supports at most %d", c->n_in, FT_VARIADIC_MAX);
  for (int i = 0; i < c->n_in; i++) {
    if (!c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d is empty", i);
    if (c->in[i]->dtype != c->in[0]->dtype)
      return ft_infer_fail(c, FT_EINVALID, "inputs have different types (%s and %s)",
                           ft_dtype_name(c->in[0]->dtype), ft_dtype_name(c->in[i]->dtype));
  }
  const ft_kentry *e = table_for(c->node->op_type);
  while (e->name && e->dtype != c->in[0]->dtype) e++;
  if (!e->name)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is not supported for %s", c->node->op_type,
                         ft_dtype_name(c->in[0]->dtype));
  int rc = ft_broadcast_shape(c, c->n_in, c->in, c->out[0]);
  if (rc) return rc;
  c->out[0]->dtype = c->in[0]->dtype;
  return 0;
}

static int variadic_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = table_for(c->node->op_type);
  while (e->name && e->dtype != c->in[0]->dtype) e++;
  k->entry = e;
  /* the broadcast layout takes 1 + rank * (n + 1) entries after the count */
  if (2 + c->out[0]->rank * (c->n_in + 1) > FT_MAX_P)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "too many inputs (%d) for rank %d", c->n_in, c->out[0]->rank);
  k->p[0] = c->n_in;
  k->np = 1 + ft_plan_broadcast(c->in, c->n_in, c->out[0], k->p + 1);
  return 0;
}

#define VAR(name) {name, "", variadic_infer, variadic_plan, "variadic", FT_OP_PAT(FT_PAT_BROADCAST)}
const ft_opdesc ft_ops_variadic[] = {VAR("Sum"), VAR("Mean"), VAR("Max"), VAR("Min"), {0}};

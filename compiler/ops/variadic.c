/* Variadic elementwise ops with broadcasting: Sum, Mean, Max, Min. Kernels: templates/c/variadic.h.
 *
 * Not FT_OP_INPLACE: the kernel writes the output row by row while it still reads the inputs'
 * rows, so the output must not share storage with input 1 or later. */
#include <string.h>

#include "op.h"
#include "variadic.h"

typedef struct kentry { int dtype; const char *name; ft_kernel_fn fn; } kentry;

#define K(dt, fn) {dt, #fn, fn}
#define KFLOAT(op) K(FT_FLOAT, ft_##op##_f32), K(FT_DOUBLE, ft_##op##_f64), K(FT_FLOAT16, ft_##op##_f16)
#define KINT(op)                                                                                 \
  K(FT_INT8, ft_##op##_i8), K(FT_INT16, ft_##op##_i16), K(FT_INT32, ft_##op##_i32),             \
      K(FT_INT64, ft_##op##_i64), K(FT_UINT8, ft_##op##_u8), K(FT_UINT16, ft_##op##_u16),         \
      K(FT_UINT32, ft_##op##_u32), K(FT_UINT64, ft_##op##_u64)
static const kentry sum_k[] = {KFLOAT(sum), {0, 0, 0}};
static const kentry mean_k[] = {KFLOAT(mean), {0, 0, 0}};
static const kentry max_k[] = {KFLOAT(max), KINT(max), {0, 0, 0}};
static const kentry min_k[] = {KFLOAT(min), KINT(min), {0, 0, 0}};

static const kentry *table_for(const char *op) {
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
  const kentry *e = table_for(c->node->op_type);
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
  const kentry *e = table_for(c->node->op_type);
  while (e->name && e->dtype != c->in[0]->dtype) e++;
  k->kernel = e->name;
  k->fn = e->fn;
  /* the broadcast layout takes 1 + rank * (n + 1) entries after the count */
  if (2 + c->out[0]->rank * (c->n_in + 1) > FT_MAX_P)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "too many inputs (%d) for rank %d", c->n_in, c->out[0]->rank);
  k->p[0] = c->n_in;
  k->np = 1 + ft_plan_broadcast(c->in, c->n_in, c->out[0], k->p + 1);
  return 0;
}

#define VAR(name) {name, "", variadic_infer, variadic_plan, "variadic", FT_OP_PAT(FT_PAT_BROADCAST)}
const ft_opdesc ft_ops_variadic[] = {VAR("Sum"), VAR("Mean"), VAR("Max"), VAR("Min"), {0}};

/* Softmax, LogSoftmax, Hardmax. Kernels: templates/c/softmax.h.
 *
 * Before opset 13 the input is coerced to 2-D at `axis` (default 1) and the op works on whole
 * rows of the flattened tensor; from 13 on it works along the single dimension `axis`
 * (default -1). Both come down to [outer, n, inner] for the kernel. */
#include <string.h>

#include "cuda_twins.h"
#include "op.h"
#include "softmax.h"

/* Kernel entries by dtype, each with its CUDA twin (templates/cuda/reduce.cuh) */
#define TWIN(tw, kind) static const ft_twin tw = {"ftc_softmax<$0, " #kind ">", NULL, NULL, "reduce", 0, NULL, NULL};
TWIN(softmax_tw, FTC_SOFTMAX) TWIN(log_softmax_tw, FTC_LOG_SOFTMAX) TWIN(hardmax_tw, FTC_HARDMAX)
#undef TWIN
#define KF(op) {{"ft_" #op "_f32", ft_##op##_f32, FT_FLOAT, 0, &op##_tw, NULL}, {"ft_" #op "_f64", ft_##op##_f64, FT_DOUBLE, 0, &op##_tw, NULL}, {0}}
static const ft_kentry softmax_k[] = KF(softmax);
static const ft_kentry log_softmax_k[] = KF(log_softmax);
static const ft_kentry hardmax_k[] = KF(hardmax);
#undef KF
const ft_kentry *const ft_kernels_softmax[] = {softmax_k, log_softmax_k, hardmax_k, NULL};

static const ft_kentry *find_kernel(ft_opctx *c) {
  const char *op = c->node->op_type;
  const ft_kentry *e = !strcmp(op, "Softmax") ? softmax_k : !strcmp(op, "LogSoftmax") ? log_softmax_k : hardmax_k;
  for (; e->name; e++)
    if (e->dtype == c->in[0]->dtype) return e;
  ft_infer_fail(c, FT_EUNSUPPORTED, "%s is not supported for %s", op, ft_dtype_name(c->in[0]->dtype));
  return NULL;
}

/* [outer, n, inner] for the op's axis semantics. */
static int layout(ft_opctx *c, int64_t *outer, int64_t *n, int64_t *inner) {
  const ft_tensor *x = c->in[0];
  int old = c->opset < 13, axis;
  int rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", old ? 1 : -1), x->rank, &axis);
  if (rc) return rc;
  *outer = *n = *inner = 1;
  for (int d = 0; d < axis; d++) *outer *= x->dims[d];
  if (old) { /* one row per outer index: everything from axis on */
    for (int d = axis; d < x->rank; d++) *n *= x->dims[d];
  } else {
    if (x->rank) *n = x->dims[axis];
    for (int d = axis + 1; d < x->rank; d++) *inner *= x->dims[d];
  }
  return 0;
}

static int softmax_infer(ft_opctx *c) {
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs an input");
  if (!find_kernel(c)) return c->err->code;
  int64_t outer, n, inner;
  int rc = layout(c, &outer, &n, &inner);
  if (rc) return rc;
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dtype = c->in[0]->dtype;
  return 0;
}

static int softmax_plan(ft_opctx *c, ft_kcall *k) {
  const ft_kentry *e = find_kernel(c);
  if (!e) return c->err->code;
  int64_t outer, n, inner;
  int rc = layout(c, &outer, &n, &inner);
  if (rc) return rc;
  k->entry = e;
  k->p[0] = outer;
  k->p[1] = n;
  k->p[2] = inner;
  k->np = 3;
  size_t es = ft_dtype_size(c->in[0]->dtype);
  if (!strcmp(c->node->op_type, "Hardmax")) k->scratch = (size_t)inner * (8 + es);
  else if (inner > 1) k->scratch = (size_t)inner * 2 * es;
  else if (!strcmp(c->node->op_type, "LogSoftmax")) k->scratch = (size_t)n * es;
  return 0;
}

#define SM(name) {name, "", softmax_infer, softmax_plan, "softmax", FT_OP_INPLACE | FT_OP_PAT(FT_PAT_REDUCTION)}
const ft_opdesc ft_ops_softmax[] = {SM("Softmax"), SM("LogSoftmax"), SM("Hardmax"), {0}};

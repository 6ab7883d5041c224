/* Matrix products with their bias and activation in the GEMM's epilogue, written by the
 * gemm_epilogue pass:
 *
 *   ftax.FusedMatMul(A, B, Bias?)   MatMul, + Bias (one value per output column), then activation
 *   ftax.FusedGemm(A, B, C?)        Gemm (transA, transB, alpha, beta as Gemm's), then activation
 *
 * activation: "" (none) or a unary scalar op's name (templates/common/scalar_ops.h: "Relu", "Tanh",
 * "Gelu", "GeluTanh" the tanh approximation, "Mish" ...); activation_params: its parameters a and
 * b where it takes some (LeakyRelu's alpha, Clip's bounds).
 * Shapes, packing of a constant B and the kernel are MatMul's and Gemm's own (compiler/ops/
 * matmul.c, found through the op table); this adds the bias and the activation to the plan.
 * float32 only: the activations live in the fp32 GEMM core's epilogue (templates/c/gemm.h). */
#include <string.h>

#include "gemm.h"
#include "op.h"
#include "scalar_table.h"

/* The activation's code (the scalar op's id) and, with k, its parameters in f[2] and f[3]. */
static int activation(ft_opctx *c, int64_t *act, ft_kcall *k) {
  int rc = ft_epilogue_activation(c, "activation", act);
  if (rc || !k) return rc;
  const ft_attr *pa = ft_attr_find(c->node, "activation_params");
  for (int i = 0; pa && i < 2 && i < pa->n_floats; i++) k->f[2 + i] = pa->floats[i];
  return 0;
}

/* The base op's infer or plan on the first n_in inputs of this node. */
static int base_infer(ft_opctx *c, const char *op, int n_in) {
  const ft_opdesc *d = ft_op_find("", op);
  ft_opctx b = *c;
  b.n_in = n_in;
  return d->infer(&b);
}

static int base_plan(ft_opctx *c, ft_kcall *k, const char *op, int n_in) {
  const ft_opdesc *d = ft_op_find("", op);
  ft_opctx b = *c;
  b.n_in = n_in;
  return d->plan(&b, k);
}

static int matmul_infer(ft_opctx *c) {
  if (c->n_in < 2 || c->n_in > 3 || !c->in[0] || !c->in[1]) return ft_infer_fail(c, FT_EINVALID, "needs inputs A, B and optionally Bias");
  if (c->in[0]->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EUNSUPPORTED, "FusedMatMul is float32 only, got %s", ft_dtype_name(c->in[0]->dtype));
  int64_t act;
  int rc = activation(c, &act, NULL);
  if (rc || (rc = base_infer(c, "MatMul", 2))) return rc;
  const ft_tensor *y = c->out[0], *bias = c->n_in > 2 ? c->in[2] : NULL;
  if (bias) {
    int64_t n = y->rank ? y->dims[y->rank - 1] : 1;
    if (bias->dtype != FT_FLOAT || ft_numel(bias) != n || bias->rank > y->rank || (bias->rank && bias->dims[bias->rank - 1] != n))
      return ft_infer_fail(c, FT_EINVALID, "Bias must be float32 with one value per output column (%lld)", (long long)n);
  }
  return 0;
}

static int matmul_plan(ft_opctx *c, ft_kcall *k) {
  int rc = base_plan(c, k, "MatMul", 2);
  if (rc) return rc;
  if (c->n_in > 2 && c->in[2]) {
    k->p[FT_MM_HAS_BIAS] = 1;
    k->p[FT_MM_BIAS_RS] = 0;
    k->p[FT_MM_BIAS_CS] = 1;
    k->f[1] = 1; /* beta */
  }
  return activation(c, &k->p[FT_MM_ACT], k);
}

static int gemm_infer(ft_opctx *c) {
  int64_t act;
  int rc = activation(c, &act, NULL);
  return rc ? rc : base_infer(c, "Gemm", c->n_in);
}

static int gemm_plan(ft_opctx *c, ft_kcall *k) {
  int rc = base_plan(c, k, "Gemm", c->n_in);
  return rc ? rc : activation(c, &k->p[FT_MM_ACT], k);
}

const ft_opdesc ft_ops_fused_gemm[] = {
    {"FusedMatMul", "ftax", matmul_infer, matmul_plan, "gemm", 0},
    {"FusedGemm", "ftax", gemm_infer, gemm_plan, "gemm", 0},
    {0}};

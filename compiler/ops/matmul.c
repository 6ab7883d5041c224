/* MatMul (numpy semantics: 1-D operands, broadcast batch dims) and Gemm (transposes, alpha,
 * beta, C broadcast to [M,N]). Kernels: templates/c/gemm.h; a constant B is packed at compile
 * time into the GEMM core's panel layout (ft_mm_pack_b). */
#include <stdio.h>
#include <string.h>

#include "cuda_twins.h"
#include "gemm.h"
#include "op.h"

/* The CUDA twins (templates/cuda/gemm.cuh): cuBLASLt for float32, a plain kernel for the
 * integer types. Neither reads B in the CPU's packed layout, and cuBLASLt's epilogue has the
 * activations templates/cuda/runtime.cuh's ftc_act knows. */
static int naive_check(const int64_t *p, char *why, size_t wn) {
  if (!p[FT_MM_PACKED]) return 0;
  snprintf(why, wn, "weights were pre-packed for the CPU");
  return -1;
}
static int lt_check(const int64_t *p, char *why, size_t wn) {
  if (naive_check(p, why, wn)) return -1;
  if (ft_act_known(p[FT_MM_ACT])) return 0;
  snprintf(why, wn, "activation %d", (int)p[FT_MM_ACT]);
  return -1;
}
static const ft_twin lt_tw = {"ftc_matmul_lt<$0>", "ftc_matmul_lt_init<$0>", "ftc_matmul_lt_free", "gemm",
                              FT_TW_BLASLT, lt_check, NULL};
static const ft_twin naive_tw = {"ftc_matmul_naive<$0>", NULL, NULL, "gemm", 0, naive_check, NULL};
#define K(dt, s, tw) {"ft_matmul_" #s, ft_matmul_##s, dt, 0, &tw, NULL}
static const ft_kentry matmul_k[] = {
    K(FT_FLOAT, f32, lt_tw),       K(FT_DOUBLE, f64, naive_tw), K(FT_INT32, i32, naive_tw), K(FT_INT64, i64, naive_tw),
    K(FT_UINT32, u32, naive_tw), K(FT_UINT64, u64, naive_tw), {0}};
#undef K
const ft_kentry *const ft_kernels_matmul[] = {matmul_k, NULL};

static const ft_kentry *find_kernel(int dtype) {
  for (const ft_kentry *e = matmul_k; e->name; e++)
    if (e->dtype == dtype) return e;
  return NULL;
}

static void dims_str(const ft_tensor *t, char *buf, size_t n) {
  int m = snprintf(buf, n, "[");
  for (int i = 0; i < t->rank && m < (int)n; i++) m += snprintf(buf + m, n - m, "%s%lld", i ? "," : "", (long long)t->dims[i]);
  if (m < (int)n) snprintf(buf + m, n - m, "]");
}

/* ---- MatMul ---- */

static int matmul_infer(ft_opctx *c) {
  if (c->n_in != 2 || !c->in[0] || !c->in[1]) return ft_infer_fail(c, FT_EINVALID, "needs two inputs");
  const ft_tensor *a = c->in[0], *b = c->in[1];
  if (a->dtype != b->dtype)
    return ft_infer_fail(c, FT_EINVALID, "inputs have different types (%s and %s)", ft_dtype_name(a->dtype), ft_dtype_name(b->dtype));
  if (!find_kernel(a->dtype))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "MatMul is not supported for %s (float32, float64, int32, int64, uint32, uint64 are)", ft_dtype_name(a->dtype));
  if (a->rank < 1 || b->rank < 1) return ft_infer_fail(c, FT_EINVALID, "MatMul needs inputs of rank 1 or more");
  int64_t K = a->dims[a->rank - 1], Kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
  if (K != Kb) {
    char x[160], y[160];
    dims_str(a, x, sizeof x);
    dims_str(b, y, sizeof y);
    return ft_infer_fail(c, FT_EINVALID, "shapes %s and %s do not multiply: inner dims %lld and %lld differ", x, y, (long long)K, (long long)Kb);
  }
  /* batch dims broadcast like elementwise ops */
  ft_tensor ab = {0}, bb = {0}, ob = {0};
  ab.rank = a->rank > 2 ? a->rank - 2 : 0;
  bb.rank = b->rank > 2 ? b->rank - 2 : 0;
  for (int i = 0; i < ab.rank; i++) ab.dims[i] = a->dims[i];
  for (int i = 0; i < bb.rank; i++) bb.dims[i] = b->dims[i];
  const ft_tensor *ts[2] = {&ab, &bb};
  int rc = ft_broadcast_shape(c, 2, ts, &ob);
  if (rc) return rc;
  ft_tensor *y = c->out[0];
  y->dtype = a->dtype;
  y->rank = 0;
  for (int i = 0; i < ob.rank; i++) y->dims[y->rank++] = ob.dims[i];
  if (a->rank >= 2) y->dims[y->rank++] = a->dims[a->rank - 2];
  if (b->rank >= 2) y->dims[y->rank++] = b->dims[b->rank - 1];
  if (y->rank > FT_MAX_RANK) return ft_infer_fail(c, FT_EUNSUPPORTED, "result has more than %d dims", FT_MAX_RANK);
  return 0;
}

/* Matrix strides of one operand's batch dims over the output's batch dims (0 where broadcast). */
static void batch_strides(const ft_tensor *t, int nb_t, const int64_t *od, int r, int64_t *st) {
  int64_t s = 1;
  for (int d = r - 1; d >= 0; d--) {
    int td = d - (r - nb_t);
    if (td < 0 || t->dims[td] == 1) { st[d] = 0; continue; }
    st[d] = s;
    s *= t->dims[td];
    (void)od;
  }
}

static int matmul_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
  const ft_kentry *ke = find_kernel(a->dtype);
  k->entry = ke;
  int64_t *p = k->p;
  memset(p, 0, sizeof(int64_t) * FT_MM_BDIMS);
  int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1, K = a->dims[a->rank - 1];
  int64_t N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
  int nba = a->rank > 2 ? a->rank - 2 : 0, nbb = b->rank > 2 ? b->rank - 2 : 0;
  int r = y->rank - (a->rank >= 2) - (b->rank >= 2);
  int64_t a_nmat = 1, b_nmat = 1, nbatch = 1;
  for (int i = 0; i < nba; i++) a_nmat *= a->dims[i];
  for (int i = 0; i < nbb; i++) b_nmat *= b->dims[i];
  for (int i = 0; i < r; i++) nbatch *= y->dims[i];
  int64_t as[FT_MAX_RANK], bs[FT_MAX_RANK];
  batch_strides(a, nba, y->dims, r, as);
  batch_strides(b, nbb, y->dims, r, bs);
  /* one B for every batch: the batches of A are just more rows of one GEMM */
  if (b_nmat == 1 && a_nmat == nbatch) { M *= nbatch; a_nmat = 1; nbatch = 1; r = 0; }
  p[FT_MM_M] = M; p[FT_MM_N] = N; p[FT_MM_K] = K;
  p[FT_MM_A_RS] = K; p[FT_MM_A_CS] = 1; p[FT_MM_B_RS] = N; p[FT_MM_B_CS] = 1;
  p[FT_MM_A_NMAT] = a_nmat; p[FT_MM_B_NMAT] = b_nmat;
  int m = 0; /* batch dims of size 1 carry nothing */
  int64_t *bd = p + FT_MM_BDIMS;
  int64_t dd[FT_MAX_RANK], da[FT_MAX_RANK], db[FT_MAX_RANK];
  for (int i = 0; i < r; i++)
    if (y->dims[i] != 1) { dd[m] = y->dims[i]; da[m] = as[i]; db[m] = bs[i]; m++; }
  p[FT_MM_BRANK] = m;
  for (int i = 0; i < m; i++) { bd[i] = dd[i]; bd[m + i] = da[i]; bd[2 * m + i] = db[i]; }
  k->np = FT_MM_BDIMS + 3 * m;
  k->f[0] = 1; k->f[1] = 0; k->f[2] = 0; k->f[3] = 0;
  k->nf = 4;
  if (a->dtype == FT_FLOAT) {
    k->scratch = ft_mm_scratch(M, K, a_nmat);
    if (b->data) { /* constant weights: ftaxc packs them once */
      k->prepack.input = 1;
      k->prepack.flag_p = FT_MM_PACKED;
      k->prepack.pack = ft_mm_pack_b;
    }
  }
  return 0;
}

/* ---- Gemm ---- */

static int gemm_infer(ft_opctx *c) {
  if (c->n_in < 2 || !c->in[0] || !c->in[1]) return ft_infer_fail(c, FT_EINVALID, "needs inputs A and B");
  const ft_tensor *a = c->in[0], *b = c->in[1], *cc = c->n_in > 2 ? c->in[2] : NULL;
  if (a->dtype != FT_FLOAT || b->dtype != FT_FLOAT || (cc && cc->dtype != FT_FLOAT))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "Gemm is supported for float32 only (got %s)", ft_dtype_name(a->dtype));
  if (a->rank != 2 || b->rank != 2) return ft_infer_fail(c, FT_EINVALID, "A and B must be matrices (rank 2), got ranks %d and %d", a->rank, b->rank);
  int ta = ft_attr_int(c->node, "transA", 0) != 0, tb = ft_attr_int(c->node, "transB", 0) != 0;
  int64_t M = a->dims[ta ? 1 : 0], K = a->dims[ta ? 0 : 1];
  int64_t Kb = b->dims[tb ? 1 : 0], N = b->dims[tb ? 0 : 1];
  if (K != Kb)
    return ft_infer_fail(c, FT_EINVALID, "inner dims differ: A gives K=%lld, B gives K=%lld (transA=%d, transB=%d)", (long long)K, (long long)Kb, ta, tb);
  ft_tensor *y = c->out[0];
  y->dtype = FT_FLOAT;
  y->rank = 2;
  y->dims[0] = M;
  y->dims[1] = N;
  if (cc) {
    if (cc->rank > 2) return ft_infer_fail(c, FT_EINVALID, "C has rank %d; it must broadcast to [M,N]", cc->rank);
    for (int i = 0; i < cc->rank; i++) {
      int64_t want = y->dims[2 - cc->rank + i];
      if (cc->dims[i] != 1 && cc->dims[i] != want)
        return ft_infer_fail(c, FT_EINVALID, "C does not broadcast to [%lld,%lld]", (long long)M, (long long)N);
    }
  }
  return 0;
}

static int gemm_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *a = c->in[0], *b = c->in[1], *cc = c->n_in > 2 ? c->in[2] : NULL, *y = c->out[0];
  int ta = ft_attr_int(c->node, "transA", 0) != 0, tb = ft_attr_int(c->node, "transB", 0) != 0;
  int64_t M = y->dims[0], N = y->dims[1], K = a->dims[ta ? 0 : 1];
  float beta = ft_attr_float(c->node, "beta", 1.0f);
  k->entry = &matmul_k[0];
  int64_t *p = k->p;
  memset(p, 0, sizeof(int64_t) * FT_MM_BDIMS);
  p[FT_MM_M] = M; p[FT_MM_N] = N; p[FT_MM_K] = K;
  p[FT_MM_A_RS] = ta ? 1 : K; p[FT_MM_A_CS] = ta ? M : 1;
  p[FT_MM_B_RS] = tb ? 1 : N; p[FT_MM_B_CS] = tb ? K : 1;
  p[FT_MM_A_NMAT] = 1; p[FT_MM_B_NMAT] = 1;
  if (cc && beta != 0) {
    int64_t st[2];
    ft_broadcast_strides(cc, y, st);
    p[FT_MM_HAS_BIAS] = 1;
    p[FT_MM_BIAS_RS] = st[0];
    p[FT_MM_BIAS_CS] = st[1];
  }
  k->np = FT_MM_BDIMS;
  k->f[0] = ft_attr_float(c->node, "alpha", 1.0f);
  k->f[1] = beta;
  k->f[2] = 0; k->f[3] = 0;
  k->nf = 4;
  k->scratch = ft_mm_scratch(M, K, 1);
  if (b->data) {
    k->prepack.input = 1;
    k->prepack.flag_p = FT_MM_PACKED;
    k->prepack.pack = ft_mm_pack_b;
  }
  return 0;
}

const ft_opdesc ft_ops_matmul[] = {
    {"MatMul", "", matmul_infer, matmul_plan, "gemm", FT_OP_PAT(FT_PAT_OUT_FUSABLE)},
    {"Gemm", "", gemm_infer, gemm_plan, "gemm", FT_OP_PAT(FT_PAT_OUT_FUSABLE)},
    {0}};

/* Twin of templates/c/gemm.h's ft_matmul_f32 (MatMul and Gemm): cuBLASLt.
 *
 * The C plan describes row-major Y[M,N] = alpha * A[M,K] B[K,N] (+ beta * bias, then relu or
 * clip) per batch, with element strides inside each matrix (transposes) and matrix strides per
 * batch dim (0 where a dim broadcasts). cuBLASLt is column-major, so the twin computes
 * Y^T[N,M] = B^T A^T: "A" of cuBLASLt is our B and "B" our A, each N or T by its strides.
 *
 * Batch dims are merged where every operand's strides allow; the innermost merged dim becomes a
 * strided batch, any outer ones a loop of calls with offsets computed at init. A bias row of N
 * (Linear, Gemm with a vector C) is the BIAS epilogue (RELU_BIAS with relu); a full [M,N] C is
 * cuBLASLt's C with beta; any other bias or clip runs a small epilogue kernel afterwards.
 *
 * Everything is decided at init (descriptors, the heuristic's algorithm, workspace from the
 * environment); a run is the cublasLtMatmul calls. Accumulation is fp32 in every precision;
 * --precision fp32 asks for true fp32 (CUBLAS_COMPUTE_32F), tf32 for TF32 tensor cores, fp16
 * stores A, B and Y as half. Integer and float64 MatMul run a plain kernel (ftc_matmul_naive). */
#ifndef FTC_GEMM_CUH
#define FTC_GEMM_CUH

#include <cublasLt.h>
#include <stdlib.h>

#include "gemm_params.h"
#include "runtime.cuh"

#define FTC_LT(e, call)                                                                          \
  do {                                                                                           \
    cublasStatus_t s_ = (call);                                                                  \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                             \
      return ftc_fail((e), "%s: %s (%s)", #call, cublasLtGetStatusString(s_), cublasLtGetStatusName(s_)); \
  } while (0)

typedef struct ftc_mm_plan {
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc, ld;
  cublasLtMatmulAlgo_t algo;
  float alpha, beta;
  int use_c;          /* a full [M,N] bias passed as cuBLASLt's C */
  int epi;            /* run ftc_mm_epi_k afterwards */
  int act;
  float lo, hi, epi_beta;
  int64_t bias_rs, bias_cs, M, N, nbatch;
  int loops;          /* calls; loop i reads our A at a_off[i], B at b_off[i], writes Y at y_off[i] */
  int64_t *a_off, *b_off, *y_off;
  size_t ws;
} ftc_mm_plan;

static void ftc_matmul_lt_free(void *pl) {
  ftc_mm_plan *q = (ftc_mm_plan *)pl;
  if (!q) return;
  if (q->op) cublasLtMatmulDescDestroy(q->op);
  if (q->la) cublasLtMatrixLayoutDestroy(q->la);
  if (q->lb) cublasLtMatrixLayoutDestroy(q->lb);
  if (q->lc) cublasLtMatrixLayoutDestroy(q->lc);
  if (q->ld) cublasLtMatrixLayoutDestroy(q->ld);
  free(q->a_off);
  free(q->b_off);
  free(q->y_off);
  free(q);
}

static void ftc_blas_destroy(void *h) { cublasLtDestroy((cublasLtHandle_t)h); }

/* the largest power of two (up to 256) dividing an address or a byte count */
static inline uint32_t ftc_align_of(uintptr_t x) {
  uint32_t a = 256;
  while (a > 1 && x % a) a /= 2;
  return a;
}

template <class T> struct ftc_lt_type;
template <> struct ftc_lt_type<float> { static const cudaDataType_t v = CUDA_R_32F; };
template <> struct ftc_lt_type<__half> { static const cudaDataType_t v = CUDA_R_16F; };
template <> struct ftc_lt_type<__nv_bfloat16> { static const cudaDataType_t v = CUDA_R_16BF; };

/* a column-major layout for our row-major operand with element strides (rs, cs) over a
 * rows_x x cols_x matrix (rows_x the dim the cuBLASLt view puts first): op N when the view's
 * rows are contiguous, T otherwise */
static int ftc_lt_layout(ftc_env *e, cudaDataType_t t, int64_t rows, int64_t cols, int64_t unit_dim_stride,
                         int64_t other_stride, int64_t batch, int64_t bstride, cublasLtMatrixLayout_t *l,
                         cublasOperation_t *op) {
  int64_t r, c, ld;
  if (unit_dim_stride == 1) { *op = CUBLAS_OP_N; r = rows; c = cols; ld = other_stride; }
  else if (other_stride == 1) { *op = CUBLAS_OP_T; r = cols; c = rows; ld = unit_dim_stride; }
  else return ftc_fail(e, "a matrix operand with strides (%lld, %lld) has no unit stride", (long long)unit_dim_stride, (long long)other_stride);
  if (c == 1 || ld < r) ld = r; /* one column: any leading dimension will do */
  FTC_LT(e, cublasLtMatrixLayoutCreate(l, t, (uint64_t)r, (uint64_t)c, ld));
  if (batch > 1) {
    int32_t b = (int32_t)batch;
    FTC_LT(e, cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b));
    FTC_LT(e, cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &bstride, sizeof bstride));
  }
  return 0;
}

template <class T>
static int ftc_matmul_lt_init(const int64_t *p, const double *f, const void *const *in, void *const *out,
                              ftc_env *e, void **plan) {
  ftc_mm_plan *q = (ftc_mm_plan *)calloc(1, sizeof *q);
  if (!q) return ftc_fail(e, "out of memory");
  *plan = q;
  if (!e->blas) {
    cublasLtHandle_t h;
    FTC_LT(e, cublasLtCreate(&h));
    e->blas = h;
    e->blas_free = ftc_blas_destroy;
  }
  const cudaDataType_t dt = ftc_lt_type<T>::v;
  int64_t M = p[FT_MM_M], N = p[FT_MM_N], K = p[FT_MM_K], r = p[FT_MM_BRANK];
  const int64_t *bd = p + FT_MM_BDIMS, *as = bd + r, *bs = as + r;
  q->M = M;
  q->N = N;
  q->alpha = (float)f[0];
  q->act = (int)p[FT_MM_ACT];
  q->lo = (float)f[2];
  q->hi = (float)f[3];
  /* merge batch dims (innermost first) where A's and B's matrix strides allow */
  int64_t md[FTC_MAXR + 1], ma[FTC_MAXR + 1], mb[FTC_MAXR + 1];
  int m = 0;
  for (int64_t d = r - 1; d >= 0; d--) {
    if (m > 0 && as[d] == ma[m - 1] * md[m - 1] && bs[d] == mb[m - 1] * md[m - 1]) { md[m - 1] *= bd[d]; continue; }
    md[m] = bd[d]; ma[m] = as[d]; mb[m] = bs[d]; m++;
  }
  /* md[0] is the innermost merged dim: the strided batch; the rest loop */
  int64_t batch = m ? md[0] : 1, sa = m ? ma[0] * M * K : 0, sb = m ? mb[0] * K * N : 0;
  q->nbatch = 1;
  for (int k = 0; k < m; k++) q->nbatch *= md[k];
  q->loops = (int)(q->nbatch / batch);
  q->a_off = (int64_t *)calloc((size_t)q->loops, sizeof(int64_t));
  q->b_off = (int64_t *)calloc((size_t)q->loops, sizeof(int64_t));
  q->y_off = (int64_t *)calloc((size_t)q->loops, sizeof(int64_t));
  if (!q->a_off || !q->b_off || !q->y_off) return ftc_fail(e, "out of memory");
  for (int it = 0; it < q->loops; it++) {
    int64_t rem = it, ao = 0, bo = 0;
    for (int k = 1; k < m; k++) {
      int64_t x = rem % md[k];
      rem /= md[k];
      ao += x * ma[k];
      bo += x * mb[k];
    }
    q->a_off[it] = ao * M * K;
    q->b_off[it] = bo * K * N;
    q->y_off[it] = (int64_t)it * batch * M * N;
  }
  /* bias: a row vector with beta 1 goes to the epilogue, a full matrix to C, the rest to a kernel */
  int has_bias = p[FT_MM_HAS_BIAS] != 0;
  q->bias_rs = p[FT_MM_BIAS_RS];
  q->bias_cs = p[FT_MM_BIAS_CS];
  q->epi_beta = (float)f[1];
  int bias_vec = has_bias && q->bias_rs == 0 && q->bias_cs == 1 && f[1] == 1.0;
  q->use_c = has_bias && !bias_vec && q->bias_rs == N && q->bias_cs == 1;
  q->beta = q->use_c ? (float)f[1] : 0.0f;
  /* ReLU rides on cuBLASLt's epilogue; the other activations (clip, tanh, GELU...) and any
     other bias go to ftc_mm_epi_k */
  q->epi = (has_bias && !bias_vec && !q->use_c) || (q->act != FTC_ACT_NONE && q->act != FTC_ACT_RELU) ||
           (q->act == FTC_ACT_RELU && !bias_vec && has_bias);
  if (!ftc_act_known(q->act)) return ftc_fail(e, "unknown GEMM activation %d", q->act);
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  if (bias_vec) epi = q->act == FTC_ACT_RELU ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  else if (q->act == FTC_ACT_RELU && !has_bias) epi = CUBLASLT_EPILOGUE_RELU;

  cublasComputeType_t ct = e->math == FTC_MATH_TF32 && dt == CUDA_R_32F ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  FTC_LT(e, cublasLtMatmulDescCreate(&q->op, ct, CUDA_R_32F));
  cublasOperation_t opa, opb;
  /* cuBLASLt's A = our B viewed N x K (element (n, k) at n * b_cs + k * b_rs) */
  if (ftc_lt_layout(e, dt, N, K, p[FT_MM_B_CS], p[FT_MM_B_RS], batch, sb, &q->la, &opa)) return 1;
  /* cuBLASLt's B = our A viewed K x M (element (k, m) at k * a_cs + m * a_rs) */
  if (ftc_lt_layout(e, dt, K, M, p[FT_MM_A_CS], p[FT_MM_A_RS], batch, sa, &q->lb, &opb)) return 1;
  FTC_LT(e, cublasLtMatmulDescSetAttribute(q->op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
  FTC_LT(e, cublasLtMatmulDescSetAttribute(q->op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
  FTC_LT(e, cublasLtMatmulDescSetAttribute(q->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  if (bias_vec) {
    const void *bias = in[2];
    FTC_LT(e, cublasLtMatmulDescSetAttribute(q->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  }
  int64_t sy = M * N, zero = 0;
  FTC_LT(e, cublasLtMatrixLayoutCreate(&q->ld, dt, (uint64_t)N, (uint64_t)M, N));
  FTC_LT(e, cublasLtMatrixLayoutCreate(&q->lc, dt, (uint64_t)N, (uint64_t)M, N));
  if (batch > 1) {
    int32_t b = (int32_t)batch;
    FTC_LT(e, cublasLtMatrixLayoutSetAttribute(q->ld, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b));
    FTC_LT(e, cublasLtMatrixLayoutSetAttribute(q->ld, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sy, sizeof sy));
    FTC_LT(e, cublasLtMatrixLayoutSetAttribute(q->lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b));
    /* C: the same bias matrix for every batch, or Y itself (beta 0) */
    FTC_LT(e, cublasLtMatrixLayoutSetAttribute(q->lc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, q->use_c ? &zero : &sy, sizeof sy));
  }
  /* alignment of every address a call will see */
  uintptr_t es = sizeof(T), ua = (uintptr_t)in[0], ub = (uintptr_t)in[1], uy = (uintptr_t)out[0];
  uint32_t al_a = ftc_align_of(ub | (uintptr_t)(sb * es)), al_b = ftc_align_of(ua | (uintptr_t)(sa * es));
  uint32_t al_d = ftc_align_of(uy | (uintptr_t)(sy * es)), al_c = q->use_c ? ftc_align_of((uintptr_t)in[2]) : al_d;
  for (int it = 0; it < q->loops; it++) {
    al_a = al_a < ftc_align_of((uintptr_t)(q->b_off[it] * es)) ? al_a : ftc_align_of((uintptr_t)(q->b_off[it] * es));
    al_b = al_b < ftc_align_of((uintptr_t)(q->a_off[it] * es)) ? al_b : ftc_align_of((uintptr_t)(q->a_off[it] * es));
    al_d = al_d < ftc_align_of((uintptr_t)(q->y_off[it] * es)) ? al_d : ftc_align_of((uintptr_t)(q->y_off[it] * es));
  }
  if (!q->use_c) al_c = al_d;
  cublasLtMatmulPreference_t pref;
  FTC_LT(e, cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = e->workspace_bytes;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof al_a);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof al_b);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof al_c);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d, sizeof al_d);
  cublasLtMatmulHeuristicResult_t res[4];
  int found = 0;
  cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic((cublasLtHandle_t)e->blas, q->op, q->la, q->lb, q->lc, q->ld, pref, 4, res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0)
    return ftc_fail(e, "cuBLASLt has no algorithm for a %lldx%lldx%lld GEMM (batch %lld, epilogue %d): %s",
                    (long long)M, (long long)N, (long long)K, (long long)batch, (int)epi, cublasLtGetStatusString(hs));
  q->algo = res[0].algo;
  q->ws = res[0].workspaceSize;
  if (e->verbose)
    fprintf(stderr, "ftax-cuda: GEMM %lldx%lldx%lld batch %lld x %d calls, epilogue %d%s, workspace %zu\n", (long long)M,
            (long long)N, (long long)K, (long long)batch, q->loops, (int)epi, q->epi ? " + kernel" : "", q->ws);
  return 0;
}

/* y = act(y + beta * bias[m * rs + n * cs]) over nbatch matrices of M x N */
template <class T>
__global__ void ftc_mm_epi_k(T *y, const T *bias, uint32_t n, uint32_t M, uint32_t N, int64_t rs, int64_t cs,
                             float beta, int act, float lo, float hi) {
  FTC_GRID_LOOP(i, n) {
    uint32_t mn = i % (M * N), mm = mn / N, nn = mn % N;
    float v = ftc_widen(y[i]);
    if (bias) v += beta * (float)ftc_widen(bias[mm * rs + nn * cs]);
    y[i] = ftc_cv<T>(ftc_act(v, act, lo, hi));
  }
}

template <class T>
static int ftc_matmul_lt(const int64_t *p, const double *f, const void *const *in, void *const *out,
                         void *scratch, ftc_env *e, void *plan) {
  ftc_mm_plan *q = (ftc_mm_plan *)plan;
  if (!q) return ftc_fail(e, "internal error: GEMM without a plan");
  if (q->M <= 0 || q->N <= 0) return 0;
  const T *A = (const T *)in[0], *B = (const T *)in[1];
  T *Y = (T *)out[0];
  for (int it = 0; it < q->loops; it++) {
    const void *c = q->use_c ? in[2] : (const void *)(Y + q->y_off[it]);
    FTC_LT(e, cublasLtMatmul((cublasLtHandle_t)e->blas, q->op, &q->alpha, B + q->b_off[it], q->la, A + q->a_off[it], q->lb,
                             &q->beta, c, q->lc, Y + q->y_off[it], q->ld, &q->algo, e->workspace, q->ws, e->stream));
  }
  if (q->epi) {
    int has_bias = p[FT_MM_HAS_BIAS] && !q->use_c && !(q->bias_rs == 0 && q->bias_cs == 1 && q->epi_beta == 1.0f);
    int64_t n = q->nbatch * q->M * q->N;
    FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_mm_epi_k<T>)(
        Y, has_bias ? (const T *)in[2] : (const T *)NULL, (uint32_t)n, (uint32_t)q->M, (uint32_t)q->N, q->bias_rs,
        q->bias_cs, q->epi_beta, q->act, q->lo, q->hi); /* (relu twice is relu: no harm if cuBLASLt did it) */
    return ftc_launched(e, "GEMM epilogue");
  }
  return 0;
}

/* ---- integer and float64 MatMul: one thread per output element ---------------------------- */
struct ftc_mm_naive_p {
  int64_t M, N, K, ars, acs, brs, bcs;
  int r;
  int32_t bd[FTC_MAXR], as[FTC_MAXR], bs[FTC_MAXR];
};
template <class T> __global__ void ftc_matmul_naive_k(const T *A, const T *B, T *Y, ftc_mm_naive_p q, uint32_t n) {
  FTC_GRID_LOOP(t, n) {
    uint32_t b = t / (uint32_t)(q.M * q.N), mn = t % (uint32_t)(q.M * q.N);
    int64_t i = mn / q.N, j = mn % q.N, ai = 0, bi = 0, rem = b;
    for (int d = q.r - 1; d >= 0; d--) {
      int64_t x = rem % q.bd[d];
      rem /= q.bd[d];
      ai += x * q.as[d];
      bi += x * q.bs[d];
    }
    const T *a = A + ai * q.M * q.K, *bm = B + bi * q.K * q.N;
    T acc = 0;
    for (int64_t k = 0; k < q.K; k++) acc += (T)(a[i * q.ars + k * q.acs] * bm[k * q.brs + j * q.bcs]);
    Y[t] = acc;
  }
}
template <class T>
static int ftc_matmul_naive(const int64_t *p, const double *f, const void *const *in, void *const *out,
                            void *scratch, ftc_env *e, void *plan) {
  ftc_mm_naive_p q;
  memset(&q, 0, sizeof q);
  q.M = p[FT_MM_M]; q.N = p[FT_MM_N]; q.K = p[FT_MM_K];
  q.ars = p[FT_MM_A_RS]; q.acs = p[FT_MM_A_CS]; q.brs = p[FT_MM_B_RS]; q.bcs = p[FT_MM_B_CS];
  q.r = (int)p[FT_MM_BRANK];
  int64_t nb = 1;
  for (int d = 0; d < q.r; d++) {
    q.bd[d] = (int32_t)p[FT_MM_BDIMS + d];
    q.as[d] = (int32_t)p[FT_MM_BDIMS + q.r + d];
    q.bs[d] = (int32_t)p[FT_MM_BDIMS + 2 * q.r + d];
    nb *= q.bd[d];
  }
  int64_t n = nb * q.M * q.N;
  if (n <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_matmul_naive_k<T>)(
      (const T *)in[0], (const T *)in[1], (T *)out[0], q, (uint32_t)n);
  return ftc_launched(e, "matmul");
}

#endif

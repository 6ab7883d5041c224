/* Twins of templates/c/fused_norm.h: ftax.LayerNorm, ftax.SkipLayerNorm (y = LN(x [+ bias]
 * [+ skip]) and the sum when the graph reads it) and ftax.EmbedLayerNorm (y = LN(sum of
 * embedding rows [+ a dense row])).
 *
 * One block per row. The first pass adds the terms, keeps the sum in shared memory (as float,
 * also in fp16 programs) and writes it where the graph reads it; the mean and then the variance
 * come from that copy (two passes, no cancellation), and the last pass normalizes it. Rows wider
 * than the shared buffer keep the sum in the output instead (Sum, or y). Every element is read
 * and written by the same thread, so y may be x or skip (in place). */
#ifndef FTC_FUSED_NORM_CUH
#define FTC_FUSED_NORM_CUH

#include "runtime.cuh"

#define FTC_FLN_ROW 4096 /* floats of a row kept in shared memory */
#define FTC_ELN_MAX_GATHER 4

/* the moments of row s (float in shared memory, or T in global memory) and its normalization */
template <class T, class S>
__device__ __forceinline__ void ftc_fln_finish(const S *s, uint32_t cols, float eps, const T *gamma, const T *beta, T *y, float *sh) {
  float a = 0;
  for (uint32_t c = threadIdx.x; c < cols; c += blockDim.x) a += (float)ftc_widen(s[c]);
  const float mean = ftc_block_fold<ftc_fold_add, float>(a, sh) / (float)cols;
  float v = 0;
  for (uint32_t c = threadIdx.x; c < cols; c += blockDim.x) { float d = (float)ftc_widen(s[c]) - mean; v += d * d; }
  const float rstd = 1.0f / sqrtf(ftc_block_fold<ftc_fold_add, float>(v, sh) / (float)cols + eps);
  for (uint32_t c = threadIdx.x; c < cols; c += blockDim.x) {
    float t = ((float)ftc_widen(s[c]) - mean) * rstd * (float)ftc_widen(gamma[c]);
    if (beta) t += (float)ftc_widen(beta[c]);
    y[c] = ftc_cv<T>(t);
  }
}

/* LayerNorm and SkipLayerNorm: the sum is x + bias + skip, in that order (the graph's) */
template <class T>
__global__ void ftc_skip_layernorm_k(const T *X, const T *S, const T *bias, const T *gamma, const T *beta, T *Y, T *Sum,
                                     uint32_t rows, uint32_t cols, float eps) {
  __shared__ float row[FTC_FLN_ROW];
  __shared__ float sh[32];
  const bool keep = cols <= FTC_FLN_ROW;
  for (uint32_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *x = X + (size_t)r * cols, *sk = S ? S + (size_t)r * cols : (const T *)NULL;
    T *y = Y + (size_t)r * cols, *sum = Sum ? Sum + (size_t)r * cols : (T *)NULL;
    T *s = sum ? sum : y; /* where the sum goes when it does not fit in shared memory */
    for (uint32_t c = threadIdx.x; c < cols; c += blockDim.x) {
      float t = ftc_widen(x[c]);
      if (bias) t += (float)ftc_widen(bias[c]);
      if (sk) t += (float)ftc_widen(sk[c]);
      if (keep) row[c] = t;
      if (sum || !keep) s[c] = ftc_cv<T>(t);
    }
    __syncthreads();
    if (keep) ftc_fln_finish<T, float>(row, cols, eps, gamma, beta, y, sh);
    else ftc_fln_finish<T, T>(s, cols, eps, gamma, beta, y, sh);
    __syncthreads();
  }
}

/* ft_fused_layernorm: p = [rows, cols, has_beta]; in: X, Gamma, Beta */
template <class T>
static int ftc_fused_layernorm(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch,
                               ftc_env *e, void *plan) {
  if (p[0] <= 0 || p[1] <= 0) return 0;
  unsigned blocks = (unsigned)(p[0] < 65535 * 16 ? p[0] : 65535 * 16);
  FTC_LAUNCH(blocks, ftc_row_threads(p[1]), e->stream, ftc_skip_layernorm_k<T>)(
      (const T *)in[0], (const T *)NULL, (const T *)NULL, (const T *)in[1], p[2] ? (const T *)in[2] : (const T *)NULL,
      (T *)out[0], (T *)NULL, (uint32_t)p[0], (uint32_t)p[1], (float)f[0]);
  return ftc_launched(e, "layernorm");
}

/* ft_skip_layernorm: p = [rows, cols, has_beta, has_bias, has_sum]; in: X, Skip, Gamma, Beta,
 * Bias; out: Y, Sum */
template <class T>
static int ftc_skip_layernorm(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch,
                              ftc_env *e, void *plan) {
  if (p[0] <= 0 || p[1] <= 0) return 0;
  unsigned blocks = (unsigned)(p[0] < 65535 * 16 ? p[0] : 65535 * 16);
  FTC_LAUNCH(blocks, ftc_row_threads(p[1]), e->stream, ftc_skip_layernorm_k<T>)(
      (const T *)in[0], (const T *)in[1], p[3] ? (const T *)in[4] : (const T *)NULL, (const T *)in[2],
      p[2] ? (const T *)in[3] : (const T *)NULL, (T *)out[0], p[4] ? (T *)out[1] : (T *)NULL, (uint32_t)p[0], (uint32_t)p[1],
      (float)f[0]);
  return ftc_launched(e, "skip layernorm");
}

/* EmbedLayerNorm. Row r sums table_k[ids_k[r]] over the gathers, then row r % dense_rows of
 * Dense; a negative id counts from the end, one still out of range adds nothing (Gather's zeros). */
struct ftc_eln_p {
  int32_t rows, cols, ng, dense_rows;
  const void *ids[FTC_ELN_MAX_GATHER];
  const void *table[FTC_ELN_MAX_GATHER];
  int64_t vocab[FTC_ELN_MAX_GATHER];
  int is64[FTC_ELN_MAX_GATHER];
  float eps;
};
template <class T>
__global__ void ftc_embed_layernorm_k(ftc_eln_p p, const T *gamma, const T *beta, const T *dense, T *Y, T *Sum) {
  __shared__ float row[FTC_FLN_ROW];
  __shared__ float sh[32];
  const uint32_t cols = (uint32_t)p.cols;
  const bool keep = cols <= FTC_FLN_ROW;
  for (uint32_t r = blockIdx.x; r < (uint32_t)p.rows; r += gridDim.x) {
    const T *t[FTC_ELN_MAX_GATHER + 1];
    int nt = 0;
    for (int k = 0; k < p.ng; k++) {
      int64_t id = p.is64[k] ? ((const int64_t *)p.ids[k])[r] : (int64_t)((const int32_t *)p.ids[k])[r];
      if (id < 0) id += p.vocab[k];
      if (id >= 0 && id < p.vocab[k]) t[nt++] = (const T *)p.table[k] + id * (int64_t)cols;
    }
    if (dense) t[nt++] = dense + (size_t)(r % (uint32_t)p.dense_rows) * cols;
    T *y = Y + (size_t)r * cols, *sum = Sum ? Sum + (size_t)r * cols : (T *)NULL, *s = sum ? sum : y;
    for (uint32_t c = threadIdx.x; c < cols; c += blockDim.x) {
      float v = 0;
      for (int j = 0; j < nt; j++) v += (float)ftc_widen(t[j][c]);
      if (keep) row[c] = v;
      if (sum || !keep) s[c] = ftc_cv<T>(v);
    }
    __syncthreads();
    if (keep) ftc_fln_finish<T, float>(row, cols, p.eps, gamma, beta, y, sh);
    else ftc_fln_finish<T, T>(s, cols, p.eps, gamma, beta, y, sh);
    __syncthreads();
  }
}

/* ft_embed_layernorm: p = [rows, cols, n_gather, dense_rows, has_beta, has_sum, (vocab, ids
 * are int64) per gather]; in: Gamma, Beta, Dense, (ids, table) per gather; out: Y, Sum */
template <class T>
static int ftc_embed_layernorm(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch,
                               ftc_env *e, void *plan) {
  ftc_eln_p a;
  memset(&a, 0, sizeof a);
  a.rows = (int32_t)p[0];
  a.cols = (int32_t)p[1];
  a.ng = (int32_t)p[2];
  a.dense_rows = (int32_t)p[3];
  a.eps = (float)f[0];
  if (a.ng > FTC_ELN_MAX_GATHER) return ftc_fail(e, "EmbedLayerNorm with %d gathers (at most %d)", a.ng, FTC_ELN_MAX_GATHER);
  for (int k = 0; k < a.ng; k++) {
    a.vocab[k] = p[6 + 2 * k];
    a.is64[k] = (int)p[7 + 2 * k];
    a.ids[k] = in[3 + 2 * k];
    a.table[k] = in[4 + 2 * k];
  }
  if (a.rows <= 0 || a.cols <= 0) return 0;
  unsigned blocks = (unsigned)(a.rows < 65535 * 16 ? a.rows : 65535 * 16);
  FTC_LAUNCH(blocks, ftc_row_threads(a.cols), e->stream, ftc_embed_layernorm_k<T>)(
      a, (const T *)in[0], p[4] ? (const T *)in[1] : (const T *)NULL, a.dense_rows ? (const T *)in[2] : (const T *)NULL,
      (T *)out[0], p[5] ? (T *)out[1] : (T *)NULL);
  return ftc_launched(e, "embed layernorm");
}

#endif

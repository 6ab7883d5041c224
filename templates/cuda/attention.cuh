/* Twin of templates/c/attention.h (ftax.Attention): multi-head attention over strided views of
 * q, k, v (a packed QKV projection read in place), with the additive / select / causal masks in
 * the graph's order, the output written straight into its [B, S, H*D] place.
 *
 * One warp per query row, streaming over the keys 32 at a time (a key per lane): the lane's
 * score, the masks, then an online softmax (running maximum and sum, earlier partial sums
 * rescaled) and P.V accumulated with the head dims spread over the lanes. The row of q sits in
 * shared memory (scaled scores use it from every lane). Head sizes up to 256 (ftaxc checks). */
#ifndef FTC_ATTENTION_CUH
#define FTC_ATTENTION_CUH

#include "attention_params.h"
#include "runtime.cuh"

#define FTC_ATTN_MAXD FT_AT_CUDA_MAXD
#define FTC_ATTN_WARPS 4

struct ftc_attn_p {
  int32_t n1, n2, sq, sk, dk, dv;
  int64_t q[5], k[5], v[5], o[4], add[5], sel[6];
  int add_first;
  float scale, fill;
};

template <class T>
__global__ void ftc_attention_k(const T *Q, const T *K, const T *V, const T *addm, const uint8_t *selm, T *O, ftc_attn_p p) {
  __shared__ float qs[FTC_ATTN_WARPS][FTC_ATTN_MAXD];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const uint32_t rows = (uint32_t)p.n1 * (uint32_t)p.n2 * (uint32_t)p.sq;
  for (uint32_t row = blockIdx.x * FTC_ATTN_WARPS + warp; row < rows; row += gridDim.x * FTC_ATTN_WARPS) {
    const int64_t i = row % (uint32_t)p.sq, bh = row / (uint32_t)p.sq, b2 = bh % p.n2, b1 = bh / p.n2;
    const T *q = Q + p.q[0] + b1 * p.q[1] + b2 * p.q[2] + i * p.q[3];
    const T *k = K + p.k[0] + b1 * p.k[1] + b2 * p.k[2];
    const T *v = V + p.v[0] + b1 * p.v[1] + b2 * p.v[2];
    T *o = O + p.o[0] + b1 * p.o[1] + b2 * p.o[2] + i * p.o[3];
    for (int d = lane; d < p.dk; d += 32) qs[warp][d] = ftc_widen(q[d * p.q[4]]);
    __syncwarp();
    float m = -INFINITY, l = 0, acc[FTC_ATTN_MAXD / 32];
#pragma unroll
    for (int c = 0; c < FTC_ATTN_MAXD / 32; c++) acc[c] = 0;
    for (int64_t j0 = 0; j0 < p.sk; j0 += 32) {
      const int64_t j = j0 + lane;
      const bool valid = j < p.sk;
      float s = -INFINITY;
      if (valid) {
        const T *kr = k + j * p.k[3];
        float dot = 0;
        for (int d = 0; d < p.dk; d++) dot += qs[warp][d] * (float)ftc_widen(kr[d * p.k[4]]);
        s = p.scale * dot;
        for (int pass = 0; pass < 2; pass++) { /* the masks, in the graph's order */
          const bool add_now = (pass == 0) == (p.add_first != 0);
          if (add_now && p.add[0]) s += (float)ftc_widen(addm[b1 * p.add[1] + b2 * p.add[2] + i * p.add[3] + j * p.add[4]]);
          else if (!add_now && p.sel[0] == FT_AT_SEL_TENSOR) {
            const uint8_t mk = selm[b1 * p.sel[2] + b2 * p.sel[3] + i * p.sel[4] + j * p.sel[5]];
            if ((mk != 0) != (p.sel[1] != 0)) s = p.fill;
          } else if (!add_now && p.sel[0] == FT_AT_SEL_CAUSAL && j > i + p.sel[1]) s = p.fill;
        }
      }
      const float m_new = fmaxf(m, ftc_warp_max(valid ? s : -INFINITY));
      const float pj = valid && m_new != -INFINITY ? expf(s - m_new) : 0.0f;
      const float corr = m == -INFINITY ? 0.0f : expf(m - m_new);
      l = l * corr + ftc_warp_sum(pj);
#pragma unroll
      for (int c = 0; c < FTC_ATTN_MAXD / 32; c++) acc[c] *= corr;
      const int nj = p.sk - j0 < 32 ? (int)(p.sk - j0) : 32;
      for (int jj = 0; jj < nj; jj++) {
        const float pjj = __shfl_sync(0xffffffffu, pj, jj);
        const T *vr = v + (j0 + jj) * p.v[3];
#pragma unroll
        for (int c = 0; c < FTC_ATTN_MAXD / 32; c++) {
          const int d = lane + 32 * c;
          if (d < p.dv) acc[c] += pjj * (float)ftc_widen(vr[d * p.v[4]]);
        }
      }
      m = m_new;
    }
    const float inv = 1.0f / l;
#pragma unroll
    for (int c = 0; c < FTC_ATTN_MAXD / 32; c++) {
      const int d = lane + 32 * c;
      if (d < p.dv) o[d] = ftc_cv<T>(acc[c] * inv);
    }
    __syncwarp();
  }
}

template <class T>
static int ftc_attention(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch, ftc_env *e,
                         void *plan) {
  ftc_attn_p a;
  memset(&a, 0, sizeof a);
  a.n1 = (int32_t)p[FT_AT_N1]; a.n2 = (int32_t)p[FT_AT_N2]; a.sq = (int32_t)p[FT_AT_SQ];
  a.sk = (int32_t)p[FT_AT_SK]; a.dk = (int32_t)p[FT_AT_DK]; a.dv = (int32_t)p[FT_AT_DV];
  memcpy(a.q, p + FT_AT_Q, sizeof a.q);
  memcpy(a.k, p + FT_AT_K, sizeof a.k);
  memcpy(a.v, p + FT_AT_V, sizeof a.v);
  memcpy(a.o, p + FT_AT_O, sizeof a.o);
  memcpy(a.add, p + FT_AT_ADD, sizeof a.add);
  memcpy(a.sel, p + FT_AT_SEL, sizeof a.sel);
  a.add_first = (int)p[FT_AT_ADD_FIRST];
  a.scale = (float)f[0];
  a.fill = (float)f[1];
  if (a.dk > FTC_ATTN_MAXD || a.dv > FTC_ATTN_MAXD) return ftc_fail(e, "attention heads of %d/%d dims (at most %d)", a.dk, a.dv, FTC_ATTN_MAXD);
  int64_t rows = (int64_t)a.n1 * a.n2 * a.sq;
  if (rows <= 0 || a.dv <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(rows, FTC_ATTN_WARPS), 32 * FTC_ATTN_WARPS, e->stream, ftc_attention_k<T>)(
      (const T *)in[0], (const T *)in[1], (const T *)in[2], a.add[0] ? (const T *)in[3] : (const T *)NULL,
      a.sel[0] == FT_AT_SEL_TENSOR ? (const uint8_t *)in[4] : (const uint8_t *)NULL, (T *)out[0], a);
  return ftc_launched(e, "attention");
}

#endif

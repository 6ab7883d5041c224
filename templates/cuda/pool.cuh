/* Twins of the windowed pools of templates/c/pool.h (MaxPool with optional Indices, AveragePool,
 * LpPool): one thread per output element walking its window; taps outside the input are skipped,
 * in the C kernel's tap order, so ties and NaNs resolve the same way. */
#ifndef FTC_POOL_CUH
#define FTC_POOL_CUH

#include "pool_params.h"
#include "runtime.cuh"

struct ftc_pool_p {
  int32_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
  int32_t planes;
  int incl, order, has_idx;
};

static inline void ftc_pool_load(const int64_t *p, ftc_pool_p *q) {
  for (int i = 0; i < 3; i++) {
    q->in[i] = (int32_t)p[FT_PL_IN + i];
    q->out[i] = (int32_t)p[FT_PL_OUT + i];
    q->k[i] = (int32_t)p[FT_PL_K + i];
    q->s[i] = (int32_t)p[FT_PL_S + i];
    q->d[i] = (int32_t)p[FT_PL_D + i];
    q->pb[i] = (int32_t)p[FT_PL_P + i];
    q->pe[i] = (int32_t)p[FT_PL_PE + i];
  }
  q->planes = (int32_t)p[FT_PL_PLANES];
  q->incl = (int)p[FT_PL_INCL_PAD];
  q->order = (int)p[FT_PL_ORDER];
  q->has_idx = (int)p[FT_PL_HAS_IDX];
}

/* taps t in [0, k) of a window starting at start (step d) that land in [lo, hi) */
__device__ __forceinline__ int32_t ftc_pool_count(int32_t start, int32_t d, int32_t k, int32_t lo, int32_t hi) {
  int32_t n = 0;
  for (int32_t t = 0; t < k; t++) n += start + t * d >= lo && start + t * d < hi;
  return n;
}

template <class T> __global__ void ftc_maxpool_k(const T *x, T *y, int64_t *ind, ftc_pool_p q, uint32_t n) {
  typedef typename ftc_acc<T>::type C;
  uint32_t S_out = (uint32_t)(q.out[0] * q.out[1] * q.out[2]);
  int64_t S_in = (int64_t)q.in[0] * q.in[1] * q.in[2];
  FTC_GRID_LOOP(i, n) {
    uint32_t pl = i / S_out, r = i % S_out;
    int32_t ow = (int32_t)(r % (uint32_t)q.out[2]), oh = (int32_t)(r / (uint32_t)q.out[2] % (uint32_t)q.out[1]);
    int32_t od = (int32_t)(r / (uint32_t)(q.out[2] * q.out[1]));
    const T *xp = x + (size_t)pl * S_in;
    C best = ftc_lowest<C>();
    int64_t at = -1;
    for (int32_t kd = 0; kd < q.k[0]; kd++) {
      int32_t id = od * q.s[0] + kd * q.d[0] - q.pb[0];
      if (id < 0 || id >= q.in[0]) continue;
      for (int32_t kh = 0; kh < q.k[1]; kh++) {
        int32_t ih = oh * q.s[1] + kh * q.d[1] - q.pb[1];
        if (ih < 0 || ih >= q.in[1]) continue;
        for (int32_t kw = 0; kw < q.k[2]; kw++) {
          int32_t iw = ow * q.s[2] + kw * q.d[2] - q.pb[2];
          if (iw < 0 || iw >= q.in[2]) continue;
          int64_t a = ((int64_t)id * q.in[1] + ih) * q.in[2] + iw;
          C v = ftc_widen(xp[a]);
          if (ind) { if (at < 0 || v > best) { best = v; at = a; } }
          else best = v > best ? v : best;
        }
      }
    }
    y[i] = ftc_cv<T>(best);
    if (ind) {
      if (at < 0) at = 0;
      if (q.order) { /* column-major: reverse the order of the spatial dims */
        int64_t w_ = at % q.in[2], h_ = at / q.in[2] % q.in[1], d_ = at / q.in[2] / q.in[1];
        at = (w_ * q.in[1] + h_) * q.in[0] + d_;
      }
      ind[i] = (int64_t)pl * S_in + at;
    }
  }
}

template <class T>
static int ftc_maxpool(const int64_t *p, const double *f, const void *const *in, void *const *out,
                       void *scratch, ftc_env *e, void *plan) {
  ftc_pool_p q;
  ftc_pool_load(p, &q);
  int64_t n = (int64_t)q.planes * q.out[0] * q.out[1] * q.out[2];
  if (n <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_maxpool_k<T>)(
      (const T *)in[0], (T *)out[0], q.has_idx ? (int64_t *)out[1] : (int64_t *)NULL, q, (uint32_t)n);
  return ftc_launched(e, "maxpool");
}

/* AveragePool (LP = 0) and LpPool (LP = 1, f[0] = p) */
template <class T, int LP> __global__ void ftc_avgpool_k(const T *x, T *y, ftc_pool_p q, uint32_t n, float pw) {
  uint32_t S_out = (uint32_t)(q.out[0] * q.out[1] * q.out[2]);
  int64_t S_in = (int64_t)q.in[0] * q.in[1] * q.in[2];
  FTC_GRID_LOOP(i, n) {
    uint32_t pl = i / S_out, r = i % S_out;
    int32_t ow = (int32_t)(r % (uint32_t)q.out[2]), oh = (int32_t)(r / (uint32_t)q.out[2] % (uint32_t)q.out[1]);
    int32_t od = (int32_t)(r / (uint32_t)(q.out[2] * q.out[1]));
    const T *xp = x + (size_t)pl * S_in;
    float acc = 0;
    for (int32_t kd = 0; kd < q.k[0]; kd++) {
      int32_t id = od * q.s[0] + kd * q.d[0] - q.pb[0];
      if (id < 0 || id >= q.in[0]) continue;
      for (int32_t kh = 0; kh < q.k[1]; kh++) {
        int32_t ih = oh * q.s[1] + kh * q.d[1] - q.pb[1];
        if (ih < 0 || ih >= q.in[1]) continue;
        for (int32_t kw = 0; kw < q.k[2]; kw++) {
          int32_t iw = ow * q.s[2] + kw * q.d[2] - q.pb[2];
          if (iw < 0 || iw >= q.in[2]) continue;
          float v = ftc_widen(xp[((int64_t)id * q.in[1] + ih) * q.in[2] + iw]);
          if (!LP) acc += v;
          else acc += pw == 2.0f ? v * v : (pw == 1.0f ? fabsf(v) : powf(fabsf(v), pw));
        }
      }
    }
    if (LP) acc = pw == 2.0f ? sqrtf(acc) : (pw == 1.0f ? acc : powf(acc, 1.0f / pw));
    else {
      int32_t cnt = 1;
      for (int a = 0; a < 3; a++) {
        int32_t o = a == 0 ? od : a == 1 ? oh : ow, start = o * q.s[a] - q.pb[a];
        cnt *= q.incl ? ftc_pool_count(start, q.d[a], q.k[a], -q.pb[a], q.in[a] + q.pe[a])
                      : ftc_pool_count(start, q.d[a], q.k[a], 0, q.in[a]);
      }
      acc = cnt ? acc / (float)cnt : 0.0f;
    }
    y[i] = ftc_cv<T>(acc);
  }
}

template <class T, int LP>
static int ftc_avgpool(const int64_t *p, const double *f, const void *const *in, void *const *out,
                       void *scratch, ftc_env *e, void *plan) {
  ftc_pool_p q;
  ftc_pool_load(p, &q);
  int64_t n = (int64_t)q.planes * q.out[0] * q.out[1] * q.out[2];
  if (n <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_avgpool_k<T, LP>)(
      (const T *)in[0], (T *)out[0], q, (uint32_t)n, f ? (float)f[0] : 0.0f);
  return ftc_launched(e, "avgpool");
}

#endif

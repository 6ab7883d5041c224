/* Twins of templates/c/reduce.h, softmax.h, norm.h and the global pools of pool.h: one block per
 * output (or per row), its threads folding the row with warp shuffles. Rows are read in memory
 * order when the reduced axis is the innermost one (softmax, LayerNorm, means over the hidden
 * size), which is the case exports produce. */
#ifndef FTC_REDUCE_CUH
#define FTC_REDUCE_CUH

#include "runtime.cuh"

/* ---- Reduce*: p = [r, dims[r], out_strides[r], count, n_out] -------------------------------
 * Dims with an output stride are kept, the others reduced. The host splits them into the kept
 * dims (dims, input strides, output strides) and the reduced dims (dims, input strides). */
struct ftc_red {
  int nk, nr;
  int32_t kd[FTC_MAXR], ks[FTC_MAXR], kos[FTC_MAXR];
  int32_t rd[FTC_MAXR], rs[FTC_MAXR];
  int32_t count, n_out;
};

static inline void ftc_red_load(const int64_t *p, ftc_red *q) {
  int r = (int)p[0];
  const int64_t *d = p + 1, *os = p + 1 + r;
  int64_t st[FTC_MAXR], s = 1;
  memset(q, 0, sizeof *q);
  for (int k = r - 1; k >= 0; k--) { st[k] = s; s *= d[k]; }
  for (int k = 0; k < r; k++) {
    if (os[k]) { q->kd[q->nk] = (int32_t)d[k]; q->ks[q->nk] = (int32_t)st[k]; q->kos[q->nk] = (int32_t)os[k]; q->nk++; }
    else { q->rd[q->nr] = (int32_t)d[k]; q->rs[q->nr] = (int32_t)st[k]; q->nr++; }
  }
  q->count = (int32_t)p[1 + 2 * r];
  q->n_out = (int32_t)p[2 + 2 * r];
}

__device__ __forceinline__ int32_t ftc_red_base(const ftc_red &q, uint32_t o) {
  int32_t off = 0;
  for (int k = 0; k < q.nk; k++) off += (int32_t)((o / (uint32_t)q.kos[k]) % (uint32_t)q.kd[k]) * q.ks[k];
  return off;
}
__device__ __forceinline__ int32_t ftc_red_off(const ftc_red &q, uint32_t j) {
  if (q.nr == 1) return (int32_t)j * q.rs[0];
  int32_t off = 0;
  for (int k = q.nr - 1; k >= 0; k--) {
    off += (int32_t)(j % (uint32_t)q.rd[k]) * q.rs[k];
    j /= (uint32_t)q.rd[k];
  }
  return off;
}

/* A reduction: init, map of each element, combine, and post (with the count) on the result. */
struct ftc_r_sum {
  template <class C> __device__ static C init() { return (C)0; }
  template <class C> __device__ static C map(C x) { return x; }
  template <class C> __device__ static C combine(C a, C b) { return a + b; }
  template <class C> __device__ static C post(C y, int32_t n) { return y; }
};
struct ftc_r_mean : ftc_r_sum {
  template <class C> __device__ static C post(C y, int32_t n) { return n ? (C)(y / (C)n) : (C)0; }
};
struct ftc_r_prod : ftc_r_sum {
  template <class C> __device__ static C init() { return (C)1; }
  template <class C> __device__ static C combine(C a, C b) { return a * b; }
};
struct ftc_r_max : ftc_r_sum {
  template <class C> __device__ static C init() { return ftc_lowest<C>(); }
  template <class C> __device__ static C combine(C a, C b) { return (a > b || a != a) ? a : b; }
};
struct ftc_r_min : ftc_r_sum {
  template <class C> __device__ static C init() { return ftc_highest<C>(); }
  template <class C> __device__ static C combine(C a, C b) { return (a < b || a != a) ? a : b; }
};
struct ftc_r_l1 : ftc_r_sum {
  template <class C> __device__ static C map(C x) {
    if constexpr (std::is_unsigned<C>::value) return x; /* no sign to drop */
    else return x < (C)0 ? (C)0 - x : x;
  }
};
struct ftc_r_sum_square : ftc_r_sum {
  template <class C> __device__ static C map(C x) { return x * x; }
};
struct ftc_r_l2 : ftc_r_sum_square {
  template <class C> __device__ static C post(C y, int32_t n) { return sqrt(y); }
};
struct ftc_r_log_sum : ftc_r_sum {
  template <class C> __device__ static C post(C y, int32_t n) { return log(y); }
};
/* the combine of a fold functor for ftc_block_fold */
template <class OP> struct ftc_r_fold { template <class C> __device__ static C combine(C a, C b) { return OP::template combine<C>(a, b); } };

template <class T, class OP> __global__ void ftc_reduce_k(const T *x, T *y, ftc_red q) {
  typedef typename ftc_acc<T>::type C;
  __shared__ C sh[32];
  for (uint32_t o = blockIdx.x; o < (uint32_t)q.n_out; o += gridDim.x) {
    const T *xo = x + ftc_red_base(q, o);
    C acc = OP::template init<C>();
    for (uint32_t j = threadIdx.x; j < (uint32_t)q.count; j += blockDim.x)
      acc = OP::template combine<C>(acc, OP::template map<C>((C)ftc_widen(xo[ftc_red_off(q, j)])));
    acc = ftc_block_fold<ftc_r_fold<OP>, C>(acc, sh);
    if (threadIdx.x == 0) y[o] = ftc_cv<T>(OP::template post<C>(acc, q.count));
  }
}

/* LogSumExp: m = max, then m' + log(sum exp(x - m')) with m' = m unless m is infinite. */
template <class T> __global__ void ftc_reduce_lse_k(const T *x, T *y, ftc_red q) {
  typedef typename ftc_acc<T>::type C;
  __shared__ C sh[32];
  for (uint32_t o = blockIdx.x; o < (uint32_t)q.n_out; o += gridDim.x) {
    const T *xo = x + ftc_red_base(q, o);
    C m = ftc_lowest<C>();
    for (uint32_t j = threadIdx.x; j < (uint32_t)q.count; j += blockDim.x) m = ftc_r_max::combine<C>(m, (C)ftc_widen(xo[ftc_red_off(q, j)]));
    m = ftc_block_fold<ftc_fold_max, C>(m, sh);
    C shift = m - m == (C)0 ? m : (C)0, s = 0;
    for (uint32_t j = threadIdx.x; j < (uint32_t)q.count; j += blockDim.x) s += exp((C)ftc_widen(xo[ftc_red_off(q, j)]) - shift);
    s = ftc_block_fold<ftc_fold_add, C>(s, sh);
    if (threadIdx.x == 0) y[o] = ftc_cv<T>(shift + log(s));
  }
}

template <class T, class OP>
static int ftc_reduce(const int64_t *p, const double *f, const void *const *in, void *const *out,
                      void *scratch, ftc_env *e, void *plan) {
  ftc_red q;
  ftc_red_load(p, &q);
  if (q.n_out <= 0) return 0;
  int threads = ftc_row_threads(q.count);
  unsigned blocks = (unsigned)(q.n_out < 65535 * 16 ? q.n_out : 65535 * 16);
  FTC_LAUNCH(blocks, threads, e->stream, ftc_reduce_k<T, OP>)((const T *)in[0], (T *)out[0], q);
  return ftc_launched(e, "reduce");
}

template <class T>
static int ftc_reduce_lse(const int64_t *p, const double *f, const void *const *in, void *const *out,
                          void *scratch, ftc_env *e, void *plan) {
  ftc_red q;
  ftc_red_load(p, &q);
  if (q.n_out <= 0) return 0;
  unsigned blocks = (unsigned)(q.n_out < 65535 * 16 ? q.n_out : 65535 * 16);
  FTC_LAUNCH(blocks, ftc_row_threads(q.count), e->stream, ftc_reduce_lse_k<T>)((const T *)in[0], (T *)out[0], q);
  return ftc_launched(e, "reduce");
}

/* ---- ArgMax / ArgMin: p = [outer, n, inner, select_last_index]; int64 out ------------------ */
template <class T, int MAX> __global__ void ftc_arg_k(const T *x, int64_t *y, uint32_t outer, uint32_t n, uint32_t inner, int last) {
  typedef typename ftc_acc<T>::type C;
  FTC_GRID_LOOP(t, outer * inner) {
    uint32_t o = t / inner, i = t % inner;
    const T *r = x + (size_t)o * n * inner + i;
    C best = n ? (C)ftc_widen(r[0]) : (C)0;
    int64_t at = 0;
    for (uint32_t k = 1; k < n; k++) {
      C v = ftc_widen(r[(size_t)k * inner]);
      bool better = MAX ? v > best : v < best;
      if (better || (last && v == best)) { best = v; at = k; }
    }
    y[t] = at;
  }
}
template <class T, int MAX>
static int ftc_arg(const int64_t *p, const double *f, const void *const *in, void *const *out,
                   void *scratch, ftc_env *e, void *plan) {
  int64_t n = p[0] * p[2];
  if (n <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_arg_k<T, MAX>)(
      (const T *)in[0], (int64_t *)out[0], (uint32_t)p[0], (uint32_t)p[1], (uint32_t)p[2], p[3] != 0);
  return ftc_launched(e, "argmax/argmin");
}

/* ---- Softmax, LogSoftmax, Hardmax: p = [outer, n, inner]; one block per (outer, inner) row --- */
enum { FTC_SOFTMAX = 0, FTC_LOG_SOFTMAX = 1, FTC_HARDMAX = 2 };
template <class T, int KIND> __global__ void ftc_softmax_k(const T *x, T *y, uint32_t rows, uint32_t n, uint32_t inner) {
  typedef typename ftc_acc<T>::type C;
  __shared__ C sh[32];
  for (uint32_t row = blockIdx.x; row < rows; row += gridDim.x) {
    uint32_t o = row / inner, i = row % inner;
    const T *xr = x + (size_t)o * n * inner + i;
    T *yr = y + (size_t)o * n * inner + i;
    C m = ftc_lowest<C>();
    for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) m = ftc_fold_max::combine(m, (C)ftc_widen(xr[(size_t)k * inner]));
    m = ftc_block_fold<ftc_fold_max, C>(m, sh);
    if (KIND == FTC_HARDMAX) {
      /* the first index holding the maximum */
      uint32_t first = n;
      for (uint32_t k = threadIdx.x; k < n; k += blockDim.x)
        if ((C)ftc_widen(xr[(size_t)k * inner]) == m && k < first) first = k;
      for (int s = 16; s > 0; s >>= 1) { uint32_t v = __shfl_down_sync(0xffffffffu, first, s); first = v < first ? v : first; }
      __shared__ uint32_t shf[32];
      __syncthreads();
      if ((threadIdx.x & 31) == 0) shf[threadIdx.x >> 5] = first;
      __syncthreads();
      first = shf[0];
      for (uint32_t w = 1; w < blockDim.x / 32; w++) first = shf[w] < first ? shf[w] : first;
      for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) yr[(size_t)k * inner] = ftc_cv<T>(k == first ? 1.0f : 0.0f);
      __syncthreads();
      continue;
    }
    C s = 0;
    for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) s += exp((C)ftc_widen(xr[(size_t)k * inner]) - m);
    s = ftc_block_fold<ftc_fold_add, C>(s, sh);
    if (KIND == FTC_SOFTMAX) {
      C inv = (C)1 / s;
      for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) yr[(size_t)k * inner] = ftc_cv<T>(exp((C)ftc_widen(xr[(size_t)k * inner]) - m) * inv);
    } else {
      C shift = m + log(s);
      for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) yr[(size_t)k * inner] = ftc_cv<T>((C)ftc_widen(xr[(size_t)k * inner]) - shift);
    }
    __syncthreads(); /* in place: every thread has read the row before the next one starts */
  }
}
template <class T, int KIND>
static int ftc_softmax(const int64_t *p, const double *f, const void *const *in, void *const *out,
                       void *scratch, ftc_env *e, void *plan) {
  int64_t rows = p[0] * p[2];
  if (rows <= 0 || p[1] <= 0) return 0;
  unsigned blocks = (unsigned)(rows < 65535 * 16 ? rows : 65535 * 16);
  FTC_LAUNCH(blocks, ftc_row_threads(p[1]), e->stream, ftc_softmax_k<T, KIND>)(
      (const T *)in[0], (T *)out[0], (uint32_t)rows, (uint32_t)p[1], (uint32_t)p[2]);
  return ftc_launched(e, "softmax");
}

/* ---- LayerNormalization: p = [rows, cols, scale_n, bias_n, has_mean, has_inv_std], f[0] eps ---
 * Two passes over the row (mean, then mean squared deviation), as the C kernel does. */
template <class T> __global__ void ftc_layernorm_k(const T *x, const T *scale, const T *bias, T *y, T *mean_out,
                                                    T *inv_out, uint32_t rows, uint32_t cols, int ss, int bs, float eps) {
  typedef typename ftc_acc<T>::type C;
  __shared__ C sh[32];
  for (uint32_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + (size_t)r * cols;
    T *yr = y + (size_t)r * cols;
    C s = 0;
    for (uint32_t i = threadIdx.x; i < cols; i += blockDim.x) s += ftc_widen(xr[i]);
    C m = ftc_block_fold<ftc_fold_add, C>(s, sh) / (C)cols;
    C v = 0;
    for (uint32_t i = threadIdx.x; i < cols; i += blockDim.x) { C d = (C)ftc_widen(xr[i]) - m; v += d * d; }
    v = ftc_block_fold<ftc_fold_add, C>(v, sh) / (C)cols;
    C inv = (C)1 / sqrt(v + (C)eps);
    if (threadIdx.x == 0) {
      if (mean_out) mean_out[r] = ftc_cv<T>(m);
      if (inv_out) inv_out[r] = ftc_cv<T>(inv);
    }
    for (uint32_t i = threadIdx.x; i < cols; i += blockDim.x) {
      C t = ((C)ftc_widen(xr[i]) - m) * inv * (C)ftc_widen(scale[ss ? i : 0]);
      if (bias) t += (C)ftc_widen(bias[bs ? i : 0]);
      yr[i] = ftc_cv<T>(t);
    }
    __syncthreads();
  }
}
template <class T>
static int ftc_layernorm(const int64_t *p, const double *f, const void *const *in, void *const *out,
                         void *scratch, ftc_env *e, void *plan) {
  int64_t rows = p[0], cols = p[1];
  if (rows <= 0 || cols <= 0) return 0;
  unsigned blocks = (unsigned)(rows < 65535 * 16 ? rows : 65535 * 16);
  FTC_LAUNCH(blocks, ftc_row_threads(cols), e->stream, ftc_layernorm_k<T>)(
      (const T *)in[0], (const T *)in[1], p[3] ? (const T *)in[2] : (const T *)NULL, (T *)out[0],
      p[4] ? (T *)out[1] : (T *)NULL, p[5] ? (T *)out[2] : (T *)NULL, (uint32_t)rows, (uint32_t)cols,
      p[2] == cols, p[3] == cols, (float)f[0]);
  return ftc_launched(e, "layernorm");
}

/* ---- BatchNormalization (inference): p = [N, C, S], f[0] eps; in: X, scale, B, mean, var ---- */
template <class T> __global__ void ftc_batchnorm_k(const T *x, const T *sc, const T *b, const T *mean, const T *var, T *y,
                                                    uint32_t n, uint32_t C, uint32_t S, float eps) {
  typedef typename ftc_acc<T>::type A;
  FTC_GRID_LOOP(i, n) {
    uint32_t c = (i / S) % C;
    A a = (A)ftc_widen(sc[c]) / sqrt((A)ftc_widen(var[c]) + (A)eps);
    y[i] = ftc_cv<T>((A)ftc_widen(x[i]) * a + ((A)ftc_widen(b[c]) - (A)ftc_widen(mean[c]) * a));
  }
}
template <class T>
static int ftc_batchnorm(const int64_t *p, const double *f, const void *const *in, void *const *out,
                         void *scratch, ftc_env *e, void *plan) {
  int64_t n = p[0] * p[1] * p[2];
  if (n <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_batchnorm_k<T>)(
      (const T *)in[0], (const T *)in[1], (const T *)in[2], (const T *)in[3], (const T *)in[4], (T *)out[0],
      (uint32_t)n, (uint32_t)p[1], (uint32_t)p[2], (float)f[0]);
  return ftc_launched(e, "batchnorm");
}

/* ---- InstanceNormalization: p = [N, C, S], f[0] eps; one block per (n, c) plane ------------- */
template <class T> __global__ void ftc_instnorm_k(const T *x, const T *sc, const T *b, T *y, uint32_t planes, uint32_t C, uint32_t S, float eps) {
  typedef typename ftc_acc<T>::type A;
  __shared__ A sh[32];
  for (uint32_t pl = blockIdx.x; pl < planes; pl += gridDim.x) {
    const T *xr = x + (size_t)pl * S;
    T *yr = y + (size_t)pl * S;
    A s = 0;
    for (uint32_t i = threadIdx.x; i < S; i += blockDim.x) s += ftc_widen(xr[i]);
    A m = ftc_block_fold<ftc_fold_add, A>(s, sh) / (A)S;
    A v = 0;
    for (uint32_t i = threadIdx.x; i < S; i += blockDim.x) { A d = (A)ftc_widen(xr[i]) - m; v += d * d; }
    v = ftc_block_fold<ftc_fold_add, A>(v, sh) / (A)S;
    uint32_t c = pl % C;
    A a = (A)ftc_widen(sc[c]) / sqrt(v + (A)eps), bb = (A)ftc_widen(b[c]) - m * a;
    for (uint32_t i = threadIdx.x; i < S; i += blockDim.x) yr[i] = ftc_cv<T>((A)ftc_widen(xr[i]) * a + bb);
    __syncthreads();
  }
}
template <class T>
static int ftc_instnorm(const int64_t *p, const double *f, const void *const *in, void *const *out,
                        void *scratch, ftc_env *e, void *plan) {
  int64_t planes = p[0] * p[1];
  if (planes <= 0 || p[2] <= 0) return 0;
  unsigned blocks = (unsigned)(planes < 65535 * 16 ? planes : 65535 * 16);
  FTC_LAUNCH(blocks, ftc_row_threads(p[2]), e->stream, ftc_instnorm_k<T>)(
      (const T *)in[0], (const T *)in[1], (const T *)in[2], (T *)out[0], (uint32_t)planes, (uint32_t)p[1], (uint32_t)p[2], (float)f[0]);
  return ftc_launched(e, "instnorm");
}

/* ---- Global pools: p = [planes, plane size]; f[0] = p of GlobalLpPool ----------------------- */
enum { FTC_GAVG = 0, FTC_GMAX = 1, FTC_GLP = 2 };
/* GlobalMaxPool keeps the C kernel's comparison: a NaN never replaces the running maximum */
struct ftc_fold_gmax { template <class C> __device__ __forceinline__ static C combine(C a, C b) { return b > a ? b : a; } };
template <class T, int KIND> __global__ void ftc_gpool_k(const T *x, T *y, uint32_t planes, uint32_t S, float pw) {
  typedef typename ftc_acc<T>::type A;
  __shared__ A sh[32];
  for (uint32_t pl = blockIdx.x; pl < planes; pl += gridDim.x) {
    const T *xr = x + (size_t)pl * S;
    A acc = KIND == FTC_GMAX ? (S ? (A)ftc_widen(xr[0]) : (A)0) : (A)0;
    for (uint32_t i = threadIdx.x; i < S; i += blockDim.x) {
      A v = ftc_widen(xr[i]);
      if (KIND == FTC_GMAX) acc = v > acc ? v : acc;
      else if (KIND == FTC_GAVG) acc += v;
      else acc += pw == (A)2 ? v * v : (pw == (A)1 ? fabs(v) : pow(fabs(v), (A)pw));
    }
    if (KIND == FTC_GMAX) acc = ftc_block_fold<ftc_fold_gmax, A>(acc, sh);
    else acc = ftc_block_fold<ftc_fold_add, A>(acc, sh);
    if (threadIdx.x == 0) {
      if (KIND == FTC_GAVG) acc = S ? acc / (A)S : (A)0;
      else if (KIND == FTC_GLP) acc = pw == (A)2 ? sqrt(acc) : pow(acc, (A)1 / (A)pw);
      y[pl] = ftc_cv<T>(acc);
    }
  }
}
template <class T, int KIND>
static int ftc_gpool(const int64_t *p, const double *f, const void *const *in, void *const *out,
                     void *scratch, ftc_env *e, void *plan) {
  if (p[0] <= 0) return 0;
  unsigned blocks = (unsigned)(p[0] < 65535 * 16 ? p[0] : 65535 * 16);
  FTC_LAUNCH(blocks, ftc_row_threads(p[1]), e->stream, ftc_gpool_k<T, KIND>)(
      (const T *)in[0], (T *)out[0], (uint32_t)p[0], (uint32_t)p[1], f ? (float)f[0] : 2.0f);
  return ftc_launched(e, "global pool");
}

#endif

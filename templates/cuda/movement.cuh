/* Twins of templates/c/copy.h and movement.h: data movement written per element size (the emitter
 * picks T = uint8_t, uint16_t, uint32_t or uint64_t from the kernel's _N suffix) or on bytes.
 * Byte-row copies (Concat, Split, Gather's rows) go through the copy engine or a word-wide
 * kernel; strided views through one thread per output element. */
#ifndef FTC_MOVEMENT_CUH
#define FTC_MOVEMENT_CUH

#include "runtime.cuh"

/* ---- ft_copy_bytes: p = [bytes] ------------------------------------------------------------ */
static int ftc_copy_bytes(const int64_t *p, const double *f, const void *const *in, void *const *out,
                          void *scratch, ftc_env *e, void *plan) {
  if (p[0] > 0 && out[0] != in[0])
    FTC_CU(e, cudaMemcpyAsync(out[0], in[0], (size_t)p[0], cudaMemcpyDeviceToDevice, e->stream));
  return 0;
}

/* ---- ft_copy_nd_N: p = [rank, base, dims[rank], strides[rank]] (elements) ------------------- */
#define FTC_ND_MAX 16
struct ftc_nd {
  int r;
  int32_t base;
  int32_t d[FTC_ND_MAX];
  int32_t s[FTC_ND_MAX];
};

template <class T> __global__ void ftc_copy_nd_k(const T *x, T *y, ftc_nd p, uint32_t n) {
  FTC_GRID_LOOP(i, n) {
    uint32_t rem = i;
    int32_t off = p.base;
    for (int k = p.r - 1; k >= 0; k--) {
      uint32_t c = rem % (uint32_t)p.d[k];
      rem /= (uint32_t)p.d[k];
      off += (int32_t)c * p.s[k];
    }
    y[i] = x[off];
  }
}

/* A transpose of the last two dims (input stride 1 on the second-last dim): read and write
 * through a shared tile so that both sides are coalesced. */
template <class T> __global__ void ftc_transpose_k(const T *x, T *y, ftc_nd p, uint32_t outer, uint32_t rows, uint32_t cols) {
  __shared__ T tile[32][33];
  int32_t is = p.s[p.r - 1]; /* input stride of the output's inner dim */
  for (uint32_t o = blockIdx.z; o < outer; o += gridDim.z) {
    uint32_t rem = o;
    int32_t off = p.base;
    for (int k = p.r - 3; k >= 0; k--) {
      uint32_t c = rem % (uint32_t)p.d[k];
      rem /= (uint32_t)p.d[k];
      off += (int32_t)c * p.s[k];
    }
    uint32_t r0 = blockIdx.y * 32, c0 = blockIdx.x * 32;
    /* output (r, c) = x[off + r + c * is]: read along r (contiguous) */
    for (uint32_t k = threadIdx.y; k < 32; k += blockDim.y) {
      uint32_t c = c0 + k, r = r0 + threadIdx.x;
      if (r < rows && c < cols) tile[k][threadIdx.x] = x[off + (int32_t)r + (int32_t)c * is];
    }
    __syncthreads();
    for (uint32_t k = threadIdx.y; k < 32; k += blockDim.y) {
      uint32_t r = r0 + k, c = c0 + threadIdx.x;
      if (r < rows && c < cols) y[((size_t)o * rows + r) * cols + c] = tile[threadIdx.x][k];
    }
    __syncthreads();
  }
}

template <class T>
static int ftc_copy_nd(const int64_t *p, const double *f, const void *const *in, void *const *out,
                       void *scratch, ftc_env *e, void *plan) {
  ftc_nd nd;
  memset(&nd, 0, sizeof nd);
  nd.r = (int)p[0];
  nd.base = (int32_t)p[1];
  int64_t n = 1;
  for (int k = 0; k < nd.r; k++) { nd.d[k] = (int32_t)p[2 + k]; nd.s[k] = (int32_t)p[2 + nd.r + k]; n *= p[2 + k]; }
  if (n <= 0) return 0;
  if (nd.r == 0) { /* one element */
    FTC_CU(e, cudaMemcpyAsync(out[0], (const T *)in[0] + nd.base, sizeof(T), cudaMemcpyDeviceToDevice, e->stream));
    return 0;
  }
  if (nd.r >= 2 && nd.s[nd.r - 2] == 1 && nd.s[nd.r - 1] != 1) {
    uint32_t rows = (uint32_t)nd.d[nd.r - 2], cols = (uint32_t)nd.d[nd.r - 1];
    uint32_t outer = (uint32_t)(n / ((int64_t)rows * cols));
    dim3 grid((cols + 31) / 32, (rows + 31) / 32, outer < 65535 ? outer : 65535), block(32, 8);
    if (grid.y <= 65535) {
      FTC_LAUNCH(grid, block, e->stream, ftc_transpose_k<T>)((const T *)in[0], (T *)out[0], nd, outer, rows, cols);
      return ftc_launched(e, "transpose");
    }
  }
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_copy_nd_k<T>)((const T *)in[0], (T *)out[0], nd, (uint32_t)n);
  return ftc_launched(e, "copy_nd");
}

/* ---- ft_concat / ft_split: p = [n, outer, bytes_0 .. bytes_{n-1}] ---------------------------- */
static int ftc_concat(const int64_t *p, const double *f, const void *const *in, void *const *out,
                      void *scratch, ftc_env *e, void *plan) {
  int n = (int)p[0];
  size_t outer = (size_t)p[1], row = 0, at = 0;
  for (int i = 0; i < n; i++) row += (size_t)p[2 + i];
  for (int i = 0; i < n; i++) {
    size_t b = (size_t)p[2 + i];
    if (b && outer)
      FTC_CU(e, cudaMemcpy2DAsync((char *)out[0] + at, row, in[i], b, b, outer, cudaMemcpyDeviceToDevice, e->stream));
    at += b;
  }
  return 0;
}

static int ftc_split(const int64_t *p, const double *f, const void *const *in, void *const *out,
                     void *scratch, ftc_env *e, void *plan) {
  int n = (int)p[0];
  size_t outer = (size_t)p[1], row = 0, at = 0;
  for (int i = 0; i < n; i++) row += (size_t)p[2 + i];
  for (int i = 0; i < n; i++) {
    size_t b = (size_t)p[2 + i];
    if (b && outer && out[i])
      FTC_CU(e, cudaMemcpy2DAsync(out[i], b, (const char *)in[0] + at, row, b, outer, cudaMemcpyDeviceToDevice, e->stream));
    at += b;
  }
  return 0;
}

/* ---- ft_gather_i32/i64: p = [outer, axis_dim, n_indices, row_bytes] --------------------------
 * One thread per word of an output row; the word is the widest of 16, 8, 4, 2, 1 bytes that
 * divides the row and both base addresses. An index out of range gives zeros, as in C. */
template <class W, class TI>
__global__ void ftc_gather_k(const W *x, const TI *ind, W *y, uint32_t total, uint32_t words, uint32_t n, int64_t dim) {
  FTC_GRID_LOOP(t, total) {
    uint32_t row = t / words, w = t % words, o = row / n, i = row % n;
    int64_t j = (int64_t)ind[i];
    if (j < 0) j += dim;
    if (j < 0 || j >= dim) { W z; memset(&z, 0, sizeof z); y[t] = z; }
    else y[t] = x[((size_t)o * (size_t)dim + (size_t)j) * words + w];
  }
}
template <class TI, class W>
static int ftc_gather_w(const int64_t *p, const void *const *in, void *const *out, ftc_env *e) {
  uint32_t words = (uint32_t)(p[3] / (int64_t)sizeof(W));
  int64_t total = p[0] * p[2] * (int64_t)words;
  if (total <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(total, FTC_THREADS), FTC_THREADS, e->stream, ftc_gather_k<W, TI>)(
      (const W *)in[0], (const TI *)in[1], (W *)out[0], (uint32_t)total, words, (uint32_t)p[2], p[1]);
  return ftc_launched(e, "gather");
}
template <class TI>
static int ftc_gather(const int64_t *p, const double *f, const void *const *in, void *const *out,
                      void *scratch, ftc_env *e, void *plan) {
  uintptr_t a = (uintptr_t)in[0] | (uintptr_t)out[0] | (uintptr_t)p[3];
  if (a % 16 == 0) return ftc_gather_w<TI, uint4>(p, in, out, e);
  if (a % 8 == 0) return ftc_gather_w<TI, uint2>(p, in, out, e);
  if (a % 4 == 0) return ftc_gather_w<TI, uint32_t>(p, in, out, e);
  if (a % 2 == 0) return ftc_gather_w<TI, uint16_t>(p, in, out, e);
  return ftc_gather_w<TI, uint8_t>(p, in, out, e);
}

/* ---- ft_dropout_copy: p = [bytes, mask elements, mask element size, bits of one] ------------ */
template <class T> __global__ void ftc_fill_bits_k(T *y, uint32_t n, T v) { FTC_GRID_LOOP(i, n) y[i] = v; }
static int ftc_dropout_copy(const int64_t *p, const double *f, const void *const *in, void *const *out,
                            void *scratch, ftc_env *e, void *plan) {
  if (out[0] && out[0] != in[0] && p[0] > 0)
    FTC_CU(e, cudaMemcpyAsync(out[0], in[0], (size_t)p[0], cudaMemcpyDeviceToDevice, e->stream));
  if (out[1] && p[1] > 0) {
    uint32_t n = (uint32_t)p[1];
    switch (p[2]) {
    case 1: { uint8_t v; memcpy(&v, &p[3], 1); FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_fill_bits_k<uint8_t>)((uint8_t *)out[1], n, v); break; }
    case 2: { uint16_t v; memcpy(&v, &p[3], 2); FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_fill_bits_k<uint16_t>)((uint16_t *)out[1], n, v); break; }
    case 4: { uint32_t v; memcpy(&v, &p[3], 4); FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_fill_bits_k<uint32_t>)((uint32_t *)out[1], n, v); break; }
    default: { uint64_t v; memcpy(&v, &p[3], 8); FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_fill_bits_k<uint64_t>)((uint64_t *)out[1], n, v); break; }
    }
    return ftc_launched(e, "dropout mask");
  }
  return 0;
}

/* ---- ft_pad_N: p = [rank, mode, in dims[r], out dims[r], pads before[r], value bits, value from
 * input 2]; mode 0 constant, 1 reflect, 2 edge, 3 wrap ---------------------------------------- */
struct ftc_pad_p {
  int r, mode;
  int32_t di[FTC_MAXR], dout[FTC_MAXR], beg[FTC_MAXR];
};
__device__ __forceinline__ int64_t ftc_pad_map(int64_t c, int64_t n, int mode) {
  if (c >= 0 && c < n) return c;
  switch (mode) {
  case 1: {
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1);
    c %= period;
    if (c < 0) c += period;
    return c < n ? c : period - c;
  }
  case 2: return c < 0 ? 0 : n - 1;
  case 3: c %= n; return c < 0 ? c + n : c;
  default: return -1;
  }
}
template <class T> __global__ void ftc_pad_k(const T *x, const T *vp, T *y, ftc_pad_p p, uint32_t n, T v) {
  if (vp) v = *vp;
  FTC_GRID_LOOP(i, n) {
    uint32_t rem = i;
    int64_t off = 0, st = 1;
    bool blank = false;
    for (int k = p.r - 1; k >= 0; k--) {
      int64_t c = rem % (uint32_t)p.dout[k];
      rem /= (uint32_t)p.dout[k];
      int64_t m = p.di[k] ? ftc_pad_map(c - p.beg[k], p.di[k], p.mode) : -1;
      if (m < 0) blank = true;
      else off += m * st;
      st *= p.di[k];
    }
    y[i] = blank ? v : x[off];
  }
}
template <class T>
static int ftc_pad(const int64_t *p, const double *f, const void *const *in, void *const *out,
                   void *scratch, ftc_env *e, void *plan) {
  ftc_pad_p q;
  memset(&q, 0, sizeof q);
  q.r = (int)p[0];
  q.mode = (int)p[1];
  int64_t n = 1;
  for (int k = 0; k < q.r; k++) {
    q.di[k] = (int32_t)p[2 + k];
    q.dout[k] = (int32_t)p[2 + q.r + k];
    q.beg[k] = (int32_t)p[2 + 2 * q.r + k];
    n *= q.dout[k];
  }
  T v;
  memcpy(&v, &p[2 + 3 * q.r], sizeof v);
  const T *vp = p[3 + 3 * q.r] && in[2] ? (const T *)in[2] : (const T *)NULL;
  if (n <= 0) return 0;
  if (q.r == 0) {
    FTC_CU(e, cudaMemcpyAsync(out[0], in[0], sizeof(T), cudaMemcpyDeviceToDevice, e->stream));
    return 0;
  }
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_pad_k<T>)((const T *)in[0], vp, (T *)out[0], q, (uint32_t)n, v);
  return ftc_launched(e, "pad");
}

#endif

/* Twins of templates/c/unary.h, binary.h, where.h, cast.h, variadic.h and the value-filling
 * kernels: one thread per output element, computed in ftc_acc<T>::type.
 *
 * An op is a functor; the launchers are templates the emitter names with the op and the types,
 * e.g. ftc_binary<float, float, float, ftc_b_add> for ft_add_f32, so a program instantiates
 * only what it uses. */
#ifndef FTC_ELEMENTWISE_CUH
#define FTC_ELEMENTWISE_CUH

#include "runtime.cuh"

/* ---- unary: p = [n], f = [a, b] ------------------------------------------------------------ */

#define FTC_UOP(NAME, EXPR)                                                                      \
  struct NAME {                                                                                  \
    template <class T> __device__ __forceinline__ T operator()(T x, T a, T b) const {           \
      (void)a; (void)b;                                                                          \
      return (EXPR);                                                                             \
    }                                                                                            \
  };
/* the scalar ops with a standalone kernel (templates/common/scalar_ops.h), computed in C */
#define FTC_UOP_ROW_(ID, fn, name, kernels, EXPR) FT_SOP_IF_CUDA_##kernels(FTC_UOP(ftc_u_##fn, EXPR))
#define FTC_UOP_PARAM_ROW_(ID, fn, name, kernels, A_, DA, B_, DB, EXPR) FT_SOP_IF_CUDA_##kernels(FTC_UOP(ftc_u_##fn, EXPR))
#define FT_MATH ftc
FT_SCALAR_UNARY_OPS(FTC_UOP_ROW_)
FT_SCALAR_PARAM_OPS(FTC_UOP_PARAM_ROW_)
#undef FT_MATH
#undef FTC_UOP_ROW_
#undef FTC_UOP_PARAM_ROW_
FTC_UOP(ftc_u_isnan, (T)(x != x))
FTC_UOP(ftc_u_neg, (T)0 - x)
FTC_UOP(ftc_u_abs, fabs(x)) /* the float kernels of Abs (scalar_ops.h), named as its row is */
FTC_UOP(ftc_u_abs_i, x < (T)0 ? (T)0 - x : x)
FTC_UOP(ftc_u_abs_u, x)
FTC_UOP(ftc_u_sign_u, (T)(x != (T)0))
FTC_UOP(ftc_u_bitwise_not, (T)~x)
FTC_UOP(ftc_u_not, (T)!x)
#undef FTC_UOP

template <class T, class TO, class OP>
__global__ void ftc_unary_k(const T *x, TO *y, uint32_t n, typename ftc_acc<T>::type a,
                            typename ftc_acc<T>::type b) {
  typedef typename ftc_acc<T>::type C; /* 8- and 16-bit integers compute in 32 bits */
  FTC_GRID_LOOP(i, n) y[i] = ftc_cv<TO>(OP()((C)ftc_widen(x[i]), a, b));
}

template <class T, class TO, class OP>
static int ftc_unary(const int64_t *p, const double *f, const void *const *in, void *const *out,
                     void *scratch, ftc_env *e, void *plan) {
  typedef typename ftc_acc<T>::type C;
  int64_t n = p[0];
  if (n <= 0) return 0;
  C a = f ? (C)f[0] : (C)0, b = f ? (C)f[1] : (C)0;
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_unary_k<T, TO, OP>)(
      (const T *)in[0], (TO *)out[0], (uint32_t)n, a, b);
  return ftc_launched(e, "unary");
}

/* IsInf: p = [n, detect_negative, detect_positive]. */
template <class T> __global__ void ftc_isinf_k(const T *x, uint8_t *y, uint32_t n, int neg, int pos) {
  FTC_GRID_LOOP(i, n) {
    typename ftc_acc<T>::type v = ftc_widen(x[i]);
    y[i] = (isinf(v) && ((v > 0 && pos) || (v < 0 && neg))) ? 1 : 0;
  }
}
template <class T>
static int ftc_isinf(const int64_t *p, const double *f, const void *const *in, void *const *out,
                     void *scratch, ftc_env *e, void *plan) {
  if (p[0] <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(p[0], FTC_THREADS), FTC_THREADS, e->stream, ftc_isinf_k<T>)(
      (const T *)in[0], (uint8_t *)out[0], (uint32_t)p[0], p[1] != 0, p[2] != 0);
  return ftc_launched(e, "isinf");
}

/* Clip: p = [n, lo_from, hi_from] with 0 none, 1 the scalar input in[1] / in[2], 2 f[0] / f[1]. */
template <class T>
__global__ void ftc_clip_k(const T *x, T *y, uint32_t n, const T *lo_p, const T *hi_p,
                           typename ftc_acc<T>::type lo, typename ftc_acc<T>::type hi) {
  typedef typename ftc_acc<T>::type C;
  if (lo_p) lo = ftc_widen(*lo_p);
  if (hi_p) hi = ftc_widen(*hi_p);
  FTC_GRID_LOOP(i, n) {
    C v = ftc_widen(x[i]);
    v = v < lo ? lo : v;
    y[i] = ftc_cv<T>(v > hi ? hi : v);
  }
}
template <class T>
static int ftc_clip(const int64_t *p, const double *f, const void *const *in, void *const *out,
                    void *scratch, ftc_env *e, void *plan) {
  typedef typename ftc_acc<T>::type C;
  if (p[0] <= 0) return 0;
  C lo, hi;
  if constexpr (std::is_floating_point<C>::value) { lo = (C)-INFINITY; hi = (C)INFINITY; }
  else if constexpr (std::is_signed<T>::value) {
    typedef typename std::make_unsigned<T>::type U;
    lo = (C)(T)((U)1 << (sizeof(T) * 8 - 1));
    hi = (C)(T)((U)~(U)0 >> 1);
  } else { lo = (C)0; hi = (C)(T)~(T)0; }
  if (p[1] == 2) lo = (C)f[0];
  if (p[2] == 2) hi = (C)f[1];
  FTC_LAUNCH(ftc_blocks(p[0], FTC_THREADS), FTC_THREADS, e->stream, ftc_clip_k<T>)(
      (const T *)in[0], (T *)out[0], (uint32_t)p[0], p[1] == 1 ? (const T *)in[1] : (const T *)NULL,
      p[2] == 1 ? (const T *)in[2] : (const T *)NULL, lo, hi);
  return ftc_launched(e, "clip");
}

/* ---- binary with broadcasting: p = [rank, dims, strides of A, strides of B] ----------------- */

#define FTC_BOP(NAME, EXPR)                                                                      \
  struct NAME {                                                                                  \
    template <class X, class Z> __device__ __forceinline__ auto operator()(X x, Z z) const {     \
      return (EXPR);                                                                             \
    }                                                                                            \
  };
template <class C> __device__ __forceinline__ C ftc_div(C x, C z) {
  if constexpr (std::is_integral<C>::value) return z != 0 ? (C)(x / z) : (C)0;
  else return x / z;
}
template <class C> __device__ __forceinline__ C ftc_mod(C x, C z, bool fmod_sign) {
  if constexpr (std::is_integral<C>::value) {
    if (z == 0) return 0;
    if constexpr (std::is_signed<C>::value) {
      if (z == -1) return 0;
      C m = (C)(x % z);
      return (!fmod_sign && m != 0 && ((m < 0) != (z < 0))) ? (C)(m + z) : m;
    } else return (C)(x % z);
  } else {
    C m = fmod(x, z);
    return (!fmod_sign && m != 0 && ((m < 0) != (z < 0))) ? m + z : m;
  }
}
template <class C> __device__ __forceinline__ C ftc_shift(C x, C z, bool left) {
  if (z >= (C)(8 * sizeof(C))) return 0;
  return left ? (C)(x << z) : (C)(x >> z);
}
/* x ** z with a float base: the small integer powers exports write (x ** 2) exactly */
template <class X, class Z> __device__ __forceinline__ float ftc_powf(X x, Z zz) {
  float z = (float)zz, b = (float)x;
  return z == 2.0f ? b * b : (z == 3.0f ? b * b * b : (z == 0.5f ? sqrtf(b) : powf(b, z)));
}
FTC_BOP(ftc_b_add, x + z)
FTC_BOP(ftc_b_sub, x - z)
FTC_BOP(ftc_b_mul, x * z)
FTC_BOP(ftc_b_div, ftc_div(x, z))
FTC_BOP(ftc_b_max2, (x > z || x != x) ? x : z)
FTC_BOP(ftc_b_min2, (x < z || x != x) ? x : z)
FTC_BOP(ftc_b_pow, pow((double)x, (double)z))
FTC_BOP(ftc_b_powf, ftc_powf(x, z))
FTC_BOP(ftc_b_mod, ftc_mod(x, z, false))
FTC_BOP(ftc_b_fmod, ftc_mod(x, z, true))
FTC_BOP(ftc_b_equal, x == z)
FTC_BOP(ftc_b_less, x < z)
FTC_BOP(ftc_b_greater, x > z)
FTC_BOP(ftc_b_less_equal, x <= z)
FTC_BOP(ftc_b_greater_equal, x >= z)
FTC_BOP(ftc_b_shl, ftc_shift(x, z, true))
FTC_BOP(ftc_b_shr, ftc_shift(x, z, false))
FTC_BOP(ftc_b_bitwise_and, x & z)
FTC_BOP(ftc_b_bitwise_or, x | z)
FTC_BOP(ftc_b_bitwise_xor, x ^ z)
FTC_BOP(ftc_b_and, (x && z))
FTC_BOP(ftc_b_or, (x || z))
FTC_BOP(ftc_b_xor, (!x) != (!z))
FTC_BOP(ftc_b_equal_bool, (!x) == (!z))
FTC_BOP(ftc_b_prelu, x < 0 ? z * x : x)
#undef FTC_BOP

template <class TA, class TB, class TO, class OP>
__global__ void ftc_binary_k(const TA *a, const TB *b, TO *y, ftc_bcast<2> p, uint32_t n) {
  FTC_GRID_LOOP(i, n) {
    int32_t off[2];
    ftc_bcast_offsets<2>(p, i, off);
    y[i] = ftc_cv<TO>(OP()(ftc_widen(a[off[0]]), ftc_widen(b[off[1]])));
  }
}

template <class TA, class TB, class TO, class OP>
static int ftc_binary(const int64_t *p, const double *f, const void *const *in, void *const *out,
                      void *scratch, ftc_env *e, void *plan) {
  ftc_bcast<2> bc;
  int64_t n = ftc_bcast_load<2>(p, &bc);
  if (n <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_binary_k<TA, TB, TO, OP>)(
      (const TA *)in[0], (const TB *)in[1], (TO *)out[0], bc, (uint32_t)n);
  return ftc_launched(e, "binary");
}

/* ---- Where: p = broadcast over (condition, x, y); any element of N bytes ------------------- */

template <class T> __global__ void ftc_where_k(const uint8_t *c, const T *a, const T *b, T *y, ftc_bcast<3> p, uint32_t n) {
  FTC_GRID_LOOP(i, n) {
    int32_t off[3];
    ftc_bcast_offsets<3>(p, i, off);
    y[i] = c[off[0]] ? a[off[1]] : b[off[2]];
  }
}
template <class T>
static int ftc_where(const int64_t *p, const double *f, const void *const *in, void *const *out,
                     void *scratch, ftc_env *e, void *plan) {
  ftc_bcast<3> bc;
  int64_t n = ftc_bcast_load<3>(p, &bc);
  if (n <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_where_k<T>)(
      (const uint8_t *)in[0], (const T *)in[1], (const T *)in[2], (T *)out[0], bc, (uint32_t)n);
  return ftc_launched(e, "where");
}

/* ---- variadic Sum / Mean / Max / Min: p = [n inputs, broadcast layout over them] ------------ */

#define FTC_VARIADIC_MAX 8
struct ftc_vargs {
  const void *x[FTC_VARIADIC_MAX];
  ftc_bcast<FTC_VARIADIC_MAX> b;
  int n;
};
struct ftc_v_sum { template <class C> __device__ static C go(C a, C b) { return a + b; } };
struct ftc_v_max { template <class C> __device__ static C go(C a, C b) { return (a > b || a != a) ? a : b; } };
struct ftc_v_min { template <class C> __device__ static C go(C a, C b) { return (a < b || a != a) ? a : b; } };
template <class T, class OP, int MEAN> __global__ void ftc_variadic_k(ftc_vargs v, T *y, uint32_t n) {
  typedef typename ftc_acc<T>::type C;
  FTC_GRID_LOOP(i, n) {
    int32_t off[FTC_VARIADIC_MAX];
    ftc_bcast_offsets<FTC_VARIADIC_MAX>(v.b, i, off);
    C acc = ftc_widen(((const T *)v.x[0])[off[0]]);
    for (int k = 1; k < v.n; k++) acc = OP::go(acc, (C)ftc_widen(((const T *)v.x[k])[off[k]]));
    if (MEAN) acc = acc / (C)v.n;
    y[i] = ftc_cv<T>(acc);
  }
}
template <class T, class OP, int MEAN>
static int ftc_variadic(const int64_t *p, const double *f, const void *const *in, void *const *out,
                        void *scratch, ftc_env *e, void *plan) {
  ftc_vargs v;
  memset(&v, 0, sizeof v);
  v.n = (int)p[0];
  if (v.n > FTC_VARIADIC_MAX) return ftc_fail(e, "more than %d inputs", FTC_VARIADIC_MAX);
  const int64_t *q = p + 1;
  int r = (int)q[0];
  int64_t n = 1;
  v.b.r = r;
  for (int d = 0; d < r; d++) {
    v.b.d[d] = (int32_t)q[1 + d];
    n *= q[1 + d];
    for (int i = 0; i < v.n; i++) v.b.s[i][d] = (int32_t)q[1 + r + i * r + d];
  }
  for (int i = 0; i < v.n; i++) v.x[i] = in[i];
  if (n <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_variadic_k<T, OP, MEAN>)(v, (T *)out[0], (uint32_t)n);
  return ftc_launched(e, "variadic");
}

/* ---- Cast: p = [n] ------------------------------------------------------------------------- */

template <class S, class D, int TO_BOOL> __global__ void ftc_cast_k(const S *x, D *y, uint32_t n) {
  FTC_GRID_LOOP(i, n) {
    if (TO_BOOL) y[i] = (D)(ftc_widen(x[i]) != 0);
    else y[i] = ftc_cv<D>(ftc_widen(x[i]));
  }
}
template <class S, class D, int TO_BOOL>
static int ftc_cast(const int64_t *p, const double *f, const void *const *in, void *const *out,
                    void *scratch, ftc_env *e, void *plan) {
  if (p[0] <= 0) return 0;
  if (std::is_same<S, D>::value && !TO_BOOL) { /* same storage: a copy, or nothing in place */
    if (in[0] != out[0]) FTC_CU(e, cudaMemcpyAsync(out[0], in[0], (size_t)p[0] * sizeof(S), cudaMemcpyDeviceToDevice, e->stream));
    return 0;
  }
  FTC_LAUNCH(ftc_blocks(p[0], FTC_THREADS), FTC_THREADS, e->stream, ftc_cast_k<S, D, TO_BOOL>)(
      (const S *)in[0], (D *)out[0], (uint32_t)p[0]);
  return ftc_launched(e, "cast");
}

/* ---- Fill (ConstantOfShape): p = [n, bits]; Range: p = [n], start in[0], delta in[2] -------- */

template <class T> __global__ void ftc_fill_k(T *y, uint32_t n, T v) { FTC_GRID_LOOP(i, n) y[i] = v; }
template <class T>
static int ftc_fill(const int64_t *p, const double *f, const void *const *in, void *const *out,
                    void *scratch, ftc_env *e, void *plan) {
  if (p[0] <= 0) return 0;
  T v;
  memcpy(&v, &p[1], sizeof v);
  FTC_LAUNCH(ftc_blocks(p[0], FTC_THREADS), FTC_THREADS, e->stream, ftc_fill_k<T>)((T *)out[0], (uint32_t)p[0], v);
  return ftc_launched(e, "fill");
}

template <class T> __global__ void ftc_range_k(const T *start, const T *delta, T *y, uint32_t n) {
  typedef typename ftc_acc<T>::type C;
  C s = ftc_widen(*start), d = ftc_widen(*delta);
  FTC_GRID_LOOP(i, n) y[i] = ftc_cv<T>(s + (C)i * d);
}
template <class T>
static int ftc_range(const int64_t *p, const double *f, const void *const *in, void *const *out,
                     void *scratch, ftc_env *e, void *plan) {
  if (p[0] <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(p[0], FTC_THREADS), FTC_THREADS, e->stream, ftc_range_k<T>)(
      (const T *)in[0], (const T *)in[2], (T *)out[0], (uint32_t)p[0]);
  return ftc_launched(e, "range");
}

/* ---- ftax.Elementwise: a fused chain of float ops (templates/c/elementwise.h) ----------------
 * p: [n_in, n_instr, temps, B, program (n_instr x 5: op, dst, a, b, c), broadcast plan at p + B].
 * One thread per output element runs the program over registers: inputs 0 .. n_in-1 (read at
 * the element's broadcast offsets), temporaries after them; the last instruction writes the
 * output. Operands are registers or immediates (FT_EW_IMM, float bits in the low 32). */
#define FTC_EW_MAXIN 8
#define FTC_EW_MAXT 8
#define FTC_EW_MAXI 32
#define FTC_EW_OUT 1000
#define FTC_EW_IMM ((int64_t)1 << 32)
/* opcodes: the scalar ops' ids (templates/common/scalar_ops.h) */
#define FTC_EW_ENUM_(ID, ...) FTC_EW_##ID = FT_SOP_##ID,
enum {
  FT_SCALAR_UNARY_OPS(FTC_EW_ENUM_)
  FT_SCALAR_PARAM_OPS(FTC_EW_ENUM_)
  FT_SCALAR_BINARY_OPS(FTC_EW_ENUM_)
  FTC_EW_LAST = FT_SOP_LAST
};
#undef FTC_EW_ENUM_

struct ftc_ew_ins {
  int16_t op, dst, a, b; /* a, b: register, or -1 for the immediate ia / ib; dst -1: the output */
  float ia, ib, ic;
};
struct ftc_ew_p {
  int n_in, m;
  ftc_bcast<FTC_EW_MAXIN> bc;
  ftc_ew_ins ins[FTC_EW_MAXI];
};

/* the scalar ops' rows, as templates/c/elementwise.h has them, with the GPU's math; a and b are
 * a parameter op's */
__device__ __forceinline__ float ftc_ew_op(int op, float x, float z, float a, float b) {
  typedef float T;
#define FT_MATH ftc
#define FTC_EW_ROW_(ID, fn, name, kernels, EXPR) case FT_SOP_##ID: return (EXPR);
#define FTC_EW_PARAM_ROW_(ID, fn, name, kernels, A_, DA, B_, DB, EXPR) case FT_SOP_##ID: return (EXPR);
#define FTC_EW_BINARY_ROW_(ID, fn, name, EXPR) case FT_SOP_##ID: return (EXPR);
  switch (op) {
  FT_SCALAR_UNARY_OPS(FTC_EW_ROW_)
  FT_SCALAR_PARAM_OPS(FTC_EW_PARAM_ROW_)
  FT_SCALAR_BINARY_OPS(FTC_EW_BINARY_ROW_)
  default: return 0.0f;
  }
#undef FTC_EW_ROW_
#undef FTC_EW_PARAM_ROW_
#undef FTC_EW_BINARY_ROW_
#undef FT_MATH
}

template <class T> __global__ void ftc_elementwise_k(const ftc_ew_p p, ftc_vargs x, T *y, uint32_t n) {
  FTC_GRID_LOOP(i, n) {
    float r[FTC_EW_MAXIN + FTC_EW_MAXT];
    int32_t off[FTC_EW_MAXIN];
    ftc_bcast_offsets<FTC_EW_MAXIN>(p.bc, i, off);
    for (int k = 0; k < p.n_in; k++) r[k] = ftc_widen(((const T *)x.x[k])[off[k]]);
    for (int s = 0; s < p.m; s++) {
      const ftc_ew_ins &in = p.ins[s];
      float a = in.a >= 0 ? r[in.a] : in.ia, z = in.b >= 0 ? r[in.b] : in.ib;
      float v = ftc_ew_op(in.op, a, z, in.ib, in.ic);
      if (in.dst < 0) y[i] = ftc_cv<T>(v);
      else r[in.dst] = v;
    }
  }
}

static inline float ftc_bits_f32(int64_t x) {
  uint32_t u = (uint32_t)(x & 0xffffffff);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

template <class T>
static int ftc_elementwise(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch,
                           ftc_env *e, void *plan) {
  ftc_ew_p q;
  ftc_vargs x;
  memset(&q, 0, sizeof q);
  memset(&x, 0, sizeof x);
  q.n_in = (int)p[0];
  q.m = (int)p[1];
  if (q.n_in > FTC_EW_MAXIN || q.m > FTC_EW_MAXI || p[2] > FTC_EW_MAXT) return ftc_fail(e, "Elementwise program too large");
  for (int s = 0; s < q.m; s++) {
    const int64_t *ins = p + 4 + 5 * s;
    ftc_ew_ins &d = q.ins[s];
    int64_t op = ins[0];
    d.op = (int16_t)op;
    d.dst = ins[1] == FTC_EW_OUT ? (int16_t)-1 : (int16_t)ins[1];
    if (ins[2] & FTC_EW_IMM) { d.a = -1; d.ia = ftc_bits_f32(ins[2]); } else d.a = (int16_t)ins[2];
    d.b = -1;
    if (FT_SOP_IS_BINARY(op)) {
      if (ins[3] & FTC_EW_IMM) d.ib = ftc_bits_f32(ins[3]); else d.b = (int16_t)ins[3];
    } else if (FT_SOP_IS_PARAM(op)) {
      d.ib = ftc_bits_f32(ins[3]);
      d.ic = ftc_bits_f32(ins[4]);
    }
  }
  const int64_t *bp = p + p[3];
  int r = (int)bp[0];
  int64_t n = 1;
  q.bc.r = r;
  for (int d = 0; d < r; d++) {
    q.bc.d[d] = (int32_t)bp[1 + d];
    n *= bp[1 + d];
    for (int i = 0; i < q.n_in; i++) q.bc.s[i][d] = (int32_t)bp[1 + r + i * r + d];
  }
  for (int i = 0; i < q.n_in; i++) x.x[i] = in[i];
  if (n <= 0) return 0;
  FTC_LAUNCH(ftc_blocks(n, FTC_THREADS), FTC_THREADS, e->stream, ftc_elementwise_k<T>)(q, x, (T *)out[0], (uint32_t)n);
  return ftc_launched(e, "elementwise");
}

#endif

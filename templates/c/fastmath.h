/* Float32 exp, log, tanh, erf and friends written to vectorize.
 *
 * libm's expf/erff/tanhf are scalar calls: a loop that calls them per element cannot vectorize
 * (glibc's vector variants need -ffast-math), and GELU's erf or softmax's exp sit in the hot
 * loops of transformer models. These are branchless (selects only) inline functions, accurate to
 * a few float ulps (relative error below 1e-6 over the whole float range, checked against libm by
 * tests/unit/test_fastmath.c). Polynomial coefficients are least-squares fits in double on
 * Chebyshev nodes, weighted for relative error, then rounded to float.
 *
 * Special values follow C: exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(<0) = NaN, and NaN
 * goes through every function as NaN. */
#ifndef FT_FASTMATH_H
#define FT_FASTMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "isa.h"

static inline float ft_f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t ft_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* e^x = 2^n * e^r with n = round(x / ln 2) and |r| <= ln2 / 2. 2^n is built from the exponent
 * bits in two halves so that n from -151 to 129 (subnormal results, overflow to inf) needs no
 * branch. */
static inline float ft_expf(float x) {
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = 0.693359375f;           /* 9 significant bits: n * ln2_hi is exact */
  const float ln2_lo = -2.12194440e-4f;        /* ln 2 - ln2_hi */
  const float round_magic = 12582912.0f;       /* 1.5 * 2^23: adding it rounds to an integer */
  float xc = x != x ? 0.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  xc = xc < -104.0f ? -104.0f : xc;
  float nf = (xc * log2e + round_magic) - round_magic;
  float r = (xc - nf * ln2_hi) - nf * ln2_lo;
  /* e^r = 1 + r + r^2 * q(r), q fitted on [-ln2/2, ln2/2] (relative error 4e-9) */
  float q = 0.49999988595112443f +
            r * (0.1666651845998034f + r * (0.041669533109269324f +
                                            r * (0.008368916341366783f + r * 0.0013751407893437366f)));
  float er = 1.0f + r + r * r * q;
  int32_t n = (int32_t)nf, n1 = n / 2, n2 = n - n1;
  float s1 = ft_f32_from_bits((uint32_t)(n1 + 127) << 23);
  float s2 = ft_f32_from_bits((uint32_t)(n2 + 127) << 23);
  float y = er * s1 * s2;
  return x != x ? x : y;
}

/* log x = e ln2 + log m, with x = m 2^e and m in [sqrt(1/2), sqrt(2)); log(1 + f) for
 * f = m - 1 is f - f^2/2 + f^3 * q(f), q fitted on that interval (relative error 7e-9). */
static inline float ft_logf(float x) {
  const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
  /* subnormal (or <= 0, handled below): scale into range. The product is computed before the
   * select: a multiply under a condition would keep the loop from vectorizing (trapping math). */
  int sub = x < 1.17549435e-38f;
  float x_scaled = x * 8388608.0f;
  float xs = sub ? x_scaled : x;
  int32_t u = (int32_t)(ft_f32_bits(xs) + (uint32_t)(0x3f800000 - 0x3f3504f3)); /* wraps for NaN and negatives, handled below */
  float e = (float)((u >> 23) - 127 - (sub ? 23 : 0));
  float m = ft_f32_from_bits((uint32_t)(u & 0x007fffff) + 0x3f3504f3u);
  float f = m - 1.0f;
  float q = 0.33333354047279495f +
            f * (-0.2500085194354478f +
                 f * (0.1999982657295515f +
                      f * (-0.16621369910188755f +
                           f * (0.14227114035737595f +
                                f * (-0.1320210420916435f + f * (0.1262032749033705f + f * -0.07362867872842839f))))));
  float y = f - 0.5f * f * f + f * f * f * q;
  y = y + e * ln2_lo + e * ln2_hi;
  /* special inputs give a finite y above; adding inf or NaN fixes them. (A select between y and
   * a constant would let the compiler compute y in a branch only, and the loop stays scalar.) */
  float special = x == 0.0f ? -INFINITY : (x == INFINITY ? INFINITY : NAN);
  return y + ((x > 0.0f && x < INFINITY) ? 0.0f : special);
}

/* log(1 + u), accurate for small u: the rounding of 1 + u is undone by u / ((1 + u) - 1). */
static inline float ft_log1pf(float u) {
  float w = 1.0f + u;
  float d = w - 1.0f;
  float ratio = u / (d == 0.0f ? 1.0f : d);
  /* where 1 + u rounds to 1, log(w) is exactly 0 and the sum gives u */
  return ft_logf(w) * ratio + (d == 0.0f ? u : 0.0f);
}

/* tanh: x + x^3 p(x^2) below 0.625 (relative error 5e-9), 1 - 2 / (e^{2|x|} + 1) above. */
static inline float ft_tanhf(float x) {
  float a = fabsf(x), u = x * x;
  float p = -0.3333328521956452f +
            u * (0.13331512665017015f +
                 u * (-0.05374465790194183f + u * (0.02065312451905413f + u * -0.005718962564358283f)));
  float small = x + x * u * p;
  float e = ft_expf(2.0f * (a < 10.0f ? a : 10.0f));
  float big = copysignf(1.0f - 2.0f / (e + 1.0f), x);
  big = x != x ? x : big;
  return a < 0.625f ? small : big;
}

/* erf: x p(x^2) below 1 (relative error 1.4e-9); above, 1 - e^{-x^2} q(t) with
 * t = 1 / (1 + x/2) and q fitted to erfc(x) e^{x^2} on [0.9, 4] (error 2e-10 in erf); erf is 1 in
 * float beyond 3.92. */
static inline float ft_erff(float x) {
  float a = fabsf(x), u = x * x;
  float p = 1.1283791664923075f +
            u * (-0.37612628789755564f +
                 u * (0.11283611987865677f +
                      u * (-0.02685479325223633f +
                           u * (0.005190027948441089f + u * (-0.0008024148467428022f + u * 7.897576470000667e-05f)))));
  float small = x * p;
  float ac = a < 4.0f ? a : 4.0f;
  float t = 1.0f / (1.0f + 0.5f * ac);
  float q = 0.0017092941721442475f +
            t * (0.2606914960767783f +
                 t * (0.3933463947366538f +
                      t * (-0.05845852172923269f + t * (0.6314873342528916f + t * -0.22901128041999239f))));
  float big = copysignf(1.0f - ft_expf(-ac * ac) * q, x);
  return a < 1.0f ? small : (x != x ? x : big);
}

static inline float ft_sigmoidf(float x) { return 1.0f / (1.0f + ft_expf(-x)); }

/* softplus = log(1 + e^x) = max(x, 0) + log1p(e^-|x|), which never overflows. */
static inline float ft_softplusf(float x) {
  return (x > 0.0f ? x : 0.0f) + ft_log1pf(ft_expf(-fabsf(x))); /* NaN in, NaN out */
}

static inline double ft_softplus(double x) {
  double y = (x > 0.0 ? x : 0.0) + log1p(exp(-fabs(x)));
  return x != x ? x : y;
}

/* max(0, min(1, v)) with selects (fmaxf keeps the loop scalar); NaN stays NaN */
static inline float ft_unit_clamp_f32(float v) { v = v > 1 ? 1 : v; return v < 0 ? 0 : v; }
static inline double ft_unit_clamp_f64(double v) { v = v > 1 ? 1 : v; return v < 0 ? 0 : v; }

/* GELU, 0.5 x (1 + erf(z)) with z = x / sqrt 2. 1 + erf(z) is erfc(|z|) for x < 0 and
 * 2 - erfc(|z|) for x >= 0, and only erfc is computed, so GELU of a negative x keeps its relative
 * accuracy where 1 + erf would cancel. erfc(a) = e^{-a^2} q(t), t = 1 / (1 + a/2), q a degree-8
 * fit of erfc(a) e^{a^2} on a in [0, 10] (least squares, relative error 6e-7 in float).
 * e^{-x^2/2} carries the rounding error ul of -x^2/2 as the factor 1 + ul (one FMA computes ul;
 * without a fast FMA it is left out, which costs relative accuracy only where GELU is below
 * ~1e-20), so that error does not grow with |x|. |x| is clamped to 15, past which e^{-x^2/2} is
 * 0 in float. Against double-precision GELU: relative error below 7e-7 where |GELU| > 1e-30
 * over all floats (tests/unit/test_fastmath.c), error at most 2.5e-7 |x| on every 2^-12 step of
 * [-12, 12] (tests/unit/test_gemm.c). inf -> inf, NaN -> NaN. ft_v16_gelu_erfc below is the same
 * formula on 16 lanes; the two agree to a few ulps. */
static inline float ft_geluf(float x) {
  float a = fabsf(x);
  a = a < 15.0f ? a : 15.0f; /* NaN -> 15 (x carries the NaN) */
  float ha = -0.5f * a, u = ha * a;
#ifdef __FP_FAST_FMAF
  float ul = __builtin_fmaf(ha, a, -u); /* what rounding -x^2/2 lost (the builtin: freestanding
                                       * builds do not treat fmaf as one) */
#else
  float ul = 0.0f;
#endif
  float ex = ft_expf(u) * (1.0f + ul);
  float t = 1.0f / (1.0f + 0.353553390593273762f * a);
  float q = -9.073778056e-03f;
  q = q * t + 1.384589970e-01f;
  q = q * t + -4.693655372e-01f;
  q = q * t + 5.232889056e-01f;
  q = q * t + -5.490282178e-02f;
  q = q * t + 3.197117746e-01f;
  q = q * t + 2.684548497e-01f;
  q = q * t + 2.834874094e-01f;
  q = q * t + -5.951292769e-05f;
  float ec = q * ex; /* erfc(|z|) */
  float s = x >= 0.0f ? 2.0f - ec : ec;
  return 0.5f * x * s;
}
static inline double ft_gelu(double x) { return 0.5 * x * erfc(-x * 0.70710678118654752440); }

#ifdef __AVX512F__
#include <immintrin.h>

/* ft_geluf on 16 lanes: the same formula step by step, with 1 / (1 + |z|/2) as rcp14 and a
 * Newton step instead of a division, and e^{-x^2/2} computed inline with its rounding error
 * folded into the reduced argument. Past |x| = 15, e^{-x^2/2} is 0 in float (scalef underflows):
 * the result is x or -0. Error bounds: ft_geluf. ft_v16_gelu's far negative tail. */
static inline __attribute__((always_inline)) __m512 ft_v16_gelu_erfc(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 a = _mm512_min_ps(_mm512_abs_ps(x), _mm512_set1_ps(15.0f)); /* |x|; NaN -> 15 (x carries the NaN) */
  __m512 ha = _mm512_mul_ps(a, _mm512_set1_ps(-0.5f));
  __m512 u = _mm512_mul_ps(ha, a);       /* -x^2/2 rounded ... */
  __m512 ul = _mm512_fmsub_ps(ha, a, u); /* ... and what the rounding lost */
  /* e^u = 2^n e^r, r = u - n ln2 in two parts (n ln2_hi exact), as ft_expf; past |x| = 15 n is
   * -163 and 2^n e^r is 0 */
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(u, _mm512_set1_ps(1.44269504088896341f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), u);
  r = _mm512_add_ps(_mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r), ul);
  __m512 e = _mm512_set1_ps(0.0013751407893437366f);
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(0.008368916341366783f));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(0.041669533109269324f));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(0.1666651845998034f));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(0.49999988595112443f));
  e = _mm512_fmadd_ps(_mm512_mul_ps(r, r), e, _mm512_add_ps(r, one));
  __m512 ex = _mm512_scalef_ps(e, n); /* e^{-x^2/2} */
  __m512 d = _mm512_fmadd_ps(a, _mm512_set1_ps(0.353553390593273762f), one); /* 1 + |z|/2 */
  __m512 t = _mm512_rcp14_ps(d);
  t = _mm512_fmadd_ps(t, _mm512_fnmadd_ps(d, t, one), t);
  __m512 q = _mm512_set1_ps(-9.073778056e-03f);
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.384589970e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-4.693655372e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(5.232889056e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-5.490282178e-02f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(3.197117746e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(2.684548497e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(2.834874094e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-5.951292769e-05f));
  __m512 ec = _mm512_mul_ps(q, ex); /* erfc(a) */
  __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
  __m512 s = _mm512_mask_sub_ps(ec, pos, _mm512_set1_ps(2.0f), ec); /* 1 + erf(z) */
  return _mm512_mul_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.5f)), s);
}

/* GELU on 16 lanes, for the GEMM epilogues (BERT's and ViT's first FFN projection). GELU is
 * x Phi(x), and Phi(x) is 1 - p for x >= 0 and p below, with p = Phi(-|x|) the normal lower
 * tail. Where every |x| is up to 5.544 or x is positive, p comes from a table: |x| picks one of
 * 16 intervals of width 0.36 (k = round(|x| / 0.36), left in the low bits of a float by the
 * 1.5 * 2^23 addition), and p is a degree-7 polynomial in r = |x| - 0.36 k whose 8 coefficients
 * are vpermps lookups by k (scripts/fit_gelu_table.py fits them; relative error 1.6e-7 before
 * float rounding). Above 5.544, p is below 1.5e-8 and 1 - p rounds to 1: x is clamped there and
 * GELU is x. Lanes below -5.544 take ft_v16_gelu_erfc's values (computed only when a vector has
 * one), which keeps the relative accuracy of the far negative tail; each lane's value depends on
 * its x alone. The table form costs about 9 cycles per 16 values against
 * 16 for the erfc form (Zen 5). Against double-precision GELU its relative error is below
 * 3.2e-7 over every float it covers (tests/unit/test_fastmath.c samples them); inf -> inf,
 * NaN -> NaN, -0 -> -0. */
static inline __attribute__((always_inline)) __m512 ft_v16_gelu(__m512 x) {
  static const float tab[8][16] __attribute__((aligned(64))) = {
    {5.000000000e-01f, 3.594235480e-01f, 2.357624918e-01f, 1.400710791e-01f, 7.493369281e-02f, 3.593031317e-02f, 1.538633183e-02f, 5.867740139e-03f, 1.988375094e-03f, 5.976482062e-04f, 1.591085020e-04f, 3.747485607e-05f, 7.801453648e-06f, 1.434373303e-06f, 2.327656716e-07f, 3.332040777e-08f},
    {-3.989422917e-01f, -3.739106059e-01f, -3.078512549e-01f, -2.226534933e-01f, -1.414599568e-01f, -7.895015180e-02f, -3.870685026e-02f, -1.667009667e-02f, -6.306724157e-03f, -2.095969627e-03f, -6.119016325e-04f, -1.569255401e-04f, -3.535257929e-05f, -6.996228421e-06f, -1.216248620e-06f, -1.857360417e-07f},
    {2.560933687e-10f, 6.730391085e-02f, 1.108264551e-01f, 1.202328876e-01f, 1.018511727e-01f, 7.105513662e-02f, 4.180339724e-02f, 2.100432292e-02f, 9.081683122e-03f, 3.395470791e-03f, 1.101422939e-03f, 3.107126104e-04f, 7.636159717e-05f, 1.637118839e-05f, 3.064951443e-06f, 5.014887279e-07f},
    {6.649036705e-02f, 5.424195901e-02f, 2.471018769e-02f, -6.174926180e-03f, -2.531190030e-02f, -2.947472036e-02f, -2.364730462e-02f, -1.486528385e-02f, -7.667297963e-03f, -3.317781724e-03f, -1.219724189e-03f, -3.839861311e-04f, -1.040683201e-04f, -2.437285912e-05f, -4.946347417e-06f, -8.717039464e-07f},
    {2.237801908e-07f, -1.609869860e-02f, -2.291851118e-02f, -1.837150939e-02f, -7.863111794e-03f, 1.420884044e-03f, 5.802234635e-03f, 5.864445120e-03f, 4.006899893e-03f, 2.121524187e-03f, 9.141876944e-04f, 3.283568367e-04f, 9.966245125e-05f, 2.578536623e-05f, 5.720687113e-06f, 1.092959906e-06f},
    {-9.976011701e-03f, -6.976745091e-03f, -4.059518978e-04f, 4.894390702e-03f, 6.060949992e-03f, 3.909319174e-03f, 1.040439936e-03f, -7.257544785e-04f, -1.157711842e-03f, -8.769913693e-04f, -4.752443929e-04f, -2.024798741e-04f, -7.051715511e-05f, -2.048965871e-05f, -5.028681699e-06f, -1.050945684e-06f},
    {1.417829662e-05f, 2.545453841e-03f, 3.084741300e-03f, 1.564851846e-03f, -3.961951006e-04f, -1.351352199e-03f, -1.144308364e-03f, -4.789557133e-04f, 1.843211612e-05f, 1.890360727e-04f, 1.629290782e-04f, 9.006742766e-05f, 3.771747288e-05f, 1.266951131e-05f, 3.509243015e-06f, 8.143256309e-07f},
    {1.151272329e-03f, 6.890655495e-04f, -2.733320580e-04f, -8.191152592e-04f, -6.302172551e-04f, -1.109015648e-04f, 2.299092448e-04f, 2.554245293e-04f, 1.267425687e-04f, 1.526038795e-05f, -2.732126450e-05f, -2.639843296e-05f, -1.448254716e-05f, -5.819383205e-06f, -1.845219572e-06f, -4.775708931e-07f},
  };
  const float h = 0.36f, top = 5.544f; /* |x| <= top: k <= 15 */
  __m512 a = _mm512_min_ps(_mm512_abs_ps(x), _mm512_set1_ps(top)); /* NaN -> top (x carries the NaN) */
  __m512 t = _mm512_fmadd_ps(a, _mm512_set1_ps(1.0f / h), _mm512_set1_ps(12582912.0f));
  __m512i k = _mm512_castps_si512(t); /* vpermps reads the low 4 bits */
  __m512 r = _mm512_fnmadd_ps(_mm512_sub_ps(t, _mm512_set1_ps(12582912.0f)), _mm512_set1_ps(h), a);
  __m512 p = _mm512_permutexvar_ps(k, _mm512_load_ps(tab[7]));
#pragma GCC unroll 7
  for (int d = 6; d >= 0; d--) p = _mm512_fmadd_ps(p, r, _mm512_permutexvar_ps(k, _mm512_load_ps(tab[d])));
  __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
  __m512 y = _mm512_mul_ps(x, _mm512_mask_sub_ps(p, pos, _mm512_set1_ps(1.0f), p)); /* x Phi(x) */
  __mmask16 far = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-top), _CMP_LT_OQ);
  if (__builtin_expect(far != 0, 0)) y = _mm512_mask_mov_ps(y, far, ft_v16_gelu_erfc(x));
  return y;
}
#endif

/* The math of templates/common/scalar_ops.h's rows: FT_MATH ft_f32 is float32 with the functions
 * above, FT_MATH ft_f64 is float64 with libm's. */
#define ft_f32_exp ft_expf
#define ft_f32_log ft_logf
#define ft_f32_tanh ft_tanhf
#define ft_f32_erf ft_erff
#define ft_f32_gelu ft_geluf
#define ft_f32_softplus ft_softplusf
#define ft_f32_clamp01 ft_unit_clamp_f32
#define ft_f32_libm(fn) fn##f
#define ft_f64_exp exp
#define ft_f64_log log
#define ft_f64_tanh tanh
#define ft_f64_erf erf
#define ft_f64_gelu ft_gelu
#define ft_f64_softplus ft_softplus
#define ft_f64_clamp01 ft_unit_clamp_f64
#define ft_f64_libm(fn) fn

/* ---- the same on one register of the ISA (isa.h's ft_vn) ---------------------------------
 * ft_expf, ft_geluf and ft_sigmoidf step by step on FT_VLEN lanes, with GCC vector operations:
 * the compiler does not vectorize the scalar functions inside the epilogues' switch over the
 * activations, and these keep each step in one register on every ISA. Each lane gets the
 * scalar function's value (tests/unit/test_fastmath.c compares them bit for bit). */
typedef int32_t ft_vni __attribute__((vector_size(4 * FT_VLEN)));
#define FT_VN_SEL(m, a, b) ((ft_vn)(((m) & (ft_vni)(a)) | (~(m) & (ft_vni)(b))))

static inline __attribute__((always_inline)) ft_vn ft_vn_expf(ft_vn x) {
  const ft_vn z = {0};
  ft_vni nan = x != x;
  ft_vn xc = FT_VN_SEL(nan, z, x);
  xc = FT_VN_SEL(xc > 89.0f, z + 89.0f, xc);
  xc = FT_VN_SEL(xc < -104.0f, z - 104.0f, xc);
  ft_vn nf = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  ft_vn r = (xc - nf * 0.693359375f) - nf * -2.12194440e-4f;
  ft_vn q = 0.49999988595112443f +
            r * (0.1666651845998034f + r * (0.041669533109269324f +
                                            r * (0.008368916341366783f + r * 0.0013751407893437366f)));
  ft_vn er = 1.0f + r + r * r * q;
  ft_vni n = __builtin_convertvector(nf, ft_vni), n1 = n / 2, n2 = n - n1;
  ft_vn s1 = (ft_vn)((n1 + 127) << 23), s2 = (ft_vn)((n2 + 127) << 23);
  ft_vn y = er * s1 * s2;
  return FT_VN_SEL(nan, x, y);
}

static inline __attribute__((always_inline)) ft_vn ft_vn_geluf(ft_vn x) {
  const ft_vn z = {0};
  ft_vn a = (ft_vn)((ft_vni)x & 0x7fffffff);
  a = FT_VN_SEL(a < 15.0f, a, z + 15.0f); /* NaN -> 15 */
  /* u is -x^2/2 as the scalar's ha * a (scaling by -0.5 is exact), written so that the compiler
   * does not take ha * a for u below and fold ul to 0 */
  ft_vn u = (a * a) * -0.5f;
#ifdef __FP_FAST_FMAF
  ft_vn ha = -0.5f * a;
  ft_vn ul = ha * a - u; /* contracted to one FMA, as the scalar's __builtin_fmaf */
#else
  ft_vn ul = z;
#endif
  ft_vn ex = ft_vn_expf(u) * (1.0f + ul);
  ft_vn t = 1.0f / (1.0f + 0.353553390593273762f * a);
  ft_vn q = z - 9.073778056e-03f;
  q = q * t + 1.384589970e-01f;
  q = q * t + -4.693655372e-01f;
  q = q * t + 5.232889056e-01f;
  q = q * t + -5.490282178e-02f;
  q = q * t + 3.197117746e-01f;
  q = q * t + 2.684548497e-01f;
  q = q * t + 2.834874094e-01f;
  q = q * t + -5.951292769e-05f;
  ft_vn ec = q * ex;
  ft_vn s = FT_VN_SEL(x >= 0.0f, 2.0f - ec, ec);
  return 0.5f * x * s;
}

static inline __attribute__((always_inline)) ft_vn ft_vn_sigmoidf(ft_vn x) { return 1.0f / (1.0f + ft_vn_expf(-x)); }

#endif

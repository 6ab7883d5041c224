/* templates/c/fastmath.h against libm (in double) over the whole float range: every 61st float
 * bit pattern, positive and negative, plus the special values. The bound is the one the header
 * promises: relative error below 1e-6 (an absolute 1e-37 where results are subnormal). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fastmath.h"

typedef float (*fast_fn)(float);
typedef double (*ref_fn)(double);

static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double ref_softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

/* Worst relative error of fast against ref over sampled floats in [lo, hi]. */
static double worst_error(fast_fn fast, ref_fn ref, float lo, float hi, float *at) {
  double worst = 0;
  for (uint32_t u = 0; u < 0x7f800000u; u += 61) {
    for (int s = 0; s < 2; s++) {
      float x;
      uint32_t b = u | (s ? 0x80000000u : 0);
      memcpy(&x, &b, 4);
      if (x < lo || x > hi) continue;
      double want = ref((double)x), got = fast(x);
      if (isinf(want) || want == 0) {
        /* overflow and underflow: a float result must be inf / zero-or-subnormal as well */
        if (isinf(want) ? got != (float)want : fabs(got) > 1e-37) { *at = x; return INFINITY; }
        continue;
      }
      if (fabs(want) > 3.4028234e38) continue; /* beyond float: covered by the inf check */
      double err = fabs(got - want) / (fabs(want) < 1e-30 ? 1e-30 : fabs(want));
      if (fabs(want) < 1.2e-38 && fabs(got - want) < 1e-37) err = 0; /* subnormal results */
      if (err > worst) { worst = err; *at = x; }
    }
  }
  return worst;
}

#define CHECK(fast, ref, lo, hi)                                                                 \
  do {                                                                                           \
    float at = 0;                                                                                \
    double e = worst_error(fast, ref, lo, hi, &at);                                              \
    cr_log_info(#fast ": worst relative error %g at x = %.9g", e, at);                          \
    cr_expect(e < 1e-6, #fast ": relative error %g at x = %.9g", e, at);                        \
  } while (0)

Test(fastmath, exp) { CHECK(ft_expf, exp, -INFINITY, INFINITY); }
Test(fastmath, log) { CHECK(ft_logf, log, 0, INFINITY); }
Test(fastmath, log1p) { CHECK(ft_log1pf, log1p, -0.999f, INFINITY); }
Test(fastmath, tanh) { CHECK(ft_tanhf, tanh, -INFINITY, INFINITY); }
Test(fastmath, erf) { CHECK(ft_erff, erf, -INFINITY, INFINITY); }
Test(fastmath, sigmoid) { CHECK(ft_sigmoidf, ref_sigmoid, -INFINITY, INFINITY); }
Test(fastmath, softplus) { CHECK(ft_softplusf, ref_softplus, -INFINITY, INFINITY); }
Test(fastmath, gelu) { CHECK(ft_geluf, ft_gelu, -INFINITY, INFINITY); }

#ifdef __AVX512F__
/* ft_v16_gelu against ft_geluf over the whole float range, 16 neighbouring floats of alternating
 * sign a vector: where |x| is small every lane takes the table, where it is large the negative
 * lanes send the vector to ft_v16_gelu_erfc. Each form is within 7e-7 of GELU, so they agree
 * within twice that; how close depends on which products the compiler contracts into FMAs
 * (4.3e-7 at -O3, 6.6e-7 at the sanitizer build's -O1, for the erfc form). */
Test(fastmath, gelu_vector_matches_scalar) {
  double worst = 0;
  float at = 0;
  for (uint32_t u = 0; u < 0x7f800000u; u += 16 * 61) {
    float x[16], y[16];
    for (int l = 0; l < 16; l++) {
      uint32_t b = (u + 61 * (uint32_t)l) | (l % 2 ? 0x80000000u : 0);
      memcpy(&x[l], &b, 4);
    }
    _mm512_storeu_ps(y, ft_v16_gelu(_mm512_loadu_ps(x)));
    for (int l = 0; l < 16; l++) {
      float s = ft_geluf(x[l]);
      if (fabsf(s) < 1e-30f && fabsf(y[l]) < 1e-30f) continue;
      double e = fabs((double)y[l] - s) / fabs((double)s);
      if (e > worst) { worst = e; at = x[l]; }
    }
  }
  cr_log_info("ft_v16_gelu vs ft_geluf: worst relative difference %g at x = %.9g", worst, at);
  cr_expect(worst < 1.4e-6, "ft_v16_gelu and ft_geluf differ by %g at x = %.9g", worst, at);
}

/* The table form on its own: floats from -5.544 (the table's end) to 8, 16 consecutive ones a
 * vector every 61 * 16, against double-precision GELU (2.7e-7 here, 3.1e-7 over every float of
 * the range); above 5.544 GELU is x. A lane past the end has ft_v16_gelu_erfc's bits, and the
 * other lanes of its vector their own. */
Test(fastmath, gelu_vector_table) {
  double worst = 0;
  float at = 0, x[16], y[16], e16[16];
  uint32_t lo = ft_f32_bits(-5.544f), hi = ft_f32_bits(8.0f);
  for (int side = 0; side < 2; side++)
    for (uint32_t u = 0; u + 16 <= (side ? hi : lo - 0x80000000u); u += 16 * 61) {
      for (int l = 0; l < 16; l++) x[l] = ft_f32_from_bits((u + (uint32_t)l) | (side ? 0 : 0x80000000u));
      _mm512_storeu_ps(y, ft_v16_gelu(_mm512_loadu_ps(x)));
      for (int l = 0; l < 16; l++) {
        double want = ft_gelu(x[l]), e = fabs(y[l] - want) / (fabs(want) < 1e-30 ? 1e-30 : fabs(want));
        if (e > worst) { worst = e; at = x[l]; }
        cr_assert(x[l] < 5.544f || y[l] == x[l], "GELU(%.9g) = %.9g, not x", x[l], y[l]);
      }
    }
  cr_log_info("ft_v16_gelu's table: worst relative error %g at x = %.9g", worst, at);
  cr_expect(worst < 4e-7, "ft_v16_gelu's table: relative error %g at x = %.9g", worst, at);
  for (int l = 0; l < 16; l++) x[l] = -5.5f + 0.7f * (float)l;
  x[5] = -5.545f;
  _mm512_storeu_ps(y, ft_v16_gelu(_mm512_loadu_ps(x)));
  _mm512_storeu_ps(e16, ft_v16_gelu_erfc(_mm512_loadu_ps(x)));
  for (int l = 0; l < 16; l++) {
    float alone = _mm512_cvtss_f32(ft_v16_gelu(_mm512_set1_ps(x[l])));
    cr_expect(memcmp(&y[l], l == 5 ? &e16[l] : &alone, 4) == 0, "lane %d: GELU(%.9g) = %.9g, want %.9g", l, x[l], y[l],
              l == 5 ? e16[l] : alone);
  }
  float sp[16] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1e30f, 5.544f, 1e-40f, -1e-40f, -5.544f, 3, -3, 1, -1, 0.5f, -0.5f};
  _mm512_storeu_ps(y, ft_v16_gelu(_mm512_loadu_ps(sp)));
  cr_expect(y[0] == INFINITY && isnan(y[2]) && y[3] == 0 && !signbit(y[3]) && y[4] == 0 && signbit(y[4]));
  cr_expect(y[5] == 1e30f && y[6] == 5.544f);
}
#endif

Test(fastmath, special_values) {
  cr_expect(ft_expf(-INFINITY) == 0 && ft_expf(INFINITY) == INFINITY && isnan(ft_expf(NAN)));
  cr_expect(ft_expf(0) == 1);
  cr_expect(ft_logf(0) == -INFINITY && isnan(ft_logf(-1)) && ft_logf(INFINITY) == INFINITY);
  cr_expect(ft_logf(1) == 0 && isnan(ft_logf(NAN)));
  cr_expect(ft_tanhf(INFINITY) == 1 && ft_tanhf(-INFINITY) == -1 && isnan(ft_tanhf(NAN)));
  cr_expect(ft_erff(INFINITY) == 1 && ft_erff(-INFINITY) == -1 && isnan(ft_erff(NAN)));
  cr_expect(ft_erff(0) == 0 && ft_tanhf(0) == 0);
  cr_expect(ft_sigmoidf(-INFINITY) == 0 && ft_sigmoidf(INFINITY) == 1);
  cr_expect(ft_softplusf(-INFINITY) == 0 && ft_softplusf(INFINITY) == INFINITY);
  cr_expect(ft_geluf(INFINITY) == INFINITY && isnan(ft_geluf(NAN)) && ft_geluf(0) == 0);
  cr_expect(ft_geluf(1e30f) == 1e30f && ft_geluf(-20.0f) == 0);
}

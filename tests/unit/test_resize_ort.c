/* The float32 bilinear Resize kernel that computes as ONNX Runtime's CPU kernel does
 * (templates/c/resize.h, ft_resize_bilinear_ort_f32), against a reference written out here from
 * ONNX Runtime's formula (float coordinates, |x - x1| and |x - x2| weights, 0.5 each at the edge,
 * the four products summed left to right, every rounding forced through a volatile so that no
 * fused multiply-add hides one): bit-equal, in every coordinate mode it is picked for, up and
 * down, scales and sizes, and with a leading plane dim. The double-precision kernel it replaces
 * for these cases stays within 1e-4 (1 + |y|) of it. Self-contained: includes the template. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "resize.h"

static float ref_coord(int coord, int64_t o, float scale, int64_t in, int64_t out) {
  volatile float xr = (float)o, t;
  if (scale == 1.0f) return xr;
  switch (coord) {
  case FT_RZ_ASYMMETRIC: t = xr / scale; return t;
  case FT_RZ_ALIGN_CORNERS:
    if (out == 1) return 0.0f;
    t = xr * (float)(in - 1);
    t = t / (float)(out - 1);
    return t;
  case FT_RZ_PYTORCH_HALF_PIXEL:
    if (!((float)out > 1)) return 0.0f;
    /* fall through */
  default:
    t = xr + 0.5f;
    t = t / scale;
    t = t - 0.5f;
    return t;
  }
}

static void ref_axis(int coord, float scale, int64_t in, int64_t out, int64_t o, int64_t *a, int64_t *b, float *d1,
                     float *d2) {
  float x = ref_coord(coord, o, scale, in, out);
  x = fmaxf(0.0f, fminf(x, (float)(in - 1)));
  *a = (int64_t)x < in - 1 ? (int64_t)x : in - 1;
  *b = *a + 1 < in - 1 ? *a + 1 : in - 1;
  *d1 = fabsf(x - (float)*a);
  *d2 = fabsf(x - (float)*b);
  if (*a == *b) *d1 = *d2 = 0.5f;
}

static float ref_pixel(const float *X, int64_t iw, int64_t y1, int64_t y2, int64_t x1, int64_t x2, float dy1, float dy2,
                       float dx1, float dx2) {
  volatile float p0 = dx2 * dy2, p1 = dx1 * dy2, p2 = dx2 * dy1, p3 = dx1 * dy1;
  volatile float t0 = p0 * X[y1 * iw + x1], t1 = p1 * X[y1 * iw + x2], t2 = p2 * X[y2 * iw + x1], t3 = p3 * X[y2 * iw + x2];
  volatile float s = t0 + t1;
  s = s + t2;
  s = s + t3;
  return s;
}

typedef struct rcase {
  int coord;
  int64_t planes, ih, iw, oh, ow;
  float sh, sw; /* the scales the plan would pass: given, or out / in for sizes */
} rcase;

static void run_case(const rcase *c) {
  int64_t p[32] = {3, FT_RZ_LINEAR, c->coord, 0, 0, 0, c->planes, c->ih, c->iw, c->planes, c->oh, c->ow, 0, 1, 1};
  double f[8] = {-0.75, 0, c->sh, 0, 1, c->sw, 0, 1};
  int64_t nx = c->planes * c->ih * c->iw, ny = c->planes * c->oh * c->ow;
  float *X = malloc(sizeof(float) * (size_t)nx), *Y = malloc(sizeof(float) * (size_t)ny);
  float *Yd = malloc(sizeof(float) * (size_t)ny);
  unsigned s = 99u;
  for (int64_t i = 0; i < nx; i++) {
    s = s * 1664525u + 1013904223u;
    X[i] = (float)((int)(s >> 9) % 20000 - 10000) / 777.0f;
  }
  void *scratch = malloc(ft_resize_ort_scratch(c->oh, c->ow));
  const void *in[1] = {X};
  void *out[1] = {Y};
  ft_resize_bilinear_ort_f32(p, f, in, out, scratch);
  for (int64_t pl = 0; pl < c->planes; pl++)
    for (int64_t y = 0; y < c->oh; y++)
      for (int64_t x = 0; x < c->ow; x++) {
        int64_t y1, y2, x1, x2;
        float dy1, dy2, dx1, dx2;
        ref_axis(c->coord, c->sh, c->ih, c->oh, y, &y1, &y2, &dy1, &dy2);
        ref_axis(c->coord, c->sw, c->iw, c->ow, x, &x1, &x2, &dx1, &dx2);
        float want = ref_pixel(X + pl * c->ih * c->iw, c->iw, y1, y2, x1, x2, dy1, dy2, dx1, dx2);
        float got = Y[(pl * c->oh + y) * c->ow + x];
        if (memcmp(&got, &want, sizeof got))
          cr_assert_fail("coord %d %lldx%lld -> %lldx%lld: (%lld, %lld, %lld): got %.9g, want %.9g", c->coord,
                         (long long)c->ih, (long long)c->iw, (long long)c->oh, (long long)c->ow, (long long)pl, (long long)y,
                         (long long)x, got, want);
      }
  /* the double-precision kernel: the same values but for the float coordinates' rounding (a
   * coordinate off by an ulp of float moves the value by that times the local slope) */
  free(scratch);
  scratch = malloc(ft_resize_scratch(3, p + 9, FT_RZ_LINEAR));
  out[0] = Yd;
  ft_resize_interp_f32(p, f, in, out, scratch);
  for (int64_t i = 0; i < ny; i++)
    cr_assert(fabsf(Yd[i] - Y[i]) <= 1e-4f * (1 + fabsf(Yd[i])), "element %lld: %.9g vs %.9g", (long long)i, Yd[i], Y[i]);
  free(X); free(Y); free(Yd); free(scratch);
}

Test(resize_ort, bilinear_matches_onnx_runtime_formula_bit_for_bit) {
  const rcase cases[] = {
      {FT_RZ_HALF_PIXEL, 3, 37, 53, 74, 106, 2.0f, 2.0f},
      {FT_RZ_HALF_PIXEL, 2, 37, 53, 80, 97, 80.0f / 37.0f, 97.0f / 53.0f},
      {FT_RZ_PYTORCH_HALF_PIXEL, 2, 10, 13, 17, 29, 1.7f, 2.3f},
      {FT_RZ_ASYMMETRIC, 1, 9, 11, 27, 33, 3.0f, 3.0f},
      {FT_RZ_ALIGN_CORNERS, 2, 37, 53, 74, 106, 2.0f, 2.0f},
      {FT_RZ_HALF_PIXEL, 2, 40, 30, 17, 11, 17.0f / 40.0f, 11.0f / 30.0f}, /* downsampling */
      {FT_RZ_HALF_PIXEL, 1, 1, 7, 1, 15, 1.0f, 15.0f / 7.0f},               /* one row: scale 1 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
}

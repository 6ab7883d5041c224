/* Ops the ONNX node tests cover thinly, through their descriptors (infer + plan + kernel):
 * Upsample/Resize-10 nearest rules, Resize linear against a plain reference, the scatters in
 * place, TopK's order of ties and NaN, Einsum against plain loops, QuantizeLinear's rounding,
 * and kernels with optional inputs and outputs left off (the kernel must not read them). */
#include <math.h>

#include "testutil.h"

/* Input i: a float tensor of the given shape with random data in [-4, 4]. */
static float *random_f32(tu_one *o, int i, int rank, const int64_t *dims) {
  float *x = tu_one_input(o, i, FT_FLOAT, rank, dims, NULL);
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= dims[d];
  for (int64_t k = 0; k < n; k++) x[k] = (float)((rand() % 2001) - 1000) / 250.0f;
  return x;
}

/* ---- Resize, Upsample --------------------------------------------------------------------- */

/* Upsample (and Resize-10) nearest: output i reads input floor(i / scale), as np.repeat does */
Test(resize, upsample_nearest_repeats) {
  tu_one o = tu_one_new("Upsample", 9, 2, 1);
  int64_t xd[4] = {1, 2, 3, 4}, sd[1] = {4};
  float *x = random_f32(&o, 0, 4, xd);
  float s[4] = {1, 1, 2, 3};
  tu_one_input(&o, 1, FT_FLOAT, 1, sd, s);
  tu_one_run(&o, 0);
  const ft_tensor *y = tu_one_output(&o, 0);
  cr_assert(y->dims[2] == 6 && y->dims[3] == 12);
  const float *yv = y->data;
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 12; j++)
        cr_expect_eq(yv[(c * 6 + i) * 12 + j], x[(c * 3 + i / 2) * 4 + j / 3], "at %d %d %d", c, i, j);
}

/* Resize-13 linear, half_pixel, on one of two dims: a reference written out in full */
Test(resize, linear_half_pixel_matches_reference) {
  tu_one o = tu_one_new("Resize", 13, 3, 1);
  int64_t xd[2] = {3, 5}, sd[1] = {2};
  float *x = random_f32(&o, 0, 2, xd);
  float s[2] = {1, 1.6f};
  tu_one_input(&o, 2, FT_FLOAT, 1, sd, s);
  tu_one_attr_str(&o, "mode", "linear");
  tu_one_run(&o, 0);
  const ft_tensor *y = tu_one_output(&o, 0);
  cr_assert(y->dims[0] == 3 && y->dims[1] == 8);
  const float *yv = y->data;
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < 8; j++) {
      double u = (j + 0.5) / (double)s[1] - 0.5, f = floor(u), t = u - f;
      int a = (int)f, b = a + 1;
      a = a < 0 ? 0 : a > 4 ? 4 : a;
      b = b < 0 ? 0 : b > 4 ? 4 : b;
      double want = (1 - t) * x[r * 5 + a] + t * x[r * 5 + b];
      cr_expect(fabs(yv[r * 8 + j] - want) < 1e-5, "at %d %d: got %g want %g", r, j, yv[r * 8 + j], want);
    }
}

/* ---- scatters ----------------------------------------------------------------------------- */

Test(scatter, elements_in_place_equals_copy) {
  int64_t xd[2] = {3, 4}, id[2] = {2, 4};
  int64_t ind[8] = {0, 2, 1, -1, 2, 0, 0, -3}; /* along axis 0, of size 3 */
  float upd[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float want[12];
  for (int pass = 0; pass < 2; pass++) {
    tu_one o = tu_one_new("ScatterElements", 16, 3, 1);
    srand(7);
    random_f32(&o, 0, 2, xd);
    tu_one_input(&o, 1, FT_INT64, 2, id, ind);
    tu_one_input(&o, 2, FT_FLOAT, 2, id, upd);
    tu_one_attr_str(&o, "reduction", "add");
    tu_one_run(&o, pass);
    const float *y = tu_one_output(&o, 0)->data;
    for (int i = 0; i < 12; i++) {
      if (pass == 0) want[i] = y[i];
      else cr_expect_eq(y[i], want[i], "element %d", i);
    }
  }
}

/* ---- TopK --------------------------------------------------------------------------------- */

Test(topk, ties_keep_index_order_and_nan_ranks_first) {
  float xv[6] = {1, 3, 3, NAN, 2, 3};
  int64_t xd[1] = {6}, kd[1] = {1}, k3 = 3, k2 = 2;
  tu_one o = tu_one_new("TopK", 11, 2, 2);
  tu_one_input(&o, 0, FT_FLOAT, 1, xd, xv);
  tu_one_input(&o, 1, FT_INT64, 1, kd, &k3);
  tu_one_run(&o, 0);
  const float *v = tu_one_output(&o, 0)->data;
  const int64_t *i = tu_one_output(&o, 1)->data;
  cr_expect(isnan(v[0]) && i[0] == 3);
  cr_expect(v[1] == 3 && i[1] == 1 && v[2] == 3 && i[2] == 2);

  tu_one s = tu_one_new("TopK", 11, 2, 2);
  tu_one_input(&s, 0, FT_FLOAT, 1, xd, xv);
  tu_one_input(&s, 1, FT_INT64, 1, kd, &k2);
  tu_one_attr_int(&s, "largest", 0);
  tu_one_run(&s, 0);
  v = tu_one_output(&s, 0)->data;
  i = tu_one_output(&s, 1)->data;
  cr_expect(v[0] == 1 && i[0] == 0 && v[1] == 2 && i[1] == 4);
}

/* ---- Einsum ------------------------------------------------------------------------------- */

Test(einsum, batched_matmul_with_transpose) {
  tu_one o = tu_one_new("Einsum", 12, 2, 1);
  int64_t ad[3] = {2, 3, 4}, bd[3] = {2, 5, 4};
  float *a = random_f32(&o, 0, 3, ad), *b = random_f32(&o, 1, 3, bd);
  tu_one_attr_str(&o, "equation", "bik,bjk->bji");
  tu_one_run(&o, 0);
  const ft_tensor *y = tu_one_output(&o, 0);
  cr_assert(y->rank == 3 && y->dims[0] == 2 && y->dims[1] == 5 && y->dims[2] == 3);
  const float *yv = y->data;
  for (int n = 0; n < 2; n++)
    for (int j = 0; j < 5; j++)
      for (int i = 0; i < 3; i++) {
        double s = 0;
        for (int k = 0; k < 4; k++) s += (double)a[(n * 3 + i) * 4 + k] * b[(n * 5 + j) * 4 + k];
        cr_expect(fabs(yv[(n * 5 + j) * 3 + i] - s) < 1e-4, "at %d %d %d", n, j, i);
      }
}

Test(einsum, trace_and_implicit_output) {
  tu_one o = tu_one_new("Einsum", 12, 1, 1);
  int64_t d[2] = {4, 4};
  float *x = random_f32(&o, 0, 2, d);
  tu_one_attr_str(&o, "equation", "ii");
  tu_one_run(&o, 0);
  const ft_tensor *y = tu_one_output(&o, 0);
  cr_assert_eq(y->rank, 0);
  double s = x[0] + x[5] + x[10] + x[15];
  cr_expect(fabs(*(const float *)y->data - s) < 1e-5);
}

/* ---- quantization ------------------------------------------------------------------------- */

/* no zero point: uint8, ties to even, saturation */
Test(quant, quantize_without_zero_point) {
  tu_one o = tu_one_new("QuantizeLinear", 13, 2, 1);
  float xv[6] = {2.5f, 3.5f, -1, 600, 0.49f, 7};
  float sc = 1;
  int64_t xd[1] = {6};
  tu_one_input(&o, 0, FT_FLOAT, 1, xd, xv);
  tu_one_input(&o, 1, FT_FLOAT, 0, NULL, &sc);
  tu_one_run(&o, 0);
  const ft_tensor *y = tu_one_output(&o, 0);
  cr_assert_eq(y->dtype, FT_UINT8);
  const uint8_t want[6] = {2, 4, 0, 255, 0, 7}, *yv = y->data;
  for (int i = 0; i < 6; i++) cr_expect_eq(yv[i], want[i], "element %d", i);
}

/* NaN quantizes to the low end of the type (no undefined float-to-integer conversion), the
 * infinities saturate; int8 with a zero point */
Test(quant, quantize_nan_and_infinities) {
  tu_one o = tu_one_new("QuantizeLinear", 13, 3, 1);
  float xv[5] = {NAN, 1, -INFINITY, INFINITY, -NAN};
  float sc = 1;
  int8_t zp = 3;
  int64_t xd[1] = {5};
  tu_one_input(&o, 0, FT_FLOAT, 1, xd, xv);
  tu_one_input(&o, 1, FT_FLOAT, 0, NULL, &sc);
  tu_one_input(&o, 2, FT_INT8, 0, NULL, &zp);
  tu_one_run(&o, 0);
  const ft_tensor *y = tu_one_output(&o, 0);
  cr_assert_eq(y->dtype, FT_INT8);
  const int8_t want[5] = {-128, 4, -128, 127, -128}, *yv = y->data;
  for (int i = 0; i < 5; i++) cr_expect_eq(yv[i], want[i], "element %d", i);
  tu_one u = tu_one_new("QuantizeLinear", 13, 2, 1); /* uint8, no zero point: 17 values, a vector and a tail */
  float uv[17];
  for (int i = 0; i < 17; i++) uv[i] = i % 3 == 0 ? NAN : i % 3 == 1 ? -INFINITY : INFINITY;
  int64_t ud[1] = {17};
  tu_one_input(&u, 0, FT_FLOAT, 1, ud, uv);
  tu_one_input(&u, 1, FT_FLOAT, 0, NULL, &sc);
  tu_one_run(&u, 0);
  const uint8_t *uy = tu_one_output(&u, 0)->data;
  for (int i = 0; i < 17; i++) cr_expect_eq(uy[i], i % 3 == 2 ? 255 : 0, "uint8 element %d", i);
}

/* MatMulInteger without zero points: the kernel must not read inputs 2 and 3 */
Test(quant, matmul_integer_two_inputs) {
  tu_one o = tu_one_new("MatMulInteger", 10, 2, 1);
  int8_t a[6] = {1, -2, 3, -4, 5, -6};
  uint8_t b[6] = {1, 2, 3, 4, 5, 6};
  int64_t ad[2] = {2, 3}, bd[2] = {3, 2};
  tu_one_input(&o, 0, FT_INT8, 2, ad, a);
  tu_one_input(&o, 1, FT_UINT8, 2, bd, b);
  tu_one_run(&o, 0);
  const int32_t *y = tu_one_output(&o, 0)->data;
  int32_t want[4] = {1 * 1 - 2 * 3 + 3 * 5, 1 * 2 - 2 * 4 + 3 * 6, -4 * 1 + 5 * 3 - 6 * 5, -4 * 2 + 5 * 4 - 6 * 6};
  for (int i = 0; i < 4; i++) cr_expect_eq(y[i], want[i], "element %d", i);
}

/* ---- recurrent ---------------------------------------------------------------------------- */

/* LSTM with only X, W, R and only Y_h: zero bias and initial states, a plain reference */
Test(rnn, lstm_minimal_inputs_and_outputs) {
  const int S = 3, B = 2, I = 2, H = 2;
  tu_one o = tu_one_new("LSTM", 14, 3, 2);
  o.n->out[0] = -1; /* Y left off */
  int64_t xd[3] = {S, B, I}, wd[3] = {1, 4 * H, I}, rd[3] = {1, 4 * H, H};
  float *x = random_f32(&o, 0, 3, xd), *w = random_f32(&o, 1, 3, wd), *r = random_f32(&o, 2, 3, rd);
  tu_one_attr_int(&o, "hidden_size", H);
  ft_err e = {0};
  o.n->op = ft_op_find("", "LSTM");
  ft_opctx c;
  ft_opctx_init(&c, o.g, 0, &e);
  cr_assert_eq(o.n->op->infer(&c), 0, "infer: %s", e.msg);
  ft_kcall k;
  memset(&k, 0, sizeof k);
  cr_assert_eq(o.n->op->plan(&c, &k), 0, "plan: %s", e.msg);
  const void *in[FT_MAX_IO];
  void *out[FT_MAX_IO];
  for (int i = 0; i < FT_MAX_IO; i++) { in[i] = (const void *)8; out[i] = (void *)8; }
  in[0] = x; in[1] = w; in[2] = r;
  float yh[4];
  out[0] = NULL;
  out[1] = yh;
  cr_assert_eq(ft_kcall_run(&k, in, out, &e), 0);
  for (int b = 0; b < B; b++) {
    double h[2] = {0, 0}, cs[2] = {0, 0};
    for (int t = 0; t < S; t++) {
      double g[8];
      for (int j = 0; j < 4 * H; j++) {
        g[j] = 0;
        for (int i = 0; i < I; i++) g[j] += w[j * I + i] * x[(t * B + b) * I + i];
        for (int i = 0; i < H; i++) g[j] += r[j * H + i] * h[i];
      }
      for (int j = 0; j < H; j++) {
        double ig = 1 / (1 + exp(-g[j])), og = 1 / (1 + exp(-g[H + j])), fg = 1 / (1 + exp(-g[2 * H + j]));
        cs[j] = fg * cs[j] + ig * tanh(g[3 * H + j]);
        h[j] = og * tanh(cs[j]);
      }
    }
    for (int j = 0; j < H; j++) cr_expect(fabs(yh[b * H + j] - h[j]) < 1e-5, "row %d unit %d", b, j);
  }
}

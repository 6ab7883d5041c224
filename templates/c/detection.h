/* Region pooling for detection models: RoiAlign and MaxRoiPool (float32, NCHW).
 *
 * ft_roialign_f32   p: [N, C, H, W, R, out_h, out_w, sampling_ratio, max mode, half_pixel]
 *                   f: [spatial_scale]; in: X, rois [R, 4] (x1, y1, x2, y2), batch_indices
 *                   (int64). Each output bin averages (or takes the max of) a grid of bilinear
 *                   samples, onnxruntime's rules: samples more than one pixel outside read
 *                   nothing, samples at the border clamp.
 * ft_maxroipool_f32 p: [N, C, H, W, R, out_h, out_w]; f: [spatial_scale]; in: X, rois [R, 5]
 *                   (batch, x1, y1, x2, y2); each bin is the max over its (rounded) pixels. */
#ifndef FT_DETECTION_H
#define FT_DETECTION_H

#include <math.h>
#include <stdint.h>

#include "tensor.h"

static void ft_roialign_f32(const int64_t *p, const double *f, const void *const *in,
                            void *const *out, void *scratch) {
  (void)scratch;
  int64_t N = p[0], C = p[1], H = p[2], W = p[3], R = p[4], oh = p[5], ow = p[6], sr = p[7];
  int max_mode = (int)p[8], half = (int)p[9];
  float scale = (float)f[0], off = half ? 0.5f : 0.0f;
  const float *X = (const float *)in[0], *rois = (const float *)in[1];
  const int64_t *bi = (const int64_t *)in[2];
  float *Y = (float *)out[0];
  for (int64_t r = 0; r < R; r++) {
    const float *roi = rois + r * 4;
    int64_t n = bi[r];
    float sw = roi[0] * scale - off, sh = roi[1] * scale - off;
    float rw = roi[2] * scale - off - sw, rh = roi[3] * scale - off - sh;
    if (!half) { rw = rw > 1 ? rw : 1; rh = rh > 1 ? rh : 1; }
    float bh = rh / (float)oh, bw = rw / (float)ow;
    /* the sampling grid comes from the rois, which are data: NaN, infinite or absurd rois get a
     * bounded grid rather than an undefined cast and an endless loop */
    float gh_f = ceilf(rh / (float)oh), gw_f = ceilf(rw / (float)ow);
    int64_t gh = sr > 0 ? sr : gh_f > 0 && gh_f <= 1024 ? (int64_t)gh_f : gh_f > 1024 ? 1024 : 0;
    int64_t gw = sr > 0 ? sr : gw_f > 0 && gw_f <= 1024 ? (int64_t)gw_f : gw_f > 1024 ? 1024 : 0;
    float count = (float)(gh * gw > 0 ? gh * gw : 1);
    for (int64_t c = 0; c < C; c++) {
      const float *x = (n >= 0 && n < N && H > 0 && W > 0) ? X + (n * C + c) * H * W : NULL;
      float *y = Y + (r * C + c) * oh * ow;
      for (int64_t ph = 0; ph < oh; ph++)
        for (int64_t pw = 0; pw < ow; pw++) {
          float acc = 0;
          int first = 1;
          for (int64_t iy = 0; iy < gh && x; iy++) {
            float yy = sh + (float)ph * bh + ((float)iy + 0.5f) * bh / (float)gh;
            for (int64_t ix = 0; ix < gw; ix++) {
              float xx = sw + (float)pw * bw + ((float)ix + 0.5f) * bw / (float)gw, v;
              if (!(yy >= -1.0f && yy <= (float)H && xx >= -1.0f && xx <= (float)W)) v = 0; /* NaN too */
              else {
                float ya = yy <= 0 ? 0 : yy, xa = xx <= 0 ? 0 : xx;
                int64_t y0 = (int64_t)ya, x0 = (int64_t)xa, y1, x1;
                if (y0 >= H - 1) { y0 = y1 = H - 1; ya = (float)y0; } else y1 = y0 + 1;
                if (x0 >= W - 1) { x0 = x1 = W - 1; xa = (float)x0; } else x1 = x0 + 1;
                float ly = ya - (float)y0, lx = xa - (float)x0, hy = 1 - ly, hx = 1 - lx;
                float a = hy * hx * x[y0 * W + x0], b = hy * lx * x[y0 * W + x1];
                float cc = ly * hx * x[y1 * W + x0], d = ly * lx * x[y1 * W + x1];
                if (max_mode) {
                  v = a > b ? a : b;
                  v = v > cc ? v : cc;
                  v = v > d ? v : d;
                } else v = a + b + cc + d;
              }
              if (max_mode) { acc = first || v > acc ? v : acc; first = 0; }
              else acc += v;
            }
          }
          y[ph * ow + pw] = max_mode ? acc : acc / count;
        }
    }
  }
}

static void ft_maxroipool_f32(const int64_t *p, const double *f, const void *const *in,
                              void *const *out, void *scratch) {
  (void)scratch;
  int64_t N = p[0], C = p[1], H = p[2], W = p[3], R = p[4], oh = p[5], ow = p[6];
  float scale = (float)f[0];
  const float *X = (const float *)in[0], *rois = (const float *)in[1];
  float *Y = (float *)out[0];
  for (int64_t r = 0; r < R; r++) {
    const float *roi = rois + r * 5;
    int64_t n = (int64_t)roi[0];
    int64_t x1 = (int64_t)roundf(roi[1] * scale), y1 = (int64_t)roundf(roi[2] * scale);
    int64_t x2 = (int64_t)roundf(roi[3] * scale), y2 = (int64_t)roundf(roi[4] * scale);
    int64_t rh = y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1, rw = x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1;
    float bh = (float)rh / (float)oh, bw = (float)rw / (float)ow;
    for (int64_t c = 0; c < C; c++) {
      const float *x = (n >= 0 && n < N && H > 0 && W > 0) ? X + (n * C + c) * H * W : NULL;
      float *y = Y + (r * C + c) * oh * ow;
      for (int64_t ph = 0; ph < oh; ph++)
        for (int64_t pw = 0; pw < ow; pw++) {
          int64_t hs = (int64_t)floorf((float)ph * bh) + y1, he = (int64_t)ceilf((float)(ph + 1) * bh) + y1;
          int64_t ws = (int64_t)floorf((float)pw * bw) + x1, we = (int64_t)ceilf((float)(pw + 1) * bw) + x1;
          hs = hs < 0 ? 0 : hs > H ? H : hs; he = he < 0 ? 0 : he > H ? H : he;
          ws = ws < 0 ? 0 : ws > W ? W : ws; we = we < 0 ? 0 : we > W ? W : we;
          float m = 0;
          int any = 0;
          for (int64_t i = hs; i < he && x; i++)
            for (int64_t j = ws; j < we; j++)
              if (!any || x[i * W + j] > m) { m = x[i * W + j]; any = 1; }
          y[ph * ow + pw] = m;
        }
    }
  }
}

#endif

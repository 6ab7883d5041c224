/* Detection ops: RoiAlign and MaxRoiPool (kernels: templates/c/detection.h), and
 * NonMaxSuppression, whose output length depends on the boxes and scores: ftax computes it at
 * compile time from constant inputs (--bind graph inputs to make them so) and reports it
 * unsupported otherwise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detection.h"
#include "op.h"

/* ---- RoiAlign, MaxRoiPool ----------------------------------------------------------------- */

static int roi_check(ft_opctx *c, int roi_width) {
  int need = roi_width == 4 ? 3 : 2;
  for (int i = 0; i < need; i++)
    if (i >= c->n_in || !c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d is missing", i);
  const ft_tensor *x = c->in[0], *rois = c->in[1];
  if (x->dtype != FT_FLOAT || rois->dtype != FT_FLOAT)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is supported for float32 only", c->node->op_type);
  if (x->rank != 4) return ft_infer_fail(c, FT_EINVALID, "X must be 4-D (N, C, H, W)");
  if (rois->rank != 2 || rois->dims[1] != roi_width) return ft_infer_fail(c, FT_EINVALID, "rois must be [num_rois, %d]", roi_width);
  if (need == 3 && (c->in[2]->dtype != FT_INT64 || ft_numel(c->in[2]) != rois->dims[0]))
    return ft_infer_fail(c, FT_EINVALID, "batch_indices must be int64 with one entry per roi");
  return 0;
}

static void roi_out(ft_opctx *c, int64_t oh, int64_t ow) {
  ft_tensor *y = c->out[0];
  y->dtype = FT_FLOAT;
  y->rank = 4;
  y->dims[0] = c->in[1]->dims[0];
  y->dims[1] = c->in[0]->dims[1];
  y->dims[2] = oh;
  y->dims[3] = ow;
}

static int roialign_infer(ft_opctx *c) {
  int rc = roi_check(c, 4);
  if (rc) return rc;
  roi_out(c, ft_attr_int(c->node, "output_height", 1), ft_attr_int(c->node, "output_width", 1));
  return 0;
}

static void roi_params(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0];
  for (int i = 0; i < 4; i++) k->p[i] = x->dims[i];
  k->p[4] = c->in[1]->dims[0];
  k->p[5] = c->out[0]->dims[2];
  k->p[6] = c->out[0]->dims[3];
  k->f[0] = ft_attr_float(c->node, "spatial_scale", 1.0f);
  k->nf = 1;
}

static int roialign_plan(ft_opctx *c, ft_kcall *k) {
  const char *mode = ft_attr_str(c->node, "mode", "avg");
  /* opset 10 had no attribute and behaved as output_half_pixel */
  const char *ct = ft_attr_str(c->node, "coordinate_transformation_mode", c->opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (strcmp(mode, "avg") && strcmp(mode, "max")) return ft_infer_fail(c, FT_EINVALID, "mode '%s' is not avg or max", mode);
  if (strcmp(ct, "half_pixel") && strcmp(ct, "output_half_pixel"))
    return ft_infer_fail(c, FT_EINVALID, "coordinate_transformation_mode '%s' is not half_pixel or output_half_pixel", ct);
  FT_K(k, ft_roialign_f32);
  roi_params(c, k);
  k->p[7] = ft_attr_int(c->node, "sampling_ratio", 0);
  k->p[8] = !strcmp(mode, "max");
  k->p[9] = !strcmp(ct, "half_pixel");
  k->np = 10;
  return 0;
}

static int maxroipool_infer(ft_opctx *c) {
  int rc = roi_check(c, 5);
  if (rc) return rc;
  const int64_t *ps;
  if (ft_attr_ints(c->node, "pooled_shape", &ps) != 2) return ft_infer_fail(c, FT_EINVALID, "pooled_shape must have 2 values");
  roi_out(c, ps[0], ps[1]);
  return 0;
}

static int maxroipool_plan(ft_opctx *c, ft_kcall *k) {
  FT_K(k, ft_maxroipool_f32);
  roi_params(c, k);
  k->np = 7;
  return 0;
}

/* ---- NonMaxSuppression (compile time) ----------------------------------------------------- */

typedef struct box { float y0, x0, y1, x1; } box;

static box box_at(const float *b, int center) {
  box r;
  if (center) { /* x_center, y_center, width, height */
    r.x0 = b[0] - b[2] / 2; r.x1 = b[0] + b[2] / 2;
    r.y0 = b[1] - b[3] / 2; r.y1 = b[1] + b[3] / 2;
  } else { /* two opposite corners, in either order */
    r.y0 = fminf(b[0], b[2]); r.y1 = fmaxf(b[0], b[2]);
    r.x0 = fminf(b[1], b[3]); r.x1 = fmaxf(b[1], b[3]);
  }
  return r;
}

static int overlaps(box a, box b, float thr) {
  float ih = fminf(a.y1, b.y1) - fmaxf(a.y0, b.y0), iw = fminf(a.x1, b.x1) - fmaxf(a.x0, b.x0);
  if (ih <= 0 || iw <= 0) return 0;
  float inter = ih * iw, uni = (a.y1 - a.y0) * (a.x1 - a.x0) + (b.y1 - b.y0) * (b.x1 - b.x0) - inter;
  return uni > 0 && inter / uni > thr;
}

/* candidates sorted by score, high first; equal scores keep the lower box index first */
static void sort_by_score(int64_t *idx, int64_t *tmp, int64_t n, const float *s) {
  if (n < 2) return;
  int64_t h = n / 2, l = 0, r = h, d = 0;
  sort_by_score(idx, tmp, h, s);
  sort_by_score(idx + h, tmp, n - h, s);
  while (l < h && r < n) tmp[d++] = s[idx[r]] > s[idx[l]] ? idx[r++] : idx[l++];
  while (l < h) tmp[d++] = idx[l++];
  while (r < n) tmp[d++] = idx[r++];
  memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
}

static int nms_infer(ft_opctx *c) {
  int rc = 0;
  for (int i = 0; i < c->n_in && !rc; i++)
    if (c->in[i]) rc = ft_need_const(c, i, i < 2 ? "boxes and scores (the output's length depends on them)" : "a threshold or limit");
  if (rc) return rc;
  if (c->n_in < 2 || !c->in[0] || !c->in[1]) return ft_infer_fail(c, FT_EINVALID, "needs boxes and scores");
  const ft_tensor *bt = c->in[0], *st = c->in[1];
  if (bt->dtype != FT_FLOAT || st->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EUNSUPPORTED, "boxes and scores must be float32");
  if (bt->rank != 3 || bt->dims[2] != 4 || st->rank != 3 || st->dims[0] != bt->dims[0] || st->dims[2] != bt->dims[1])
    return ft_infer_fail(c, FT_EINVALID, "boxes must be [batches, n, 4] and scores [batches, classes, n]");
  int64_t nb = bt->dims[0], ncls = st->dims[1], n = bt->dims[1];
  int64_t max_out = c->n_in > 2 && c->in[2] && ft_numel(c->in[2]) ? ft_const_int(c->in[2], 0) : 0;
  float iou = c->n_in > 3 && c->in[3] && ft_numel(c->in[3]) ? (float)ft_const_real(c->in[3], 0) : 0;
  int has_score = c->n_in > 4 && c->in[4] && ft_numel(c->in[4]);
  float score_thr = has_score ? (float)ft_const_real(c->in[4], 0) : 0;
  int center = ft_attr_int(c->node, "center_point_box", 0) != 0;
  const float *boxes = (const float *)bt->data, *scores = (const float *)st->data;
  int64_t cap = nb * ncls * (max_out < n ? (max_out > 0 ? max_out : 0) : n);
  int64_t *sel = malloc(sizeof(int64_t) * (size_t)(3 * cap + 3 * n + 3)), *idx = sel + 3 * cap, *tmp = idx + n, *keep = tmp + n;
  if (!sel) return ft_infer_fail(c, FT_EIO, "out of memory");
  int64_t count = 0;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t k = 0; k < ncls; k++) {
      const float *s = scores + (b * ncls + k) * n;
      int64_t m = 0, kept = 0;
      for (int64_t i = 0; i < n; i++)
        if (!has_score || s[i] > score_thr) idx[m++] = i;
      sort_by_score(idx, tmp, m, s);
      for (int64_t i = 0; i < m && kept < max_out; i++) {
        box bi = box_at(boxes + (b * n + idx[i]) * 4, center);
        int suppressed = 0;
        for (int64_t j = 0; j < kept && !suppressed; j++)
          suppressed = overlaps(bi, box_at(boxes + (b * n + keep[j]) * 4, center), iou);
        if (suppressed) continue;
        keep[kept++] = idx[i];
        sel[3 * count] = b; sel[3 * count + 1] = k; sel[3 * count + 2] = idx[i];
        count++;
      }
    }
  ft_tensor *y = c->out[0];
  y->dtype = FT_INT64;
  y->rank = 2;
  y->dims[0] = count;
  y->dims[1] = 3;
  y->data = malloc(sizeof(int64_t) * (size_t)(3 * count + 1));
  if (!y->data) { free(sel); return ft_infer_fail(c, FT_EIO, "out of memory"); }
  memcpy(y->data, sel, sizeof(int64_t) * (size_t)(3 * count));
  free(sel);
  return 0;
}

const ft_opdesc ft_ops_detection[] = {
    {"RoiAlign", "", roialign_infer, roialign_plan, "detection", 0},
    {"MaxRoiPool", "", maxroipool_infer, maxroipool_plan, "detection", 0},
    {"NonMaxSuppression", "", nms_infer, NULL, "", FT_OP_NOEVAL},
    {0}};

/* Signal ops (opset 17): HannWindow, HammingWindow, BlackmanWindow, DFT, STFT (kernels:
 * templates/c/spectral.h) and MelWeightMatrix, computed at compile time. Sizes, lengths and steps
 * must be constant: they set the output shapes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "spectral.h"

static int const_scalar(ft_opctx *c, int i, const char *what, int64_t *v) {
  if (i >= c->n_in || !c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d (%s) is missing", i, what);
  int rc = ft_need_const(c, i, what);
  if (rc) return rc;
  if (ft_numel(c->in[i]) != 1) return ft_infer_fail(c, FT_EINVALID, "%s must hold one value", what);
  *v = ft_const_int(c->in[i], 0);
  return 0;
}

/* ---- windows ------------------------------------------------------------------------------ */

static int window_kind(const char *op) { return !strcmp(op, "HannWindow") ? 0 : !strcmp(op, "HammingWindow") ? 1 : 2; }

static int window_infer(ft_opctx *c) {
  int64_t n = 0;
  int rc = const_scalar(c, 0, "size", &n);
  if (rc) return rc;
  if (n < 0) return ft_infer_fail(c, FT_EINVALID, "size %lld is negative", (long long)n);
  int dt = (int)ft_attr_int(c->node, "output_datatype", FT_FLOAT);
  if (dt != FT_FLOAT && dt != FT_DOUBLE) return ft_infer_fail(c, FT_EUNSUPPORTED, "output_datatype %s is not supported (float32, float64 are)", ft_dtype_name(dt));
  c->out[0]->dtype = dt;
  c->out[0]->rank = 1;
  c->out[0]->dims[0] = n;
  return 0;
}

static int window_plan(ft_opctx *c, ft_kcall *k) {
  if (c->out[0]->dtype == FT_FLOAT) FT_K(k, ft_window_f32); else FT_K(k, ft_window_f64);
  k->p[0] = c->out[0]->dims[0];
  k->p[1] = window_kind(c->node->op_type);
  k->p[2] = ft_attr_int(c->node, "periodic", 1) != 0;
  k->np = 3;
  return 0;
}

/* ---- DFT ---------------------------------------------------------------------------------- */

typedef struct dft { int axis, cplx, inverse, onesided; int64_t n_fft, n_out; } dft;

static int dft_geometry(ft_opctx *c, dft *d) {
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "input is missing");
  const ft_tensor *x = c->in[0];
  if (x->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EUNSUPPORTED, "DFT is supported for float32, not %s", ft_dtype_name(x->dtype));
  if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
    return ft_infer_fail(c, FT_EINVALID, "the last dim must be 1 (real) or 2 (complex)");
  int64_t axis = ft_attr_int(c->node, "axis", 1);
  int rc;
  if (c->opset >= 20) {
    axis = -2;
    if (c->n_in > 2 && c->in[2] && (rc = const_scalar(c, 2, "axis", &axis))) return rc;
  }
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank - 1) return ft_infer_fail(c, FT_EINVALID, "axis %lld is out of range", (long long)axis);
  d->axis = (int)axis;
  d->cplx = x->dims[x->rank - 1] == 2;
  d->inverse = ft_attr_int(c->node, "inverse", 0) != 0;
  d->onesided = ft_attr_int(c->node, "onesided", 0) != 0;
  d->n_fft = x->dims[axis];
  if (c->n_in > 1 && c->in[1] && (rc = const_scalar(c, 1, "dft_length", &d->n_fft))) return rc;
  if (d->n_fft < 1) return ft_infer_fail(c, FT_EINVALID, "dft_length must be positive");
  if (d->onesided && (d->inverse || d->cplx))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "onesided=1 is supported for the forward transform of a real signal");
  d->n_out = d->onesided ? d->n_fft / 2 + 1 : d->n_fft;
  return 0;
}

static int dft_infer(ft_opctx *c) {
  dft d;
  int rc = dft_geometry(c, &d);
  if (rc) return rc;
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dims[d.axis] = d.n_out;
  c->out[0]->dims[c->in[0]->rank - 1] = 2;
  c->out[0]->dtype = FT_FLOAT;
  return 0;
}

static int dft_plan(ft_opctx *c, ft_kcall *k) {
  dft d;
  int rc = dft_geometry(c, &d);
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < d.axis; i++) outer *= x->dims[i];
  for (int i = d.axis + 1; i < x->rank - 1; i++) inner *= x->dims[i];
  FT_K(k, ft_dft_f32);
  k->p[0] = outer;
  k->p[1] = x->dims[d.axis];
  k->p[2] = d.n_fft;
  k->p[3] = d.n_out;
  k->p[4] = inner;
  k->p[5] = d.cplx;
  k->p[6] = d.inverse;
  k->np = 7;
  return 0;
}

/* ---- STFT --------------------------------------------------------------------------------- */

typedef struct stft { int cplx, window; int64_t step, flen, frames, bins; } stft;

static int stft_geometry(ft_opctx *c, stft *s) {
  if (c->n_in < 2 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "needs signal and frame_step");
  const ft_tensor *x = c->in[0], *w = c->n_in > 2 ? c->in[2] : NULL;
  if (x->dtype != FT_FLOAT || (w && w->dtype != FT_FLOAT)) return ft_infer_fail(c, FT_EUNSUPPORTED, "STFT is supported for float32 only");
  if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2)) return ft_infer_fail(c, FT_EINVALID, "signal must be [batch, length, 1 or 2]");
  int rc = const_scalar(c, 1, "frame_step", &s->step);
  if (rc) return rc;
  s->cplx = x->dims[2] == 2;
  s->window = w != NULL;
  s->flen = w ? ft_numel(w) : -1;
  if (c->n_in > 3 && c->in[3]) {
    int64_t fl;
    if ((rc = const_scalar(c, 3, "frame_length", &fl))) return rc;
    if (w && fl != s->flen) return ft_infer_fail(c, FT_EINVALID, "frame_length %lld differs from the window's %lld", (long long)fl, (long long)s->flen);
    s->flen = fl;
  }
  if (s->flen < 1 || s->step < 1) return ft_infer_fail(c, FT_EINVALID, "needs a positive frame length (window or frame_length) and step");
  if (s->flen > x->dims[1]) return ft_infer_fail(c, FT_EINVALID, "frame length %lld is longer than the signal", (long long)s->flen);
  int onesided = ft_attr_int(c->node, "onesided", 1) != 0;
  if (onesided && s->cplx) return ft_infer_fail(c, FT_EINVALID, "onesided=1 needs a real signal");
  s->frames = (x->dims[1] - s->flen) / s->step + 1;
  s->bins = onesided ? s->flen / 2 + 1 : s->flen;
  return 0;
}

static int stft_infer(ft_opctx *c) {
  stft s;
  int rc = stft_geometry(c, &s);
  if (rc) return rc;
  ft_tensor *y = c->out[0];
  y->dtype = FT_FLOAT;
  y->rank = 4;
  y->dims[0] = c->in[0]->dims[0];
  y->dims[1] = s.frames;
  y->dims[2] = s.bins;
  y->dims[3] = 2;
  return 0;
}

static int stft_plan(ft_opctx *c, ft_kcall *k) {
  stft s;
  int rc = stft_geometry(c, &s);
  if (rc) return rc;
  FT_K(k, ft_stft_f32);
  k->p[0] = c->in[0]->dims[0];
  k->p[1] = c->in[0]->dims[1];
  k->p[2] = s.cplx;
  k->p[3] = s.frames;
  k->p[4] = s.step;
  k->p[5] = s.flen;
  k->p[6] = s.bins;
  k->p[7] = s.window;
  k->np = 8;
  return 0;
}

/* ---- MelWeightMatrix (compile time) ------------------------------------------------------- */

static int mel_infer(ft_opctx *c) {
  int64_t bins, dft_len, rate;
  int rc;
  if ((rc = const_scalar(c, 0, "num_mel_bins", &bins)) || (rc = const_scalar(c, 1, "dft_length", &dft_len)) ||
      (rc = const_scalar(c, 2, "sample_rate", &rate)))
    return rc;
  for (int i = 3; i < 5; i++) {
    if (i >= c->n_in || !c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d is missing", i);
    if ((rc = ft_need_const(c, i, i == 3 ? "lower_edge_hertz" : "upper_edge_hertz"))) return rc;
  }
  double lo = ft_const_real(c->in[3], 0), hi = ft_const_real(c->in[4], 0);
  int dt = (int)ft_attr_int(c->node, "output_datatype", FT_FLOAT);
  if (dt != FT_FLOAT && dt != FT_DOUBLE) return ft_infer_fail(c, FT_EUNSUPPORTED, "output_datatype %s is not supported", ft_dtype_name(dt));
  if (bins < 1 || dft_len < 1 || rate < 1) return ft_infer_fail(c, FT_EINVALID, "num_mel_bins, dft_length and sample_rate must be positive");
  int64_t nspec = dft_len / 2 + 1;
  ft_tensor *y = c->out[0];
  y->dtype = dt;
  y->rank = 2;
  y->dims[0] = nspec;
  y->dims[1] = bins;
  double *m = calloc((size_t)(nspec * bins), sizeof(double));
  int64_t *edge = malloc(sizeof(int64_t) * (size_t)(bins + 2));
  y->data = malloc(ft_nbytes(y) + 1);
  if (!m || !edge || !y->data) { free(m); free(edge); return ft_infer_fail(c, FT_EIO, "out of memory"); }
  /* bin edges evenly spaced on the mel scale, mapped back to spectrogram bins */
  double mlo = 2595 * log10(1 + lo / 700), mhi = 2595 * log10(1 + hi / 700), step = (mhi - mlo) / (double)(bins + 2);
  for (int64_t i = 0; i < bins + 2; i++) {
    double hz = 700 * (pow(10, ((double)i * step + mlo) / 2595) - 1);
    edge[i] = (int64_t)floor((double)(dft_len + 1) * hz / (double)rate);
  }
  for (int64_t i = 0; i < bins; i++) {
    int64_t l = edge[i], ce = edge[i + 1], h = edge[i + 2];
    if (ce == l) { if (ce >= 0 && ce < nspec) m[ce * bins + i] = 1; }
    else
      for (int64_t j = l; j <= ce; j++)
        if (j >= 0 && j < nspec) m[j * bins + i] = (double)(j - l) / (double)(ce - l);
    if (h > ce)
      for (int64_t j = ce; j < h; j++)
        if (j >= 0 && j < nspec) m[j * bins + i] = (double)(h - j) / (double)(h - ce);
  }
  for (int64_t i = 0; i < nspec * bins; i++) {
    if (dt == FT_FLOAT) ((float *)y->data)[i] = (float)m[i];
    else ((double *)y->data)[i] = m[i];
  }
  free(m);
  free(edge);
  return 0;
}

const ft_opdesc ft_ops_spectral[] = {
    {"HannWindow", "", window_infer, window_plan, "spectral", 0},
    {"HammingWindow", "", window_infer, window_plan, "spectral", 0},
    {"BlackmanWindow", "", window_infer, window_plan, "spectral", 0},
    {"DFT", "", dft_infer, dft_plan, "spectral", 0},
    {"STFT", "", stft_infer, stft_plan, "spectral", 0},
    {"MelWeightMatrix", "", mel_infer, NULL, "", FT_OP_NOEVAL},
    {0}};

/* Sliding-window geometry (see window.h). */
#include <string.h>

#include "window.h"

static int ints_attr(ft_opctx *c, const char *name, int n, int64_t dflt, int64_t *out) {
  const int64_t *v;
  int m = ft_attr_ints(c->node, name, &v);
  for (int i = 0; i < n; i++) out[i] = dflt;
  if (m < 0) return 0;
  if (m != n)
    return ft_infer_fail(c, FT_EINVALID, "attribute %s has %d values; the input has %d spatial dims", name, m, n);
  for (int i = 0; i < n; i++) out[i] = v[i];
  return 0;
}

int ft_window_infer(ft_opctx *c, const ft_tensor *x, const int64_t *k, int nk, int ceil_mode,
                    ft_window *w) {
  memset(w, 0, sizeof *w);
  int n = x->rank - 2;
  if (n < 1 || n > FT_WIN_MAXD)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "input has rank %d; 3 to 5 (N, C and 1 to 3 spatial dims) are supported", x->rank);
  if (nk != n) return ft_infer_fail(c, FT_EINVALID, "kernel has %d dims but the input has %d spatial dims", nk, n);
  w->n = n;
  int64_t pads[2 * FT_WIN_MAXD];
  int rc = ints_attr(c, "strides", n, 1, w->s);
  if (!rc) rc = ints_attr(c, "dilations", n, 1, w->d);
  if (!rc) rc = ints_attr(c, "pads", 2 * n, 0, pads);
  if (rc) return rc;
  const char *ap = ft_attr_str(c->node, "auto_pad", "NOTSET");
  for (int i = 0; i < n; i++) {
    int64_t in = x->dims[2 + i], s = w->s[i], d = w->d[i], kk = k[i];
    if (kk < 1 || s < 1 || d < 1)
      return ft_infer_fail(c, FT_EINVALID, "kernel, strides and dilations must be positive (dim %d: %lld, %lld, %lld)",
                           i, (long long)kk, (long long)s, (long long)d);
    /* every step checked: strides, dilations, pads and kernel_shape come from the model, and a
     * dim of an empty input may be huge */
    int64_t span, out, t1, t2;
#define OVF(x) if (x) goto overflow
    OVF(__builtin_mul_overflow(kk - 1, d, &span) || __builtin_add_overflow(span, 1, &span));
    w->in[i] = in;
    w->k[i] = kk;
    if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
      out = in / s + (in % s != 0); /* ceil(in / s) */
      int64_t total;
      OVF(__builtin_mul_overflow(out > 0 ? out - 1 : 0, s, &t1) || __builtin_add_overflow(t1, span, &t2) ||
          __builtin_sub_overflow(t2, in, &total));
      if (total < 0) total = 0;
      int64_t small = total / 2, big = total - small;
      w->pb[i] = !strcmp(ap, "SAME_UPPER") ? small : big;
      w->pe[i] = total - w->pb[i];
    } else if (!strcmp(ap, "VALID")) {
      out = in >= span ? (in - span) / s + 1 : 0;
      if (ceil_mode && in >= span) out = (in - span) / s + ((in - span) % s != 0) + 1;
    } else if (!strcmp(ap, "NOTSET") || !*ap) {
      w->pb[i] = pads[i];
      w->pe[i] = pads[n + i];
      if (w->pb[i] < 0 || w->pe[i] < 0)
        return ft_infer_fail(c, FT_EUNSUPPORTED, "negative pads are not supported");
      int64_t room;
      OVF(__builtin_add_overflow(in, w->pb[i], &t1) || __builtin_add_overflow(t1, w->pe[i], &t2) ||
          __builtin_sub_overflow(t2, span, &room));
      if (room < 0) out = 0;
      else if (ceil_mode) {
        out = room / s + (room % s != 0) + 1;
        if (out - 1 >= t1 / s + (t1 % s != 0)) out--; /* last window would start in the padding: (out - 1) * s >= in + pb */
      } else out = room / s + 1;
    } else {
      return ft_infer_fail(c, FT_EINVALID, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", ap);
    }
#undef OVF
    if (out < 1) return ft_infer_fail(c, FT_EINVALID, "spatial dim %d of size %lld is too small for the window (%lld with dilation)",
                                      i, (long long)in, (long long)span);
    w->out[i] = out;
    continue;
  overflow:
    return ft_infer_fail(c, FT_EUNSUPPORTED,
                         "the window of spatial dim %d is too large (input %lld, kernel %lld, stride %lld, dilation %lld, pads %lld and %lld)",
                         i, (long long)in, (long long)kk, (long long)s, (long long)d, (long long)pads[i], (long long)pads[n + i]);
  }
  return 0;
}

int ft_window_params(const ft_window *w, int64_t *p) {
  int off = FT_WIN_MAXD - w->n;
  for (int i = 0; i < FT_WIN_MAXD; i++) {
    int j = i - off;
    p[i] = j < 0 ? 1 : w->in[j];
    p[3 + i] = j < 0 ? 1 : w->out[j];
    p[6 + i] = j < 0 ? 1 : w->k[j];
    p[9 + i] = j < 0 ? 1 : w->s[j];
    p[12 + i] = j < 0 ? 1 : w->d[j];
    p[15 + i] = j < 0 ? 0 : w->pb[j];
  }
  return 18;
}

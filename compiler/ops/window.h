/* Sliding-window geometry shared by Conv, ConvTranspose and the pooling ops: kernel, strides,
 * dilations, pads (explicit or auto_pad) and the output size, per spatial dim. */
#ifndef FTAX_OPS_WINDOW_H
#define FTAX_OPS_WINDOW_H

#include "op.h"

#define FT_WIN_MAXD 3 /* spatial dims the kernels handle: 1-D, 2-D and 3-D */

typedef struct ft_window {
  int n; /* spatial dims */
  int64_t in[FT_WIN_MAXD], k[FT_WIN_MAXD], s[FT_WIN_MAXD], d[FT_WIN_MAXD];
  int64_t pb[FT_WIN_MAXD], pe[FT_WIN_MAXD], out[FT_WIN_MAXD];
} ft_window;

/* Fill w for input x (N x C x spatial...) and kernel sizes k[0..nk) from the node's strides,
 * dilations, pads and auto_pad. ceil_mode rounds the output size up (pooling); windows that
 * would start in the right padding are dropped, as the ONNX spec says. */
int ft_window_infer(ft_opctx *c, const ft_tensor *x, const int64_t *k, int nk, int ceil_mode,
                    ft_window *w);

/* Write w as 3-D (leading dims of size 1) into p: in[3], out[3], k[3], s[3], d[3], pb[3];
 * returns the count written (18). */
int ft_window_params(const ft_window *w, int64_t *p);

#endif

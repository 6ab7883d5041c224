/* Conv on the bf16 GEMM core (ftaxc --precision bf16): conv.h's kernel with the weights packed
 * as bf16 A slivers at compile time and each work item run by ft_bf16_column, which rounds the
 * input (B: the group's input in pointwise mode, the shifted rows or the im2col chunk) to bf16
 * as it packs it. Depthwise convolutions stay fp32 (direct loops; no GEMM), and so does a Conv
 * whose weights were not packed (not constant): both go to ft_conv_f32's code. The residual of
 * a fused Conv must not share the output's storage (see gemm_bf16.h). */
#ifndef FT_CONV_BF16_H
#define FT_CONV_BF16_H

#include "conv.h"
#include "gemm_bf16.h"

/* Prepack hook: every group's weight matrix into bf16 A slivers. Group g starts where the fp32
 * packing puts it (g * ft_gemm_packed_a_floats words: its bf16 slivers take at most half of
 * that), so conv.h finds it unchanged; only the last group is cut to its size. */
static size_t ft_conv_bf16_pack_w(const int64_t *p, const void *src, void *dst) {
  int64_t G = p[FT_CV_G], Mg = p[FT_CV_CO] / G, Kg = ft_conv_kg(p), per = ft_gemm_packed_a_floats(Mg, Kg);
  size_t bytes = 4 * (size_t)((G - 1) * per + ft_bf16_packed_a_words(Mg, Kg));
  if (!dst) return bytes;
  memset(dst, 0, bytes);
  for (int64_t g = 0; g < G; g++)
    ft_bf16_pack_a(Mg, Kg, (const float *)src + g * Mg * Kg, Kg, 1, (uint32_t *)dst + g * per);
  return bytes;
}

static void ft_conv_bf16(const int64_t *p, const double *f, const void *const *in, void *const *out,
                         void *scratch) {
  ft_conv_run(p, f, in, out, scratch, p[FT_CV_PACKED] ? ft_bf16_column : NULL);
}

#endif

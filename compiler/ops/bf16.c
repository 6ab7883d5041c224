/* --precision bf16 on the C target: the calls that run on the fp32 GEMM core move to the bf16
 * core (templates/c/gemm_bf16.h, conv_bf16.h) before lowering packs their weights, so the
 * weights are packed as bf16 by the new kernel's own hook. MatMul, Gemm and their fused forms
 * (one kernel, ft_matmul_f32) move whole; Conv and FusedConv (ft_conv_f32) move when their
 * weights are constant and the mode is a GEMM one, a shifted one with a small output plane to
 * im2col^T (conv.c's ft_conv_bf16_small_plane). Everything else stays fp32: depthwise Conv,
 * ConvTranspose, the fused attention kernel, normalizations, softmax, activations. */
#include <string.h>

#include "conv_bf16.h"
#include "op.h"
#include "passes.h"

static const ft_kentry matmul_bf16_k = {"ft_matmul_bf16", ft_matmul_bf16, FT_FLOAT, 0, NULL, NULL};
static const ft_kentry conv_bf16_k = {"ft_conv_bf16", ft_conv_bf16, FT_FLOAT, 0, NULL, NULL};

/* Entries are matched by name: each file that includes a kernel header has its own copy of the
 * function, so its address names no kernel. */
static int is_kernel(const ft_kcall *k, const char *name) { return k->entry && !strcmp(k->entry->name, name); }

int ft_bf16_retarget(ft_kcall *k) {
  if (is_kernel(k, "ft_matmul_f32")) {
    k->entry = &matmul_bf16_k;
    k->templates = "gemm_bf16";
    k->scratch = ft_bf16_mm_scratch(k->p[FT_MM_M], k->p[FT_MM_K], k->p[FT_MM_A_NMAT]);
    if (k->prepack.input >= 0) k->prepack.pack = ft_bf16_mm_pack_b;
    return 1;
  }
  if (is_kernel(k, "ft_conv_f32") && k->prepack.input == 1 && k->p[FT_CV_MODE] != FT_CV_DEPTHWISE) {
    k->entry = &conv_bf16_k;
    k->templates = "conv_bf16";
    /* the bf16 tile goes out through the fp32 core's tile store, which writes a whole row of
       the tile before it adds the residual: the output needs storage of its own */
    if (k->p[FT_CV_RES]) k->no_inplace = 1;
    k->prepack.pack = ft_conv_bf16_pack_w;
    ft_conv_bf16_small_plane(k);
    k->scratch = ft_conv_bf16_scratch(k->p);
    return 1;
  }
  return 0;
}

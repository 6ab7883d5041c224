/* The op table: the only dispatch on op type. Each family file under compiler/ops/ exports a
 * zero-terminated array of descriptors; adding an op means adding a row to one of them (or a
 * new file and a line here).
 *
 * And the kernel registry: a family whose kernels have CUDA twins lists its kernel tables in
 * ft_kernels_<family>, so that ftax-eager's table of twins is built from the entries themselves
 * (tools/cuda_twins.c). */
#include <string.h>

#include "op.h"

extern const ft_opdesc ft_ops_binary[];
extern const ft_opdesc ft_ops_shape[], ft_ops_movement[];
extern const ft_opdesc ft_ops_unary[], ft_ops_variadic[], ft_ops_reduce[], ft_ops_softmax[], ft_ops_norm[],
    ft_ops_loss[];
extern const ft_opdesc ft_ops_matmul[], ft_ops_conv[], ft_ops_pool[];
extern const ft_opdesc ft_ops_fused_attention[];
extern const ft_opdesc ft_ops_fused_norm[], ft_ops_fused_gelu[], ft_ops_fused_gemm[];
extern const ft_opdesc ft_ops_fused_conv[], ft_ops_fused_elementwise[];
extern const ft_opdesc ft_ops_resize[], ft_ops_scatter[], ft_ops_linalg[], ft_ops_select[], ft_ops_quant[], ft_ops_rnn[],
    ft_ops_gridsample[], ft_ops_detection[], ft_ops_spectral[], ft_ops_optim[], ft_ops_tfidf[], ft_ops_control[];

static const ft_opdesc *const families[] = {
    ft_ops_binary,
    ft_ops_shape, ft_ops_movement,
    ft_ops_unary, ft_ops_variadic, ft_ops_reduce, ft_ops_softmax, ft_ops_norm, ft_ops_loss,
    ft_ops_matmul, ft_ops_conv, ft_ops_pool,
    ft_ops_fused_attention,
    ft_ops_fused_norm, ft_ops_fused_gelu, ft_ops_fused_gemm,
    ft_ops_fused_conv, ft_ops_fused_elementwise,
    ft_ops_resize, ft_ops_scatter, ft_ops_linalg, ft_ops_select, ft_ops_quant, ft_ops_rnn, ft_ops_gridsample,
    ft_ops_detection, ft_ops_spectral, ft_ops_optim, ft_ops_tfidf, ft_ops_control,
};

const ft_opdesc *ft_op_find(const char *domain, const char *op_type) {
  if (!domain) domain = "";
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const ft_opdesc *d = families[f]; d->op_type; d++)
      if (!strcmp(d->op_type, op_type) && !strcmp(d->domain, domain)) return d;
  return NULL;
}

extern const ft_kentry *const ft_kernels_binary[], *const ft_kernels_unary[], *const ft_kernels_variadic[],
    *const ft_kernels_reduce[], *const ft_kernels_softmax[], *const ft_kernels_norm[], *const ft_kernels_matmul[],
    *const ft_kernels_conv[], *const ft_kernels_pool[], *const ft_kernels_fused_attention[],
    *const ft_kernels_fused_norm[], *const ft_kernels_fused_elementwise[], *const ft_kernels_movement[],
    *const ft_kernels_shape[];

static const ft_kentry *const *const kernel_families[] = {
    ft_kernels_binary, ft_kernels_unary, ft_kernels_variadic, ft_kernels_reduce, ft_kernels_softmax,
    ft_kernels_norm, ft_kernels_matmul, ft_kernels_conv, ft_kernels_pool, ft_kernels_fused_attention,
    ft_kernels_fused_norm, ft_kernels_fused_elementwise, ft_kernels_movement, ft_kernels_shape,
};

void ft_kentry_each(void (*fn)(const ft_kentry *e, void *ctx), void *ctx) {
  for (size_t f = 0; f < sizeof kernel_families / sizeof kernel_families[0]; f++)
    for (const ft_kentry *const *t = kernel_families[f]; *t; t++)
      for (const ft_kentry *e = *t; e->name; e++) fn(e, ctx);
}

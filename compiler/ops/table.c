/* The op table: the only dispatch on op type. Each family file under compiler/ops/ exports a
 * zero-terminated array of descriptors; adding an op means adding a row to one of them (or a
 * new file and a line here). */
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
    ft_ops_gridsample[], ft_ops_detection[], ft_ops_spectral[], ft_ops_optim[], ft_ops_tfidf[];

static const ft_opdesc *const families[] = {
    ft_ops_binary,
    ft_ops_shape, ft_ops_movement,
    ft_ops_unary, ft_ops_variadic, ft_ops_reduce, ft_ops_softmax, ft_ops_norm, ft_ops_loss,
    ft_ops_matmul, ft_ops_conv, ft_ops_pool,
    ft_ops_fused_attention,
    ft_ops_fused_norm, ft_ops_fused_gelu, ft_ops_fused_gemm,
    ft_ops_fused_conv, ft_ops_fused_elementwise,
    ft_ops_resize, ft_ops_scatter, ft_ops_linalg, ft_ops_select, ft_ops_quant, ft_ops_rnn, ft_ops_gridsample,
    ft_ops_detection, ft_ops_spectral, ft_ops_optim, ft_ops_tfidf,
};

const ft_opdesc *ft_op_find(const char *domain, const char *op_type) {
  if (!domain) domain = "";
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const ft_opdesc *d = families[f]; d->op_type; d++)
      if (!strcmp(d->op_type, op_type) && !strcmp(d->domain, domain)) return d;
  return NULL;
}

/* CPU stand-in for cuda_bf16.h (see cuda_runtime.h here). */
#ifndef FTAX_EMU_CUDA_BF16_H
#define FTAX_EMU_CUDA_BF16_H

#include <stdint.h>
#include <string.h>

struct __nv_bfloat16 { uint16_t x; };

inline float __bfloat162float(__nv_bfloat16 h) {
  uint32_t bits = (uint32_t)h.x << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  __nv_bfloat16 h;
  if ((x & 0x7fffffff) > 0x7f800000) { h.x = (uint16_t)((x >> 16) | 0x40); return h; }
  x += 0x7fff + ((x >> 16) & 1);
  h.x = (uint16_t)(x >> 16);
  return h;
}

#endif

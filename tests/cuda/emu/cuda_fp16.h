/* CPU stand-in for cuda_fp16.h (see cuda_runtime.h here): __half as IEEE binary16 bits, with
 * round-to-nearest-even conversions. */
#ifndef FTAX_EMU_CUDA_FP16_H
#define FTAX_EMU_CUDA_FP16_H

#include <stdint.h>
#include <string.h>

struct __half { uint16_t x; };

inline float __half2float(__half h) {
  uint32_t sign = (uint32_t)(h.x & 0x8000) << 16, exp = (h.x >> 10) & 0x1f, man = h.x & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) bits = sign;
    else {
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) { man <<= 1; exp--; }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 31) bits = sign | 0x7f800000u | (man << 13);
  else bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

inline __half __float2half_rn(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, man = x & 0x7fffff;
  int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  __half h;
  if (((x >> 23) & 0xff) == 0xff) { h.x = (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0)); return h; }
  if (exp >= 31) { h.x = (uint16_t)(sign | 0x7c00); return h; }
  if (exp <= 0) {
    if (exp < -10) { h.x = (uint16_t)sign; return h; }
    man |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exp), v = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (v & 1))) v++;
    h.x = (uint16_t)(sign | v);
    return h;
  }
  uint32_t v = sign | ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (v & 1))) v++;
  h.x = (uint16_t)v;
  return h;
}
inline __half __float2half(float f) { return __float2half_rn(f); }

#endif

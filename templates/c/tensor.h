/* Tensors and the kernel calling convention, shared by ftaxc, ftax-eager and generated programs.
 *
 * Every kernel has the signature of ft_kernel_fn: p holds the integer parameters (shapes,
 * strides, axes) and f the real ones (alpha, epsilon), both computed once by the op's plan;
 * in and out are the input and output buffers in node order; scratch is working memory of the
 * size the plan asked for. Generated programs pass p and f as literal arrays. */
#ifndef FT_TENSOR_H
#define FT_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FT_MAX_RANK 8

/* ONNX TensorProto.DataType values. */
enum {
  FT_UNDEFINED = 0, FT_FLOAT = 1, FT_UINT8 = 2, FT_INT8 = 3, FT_UINT16 = 4, FT_INT16 = 5,
  FT_INT32 = 6, FT_INT64 = 7, FT_STRING = 8, FT_BOOL = 9, FT_FLOAT16 = 10, FT_DOUBLE = 11,
  FT_UINT32 = 12, FT_UINT64 = 13, FT_BFLOAT16 = 16,
  FT_DTYPE_LAST = 23 /* the newest ONNX type code (float8, int4 ... are valid, not supported) */
};

typedef struct ft_tensor {
  int dtype;
  int rank;
  int64_t dims[FT_MAX_RANK];
  void *data; /* NULL when the contents are not known */
} ft_tensor;

typedef void (*ft_kernel_fn)(const int64_t *p, const double *f, const void *const *in,
                             void *const *out, void *scratch);

static inline size_t ft_dtype_size(int dt) {
  switch (dt) {
  case FT_FLOAT: case FT_INT32: case FT_UINT32: return 4;
  case FT_UINT8: case FT_INT8: case FT_BOOL: return 1;
  case FT_UINT16: case FT_INT16: case FT_FLOAT16: case FT_BFLOAT16: return 2;
  case FT_INT64: case FT_DOUBLE: case FT_UINT64: return 8;
  default: return 0;
  }
}

static inline const char *ft_dtype_name(int dt) {
  switch (dt) {
  case FT_FLOAT: return "float32"; case FT_UINT8: return "uint8"; case FT_INT8: return "int8";
  case FT_UINT16: return "uint16"; case FT_INT16: return "int16"; case FT_INT32: return "int32";
  case FT_INT64: return "int64"; case FT_STRING: return "string"; case FT_BOOL: return "bool";
  case FT_FLOAT16: return "float16"; case FT_DOUBLE: return "float64";
  case FT_UINT32: return "uint32"; case FT_UINT64: return "uint64";
  case FT_BFLOAT16: return "bfloat16";
  default: return "undefined";
  }
}

static inline int64_t ft_numel(const ft_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

static inline size_t ft_nbytes(const ft_tensor *t) {
  return (size_t)ft_numel(t) * ft_dtype_size(t->dtype);
}

/* The byte size of a tensor of this dtype and shape, computed without overflow: 0 and *bytes set,
 * -1 if a dim is negative, -2 if the size does not fit in limit bytes (or in 63 bits). Every size
 * that comes from a model or a file goes through here before anything is allocated. */
static inline int ft_size_checked(int dtype, int rank, const int64_t *dims, size_t limit, size_t *bytes) {
  uint64_t n = ft_dtype_size(dtype), zero = 0;
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0) return -1;
  /* an empty tensor's other dims still bound its strides: they must fit as if it were not empty */
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 0) { zero = 1; continue; }
    if (__builtin_mul_overflow(n, (uint64_t)dims[i], &n) || n > (uint64_t)INT64_MAX) return -2;
  }
  if (n > limit) return -2;
  if (zero) n = 0;
  *bytes = (size_t)n;
  return 0;
}

/* IEEE half and bfloat16 conversions (round to nearest even). */
static inline float ft_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) bits = sign;
    else { /* subnormal: normalize */
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

static inline uint16_t ft_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return (uint16_t)sign;
    man |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (uint16_t)h;
}

static inline float ft_bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t ft_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

#endif

/* Native-vector helpers that the kernels off AVX-512 share (AVX-512's own code uses masks and
 * 16x16 transposes of zmm registers, in conv.h and gemm.h):
 *   FT_VN_SELECT                m ? a : b per lane, m from a comparison of ft_vn (GCC leaves
 *                               `x < 0 ? 0 : x` over a row scalar, each lane stored alone and
 *                               then reloaded as a vector: a store-forwarding stall a row);
 *   ft_vn_relu / ft_vn_clip     Relu and Clip as those selects (NaN stays NaN, as in the ops);
 *   ft_vn_loadn / ft_vn_storen  lanes [0, k) of one ft_vn (isa.h) from or to memory, touching
 *                               nothing past them (AVX2: vmaskmovps; elsewhere lane by lane);
 *   FT_VN_KEEP                  a vector kept in a register (GCC otherwise loads it again as
 *                               the memory operand of each FMA that uses it);
 *   ft_vn_transpose             FT_VLEN vectors transposed in registers;
 *   ft_uk_transpose_t           a register tile's buffer (16 rows x 32 columns, 32 apart, as
 *                               the GEMM tiles of ukernels/ write it) transposed: column j's
 *                               16 values become one row of 16 floats, rows >= mr zeros. */
#ifndef FT_UK_VEC_H
#define FT_UK_VEC_H

#include <stdint.h>

#include "isa.h"

#if FT_ISA == FT_ISA_AVX2
#include <immintrin.h>
#elif FT_ISA == FT_ISA_NEON
#include <arm_neon.h>
#endif

#if FT_ISA != FT_ISA_AVX512
typedef int32_t ft_vni __attribute__((vector_size(4 * FT_VLEN)));
#define FT_VN_SELECT(m, a, b) ((ft_vn)(((m) & (ft_vni)(a)) | (~(m) & (ft_vni)(b))))

#if FT_ISA == FT_ISA_AVX2
#define FT_VN_KEEP(v) __asm__("" : "+x"(v))
#elif FT_ISA == FT_ISA_NEON
#define FT_VN_KEEP(v) __asm__("" : "+w"(v))
#else
#define FT_VN_KEEP(v) ((void)0)
#endif

static inline __attribute__((always_inline)) ft_vn ft_vn_relu(ft_vn x) { return FT_VN_SELECT(x < 0, (ft_vn){0}, x); }
static inline __attribute__((always_inline)) ft_vn ft_vn_clip(ft_vn x, ft_vn lo, ft_vn hi) {
  return FT_VN_SELECT(x < lo, lo, FT_VN_SELECT(x > hi, hi, x));
}

#if FT_ISA == FT_ISA_AVX2
/* lanes [0, k) set: a window into -1 x 8, 0 x 8 */
static inline __m256i ft_vn_mask(int k) {
  static const int32_t win[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(win + 8 - k));
}
#endif

/* lanes [0, k) of p, zeros after (0 <= k <= FT_VLEN) */
static inline __attribute__((always_inline)) ft_vn ft_vn_loadn(const float *p, int k) {
  if (k >= FT_VLEN) return *(const ft_vnu *)p;
#if FT_ISA == FT_ISA_AVX2
  return (ft_vn)_mm256_maskload_ps(p, ft_vn_mask(k));
#else
  ft_vn v = {0};
  for (int j = 0; j < k; j++) v[j] = p[j];
  return v;
#endif
}

/* lanes [0, k) of v to p; p[k, FT_VLEN) untouched */
static inline __attribute__((always_inline)) void ft_vn_storen(float *p, ft_vn v, int k) {
  if (k >= FT_VLEN) {
    *(ft_vnu *)p = v;
    return;
  }
#if FT_ISA == FT_ISA_AVX2 /* 4, 2 and 1 lanes: vmaskmovps stores are slow on AMD's cores */
  __m128 h = _mm256_castps256_ps128((__m256)v);
  if (k & 4) {
    _mm_storeu_ps(p, h);
    h = _mm256_extractf128_ps((__m256)v, 1);
    p += 4;
  }
  if (k & 2) {
    _mm_storel_pi((__m64 *)p, h);
    h = _mm_movehl_ps(h, h);
    p += 2;
  }
  if (k & 1) _mm_store_ss(p, h);
#else
  for (int j = 0; j < k; j++) p[j] = v[j];
#endif
}

/* r[0, FT_VLEN) as a square of floats, transposed in registers: lane j of r[i] becomes lane i
 * of r[j] (8x8 ymm by unpacks, shuffles and lane swaps; 4x4 q by trn1/trn2; lanes elsewhere). */
static inline __attribute__((always_inline)) void ft_vn_transpose(ft_vn *r) {
#if FT_ISA == FT_ISA_AVX2
  __m256 u[8], s[8];
  for (int i = 0; i < 8; i += 2) { /* pairs of rows interleaved */
    u[i] = _mm256_unpacklo_ps((__m256)r[i], (__m256)r[i + 1]);
    u[i + 1] = _mm256_unpackhi_ps((__m256)r[i], (__m256)r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) { /* then pairs of pairs: each 128-bit half a column of 4 rows */
    s[i] = _mm256_shuffle_ps(u[i], u[i + 2], 0x44);
    s[i + 1] = _mm256_shuffle_ps(u[i], u[i + 2], 0xee);
    s[i + 2] = _mm256_shuffle_ps(u[i + 1], u[i + 3], 0x44);
    s[i + 3] = _mm256_shuffle_ps(u[i + 1], u[i + 3], 0xee);
  }
  for (int j = 0; j < 4; j++) { /* rows 0-3 and 4-7 of column j and of column j + 4 */
    r[j] = (ft_vn)_mm256_permute2f128_ps(s[j], s[j + 4], 0x20);
    r[j + 4] = (ft_vn)_mm256_permute2f128_ps(s[j], s[j + 4], 0x31);
  }
#elif FT_ISA == FT_ISA_NEON
  float32x4_t a0 = vtrn1q_f32(r[0], r[1]), a1 = vtrn2q_f32(r[0], r[1]);
  float32x4_t a2 = vtrn1q_f32(r[2], r[3]), a3 = vtrn2q_f32(r[2], r[3]);
  float64x2_t b0 = vreinterpretq_f64_f32(a0), b1 = vreinterpretq_f64_f32(a1);
  float64x2_t b2 = vreinterpretq_f64_f32(a2), b3 = vreinterpretq_f64_f32(a3);
  r[0] = vreinterpretq_f32_f64(vtrn1q_f64(b0, b2));
  r[1] = vreinterpretq_f32_f64(vtrn1q_f64(b1, b3));
  r[2] = vreinterpretq_f32_f64(vtrn2q_f64(b0, b2));
  r[3] = vreinterpretq_f32_f64(vtrn2q_f64(b1, b3));
#else
  for (int i = 0; i < FT_VLEN; i++)
    for (int j = i + 1; j < FT_VLEN; j++) {
      float t = r[i][j];
      r[i][j] = r[j][i];
      r[j][i] = t;
    }
#endif
}

/* tt[j * 16 + i] = i < mr ? t[i * 32 + j] : 0, for i < 16, j < 32 (mr <= 16): a tile's columns
 * as rows, a square block of ft_vn_transpose at a time. */
static void ft_uk_transpose_t(const float *restrict t, int mr, float *restrict tt) {
  for (int ib = 0; ib < 16; ib += FT_VLEN)
    for (int jb = 0; jb < 32; jb += FT_VLEN) {
      ft_vn r[FT_VLEN];
      for (int i = 0; i < FT_VLEN; i++) r[i] = ib + i < mr ? (ft_vn) * (const ft_vnu *)(t + (ib + i) * 32 + jb) : (ft_vn){0};
      ft_vn_transpose(r);
      for (int j = 0; j < FT_VLEN; j++) *(ft_vnu *)(tt + (jb + j) * 16 + ib) = r[j];
    }
}
#endif

#endif

/* The depthwise conv's row kernels for AVX2 and NEON: the channel-vector path (conv.h,
 * ft_dwv_item) on the ISA's own vectors.
 *
 * The ring of input rows and the output buffer hold pixels of 16 channels, 64 bytes each, as on
 * AVX-512 (conv.h transposes the planes into it and back), so a pixel is FT_DWN_H = 16 /
 * FT_VLEN vectors: two ymm, four q registers. A chunk of NW <= 8 output pixels is computed one
 * such vector (8 or 4 channels) at a time in NW accumulators: with the KW weight vectors of a
 * tap row and one input vector, 8 + 5 + 1 of AVX2's 16 registers at most. Every input load is
 * aligned (the ring is 64-byte aligned, a pixel 64 bytes). Each output is its bias plus the
 * taps in (kh, kw) order, one FMA each, as on every other path of the conv. */
#ifndef FT_UK_DWV_F32_VN_H
#define FT_UK_DWV_F32_VN_H

#include <stdint.h>

#include "isa.h"
#include "vec.h"

#if FT_ISA == FT_ISA_AVX2 || FT_ISA == FT_ISA_NEON
#define FT_DWN_H (16 / FT_VLEN) /* vectors of a 16-channel pixel */
#define FT_DWN_MAXKH 64         /* window rows (conv.h's FT_DW_MAXTAPS bounds them) */

/* One output row: chunk c of NW pixels reads padded columns from c * NW * s on, of tap row kh
 * at rp[kh] (padded column 0 of a ring row; every column it reads is in the ring); its pixel
 * vectors go to out + c * NW * 16. wt: the taps' 16 weights each, bv: the 16 biases. */
typedef struct {
  const float *rp[FT_DWN_MAXKH];
  const float *wt, *bv;
  float *out;
  int64_t chunks, KH, KW, s, d;
} ft_dwn_job;

typedef void (*ft_dwn_rowfn)(const ft_dwn_job *j);

/* Any window, stride and dilation: every product loads its input. */
static inline __attribute__((always_inline)) void ft_dwn_row_impl(const ft_dwn_job *J, const int NW) {
  int64_t KW = J->KW, S = J->s, D = J->d;
  for (int64_t c = 0; c < J->chunks; c++)
    for (int h = 0; h < FT_DWN_H; h++) {
      ft_vn acc[8], b0 = *(const ft_vn *)(J->bv + h * FT_VLEN);
#pragma GCC unroll 8
      for (int j = 0; j < NW; j++) acc[j] = b0;
      const float *w = J->wt + h * FT_VLEN;
      int64_t b = c * NW * S;
      for (int64_t kh = 0; kh < J->KH; kh++) {
        const float *r = J->rp[kh] + h * FT_VLEN;
        for (int64_t kw = 0; kw < KW; kw++, w += 16) {
          ft_vn wv = *(const ft_vnu *)w; /* packed constants need not be aligned */
#pragma GCC unroll 8
          for (int j = 0; j < NW; j++) acc[j] += *(const ft_vn *)(r + (b + j * S + kw * D) * 16) * wv;
        }
      }
#pragma GCC unroll 8
      for (int j = 0; j < NW; j++) *(ft_vn *)(J->out + (c * NW + j) * 16 + h * FT_VLEN) = acc[j];
    }
}

/* Undilated rows with NW, KW and S constants: each input vector of a tap row is loaded once and
 * serves every tap (j, kw) with j * S + kw == i, the KW weight vectors in registers ((NW - 1) *
 * S + KW loads a tap row, not NW * KW; with stride 2 GCC takes them as the FMAs' memory
 * operands again, which spills nothing). The same sums in the same order as ft_dwn_row_impl. */
static inline __attribute__((always_inline)) void ft_dwn_chunk_reuse(const ft_dwn_job *J, int64_t c, int h,
                                                                     const int KW, const int S, const int NW) {
  ft_vn acc[8], wv[5], b0 = *(const ft_vn *)(J->bv + h * FT_VLEN);
#pragma GCC unroll 8
  for (int j = 0; j < NW; j++) acc[j] = b0;
  const float *w = J->wt + h * FT_VLEN;
  int64_t b = c * NW * S;
  for (int64_t kh = 0; kh < J->KH; kh++, w += KW * 16) {
    const float *q = J->rp[kh] + b * 16 + h * FT_VLEN;
    __asm__("" : "+r"(q)); /* one base register, the pixels at fixed displacements from it */
#pragma GCC unroll 5
    for (int kw = 0; kw < KW; kw++) wv[kw] = *(const ft_vnu *)(w + kw * 16);
#pragma GCC unroll 32
    for (int i = 0; i < (NW - 1) * S + KW; i++) {
      ft_vn xv = *(const ft_vn *)(q + i * 16);
      if (S == 1) FT_VN_KEEP(xv); /* with stride 2 GCC spills around a kept vector: FMAs from memory */
#pragma GCC unroll 5
      for (int kw = 0; kw < KW; kw++) {
        int d = i - kw;
        if (d >= 0 && d % S == 0 && d / S < NW) acc[d / S] += xv * wv[kw];
      }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < NW; j++) *(ft_vn *)(J->out + (c * NW + j) * 16 + h * FT_VLEN) = acc[j];
}

#define FT_DWN_ROW(NW, KW, S)                                                              \
  static void ft_dwn_row_##NW##_##KW##_##S(const ft_dwn_job *J) {                          \
    for (int64_t c = 0; c < J->chunks; c++)                                                \
      for (int h = 0; h < FT_DWN_H; h++) ft_dwn_chunk_reuse(J, c, h, KW, S, NW);           \
  }
FT_DWN_ROW(8, 3, 1)
FT_DWN_ROW(8, 3, 2)
FT_DWN_ROW(8, 5, 1)
FT_DWN_ROW(8, 5, 2)
FT_DWN_ROW(7, 3, 1)
FT_DWN_ROW(7, 3, 2)
FT_DWN_ROW(7, 5, 1)
FT_DWN_ROW(7, 5, 2)
#undef FT_DWN_ROW
static void ft_dwn_row_any_7(const ft_dwn_job *J) { ft_dwn_row_impl(J, 7); }
static void ft_dwn_row_any_8(const ft_dwn_job *J) { ft_dwn_row_impl(J, 8); }

/* The row kernel of a chunk width nw (7 or 8) for a window KW wide, stride s, dilation d. */
static ft_dwn_rowfn ft_dwn_row_for(int64_t nw, int64_t KW, int64_t s, int64_t d) {
  if (d != 1 || (KW != 3 && KW != 5) || s > 2) return nw == 8 ? ft_dwn_row_any_8 : ft_dwn_row_any_7;
  static const ft_dwn_rowfn fns[2][2][2] = {{{ft_dwn_row_7_3_1, ft_dwn_row_7_3_2}, {ft_dwn_row_7_5_1, ft_dwn_row_7_5_2}},
                                            {{ft_dwn_row_8_3_1, ft_dwn_row_8_3_2}, {ft_dwn_row_8_5_1, ft_dwn_row_8_5_2}}};
  return fns[nw == 8][KW == 5][s == 2];
}
#endif

#endif

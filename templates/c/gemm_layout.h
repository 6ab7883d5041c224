/* The fp32 GEMM core's packed layouts and vector types, which gemm.h, the per-ISA register
 * tiles (ukernels/) and the kernels built on the core (conv, Winograd, attention, bf16) share.
 *
 * A is packed in slivers of FT_GEMM_MR rows, B in panels of FT_GEMM_NR columns (gemm.h). These
 * are the cache blocking and the layout of weights packed at compile time, the same on every
 * ISA: each ISA's register tile cuts a 12 x 32 tile into what fits its registers. */
#ifndef FT_GEMM_LAYOUT_H
#define FT_GEMM_LAYOUT_H

#ifndef FT_GEMM_MR
#define FT_GEMM_MR 12 /* rows of a register tile: 2*MR accumulators + 2 B vectors <= 32 zmm */
#endif
#define FT_GEMM_NR 32 /* columns of a register tile: two 16-float vectors */

/* 16 floats as GCC vectors: one zmm with AVX-512, two ymm with AVX2, four registers elsewhere */
typedef float ft_v16f __attribute__((vector_size(64)));
typedef float ft_v16u __attribute__((vector_size(64), aligned(4), may_alias)); /* unaligned */

/* X(mr) for every register-tile row count from 2 to FT_GEMM_MR: the micro-kernels' instances */
#if FT_GEMM_MR > 12
#define FT_GEMM_EACH_MR(X) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14)
#elif FT_GEMM_MR > 8
#define FT_GEMM_EACH_MR(X) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12)
#else
#define FT_GEMM_EACH_MR(X) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
#endif
/* A table of a micro-kernel's instances by row count, P##1 to P##FT_GEMM_MR (entry 0 NULL). */
#if FT_GEMM_MR > 12
#define FT_GEMM_MR_TABLE(P) {NULL, P##1, P##2, P##3, P##4, P##5, P##6, P##7, P##8, P##9, P##10, P##11, P##12, P##13, P##14}
#elif FT_GEMM_MR > 8
#define FT_GEMM_MR_TABLE(P) {NULL, P##1, P##2, P##3, P##4, P##5, P##6, P##7, P##8, P##9, P##10, P##11, P##12}
#else
#define FT_GEMM_MR_TABLE(P) {NULL, P##1, P##2, P##3, P##4, P##5, P##6, P##7, P##8}
#endif

/* Rows up to which a MatMul with prepacked B takes the small-M path (gemm.h) */
#define FT_GEMM_SMALL_M 16

/* How far ahead (floats: 8 KiB) a small-M tile prefetches B, two lines a k-step. The tiles
 * read the packed panels one after the other, so B is one forward stream (across a Winograd
 * conv's 36 matrices too), read once per run from DRAM in a whole model; the hardware prefetch
 * alone kept it at a fraction of the bandwidth. Where a panel is read a second time (15-16
 * rows) the lines ahead are already there. A prefetch past B's end is a hint and never
 * faults. Whole programs, 1 thread, Zen 5, alternating with and without: BERT-base seq 8
 * 12.7 -> 9.1 ms, GPT-2 seq 16 18.6 -> 15.5 ms, ResNet-50 (Winograd 256x14x14) 32.6-33.8 ->
 * 31.4-32.6 ms; 4096 measured the same as this. 0 compiles the prefetch out. */
#ifndef FT_GEMM_SMALL_PFD
#define FT_GEMM_SMALL_PFD 2048
#endif

#endif

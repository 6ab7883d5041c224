/* The instruction set a kernel is compiled for, read from the C compiler's predefined macros
 * (what -march / -mcpu turned on), and the vocabulary the per-ISA micro-kernels share.
 *
 *   FT_ISA        FT_ISA_AVX512 (__AVX512F__), FT_ISA_AVX2 (__AVX2__ and __FMA__),
 *                 FT_ISA_NEON (AArch64: NEON with fused multiply-add by lane), else FT_ISA_GENERIC
 *   FT_ISA_NAME   its name: "avx512", "avx2", "neon", "generic"
 *   FT_VLEN       floats in one vector register (16, 8, 4, 4)
 *   FT_VREGS      vector registers the register tiles are sized for (32, 16, 32, 16)
 *
 * ftaxc asks the C compiler the program will be built with, with the program's flags, what this
 * header says (compiler/cc_target.c preprocesses it), so the planner and the generated code
 * agree on the target by construction: every ISA-dependent choice of the plan is made for it,
 * the program records it (FTP_ISA) and warns when compiled under flags for another one. The
 * kernels in templates/c/ukernels/ are one file per kernel and ISA, each guarded by FT_ISA. */
#ifndef FT_ISA_H
#define FT_ISA_H

#define FT_ISA_GENERIC 0
#define FT_ISA_AVX2 1
#define FT_ISA_AVX512 2
#define FT_ISA_NEON 3

#if defined(__AVX512F__)
#define FT_ISA FT_ISA_AVX512
#define FT_ISA_NAME "avx512"
#define FT_VLEN 16
#define FT_VREGS 32
#elif defined(__AVX2__) && defined(__FMA__)
#define FT_ISA FT_ISA_AVX2
#define FT_ISA_NAME "avx2"
#define FT_VLEN 8
#define FT_VREGS 16
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define FT_ISA FT_ISA_NEON
#define FT_ISA_NAME "neon"
#define FT_VLEN 4
#define FT_VREGS 32
#else
#define FT_ISA FT_ISA_GENERIC
#define FT_ISA_NAME "generic"
#define FT_VLEN 4
#define FT_VREGS 16
#endif

/* FT_VLEN floats: one vector register of the ISA, as a GCC vector (ft_vnu: unaligned). Code
 * written with it keeps its values in registers on every ISA; the 64-byte ft_v16f of
 * gemm_layout.h is two or four registers off AVX-512, which GCC at times moves through memory. */
typedef float ft_vn __attribute__((vector_size(4 * FT_VLEN)));
typedef float ft_vnu __attribute__((vector_size(4 * FT_VLEN), aligned(4), may_alias));

#endif

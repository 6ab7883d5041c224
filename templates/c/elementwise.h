/* ftax.Elementwise: a chain (or tree) of float32 elementwise ops evaluated in one pass.
 *
 * The op carries a small program (compiler/fuse_elementwise.c writes it): instructions over
 * registers, each register a chunk of FT_EW_CHUNK consecutive output elements. The output is
 * walked a chunk at a time; per chunk every instruction is one loop over the chunk (which the
 * compiler vectorizes), reading and writing registers that stay in L1. A chain of k ops thus
 * reads its inputs and writes its output once, instead of k round trips through memory.
 *
 * Registers 0 .. n_in-1 are the inputs: they point straight into the input tensors (no copy) or,
 * for an input broadcast along the innermost axis, hold one value for the chunk (a "scalar").
 * Registers n_in .. n_in+T-1 are temporaries in a stack buffer; FT_EW_OUT is the output chunk,
 * written by the last instruction only. An operand can also be an immediate float (bit pattern
 * in the low 32 bits, FT_EW_IMM set). Results of scalar-only operands stay scalars, so a value
 * computed from broadcast inputs costs one evaluation per chunk, not per element.
 *
 * p: [n_in, n_instr, T, B, program (n_instr x 5: op, dst, a, b, c), broadcast plan at p + B
 * (ft_plan_broadcast of the inputs over the output)]. Every element reads its inputs at its own
 * index before the output is written there, so the output may overwrite a same-size input. */
#ifndef FT_ELEMENTWISE_H
#define FT_ELEMENTWISE_H

#include <math.h>
#include <stdint.h>

#include "fastmath.h"
#include "tensor.h"

#define FT_EW_CHUNK 256
#define FT_EW_MAXIN 8   /* inputs */
#define FT_EW_MAXT 8    /* temporaries: 8 KiB of stack */
#define FT_EW_MAXI 32   /* instructions */
#define FT_EW_OUT 1000  /* the output register */
#define FT_EW_IMM ((int64_t)1 << 32)
#define FT_EW_PAR_WORK (1 << 18) /* elements x instructions worth waking threads for */

/* Opcodes. Unary ops read a; the _IMM ones also take immediates b and c; binary ops a and b. */
enum {
  FT_EW_NOP = 0,
  /* unary */
  FT_EW_COPY, FT_EW_NEG, FT_EW_ABS, FT_EW_RELU, FT_EW_SIGMOID, FT_EW_TANH, FT_EW_EXP, FT_EW_LOG,
  FT_EW_SQRT, FT_EW_RECIP, FT_EW_ERF, FT_EW_FLOOR, FT_EW_CEIL, FT_EW_ROUND, FT_EW_SOFTPLUS,
  FT_EW_GELU, FT_EW_GELU_TANH, FT_EW_HARDSWISH, FT_EW_SIN, FT_EW_COS, FT_EW_SIGN, FT_EW_SOFTSIGN,
  FT_EW_MISH,
  /* unary with immediates b, c */
  FT_EW_CLIP = 40, FT_EW_LEAKY, FT_EW_ELU, FT_EW_HARDSIGMOID, FT_EW_SWISH, FT_EW_THRELU,
  FT_EW_CELU, FT_EW_SELU, FT_EW_SHRINK,
  /* binary */
  FT_EW_ADD = 80, FT_EW_SUB, FT_EW_MUL, FT_EW_DIV, FT_EW_MAX, FT_EW_MIN, FT_EW_POW, FT_EW_PRELU,
  FT_EW_LAST
};

static inline int ft_ew_is_unary(int64_t op) { return op > FT_EW_NOP && op < FT_EW_CLIP; }
static inline int ft_ew_is_unary_imm(int64_t op) { return op >= FT_EW_CLIP && op < FT_EW_ADD; }
static inline int ft_ew_is_binary(int64_t op) { return op >= FT_EW_ADD && op < FT_EW_LAST; }

static inline float ft_ew_clamp01(float v) { v = v > 1 ? 1 : v; return v < 0 ? 0 : v; }

/* A register during one chunk: a pointer to n floats, or one value. */
typedef struct ft_ew_reg { const float *v; float s; int scalar; } ft_ew_reg;

/* The expressions are those of unary.h and binary.h, so fusing changes no result. */
#define FT_EW_UNARY_CASES(X)                                                                   \
  X(FT_EW_COPY, x) X(FT_EW_NEG, -x) X(FT_EW_ABS, fabsf(x)) X(FT_EW_RELU, x < 0 ? 0.0f : x)       \
  X(FT_EW_SIGMOID, 1 / (1 + ft_expf(-x))) X(FT_EW_TANH, ft_tanhf(x)) X(FT_EW_EXP, ft_expf(x))   \
  X(FT_EW_LOG, ft_logf(x)) X(FT_EW_SQRT, sqrtf(x)) X(FT_EW_RECIP, 1 / x) X(FT_EW_ERF, ft_erff(x)) \
  X(FT_EW_FLOOR, floorf(x)) X(FT_EW_CEIL, ceilf(x)) X(FT_EW_ROUND, rintf(x))                    \
  X(FT_EW_SOFTPLUS, ft_softplusf(x))                                                           \
  X(FT_EW_GELU, 0.5f * x * (1 + ft_erff(x * 0.70710678118654752440f)))                          \
  X(FT_EW_GELU_TANH, 0.5f * x * (1 + ft_tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)))) \
  X(FT_EW_HARDSWISH, x * ft_ew_clamp01(x / 6 + 0.5f)) X(FT_EW_SIN, sinf(x)) X(FT_EW_COS, cosf(x)) \
  X(FT_EW_SIGN, x > 0 ? 1.0f : (x < 0 ? -1.0f : x)) X(FT_EW_SOFTSIGN, x / (1 + fabsf(x)))        \
  X(FT_EW_MISH, x * ft_tanhf(ft_softplusf(x)))
/* b and c are the immediates (alpha, beta; Clip's bounds) */
#define FT_EW_UNARY_IMM_CASES(X)                                                               \
  X(FT_EW_CLIP, (x < b ? b : x) > c ? c : (x < b ? b : x)) X(FT_EW_LEAKY, x < 0 ? b * x : x)     \
  X(FT_EW_ELU, x < 0 ? b * (ft_expf(x) - 1) : x) X(FT_EW_HARDSIGMOID, ft_ew_clamp01(b * x + c))  \
  X(FT_EW_SWISH, x / (1 + ft_expf(-b * x))) X(FT_EW_THRELU, x > b ? x : 0.0f)                   \
  X(FT_EW_CELU, x < 0 ? b * (ft_expf(x / b) - 1) : x)                                           \
  X(FT_EW_SELU, x <= 0 ? c * (b * ft_expf(x) - b) : c * x)                                      \
  X(FT_EW_SHRINK, x < -b ? x + c : (x > b ? x - c : 0.0f))
#define FT_EW_BINARY_CASES(X)                                                                  \
  X(FT_EW_ADD, x + z) X(FT_EW_SUB, x - z) X(FT_EW_MUL, x * z) X(FT_EW_DIV, x / z)               \
  X(FT_EW_MAX, (x > z || x != x) ? x : z) X(FT_EW_MIN, (x < z || x != x) ? x : z)               \
  X(FT_EW_POW, z == 2.0f ? x * x : (z == 3.0f ? x * x * x : (z == 0.5f ? sqrtf(x) : powf(x, z)))) \
  X(FT_EW_PRELU, x < 0 ? z * x : x)

/* One instruction over a chunk of n elements; d points at the destination's storage. */
static void ft_ew_step(int64_t op, ft_ew_reg A, ft_ew_reg B, float b, float c, float *d, int n,
                       ft_ew_reg *D) {
  D->v = d;
  D->scalar = 0;
  (void)b; (void)c;
  switch (op) {
#define UN(OP, EXPR)                                                                           \
  case OP:                                                                                     \
    if (A.scalar) { float x = A.s; D->s = (EXPR); D->scalar = 1; }                             \
    else {                                                                                     \
      const float *a_ = A.v;                                                                   \
      _Pragma("GCC ivdep") for (int j = 0; j < n; j++) { float x = a_[j]; d[j] = (EXPR); }     \
    }                                                                                          \
    break;
    FT_EW_UNARY_CASES(UN)
    FT_EW_UNARY_IMM_CASES(UN)
#undef UN
#define BIN(OP, EXPR)                                                                          \
  case OP:                                                                                     \
    if (A.scalar && B.scalar) { float x = A.s, z = B.s; D->s = (EXPR); D->scalar = 1; }        \
    else if (B.scalar) {                                                                       \
      const float *a_ = A.v; float z = B.s;                                                    \
      _Pragma("GCC ivdep") for (int j = 0; j < n; j++) { float x = a_[j]; d[j] = (EXPR); }     \
    } else if (A.scalar) {                                                                     \
      const float *b_ = B.v; float x = A.s;                                                    \
      _Pragma("GCC ivdep") for (int j = 0; j < n; j++) { float z = b_[j]; d[j] = (EXPR); }     \
    } else {                                                                                   \
      const float *a_ = A.v, *b_ = B.v;                                                        \
      _Pragma("GCC ivdep") for (int j = 0; j < n; j++) { float x = a_[j], z = b_[j]; d[j] = (EXPR); } \
    }                                                                                          \
    break;
    FT_EW_BINARY_CASES(BIN)
#undef BIN
  default: break;
  }
}

static inline ft_ew_reg ft_ew_operand(int64_t x, const ft_ew_reg *regs) {
  if (x & FT_EW_IMM) {
    ft_ew_reg r = {0, ft_f32_from_bits((uint32_t)(x & 0xffffffff)), 1};
    return r;
  }
  return regs[x];
}

static void ft_elementwise_f32(const int64_t *p, const double *f, const void *const *in,
                               void *const *out, void *scratch) {
  (void)f; (void)scratch;
  const int n_in = (int)p[0], m = (int)p[1], T = (int)p[2];
  const int64_t *prog = p + 4, *bp = p + p[3];
  const int r = (int)bp[0];
  const int64_t *dims = bp + 1, *st = bp + 1 + r; /* st[i * r + k]: input i, dim k */
  const int64_t inner = dims[r - 1], nblk = (inner + FT_EW_CHUNK - 1) / FT_EW_CHUNK;
  int64_t outer = 1;
  for (int k = 0; k < r - 1; k++) outer *= dims[k];
  float *Y = (float *)out[0];
  (void)T;
#pragma omp parallel for schedule(static) if (outer * inner * m > FT_EW_PAR_WORK)
  for (int64_t it = 0; it < outer * nblk; it++) {
    float tmp[FT_EW_MAXT][FT_EW_CHUNK] __attribute__((aligned(64)));
    ft_ew_reg regs[FT_EW_MAXIN + FT_EW_MAXT];
    int64_t o = it / nblk, j0 = it % nblk * FT_EW_CHUNK, yoff = o * inner + j0;
    int n = (int)(inner - j0 < FT_EW_CHUNK ? inner - j0 : FT_EW_CHUNK);
    for (int i = 0; i < n_in; i++) { /* where this chunk of input i starts */
      int64_t off = 0, rest = o;
      for (int k = r - 2; k >= 0; k--) {
        off += rest % dims[k] * st[i * r + k];
        rest /= dims[k];
      }
      const float *x = (const float *)in[i] + off;
      if (st[i * r + r - 1]) { regs[i].v = x + j0; regs[i].scalar = 0; }
      else { regs[i].v = 0; regs[i].s = x[0]; regs[i].scalar = 1; }
    }
    for (int s = 0; s < m; s++) {
      const int64_t *ins = prog + 5 * s;
      int64_t dst = ins[1];
      ft_ew_reg A = ft_ew_operand(ins[2], regs), B = {0, 0, 1};
      float b = 0, c = 0;
      if (ft_ew_is_binary(ins[0])) B = ft_ew_operand(ins[3], regs);
      else if (ft_ew_is_unary_imm(ins[0])) {
        b = ft_f32_from_bits((uint32_t)(ins[3] & 0xffffffff));
        c = ft_f32_from_bits((uint32_t)(ins[4] & 0xffffffff));
      }
      if (dst == FT_EW_OUT) {
        ft_ew_reg R;
        ft_ew_step(ins[0], A, B, b, c, Y + yoff, n, &R);
        if (R.scalar) for (int j = 0; j < n; j++) Y[yoff + j] = R.s;
      } else {
        ft_ew_step(ins[0], A, B, b, c, tmp[dst - n_in], n, &regs[dst]);
      }
    }
  }
}

#endif

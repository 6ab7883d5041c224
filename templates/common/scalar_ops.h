/* The scalar ops: every elementwise function of one or two floats that ftax computes, each
 * written once, here. Everything that evaluates such a function is generated from these rows:
 *
 *   templates/c/unary.h          the float32 and float64 kernels of the unary ops (ft_<fn>_f32/f64)
 *   templates/c/elementwise.h    ftax.Elementwise's opcodes and their cases (float32)
 *   templates/c/gemm.h           the GEMM and convolution epilogue activation (float32)
 *   templates/cuda/runtime.cuh   the same epilogue on the GPU (ftc_act)
 *   templates/cuda/elementwise.cuh  the unary functors ftc_u_<fn> and ftax.Elementwise's twin
 *   compiler/scalar_table.c      names, attributes and defaults for the op table, the fusion passes
 *
 * A row's id is the op's number everywhere: ftax.Elementwise's opcode and the epilogues'
 * activation code (ids never change: generated programs hold them). The three lists keep the
 * three number ranges that ftax.Elementwise's program format has: unary ops from 1, unary ops
 * taking parameters a and b (as immediates in a program) from 40, binary ops from 80.
 *
 * The expression computes the result from x (and z, the second operand of a binary op; a and b,
 * the parameters) in type T, with these hooks, which each includer points at its own math by
 * defining FT_MATH (float32: ft_f32, fastmath.h; float64: ft_f64, libm; CUDA: ftc, runtime.cuh):
 *   FT_EXP FT_LOG FT_TANH FT_ERF FT_SOFTPLUS FT_GELU  the transcendental functions (float32: fastmath.h)
 *   FT_CLAMP01(v)                            max(0, min(1, v)) with selects; NaN stays NaN
 *   FT_LIBM(fn)(x)                           libm's fn for T: sinf for float, sin for double
 * Write constants as (T)0.5, not 0.5f: the double kernels must not round them to float.
 *
 * kernels: KERNEL       a unary op with standalone kernels ft_<fn>_f32/_f64 and the CUDA functor
 *                       ftc_u_<fn>; the ONNX op itself is a row in compiler/ops/unary.c
 *          KERNEL_C     the same, but its CUDA functor is written by hand in elementwise.cuh
 *                       (it serves the integer kernels too)
 *          FUSED_ONLY   evaluated only inside fused kernels (Identity; Clip, whose own kernel
 *                       takes its bounds from inputs)
 * name: the ONNX op (default domain) the row computes, which is also the activation name the
 * fused ops carry ("GeluTanh" is Gelu with approximate="tanh"). */
#ifndef FT_SCALAR_OPS_H
#define FT_SCALAR_OPS_H

/* X(ID, fn, name, kernels, expression) */
#define FT_SCALAR_UNARY_OPS(X)                                                                   \
  X(COPY, copy, "Identity", FUSED_ONLY, x)                                                       \
  X(NEG, neg, "Neg", KERNEL_C, -x)                                                               \
  X(ABS, abs, "Abs", KERNEL_C, FT_LIBM(fabs)(x))                                                 \
  X(RELU, relu, "Relu", KERNEL, x < 0 ? (T)0 : x)                                                \
  X(SIGMOID, sigmoid, "Sigmoid", KERNEL, 1 / (1 + FT_EXP(-x)))                                   \
  X(TANH, tanh, "Tanh", KERNEL, FT_TANH(x))                                                      \
  X(EXP, exp, "Exp", KERNEL, FT_EXP(x))                                                          \
  X(LOG, log, "Log", KERNEL, FT_LOG(x))                                                          \
  X(SQRT, sqrt, "Sqrt", KERNEL, FT_LIBM(sqrt)(x))                                                \
  X(RECIPROCAL, reciprocal, "Reciprocal", KERNEL, 1 / x)                                         \
  X(ERF, erf, "Erf", KERNEL, FT_ERF(x))                                                          \
  X(FLOOR, floor, "Floor", KERNEL, FT_LIBM(floor)(x))                                            \
  X(CEIL, ceil, "Ceil", KERNEL, FT_LIBM(ceil)(x))                                                \
  X(ROUND, round, "Round", KERNEL, FT_LIBM(rint)(x)) /* halves to even, the default mode */     \
  X(SOFTPLUS, softplus, "Softplus", KERNEL, FT_SOFTPLUS(x))                                      \
  X(GELU, gelu, "Gelu", KERNEL, FT_GELU(x))                                                      \
  X(GELU_TANH, gelu_tanh, "GeluTanh", KERNEL,                                                    \
    (T)0.5 * x * (1 + FT_TANH((T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x))))      \
  X(HARD_SWISH, hard_swish, "HardSwish", KERNEL, x * FT_CLAMP01(x / 6 + (T)0.5))                 \
  X(SIN, sin, "Sin", KERNEL, FT_LIBM(sin)(x))                                                    \
  X(COS, cos, "Cos", KERNEL, FT_LIBM(cos)(x))                                                    \
  X(SIGN, sign, "Sign", KERNEL, x > 0 ? (T)1 : (x < 0 ? (T)-1 : x))                              \
  X(SOFTSIGN, softsign, "Softsign", KERNEL, x / (1 + FT_LIBM(fabs)(x)))                          \
  X(MISH, mish, "Mish", KERNEL, x * FT_TANH(FT_SOFTPLUS(x)))                                     \
  X(TAN, tan, "Tan", KERNEL, FT_LIBM(tan)(x))                                                    \
  X(ASIN, asin, "Asin", KERNEL, FT_LIBM(asin)(x))                                                \
  X(ACOS, acos, "Acos", KERNEL, FT_LIBM(acos)(x))                                                \
  X(ATAN, atan, "Atan", KERNEL, FT_LIBM(atan)(x))                                                \
  X(SINH, sinh, "Sinh", KERNEL, FT_LIBM(sinh)(x))                                                \
  X(COSH, cosh, "Cosh", KERNEL, FT_LIBM(cosh)(x))                                                \
  X(ASINH, asinh, "Asinh", KERNEL, FT_LIBM(asinh)(x))                                            \
  X(ACOSH, acosh, "Acosh", KERNEL, FT_LIBM(acosh)(x))                                            \
  X(ATANH, atanh, "Atanh", KERNEL, FT_LIBM(atanh)(x))

/* X(ID, fn, name, kernels, attribute a, default a, attribute b, default b, expression): the
 * parameters' ONNX attributes and their defaults (0 where the op has no second one). */
#define FT_SCALAR_PARAM_OPS(X)                                                                   \
  X(CLIP, clip, "Clip", FUSED_ONLY, 0, 0, 0, 0, (x < a ? a : x) > b ? b : (x < a ? a : x))        \
  X(LEAKY_RELU, leaky_relu, "LeakyRelu", KERNEL, "alpha", 0.01f, 0, 0, x < 0 ? a * x : x)        \
  X(ELU, elu, "Elu", KERNEL, "alpha", 1.0f, 0, 0, x < 0 ? a * (FT_EXP(x) - 1) : x)               \
  X(HARD_SIGMOID, hard_sigmoid, "HardSigmoid", KERNEL, "alpha", 0.2f, "beta", 0.5f,             \
    FT_CLAMP01(a * x + b))                                                                       \
  X(SWISH, swish, "Swish", KERNEL, "alpha", 1.0f, 0, 0, x / (1 + FT_EXP(-a * x)))                \
  X(THRESHOLDED_RELU, thresholded_relu, "ThresholdedRelu", KERNEL, "alpha", 1.0f, 0, 0,         \
    x > a ? x : (T)0)                                                                            \
  X(CELU, celu, "Celu", KERNEL, "alpha", 1.0f, 0, 0, x < 0 ? a * (FT_EXP(x / a) - 1) : x)        \
  X(SELU, selu, "Selu", KERNEL, "alpha", 1.67326319217681884765625f, "gamma",                    \
    1.05070102214813232421875f, x <= 0 ? b * (a * FT_EXP(x) - a) : b * x)                        \
  X(SHRINK, shrink, "Shrink", KERNEL, "lambd", 0.5f, "bias", 0.0f,                               \
    x < -a ? x + b : (x > a ? x - b : (T)0))

/* X(ID, fn, name, expression of x and z). Only ftax.Elementwise evaluates these from here (the
 * standalone kernels of templates/c/binary.h serve every numeric type). */
#define FT_SCALAR_BINARY_OPS(X)                                                                  \
  X(ADD, add, "Add", x + z)                                                                      \
  X(SUB, sub, "Sub", x - z)                                                                      \
  X(MUL, mul, "Mul", x * z)                                                                      \
  X(DIV, div, "Div", x / z)                                                                      \
  X(MAX, max2, "Max", (x > z || x != x) ? x : z)                                                 \
  X(MIN, min2, "Min", (x < z || x != x) ? x : z)                                                 \
  X(POW, pow, "Pow",                                                                             \
    z == 2 ? x * x : (z == 3 ? x * x * x : (z == (T)0.5 ? FT_LIBM(sqrt)(x) : FT_LIBM(pow)(x, z)))) \
  X(PRELU, prelu, "PRelu", x < 0 ? z * x : x)

/* The ids: FT_SOP_<ID>. Unary ops must stay below 40 and parameter ops below 80. */
#define FT_SOP_ENUM_(ID, ...) FT_SOP_##ID,
enum {
  FT_SOP_NONE = 0,
  FT_SCALAR_UNARY_OPS(FT_SOP_ENUM_)
  FT_SOP_UNARY_END,
  FT_SOP_PARAM_BEFORE_ = 39,
  FT_SCALAR_PARAM_OPS(FT_SOP_ENUM_)
  FT_SOP_PARAM_END,
  FT_SOP_BINARY_BEFORE_ = 79,
  FT_SCALAR_BINARY_OPS(FT_SOP_ENUM_)
  FT_SOP_LAST
};
#undef FT_SOP_ENUM_
/* Whether a program computes scalar op id: every op, unless the program says otherwise. A
 * freestanding library (ftaxc --freestanding) defines it from the ops its model uses, so the
 * switches over every op (gemm.h's epilogue activation, elementwise.h's instructions) call no
 * libm function the model does not need. */
#ifndef FT_SOP_USED
#define FT_SOP_USED(id) 1
#endif
#define FT_SOP_PARAM_FIRST 40
#define FT_SOP_BINARY_FIRST 80
#define FT_SOP_IS_UNARY(op) ((op) > FT_SOP_NONE && (op) < FT_SOP_UNARY_END)
#define FT_SOP_IS_PARAM(op) ((op) >= FT_SOP_PARAM_FIRST && (op) < FT_SOP_PARAM_END)
#define FT_SOP_IS_BINARY(op) ((op) >= FT_SOP_BINARY_FIRST && (op) < FT_SOP_LAST)

#define FT_SOP_CAT(a, b) FT_SOP_CAT_(a, b)
#define FT_SOP_CAT_(a, b) a##b

/* The hooks (see the top): FT_MATH, defined by the includer around an expansion, picks the set. */
#define FT_EXP(x) FT_SOP_CAT(FT_MATH, _exp)(x)
#define FT_LOG(x) FT_SOP_CAT(FT_MATH, _log)(x)
#define FT_TANH(x) FT_SOP_CAT(FT_MATH, _tanh)(x)
#define FT_ERF(x) FT_SOP_CAT(FT_MATH, _erf)(x)
#define FT_GELU(x) FT_SOP_CAT(FT_MATH, _gelu)(x)
#define FT_SOFTPLUS(x) FT_SOP_CAT(FT_MATH, _softplus)(x)
#define FT_CLAMP01(x) FT_SOP_CAT(FT_MATH, _clamp01)(x)
#define FT_LIBM(fn) FT_SOP_CAT(FT_MATH, _libm)(fn)

/* Keep a row by its kernels: FT_SOP_IF_C_##kernels(...) keeps the C kernels' rows,
 * FT_SOP_IF_CUDA_##kernels(...) those with a generated CUDA functor. */
#define FT_SOP_IF_C_KERNEL(...) __VA_ARGS__
#define FT_SOP_IF_C_KERNEL_C(...) __VA_ARGS__
#define FT_SOP_IF_C_FUSED_ONLY(...)
#define FT_SOP_IF_CUDA_KERNEL(...) __VA_ARGS__
#define FT_SOP_IF_CUDA_KERNEL_C(...)
#define FT_SOP_IF_CUDA_FUSED_ONLY(...)

#endif

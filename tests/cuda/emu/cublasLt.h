/* CPU stand-in for the part of cuBLASLt ftax's GEMM twin uses (see cuda_runtime.h here), with the
 * semantics NVIDIA documents: column-major layouts (rows, cols, leading dimension >= rows),
 * op N/T per operand, strided batches with a count per layout, D = epilogue(alpha * op(A) op(B)
 * + beta * C), C not read when beta is 0, the BIAS epilogues adding bias[row of D] before ReLU.
 * Shapes that do not fit together are refused as cuBLASLt refuses them. fp32 and fp16 data,
 * fp32 accumulation (TF32 is computed as fp32). */
#ifndef FTAX_EMU_CUBLASLT_H
#define FTAX_EMU_CUBLASLT_H

#include <stdint.h>
#include <stdlib.h>

#include "cuda_fp16.h"
#include "cuda_runtime.h"

typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_INVALID_VALUE = 7,
               CUBLAS_STATUS_NOT_SUPPORTED = 15 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77 } cublasComputeType_t;
typedef enum { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 } cudaDataType_t;
typedef enum { CUBLASLT_EPILOGUE_DEFAULT = 1, CUBLASLT_EPILOGUE_RELU = 2, CUBLASLT_EPILOGUE_BIAS = 4,
               CUBLASLT_EPILOGUE_RELU_BIAS = 6, CUBLASLT_EPILOGUE_GELU = 32, CUBLASLT_EPILOGUE_GELU_BIAS = 36 } cublasLtEpilogue_t;
typedef enum { CUBLASLT_MATMUL_DESC_POINTER_MODE = 2, CUBLASLT_MATMUL_DESC_TRANSA = 3, CUBLASLT_MATMUL_DESC_TRANSB = 4,
               CUBLASLT_MATMUL_DESC_EPILOGUE = 7, CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,
               CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26 } cublasLtMatmulDescAttributes_t;
typedef enum { CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6 } cublasLtMatrixLayoutAttribute_t;
typedef enum { CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,
               CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
               CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8 } cublasLtMatmulPreferenceAttributes_t;

struct ftc_emu_lt { int dummy; };
struct ftc_emu_lt_desc { cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N; uint32_t epi = CUBLASLT_EPILOGUE_DEFAULT; const void *bias = nullptr; };
struct ftc_emu_lt_layout { cudaDataType_t t; uint64_t rows, cols; int64_t ld; int32_t batch = 1; int64_t stride = 0; };
struct ftc_emu_lt_pref { size_t ws = 0; };
typedef ftc_emu_lt *cublasLtHandle_t;
typedef ftc_emu_lt_desc *cublasLtMatmulDesc_t;
typedef ftc_emu_lt_layout *cublasLtMatrixLayout_t;
typedef ftc_emu_lt_pref *cublasLtMatmulPreference_t;
typedef struct { uint64_t data[8]; } cublasLtMatmulAlgo_t;
typedef struct {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

inline const char *cublasLtGetStatusString(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "success" : s == CUBLAS_STATUS_INVALID_VALUE ? "invalid value" : "not supported";
}
inline const char *cublasLtGetStatusName(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : s == CUBLAS_STATUS_INVALID_VALUE ? "CUBLAS_STATUS_INVALID_VALUE" : "CUBLAS_STATUS_NOT_SUPPORTED";
}
inline cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) { *h = new ftc_emu_lt; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) { delete h; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t, cudaDataType_t scale) {
  *d = new ftc_emu_lt_desc;
  return scale == CUDA_R_32F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}
inline cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { delete d; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void *buf, size_t n) {
  switch (a) {
  case CUBLASLT_MATMUL_DESC_TRANSA: if (n != 4) return CUBLAS_STATUS_INVALID_VALUE; memcpy(&d->ta, buf, 4); break;
  case CUBLASLT_MATMUL_DESC_TRANSB: if (n != 4) return CUBLAS_STATUS_INVALID_VALUE; memcpy(&d->tb, buf, 4); break;
  case CUBLASLT_MATMUL_DESC_EPILOGUE: if (n != 4) return CUBLAS_STATUS_INVALID_VALUE; memcpy(&d->epi, buf, 4); break;
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER: if (n != sizeof(void *)) return CUBLAS_STATUS_INVALID_VALUE; memcpy(&d->bias, buf, n); break;
  default: break;
  }
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType_t t, uint64_t rows, uint64_t cols, int64_t ld) {
  *l = new ftc_emu_lt_layout;
  (*l)->t = t; (*l)->rows = rows; (*l)->cols = cols; (*l)->ld = ld;
  return ld >= (int64_t)rows && rows && cols ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}
inline cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) { delete l; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, const void *buf, size_t n) {
  if (a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) { if (n != 4) return CUBLAS_STATUS_INVALID_VALUE; memcpy(&l->batch, buf, 4); }
  else if (a == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET) { if (n != 8) return CUBLAS_STATUS_INVALID_VALUE; memcpy(&l->stride, buf, 8); }
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) { *p = new ftc_emu_lt_pref; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) { delete p; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a, const void *buf, size_t n) {
  if (a == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES && n == 8) memcpy(&p->ws, buf, 8);
  return CUBLAS_STATUS_SUCCESS;
}

/* the problem's m, n, k if the layouts fit together */
inline cublasStatus_t ftc_emu_lt_check(cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                       cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd, uint64_t *m, uint64_t *n, uint64_t *k) {
  uint64_t am = d->ta == CUBLAS_OP_N ? a->rows : a->cols, ak = d->ta == CUBLAS_OP_N ? a->cols : a->rows;
  uint64_t bk = d->tb == CUBLAS_OP_N ? b->rows : b->cols, bn = d->tb == CUBLAS_OP_N ? b->cols : b->rows;
  if (am != dd->rows || bn != dd->cols || ak != bk || c->rows != dd->rows || c->cols != dd->cols) return CUBLAS_STATUS_INVALID_VALUE;
  if (a->batch != dd->batch || b->batch != dd->batch || c->batch != dd->batch) return CUBLAS_STATUS_INVALID_VALUE;
  if (a->t != dd->t || b->t != dd->t || c->t != dd->t || (dd->t != CUDA_R_32F && dd->t != CUDA_R_16F)) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (d->epi & ~(uint32_t)(CUBLASLT_EPILOGUE_DEFAULT | CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS)) return CUBLAS_STATUS_NOT_SUPPORTED;
  if ((d->epi & CUBLASLT_EPILOGUE_BIAS) && !d->bias) return CUBLAS_STATUS_INVALID_VALUE;
  *m = am; *n = bn; *k = ak;
  return CUBLAS_STATUS_SUCCESS;
}

inline cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
                                                     cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd,
                                                     cublasLtMatmulPreference_t, int want, cublasLtMatmulHeuristicResult_t *res, int *found) {
  uint64_t m, n, k;
  *found = 0;
  cublasStatus_t s = ftc_emu_lt_check(d, a, b, c, dd, &m, &n, &k);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  if (want < 1) return CUBLAS_STATUS_INVALID_VALUE;
  memset(&res[0], 0, sizeof res[0]);
  res[0].state = CUBLAS_STATUS_SUCCESS;
  res[0].wavesCount = 1;
  *found = 1;
  return CUBLAS_STATUS_SUCCESS;
}

inline float ftc_emu_lt_ld(const void *p, cudaDataType_t t, size_t i) {
  return t == CUDA_R_32F ? ((const float *)p)[i] : __half2float(((const __half *)p)[i]);
}
inline void ftc_emu_lt_st(void *p, cudaDataType_t t, size_t i, float v) {
  if (t == CUDA_R_32F) ((float *)p)[i] = v;
  else ((__half *)p)[i] = __float2half_rn(v);
}

inline cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t d, const void *alpha, const void *A, cublasLtMatrixLayout_t a,
                                     const void *B, cublasLtMatrixLayout_t b, const void *beta, const void *C, cublasLtMatrixLayout_t c,
                                     void *D, cublasLtMatrixLayout_t dd, const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t s) {
  uint64_t m, n, k;
  cublasStatus_t st = ftc_emu_lt_check(d, a, b, c, dd, &m, &n, &k);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  float al = *(const float *)alpha, be = *(const float *)beta;
  ftc_emu_lt_desc dc = *d;
  ftc_emu_lt_layout la = *a, lb = *b, lc = *c, ld = *dd;
  ftc_emu_submit(s, [=] {
    cudaDataType_t t = ld.t;
    size_t es = t == CUDA_R_32F ? 4 : 2;
    for (int32_t bi = 0; bi < ld.batch; bi++) {
      const char *pa = (const char *)A + (size_t)(la.stride * bi) * es, *pb = (const char *)B + (size_t)(lb.stride * bi) * es;
      const char *pc = (const char *)C + (size_t)(lc.stride * bi) * es;
      char *pd = (char *)D + (size_t)(ld.stride * bi) * es;
      std::vector<float> out(m * n);
      for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) {
          float acc = 0;
          for (uint64_t kk = 0; kk < k; kk++) {
            size_t ia = dc.ta == CUBLAS_OP_N ? i + kk * la.ld : kk + i * la.ld;
            size_t ib = dc.tb == CUBLAS_OP_N ? kk + j * lb.ld : j + kk * lb.ld;
            acc += ftc_emu_lt_ld(pa, t, ia) * ftc_emu_lt_ld(pb, t, ib);
          }
          float v = al * acc;
          if (be != 0) v += be * ftc_emu_lt_ld(pc, t, i + j * lc.ld);
          if (dc.epi & CUBLASLT_EPILOGUE_BIAS) v += ftc_emu_lt_ld(dc.bias, t, i);
          if (dc.epi & CUBLASLT_EPILOGUE_RELU) v = v < 0 ? 0 : v;
          out[i + j * m] = v;
        }
      for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) ftc_emu_lt_st(pd, t, i + j * ld.ld, out[i + j * m]);
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}

#endif

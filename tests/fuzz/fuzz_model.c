/* Fuzz target: a whole ONNX model from bytes, through the loader and ftaxc's pipeline, emitted
 * into memory. Every input dimension left open is pinned to 2; the C target, or (on about half
 * of the inputs, chosen by a hash of the bytes) the CUDA target, fp32 or fp16, with or without a
 * CUDA graph, with or without fusion. Nothing is compiled or run: the findings are crashes,
 * undefined behaviour and leaks in ftax itself. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* FNV-1a: the compile options follow from the bytes, so a crash input reproduces alone */
static uint32_t hash_bytes(const uint8_t *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

static void pin_inputs(ft_graph *g) {
  for (int i = 0; i < g->n_inputs; i++) {
    ft_value *v = &g->vals[g->inputs[i]];
    if (v->t.rank < 0) continue; /* no rank: ft_specialize refuses it, as ftaxc would */
    for (int d = 0; d < v->t.rank; d++) {
      if (v->t.dims[d] < 0) v->t.dims[d] = 2;
      free(v->sym[d]);
      v->sym[d] = NULL;
    }
    v->shape_known = 1;
  }
}

static void emit(ft_graph *g, ft_lowered *lw, ft_memplan *mp, const ft_cuda_opts *cu, const ft_cuda_libs *libs, int embed,
                 ft_err *e) {
  char *cbuf = NULL, *hbuf = NULL, *wbuf = NULL;
  size_t clen = 0, hlen = 0, wlen = 0;
  FILE *fc = open_memstream(&cbuf, &clen), *fh = open_memstream(&hbuf, &hlen), *fw = open_memstream(&wbuf, &wlen);
  if (fc && fh && fw) {
    ft_emit_opts eo = {"fuzz", "fuzz.h", "ftaxc fuzz.onnx", "0000000000000000000000000000000000000000000000000000000000000000",
                       embed ? "/tmp/fuzz.weights" : "fuzz.weights", embed, 0, NULL};
    if (cu) ft_emit_cuda(g, lw, mp, &eo, cu, libs, fc, fh, fw, e);
    else ft_emit_c(g, lw, mp, &eo, fc, fh, fw, e);
  }
  if (fc) fclose(fc);
  if (fh) fclose(fh);
  if (fw) fclose(fw);
  free(cbuf);
  free(hbuf);
  free(wbuf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* refuse big tensors early: the fuzzer's malloc limit is not the finding we want */
  ft_max_tensor_bytes = (size_t)1 << 20;
  uint32_t h = hash_bytes(data, size);
  ft_graph *g = NULL;
  ft_err e = {0};
  if (ft_load_model_mem(data, size, "fuzz.onnx", NULL, &g, &e)) {
    ft_graph_free(g);
    return 0;
  }
  pin_inputs(g);
  ft_pins pins;
  memset(&pins, 0, sizeof pins);
  ft_cuda_opts cu;
  memset(&cu, 0, sizeof cu);
  cu.arch = "sm_90";
  int cuda = h & 1;
  if (cuda) {
    cu.precision = (h >> 1) & 1 ? FT_PREC_FP16 : (h >> 2) & 1 ? FT_PREC_TF32 : FT_PREC_FP32;
    cu.graph = (h >> 3) & 1;
  }
  ft_compile_opts co;
  memset(&co, 0, sizeof co);
  co.pins = &pins;
  co.no_fold = ((h >> 4) & 7) == 0;
  co.fuse.all_off = ((h >> 7) & 3) == 0;
  co.cuda = cuda ? &cu : NULL;
  ft_lowered lw;
  ft_memplan mp;
  ft_cuda_libs libs = {0};
  memset(&lw, 0, sizeof lw);
  memset(&mp, 0, sizeof mp);
  if (!ft_compile_graph(g, &co, &lw, &mp, &libs, &e)) emit(g, &lw, &mp, cuda ? &cu : NULL, &libs, ((h >> 9) & 7) == 0, &e);
  ft_memplan_free(&mp);
  ft_lowered_free(&lw);
  ft_graph_free(g);
  return 0;
}

/* The compiler's pipeline after loading, as one call: what ftaxc runs between reading the model
 * and writing the program, shared with the fuzz targets so they test exactly that path. */
#ifndef FTAX_PIPELINE_H
#define FTAX_PIPELINE_H

#include <stdio.h>

#include "fuse.h"
#include "passes.h"

typedef struct ft_compile_opts {
  const ft_pins *pins;
  int no_fold;
  ft_fuse_opts fuse;
  const ft_cuda_opts *cuda; /* NULL: the C target */
  FILE *report;       /* --report: node counts per stage, arena and weights */
  int bf16;           /* C target, --precision bf16: matrix products on the bf16 GEMM core */
  int no_winograd;    /* C target, --no-winograd: 3x3 convs on the direct kernel */
  int no_blocked;     /* C target, --no-blocked: every conv reads and writes NCHW */
  const char *isa;    /* the instruction set the plan is for (templates/c/isa.h's names; "cuda"); NULL:
                         the one this ftaxc was built for */
} ft_compile_opts;

/* check ops → pin dims → infer and fold → simplify → fuse → lower → (CUDA target, or the C
 * target's blocked conv edges) → plan memory.
 * libs: what the CUDA target found the program needs (untouched for the C target). */
int ft_compile_graph(ft_graph *g, const ft_compile_opts *o, ft_lowered *lw, ft_memplan *mp, ft_cuda_libs *libs,
                     ft_err *e);

#endif

/* Which templates/cuda twin runs a C kernel call (see templates/cuda/runtime.cuh for the twins'
 * calling convention). Shared by the CUDA emitter, which writes the twin's launcher into the
 * program, and by ftax-eager --device cuda, which looks the same launcher up in a table compiled
 * from every twin the C kernels can map to (tools/cuda_twins.c writes that table). */
#ifndef FTAX_CUDA_TWINS_H
#define FTAX_CUDA_TWINS_H

#include <stddef.h>
#include <stdint.h>

#include "op.h"

typedef struct ft_twin {
  char call[192];      /* the launcher, template arguments included: the table's key */
  char init[192];      /* its init hook (makes the call's plan: descriptors, algorithms), or "" */
  const char *free_fn; /* frees the init hook's plan, or NULL */
  const char *file;    /* templates/cuda/<file>.cuh */
  int lib;             /* FT_TW_BLASLT, FT_TW_DNN */
} ft_twin;
enum { FT_TW_BLASLT = 1, FT_TW_DNN = 2 };

/* The twin of call k (fp16: float32 tensors are stored as half), or nonzero with the reason in
 * why when there is none or this call's parameters are beyond it. */
int ft_cuda_twin(const ft_kcall *k, int fp16, ft_twin *t, char *why, size_t wn);
/* The twin a kernel name maps to, whatever the parameters (for building the table). */
int ft_cuda_twin_of_kernel(const char *kernel, int fp16, ft_twin *t);

#endif

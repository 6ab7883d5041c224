/* CUDA twins: the templates/cuda launcher that does a C kernel's work (see
 * templates/cuda/runtime.cuh for the twins' calling convention). Each kernel entry (op.h,
 * ft_kentry) names its twin as data, declared beside it in compiler/ops/; this file turns that
 * into the text of one call's launcher. Shared by the CUDA target stage and emitter, and by
 * ftax-eager --device cuda, whose table of launchers tools/cuda_twins.c writes from every
 * registered entry (ft_kentry_each). */
#ifndef FTAX_CUDA_TWINS_H
#define FTAX_CUDA_TWINS_H

#include <stddef.h>
#include <stdint.h>

#include "op.h"

/* A twin, as an entry declares it. In call and init, $0 and $1 stand for the C types of the
 * entry's dtype and dtype2 ("float", "int64_t", ...; float32 is "__half" in fp16 programs). */
typedef struct ft_twin {
  const char *call;    /* the launcher, template arguments included */
  const char *init;    /* its init hook (makes the call's plan: descriptors, algorithms), or NULL */
  const char *free_fn; /* frees the init hook's plan, or NULL */
  const char *file;    /* templates/cuda/<file>.cuh */
  int lib;             /* FT_TW_BLASLT, FT_TW_DNN */
  /* parameters beyond the twin: nonzero with the reason in why (NULL: every call fits) */
  int (*check)(const int64_t *p, char *why, size_t wn);
  /* what the twin needs of the memory plan beyond what the C kernel does (NULL: nothing) */
  void (*prepare)(ft_kcall *k);
} ft_twin;
enum { FT_TW_BLASLT = 1, FT_TW_DNN = 2 };

/* One call's twin: the launcher text as a program writes it. */
typedef struct ft_twin_call {
  char call[192];      /* the launcher: ftax-eager's table key */
  char init[192];      /* its init hook, or "" */
  const char *free_fn; /* or NULL */
  const char *file;
  int lib;
} ft_twin_call;

/* The twin of call k (fp16: float32 tensors are stored as half), or nonzero with the reason in
 * why when there is none or this call's parameters are beyond it. */
int ft_cuda_twin(const ft_kcall *k, int fp16, ft_twin_call *t, char *why, size_t wn);
/* Whether call k has a twin that takes its parameters (the same answer as ft_cuda_twin, without
 * writing the launcher's text); nonzero with the reason in why if not. */
int ft_cuda_twin_fits(const ft_kcall *k, char *why, size_t wn);
/* The twin of an entry whatever the parameters (for building the table); nonzero if none. */
int ft_cuda_twin_of_entry(const ft_kentry *e, int fp16, ft_twin_call *t);

/* Helpers for the entries' declarations (compiler/ops/). */
uint16_t ft_half_saturating(float x); /* float32 to half, +-65504 for what half cannot hold */
int ft_value_dtype(const ft_graph *g, int v); /* the dtype of value v, 0 for an omitted one */

#endif

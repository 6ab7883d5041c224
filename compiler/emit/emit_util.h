/* Helpers shared by the C and CUDA emitters (compiler/emit/emit_util.c). */
#ifndef FTAX_EMIT_UTIL_H
#define FTAX_EMIT_UTIL_H

#include <stdio.h>

#include "passes.h"

/* The templates already written into one program. */
typedef struct ft_pasted { const char *names[128]; int n; } ft_pasted;

/* Write template FILE (templates/c or templates/cuda), its #include "x" dependencies first. */
int ft_emit_paste(FILE *f, const char *file, ft_pasted *done, ft_err *e);
/* The same by base name and extension ("gemm", "h"). */
int ft_emit_paste_name(FILE *f, const char *base, const char *ext, ft_pasted *done, ft_err *e);
void ft_emit_c_string(FILE *f, const char *s);  /* a C string literal */
void ft_emit_comment(FILE *f, const char *s);   /* text safe inside a comment */
void ft_emit_double(FILE *f, double x);         /* a literal, infinities and NaN included */
/* The name in capitals (the header's guard and macro prefix). */
void ft_emit_upper(char *dst, size_t n, const char *name);
/* A program header's opening: guard, extern "C", the size macros (ARENA_BYTES with arena_note,
 * WEIGHT_BYTES, NUM_INPUTS/OUTPUTS, INPUT_k/OUTPUT_k_BYTES) and the ctx typedef. what names the
 * program ("program", "CUDA program"). */
void ft_emit_header_top(FILE *h, const ft_graph *g, const ft_memplan *mp, const char *P, const char *G,
                        const char *what, const char *arena_note);
/* static const ft_io_desc NAME[] = {...} for the values vals[0..n) */
void ft_emit_io_table(FILE *f, const char *name, const ft_graph *g, const int *vals, int n);
/* The command-line tool over the API, left out when GUARD_NO_MAIN is defined: the CLI template
 * cli (cli.h, cli_cuda.cuh), the tables of the graph's inputs and outputs, program_main.<ext>. */
int ft_emit_main(FILE *f, const char *guard, const char *cli, const char *ext, const ft_graph *g, ft_pasted *done,
                 ft_err *e);
/* OUT.weights: the header of templates/c/weights.h, then every constant the memory plan put in
 * the weights, at its offset. */
int ft_emit_weights(FILE *w, const ft_graph *g, const ft_memplan *mp, const char *hash, ft_err *e);
/* The weights' payload alone (no header), in pieces, to put(ctx, bytes, n): --freestanding
 * writes it as a C array. */
typedef void (*ft_bytes_fn)(void *ctx, const void *bytes, size_t n);
int ft_emit_weights_payload(const ft_graph *g, const ft_memplan *mp, ft_bytes_fn put, void *ctx, ft_err *e);

#endif

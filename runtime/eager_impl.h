/* The inside of an ft_eager handle, shared by eager.c (load, run) and profile.c. */
#ifndef FTAX_EAGER_IMPL_H
#define FTAX_EAGER_IMPL_H

#include "alloc.h"
#include "eager.h"

/* Who owns the bytes a value's storage root points at. */
enum { FT_OWN_NONE = 0, /* a constant of the graph, or a caller's input buffer */
       FT_OWN_CACHE,    /* a block of the caching allocator */
       FT_OWN_MALLOC,   /* data an op's infer malloc'ed (Shape, Constant, Size) */
       FT_OWN_DEVICE }; /* a block of the device's cache */

typedef struct ft_storage {
  void *ptr;
  int refs; /* live values whose data is ptr (the value itself and its views) */
  int own;
  int cls;  /* size class, for FT_OWN_CACHE */
} ft_storage;

struct ft_eager {
  ft_graph *g;          /* the graph as loaded: values' tensors hold the run's data */
  int *uses;            /* per value: node input slots reading it (+1 if a graph output) */
  int *uses_left;       /* per value, counting down during a run */
  int *root;            /* per value: the value whose storage it uses (itself unless a view) */
  unsigned char *live;  /* per value: computed from the run's inputs or a loop's state, not known when a
                           program is compiled (ft_opctx.live: checks for constants skip it) */
  /* Loops run at run time (guard entry FT_GUARD_LOOP): per node, the first and last node of the
   * loop body it is in, -1 if none. A value made before a body and read in it counts one use for
   * the whole loop, given back when the loop ends; values made in the body count per iteration. */
  int *loop_first, *loop_last;
  int *seen;            /* per value: the last loop exit that counted it (stamp) */
  int stamp;
  ft_storage *store;    /* per value, meaningful where root[v] == v */
  ft_tensor *out_desc;  /* per graph output: dtype and shape learned at load */
  int *out_slot;        /* per value: the first graph output it is, -1 if none */
  void *const *outputs; /* the caller's output buffers during a run */
  ft_cache cache;

  /* on a device (NULL on the CPU): a value lives either on the host (its tensor's data) or on
   * the device (dptr; its tensor's data stays NULL, so infer and plan see it as unknown) */
  const ft_eager_device *dev;
  void *dctx;
  void **dptr;          /* per value: its device data during a run */
  void **cdev;          /* per constant: its device copy, made on first use by a device node */
  int *cdev_cls;

  int profiling;
  int *node_row;        /* per node: its row in rows */
  void **packed;        /* per node: its constant weight in the kernel's packed layout, made once */
  ft_eager_oprow *rows; /* per op type, in order of first appearance */
  ft_eager_oprow *sorted;
  int n_rows;
  int64_t runs, wall_ns, kernel_ns;
};

#endif

/* The kernels' thread pool (templates/c/parallel.h): every index of a loop runs exactly once,
 * whatever the thread count; a loop started from inside a chunk, or by a second thread while
 * the pool is busy, runs serially and still completes; a worker that is kept from running
 * delays nobody (the caller takes its share). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "movement.h"
#include "parallel.h"

typedef struct {
  _Atomic int *hits;
  int64_t n;
  _Atomic int chunks;
  _Atomic int64_t bad; /* ranges outside [0, n) or empty */
} count_ctx;

static void count_run(const void *ctx, int64_t lo, int64_t hi) {
  count_ctx *c = (count_ctx *)ctx;
  if (lo < 0 || hi > c->n || lo >= hi) atomic_fetch_add(&c->bad, 1);
  for (int64_t i = lo; i < hi && i >= 0 && i < c->n; i++) atomic_fetch_add(&c->hits[i], 1);
  atomic_fetch_add(&c->chunks, 1);
}

static void check_once(int threads, int64_t n) {
  ft_set_threads(threads);
  count_ctx c = {calloc((size_t)n, sizeof(_Atomic int)), n, 0, 0};
  cr_assert_not_null(c.hits);
  ft_parallel_for(n, 1, count_run, &c);
  cr_assert_eq(atomic_load(&c.bad), 0, "%d threads, n %lld: a chunk outside the loop", threads, (long long)n);
  for (int64_t i = 0; i < n; i++)
    cr_assert_eq(atomic_load(&c.hits[i]), 1, "%d threads, n %lld: index %lld ran %d times", threads,
                 (long long)n, (long long)i, atomic_load(&c.hits[i]));
  free(c.hits);
}

Test(parallel, every_index_once_for_any_thread_count) {
  static const int threads[] = {1, 2, 3, 8, 0};
  static const int64_t sizes[] = {1, 2, 7, 64, 1000, 100003};
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) check_once(threads[t], sizes[s]);
  ft_set_threads(0);
}

Test(parallel, many_loops_in_a_row) { /* the open/close handshake, thousands of times */
  ft_set_threads(4);
  for (int r = 0; r < 5000; r++) check_once(4, 1 + r % 37);
  ft_set_threads(0);
}

Test(parallel, not_parallel_runs_one_chunk_on_the_caller) {
  ft_set_threads(4);
  count_ctx c = {calloc(100, sizeof(_Atomic int)), 100, 0, 0};
  ft_parallel_for(100, 0, count_run, &c);
  cr_assert_eq(atomic_load(&c.chunks), 1);
  for (int i = 0; i < 100; i++) cr_assert_eq(atomic_load(&c.hits[i]), 1);
  free(c.hits);
  ft_set_threads(0);
}

/* A loop inside a chunk of another loop. */
typedef struct {
  _Atomic int *hits; /* outer x inner */
  int64_t inner;
} nest_ctx;

typedef struct {
  const nest_ctx *outer;
  int64_t row;
} nest_row_ctx;

static void nest_inner(const void *ctx, int64_t lo, int64_t hi) {
  const nest_row_ctx *r = (const nest_row_ctx *)ctx;
  for (int64_t j = lo; j < hi; j++) atomic_fetch_add(&r->outer->hits[r->row * r->outer->inner + j], 1);
}

static void nest_outer(const void *ctx, int64_t lo, int64_t hi) {
  const nest_ctx *c = (const nest_ctx *)ctx;
  for (int64_t i = lo; i < hi; i++) {
    nest_row_ctx r = {c, i};
    ft_parallel_for(c->inner, 1, nest_inner, &r);
  }
}

Test(parallel, nested_loops_complete) {
  ft_set_threads(3);
  nest_ctx c = {calloc(50 * 40, sizeof(_Atomic int)), 40};
  ft_parallel_for(50, 1, nest_outer, &c);
  for (int i = 0; i < 50 * 40; i++) cr_assert_eq(atomic_load(&c.hits[i]), 1, "cell %d", i);
  free(c.hits);
  ft_set_threads(0);
}

/* Two threads of the caller's program running loops at once (two handles of ftax-eager). */
static void *caller_thread(void *arg) {
  (void)arg;
  for (int r = 0; r < 300; r++) {
    int64_t n = 1 + r % 97;
    count_ctx c = {calloc((size_t)n, sizeof(_Atomic int)), n, 0, 0};
    ft_parallel_for(n, 1, count_run, &c);
    for (int64_t i = 0; i < n; i++)
      if (atomic_load(&c.hits[i]) != 1) { free(c.hits); return (void *)1; }
    free(c.hits);
  }
  return NULL;
}

Test(parallel, concurrent_callers) {
  ft_set_threads(3);
  pthread_t a, b;
  void *ra, *rb;
  cr_assert_eq(pthread_create(&a, NULL, caller_thread, NULL), 0);
  cr_assert_eq(pthread_create(&b, NULL, caller_thread, NULL), 0);
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  cr_assert_null(ra, "first caller saw an index run other than once");
  cr_assert_null(rb, "second caller saw an index run other than once");
  ft_set_threads(0);
}

/* A chunk that sleeps stands for a thread the OS does not run: the loop still completes, and
 * with the others done by whichever thread is free. */
typedef struct {
  _Atomic int *hits;
  int64_t n;
} slow_ctx;

static void slow_run(const void *ctx, int64_t lo, int64_t hi) {
  const slow_ctx *c = (const slow_ctx *)ctx;
  for (int64_t i = lo; i < hi; i++) {
    if (i == 0) {
      struct timespec ts = {0, 20 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&c->hits[i], 1);
  }
}

Test(parallel, a_stalled_chunk_completes) {
  ft_set_threads(2);
  slow_ctx c = {calloc(256, sizeof(_Atomic int)), 256};
  ft_parallel_for(256, 1, slow_run, &c);
  for (int i = 0; i < 256; i++) cr_assert_eq(atomic_load(&c.hits[i]), 1, "index %d", i);
  free(c.hits);
  ft_set_threads(0);
}

Test(parallel, thread_count) {
  ft_set_threads(3);
  cr_assert_eq(ft_get_threads(), 3);
  ft_set_threads(0);
  cr_assert_geq(ft_get_threads(), 1, "the default is the CPUs the process may use");
}

/* The busy-machine policy, on made-up timings: stalls in a window switch to the caller alone
 * for a stretch of time, which doubles while stalls go on and resets after a clean window. */
static void adapt_window(ft_par_adapt_state *a, int stalls, int64_t now) {
  for (int i = 0; i < FT_PAR_WINDOW; i++) /* stall: waited 0.5 ms after 0.1 ms of work */
    ft_par_adapt(a, 100000, i < stalls ? 500000 : 1000, now, 0);
}

Test(parallel, busy_machine_policy) {
  ft_par_adapt_state a;
  memset(&a, 0, sizeof a);
  const int64_t t = 1000000000;
  adapt_window(&a, FT_PAR_STALLS - 1, t);
  cr_assert_eq(a.serial_until, 0, "fewer stalls than the threshold keep the threads");
  adapt_window(&a, FT_PAR_STALLS, t);
  cr_assert_eq(a.serial_until, t + FT_PAR_SERIAL_MIN_NS);
  a.serial_until = 0; /* the serial stretch ran out; stalls go on */
  adapt_window(&a, FT_PAR_WINDOW, 2 * t);
  cr_assert_eq(a.serial_until, 2 * t + 2 * FT_PAR_SERIAL_MIN_NS, "the stretch doubles while stalls go on");
  a.serial_until = 0;
  adapt_window(&a, 0, 3 * t);
  cr_assert_eq(a.serial_until, 0);
  adapt_window(&a, FT_PAR_STALLS, 4 * t);
  cr_assert_eq(a.serial_until, 4 * t + FT_PAR_SERIAL_MIN_NS, "a clean window resets the stretch");
  for (int i = 0; i < 20; i++) { a.serial_until = 0; adapt_window(&a, FT_PAR_WINDOW, 5 * t); }
  cr_assert_eq(a.serial_until, 5 * t + FT_PAR_SERIAL_MAX_NS, "the stretch is bounded");
  memset(&a, 0, sizeof a);
  for (int i = 0; i < 4 * FT_PAR_WINDOW; i++) ft_par_adapt(&a, 1000, 15000, t, 0); /* short waits are noise */
  cr_assert_eq(a.serial_until, 0);
  /* a worker on the caller's CPU is a stall however short the waits */
  for (int i = 0; i < FT_PAR_WINDOW; i++) ft_par_adapt(&a, 100000, 1000, t, i < FT_PAR_STALLS);
  cr_assert_eq(a.serial_until, t + FT_PAR_SERIAL_MIN_NS, "shared CPUs count as stalls");
  memset(&a, 0, sizeof a);
  a.settle = FT_PAR_WINDOW; /* workers just started: their first window is not judged */
  for (int i = 0; i < FT_PAR_WINDOW; i++) ft_par_adapt(&a, 100000, 500000, t, 1);
  cr_assert_eq(a.serial_until, 0, "the settling window counts no stalls");
  cr_assert_eq(a.window, 0);
  adapt_window(&a, FT_PAR_STALLS, t);
  cr_assert_eq(a.serial_until, t + FT_PAR_SERIAL_MIN_NS, "the window after it is judged");
}

/* Each chunk gives its CPU away, so that a worker confined to the caller's CPU gets to run
 * chunks of the open loop. */
static void yield_run(const void *ctx, int64_t lo, int64_t hi) {
  _Atomic int *hits = (_Atomic int *)ctx;
  for (int64_t i = lo; i < hi; i++) {
    sched_yield();
    atomic_fetch_add(&hits[i], 1);
  }
}

/* On the pool itself: with the process confined to one CPU, the worker runs its chunks on the
 * caller's CPU, and the pool turns to the caller alone after the workers' first window. */
Test(parallel, worker_on_the_callers_cpu_sends_loops_to_the_caller) {
  cpu_set_t set;
  cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
  int one = 0;
  while (!CPU_ISSET(one, &set)) one++;
  CPU_ZERO(&set);
  CPU_SET(one, &set);
  cr_assert_eq(sched_setaffinity(0, sizeof set, &set), 0); /* before the workers start: they inherit it */
  ft_set_threads(2);
  ft_pool *P = &ft_pool_shared;
  enum { N = 64 };
  static _Atomic int hits[N];
  int loops = 0;
  for (; loops < 20 * FT_PAR_WINDOW && P->adapt.serial_until == 0; loops++) ft_parallel_for(N, 1, yield_run, hits);
  cr_assert_neq(P->adapt.serial_until, 0, "%d loops with a worker on the caller's CPU, still threaded", loops);
  cr_assert_gt(loops, FT_PAR_WINDOW, "judged within the settling window");
  for (int i = 0; i < N; i++) cr_assert_eq(atomic_load(&hits[i]), loops, "index %d", i);
  ft_set_threads(0);
}

static pthread_t stretch_caller;
static void mark_owner(const void *ctx, int64_t lo, int64_t hi) {
  _Atomic int *owner = (_Atomic int *)ctx;
  for (int64_t i = lo; i < hi; i++) owner[i] = pthread_equal(pthread_self(), stretch_caller) ? 1 : 2;
}

/* On the pool itself: a stretch set in the future keeps every loop on the caller, one that has
 * passed is dropped and the workers run chunks again. */
Test(parallel, serial_stretch_ends_in_time) {
  ft_set_threads(3);
  ft_pool *P = &ft_pool_shared;
  enum { N = 4096 };
  static _Atomic int owner[N];
  stretch_caller = pthread_self();
  P->adapt.serial_until = ft_par_now_ns() + 60 * (int64_t)1000000000;
  ft_parallel_for(N, 1, mark_owner, owner);
  for (int i = 0; i < N; i++) cr_assert_eq(owner[i], 1, "item %d not run by the caller alone", i);
  cr_assert_neq(P->adapt.serial_until, 0);
  P->adapt.serial_until = ft_par_now_ns() - 1;
  ft_parallel_for(N, 1, mark_owner, owner);
  cr_assert_eq(P->adapt.serial_until, 0, "a stretch that has passed is dropped");
  ft_set_threads(0);
}

/* Concat copies its output in chunks on the pool's threads (movement.h): chunk boundaries fall
 * inside rows and inputs, including an empty input and one of 3 bytes. */
Test(parallel, concat_in_chunks_matches_row_by_row) {
  const int64_t outer = 3, bytes[4] = {100000, 0, 3, 70001};
  int64_t row = 0;
  for (int i = 0; i < 4; i++) row += bytes[i];
  unsigned char *x[4], *want = malloc((size_t)(outer * row)), *y = malloc((size_t)(outer * row));
  for (int i = 0; i < 4; i++) {
    x[i] = malloc((size_t)(outer * bytes[i]) + 1);
    for (int64_t j = 0; j < outer * bytes[i]; j++) x[i][j] = (unsigned char)(j * 7 + i * 31 + j / 251);
  }
  unsigned char *w = want;
  for (int64_t o = 0; o < outer; o++)
    for (int i = 0; i < 4; i++) {
      memcpy(w, x[i] + o * bytes[i], (size_t)bytes[i]);
      w += bytes[i];
    }
  const int64_t p[6] = {4, outer, bytes[0], bytes[1], bytes[2], bytes[3]};
  const void *in[4] = {x[0], x[1], x[2], x[3]};
  void *out[1] = {y};
  cr_assert(outer * row > 4 * FT_CONCAT_CHUNK, "too small to be split over threads");
  for (int threads = 1; threads <= 3; threads += 2) {
    ft_set_threads(threads);
    memset(y, 0xEE, (size_t)(outer * row));
    ft_concat(p, NULL, in, out, NULL);
    cr_assert(memcmp(y, want, (size_t)(outer * row)) == 0, "concat differs at %d threads", threads);
  }
  ft_set_threads(0);
  for (int i = 0; i < 4; i++) free(x[i]);
  free(want);
  free(y);
}

/* The shares (ft_pool_chunks): a thread runs its own contiguous share of the loop first, in
 * order, then takes what is left of the others' shares in turn, so every index runs once even
 * when the other threads never come; chunks are at most the grain and shrink to one item at
 * the end of each share. Checked on a pool of its own with one thread taking. */
typedef struct {
  int64_t lo[128], hi[128];
  int n;
} order_ctx;

static void order_run(const void *ctx, int64_t lo, int64_t hi) {
  order_ctx *c = (order_ctx *)ctx;
  if (c->n < 128) { c->lo[c->n] = lo; c->hi[c->n] = hi; }
  c->n++;
}

Test(parallel, own_share_first_then_the_others) {
  static ft_pool P;
  static order_ctx c;
  P.fn = order_run;
  P.ctx = &c;
  P.n = 100;
  P.grain = 5;
  P.helpers = 3; /* four shares of 25 */
  for (int t = 0; t < 4; t++) {
    atomic_store(&P.share[t].next, 25 * t);
    P.share[t].end = 25 * (t + 1);
  }
  atomic_store(&P.done, 0);
  ft_pool_chunks(&P, 2);
  cr_assert_eq(atomic_load(&P.done), 100);
  cr_assert(c.n > 20 && c.n <= 128, "%d chunks: the ends of the shares were not cut finer", c.n);
  static const int64_t shares_in_order[] = {2, 3, 0, 1};
  int i = 0;
  for (int k = 0; k < 4; k++) {
    int64_t at = 25 * shares_in_order[k], end = at + 25;
    cr_assert_eq(c.hi[i] - c.lo[i], 5, "share %d starts with a whole grain", k);
    for (; at < end; i++) {
      cr_assert_eq(c.lo[i], at, "chunk %d starts at %lld, not %lld", i, (long long)c.lo[i], (long long)at);
      cr_assert(c.hi[i] > c.lo[i] && c.hi[i] - c.lo[i] <= 5 && c.hi[i] <= end, "chunk %d: [%lld, %lld)", i,
                (long long)c.lo[i], (long long)c.hi[i]);
      at = c.hi[i];
    }
    cr_assert_eq(c.hi[i - 1] - c.lo[i - 1], 1, "share %d ends with a single item", k);
  }
  cr_assert_eq(i, c.n);
}

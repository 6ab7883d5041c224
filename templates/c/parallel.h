/* Parallel loops for the kernels: one persistent pool of worker threads, shared by every kernel
 * of the process, with dynamic hand-out of work.
 *
 *   ft_parallel_for(n, par, fn, ctx)    calls fn(ctx, lo, hi) over [0, n) in chunks, on the
 *                                       pool's threads when par (the kernel's own test that
 *                                       the loop is worth waking threads for), else serially
 *   ft_set_threads(n)                   threads to use (caller included); 0 = the CPUs this
 *                                       process may run on (sched_getaffinity), the default
 *   ft_get_threads()
 *   ft_par_local_threads                this thread's own setting, over ft_set_threads's when
 *                                       > 0 (a generated program's per-context thread count)
 *
 * Why not OpenMP: a parallel region ends at a barrier that every thread of the team must reach,
 * including one the OS has descheduled because the machine is busy; with hundreds of regions per
 * inference, a 2-thread program on a loaded machine became several times slower than its own
 * 1-thread self. Here the calling thread starts on the chunks at once and the workers take
 * chunks when they get to run, so a late worker only misses work: the caller waits for chunks
 * that were taken, never for a worker to arrive. Idle workers spin a bounded while
 * (FT_PAR_SPIN polls), then sleep on a condition variable.
 *
 * Each thread has its own share of a loop (the same contiguous range for the same loop, run
 * after run) and takes chunks from it first, then from the others' shares, each from its front
 * counter. On a quiet machine every thread so runs its own share and the output lines it writes
 * stay in its own core's cache from one run to the next; from a single shared counter the
 * chunks fell to whichever thread came first, and on a 2-core AMD EPYC (Zen 5) the same output
 * lines moved between the cores every run: several convolutions ran slower on 2 threads than on
 * 1 (bench/kernels/kernel_table.sh). A thread that is late or descheduled still only loses its
 * share to the others.
 *
 * A worker the OS deschedules while it holds a chunk still makes the caller wait. On a busy
 * machine the OS may also put a worker on the caller's own CPU while the other CPUs run the
 * neighbours: then the two take turns on one CPU, the idle worker's polling takes the caller's
 * time, and 2 threads ran EfficientNet-B0 1.45x slower than 1 under three spinning neighbours.
 * When either keeps happening (in a window of FT_PAR_WINDOW loops, FT_PAR_STALLS had the caller
 * wait on others longer than it worked itself, or a worker ran chunks on the caller's CPU), the
 * pool runs the next loops on the caller alone, then tries threads again; the serial stretch
 * doubles while the stalls go on (ft_par_adapt). So a loaded machine costs about the 1-thread
 * time, not a multiple of it. The first window after workers start is not judged: a new thread
 * begins on its creator's CPU until the OS moves it.
 *
 * Which thread runs a chunk never changes a result: every item is computed by the same
 * sequence of operations (the kernels' own rule). A call made from inside a chunk, or while
 * another thread owns the pool, runs serially: several threads that run models at once share the
 * pool loop by loop (whoever opens a loop while it is free gets the workers; the others run that
 * loop on their own thread), so no caller waits for another's loop, and none is starved of its
 * own thread. FT_NO_THREADS (or a target without POSIX
 * threads) compiles the pool out: every loop runs on the caller. */
#ifndef FT_PARALLEL_H
#define FT_PARALLEL_H

#include <stdint.h>

typedef void (*ft_par_fn)(const void *ctx, int64_t lo, int64_t hi);

/* C++ sees this header only in CUDA programs' host code (cli.h), which runs no C kernels. */
#if !defined(FT_NO_THREADS) && (defined(__cplusplus) || !(defined(__unix__) || defined(__APPLE__)))
#define FT_NO_THREADS 1
#endif

#ifdef FT_NO_THREADS

static inline void ft_set_threads(int n) { (void)n; }
static inline int ft_get_threads(void) { return 1; }
static inline void ft_parallel_for(int64_t n, int par, ft_par_fn fn, const void *ctx) {
  (void)par;
  if (n > 0) fn(ctx, 0, n);
}

#else

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#ifndef FT_PAR_MAX_THREADS
#define FT_PAR_MAX_THREADS 256
#endif
/* Polls of an idle worker before it sleeps (about 50-100 us), and of a caller waiting for taken
 * chunks before it yields its CPU to whoever holds them. */
#ifndef FT_PAR_SPIN
#define FT_PAR_SPIN 4096
#endif
/* Chunks per thread a loop is cut into: enough that a thread that stalls holds little work.
 * The last few chunks of a share shrink (a quarter of what is left, down to one item), so that
 * the threads finish a loop of large items together: ViT-B/16's GEMMs, 96 column panels a
 * loop, cost a whole chunk of 6 panels at their end. 2 threads, alternating: ViT-B/16 77.3 ->
 * 75.4 ms, SqueezeNet 1.40 -> 1.38, EfficientNet-B0 3.10 -> 3.13 (noise level). */
#ifndef FT_PAR_CHUNKS_PER_THREAD
#define FT_PAR_CHUNKS_PER_THREAD 8
#endif
/* Stall detection (ft_par_adapt): a loop stalled when its caller waited on other threads longer
 * than it worked and longer than FT_PAR_STALL_NS, or a worker ran a chunk of it on the caller's
 * CPU; FT_PAR_STALLS stalls in a window of
 * FT_PAR_WINDOW loops switch to the caller alone for the next FT_PAR_SERIAL_MIN_NS, doubled (up
 * to FT_PAR_SERIAL_MAX_NS) each time the stalls go on, back to the minimum after a clean window.
 * The stretch is a time, not a count of loops: a model of few large loops and one of many small
 * ones both go back to threads within FT_PAR_SERIAL_MAX_NS of the machine becoming quiet. */
#define FT_PAR_STALL_NS 20000
#define FT_PAR_WINDOW 16
#define FT_PAR_STALLS 4
#define FT_PAR_SERIAL_MIN_NS 10000000  /* 10 ms */
#define FT_PAR_SERIAL_MAX_NS 320000000 /* 320 ms */

/* The caller's record of recent loops (only the thread that owns the pool touches it). */
typedef struct {
  int window, stalls;
  int settle;                        /* loops not judged: workers just started */
  int64_t serial_until, serial_next; /* ns: the caller alone until then; the next stretch */
} ft_par_adapt_state;

/* One threaded loop's timings: work, the caller's own chunks; wait, its wait for the others; now,
 * the clock at its end; shared, whether a worker ran a chunk on the caller's CPU. */
static inline void ft_par_adapt(ft_par_adapt_state *a, int64_t work_ns, int64_t wait_ns, int64_t now_ns,
                                int shared) {
  if (a->settle > 0) {
    a->settle--;
    return;
  }
  if (a->serial_next < FT_PAR_SERIAL_MIN_NS) a->serial_next = FT_PAR_SERIAL_MIN_NS;
  a->stalls += shared || (wait_ns > work_ns && wait_ns > FT_PAR_STALL_NS);
  if (++a->window < FT_PAR_WINDOW) return;
  if (a->stalls >= FT_PAR_STALLS) {
    a->serial_until = now_ns + a->serial_next;
    a->serial_next = a->serial_next * 2 < FT_PAR_SERIAL_MAX_NS ? a->serial_next * 2 : FT_PAR_SERIAL_MAX_NS;
  } else {
    a->serial_next = FT_PAR_SERIAL_MIN_NS;
  }
  a->window = a->stalls = 0;
}

/* The CPU the calling thread runs on, or -1 where that cannot be asked. */
#ifdef __linux__
int sched_getcpu(void); /* <sched.h> declares it only under _GNU_SOURCE */
static inline int ft_par_cpu(void) { return sched_getcpu(); }
#else
static inline int ft_par_cpu(void) { return -1; }
#endif

static inline int64_t ft_par_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One thread's share of the open loop: chunks are taken from next up to end; cpu, where the
 * thread of the same index ran its first chunk of the loop (-1: none). A cache line of its own,
 * so that the threads taking from their own shares do not contend. */
typedef struct {
  _Atomic int64_t next;
  int64_t end;
  _Atomic int cpu;
} __attribute__((aligned(64))) ft_par_share;

typedef struct {
  _Atomic unsigned seq;   /* odd while a loop is open to workers */
  _Atomic int64_t active; /* workers inside the open loop */
  _Atomic int busy;       /* a caller owns the pool */
  _Atomic int sleepers;
  _Atomic int64_t done;
  /* the open loop: written by its caller while no worker is inside */
  ft_par_fn fn;
  const void *ctx;
  int64_t n, grain;
  int helpers;            /* workers allowed into this loop (threads - 1) */
  ft_par_share share[FT_PAR_MAX_THREADS]; /* [0] the caller's, [1 + i] worker i's */
  int want, started;      /* threads wanted (0: default), workers started */
  int deflt;              /* the default, once asked (0: not yet) */
  ft_par_adapt_state adapt;
  pthread_mutex_t mu;
  pthread_cond_t cv;
} ft_pool;

/* One pool per process: the kernel headers are compiled into several objects of ftax-eager and
 * ftaxc, and they must share it (a weak definition: the linker keeps one). */
__attribute__((weak)) ft_pool ft_pool_shared = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
/* The calling thread's own thread count (0: the pool's setting); weak for the same reason. */
__attribute__((weak)) _Thread_local int ft_par_local_threads;

static inline void ft_par_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static inline int ft_default_threads(void) {
#if defined(__linux__) && defined(CPU_COUNT)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* The default is asked of the OS once, not on every loop (a system call), and again after
 * ft_set_threads(0). */
static inline int ft_get_threads(void) {
  int t = ft_par_local_threads > 0 ? ft_par_local_threads
                                   : atomic_load_explicit((_Atomic int *)&ft_pool_shared.want, memory_order_relaxed);
  if (t <= 0) {
    t = atomic_load_explicit((_Atomic int *)&ft_pool_shared.deflt, memory_order_relaxed);
    if (t <= 0) {
      t = ft_default_threads();
      atomic_store_explicit((_Atomic int *)&ft_pool_shared.deflt, t, memory_order_relaxed);
    }
  }
  return t < FT_PAR_MAX_THREADS ? t : FT_PAR_MAX_THREADS;
}

static inline void ft_set_threads(int n) {
  atomic_store_explicit((_Atomic int *)&ft_pool_shared.want, n > 0 ? n : 0, memory_order_relaxed);
  if (n <= 0) atomic_store_explicit((_Atomic int *)&ft_pool_shared.deflt, 0, memory_order_relaxed);
}

/* Thread self's chunks: its own share, then the others' in turn, until none is left. */
static inline void ft_pool_chunks(ft_pool *P, int self) {
  const int64_t g = P->grain;
  const int threads = P->helpers + 1;
  int placed = 0;
  int64_t ran = 0;
  for (int v = 0; v < threads; v++) {
    ft_par_share *sh = &P->share[(self + v) % threads];
    const int64_t end = sh->end;
    for (;;) {
      int64_t lo = atomic_load(&sh->next);
      if (lo >= end) break;
      int64_t take = (end - lo) / 4;
      take = take > g ? g : take < 1 ? 1 : take;
      if (!atomic_compare_exchange_weak(&sh->next, &lo, lo + take)) continue;
      if (!placed) { /* before the chunk counts as done: the caller reads it after */
        atomic_store_explicit(&P->share[self].cpu, ft_par_cpu(), memory_order_relaxed);
        placed = 1;
      }
      P->fn(P->ctx, lo, lo + take);
      ran += take;
    }
  }
  if (ran) atomic_fetch_add(&P->done, ran); /* once: a count per chunk moved its line between the cores */
}

/* An idle worker: poll for a new loop, then sleep until one opens. Returns the new seq. */
static inline unsigned ft_pool_wait(ft_pool *P, unsigned seen) {
  for (int i = 0; i < FT_PAR_SPIN; i++) {
    unsigned s = atomic_load_explicit(&P->seq, memory_order_acquire);
    if (s != seen) return s;
    ft_par_pause();
  }
  pthread_mutex_lock(&P->mu);
  atomic_fetch_add(&P->sleepers, 1);
  unsigned s;
  while ((s = atomic_load(&P->seq)) == seen) pthread_cond_wait(&P->cv, &P->mu);
  atomic_fetch_sub(&P->sleepers, 1);
  pthread_mutex_unlock(&P->mu);
  return s;
}

static void *ft_pool_worker(void *arg) {
  ft_pool *P = &ft_pool_shared;
  const int index = (int)(intptr_t)arg;
  unsigned seen = atomic_load(&P->seq);
  for (;;) {
    unsigned s = ft_pool_wait(P, seen);
    seen = s;
    if (!(s & 1)) continue; /* a loop closed before this worker saw it open */
    /* enter, then check the loop is still the one seen: its caller closes it before it waits
     * for active to drop, so a worker that enters late leaves without touching its fields */
    atomic_fetch_add(&P->active, 1);
    if (atomic_load(&P->seq) == s && index < P->helpers) ft_pool_chunks(P, 1 + index);
    atomic_fetch_sub(&P->active, 1);
  }
  return NULL;
}

/* Start workers up to threads - 1 (once; they live as long as the process). */
static inline int ft_pool_start(ft_pool *P, int threads) {
  if (P->started < threads - 1) P->adapt.settle = FT_PAR_WINDOW;
  while (P->started < threads - 1) {
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &at, ft_pool_worker, (void *)(intptr_t)P->started);
    pthread_attr_destroy(&at);
    if (rc != 0) break; /* run with the workers there are */
    P->started++;
  }
  return P->started + 1;
}

/* Spin on a counter reaching a value; after a while yield the CPU, which on a busy machine may
 * be what the thread holding the last chunk needs to finish it. The load is sequentially
 * consistent: the caller's wait for active to drop must not pass its store that closed the loop. */
static inline void ft_pool_await(_Atomic int64_t *c, int64_t v) {
  for (int i = 0; atomic_load(c) != v;) {
    if (i < FT_PAR_SPIN) { ft_par_pause(); i++; }
    else sched_yield();
  }
}

static inline void ft_parallel_for(int64_t n, int par, ft_par_fn fn, const void *ctx) {
  if (n <= 0) return;
  ft_pool *P = &ft_pool_shared;
  int threads = ft_get_threads();
  if (n == 1 || !par || threads <= 1 || atomic_load_explicit(&P->busy, memory_order_relaxed) ||
      atomic_exchange(&P->busy, 1)) {
    fn(ctx, 0, n);
    return;
  }
  if (P->adapt.serial_until) { /* the machine was busy: the caller alone for a while */
    if (ft_par_now_ns() < P->adapt.serial_until) {
      fn(ctx, 0, n);
      atomic_store(&P->busy, 0);
      return;
    }
    P->adapt.serial_until = 0;
  }
  threads = ft_pool_start(P, threads);
  int64_t chunks = (int64_t)threads * FT_PAR_CHUNKS_PER_THREAD;
  P->fn = fn;
  P->ctx = ctx;
  P->n = n;
  P->grain = n < chunks ? 1 : (n + chunks - 1) / chunks;
  P->helpers = threads - 1;
  for (int t = 0; t < threads; t++) { /* contiguous shares, the same for the same loop */
    atomic_store_explicit(&P->share[t].next, n * t / threads, memory_order_relaxed);
    P->share[t].end = n * (t + 1) / threads;
    atomic_store_explicit(&P->share[t].cpu, -1, memory_order_relaxed);
  }
  atomic_store(&P->done, 0);
  unsigned s = atomic_load(&P->seq) + 1; /* odd: open */
  atomic_store(&P->seq, s);
  if (atomic_load(&P->sleepers) > 0) {
    pthread_mutex_lock(&P->mu);
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
  }
  int64_t t0 = ft_par_now_ns();
  ft_pool_chunks(P, 0);
  int64_t t1 = ft_par_now_ns();
  ft_pool_await(&P->done, n);
  int64_t t2 = ft_par_now_ns();
  const int cpu = ft_par_cpu();
  int shared = 0;
  for (int t = 1; t < threads && cpu >= 0; t++)
    shared |= atomic_load_explicit(&P->share[t].cpu, memory_order_relaxed) == cpu;
  ft_par_adapt(&P->adapt, t1 - t0, t2 - t1, t2, shared);
  atomic_store(&P->seq, s + 1); /* closed */
  ft_pool_await(&P->active, 0);
  atomic_store(&P->busy, 0);
}

#endif /* FT_NO_THREADS */

#endif

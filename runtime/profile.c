/* ftax-eager's profile: kernel time per op type against wall time per run (see eager.h). */
#include <stdlib.h>
#include <string.h>

#include "eager_impl.h"
#include "text.h"

void ft_eager_profile_reset(ft_eager *h) {
  for (int r = 0; r < h->n_rows; r++) {
    h->rows[r].calls = 0;
    h->rows[r].kernel_ns = 0;
    h->rows[r].node_ns = 0;
  }
  h->runs = h->wall_ns = h->kernel_ns = 0;
}

void ft_eager_profile_enable(ft_eager *h, int on) {
  h->profiling = on;
  ft_eager_profile_reset(h);
}

static int by_kernel_time(const void *a, const void *b) {
  const ft_eager_oprow *x = a, *y = b;
  if (x->kernel_ns != y->kernel_ns) return x->kernel_ns > y->kernel_ns ? -1 : 1;
  if (x->calls != y->calls) return x->calls > y->calls ? -1 : 1;
  return strcmp(x->op_type, y->op_type);
}

void ft_eager_profile_get(ft_eager *h, ft_eager_profile *p) {
  memcpy(h->sorted, h->rows, sizeof *h->rows * (size_t)h->n_rows);
  qsort(h->sorted, (size_t)h->n_rows, sizeof *h->sorted, by_kernel_time);
  memset(p, 0, sizeof *p);
  p->runs = h->runs;
  p->wall_ns = h->wall_ns;
  p->kernel_ns = h->kernel_ns;
  p->nodes = h->g->n_nodes;
  p->n_rows = h->n_rows;
  p->rows = h->sorted;
  p->cache_reserved = h->cache.reserved;
  p->cache_peak = h->cache.peak_in_use;
  p->cache_hits = h->cache.hits;
  p->cache_misses = h->cache.misses;
  if (h->dev) /* the activations live in the device's cache */
    h->dev->stats(h->dctx, &p->cache_reserved, &p->cache_peak, &p->cache_hits, &p->cache_misses);
}

static const char *human_bytes(size_t n, char *buf, size_t len) {
  if (n < 1024) snprintf(buf, len, "%zu B", n);
  else if (n < (size_t)1 << 20) snprintf(buf, len, "%.1f KiB", n / 1024.0);
  else if (n < (size_t)1 << 30) snprintf(buf, len, "%.1f MiB", n / 1048576.0);
  else snprintf(buf, len, "%.2f GiB", n / 1073741824.0);
  return buf;
}

/* Op types, domains and the model's path come from the user and the model: ft_text_put_json. */
void ft_eager_profile_print(ft_eager *h, FILE *f, int json) {
  ft_eager_profile p;
  ft_eager_profile_get(h, &p);
  double runs = p.runs ? (double)p.runs : 1.0;
  double wall = (double)p.wall_ns / runs / 1e6, kern = (double)p.kernel_ns / runs / 1e6;
  double share_k = p.wall_ns ? (double)p.kernel_ns / (double)p.wall_ns : 0.0;
  uint64_t req = p.cache_hits + p.cache_misses;
  if (json) {
    fprintf(f, "{\"profile\": {\"model\": ");
    ft_text_put_json(f, h->g->path);
    fprintf(f, ", \"device\": ");
    ft_text_put_json(f, ft_eager_device_name(h));
    fprintf(f, ", \"runs\": %lld, \"nodes\": %d, \"wall_ms\": %.6f, \"kernel_ms\": %.6f, \"overhead_ms\": %.6f, "
               "\"overhead_share\": %.6f, \"cache_reserved_bytes\": %zu, \"cache_peak_bytes\": %zu, "
               "\"cache_hits\": %llu, \"cache_misses\": %llu, \"ops\": [",
            (long long)p.runs, p.nodes, wall, kern, wall - kern, p.wall_ns ? 1.0 - share_k : 0.0, p.cache_reserved,
            p.cache_peak, (unsigned long long)p.cache_hits, (unsigned long long)p.cache_misses);
    for (int r = 0; r < p.n_rows; r++) {
      const ft_eager_oprow *o = &p.rows[r];
      fprintf(f, "%s{\"op\": ", r ? ", " : "");
      ft_text_put_json(f, o->op_type);
      fprintf(f, ", \"domain\": ");
      ft_text_put_json(f, o->domain);
      fprintf(f, ", \"calls\": %.6g, \"kernel_ms\": %.6f, \"share\": %.6f, \"dispatch_ms\": %.6f}",
              (double)o->calls / runs, (double)o->kernel_ns / runs / 1e6,
              p.kernel_ns ? (double)o->kernel_ns / (double)p.kernel_ns : 0.0, (double)o->node_ns / runs / 1e6);
    }
    fprintf(f, "]}}\n");
    return;
  }
  fprintf(f, "ftax-eager profile: ");
  ft_text_put(f, h->g->path);
  fprintf(f, " on %s, %lld run%s, %d nodes per run (times per run)\n", ft_eager_device_name(h), (long long)p.runs, p.runs == 1 ? "" : "s", p.nodes);
  fprintf(f, "  wall       %12.6f ms\n", wall);
  fprintf(f, "  kernels    %12.6f ms  %5.1f%%%s\n", kern, 100.0 * share_k, h->dev ? "  (GPU time of the kernels, CUDA events)" : "");
  fprintf(f, "  overhead   %12.6f ms  %5.1f%%  (dispatch, shape inference, planning, allocation, copying views out)\n",
          wall - kern, p.wall_ns ? 100.0 * (1.0 - share_k) : 0.0);
  char b1[32], b2[32];
  fprintf(f, "  allocator  %s reserved, %s peak in use, %.1f%% of %llu requests served from the cache\n",
          human_bytes(p.cache_reserved, b1, sizeof b1), human_bytes(p.cache_peak, b2, sizeof b2), req ? 100.0 * (double)p.cache_hits / (double)req : 0.0,
          (unsigned long long)req);
  fprintf(f, "  %-24s %10s %14s %7s %14s\n", "op type", "calls", "kernel ms", "share", "dispatch ms");
  for (int r = 0; r < p.n_rows; r++) {
    const ft_eager_oprow *o = &p.rows[r];
    char raw[160], name[640];
    snprintf(raw, sizeof raw, "%s%s%s", o->domain, o->domain[0] ? "." : "", o->op_type);
    ft_text_escape(name, sizeof name, raw);
    fprintf(f, "  %-24s %10.6g %14.6f %6.1f%% %14.6f\n", name, (double)o->calls / runs, (double)o->kernel_ns / runs / 1e6,
            p.kernel_ns ? 100.0 * (double)o->kernel_ns / (double)p.kernel_ns : 0.0, (double)o->node_ns / runs / 1e6);
  }
}

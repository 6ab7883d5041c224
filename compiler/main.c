/* ftaxc: compile an ONNX model, at one input shape, into a standalone C program.
 *
 * The whole pipeline is compile() below: load, check ops, pin dims, infer and fold, simplify,
 * lower to kernel calls, plan memory, emit, build. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cc_target.h"
#include "load.h"
#include "pipeline.h"
#include "sha256.h"
#include "text.h"
#include "version.h"

typedef struct options {
  const char *model, *out, *name, *cc, *cflags, *nvcc;
  const char *isa;     /* --isa NAME (C target): the instruction set to plan for */
  char target_isa[16]; /* what the plan is made for: the C compiler's, or --isa */
  int cuda;            /* --target cuda */
  int bf16;            /* --precision bf16 (C target) */
  int no_winograd;     /* --no-winograd (C target) */
  int no_blocked;      /* --no-blocked (C target) */
  ft_cuda_opts cu;
  ft_pins pins;
  int report, emit_only, embed_weights, no_fold, dump;
  int freestanding;    /* --freestanding: a library object for bare metal */
  int shared;          /* --shared: libOUT.so (C target) instead of the program */
  ft_fuse_opts fuse;
  char cmdline[4096];
} options;

static void usage(FILE *f) {
  fprintf(f,
          "usage: ftaxc MODEL.onnx [-o OUT] [--dim SYM=N]... [--shape INPUT=DxD...]... [--bind INPUT=FILE.pb]...\n"
          "             [--keep-input NAME|all]...\n"
          "             [--report] [--emit-only] [--embed-weights] [--cc CC] [--cflags FLAGS]\n"
          "             [--name IDENT] [--dump] [--freestanding] [--shared] [--isa avx512|avx2|neon|generic]\n"
          "             [--precision fp32|bf16|tf32|fp16] [--target c|cuda] [--cuda-graph] [--arch SM] [--nvcc NVCC]\n"
          "Writes OUT.c (OUT.cu for CUDA), OUT.h and OUT.weights (default OUT: generated/<model name>)\n"
          "and builds OUT.\n"
          "  --dim SYM=N        pin symbolic dimension SYM (e.g. batch=1) in every input; SYM=A,B,... compiles\n"
          "                     one plan per value into one program with one weights file (the program's\n"
          "                     --dim SYM=N, the API's OUT_run_dims pick one); lists must be as long\n"
          "  --shape IN=1x128   pin the whole shape of input IN (a list: IN=1x16,1x32, one plan each)\n"
          "  --bind IN=FILE.pb  fix input IN to the tensor in FILE.pb (it stops being an input)\n"
          "  --keep-input NAME  graph input NAME has an initializer (IR 4+: a default the caller may override),\n"
          "                     which is compiled as a constant unless this flag makes NAME an input of the\n"
          "                     program, without the initializer; `all`: every such input\n"
          "  --report           print node counts per stage, MACs, fusion matches, arena size and its lower bound,\n"
          "                     and the sizes for flash and RAM: code (the compiled object's .text), weights, arena\n"
          "  --no-fuse[=A,B]    turn off every fusion, or the named ones\n"
          "  --emit-only        write the sources and weights, do not run the C compiler\n"
          "  --embed-weights    build the weights into the binary (no OUT.weights needed at run time)\n"
          "  --cc CC            C compiler (default: $CC or cc)\n"
          "  --cflags FLAGS     compiler flags (default: -O3 -march=native -pthread; for a cross compiler,\n"
          "                     one whose CC -dumpmachine names another architecture: -O3 -pthread);\n"
          "                     -Wno-psabi always comes before them\n"
          "  --isa NAME         C: plan for this instruction set (avx512, avx2, neon, generic) instead of\n"
          "                     asking CC with FLAGS (which must then compile for it); for --emit-only\n"
          "                     without the target's compiler (the plan is for generic then, otherwise)\n"
          "  --name IDENT       prefix of the generated API (default: OUT's file name)\n"
          "  --dump             print the optimized graph\n"
          "  --freestanding     a library for bare metal: OUT.c needs no libc beyond memcpy/memset (and\n"
          "                     libm where the model does), no heap, files or threads; weights built into\n"
          "                     OUT.c, a static arena; builds the object OUT.o (CC -ffreestanding -c)\n"
          "  --shared           a shared library instead of the program: libOUT.so beside OUT.h (PIC, only\n"
          "                     the OUT_* API exported); the same OUT.c still builds the program\n"
          "                     (cc OUT.c -o OUT -lm -pthread)\n"
          "  --target cuda      a CUDA program (cuBLASLt GEMMs, cuDNN convolutions), built with nvcc\n"
          "  --precision P      fp32 (default); C: bf16 (MatMul, Gemm and Conv on bfloat16 weights and\n"
          "                     inputs, fp32 accumulation; AVX512_BF16 when -march has it, else portable);\n"
          "                     cuda: tf32 (TF32 tensor cores in GEMMs and convolutions), fp16 (float16\n"
          "                     storage, fp32 accumulation)\n"
          "  --no-winograd      C: 3x3 stride-1 convs on the direct kernel instead of Winograd F(4x4,3x3)\n"
          "                     (which does 2.25x fewer multiplies, with errors up to ~10x the direct sum's)\n"
          "  --no-blocked       C: convs read and write NCHW only (else a pointwise conv feeding a depthwise\n"
          "                     conv alone hands it channels in blocks of 16: no transposes between them)\n"
          "  --cuda-graph       cuda: capture the whole run once at init and replay it\n"
          "  --arch SM          cuda: nvcc -arch (default sm_90: H100/H200; compute_90 embeds PTX only)\n"
          "  --nvcc NVCC        cuda: the compiler (default: $NVCC, nvcc, /usr/local/cuda/bin/nvcc);\n"
          "                     --cflags replaces -O3, $FTAX_NVCC_FLAGS is appended (-I, -L for cuDNN)\n"
          "exit codes: 0 ok, 1 usage, 2 invalid model or input, 3 unsupported model, 4 I/O or C compiler failure\n");
}

static int too_many(const char *flag) {
  fprintf(stderr, "ftaxc: more than 64 %s flags; pin a symbol shared by several inputs once with --dim SYM=N\n", flag);
  return 1;
}

/* Text of the command line that lands in generated source (OUT.c's #include of OUT.h, a string):
 * refused rather than escaped, since an escaped file name would name another file. */
static int bad_for_source(const char *flag, const char *v, int ident) {
  int ok = v[0] != 0 && !(ident && v[0] >= '0' && v[0] <= '9');
  for (const unsigned char *s = (const unsigned char *)v; *s && ok; s++) {
    int word = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_';
    ok = ident ? word : *s >= 32 && *s != 127 && *s != '"' && *s != '\\';
  }
  if (ok) return 0;
  fprintf(stderr, ident ? "ftaxc: %s must be a C identifier (letters, digits, _)\n"
                        : "ftaxc: %s may not contain quotes, backslashes or control characters\n", flag);
  return 1;
}

static int parse_args(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->cu.arch = "sm_90";
  const char *cuda_only = NULL;
  size_t m = 0;
  for (int i = 0; i < argc && m < sizeof o->cmdline - 1; i++)
    m += snprintf(o->cmdline + m, sizeof o->cmdline - m, "%s%s", i ? " " : "", argv[i]);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV() do { if (!v) { fprintf(stderr, "ftaxc: %s needs a value\n", a); return 1; } i++; } while (0)
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
    else if (!strcmp(a, "--version")) { printf("ftaxc %s\n", FTAX_VERSION); exit(0); }
    else if (!strcmp(a, "-o")) { NEEDV(); o->out = v; }
    else if (!strcmp(a, "--dim")) { NEEDV(); if (o->pins.n_dims == 64) return too_many(a); o->pins.dims[o->pins.n_dims++] = v; }
    else if (!strcmp(a, "--shape")) { NEEDV(); if (o->pins.n_shapes == 64) return too_many(a); o->pins.shapes[o->pins.n_shapes++] = v; }
    else if (!strcmp(a, "--bind")) { NEEDV(); if (o->pins.n_binds == 64) return too_many(a); o->pins.binds[o->pins.n_binds++] = v; }
    else if (!strcmp(a, "--keep-input")) { NEEDV(); if (o->pins.n_keep == 64) return too_many(a); o->pins.keep[o->pins.n_keep++] = v; }
    else if (!strcmp(a, "--cc")) { NEEDV(); o->cc = v; }
    else if (!strcmp(a, "--cflags")) { NEEDV(); o->cflags = v; }
    else if (!strcmp(a, "--name")) { NEEDV(); o->name = v; }
    else if (!strcmp(a, "--isa")) {
      NEEDV();
      if (!ft_isa_known(v)) { fprintf(stderr, "ftaxc: --isa %s: expected avx512, avx2, neon or generic\n", v); return 1; }
      o->isa = v;
    }
    else if (!strcmp(a, "--report")) o->report = 1;
    else if (!strcmp(a, "--no-fuse")) o->fuse.all_off = 1;
    else if (!strncmp(a, "--no-fuse=", 10)) o->fuse.disabled = a + 10;
    else if (!strcmp(a, "--emit-only")) o->emit_only = 1;
    else if (!strcmp(a, "--embed-weights")) o->embed_weights = 1;
    else if (!strcmp(a, "--no-fold")) o->no_fold = 1;
    else if (!strcmp(a, "--no-winograd")) o->no_winograd = 1;
    else if (!strcmp(a, "--no-blocked")) o->no_blocked = 1;
    else if (!strcmp(a, "--dump")) o->dump = 1;
    else if (!strcmp(a, "--freestanding")) o->freestanding = 1;
    else if (!strcmp(a, "--shared")) o->shared = 1;
    else if (!strcmp(a, "--target")) {
      NEEDV();
      if (!strcmp(v, "cuda")) o->cuda = 1;
      else if (strcmp(v, "c")) { fprintf(stderr, "ftaxc: --target %s: expected c or cuda\n", v); return 1; }
    } else if (!strcmp(a, "--precision")) {
      NEEDV();
      o->bf16 = !strcmp(v, "bf16");
      o->cu.precision = FT_PREC_FP32;
      if (!strcmp(v, "tf32")) o->cu.precision = FT_PREC_TF32;
      else if (!strcmp(v, "fp16")) o->cu.precision = FT_PREC_FP16;
      else if (strcmp(v, "fp32") && !o->bf16) {
        fputs("ftaxc: --precision '", stderr);
        ft_text_put(stderr, v);
        fputs("': expected fp32, bf16 (C target), tf32 or fp16 (CUDA target)\n", stderr);
        return 1;
      }
      if (o->cu.precision != FT_PREC_FP32) cuda_only = "--precision tf32/fp16";
    } else if (!strcmp(a, "--cuda-graph")) { o->cu.graph = 1; cuda_only = a; }
    else if (!strcmp(a, "--arch")) { NEEDV(); o->cu.arch = v; cuda_only = a; }
    else if (!strcmp(a, "--nvcc")) { NEEDV(); o->nvcc = v; cuda_only = a; }
    else if (a[0] == '-') { fputs("ftaxc: unknown option '", stderr); ft_text_put(stderr, a); fputs("'\n", stderr); return 1; }
    else if (!o->model) o->model = a;
    else { fprintf(stderr, "ftaxc: more than one model given ('%s' and '%s')\n", o->model, a); return 1; }
#undef NEEDV
  }
  if (!o->model) { usage(stderr); return 1; }
  const char *out_base = o->out && strrchr(o->out, '/') ? strrchr(o->out, '/') + 1 : o->out;
  if ((out_base && bad_for_source("the file name given with -o", out_base, 0)) || (o->name && bad_for_source("--name", o->name, 1)) ||
      bad_for_source("--arch", o->cu.arch, 1))
    return 1;
  if (cuda_only && !o->cuda) { fprintf(stderr, "ftaxc: %s needs --target cuda\n", cuda_only); return 1; }
  if (o->bf16 && o->cuda) { fprintf(stderr, "ftaxc: --precision bf16 is for the C target (CUDA: fp32, tf32 or fp16)\n"); return 1; }
  if (o->freestanding && o->cuda) {
    fprintf(stderr, "ftaxc: --freestanding makes a C library for bare metal; it cannot be combined with --target cuda\n");
    return 1;
  }
  if (o->shared && (o->freestanding || o->cuda)) {
    fprintf(stderr, "ftaxc: --shared makes a shared library of the C program; it cannot be combined with %s\n",
            o->freestanding ? "--freestanding" : "--target cuda");
    return 1;
  }
  if (o->isa && o->cuda) { fprintf(stderr, "ftaxc: --isa is for the C target\n"); return 1; }
  if (o->freestanding) o->embed_weights = 0; /* its weights are in OUT.c already */
  return 0;
}

/* The program name: a C identifier made from OUT's file name. */
static void ident_from(const char *path, char *buf, size_t n) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t k = 0;
  if (!((base[0] >= 'a' && base[0] <= 'z') || (base[0] >= 'A' && base[0] <= 'Z') || base[0] == '_')) buf[k++] = 'm';
  for (; *base && k < n - 1; base++) {
    char ch = *base;
    if (ch == '.') break;
    buf[k++] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) ? ch : '_';
  }
  buf[k] = 0;
}

/* Runs argv[0] with argv; 0 when it exits 0. */
static int spawn(char **argv) {
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv);
    fprintf(stderr, "ftaxc: cannot run the C compiler '%s'\n", argv[0]);
    _exit(127);
  }
  int status = 0;
  return pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status);
}

/* The C compiler and the flags run_cc builds with: cc (from --cc, $CC or cc) and, in flags,
 * --cflags or the defaults for the compiler's target, -ffreestanding added for --freestanding. */
static int cc_and_flags(const options *o, const char **cc, ft_cc_target *tg, char *flags, size_t n, ft_err *e) {
  *cc = o->cc ? o->cc : getenv("CC") ? getenv("CC") : "cc";
  if (ft_cc_probe(*cc, tg, e)) return e->code;
  snprintf(flags, n, "%s%s", o->cflags ? o->cflags : ft_cc_default_flags(tg), o->freestanding ? " -ffreestanding" : "");
  return 0;
}

/* The instruction set the C target's plan is made for (o->target_isa): what the C compiler
 * compiles for with the program's flags (ft_cc_isa), so that every ISA-dependent choice of
 * the plan is the kernels' own. --isa names it instead; it must agree with the compiler when
 * ftaxc builds the program. --emit-only with no runnable compiler: --isa, else generic. */
static int plan_target(const options *o, options *w, ft_err *e) {
  const char *cc;
  ft_cc_target tg;
  char flags[2048], isa[16] = "";
  int rc = cc_and_flags(o, &cc, &tg, flags, sizeof flags, e);
  if (rc && !o->emit_only) return rc;
  if (!rc && ft_cc_isa(cc, flags, isa, sizeof isa) != 0) isa[0] = 0;
  if (o->isa && isa[0] && strcmp(o->isa, isa) && !o->emit_only)
    return ft_fail(e, FT_EUSAGE, "--isa %s, but '%s' with flags '%s' compiles for %s: give flags for %s (e.g. --cflags "
                                 "\"-O3 -march=...\") or leave --isa out", o->isa, cc, flags, isa, o->isa);
  snprintf(w->target_isa, sizeof w->target_isa, "%s", o->isa ? o->isa : isa[0] ? isa : "generic");
  if (o->report)
    fprintf(stderr, "  plan for     %s (%s)\n", w->target_isa,
            o->isa ? "--isa" : isa[0] ? "what the C compiler targets with these flags" : "the C compiler did not say");
  e->code = 0;
  e->msg[0] = 0;
  return 0;
}

/* The C compiler on src: straight to bin, or (obj given: --report, which measures the object's
 * code) to obj with -c and then linked into bin; with no bin (--freestanding) the object alone. */
static int run_cc(const options *o, const char *src, const char *obj, const char *bin, const char *no_main, ft_err *e) {
  const char *cc;
  ft_cc_target tg;
  char flags[2048];
  if (cc_and_flags(o, &cc, &tg, flags, sizeof flags, e)) return e->code;
  if (o->report)
    fprintf(stderr, "  target       %s%s, flags %s\n", tg.triple[0] ? tg.triple : "(the compiler does not say)",
            tg.cross ? " (cross compiler)" : "", flags);
  char *argv[256];
  int n = 0;
  argv[n++] = (char *)cc;
  /* The kernels pass 64-byte GCC vectors by value; on a target without AVX-512 GCC (and clang)
   * print an ABI note for each such function. The program is one object built with one set of
   * flags, so the ABI change they warn about never meets code built otherwise. Before the flags,
   * so that a -Wpsabi in them turns the notes back on. */
  argv[n++] = "-Wno-psabi";
  for (char *t = strtok(flags, " \t"); t && n < 240; t = strtok(NULL, " \t")) argv[n++] = t;
  if (o->shared) { /* position-independent, every symbol hidden but the API (program.h's FTP_EXPORT), no main */
    argv[n++] = "-fPIC";
    argv[n++] = "-fvisibility=hidden";
    argv[n++] = (char *)no_main;
  }
  int nflags = n;
  if (obj) {
    argv[n++] = "-c";
    argv[n++] = "-o";
    argv[n++] = (char *)obj;
    argv[n++] = (char *)src;
    argv[n] = NULL;
    if (spawn(argv))
      return ft_fail(e, FT_EIO, "the C compiler '%s' failed on %s; the sources were kept (use --cc/--cflags, or --emit-only)", cc, src);
    n = nflags;
  }
  if (!bin) return 0; /* --freestanding: the object is the product */
  if (o->shared) {
    argv[n++] = "-shared";
    /* dlclose leaves it loaded: the thread pool's workers (parallel.h) live as long as the
     * process and run the library's code */
    argv[n++] = "-Wl,-z,nodelete";
  }
  argv[n++] = "-o";
  argv[n++] = (char *)bin;
  argv[n++] = (char *)(obj ? obj : src);
  argv[n++] = "-lm";
  argv[n] = NULL;
  if (spawn(argv))
    return ft_fail(e, FT_EIO, "the C compiler '%s' failed on %s; the sources were kept (use --cc/--cflags, or --emit-only)", cc, src);
  return 0;
}

/* nvcc for --target cuda: the libraries the twins call, $FTAX_NVCC_FLAGS last. */
static int run_nvcc(const options *o, const ft_cuda_libs *libs, const char *src, const char *bin, ft_err *e) {
  const char *nvcc = o->nvcc ? o->nvcc : getenv("NVCC");
  if (!nvcc) { /* nvcc on PATH, else the toolkit's usual place */
    nvcc = "/usr/local/cuda/bin/nvcc";
    char path[4096], cand[4200];
    snprintf(path, sizeof path, "%s", getenv("PATH") ? getenv("PATH") : "");
    for (char *d = strtok(path, ":"); d; d = strtok(NULL, ":")) {
      snprintf(cand, sizeof cand, "%s/nvcc", d);
      if (access(cand, X_OK) == 0) { nvcc = "nvcc"; break; }
    }
  }
  char flags[2048], extra[2048], arch[128];
  snprintf(flags, sizeof flags, "%s", o->cflags ? o->cflags : "-O3");
  snprintf(extra, sizeof extra, "%s", getenv("FTAX_NVCC_FLAGS") ? getenv("FTAX_NVCC_FLAGS") : "");
  snprintf(arch, sizeof arch, "-arch=%s", o->cu.arch);
  char *argv[256];
  int n = 0;
  argv[n++] = (char *)nvcc;
  for (char *t = strtok(flags, " \t"); t && n < 200; t = strtok(NULL, " \t")) argv[n++] = t;
  argv[n++] = "-std=c++17";
  argv[n++] = arch;
  argv[n++] = "-o";
  argv[n++] = (char *)bin;
  argv[n++] = (char *)src;
  if (libs->blaslt) argv[n++] = "-lcublasLt";
  if (libs->dnn) argv[n++] = "-lcudnn";
  for (char *t = strtok(extra, " \t"); t && n < 250; t = strtok(NULL, " \t")) argv[n++] = t;
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    execvp(nvcc, argv);
    fprintf(stderr, "ftaxc: cannot run the CUDA compiler '%s' (install the CUDA toolkit, or use --nvcc / --emit-only)\n", nvcc);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
    return ft_fail(e, FT_EIO, "the CUDA compiler '%s' failed on %s; the sources were kept (use --nvcc/--cflags/--arch, or --emit-only)", nvcc, src);
  return 0;
}

/* mkdir -p of OUT's folder. */
static void make_parent_dirs(const char *path) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *s = buf + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    mkdir(buf, 0777);
    *s = '/';
  }
}

/* --report's sizes for flash and RAM: code and static data from the compiled object (obj; NULL
 * with why it was not measured), weights and arena from the plan. */
static void report_sizes(const options *o, const ft_memplan *mp, const char *wpath, const char *obj, const char *why) {
  struct stat st;
  if (stat(wpath, &st) == 0)
    fprintf(stderr, "  weights file %lld bytes (the weights and a header)\n", (long long)st.st_size);
  ft_elf_sizes s;
  if (obj && ft_elf_sizes_read(obj, &s)) { obj = NULL; why = "the compiled object is not an ELF file"; }
  if (obj && s.code == 0) { obj = NULL; why = "the object holds no machine code: -flto?"; }
  if (!obj) { fprintf(stderr, "  code         not known (%s)\n", why); return; }
  unsigned long long flash = s.code + s.rodata + s.data + (o->embed_weights ? 0 : mp->weight_bytes);
  fprintf(stderr, "  code         %llu bytes (.text of OUT.c's object: kernels, calls, command-line main; libc not counted)\n",
          (unsigned long long)s.code);
  fprintf(stderr, "  const data   %llu bytes (.rodata%s)\n", (unsigned long long)s.rodata, o->embed_weights ? ", the weights included" : "");
  fprintf(stderr, "  static data  %llu bytes (.data %llu, .bss %llu)\n", (unsigned long long)(s.data + s.bss),
          (unsigned long long)s.data, (unsigned long long)s.bss);
  fprintf(stderr, "  flash        %llu bytes (code + const data + .data%s)\n", flash, o->embed_weights ? "" : " + weights");
  fprintf(stderr, "  RAM          %llu bytes (arena + .data + .bss; stacks not counted)\n",
          (unsigned long long)(mp->arena_bytes + s.data + s.bss));
}

#define FT_MAX_PLANS 16

/* The plans: one per shape (--dim SYM=A,B,... and --shape IN=AxB,CxD: each list's k-th value
 * makes plan k; every list the same length), each with pins of single values and a label made of
 * the listed flags' values ("batch=1,seq=16"). */
typedef struct plans {
  int n;
  ft_pins pins[FT_MAX_PLANS];
  char *labels[FT_MAX_PLANS];
  char *text; /* the values' storage */
} plans;

static int count_list(const char *v) {
  int n = 1;
  for (const char *s = strchr(v, '='); s && *s; s++) n += *s == ',';
  return n;
}

/* "seq=16,32" -> the k-th "seq=32" into out (of n) */
static void list_item(const char *v, int k, char *out, size_t n) {
  const char *eq = strchr(v, '=');
  if (!eq) { snprintf(out, n, "%s", v); return; }
  const char *s = eq + 1;
  for (int i = 0; i < k && s; i++) { s = strchr(s, ','); if (s) s++; }
  const char *end = s ? strchr(s, ',') : NULL;
  snprintf(out, n, "%.*s%.*s", (int)(eq + 1 - v), v, (int)(end ? end - s : (ptrdiff_t)strlen(s)), s);
}

static int make_plans(const options *o, plans *pl, ft_err *e) {
  memset(pl, 0, sizeof *pl);
  int k = 1;
  const char *first_list = NULL;
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < (t ? o->pins.n_shapes : o->pins.n_dims); i++) {
      const char *v = t ? o->pins.shapes[i] : o->pins.dims[i];
      int c = count_list(v);
      if (c == 1) continue;
      if (k > 1 && c != k)
        return ft_fail(e, FT_EUSAGE, "'%s' lists %d values and '%s' %d: the lists of shapes must be as long", v, c,
                       first_list, k);
      k = c;
      first_list = v;
    }
  if (k > FT_MAX_PLANS) return ft_fail(e, FT_EUSAGE, "more than %d shapes in one program", FT_MAX_PLANS);
  pl->n = k;
  size_t item_bytes = 0; /* every flag's value once, per plan; a label is no longer than all of them */
  for (int i = 0; i < o->pins.n_dims; i++) item_bytes += strlen(o->pins.dims[i]) + 1;
  for (int i = 0; i < o->pins.n_shapes; i++) item_bytes += strlen(o->pins.shapes[i]) + 1;
  pl->text = malloc((2 * item_bytes + 1) * (size_t)k);
  if (!pl->text) return ft_fail(e, FT_EIO, "out of memory");
  char *at = pl->text;
  for (int p = 0; p < k; p++) {
    ft_pins *pp = &pl->pins[p];
    *pp = o->pins;
    if (p == 0) pp->notes = stderr, pp->tool = "ftaxc"; /* a note on the model once, not per plan */
    for (int t = 0; t < 2; t++)
      for (int i = 0; i < (t ? o->pins.n_shapes : o->pins.n_dims); i++) {
        const char *v = t ? o->pins.shapes[i] : o->pins.dims[i];
        list_item(v, count_list(v) == 1 ? 0 : p, at, strlen(v) + 1);
        if (t) pp->shapes[i] = at; else pp->dims[i] = at;
        at += strlen(v) + 1;
      }
    char *label = pl->labels[p] = at;
    size_t lm = 0;
    label[0] = 0;
    for (int t = 0; t < 2 && k > 1; t++)
      for (int i = 0; i < (t ? o->pins.n_shapes : o->pins.n_dims); i++) {
        const char *v = t ? o->pins.shapes[i] : o->pins.dims[i], *item = t ? pp->shapes[i] : pp->dims[i];
        if (count_list(v) > 1) lm += (size_t)sprintf(label + lm, "%s%s", lm ? "," : "", item);
      }
    at += item_bytes + 1;
  }
  return 0;
}

static int write_outputs(const options *o, ft_graph **gs, ft_lowered *lws, ft_memplan *mps, int n_plans,
                         char *const *labels, const ft_cuda_libs *libs, ft_err *e) {
  ft_graph *g = gs[0];
  ft_lowered *lw = &lws[0];
  ft_memplan *mp = &mps[0];
  char out[4096], name[256], cpath[4200], hpath[4200], wpath[4200], ctmp[4300], htmp[4300], wtmp[4300];
  if (o->out) snprintf(out, sizeof out, "%s", o->out);
  else {
    char id[256];
    ident_from(o->model, id, sizeof id);
    snprintf(out, sizeof out, "generated/%s", id);
  }
  if (o->name) snprintf(name, sizeof name, "%s", o->name); else ident_from(out, name, sizeof name);
  make_parent_dirs(out);
  snprintf(cpath, sizeof cpath, o->cuda ? "%s.cu" : "%s.c", out);
  snprintf(hpath, sizeof hpath, "%s.h", out);
  snprintf(wpath, sizeof wpath, "%s.weights", out);
  snprintf(ctmp, sizeof ctmp, "%s.tmp", cpath);
  snprintf(htmp, sizeof htmp, "%s.tmp", hpath);
  snprintf(wtmp, sizeof wtmp, "%s.tmp", wpath);
  char hash[65];
  if (ft_sha256_file(o->model, hash)) return ft_fail(e, FT_EIO, "%s: cannot read the model file", o->model);
  const char *wbase = strrchr(wpath, '/');
  /* --embed-weights: the assembler's .incbin needs the weights file by an absolute path */
  char wabs[8400], cwd[4096];
  if (o->embed_weights && !getcwd(cwd, sizeof cwd)) return ft_fail(e, FT_EIO, "cannot resolve the current folder");
  if (o->embed_weights) snprintf(wabs, sizeof wabs, "%s%s%s", wpath[0] == '/' ? "" : cwd, wpath[0] == '/' ? "" : "/", wpath);
  if (o->embed_weights && (strchr(wabs, '"') || strchr(wabs, '\\') || strchr(wabs, '\n')))
    return ft_fail(e, FT_EUSAGE, "--embed-weights: the path '%s' has a quote, backslash or newline the assembler cannot take", wabs);
  const char *hbase = strrchr(hpath, '/');
  ft_emit_opts eo = {name, hbase ? hbase + 1 : hpath, o->cmdline, hash,
                     o->embed_weights ? wabs : (wbase ? wbase + 1 : wpath), o->embed_weights, o->freestanding,
                     o->cuda ? "cuda" : o->target_isa};
  /* --freestanding: the weights go into OUT.c, there is no OUT.weights */
  FILE *fc = fopen(ctmp, "w"), *fh = fopen(htmp, "w"), *fw = o->freestanding ? NULL : fopen(wtmp, "wb");
  int rc = 0;
  if (!fc || !fh || (!fw && !o->freestanding)) rc = ft_fail(e, FT_EIO, "cannot write %s (does its folder exist?)", !fc ? cpath : !fh ? hpath : wpath);
  if (!rc)
    rc = o->cuda ? ft_emit_cuda(g, lw, mp, &eo, &o->cu, libs, fc, fh, fw, e)
                 : ft_emit_c_plans(gs, lws, mps, n_plans, (const char *const *)labels, &eo, fc, fh, fw, e);
  if (fc && fclose(fc) && !rc) rc = ft_fail(e, FT_EIO, "cannot write %s", cpath);
  if (fh && fclose(fh) && !rc) rc = ft_fail(e, FT_EIO, "cannot write %s", hpath);
  if (fw && fclose(fw) && !rc) rc = ft_fail(e, FT_EIO, "cannot write %s", wpath);
  if (!rc && (rename(ctmp, cpath) || rename(htmp, hpath) || (fw && rename(wtmp, wpath)))) rc = ft_fail(e, FT_EIO, "cannot rename the outputs into place");
  if (rc) { remove(ctmp); remove(htmp); remove(wtmp); return rc; }
  ft_memplan sizes = *mp; /* --report's RAM: the largest plan's arena (the weights merged by now) */
  for (int p = 1; p < n_plans; p++) sizes.arena_bytes = mps[p].arena_bytes > sizes.arena_bytes ? mps[p].arena_bytes : sizes.arena_bytes;
  if (o->report && (o->emit_only || o->cuda))
    report_sizes(o, &sizes, wpath, NULL, o->cuda ? "not measured for --target cuda" : "--emit-only: nothing was compiled");
  if (o->emit_only) return 0;
  char bin[4200], btmp[4300], otmp[4300]; /* --freestanding builds the object OUT.o, --shared libOUT.so */
  const char *obase = strrchr(out, '/');
  if (o->shared) snprintf(bin, sizeof bin, "%.*slib%s.so", obase ? (int)(obase + 1 - out) : 0, out, obase ? obase + 1 : out);
  else snprintf(bin, sizeof bin, "%s%s", out, o->freestanding ? ".o" : "");
  char no_main[300], guard[256];
  size_t gi = 0; /* OUT.h's guard, as the emitter spells it: the name in capitals */
  for (; name[gi] && gi + 1 < sizeof guard; gi++) guard[gi] = (char)(name[gi] >= 'a' && name[gi] <= 'z' ? name[gi] - 32 : name[gi]);
  guard[gi] = 0;
  snprintf(no_main, sizeof no_main, "-D%s_NO_MAIN", guard);
  snprintf(btmp, sizeof btmp, "%s.tmp", bin);
  snprintf(otmp, sizeof otmp, "%s.o.tmp", out);
  /* the object: what --freestanding makes, and what --report measures */
  const char *obj = o->freestanding ? btmp : o->report ? otmp : NULL;
  rc = o->cuda ? run_nvcc(o, libs, cpath, btmp, e) : run_cc(o, cpath, obj, o->freestanding ? NULL : btmp, no_main, e);
  if (!rc && obj && o->report) report_sizes(o, &sizes, wpath, obj, NULL);
  if (!rc && rename(btmp, bin)) rc = ft_fail(e, FT_EIO, "cannot rename %s into place", bin);
  if (rc) remove(btmp);
  if (obj == otmp) remove(otmp);
  return rc;
}

static int compile(options *o, ft_err *e) {
  plans pl;
  int rc = make_plans(o, &pl, e);
  if (rc) return rc;
  if (pl.n > 1 && (o->cuda || o->freestanding)) {
    free(pl.text);
    return ft_fail(e, FT_EUSAGE, "several shapes in one program are for the hosted C target (not %s)",
                   o->cuda ? "--target cuda" : "--freestanding");
  }
  ft_graph *g[FT_MAX_PLANS] = {0};
  ft_lowered lw[FT_MAX_PLANS];
  ft_memplan mp[FT_MAX_PLANS];
  ft_cuda_libs libs = {0};
  memset(lw, 0, sizeof lw);
  memset(mp, 0, sizeof mp);
  for (int p = 0; p < pl.n && !rc; p++) {
    rc = ft_load_model(o->model, &g[p], e);
    if (o->report && !rc) {
      fprintf(stderr, "ftaxc: %s (opset %lld)", o->model, (long long)g[p]->opset);
      if (pl.n > 1) fprintf(stderr, ", plan %d: %s", p, pl.labels[p]);
      fputc('\n', stderr);
    }
    if (!rc && !o->cuda && p == 0) rc = plan_target(o, o, e);
    ft_compile_opts co = {&pl.pins[p], o->no_fold, o->fuse, o->cuda ? &o->cu : NULL, o->report ? stderr : NULL, o->bf16,
                          o->no_winograd, o->no_blocked, o->cuda ? "cuda" : o->target_isa};
    if (!rc) rc = ft_compile_graph(g[p], &co, &lw[p], &mp[p], &libs, e);
    if (!rc && o->dump) ft_graph_dump(g[p], stdout);
  }
  if (!rc) rc = write_outputs(o, g, lw, mp, pl.n, pl.labels, &libs, e);
  for (int p = 0; p < pl.n; p++) {
    ft_memplan_free(&mp[p]);
    ft_lowered_free(&lw[p]);
    if (g[p]) ft_graph_free(g[p]);
  }
  free(pl.text);
  return rc;
}

int main(int argc, char **argv) {
  options o;
  if (parse_args(argc, argv, &o)) return FT_EUSAGE;
  ft_err e = {0};
  int rc = compile(&o, &e);
  if (rc) fprintf(stderr, "ftaxc: error: %s\n", e.msg[0] ? e.msg : "failed");
  return rc;
}
